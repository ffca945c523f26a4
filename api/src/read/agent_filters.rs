//! The `WHERE` clauses of agent reads: every filter of a [`Selection`], the full-text search
//! join, and keyset conditions that start a page after a cursor.

use super::ranked_search::SearchWords;
use super::selection::Selection;
use agentindex_indexer::schema::{
    agent_capabilities, agent_documents, agent_liveness, agent_postings, agent_search, agent_terms,
    documents, search_agents,
};
use agentindex_indexer::store::Dialect;
use agentindex_indexer::store::in_list::push_in;
use sqlx::{Any, QueryBuilder};

/// Appends ` AND ({column}, {key_column}) < (value, key)`: the rows after (`value`, `key`) in
/// an order by `column` and then by key, both descending. One row-value comparison in the
/// order of an index on (`column` DESC, key DESC) is a range both databases seek to, so a page
/// deep in the list reads no more than one near its top.
pub(super) fn push_after<'a, T>(
    query: &mut QueryBuilder<'a, Any>,
    column: &str,
    value: T,
    key_column: &str,
    key: &str,
) where
    T: 'a + Copy + Send + sqlx::Encode<'a, Any> + sqlx::Type<Any>,
{
    query.push(format!(" AND ({column}, {key_column}) < ("));
    query.push_bind(value);
    query.push(", ");
    query.push_bind(key.to_string());
    query.push(")");
}

pub(super) fn push_search_join(
    query: &mut QueryBuilder<'_, Any>,
    dialect: Dialect,
    selection: &Selection,
) {
    if let Some(search) = &selection.search {
        query.push(" JOIN (");
        push_search_rows(query, dialect, search);
        query.push(") s ON s.agent_key = a.agent_key");
    }
}

