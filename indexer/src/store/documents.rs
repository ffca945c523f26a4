//! Documents in the store: which documents describe which agent (derived from the agents table
//! and from registration files), which are due for a fetch, saving fetched documents with their
//! lints, and the agent profiles, skills and search rows recomputed from agents and documents.
//!
//! Documents are not chain facts: a reorg never removes one. Links and profiles follow the
//! agents table, so an agent a reorg removed loses them at the next sync.

use super::{QueryContext, StoreResult};
use crate::documents::{CardProjection, Checked, Expect, Projection, RegistrationProjection};
use serde_json::Value;
use sqlx::{Row, SqliteConnection, SqlitePool};
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
pub(super) async fn due(pool: &SqlitePool, now: i64, limit: i64) -> StoreResult<Vec<DueDocument>> {
    let rows = sqlx::query(
        "SELECT DISTINCT l.uri, l.expect, d.etag, d.last_modified, coalesce(d.failures, 0) AS failures
         FROM agent_documents l LEFT JOIN documents d ON d.uri = l.uri AND d.expect = l.expect
         WHERE d.uri IS NULL OR d.next_fetch_at <= ?
         ORDER BY coalesce(d.next_fetch_at, 0) LIMIT ?",
    )
    .bind(now)
    .bind(limit)
    .fetch_all(pool)
    .await
    .context("listing documents due")?;
    Ok(rows
        .into_iter()
        .filter_map(|row| {
            Some(DueDocument {
                uri: row.get("uri"),
                expect: Expect::parse(row.get::<&str, _>("expect"))?,
                etag: row.get("etag"),
                last_modified: row.get("last_modified"),
                failures: row.get("failures"),
            })
        })
        .collect())
}

/// Whether every linked document was fetched or failed at least once.
pub(super) async fn all_attempted(pool: &SqlitePool) -> StoreResult<bool> {
    let pending: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM agent_documents l LEFT JOIN documents d ON d.uri = l.uri AND d.expect = l.expect
         WHERE d.uri IS NULL",
    )
    .fetch_one(pool)
    .await
    .context("counting documents never fetched")?;
    Ok(pending == 0)
}

/// Brings links and profiles in line with the agents table; returns the agents recomputed.
pub(super) async fn sync(conn: &mut SqliteConnection) -> StoreResult<u64> {
    link(conn).await?;
    let stale: Vec<String> = sqlx::query_scalar(
        "SELECT a.agent_key FROM agents a LEFT JOIN agent_profiles p ON p.agent_key = a.agent_key
         WHERE p.agent_key IS NULL OR p.chain_block != a.last_event_block",
    )
    .fetch_all(&mut *conn)
    .await
    .context("finding agents whose profile is stale")?;
    // The chain said something new about these agents (a URI set again, a card updated): their
    // documents are fetched again now rather than at the next scheduled refresh.
    sqlx::query(
        "UPDATE documents SET next_fetch_at = 0 WHERE (uri, expect) IN (
           SELECT l.uri, l.expect FROM agent_documents l
           JOIN agent_profiles p ON p.agent_key = l.agent_key
           JOIN agents a ON a.agent_key = l.agent_key
           WHERE p.chain_block != a.last_event_block)",
    )
    .execute(&mut *conn)
    .await
    .context("scheduling documents of changed agents")?;
    for table in ["agent_profiles", "agent_skills", "agent_search"] {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE agent_key NOT IN (SELECT agent_key FROM agents)"
        ))
        .execute(&mut *conn)
        .await
        .context("removing profiles of agents that are gone")?;
    }
    profiles(conn, &stale).await?;
    Ok(stale.len() as u64)
}

