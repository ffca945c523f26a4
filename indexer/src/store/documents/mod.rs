//! Documents in the store: which documents describe which agent (derived from the agents table
//! and from registration files), which are due for a fetch, saving fetched documents with their
//! lints, and the agent profiles, skills, search rows and declared x402 terms recomputed from
//! agents and documents.
//! Feedback files are linked and saved like the rest, but feed reputation, not profiles.
//!
//! Documents are not chain facts: a reorg never removes one. Links and profiles follow the
//! agents table, so an agent a reorg removed loses them at the next sync.

mod links;
mod postings;
mod profiles;
mod registrations;
mod x402_terms;

use super::{QueryContext, StoreResult, decode};
use crate::documents::{Checked, Expect, Projection};
use crate::schema::{
    agent_a2a_skills, agent_documents, agent_profiles, agent_search, agent_skills, agent_tags,
    agent_x402_terms, agents, document_lints, documents,
};
use sqlx::{AnyConnection, AnyPool};
use std::collections::{BTreeMap, BTreeSet};

/// A fetched (or failed) document, ready to store.
#[derive(Debug, Clone)]
pub struct DocumentResult {
    /// How it was read.
    pub expect: Expect,
    /// What checking it gave.
    pub checked: Checked,
    /// When (unix seconds).
    pub fetched_at: i64,
    /// When to fetch it again.
    pub next_fetch_at: i64,
}

/// A document due for a fetch, with the validators of its last fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDocument {
    /// Its URI.
    pub uri: String,
    /// How to read it.
    pub expect: Expect,
    /// `ETag` of the last fetch.
    pub etag: Option<String>,
    /// `Last-Modified` of the last fetch.
    pub last_modified: Option<String>,
    /// Failed attempts in a row so far.
    pub failures: i64,
}

/// Documents linked to an agent that were never fetched or are due at `now`, at most `limit`.
pub(super) async fn due(pool: &AnyPool, now: i64, limit: i64) -> StoreResult<Vec<DueDocument>> {
    let rows: Vec<DueRow> = sqlx::query_as(&format!(
        "SELECT DISTINCT l.uri, l.expect, d.etag, d.last_modified, coalesce(d.failures, 0) AS failures,
           coalesce(d.next_fetch_at, 0) AS due_at
         FROM {agent_documents_table} l LEFT JOIN {documents_table} d ON d.uri = l.uri AND d.expect = l.expect
         WHERE d.uri IS NULL OR d.next_fetch_at <= $1
         ORDER BY due_at LIMIT $2",
        agent_documents_table = agent_documents::NAME,
        documents_table = documents::NAME,
    ))
    .bind(now)
    .bind(limit)
    .fetch_all(pool)
    .await
    .context("listing documents due")?;
    rows.into_iter()
        .map(|row| {
            let expect = Expect::parse(&row.expect).ok_or_else(|| {
                decode::corrupt(
                    agent_documents::NAME,
                    "expect",
                    &row.expect,
                    "not a kind of document",
                )
            })?;
            Ok(DueDocument {
                uri: row.uri,
                expect,
                etag: row.etag,
                last_modified: row.last_modified,
                failures: row.failures,
            })
        })
        .collect()
}

/// A link due for a fetch, with its document's validators.
#[derive(sqlx::FromRow)]
struct DueRow {
    uri: String,
    expect: String,
    etag: Option<String>,
    last_modified: Option<String>,
    failures: i64,
}

/// Whether every linked document was fetched or failed at least once.
pub(super) async fn all_attempted(pool: &AnyPool) -> StoreResult<bool> {
    let pending: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM {agent_documents_table} l LEFT JOIN {documents_table} d ON d.uri = l.uri AND d.expect = l.expect
         WHERE d.uri IS NULL",
        agent_documents_table = agent_documents::NAME,
        documents_table = documents::NAME,
    ))
    .fetch_one(pool)
    .await
    .context("counting documents never fetched")?;
    Ok(pending == 0)
}

