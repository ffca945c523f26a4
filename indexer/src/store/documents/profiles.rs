//! An agent's profile, skills and search row, recomputed from the agents table and the documents
//! linked to it: name and description from the registration file, else the card, else the chain;
//! the card from its off-chain document unless that fails its anchored hash, else the contract's
//! own card; whether the agent's files name it back.

use crate::documents::{CardProjection, RegistrationProjection};
use crate::store::{QueryContext, StoreResult};
use serde_json::Value;
use sqlx::{Row, SqliteConnection};
use std::collections::BTreeMap;

/// Recomputes the profile, skills and search row of each of `agents`.
pub(super) async fn profiles(conn: &mut SqliteConnection, agents: &[String]) -> StoreResult<()> {
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
            "SELECT l.role, l.uri, d.status, d.kind, d.projection, d.hash, d.signature, d.source FROM agent_documents l
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
        // Files fetched over plain http are used, but what they claim never counts as verified.
        let (mut registration_insecure, mut domain_insecure) = (false, false);
        for row in &documents {
            let insecure = row
                .get::<Option<&str>, _>("source")
                .is_some_and(|source| source.starts_with("http://"));
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
                    domain_insecure = insecure;
                }
                Some("registration") if registration.is_none() => {
                    registration = projection.and_then(|p| serde_json::from_str(&p).ok());
                    registration_insecure = insecure;
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
            .then(|| !registration_insecure && registration.as_ref().is_some_and(names_this_agent));
        let domain_verified = (erc8004 && registration.is_some())
            .then(|| !domain_insecure && domain.as_ref().is_some_and(names_this_agent));
        let card_uri = card.as_ref().map(|c| c.0.clone());
        let card_status = card.as_ref().map_or("none".to_string(), |c| c.1.clone());
        let protocol_version = projection.and_then(|c| c.protocol_versions.first().cloned());
        let input_modes = json(
            &projection
                .map(|c| c.default_input_modes.clone())
                .unwrap_or_default(),
        );
        let output_modes = json(
            &projection
                .map(|c| c.default_output_modes.clone())
                .unwrap_or_default(),
        );
        let payments = json(&payments);
        // What the documents say, in one digest: a new one is an update subscribers hear of.
        let said = serde_json::json!([
            name,
            description,
            card_uri,
            card_status,
            protocol_version,
            x402,
            input_modes,
            output_modes,
            payments,
            signature,
            registration_verified,
            domain_verified,
            skills
                .iter()
                .map(|s| (&s.id, &s.name, &s.description, &s.tags))
                .collect::<Vec<_>>(),
        ]);
        let digest = format!("{:x}", alloy::primitives::keccak256(said.to_string()));
        let previous: Option<(Option<String>, i64)> = sqlx::query_as(
            "SELECT document_digest, document_seq FROM agent_profiles WHERE agent_key = ?",
        )
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .context("reading an agent's document digest")?;
        let seq = match previous {
            Some((Some(old), seq)) if old == digest => seq,
            _ => sqlx::query_scalar::<_, i64>(
                "SELECT coalesce(max(document_seq), 0) + 1 FROM agent_profiles",
            )
            .fetch_one(&mut *conn)
            .await
            .context("numbering a document update")?,
        };
        sqlx::query(
            "INSERT OR REPLACE INTO agent_profiles (agent_key, name, description, card_uri, card_status,
                protocol_version, x402, input_modes, output_modes, payments, chain_block, card_signature,
                registration_verified, domain_verified, document_digest, document_seq)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(key)
        .bind(&name)
        .bind(&description)
        .bind(card_uri)
        .bind(card_status)
        .bind(protocol_version)
        .bind(x402)
        .bind(input_modes)
        .bind(output_modes)
        .bind(payments)
        .bind(agent.get::<i64, _>("last_event_block"))
        .bind(&signature)
        .bind(registration_verified)
        .bind(domain_verified)
        .bind(&digest)
        .bind(seq)
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

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("plain data serialises")
}
