//! An agent's profile, skills and search row, rebuilt from the agents table and the documents
//! linked to it: this reads them into typed inputs, hands them to
//! [`build_profile`] (the rules live there, in `documents/profile.rs`) and writes what it returns.

use super::json;
use crate::documents::search_postings::SearchText;
use crate::documents::{ChainAgent, LinkRole, LinkedDocument, Profile, Projection, build_profile};
use crate::schema::{
    agent_documents, agent_profiles, agent_search, agent_skills, agent_tags, agents, documents,
    masumi_agents,
};
use crate::store::decode;
use crate::store::sql::or_replace;
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;
use std::collections::BTreeMap;

/// The columns of `agent_profiles`, in the order they are written.
const PROFILE_COLUMNS: &str = "agent_key, name, description, card_uri, card_status, \
    protocol_version, x402, input_modes, output_modes, payments, chain_block, card_signature, \
    registration_verified, domain_verified, document_digest, document_seq";

/// An `agents` row as a profile reads it.
#[derive(sqlx::FromRow)]
struct AgentRow {
    chain_id: i64,
    source: String,
    registry: Option<String>,
    token_id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    card: Option<String>,
    card_hash: Option<String>,
    last_event_block: i64,
    /// A Masumi agent's metadata as read (`documents::masumi::MasumiMetadata`, JSON).
    masumi_metadata: Option<String>,
}

impl AgentRow {
    fn chain_agent(&self) -> StoreResult<ChainAgent> {
        let erc8004 = match (self.source.as_str(), &self.registry, &self.token_id) {
            ("erc8004", Some(registry), Some(token)) => Some((registry.clone(), token.clone())),
            _ => None,
        };
        Ok(ChainAgent {
            chain_id: decode::uint("agents", "chain_id", self.chain_id)?,
            erc8004,
            name: self.name.clone(),
            description: self.description.clone(),
            card: self.card.clone(),
            card_hash: self.card_hash.clone(),
            tags: self.masumi_tags()?,
        })
    }

    /// The tags of a Masumi agent's registry metadata.
    fn masumi_tags(&self) -> StoreResult<Vec<String>> {
        #[derive(serde::Deserialize)]
        struct Tagged {
            #[serde(default)]
            tags: Vec<String>,
        }
        let Some(text) = &self.masumi_metadata else {
            return Ok(Vec::new());
        };
        let tagged: Tagged = decode::json(masumi_agents::NAME, "metadata", text)?;
        Ok(tagged.tags)
    }
}

/// A link of `agent_documents` with what `documents` holds for it.
#[derive(sqlx::FromRow)]
struct LinkRow {
    role: String,
    uri: String,
    status: Option<String>,
    kind: Option<String>,
    projection: Option<String>,
    hash: Option<String>,
    signature: Option<String>,
    source: Option<String>,
}

impl LinkRow {
    fn linked(self) -> StoreResult<LinkedDocument> {
        fn read<T: serde::de::DeserializeOwned>(text: &str) -> StoreResult<T> {
            decode::json(documents::NAME, "projection", text)
        }
        let projection = match (self.kind.as_deref(), self.projection.as_deref()) {
            (Some("card"), Some(text)) => Some(Projection::Card(Box::new(read(text)?))),
            (Some("registration"), Some(text)) => Some(Projection::Registration(read(text)?)),
            (None, None) => None,
            (kind, _) => {
                return Err(decode::corrupt(
                    documents::NAME,
                    "kind",
                    kind.unwrap_or("NULL"),
                    "a projection needs a kind of card or registration, and a kind its projection",
                ));
            }
        };
        Ok(LinkedDocument {
            role: LinkRole::of(&self.role),
            uri: self.uri,
            status: self.status,
            projection,
            hash: self.hash,
            signature: self.signature,
            source: self.source,
        })
    }
}

