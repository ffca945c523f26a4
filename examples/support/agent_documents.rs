//! What the synthetic agents' documents would give (profiles, skills, search rows and
//! registration files), written beside the chain facts of the parent module when a benchmark
//! asks for them.

use super::{Agent, WORDS, run};
use agentindex_indexer::documents::search_postings::{self, SearchText};
use sqlx::{Any, QueryBuilder};

/// Where ERC-8004 agent `n`'s registration file is.
pub(super) fn registration_uri(n: usize) -> String {
    format!("https://agents.example/{n}/registration.json")
}

/// Whether agent `n` declares x402 payment.
fn takes_x402(n: usize) -> bool {
    (mix(n) >> 8).is_multiple_of(3)
}

/// The registration file projection of ERC-8004 agent `n`, as the documents worker stores it: an
/// A2A service, an MCP service for a third, an OASF service with the first skill for a quarter.
fn registration_projection(n: usize) -> String {
    let skills = skills_of(n);
    let mut services = vec![serde_json::json!({
        "name": "A2A", "endpoint": format!("https://agents.example/{n}"), "version": "1.0"
    })];
    if n.is_multiple_of(3) {
        services.push(serde_json::json!({
            "name": "MCP", "endpoint": format!("https://agents.example/{n}/mcp"), "version": "2025-06-18"
        }));
    }
    if n.is_multiple_of(4) {
        services.push(serde_json::json!({
            "name": "OASF", "endpoint": format!("https://agents.example/{n}/oasf"), "version": "0.8",
            "skills": [format!("analytical_skills/{}", skills[0].0)], "domains": ["technology"]
        }));
    }
    serde_json::json!({
        "name": format!("Agent {n}"),
        "description": format!("Agent {n} does {}", WORDS[n % WORDS.len()]),
        "image": null,
        "services": services,
        "x402_support": takes_x402(n),
        "active": !n.is_multiple_of(10),
        "registrations": [],
        "supported_trust": ["reputation"],
    })
    .to_string()
}

