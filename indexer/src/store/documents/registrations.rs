//! `agent_registrations`: what an ERC-8004 agent's registration file says, one column per field,
//! rewritten with the agent's profile, and its name and description in
//! `agent_registration_text` (trigrams). The agent0 subgraph endpoint filters on these rather than
//! parsing every file's JSON.

use super::json;
use crate::documents::{LinkRole, LinkedDocument, Projection, RegistrationProjection, Service};
use crate::schema::{agent_registration_text, agent_registrations};
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;

/// The first service named `name` (case-insensitively) with an endpoint.
fn service<'a>(file: &'a RegistrationProjection, name: &str) -> Option<&'a Service> {
    file.services
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name) && !s.endpoint.is_empty())
}

/// Writes the row of agent `key` from its readable registration file among `documents`, or
/// removes it when it has none.
pub(super) async fn registration(
    conn: &mut AnyConnection,
    key: &str,
    documents: &[LinkedDocument],
) -> StoreResult<()> {
    let found = documents
        .iter()
        .find_map(|d| match (&d.role, &d.projection) {
            (LinkRole::Registration, Some(Projection::Registration(file))) => Some((&d.uri, file)),
            _ => None,
        });
    for table in [agent_registrations::NAME, agent_registration_text::NAME] {
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
    Ok(())
}