/// Stores fetched documents and their lints, then recomputes the agents they describe.
pub(super) async fn save(
    conn: &mut SqliteConnection,
    results: &[DocumentResult],
) -> StoreResult<()> {
    let mut touched: BTreeSet<(String, &'static str)> = BTreeSet::new();
    for result in results {
        let expect = result.expect.as_str();
        let checked = &result.checked;
        touched.insert((checked.uri.clone(), expect));
        if checked.not_modified {
            sqlx::query(
                "UPDATE documents SET fetched_at = ?, next_fetch_at = ?, failures = 0 WHERE uri = ? AND expect = ?",
            )
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
            Some(Projection::Card(card)) => (Some("card"), serde_json::to_string(card).ok()),
            Some(Projection::Registration(file)) => {
                (Some("registration"), serde_json::to_string(file).ok())
            }
            None => (None, None),
        };
        // A failed refetch keeps the last good bytes and projection.
        sqlx::query(
            "INSERT INTO documents (uri, expect, status, source, bytes, hash, etag, last_modified, kind, projection,
                error, failures, fetched_at, next_fetch_at, signature)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT (uri, expect) DO UPDATE SET
               status = CASE WHEN ?3 = 'failed' AND documents.kind IS NOT NULL THEN documents.status ELSE ?3 END,
               source = coalesce(?4, documents.source),
               bytes = coalesce(?5, documents.bytes),
               hash = coalesce(?6, documents.hash),
               etag = coalesce(?7, documents.etag),
               last_modified = coalesce(?8, documents.last_modified),
               kind = coalesce(?9, documents.kind),
               projection = coalesce(?10, documents.projection),
               error = ?11,
               failures = CASE WHEN ?3 = 'failed' THEN documents.failures + 1 ELSE 0 END,
               fetched_at = ?13,
               next_fetch_at = ?14,
               signature = coalesce(?15, documents.signature)",
        )
        .bind(&checked.uri)
        .bind(expect)
        .bind(status)
        .bind(&checked.source)
        .bind(&checked.bytes)
        .bind(checked.hash.map(|h| format!("{h:#x}")))
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
            let had: Option<String> =
                sqlx::query_scalar("SELECT kind FROM documents WHERE uri = ? AND expect = ?")
                    .bind(&checked.uri)
                    .bind(expect)
                    .fetch_one(&mut *conn)
                    .await
                    .context("reading a document's kind")?;
            if had.is_some() {
                continue;
            }
        }
        sqlx::query("DELETE FROM document_lints WHERE uri = ? AND expect = ?")
            .bind(&checked.uri)
            .bind(expect)
            .execute(&mut *conn)
            .await
            .context("clearing a document's lints")?;
        for lint in &checked.report.lints {
            sqlx::query(
                "INSERT INTO document_lints (uri, expect, code, severity, message, path) VALUES (?, ?, ?, ?, ?, ?)",
            )
            .bind(&checked.uri)
            .bind(expect)
            .bind(lint.code)
            .bind(lint.severity.as_str())
            .bind(&lint.message)
            .bind(&lint.path)
            .execute(&mut *conn)
            .await
            .context("saving a lint")?;
        }
    }
    link(conn).await?;
    let mut agents = BTreeSet::new();
    for (uri, expect) in touched {
        let keys: Vec<String> = sqlx::query_scalar(
            "SELECT agent_key FROM agent_documents WHERE uri = ? AND expect = ?",
        )
        .bind(&uri)
        .bind(expect)
        .fetch_all(&mut *conn)
        .await
        .context("finding the agents a document describes")?;
        agents.extend(keys);
    }
    let agents: Vec<String> = agents.into_iter().collect();
    profiles(conn, &agents).await
}

/// Recomputes `agent_documents` from the agents table and the registration files fetched.
async fn link(conn: &mut SqliteConnection) -> StoreResult<()> {
    sqlx::query(
        "CREATE TEMP TABLE IF NOT EXISTS wanted_links (agent_key TEXT, role TEXT, uri TEXT, expect TEXT)",
    )
    .execute(&mut *conn)
    .await
    .context("preparing document links")?;
    sqlx::query("DELETE FROM temp.wanted_links")
        .execute(&mut *conn)
        .await
        .context("preparing document links")?;
    sqlx::query(
        "INSERT INTO temp.wanted_links
         SELECT agent_key, 'registration', uri, 'registration' FROM agents
           WHERE source = 'erc8004' AND trim(coalesce(uri, '')) != ''
         UNION SELECT agent_key, 'metadata', uri, 'any' FROM agents
           WHERE source != 'erc8004' AND trim(coalesce(uri, '')) != ''
         UNION SELECT agent_key, 'card', card_uri, 'card' FROM agents
           WHERE trim(coalesce(card_uri, '')) != ''
         UNION SELECT agent_key, 'onchain', 'eip155:' || chain_id || ':' || address, 'onchain' FROM agents
           WHERE address IS NOT NULL",
    )
    .execute(&mut *conn)
    .await
    .context("listing the documents agents point at")?;
    // A registration file's A2A service leads to the card.
    sqlx::query(
        "INSERT INTO temp.wanted_links
         SELECT DISTINCT w.agent_key, 'card', json_extract(s.value, '$.endpoint'), 'a2a'
         FROM temp.wanted_links w
         JOIN documents d ON d.uri = w.uri AND d.expect = w.expect AND d.kind = 'registration'
         JOIN json_each(d.projection, '$.services') s
         WHERE lower(json_extract(s.value, '$.name')) = 'a2a'
           AND json_extract(s.value, '$.endpoint') IS NOT NULL",
    )
    .execute(&mut *conn)
    .await
    .context("following registration files to their cards")?;
    // Domain proof: the A2A endpoint's origin serves /.well-known/agent-registration.json.
    let endpoints: Vec<(String, String)> =
        sqlx::query_as("SELECT agent_key, uri FROM temp.wanted_links WHERE expect = 'a2a'")
            .fetch_all(&mut *conn)
            .await
            .context("listing A2A endpoints")?;
    for (agent_key, endpoint) in endpoints {
        let Some(proof) = domain_proof_url(&endpoint) else {
            continue;
        };
        sqlx::query("INSERT INTO temp.wanted_links VALUES (?, 'domain', ?, 'registration')")
            .bind(agent_key)
            .bind(proof)
            .execute(&mut *conn)
            .await
            .context("adding a domain proof link")?;
    }
    sqlx::query(
        "DELETE FROM agent_documents WHERE (agent_key, role, uri, expect) NOT IN
           (SELECT agent_key, role, uri, expect FROM temp.wanted_links)",
    )
    .execute(&mut *conn)
    .await
    .context("removing stale document links")?;
    sqlx::query("INSERT OR IGNORE INTO agent_documents SELECT * FROM temp.wanted_links")
        .execute(&mut *conn)
        .await
        .context("adding document links")?;
    Ok(())
}