/// Documents by state, for progress reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DocumentCounts {
    /// Fetched and read.
    pub ok: u64,
    /// Fetched but not a valid document.
    pub invalid: u64,
    /// Could not be fetched (retried later).
    pub failed: u64,
    /// Linked from an agent and never tried yet.
    pub pending: u64,
}

/// Documents counted by state.
#[derive(sqlx::FromRow)]
struct CountsRow {
    ok: i64,
    invalid: i64,
    failed: i64,
    pending: i64,
}

pub(super) async fn counts(pool: &AnyPool) -> StoreResult<DocumentCounts> {
    let row: CountsRow = sqlx::query_as(&format!(
        "SELECT (SELECT count(*) FROM {documents_table} WHERE status = 'ok') AS ok,
                (SELECT count(*) FROM {documents_table} WHERE status = 'invalid') AS invalid,
                (SELECT count(*) FROM {documents_table} WHERE status = 'failed') AS failed,
                (SELECT count(*) FROM (SELECT DISTINCT l.uri, l.expect FROM {agent_documents_table} l
                   LEFT JOIN {documents_table} d ON d.uri = l.uri AND d.expect = l.expect
                  WHERE d.uri IS NULL) AS never_fetched) AS pending",
        documents_table = documents::NAME,
        agent_documents_table = agent_documents::NAME,
    ))
    .fetch_one(pool)
    .await
    .context("counting documents by state")?;
    let count = |column, value| decode::uint(documents::NAME, column, value);
    Ok(DocumentCounts {
        ok: count("status = 'ok'", row.ok)?,
        invalid: count("status = 'invalid'", row.invalid)?,
        failed: count("status = 'failed'", row.failed)?,
        pending: count("never fetched", row.pending)?,
    })
}

/// What a documents sync did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Synced {
    /// Agents whose profile was recomputed.
    pub(super) recomputed: u64,
    /// Whether any link between an agent and a document came or went.
    pub(super) links_changed: bool,
}

/// Brings links and profiles in line with the agents table.
pub(super) async fn sync(conn: &mut AnyConnection) -> StoreResult<Synced> {
    let links_changed = links::link(conn).await?;
    let stale: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT a.agent_key FROM {agents_table} a LEFT JOIN {agent_profiles_table} p ON p.agent_key = a.agent_key
         WHERE p.agent_key IS NULL OR p.chain_block != a.last_event_block",
        agents_table = agents::NAME,
        agent_profiles_table = agent_profiles::NAME,
    ))
    .fetch_all(&mut *conn)
    .await
    .context("finding agents whose profile is stale")?;
    // The chain said something new about these agents (a URI set again, a card updated): their
    // documents are fetched again now rather than at the next scheduled refresh.
    sqlx::query(&format!(
        "UPDATE {documents_table} SET next_fetch_at = 0 WHERE (uri, expect) IN (
           SELECT l.uri, l.expect FROM {agent_documents_table} l
           JOIN {agent_profiles_table} p ON p.agent_key = l.agent_key
           JOIN {agents_table} a ON a.agent_key = l.agent_key
           WHERE p.chain_block != a.last_event_block)",
        documents_table = documents::NAME,
        agent_documents_table = agent_documents::NAME,
        agent_profiles_table = agent_profiles::NAME,
        agents_table = agents::NAME,
    ))
    .execute(&mut *conn)
    .await
    .context("scheduling documents of changed agents")?;
    for table in [
        agent_profiles::NAME,
        agent_skills::NAME,
        agent_tags::NAME,
        agent_search::NAME,
        agent_x402_terms::NAME,
        agent_a2a_skills::NAME,
    ] {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE agent_key NOT IN (SELECT agent_key FROM {agents_table})",
            agents_table = agents::NAME
        ))
        .execute(&mut *conn)
        .await
        .context("removing profiles of agents that are gone")?;
    }
    postings::remove_gone(conn).await?;
    profiles::profiles(conn, &stale).await?;
    Ok(Synced {
        recomputed: stale.len() as u64,
        links_changed,
    })
}

