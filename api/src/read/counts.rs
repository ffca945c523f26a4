//! How long an agent's lists are, and its payments per day, as aggregates: `totalCount` and
//! `dailyPayments` count through the indexes and never load the rows they count, so a list of
//! a hundred thousand spam feedback costs a count, not a hundred thousand rows.

use super::activity::{Subjects, push_token};
use super::pages::PARENTS_PER_STATEMENT;
use agentindex_indexer::schema::{
    agent_contract_events, feedback, identity_approvals, identity_metadata, identity_registrations,
    identity_transfers, identity_uri_updates, payments, registry_events, validation_requests,
    watched_agents,
};
use agentindex_indexer::store::Dialect;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::HashMap;

/// One of an agent's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Relation {
    /// Credited payments.
    Payments,
    /// ERC-8004 feedback.
    Feedback,
    /// ERC-8004 validation requests.
    Validations,
    /// On-chain history.
    History,
}

/// The tables an ERC-8004 agent's history is read from.
const TOKEN_HISTORY: &[&str] = &[
    identity_registrations::NAME,
    identity_transfers::NAME,
    identity_uri_updates::NAME,
    identity_metadata::NAME,
    identity_approvals::NAME,
];

/// The tables an agent contract's history is read from, with the column naming the agent.
const CONTRACT_HISTORY: &[(&str, &str)] = &[
    (watched_agents::NAME, watched_agents::address.name),
    (
        agent_contract_events::NAME,
        agent_contract_events::agent.name,
    ),
    (registry_events::NAME, registry_events::agent.name),
];

/// How many items `relation` holds for each of `keys` (agents that are not ERC-8004 agents
/// have no feedback or validations and are left out of those counts).
pub(crate) async fn of_agents(
    pool: &AnyPool,
    relation: Relation,
    keys: &[String],
) -> sqlx::Result<HashMap<String, i64>> {
    let mut out: HashMap<String, i64> = HashMap::new();
    for chunk in keys.chunks(PARENTS_PER_STATEMENT) {
        let subjects = Subjects::of(chunk)?;
        let mut branches = Branches::default();
        match relation {
            Relation::Payments => {
                for key in chunk {
                    branches.start(
                        key,
                        &format!("{} t WHERE t.{} = ", payments::NAME, payments::agent_key),
                    );
                    branches.query.push_bind(key.clone());
                }
            }
            Relation::Feedback | Relation::Validations => {
                let table = if relation == Relation::Feedback {
                    feedback::NAME
                } else {
                    validation_requests::NAME
                };
                for (columns, key) in &subjects.tokens {
                    branches.start(key, &format!("{table} t WHERE"));
                    push_token(&mut branches.query, "t", columns);
                }
            }
            Relation::History => {
                for table in TOKEN_HISTORY {
                    for (columns, key) in &subjects.tokens {
                        branches.start(key, &format!("{table} t WHERE"));
                        push_token(&mut branches.query, "t", columns);
                    }
                }
                for (table, column) in CONTRACT_HISTORY {
                    for ((chain, address), key) in &subjects.contracts {
                        branches.start(key, &format!("{table} t WHERE t.chain_id = "));
                        branches.query.push_bind(*chain);
                        branches.query.push(format!(" AND t.{column} = "));
                        branches.query.push_bind(address.clone());
                    }
                }
            }
        }
        if branches.count == 0 {
            continue;
        }
        let rows: Vec<(String, i64)> = Dialect::of_pool(pool)
            .portable(branches.query)
            .build_query_as()
            .fetch_all(pool)
            .await?;
        for (key, count) in rows {
            *out.entry(key).or_default() += count;
        }
    }
    Ok(out)
}

/// One statement of `SELECT key, COUNT(*) FROM … WHERE …` branches joined by `UNION ALL`.
struct Branches<'a> {
    query: QueryBuilder<'a, Any>,
    count: usize,
}

impl Default for Branches<'_> {
    fn default() -> Self {
        Self {
            query: QueryBuilder::new(""),
            count: 0,
        }
    }
}

impl Branches<'_> {
    /// Starts the branch counting for `key` over `from` (`table alias WHERE …`, the condition
    /// pushed next).
    fn start(&mut self, key: &str, from: &str) {
        if self.count > 0 {
            self.query.push(" UNION ALL ");
        }
        self.count += 1;
        self.query.push("SELECT CAST(");
        self.query.push_bind(key.to_string());
        self.query
            .push(format!(" AS TEXT) AS agent_key, COUNT(*) AS n FROM {from}"));
    }
}

/// The payments credited to `agent_key` per UTC day (days since 1970-01-01, with their count):
/// the newest `days` days that have any, newest first. Counted through the agent's index,
/// never loading a payment.
pub(crate) async fn daily_payments(
    pool: &AnyPool,
    agent_key: &str,
    days: i64,
) -> sqlx::Result<Vec<(i64, i64)>> {
    let mut query = QueryBuilder::<Any>::new(format!(
        "SELECT timestamp / 86400 AS day, COUNT(*) AS n FROM {} WHERE {} = ",
        payments::NAME,
        payments::agent_key
    ));
    query.push_bind(agent_key.to_string());
    query.push(" GROUP BY timestamp / 86400 ORDER BY day DESC LIMIT ");
    query.push_bind(days);
    Dialect::of_pool(pool)
        .portable(query)
        .build_query_as()
        .fetch_all(pool)
        .await
}