/// The two skills of agent `n`: (id, tags).
fn skills_of(n: usize) -> [(&'static str, [String; 2]); 2] {
    let tag = |i: usize| WORDS[i % WORDS.len()].to_string();
    let n = mix(n) as usize;
    [
        (
            WORDS[n % WORDS.len()],
            [tag(n * 5), format!("tag{}", n % 50)],
        ),
        (
            WORDS[(n * 7 + 3) % WORDS.len()],
            [tag(n * 11 + 1), format!("tag{}", (n + 7) % 50)],
        ),
    ]
}

/// `n` scrambled, so properties drawn from it (skills, tags, signed, x402) line up neither with
/// each other nor with the reputation, which follows `n` modulo 100: every skill has agents
/// with and without each property, at every score.
fn mix(n: usize) -> u64 {
    (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
}

/// Agent `n`'s search row: name, description, skills and tags.
fn search_text(n: usize) -> [String; 4] {
    let skills = skills_of(n);
    [
        format!("Agent {n}"),
        format!("Agent {n} does {}", WORDS[n % WORDS.len()]),
        format!("{} {}", skills[0].0, skills[1].0),
        skills
            .iter()
            .flat_map(|(_, tags)| tags.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
    ]
}

/// Profiles, skills and search rows, as documents would give them.
pub(super) async fn profiles(tx: &mut sqlx::AnyConnection, chunk: &[Agent]) -> anyhow::Result<()> {
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO agent_profiles (agent_key, name, description, card_uri, card_status,
           card_signature, protocol_version, x402, input_modes, output_modes, payments, chain_block) ",
    );
    q.push_values(chunk, |mut row, a| {
        row.push_bind(&a.key)
            .push_bind(format!("Agent {}", a.n))
            .push_bind(format!("Agent {} does {}", a.n, WORDS[a.n % WORDS.len()]))
            .push_bind(format!("https://agents.example/{}/card.json", a.n))
            .push_bind("ok")
            .push_bind(if (mix(a.n) >> 12).is_multiple_of(4) {
                "valid"
            } else {
                "unsigned"
            })
            .push_bind("1.0")
            .push_bind(i64::from(takes_x402(a.n)))
            .push_bind(r#"["text/plain"]"#)
            .push_bind(r#"["application/json"]"#)
            .push_bind("[]")
            .push_bind(a.block);
    });
    run(&mut *tx, q).await?;
    let skills: Vec<(&Agent, &'static str, String)> = chunk
        .iter()
        .flat_map(|a| {
            skills_of(a.n).map(|(id, tags)| {
                (
                    a,
                    id,
                    serde_json::to_string(&tags).expect("strings serialise"),
                )
            })
        })
        .collect();
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO agent_skills (agent_key, skill_id, name, description, tags) ",
    );
    q.push_values(&skills, |mut row, (a, id, tags)| {
        row.push_bind(&a.key)
            .push_bind(*id)
            .push_bind(*id)
            .push_bind(format!("{id} for you"))
            .push_bind(tags);
    });
    q.push(" ON CONFLICT DO NOTHING");
    run(&mut *tx, q).await?;
    let texts: Vec<[String; 4]> = chunk.iter().map(|a| search_text(a.n)).collect();
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO agent_search (agent_key, name, description, skills, tags) ",
    );
    q.push_values(chunk.iter().zip(&texts), |mut row, (a, text)| {
        row.push_bind(&a.key);
        for field in text {
            row.push_bind(field);
        }
    });
    run(&mut *tx, q).await?;
    // Each agent's search number, and each word of its search row with its weight, as the
    // documents' writer keeps them.
    let doc = |a: &Agent| a.n as i64 + 1;
    let mut q = QueryBuilder::<Any>::new("INSERT INTO search_agents (doc, agent_key) ");
    q.push_values(chunk, |mut row, a| {
        row.push_bind(doc(a)).push_bind(&a.key);
    });
    run(&mut *tx, q).await?;
    let postings: Vec<(i64, String, i64)> = chunk
        .iter()
        .zip(&texts)
        .flat_map(|(a, [name, description, skills, tags])| {
            let text = SearchText {
                name,
                description,
                skills,
                tags,
            };
            search_postings::postings(text)
                .into_iter()
                .map(move |(term, weight)| (doc(a), term, weight))
        })
        .collect();
    let mut q = QueryBuilder::<Any>::new("INSERT INTO agent_postings (doc, term, weight) ");
    q.push_values(&postings, |mut row, (doc, term, weight)| {
        row.push_bind(*doc).push_bind(term).push_bind(*weight);
    });
    run(&mut *tx, q).await?;

    let tokens: Vec<&Agent> = chunk.iter().filter(|a| a.erc8004).collect();
    if !tokens.is_empty() {
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO documents (uri, expect, status, source, hash, kind, projection,
               fetched_at, next_fetch_at) ",
        );
        q.push_values(&tokens, |mut row, a| {
            row.push_bind(registration_uri(a.n))
                .push_bind("registration")
                .push_bind("ok")
                .push_bind(registration_uri(a.n))
                .push_bind(format!("{:#066x}", a.n))
                .push_bind("registration")
                .push_bind(registration_projection(a.n))
                .push_bind(1_700_000_000i64)
                .push_bind(1_800_000_000i64);
        });
        run(&mut *tx, q).await?;
        // What agentindex keeps of each file's fields, as the documents worker writes it.
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agent_registrations (agent_key, uri, name, description, image, active,
               x402, supported_trusts, services, mcp_endpoint, mcp_version, a2a_endpoint,
               a2a_version, web_endpoint, email_endpoint, oasf_endpoint, oasf_version,
               oasf_skills, oasf_domains, ens, did) ",
        );
        q.push_values(&tokens, |mut row, a| {
            let file: serde_json::Value =
                serde_json::from_str(&registration_projection(a.n)).expect("our own JSON");
            let service = |name: &str| {
                file["services"]
                    .as_array()
                    .and_then(|list| list.iter().find(|s| s["name"] == name).cloned())
            };
            let field = |name: &str, key: &str| {
                service(name).and_then(|s| s[key].as_str().map(str::to_string))
            };
            let list = |key: &str| service("OASF").map_or("[]".to_string(), |s| s[key].to_string());
            row.push_bind(&a.key)
                .push_bind(registration_uri(a.n))
                .push_bind(file["name"].as_str().map(str::to_string))
                .push_bind(file["description"].as_str().map(str::to_string))
                .push_bind(None::<String>)
                .push_bind(file["active"].as_bool().map(i64::from))
                .push_bind(file["x402_support"].as_bool().map(i64::from))
                .push_bind(file["supported_trust"].to_string())
                .push_bind(file["services"].to_string())
                .push_bind(field("MCP", "endpoint"))
                .push_bind(field("MCP", "version"))
                .push_bind(field("A2A", "endpoint"))
                .push_bind(field("A2A", "version"))
                .push_bind(None::<String>)
                .push_bind(None::<String>)
                .push_bind(field("OASF", "endpoint"))
                .push_bind(field("OASF", "version"))
                .push_bind(list("skills"))
                .push_bind(list("domains"))
                .push_bind(None::<String>)
                .push_bind(None::<String>);
        });
        run(&mut *tx, q).await?;
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agent_registration_text (agent_key, name, description) ",
        );
        q.push_values(&tokens, |mut row, a| {
            row.push_bind(&a.key)
                .push_bind(format!("Agent {}", a.n))
                .push_bind(format!("Agent {} does {}", a.n, WORDS[a.n % WORDS.len()]));
        });
        run(&mut *tx, q).await?;
        let mut q =
            QueryBuilder::<Any>::new("INSERT INTO agent_documents (agent_key, role, uri, expect) ");
        q.push_values(&tokens, |mut row, a| {
            row.push_bind(&a.key)
                .push_bind("registration")
                .push_bind(registration_uri(a.n))
                .push_bind("registration");
        });
        run(&mut *tx, q).await?;
    }
    Ok(())
}
