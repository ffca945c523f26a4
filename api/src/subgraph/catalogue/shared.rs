//! SQL several entities share: an agent's id, key and token, the facts of its token, whether a
//! feedback is revoked and what it is worth, the kind of a URI, and a registration file's id.

use super::{Link, Part, at, int, keep, keep_all, link, text};
use agentindex_indexer::schema::{
    agents, events, feedback, feedback_revocations, identity_registrations, identity_uri_updates,
};
use agentindex_indexer::store::Dialect;

/// An ERC-8004 agent's id (`chainId:agentId`) from agents row `a`.
pub(super) const AGENT_ID: &str = "a.chain_id || ':' || a.token_id";

/// The key of agents row `a`, which refs to an agent match.
pub(super) fn agent_key() -> &'static [&'static str] {
    keep_all(vec![at("a", agents::agent_key)])
}

/// The parts of [`AGENT_ID`] and the columns of agents row `a` holding them.
pub(super) fn agent_parts() -> Vec<Part> {
    vec![
        int(at("a", agents::chain_id)),
        text(at("a", agents::token_id)),
    ]
}

/// An agent's ERC-8004 token (agents row `a`) as the columns of its facts (alias `fact`) hold it.
pub(super) fn token_links(fact: &str) -> &'static [Link] {
    keep_all(vec![
        link(at("a", agents::chain_id), keep(format!("{fact}.chain_id"))),
        link(at("a", agents::registry), keep(format!("{fact}.registry"))),
        link(at("a", agents::token_id), keep(format!("{fact}.token_id"))),
    ])
}

/// The facts (alias `fact`) of the ERC-8004 token of agents row `a`.
pub(super) fn of_token(fact: &str) -> String {
    format!(
        "{fact}.chain_id = a.chain_id AND {fact}.registry = a.registry AND {fact}.token_id = a.token_id"
    )
}

/// Feedback `f` has been revoked.
pub(super) fn revoked() -> String {
    format!(
        "EXISTS (SELECT 1 FROM {} r WHERE r.chain_id = f.chain_id AND r.registry = f.registry AND r.token_id = f.token_id AND r.client = f.client AND r.feedback_index = f.feedback_index)",
        feedback_revocations::NAME
    )
}

/// Whether feedback `f` has been revoked, as 1 or 0 (a flag both databases compare alike).
pub(super) fn revoked_flag() -> String {
    format!("CASE WHEN {} THEN 1 ELSE 0 END", revoked())
}

/// The value of feedback `f` as a number (its digits over ten to its decimals).
pub(super) const FEEDBACK_VALUE: &str =
    "(CAST(f.value AS DOUBLE PRECISION) / CAST('1e' || f.value_decimals AS DOUBLE PRECISION))";

/// The feedback of agents row `a` not revoked: the subgraph's `totalFeedback`.
pub(super) fn unrevoked_feedback(dialect: Dialect) -> String {
    format!(
        "(SELECT count(*) FROM {} f{} WHERE {} AND NOT {})",
        feedback::NAME,
        dialect.index_hint("feedback_agent"),
        of_token("f"),
        revoked()
    )
}

/// When agents row `a` registered or last received feedback: the subgraph's `lastActivity`.
pub(super) fn last_activity(dialect: Dialect) -> String {
    let feedback_time = format!(
        "coalesce((SELECT max(f.timestamp) FROM {} f{} WHERE {}), 0)",
        feedback::NAME,
        dialect.index_hint("feedback_agent"),
        of_token("f")
    );
    dialect.greatest("a.registered_at", &feedback_time)
}

/// The kind of URI `uri` is, as the subgraph names it.
pub(super) fn uri_type(uri: &str) -> String {
    format!(
        "CASE WHEN {uri} IS NULL OR {uri} = '' THEN NULL WHEN lower({uri}) LIKE 'ipfs://%' OR {uri} LIKE '/ipfs/%' THEN 'ipfs' WHEN lower({uri}) LIKE 'ar://%' THEN 'arweave' WHEN lower({uri}) LIKE 'https://%' THEN 'https' WHEN lower({uri}) LIKE 'http://%' THEN 'http' WHEN lower({uri}) LIKE 'data:%' THEN 'data' ELSE 'unknown' END"
    )
}

/// The latest URI event of the token of agents row `a` (registration or update): its `column`.
pub(super) fn uri_event(column: &str) -> String {
    format!(
        "(SELECT e.{column} FROM {events} e WHERE (e.chain_id, e.block_number, e.log_index) = (SELECT x.chain_id, x.block_number, x.log_index FROM (SELECT r.chain_id, r.block_number, r.log_index FROM {registrations} r WHERE r.chain_id = a.chain_id AND r.registry = a.registry AND r.token_id = a.token_id UNION ALL SELECT u.chain_id, u.block_number, u.log_index FROM {updates} u WHERE u.chain_id = a.chain_id AND u.registry = a.registry AND u.token_id = a.token_id) x ORDER BY x.block_number DESC, x.log_index DESC LIMIT 1))",
        events = events::NAME,
        registrations = identity_registrations::NAME,
        updates = identity_uri_updates::NAME,
    )
}

/// The id of the registration file `g` of agents row `a`: the subgraph's `{txHash}:{cid}`
/// (`{txHash}:datauri:{logIndex}` for a data: URI), the URI itself in place of a CID for an
/// http(s) file.
pub(super) fn registration_file_id(dialect: Dialect) -> String {
    format!(
        "'0x' || {} || ':' || CASE WHEN lower(g.uri) LIKE 'ipfs://%' THEN substr(g.uri, 8) WHEN lower(g.uri) LIKE 'data:%' THEN 'datauri:' || {} ELSE g.uri END",
        dialect.lower_hex(&uri_event("tx_hash")),
        uri_event("log_index")
    )
}

/// The CID of the file at `uri` (the URI itself when it is not an IPFS one).
pub(super) fn cid(uri: &str) -> String {
    format!("CASE WHEN lower({uri}) LIKE 'ipfs://%' THEN substr({uri}, 8) ELSE {uri} END")
}
