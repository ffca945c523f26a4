//! The statement of one page of an agent list (`agents::list`): the table the page's order
//! comes from (the search hits, a walked index, or every match), the filters, the cursor and
//! the order; and the columns every agent read selects.

use super::agent_filters::{push_after, push_after_relevance, push_filters_with, push_search_rows};
use super::agent_walk::{Plan, Walked, push_walk_conditions, push_walked, walk_order};
use super::cursor::Cursor;
use super::selection::{Order, Selection};
use agentindex_indexer::schema::{agent_profiles, agent_reputation, agents};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, QueryBuilder};
use std::borrow::Cow;

/// The columns every agent read selects.
pub(super) const COLUMNS: &str =
    "a.agent_key, a.chain_id, a.source, a.address, a.registry, a.token_id,
    a.owner, a.operators, a.uri, a.agent_wallet, a.payment_address, a.card_uri AS chain_card_uri,
    a.name AS chain_name, a.description AS chain_description, a.active, a.registered_block,
    a.registered_at, a.last_event_block,
    p.name AS profile_name, p.description AS profile_description, p.card_uri, p.card_status,
    p.card_signature, p.protocol_version, p.x402, p.input_modes, p.output_modes,
    p.registration_verified, p.domain_verified, p.payments AS payment_terms,
    r.score, r.payment_score, r.payment_count, r.unique_payers, r.excluded_payments,
    r.feedback_count, r.feedback_average, r.validation_average, r.rating_average,
    r.as_of_block";

/// The page of up to `limit` agents of `selection` in `order` after `after`, found as `plan`
/// says.
pub(super) fn list_query<'a>(
    dialect: Dialect,
    selection: &'a Selection,
    order: Order,
    after: Option<&'a Cursor>,
    limit: i64,
    plan: Plan,
) -> QueryBuilder<'a, Any> {
    let mut query = QueryBuilder::<Any>::new("");
    // A plain search (no other filter, relevance order) is ranked and cut inside the full-text
    // index, so only the page's rows are joined.
    let plain_search = order == Order::Relevance && selection.only_search();
    if let Some(search) = &selection.search {
        query.push("WITH s AS MATERIALIZED (SELECT agent_key, doc, rank FROM (");
        push_search_rows(&mut query, dialect, search);
        query.push(") ranked WHERE true");
        if plain_search {
            if let Some(Cursor::Relevance { r, k }) = after {
                push_after_relevance(&mut query, "rank", "doc", *r, k);
            }
            query.push(" ORDER BY rank, doc LIMIT ");
            query.push_bind(limit);
        }
        query.push(") ");
    }
    let rank = if selection.search.is_some() {
        "s.rank"
    } else {
        "NULL"
    };
    query.push(format!("SELECT {COLUMNS}, {rank} AS rank FROM "));
    let (agents_table, reputation_table) = (agents::NAME, agent_reputation::NAME);
    let join = dialect.join_in_order();
    match (selection.search.is_some(), order, &plan) {
        (true, ..) => {
            query.push(format!(
                "s {join} {agents_table} a ON a.agent_key = s.agent_key"
            ));
        }
        (false, Order::Reputation, Plan::Walk(walked, stop)) => {
            push_walked(&mut query, dialect, walked, *stop, after, selection);
            query.push(format!(
                " {join} {agents_table} a ON a.agent_key = r.agent_key"
            ));
        }
        (false, Order::Reputation, Plan::Collect) => {
            query.push(format!(
                "{reputation_table} r {join} {agents_table} a ON a.agent_key = r.agent_key"
            ));
        }
        (false, _, Plan::Walk(walked, stop)) => {
            push_walked(&mut query, dialect, walked, *stop, after, selection)
        }
        (false, ..) => {
            query.push(format!("{agents_table} a"));
        }
    }
    query.push(format!(
        " LEFT JOIN {} p ON p.agent_key = a.agent_key",
        agent_profiles::NAME
    ));
    let reputation_drives = order == Order::Reputation && selection.search.is_none();
    if !reputation_drives {
        query.push(format!(
            " LEFT JOIN {reputation_table} r ON r.agent_key = a.agent_key"
        ));
    }
    let walked_key = if reputation_drives {
        "r.agent_key"
    } else {
        "a.agent_key"
    };
    match &plan {
        Plan::Walk(walked, stop) => {
            // A term's list needs no check for its own term.
            let checked = match walked {
                Walked::Term(term) => Cow::Owned(selection.without(term)),
                Walked::Everyone(_) => Cow::Borrowed(selection),
            };
            push_filters_with(&mut query, dialect, &checked, Some(walked_key));
            push_walk_conditions(&mut query, dialect, walked, *stop, after, selection);
        }
        Plan::Collect => push_filters_with(&mut query, dialect, selection, None),
    }
    if let (true, Some(min)) = (reputation_drives, selection.min_reputation) {
        query.push(" AND r.score >= ");
        query.push_bind(min);
    }
    match (order, after) {
        (Order::Newest, Some(Cursor::Newest { b, k })) => {
            push_after(&mut query, "a.registered_block", *b, "a.agent_key", k);
        }
        // A term's walk starts at the cursor in its own list (`push_term_range`); the same
        // range on `r` is redundant there, and SQLite could seek with it as a bare score bound
        // instead, reading a whole tie.
        (Order::Reputation, Some(Cursor::Reputation { .. }))
            if matches!(plan, Plan::Walk(Walked::Term(_), _)) => {}
        // Where the reputation index drives, the cursor is a range of it.
        (Order::Reputation, Some(Cursor::Reputation { s, k })) if reputation_drives => {
            push_after(&mut query, "r.score", *s, "r.agent_key", k);
        }
        (Order::Reputation, Some(Cursor::Reputation { s, k })) => {
            push_after(&mut query, "coalesce(r.score, 0)", *s, "a.agent_key", k);
        }
        (Order::Relevance, Some(Cursor::Relevance { r, k })) => {
            push_after_relevance(&mut query, "s.rank", "s.doc", *r, k);
        }
        _ => {}
    }
    let walked_order = match &plan {
        Plan::Walk(walked, _) => walk_order(walked),
        Plan::Collect => None,
    };
    query.push(match (order, reputation_drives, walked_order) {
        (_, _, Some(walked_order)) => walked_order,
        (Order::Newest, ..) => " ORDER BY a.registered_block DESC, a.agent_key DESC",
        (Order::Reputation, false, _) => " ORDER BY coalesce(r.score, 0) DESC, a.agent_key DESC",
        (Order::Reputation, true, _) => " ORDER BY r.score DESC, r.agent_key DESC",
        (Order::Relevance, ..) => " ORDER BY s.rank, s.doc",
    });
    query.push(" LIMIT ");
    query.push_bind(limit);
    query
}
