//! `agent_x402_terms`: each x402 payment term an agent's documents declare, a row each,
//! rewritten with the agent's profile, for x402 Bazaar discovery (`GET /discovery/resources`
//! filters by recipient, network and resource through its indexes).

use crate::documents::payments::{PaymentTerms, recipient};
use crate::schema::agent_x402_terms;
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;

/// Replaces the rows of agent `key` by `terms`.
pub(super) async fn terms(
    conn: &mut AnyConnection,
    key: &str,
    terms: &[PaymentTerms],
) -> StoreResult<()> {
    sqlx::query(&format!(
        "DELETE FROM {} WHERE agent_key = $1",
        agent_x402_terms::NAME
    ))
    .bind(key)
    .execute(&mut *conn)
    .await
    .context("clearing an agent's x402 terms")?;
    for (position, term) in terms.iter().enumerate() {
        sqlx::query(&format!(
            "INSERT INTO {} ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            agent_x402_terms::NAME,
            agent_x402_terms::TABLE.column_list(),
        ))
        .bind(key)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(
            term.resource
                .as_deref()
                .map(str::trim)
                .filter(|resource| !resource.is_empty()),
        )
        .bind(&term.source)
        .bind(&term.network)
        .bind(&term.asset)
        .bind(&term.amount)
        .bind(term.pay_to.as_deref().map(recipient))
        .bind(&term.skill)
        .execute(&mut *conn)
        .await
        .context("writing an agent's x402 terms")?;
    }
    Ok(())
}
