//! The demo agents `agentindex dev` registers: three dozen, spread over the three registration
//! paths, with varied skills, tags, media types, prices, card versions, and signed and unsigned
//! cards, so every filter of the API has something to find.

/// How a demo agent comes on-chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Path {
    /// An agent contract created by the factory.
    Factory,
    /// An agent contract deployed on its own and enrolled in the registry.
    Registry,
    /// An ERC-8004 identity with a registration file.
    Erc8004,
}

/// One skill theme: id, display name, what it does, tags.
struct Theme {
    id: &'static str,
    name: &'static str,
    does: &'static str,
    tags: [&'static str; 3],
}

const THEMES: [Theme; 12] = [
    Theme {
        id: "translate",
        name: "Translate",
        does: "translates text between languages",
        tags: ["translation", "language", "nlp"],
    },
    Theme {
        id: "summarize",
        name: "Summarize",
        does: "summarizes long documents",
        tags: ["summarization", "nlp", "documents"],
    },
    Theme {
        id: "forecast-weather",
        name: "Weather forecast",
        does: "forecasts the weather for a place",
        tags: ["weather", "forecast", "geo"],
    },
    Theme {
        id: "price-feed",
        name: "Price feed",
        does: "quotes token prices across exchanges",
        tags: ["defi", "prices", "market-data"],
    },
    Theme {
        id: "audit-contract",
        name: "Contract audit",
        does: "reviews Solidity contracts for bugs",
        tags: ["security", "solidity", "audit"],
    },
    Theme {
        id: "generate-image",
        name: "Image generation",
        does: "draws images from a prompt",
        tags: ["image", "generative", "art"],
    },
    Theme {
        id: "transcribe",
        name: "Transcribe",
        does: "turns speech into text",
        tags: ["speech", "audio", "nlp"],
    },
    Theme {
        id: "route-trade",
        name: "Trade routing",
        does: "finds the best route for a swap",
        tags: ["defi", "trading", "routing"],
    },
    Theme {
        id: "search-web",
        name: "Web search",
        does: "searches the web and cites sources",
        tags: ["search", "research", "web"],
    },
    Theme {
        id: "schedule",
        name: "Scheduling",
        does: "books meetings across calendars",
        tags: ["calendar", "productivity", "assistant"],
    },
    Theme {
        id: "classify-image",
        name: "Image classification",
        does: "labels what an image shows",
        tags: ["image", "vision", "classification"],
    },
    Theme {
        id: "answer-code",
        name: "Code answers",
        does: "answers programming questions",
        tags: ["code", "developer", "assistant"],
    },
];

const ADJECTIVES: [&str; 12] = [
    "Swift", "Careful", "Polyglot", "Northern", "Quiet", "Bright", "Patient", "Clever", "Steady",
    "Lucid", "Nimble", "Honest",
];

/// How many demo agents there are.
pub(crate) const AGENTS: usize = 36;

/// One demo agent's skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    pub(crate) id: &'static str,
    pub(crate) name: &'static str,
    pub(crate) description: String,
    pub(crate) tags: Vec<&'static str>,
}

/// One demo agent, as its documents will describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DemoAgent {
    /// Its number, 0-based; its documents live under `/agents/{n}/`.
    pub(crate) n: usize,
    pub(crate) path: Path,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) skills: Vec<Skill>,
    pub(crate) input_modes: Vec<&'static str>,
    pub(crate) output_modes: Vec<&'static str>,
    pub(crate) streaming: bool,
    /// Price per call in USDC's smallest unit, when it takes x402 payments.
    pub(crate) price: Option<u64>,
    /// Whether its card is signed (with the demo key).
    pub(crate) signed: bool,
    /// Whether its card uses the legacy A2A v0.3 shape.
    pub(crate) legacy_card: bool,
}

/// Every demo agent.
pub(crate) fn agents() -> Vec<DemoAgent> {
    (0..AGENTS).map(agent).collect()
}

/// Demo agent `n` (any number: the themes repeat).
pub(crate) fn agent(n: usize) -> DemoAgent {
    let main = &THEMES[n % THEMES.len()];
    let second = &THEMES[(n * 5 + 3) % THEMES.len()];
    let mut themes = vec![main];
    if n % 3 != 2 && second.id != main.id {
        themes.push(second);
    }
    let name = format!(
        "{} {}",
        ADJECTIVES[(n / THEMES.len() * 5 + n) % ADJECTIVES.len()],
        main.name
    );
    let skills = themes
        .iter()
        .map(|t| Skill {
            id: t.id,
            name: t.name,
            description: format!("{} {}", name, t.does),
            tags: t.tags.to_vec(),
        })
        .collect();
    let media: [(&[&str], &[&str]); 4] = [
        (&["text/plain"], &["text/plain"]),
        (&["text/plain", "application/json"], &["application/json"]),
        (&["audio/wav"], &["text/plain"]),
        (&["text/plain"], &["image/png"]),
    ];
    let (input_modes, output_modes) = match main.id {
        "transcribe" => media[2],
        "generate-image" => media[3],
        _ => media[n % 2],
    };
    DemoAgent {
        n,
        // Shifted each round of themes, so every skill is found on every path.
        path: [Path::Factory, Path::Registry, Path::Erc8004][(n + n / THEMES.len()) % 3],
        description: format!("{name} {}.", main.does),
        name,
        skills,
        input_modes: input_modes.to_vec(),
        output_modes: output_modes.to_vec(),
        streaming: n % 4 == 1,
        price: (n % 3 != 1).then_some(1_000 * (1 + (n as u64 * 7) % 50)),
        signed: n.is_multiple_of(2),
        legacy_card: n % 5 == 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_covers_every_path_and_property() {
        let agents = agents();
        assert_eq!(agents.len(), AGENTS);
        for path in [Path::Factory, Path::Registry, Path::Erc8004] {
            let on_path: Vec<_> = agents.iter().filter(|a| a.path == path).collect();
            assert!(on_path.len() >= 10);
            assert!(on_path.iter().any(|a| a.signed) && on_path.iter().any(|a| !a.signed));
            assert!(
                on_path.iter().any(|a| a.price.is_some())
                    && on_path.iter().any(|a| a.price.is_none())
            );
        }
        assert!(agents.iter().any(|a| a.legacy_card));
        assert!(agents.iter().any(|a| a.streaming));
        let translators: Vec<_> = agents
            .iter()
            .filter(|a| a.skills.iter().any(|s| s.id == "translate"))
            .collect();
        assert!(
            translators.len() >= 3,
            "a skill search finds several agents"
        );
        for path in [Path::Factory, Path::Registry, Path::Erc8004] {
            assert!(translators.iter().any(|a| a.path == path), "on every path");
        }
        let names: std::collections::BTreeSet<_> = agents.iter().map(|a| &a.name).collect();
        assert_eq!(names.len(), AGENTS, "names are distinct");
    }
}
