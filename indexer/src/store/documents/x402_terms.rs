//! `agent_x402_terms`: each x402 payment term an agent's documents declare, a row each,
//! rewritten with the agent's profile, for x402 Bazaar discovery (`GET /discovery/resources`
//! filters by recipient, network and resource through its indexes).

use crate::documents::payments::{PaymentTerms, recipient};
use crate::schema::agent_x402_terms;
use crate::store::{QueryContext, StoreResult};
use sqlx::AnyConnection;

/// Terms kept per agent: a card that declares thousands does not list thousands.
const MOST_TERMS: usize = 64;
/// The longest resource URL kept, as the prober keeps them.
const MOST_URL_BYTES: usize = 2_000;
/// The longest network, asset, amount, recipient, skill or source kept.
const MOST_FIELD_CHARS: usize = 200;

/// `text` as the table keeps it: without NUL characters (PostgreSQL's text holds none), without
/// the spaces around it (as SQL's `trim` takes them off), absent when empty or longer than
/// `most` characters (a key longer than an index entry could not be written).
fn kept(text: &str, most: usize) -> Option<String> {
    let text: String = text.chars().filter(|c| *c != '\0').collect();
    let text = text.trim_matches(' ');
    (!text.is_empty() && text.chars().count() <= most).then(|| text.to_owned())
}

/// A resource URL as the table keeps it: http(s) only, at most [`MOST_URL_BYTES`] long; any
/// other and the terms list under their agent's card.
fn resource(text: &str) -> Option<String> {
    kept(text, MOST_URL_BYTES).filter(|url| {
        let lower = url.to_ascii_lowercase();
        url.len() <= MOST_URL_BYTES
            && (lower.starts_with("https://") || lower.starts_with("http://"))
    })
}

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
    let field = |value: &Option<String>| value.as_deref().and_then(|v| kept(v, MOST_FIELD_CHARS));
    for (position, term) in terms.iter().take(MOST_TERMS).enumerate() {
        sqlx::query(&format!(
            "INSERT INTO {} ({}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            agent_x402_terms::NAME,
            agent_x402_terms::TABLE.column_list(),
        ))
        .bind(key)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(term.resource.as_deref().and_then(resource))
        .bind(kept(&term.source, MOST_FIELD_CHARS).unwrap_or_default())
        .bind(field(&term.network))
        .bind(field(&term.asset))
        .bind(field(&term.amount))
        .bind(field(&term.pay_to).map(|pay_to| recipient(&pay_to)))
        .bind(field(&term.skill))
        .execute(&mut *conn)
        .await
        .context("writing an agent's x402 terms")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_values_are_kept_out_and_urls_are_web_ones() {
        assert_eq!(
            kept("  base-sepolia ", 200).as_deref(),
            Some("base-sepolia")
        );
        assert_eq!(kept("0x\0ab", 200).as_deref(), Some("0xab"));
        assert_eq!(kept("   ", 200), None);
        assert_eq!(kept(&"9".repeat(201), 200), None);
        assert_eq!(
            resource(" https://pay.example/quote ").as_deref(),
            Some("https://pay.example/quote")
        );
        for refused in [
            "javascript:alert(1)",
            "data:text/plain,hi",
            "ftp://x.example/",
        ] {
            assert_eq!(resource(refused), None, "{refused}");
        }
        assert_eq!(
            resource(&format!("https://x.example/{}", "a".repeat(2_000))),
            None
        );
    }
}