/// What a save of fetched documents did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Saved {
    /// The agents (by chain) whose feedback files were among the documents, whose reputation
    /// the caller rescores.
    pub(super) rated: BTreeMap<u64, BTreeSet<String>>,
    /// Whether a document is new, reads differently (its bytes, where it was served from or
    /// what it is), or a link came or went: what agents declare may have changed.
    pub(super) changed: bool,
}

/// Stores fetched documents and their lints, then recomputes the profiles of the agents they
/// describe.
pub(super) async fn save(
    conn: &mut AnyConnection,
    results: &[DocumentResult],
) -> StoreResult<Saved> {
    let mut touched: BTreeSet<(String, &'static str)> = BTreeSet::new();
    let mut changed = false;
    for result in results {
        let expect = result.expect.as_str();
        let checked = &result.checked;
        touched.insert((checked.uri.clone(), expect));
        if checked.not_modified {
            sqlx::query(&format!(
                "UPDATE {documents_table} SET fetched_at = $1, next_fetch_at = $2, failures = 0 WHERE uri = $3 AND expect = $4",
                documents_table = documents::NAME,
            ))
            .bind(result.fetched_at)
            .bind(result.next_fetch_at)
            .bind(&checked.uri)
            .bind(expect)
            .execute(&mut *conn)
            .await
            .context("recording an unchanged document")?;
            continue;
        }
        let first_error = checked
            .report
            .lints
            .iter()
            .find(|l| l.severity == crate::documents::Severity::Error)
            .map(|l| format!("{}: {}", l.code, l.message));
        let status = match (&checked.bytes, &checked.projection, &first_error) {
            (None, _, _) => "failed",
            (Some(_), Some(_), None) => "ok",
            _ => "invalid",
        };
        let (kind, projection) = match &checked.projection {
            Some(Projection::Card(card)) => (Some("card"), Some(json(card))),
            Some(Projection::Registration(file)) => (Some("registration"), Some(json(file))),
            Some(Projection::Feedback(file)) => (Some("feedback"), Some(json(file))),
            None => (None, None),
        };
        let hash = checked.hash.map(|h| format!("{h:#x}"));
        changed = changed
            || reads_differently(conn, &checked.uri, expect, &hash, &checked.source, kind).await?;
        // A failed refetch keeps the last good bytes and projection.
        sqlx::query(&format!(
            "INSERT INTO {documents_table} (uri, expect, status, source, bytes, hash, etag, last_modified, kind, projection,
                error, failures, fetched_at, next_fetch_at, signature)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
             ON CONFLICT (uri, expect) DO UPDATE SET
               status = CASE WHEN $3 = 'failed' AND {documents_table}.kind IS NOT NULL THEN {documents_table}.status ELSE $3 END,
               source = coalesce($4, {documents_table}.source),
               bytes = coalesce($5, {documents_table}.bytes),
               hash = coalesce($6, {documents_table}.hash),
               etag = coalesce($7, {documents_table}.etag),
               last_modified = coalesce($8, {documents_table}.last_modified),
               kind = coalesce($9, {documents_table}.kind),
               projection = coalesce($10, {documents_table}.projection),
               error = $11,
               failures = CASE WHEN $3 = 'failed' THEN {documents_table}.failures + 1 ELSE 0 END,
               fetched_at = $13,
               next_fetch_at = $14,
               signature = coalesce($15, {documents_table}.signature)",
            documents_table = documents::NAME,
        ))
        .bind(&checked.uri)
        .bind(expect)
        .bind(status)
        .bind(&checked.source)
        .bind(&checked.bytes)
        .bind(&hash)
        .bind(&checked.validators.etag)
        .bind(&checked.validators.last_modified)
        .bind(kind)
        .bind(projection)
        .bind(first_error)
        .bind(i64::from(status == "failed"))
        .bind(result.fetched_at)
        .bind(result.next_fetch_at)
        .bind(checked.signature.as_ref().map(|s| s.as_str()))
        .execute(&mut *conn)
        .await
        .context("saving a document")?;
        if status == "failed" {
            // Keep the report of the last good fetch unless there never was one.
            let had: Option<String> = sqlx::query_scalar(&format!(
                "SELECT kind FROM {documents_table} WHERE uri = $1 AND expect = $2",
                documents_table = documents::NAME,
            ))
            .bind(&checked.uri)
            .bind(expect)
            .fetch_one(&mut *conn)
            .await
            .context("reading a document's kind")?;
            if had.is_some() {
                continue;
            }
        }
        sqlx::query(&format!(
            "DELETE FROM {document_lints_table} WHERE uri = $1 AND expect = $2",
            document_lints_table = document_lints::NAME,
        ))
        .bind(&checked.uri)
        .bind(expect)
        .execute(&mut *conn)
        .await
        .context("clearing a document's lints")?;
        for (position, lint) in checked.report.lints.iter().enumerate() {
            sqlx::query(&format!(
                "INSERT INTO {document_lints_table} (uri, expect, code, severity, message, path, position)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                document_lints_table = document_lints::NAME,
            ))
            .bind(&checked.uri)
            .bind(expect)
            .bind(lint.code)
            .bind(lint.severity.as_str())
            .bind(&lint.message)
            .bind(&lint.path)
            .bind(position as i64)
            .execute(&mut *conn)
            .await
            .context("saving a lint")?;
        }
    }
    changed |= links::link(conn).await?;
    let mut agents = BTreeSet::new();
    let mut rated: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for (uri, expect) in touched {
        let rows: Vec<(String, i64)> = sqlx::query_as(&format!(
            "SELECT l.agent_key, a.chain_id FROM {agent_documents_table} l
             JOIN {agents_table} a ON a.agent_key = l.agent_key WHERE l.uri = $1 AND l.expect = $2",
            agent_documents_table = agent_documents::NAME,
            agents_table = agents::NAME,
        ))
        .bind(&uri)
        .bind(expect)
        .fetch_all(&mut *conn)
        .await
        .context("finding the agents a document describes")?;
        for (key, chain_id) in rows {
            if expect == Expect::Feedback.as_str() {
                let chain_id = decode::uint("agents", "chain_id", chain_id)?;
                rated.entry(chain_id).or_default().insert(key);
            } else {
                agents.insert(key);
            }
        }
    }
    let agents: Vec<String> = agents.into_iter().collect();
    profiles::profiles(conn, &agents).await?;
    Ok(Saved { rated, changed })
}

