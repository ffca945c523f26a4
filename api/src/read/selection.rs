//! What a listing of agents asks for: the filters of `AgentFilter`, already normalised, and the
//! order. The agent reads (`agents`), their `WHERE` clauses (`agent_filters`) and their choice of
//! plan (`agent_walk`) all take it from here.

/// What to list: the filters of `AgentFilter`, already normalised.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Selection {
    pub(crate) chain_ids: Vec<i64>,
    pub(crate) sources: Vec<&'static str>,
    pub(crate) skill: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) input_mode: Option<String>,
    pub(crate) output_mode: Option<String>,
    pub(crate) x402: Option<bool>,
    pub(crate) signed: Option<bool>,
    pub(crate) active: Option<bool>,
    pub(crate) min_reputation: Option<f64>,
    pub(crate) owner: Option<String>,
    pub(crate) protocol_binding: Option<String>,
    pub(crate) streaming: Option<bool>,
    pub(crate) extension_uri: Option<String>,
    pub(crate) min_price: Option<f64>,
    pub(crate) max_price: Option<f64>,
    /// What the prober saw: an endpoint answered at its last probe (or, false, none did).
    pub(crate) reachable: Option<bool>,
    /// Answered at least this share of the week's probes (0 to 1).
    pub(crate) min_uptime: Option<f64>,
    /// An MCP server of the agent lists this tool (lower-case).
    pub(crate) mcp_tool: Option<String>,
    /// The agent's authenticated extended card has this skill id (lower-case).
    pub(crate) extended_skill: Option<String>,
    /// An x402 resource answered 402 asking to be paid to the agent's own wallet.
    pub(crate) x402_live: Option<bool>,
    /// An FTS5 query (already quoted) when searching: whole words.
    pub(crate) search: Option<String>,
    /// The same with the last word as a prefix, used when no agent has the whole words (see
    /// `agents::settle_search`).
    pub(crate) search_as_prefix: Option<String>,
}

impl Selection {
    /// Whether the search is all there is to the selection.
    pub(super) fn only_search(&self) -> bool {
        let Selection {
            search,
            search_as_prefix,
            ..
        } = self;
        search.is_some()
            && *self
                == Selection {
                    search: search.clone(),
                    search_as_prefix: search_as_prefix.clone(),
                    ..Selection::default()
                }
    }
}

/// How to order a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    Newest,
    Reputation,
    Relevance,
}

/// A skill or tag a selection asks for, lower case, as `agent_terms` holds it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Term {
    pub(crate) text: String,
    /// `skill` or `tag`: what the filter named it.
    pub(crate) kind: &'static str,
}

impl Term {
    /// The kinds of `agent_terms` rows that match it, as an SQL list: a skill filter matches a
    /// skill's id or a tag, a tag filter a tag.
    pub(super) fn kinds(&self) -> &'static str {
        match self.kind {
            "skill" => "'skill', 'tag'",
            _ => "'tag'",
        }
    }
}

impl Selection {
    /// The skill and the tags asked for.
    pub(super) fn terms(&self) -> Vec<Term> {
        let skill = self.skill.iter().map(|skill| Term {
            text: skill.to_lowercase(),
            kind: "skill",
        });
        let tags = self.tags.iter().map(|tag| Term {
            text: tag.to_lowercase(),
            kind: "tag",
        });
        skill.chain(tags).collect()
    }

    /// The same selection without `term` (the one a walk reads the agents of, so its rows need
    /// no check for it).
    pub(super) fn without(&self, term: &Term) -> Selection {
        let mut rest = self.clone();
        if term.kind == "skill" {
            rest.skill = None;
        } else if let Some(at) = rest.tags.iter().position(|t| t.to_lowercase() == term.text) {
            rest.tags.remove(at);
        }
        rest
    }
}