/// Recomputes the profile, skills and search row of each of `agents`.
pub(super) async fn profiles(conn: &mut AnyConnection, agents: &[String]) -> StoreResult<()> {
    for key in agents {
        let Some(agent) = sqlx::query_as::<_, AgentRow>(&format!(
            "SELECT a.chain_id, a.source, a.registry, a.token_id, a.name, a.description, a.card,
                    a.card_hash, a.last_event_block, m.metadata AS masumi_metadata
             FROM {agents_table} a LEFT JOIN {masumi_agents_table} m ON m.agent_key = a.agent_key
             WHERE a.agent_key = $1",
            agents_table = agents::NAME,
            masumi_agents_table = masumi_agents::NAME,
        ))
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .context("reading an agent for its profile")?
        else {
            continue;
        };
        let documents: Vec<LinkRow> = sqlx::query_as(&format!(
            "SELECT l.role, l.uri, d.status, d.kind, d.projection, d.hash, d.signature, d.source FROM {agent_documents_table} l
             LEFT JOIN {documents_table} d ON d.uri = l.uri AND d.expect = l.expect
             WHERE l.agent_key = $1 AND l.role != 'feedback' ORDER BY l.role DESC, l.uri",
            agent_documents_table = agent_documents::NAME,
            documents_table = documents::NAME,
        ))
        .bind(key)
        .fetch_all(&mut *conn)
        .await
        .context("reading an agent's documents")?;
        let documents = documents
            .into_iter()
            .map(LinkRow::linked)
            .collect::<StoreResult<Vec<_>>>()?;
        let Profile {
            name,
            description,
            card_uri,
            card_status,
            signature,
            protocol_version,
            x402,
            input_modes,
            output_modes,
            payments,
            skills,
            tags,
            registration_verified,
            domain_verified,
        } = build_profile(&agent.chain_agent()?, &documents);
        super::registrations::registration(conn, key, &documents, &skills).await?;
        let input_modes = json(&input_modes);
        let output_modes = json(&output_modes);
        super::x402_terms::terms(conn, key, &payments).await?;
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
            tags,
        ]);
        let digest = format!("{:x}", alloy::primitives::keccak256(said.to_string()));
        let previous: Option<(Option<String>, i64)> = sqlx::query_as(&format!(
            "SELECT document_digest, document_seq FROM {agent_profiles_table} WHERE agent_key = $1",
            agent_profiles_table = agent_profiles::NAME,
        ))
        .bind(key)
        .fetch_optional(&mut *conn)
        .await
        .context("reading an agent's document digest")?;
        let seq = match previous {
            Some((Some(old), seq)) if old == digest => seq,
            _ => sqlx::query_scalar::<_, i64>(&format!(
                "SELECT coalesce(max(document_seq), 0) + 1 FROM {agent_profiles_table}",
                agent_profiles_table = agent_profiles::NAME,
            ))
            .fetch_one(&mut *conn)
            .await
            .context("numbering a document update")?,
        };
        sqlx::query(&format!(
            "INSERT INTO {agent_profiles_table} ({PROFILE_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16){}",
            or_replace("agent_key", PROFILE_COLUMNS),
            agent_profiles_table = agent_profiles::NAME
        ))
        .bind(key)
        .bind(&name)
        .bind(&description)
        .bind(card_uri)
        .bind(card_status)
        .bind(protocol_version)
        .bind(i64::from(x402))
        .bind(input_modes)
        .bind(output_modes)
        .bind(payments)
        .bind(agent.last_event_block)
        .bind(&signature)
        .bind(registration_verified.map(i64::from))
        .bind(domain_verified.map(i64::from))
        .bind(&digest)
        .bind(seq)
        .execute(&mut *conn)
        .await
        .context("writing an agent profile")?;
        for table in [agent_skills::NAME, agent_tags::NAME, agent_search::NAME] {
            sqlx::query(&format!("DELETE FROM {table} WHERE agent_key = $1"))
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
            sqlx::query(&format!(
                "INSERT INTO {agent_skills_table} (agent_key, skill_id, name, description, tags) VALUES ($1, $2, $3, $4, $5)",
                agent_skills_table = agent_skills::NAME,
            ))
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
        for tag in &tags {
            sqlx::query(&format!(
                "INSERT INTO {agent_tags_table} (agent_key, tag) VALUES ($1, $2)",
                agent_tags_table = agent_tags::NAME,
            ))
            .bind(key)
            .bind(tag)
            .execute(&mut *conn)
            .await
            .context("writing an agent's own tag")?;
        }
        let tag_text: Vec<String> = skills
            .iter()
            .flat_map(|s| s.tags.clone())
            .chain(tags.iter().cloned())
            .collect();
        let (skill_text, tag_text) = (skill_text.join("\n"), tag_text.join(" "));
        sqlx::query(&format!(
            "INSERT INTO {agent_search_table} (agent_key, name, description, skills, tags) VALUES ($1, $2, $3, $4, $5)",
            agent_search_table = agent_search::NAME,
        ))
        .bind(key)
        .bind(&name)
        .bind(&description)
        .bind(&skill_text)
        .bind(&tag_text)
        .execute(&mut *conn)
        .await
        .context("writing an agent's search row")?;
        let text = SearchText {
            name: name.as_deref().unwrap_or_default(),
            description: description.as_deref().unwrap_or_default(),
            skills: &skill_text,
            tags: &tag_text,
        };
        super::postings::write(conn, key, text).await?;
    }
    Ok(())
}