/// Whether a fetch of `uri` gives what the stored document does not: the document is new, or
/// (when the fetch read it) its bytes, where it was served from or its kind differ. A failed
/// fetch keeps what was stored, so it changes nothing of an existing document.
async fn reads_differently(
    conn: &mut AnyConnection,
    uri: &str,
    expect: &str,
    hash: &Option<String>,
    source: &Option<String>,
    kind: Option<&str>,
) -> StoreResult<bool> {
    let stored: Option<(Option<String>, Option<String>, Option<String>)> =
        sqlx::query_as(&format!(
            "SELECT hash, source, kind FROM {documents_table} WHERE uri = $1 AND expect = $2",
            documents_table = documents::NAME,
        ))
        .bind(uri)
        .bind(expect)
        .fetch_optional(&mut *conn)
        .await
        .context("reading a document before saving it")?;
    let Some((stored_hash, stored_source, stored_kind)) = stored else {
        return Ok(true);
    };
    let differs = |new: Option<&str>, old: Option<String>| new.is_some() && new != old.as_deref();
    Ok(differs(hash.as_deref(), stored_hash)
        || differs(source.as_deref(), stored_source)
        || differs(kind, stored_kind))
}

/// Plain data (projections, lists of strings) as the JSON text a column holds.
fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}
