//! Which documents describe which agent: derived from the agents table (ERC-8004 URIs, registry
//! metadata URIs, anchored card URIs, agent contracts' own cards, ERC-8004 feedback files) and from
//! the registration files fetched (their A2A service, and the domain proof on that service's
//! origin).

use crate::schema::{agent_documents, agents, documents, feedback};
use crate::store::sql::erc8004_key_sql;
use crate::store::{Dialect, QueryContext, StoreResult};
use sqlx::AnyConnection;

/// Recomputes `agent_documents` from the agents table and the registration files fetched;
/// says whether any link came or went.
pub(super) async fn link(conn: &mut AnyConnection) -> StoreResult<bool> {
    sqlx::query(
        "CREATE TEMP TABLE IF NOT EXISTS wanted_links (agent_key TEXT, role TEXT, uri TEXT, expect TEXT)",
    )
    .execute(&mut *conn)
    .await
    .context("preparing document links")?;
    sqlx::query("DELETE FROM wanted_links")
        .execute(&mut *conn)
        .await
        .context("preparing document links")?;
    sqlx::query(&format!(
        "INSERT INTO wanted_links
         SELECT agent_key, 'registration', uri, 'registration' FROM {agents_table}
           WHERE source = 'erc8004' AND trim(coalesce(uri, '')) != ''
         UNION SELECT agent_key, 'metadata', uri, 'any' FROM {agents_table}
           WHERE source != 'erc8004' AND trim(coalesce(uri, '')) != ''
         UNION SELECT agent_key, 'card', card_uri, 'card' FROM {agents_table}
           WHERE trim(coalesce(card_uri, '')) != ''
         UNION SELECT agent_key, 'onchain', 'eip155:' || chain_id || ':' || address, 'onchain' FROM {agents_table}
           WHERE address IS NOT NULL",
        agents_table = agents::NAME,
    ))
    .execute(&mut *conn)
    .await
    .context("listing the documents agents point at")?;
    // Feedback files, for the proofs of payment in them; only feedback whose client has no
    // counted payment to the agent could gain from one, but which those are changes with every
    // payment, so every feedback file of an existing agent is read once (and kept).
    sqlx::query(&format!(
        "INSERT INTO wanted_links
         SELECT DISTINCT a.agent_key, 'feedback', f.feedback_uri, 'feedback' FROM {feedback_table} f
         JOIN {agents_table} a ON a.agent_key = {}
         WHERE trim(f.feedback_uri) != ''",
        erc8004_key_sql("f.chain_id", "f.registry", "f.token_id"),
        feedback_table = feedback::NAME,
        agents_table = agents::NAME
    ))
    .execute(&mut *conn)
    .await
    .context("listing feedback files")?;
    // A registration file's A2A service leads to the card.
    let dialect = Dialect::of(conn);
    let endpoint = dialect.json_field("s.value", "endpoint");
    sqlx::query(&format!(
        "INSERT INTO wanted_links
         SELECT DISTINCT w.agent_key, 'card', {endpoint}, 'a2a'
         FROM wanted_links w
         JOIN {documents_table} d ON d.uri = w.uri AND d.expect = w.expect AND d.kind = 'registration'
         CROSS JOIN {}
         WHERE lower({}) = 'a2a' AND {endpoint} IS NOT NULL",
        dialect.json_items("d.projection", "services", "s"),
        dialect.json_field("s.value", "name"),
        documents_table = documents::NAME,
    ))
    .execute(&mut *conn)
    .await
    .context("following registration files to their cards")?;
    // Domain proof: the A2A endpoint's origin serves /.well-known/agent-registration.json.
    let endpoints: Vec<(String, String)> =
        sqlx::query_as("SELECT agent_key, uri FROM wanted_links WHERE expect = 'a2a'")
            .fetch_all(&mut *conn)
            .await
            .context("listing A2A endpoints")?;
    for (agent_key, endpoint) in endpoints {
        let Some(proof) = domain_proof_url(&endpoint) else {
            continue;
        };
        sqlx::query("INSERT INTO wanted_links VALUES ($1, 'domain', $2, 'registration')")
            .bind(agent_key)
            .bind(proof)
            .execute(&mut *conn)
            .await
            .context("adding a domain proof link")?;
    }
    let removed = sqlx::query(&format!(
        "DELETE FROM {agent_documents_table} WHERE (agent_key, role, uri, expect) NOT IN
           (SELECT agent_key, role, uri, expect FROM wanted_links)",
        agent_documents_table = agent_documents::NAME,
    ))
    .execute(&mut *conn)
    .await
    .context("removing stale document links")?;
    let added = sqlx::query(&format!(
        "INSERT INTO {agent_documents_table} SELECT * FROM wanted_links WHERE true ON CONFLICT DO NOTHING",
        agent_documents_table = agent_documents::NAME,
    ))
    .execute(&mut *conn)
    .await
    .context("adding document links")?;
    Ok(removed.rows_affected() + added.rows_affected() > 0)
}

/// Where the origin of `endpoint` proves which agents it belongs to.
fn domain_proof_url(endpoint: &str) -> Option<String> {
    let url = url::Url::parse(endpoint).ok()?;
    if !matches!(url.scheme(), "https" | "http") {
        return None;
    }
    Some(format!(
        "{}/.well-known/agent-registration.json",
        url.origin().ascii_serialization()
    ))
}