/// Recomputes the profile, skills and search row of each of `agents`.
async fn profiles(conn: &mut SqliteConnection, agents: &[String]) -> StoreResult<()> {
    for key in agents {
        let Some(agent) = sqlx::query(
            "SELECT chain_id, source, registry, token_id, name, description, card, card_hash, last_event_block
             FROM agents WHERE agent_key = ?",
        )
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .context("reading an agent for its profile")?
        else {
            continue;
        };
        let documents = sqlx::query(
            "SELECT l.role, l.uri, d.status, d.kind, d.projection, d.hash, d.signature FROM agent_documents l
             LEFT JOIN documents d ON d.uri = l.uri AND d.expect = l.expect
             WHERE l.agent_key = ? ORDER BY l.role DESC, l.uri",
        )
        .bind(key)
        .fetch_all(&mut *conn)
        .await
        .context("reading an agent's documents")?;
        let anchored: Option<String> = agent.get("card_hash");
        let mut registration: Option<RegistrationProjection> = None;
        let mut domain: Option<RegistrationProjection> = None;
        let mut contract_card: Option<CardProjection> = None;
        let mut card: Option<(String, String, Option<CardProjection>)> = None;
        let mut signature: Option<String> = None;
        for row in &documents {
            let mut projection: Option<String> = row.get("projection");
            let mut status: Option<String> = row.get("status");
            let uri: String = row.get("uri");
            // A card whose bytes are not the ones the contract anchored is not used.
            let hash: Option<String> = row.get("hash");
            if row.get::<&str, _>("role") == "card"
                && let (Some(anchored), Some(hash)) = (&anchored, &hash)
                && !anchored.eq_ignore_ascii_case(hash)
            {
                status = Some("hash_mismatch".into());
                projection = None;
            }
            if row.get::<&str, _>("role") == "onchain" {
                contract_card = projection.and_then(|p| serde_json::from_str(&p).ok());
                continue;
            }
            match row.get::<Option<String>, _>("kind").as_deref() {
                Some("registration") if row.get::<&str, _>("role") == "domain" => {
                    domain = projection.and_then(|p| serde_json::from_str(&p).ok());
                }
                Some("registration") if registration.is_none() => {
                    registration = projection.and_then(|p| serde_json::from_str(&p).ok());
                }
                Some("card") if card.as_ref().is_none_or(|c| c.2.is_none()) => {
                    signature = row.get("signature");
                    card = Some((
                        uri,
                        status.unwrap_or_default(),
                        projection.and_then(|p| serde_json::from_str(&p).ok()),
                    ));
                }
                None if row.get::<&str, _>("role") == "card" && card.is_none() => {
                    card = Some((uri, status.unwrap_or_else(|| "pending".into()), None));
                }
                _ => {}
            }
        }
        let onchain: Option<Value> = agent
            .get::<Option<String>, _>("card")
            .and_then(|c| serde_json::from_str(&c).ok());
        // The agent contract's own card stands in when no off-chain card could be used: its
        // agentCard() JSON when read, else the card fields of its events.
        let onchain_card = onchain
            .as_ref()
            .and_then(|c| crate::documents::read_card(c, &mut crate::documents::Report::default()));
        let projection = card
            .as_ref()
            .and_then(|c| c.2.as_ref())
            .or(contract_card.as_ref())
            .or(onchain_card.as_ref());
        let name = registration
            .as_ref()
            .and_then(|r| r.name.clone())
            .or_else(|| projection.and_then(|c| c.name.clone()))
            .or_else(|| agent.get("name"));
        let description = registration
            .as_ref()
            .and_then(|r| r.description.clone())
            .or_else(|| projection.and_then(|c| c.description.clone()))
            .or_else(|| agent.get("description"));
        let onchain_terms = onchain
            .as_ref()
            .and_then(|c| c.get("payment"))
            .and_then(|p| p.get("payTo"))
            .and_then(Value::as_str)
            .is_some_and(|to| to.trim_start_matches("0x").chars().any(|c| c != '0'));
        let payments = projection.map(|c| c.payments.clone()).unwrap_or_default();
        let x402 = !payments.is_empty()
            || registration.as_ref().and_then(|r| r.x402_support) == Some(true)
            || onchain_terms
            || projection.is_some_and(|c| {
                c.capabilities
                    .extensions
                    .iter()
                    .any(|e| crate::documents::payments::is_x402_extension(&e.uri))
            });
        let skills = projection.map(|c| c.skills.clone()).unwrap_or_default();
        // An ERC-8004 agent's files should name it back: registry, chain and token id.
        let names_this_agent = |file: &RegistrationProjection| {
            let registry: Option<String> = agent.get("registry");
            let token: Option<String> = agent.get("token_id");
            match (registry, token) {
                (Some(registry), Some(token)) => {
                    file.names_agent(agent.get::<i64, _>("chain_id") as u64, &registry, &token)
                }
                _ => false,
            }
        };
        let erc8004 = agent.get::<&str, _>("source") == "erc8004";
        let registration_verified = (erc8004 && registration.is_some())
            .then(|| registration.as_ref().is_some_and(names_this_agent));
        let domain_verified = (erc8004 && registration.is_some())
            .then(|| domain.as_ref().is_some_and(names_this_agent));
        sqlx::query(
            "INSERT OR REPLACE INTO agent_profiles (agent_key, name, description, card_uri, card_status,
                protocol_version, x402, input_modes, output_modes, payments, chain_block, card_signature,
                registration_verified, domain_verified)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(key)
        .bind(&name)
        .bind(&description)
        .bind(card.as_ref().map(|c| c.0.clone()))
        .bind(card.as_ref().map_or("none".to_string(), |c| c.1.clone()))
        .bind(projection.and_then(|c| c.protocol_versions.first().cloned()))
        .bind(x402)
        .bind(json(&projection.map(|c| c.default_input_modes.clone()).unwrap_or_default()))
        .bind(json(&projection.map(|c| c.default_output_modes.clone()).unwrap_or_default()))
        .bind(json(&payments))
        .bind(agent.get::<i64, _>("last_event_block"))
        .bind(&signature)
        .bind(registration_verified)
        .bind(domain_verified)
        .execute(&mut *conn)
        .await
        .context("writing an agent profile")?;
        for table in ["agent_skills", "agent_search"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE agent_key = ?"))
                .bind(key)
                .execute(&mut *conn)
                .await
                .context("clearing an agent's skills")?;
        }
        let mut seen = BTreeMap::new();
        for skill in &skills {
            let tags: Vec<String> = skill.tags.iter().map(|t| t.to_lowercase()).collect();
            if seen.insert(skill.id.clone(), ()).is_some() {
                continue;
            }
            sqlx::query(
                "INSERT INTO agent_skills (agent_key, skill_id, name, description, tags) VALUES (?, ?, ?, ?, ?)",
            )
            .bind(key)
            .bind(&skill.id)
            .bind(&skill.name)
            .bind(&skill.description)
            .bind(json(&tags))
            .execute(&mut *conn)
            .await
            .context("writing an agent skill")?;
        }
        let skill_text: Vec<String> = skills
            .iter()
            .map(|s| format!("{} {}", s.name, s.description.clone().unwrap_or_default()))
            .collect();
        let tag_text: Vec<String> = skills.iter().flat_map(|s| s.tags.clone()).collect();
        sqlx::query(
            "INSERT INTO agent_search (agent_key, name, description, skills, tags) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(key)
        .bind(&name)
        .bind(&description)
        .bind(skill_text.join("\n"))
        .bind(tag_text.join(" "))
        .execute(&mut *conn)
        .await
        .context("writing an agent's search row")?;
    }
    Ok(())
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

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}
