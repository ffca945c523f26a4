//! `agent_registrations`: what an ERC-8004 agent's registration file says, one column per field,
//! rewritten with the agent's profile, its name and description in `agent_registration_text`
//! (trigrams), and its `a2aSkills` in `agent_a2a_skills`. The agent0 subgraph endpoint filters
//! on these rather than parsing every file's JSON.

use super::json;
use crate::documents::{
    LinkRole, LinkedDocument, Projection, RegistrationProjection, Service, Skill,
};
use crate::schema::{agent_a2a_skills, agent_registration_text, agent_registrations};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;

/// The first service named `name` (case-insensitively) with an endpoint.
fn service<'a>(file: &'a RegistrationProjection, name: &str) -> Option<&'a Service> {
    file.services
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name) && !s.endpoint.is_empty())
}

/// What the agent0 SDK's `a2aSkills` holds for an agent with `file` and `skills`: what the
/// file's A2A services declare, else the skills' tags (lower case, as `agent_skills` keeps
/// them), then their ids; each once, first place kept.
fn a2a_skills(file: &RegistrationProjection, skills: &[Skill]) -> Vec<String> {
    let declared: Vec<&String> = file
        .services
        .iter()
        .filter(|s| s.name.eq_ignore_ascii_case("a2a"))
        .flat_map(|s| &s.a2a_skills)
        .collect();
    let candidates: Vec<String> = if declared.is_empty() {
        let tags = skills
            .iter()
            .flat_map(|skill| skill.tags.iter().map(|tag| tag.to_lowercase()));
        tags.chain(skills.iter().map(|skill| skill.id.clone()))
            .collect()
    } else {
        declared.into_iter().cloned().collect()
    };
    let mut seen = std::collections::BTreeSet::new();
    candidates
        .into_iter()
        .filter(|skill| !skill.is_empty() && seen.insert(skill.clone()))
        .collect()
}

/// Writes the rows of agent `key` from its readable registration file among `documents` and
/// its `skills`, or removes them when it has none.
pub(super) async fn registration(
    conn: &mut AnyConnection,
    key: &str,
    documents: &[LinkedDocument],
    skills: &[Skill],
) -> StoreResult<()> {
    let found = documents
        .iter()
        .find_map(|d| match (&d.role, &d.projection) {
            (LinkRole::Registration, Some(Projection::Registration(file))) => Some((&d.uri, file)),
            _ => None,
        });
    for table in [
        agent_registrations::NAME,
        agent_registration_text::NAME,
        agent_a2a_skills::NAME,
    ] {
        sqlx::query(&format!("DELETE FROM {table} WHERE agent_key = $1"))
            .bind(key)
            .execute(&mut *conn)
            .await
            .context("removing an agent's registration fields")?;
    }
    let Some((uri, file)) = found else {
        return Ok(());
    };
    sqlx::query(&format!(
        "INSERT INTO {agent_registration_text_table} (agent_key, name, description) VALUES ($1, $2, $3)",
        agent_registration_text_table = agent_registration_text::NAME,
    ))
    .bind(key)
    .bind(&file.name)
    .bind(&file.description)
    .execute(&mut *conn)
    .await
    .context("writing an agent's registration text")?;
    let endpoint = |name: &str| service(file, name).map(|s| s.endpoint.clone());
    let version = |name: &str| service(file, name).and_then(|s| s.version.clone());
    let oasf = service(file, "oasf");
    sqlx::query(&format!(
        "INSERT INTO {agent_registrations_table} ({columns})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
        agent_registrations_table = agent_registrations::NAME,
        columns = agent_registrations::TABLE.column_list(),
    ))
    .bind(key)
    .bind(uri)
    .bind(&file.name)
    .bind(&file.description)
    .bind(&file.image)
    .bind(file.active.map(i64::from))
    .bind(file.x402_support.map(i64::from))
    .bind(json(&file.supported_trust))
    .bind(json(&file.services))
    .bind(endpoint("mcp"))
    .bind(version("mcp"))
    .bind(endpoint("a2a"))
    .bind(version("a2a"))
    .bind(endpoint("web"))
    .bind(endpoint("email"))
    .bind(oasf.map(|s| s.endpoint.clone()))
    .bind(oasf.and_then(|s| s.version.clone()))
    .bind(json(&oasf.map(|s| s.skills.clone()).unwrap_or_default()))
    .bind(json(&oasf.map(|s| s.domains.clone()).unwrap_or_default()))
    .bind(endpoint("ens"))
    .bind(endpoint("did"))
    .execute(&mut *conn)
    .await
    .context("writing an agent's registration fields")?;
    for (position, skill) in a2a_skills(file, skills).into_iter().enumerate() {
        sqlx::query(&format!(
            "INSERT INTO {} (agent_key, position, skill) VALUES ($1, $2, $3)",
            agent_a2a_skills::NAME
        ))
        .bind(key)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(skill)
        .execute(&mut *conn)
        .await
        .context("writing an agent's a2aSkills")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(id: &str, tags: &[&str]) -> Skill {
        Skill {
            id: id.into(),
            name: id.into(),
            tags: tags.iter().map(|tag| tag.to_string()).collect(),
            ..Skill::default()
        }
    }

    fn file(services: serde_json::Value) -> RegistrationProjection {
        RegistrationProjection {
            services: serde_json::from_value(services).unwrap(),
            ..RegistrationProjection::default()
        }
    }

    #[test]
    fn a2a_skills_are_the_declared_ones_else_tags_then_ids() {
        let skills = [
            skill("caption", &["Vision", "images"]),
            skill("ocr", &["vision", "text"]),
        ];
        let undeclared =
            file(serde_json::json!([{"name": "A2A", "endpoint": "https://a.example"}]));
        assert_eq!(
            a2a_skills(&undeclared, &skills),
            ["vision", "images", "text", "caption", "ocr"]
        );
        let declared = file(serde_json::json!([
            {"name": "a2a", "endpoint": "https://a.example", "a2a_skills": ["seeing", "seeing", "reading"]},
            {"name": "MCP", "endpoint": "https://m.example", "a2a_skills": ["ignored"]}
        ]));
        assert_eq!(a2a_skills(&declared, &skills), ["seeing", "reading"]);
        assert!(a2a_skills(&undeclared, &[]).is_empty());
    }
}