/// Appends `SELECT agent_key, doc, rank FROM …` over the agents matching full-text `search`
/// (an FTS5 query, see `fts_query`), best first by ascending `rank` and then `doc`: the sum of
/// each agent's weights for the search's words in `agent_postings` (for a prefix, of every word
/// it starts), negated, and the agent's number in `search_agents`, on both databases, as
/// `ranked_search` ranks a plain search's best page.
pub(super) fn push_search_rows(query: &mut QueryBuilder<'_, Any>, dialect: Dialect, search: &str) {
    let words = SearchWords::of(search);
    query.push(format!(
        "SELECT m.agent_key, d.doc, CAST(-(SELECT coalesce(sum(p.weight), 0) FROM {} p
           WHERE p.doc = d.doc AND (false",
        agent_postings::NAME
    ));
    if !words.whole.is_empty() {
        query.push(" OR p.term");
        super::in_list(query, &words.whole, "");
    }
    if let Some(prefix) = &words.prefix {
        query.push(" OR substr(p.term, 1, CAST(");
        query.push_bind(prefix.chars().count() as i64);
        query.push(" AS INTEGER)) = ");
        query.push_bind(prefix.clone());
    }
    query.push(")) AS DOUBLE PRECISION) AS rank FROM (");
    push_search_keys(query, dialect, search);
    query.push(format!(
        ") m JOIN {} d ON d.agent_key = m.agent_key",
        search_agents::NAME
    ));
}

/// Appends ` AND ({rank} > r OR ({rank} = r AND {doc} > the number of agent k))`: the search
/// matches after (`r`, `k`) in relevance order.
pub(super) fn push_after_relevance(
    query: &mut QueryBuilder<'_, Any>,
    rank: &str,
    doc: &str,
    r: f64,
    k: &str,
) {
    query.push(format!(" AND ({rank} > "));
    query.push_bind(r);
    query.push(format!(" OR ({rank} = "));
    query.push_bind(r);
    query.push(format!(
        " AND {doc} > (SELECT doc FROM {} WHERE agent_key = ",
        search_agents::NAME
    ));
    query.push_bind(k.to_string());
    query.push(")))");
}

/// Appends `SELECT agent_key FROM …` over the agents matching full-text `search`, unranked.
pub(super) fn push_search_keys(query: &mut QueryBuilder<'_, Any>, dialect: Dialect, search: &str) {
    match dialect {
        Dialect::Sqlite => {
            query.push(format!(
                "SELECT agent_key FROM {search} WHERE {search} MATCH ",
                search = agent_search::NAME
            ));
            query.push_bind(search.to_string());
        }
        Dialect::Postgres => {
            query.push(format!(
                "SELECT agent_key FROM {} WHERE document @@ to_tsquery('simple', ",
                agent_search::NAME
            ));
            query.push_bind(tsquery(search));
            query.push(")");
        }
    }
}

/// PostgreSQL's form of an FTS5 query of quoted words (the last perhaps a prefix, `"word"*`):
/// every word required, `word:*` for a prefix.
fn tsquery(fts5: &str) -> String {
    let prefix = fts5.ends_with('*');
    let words: Vec<&str> = fts5
        .split('"')
        .map(str::trim)
        .filter(|w| !w.is_empty() && *w != "*")
        .collect();
    let last = words.len().saturating_sub(1);
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if prefix && i == last {
                format!("{w}:*")
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" & ")
}

/// Appends ` WHERE …` for every filter of `selection` (always at least `WHERE true`).
pub(super) fn push_filters(
    query: &mut QueryBuilder<'_, Any>,
    dialect: Dialect,
    selection: &Selection,
) {
    push_filters_with(query, dialect, selection, None);
}

/// As [`push_filters`]; `checked_by` keeps the planner from driving the query by the skill and
/// tag lookups: they are then checked for each row the order's index yields, probed by that
/// key column (the walked table's own, so a row that fails is dropped before the others are
/// read).
pub(super) fn push_filters_with(
    query: &mut QueryBuilder<'_, Any>,
    dialect: Dialect,
    selection: &Selection,
    checked_by: Option<&str>,
) {
    query.push(" WHERE true");
    if !selection.chain_ids.is_empty() {
        query.push(" AND a.chain_id");
        push_in(query, selection.chain_ids.iter().copied());
    }
    if !selection.sources.is_empty() {
        query.push(" AND a.source");
        push_in(query, selection.sources.iter().copied());
    }
    for term in selection.terms() {
        let kinds = term.kinds();
        // Checked row by row: one probe of the (agent, term) index per candidate. Otherwise the
        // agents with the term are listed first and drive the query.
        let terms_table = agent_terms::NAME;
        query.push(if let Some(key) = checked_by {
            format!(
                " AND EXISTS (SELECT 1 FROM {terms_table} t WHERE t.agent_key = {key}
                   AND t.kind IN ({kinds}) AND t.term = "
            )
        } else {
            format!(
                " AND a.agent_key IN (SELECT agent_key FROM {terms_table} WHERE kind IN ({kinds})
                   AND term = "
            )
        });
        query.push_bind(term.text);
        // On PostgreSQL `OFFSET 0` keeps a row's check a probe: its planner would make a plain
        // EXISTS a join, hash every agent with the term and sort the matches.
        query.push(match (checked_by, dialect) {
            (Some(_), Dialect::Postgres) => " OFFSET 0)",
            _ => ")",
        });
    }
    for (column, mode) in [
        ("p.input_modes", &selection.input_mode),
        ("p.output_modes", &selection.output_mode),
    ] {
        if let Some(mode) = mode {
            query.push(format!(
                " AND EXISTS (SELECT 1 FROM {} WHERE lower(m.value) = ",
                dialect.json_texts(column, "", "m")
            ));
            query.push_bind(mode.to_lowercase());
            query.push(")");
        }
    }
    // On PostgreSQL written on the bare columns, so its planner estimates them from the
    // columns' statistics: against `coalesce(…)` it guesses 0.5% of rows, and then collects and
    // sorts every match where walking the order's index would stop after a page. SQLite keeps
    // `coalesce`, which leaves its left joins left joins (a bare column would let its planner
    // turn them inner and reorder the walk).
    let bare = dialect == Dialect::Postgres;
    if let Some(x402) = selection.x402 {
        query.push(match (bare, x402) {
            (true, true) => " AND p.x402 = 1",
            (true, false) => " AND (p.x402 IS NULL OR p.x402 = 0)",
            (false, true) => " AND coalesce(p.x402, 0) = 1",
            (false, false) => " AND coalesce(p.x402, 0) = 0",
        });
    }
    if let Some(signed) = selection.signed {
        query.push(if signed {
            " AND p.card_signature = 'valid'"
        } else {
            " AND coalesce(p.card_signature, '') <> 'valid'"
        });
    }
    if let Some(active) = selection.active {
        query.push(" AND a.active = ");
        query.push_bind(i64::from(active));
    }
    if let Some(min) = selection.min_reputation {
        // An agent without a score counts as 0.
        query.push(match (bare, min > 0.0) {
            (true, true) => " AND (r.score >= ",
            (true, false) => " AND (r.score IS NULL OR r.score >= ",
            (false, _) => " AND (coalesce(r.score, 0) >= ",
        });
        query.push_bind(min);
        query.push(")");
    }
    if let Some(owner) = &selection.owner {
        query.push(" AND a.owner = ");
        query.push_bind(owner.to_lowercase());
    }
    push_card_filters(query, dialect, selection);
    push_liveness_filters(query, selection);
    for (bound, compare) in [(selection.min_price, ">="), (selection.max_price, "<=")] {
        if let Some(bound) = bound {
            query.push(format!(
                " AND EXISTS (SELECT 1 FROM {} WHERE {} {compare} ",
                dialect.json_texts("p.payments", "", "t"),
                dialect.number(&dialect.json_path("t.value", "amount")),
            ));
            query.push_bind(bound);
            query.push(")");
        }
    }
}

/// Filters on what an agent's card declares: interfaces, streaming, extensions. They look at
/// the card discovery shows for the agent (`agent_profiles.card_uri`: the off-chain card, or
/// the contract's own when that one is missing or fails its anchored hash).
pub(super) fn push_card_filters(
    query: &mut QueryBuilder<'_, Any>,
    dialect: Dialect,
    selection: &Selection,
) {
    let cards = format!(
        " AND EXISTS (SELECT 1 FROM {} l
        JOIN {} d ON d.uri = l.uri AND d.expect = l.expect",
        agent_documents::NAME,
        documents::NAME
    );
    const OF_AGENT: &str = " WHERE l.agent_key = a.agent_key AND l.uri = p.card_uri
        AND d.kind = 'card' AND d.status = 'ok'";
    if let Some(binding) = &selection.protocol_binding {
        query.push(format!(
            "{cards} CROSS JOIN {}{OF_AGENT} AND upper({}) = ",
            dialect.json_texts("d.projection", "interfaces", "i"),
            dialect.json_path("i.value", "binding"),
        ));
        query.push_bind(binding.to_uppercase());
        query.push(")");
    }
    if let Some(streaming) = selection.streaming {
        query.push(format!(
            "{cards}{OF_AGENT} AND {} = ",
            dialect.json_flag("d.projection", "capabilities.streaming")
        ));
        query.push_bind(i64::from(streaming));
        query.push(")");
    }
    if let Some(uri) = &selection.extension_uri {
        query.push(format!(
            "{cards} CROSS JOIN {}{OF_AGENT} AND {} = ",
            dialect.json_texts("d.projection", "capabilities.extensions", "e"),
            dialect.json_path("e.value", "uri"),
        ));
        query.push_bind(uri.clone());
        query.push(")");
    }
}

/// Filters on what this instance's prober saw of the agent's endpoints (its `agent_liveness`
/// row, and what they showed it can do: MCP tools, extended-card skills).
fn push_liveness_filters(query: &mut QueryBuilder<'_, Any>, selection: &Selection) {
    let summary = format!(
        " AND EXISTS (SELECT 1 FROM {} l WHERE l.agent_key = a.agent_key AND ",
        agent_liveness::NAME
    );
    if let Some(reachable) = selection.reachable {
        query.push(summary.clone());
        query.push(if reachable {
            "l.reachable = 1)"
        } else {
            "l.reachable = 0 AND l.status <> 'unknown')"
        });
    }
    if let Some(min) = selection.min_uptime {
        query.push(summary.clone());
        query.push("l.uptime_7d >= ");
        query.push_bind(min);
        query.push(")");
    }
    if let Some(live) = selection.x402_live {
        query.push(if live {
            summary.clone()
        } else {
            summary.replacen(" AND EXISTS", " AND NOT EXISTS", 1)
        });
        query.push("l.x402_live = 1)");
    }
    for (kind, key) in [
        ("mcp_tool", &selection.mcp_tool),
        ("extended_skill", &selection.extended_skill),
    ] {
        if let Some(key) = key {
            query.push(format!(
                " AND a.agent_key IN (SELECT agent_key FROM {} WHERE kind = '{kind}' AND key = ",
                agent_capabilities::NAME
            ));
            query.push_bind(key.clone());
            query.push(")");
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fts5_queries_become_tsqueries_word_for_word() {
        assert_eq!(super::tsquery("\"translate\" \"text\""), "translate & text");
        assert_eq!(super::tsquery("\"translate\" \"te\"*"), "translate & te:*");
        assert_eq!(super::tsquery("\"weather\"*"), "weather:*");
    }
}
