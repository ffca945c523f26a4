//! What committed batches changed in a run of blocks: agents registered or updated, reputation
//! rows rescored, payments credited. Subscriptions are fed from these reads, so they only ever
//! report committed data.

use sqlx::AnyPool;

/// One change, at the block it happened in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Change {
    /// An agent was registered (`registered`) or its chain state changed.
    Agent {
        chain_id: i64,
        block: i64,
        key: String,
        registered: bool,
    },
    /// What an agent's documents say changed (its card, registration file or their
    /// verification), on-chain state unchanged. Not tied to a block: reported live only.
    Documents { chain_id: i64, key: String },
    /// An agent's stored reputation was recomputed.
    Reputation {
        chain_id: i64,
        block: i64,
        key: String,
    },
    /// A payment was credited to an agent.
    Payment {
        chain_id: i64,
        block: i64,
        payment: PaymentRow,
    },
}

impl Change {
    /// The chain and block of a change that happened on-chain; `None` for document updates.
    pub(crate) fn chain_and_block(&self) -> Option<(i64, i64)> {
        match self {
            Change::Agent {
                chain_id, block, ..
            }
            | Change::Reputation {
                chain_id, block, ..
            }
            | Change::Payment {
                chain_id, block, ..
            } => Some((*chain_id, *block)),
            Change::Documents { .. } => None,
        }
    }
}

/// An agent whose documents changed: its update number, key, chain and newest on-chain block.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct DocumentUpdate {
    pub(crate) seq: i64,
    pub(crate) agent_key: String,
    pub(crate) chain_id: i64,
    pub(crate) last_event_block: i64,
}

/// The newest document update number.
pub(crate) async fn latest_document_update(pool: &AnyPool) -> sqlx::Result<i64> {
    sqlx::query_scalar("SELECT coalesce(max(document_seq), 0) FROM agent_profiles")
        .fetch_one(pool)
        .await
}

/// Agents whose documents changed after update number `after`, oldest first.
pub(crate) async fn document_updates(
    pool: &AnyPool,
    after: i64,
) -> sqlx::Result<Vec<DocumentUpdate>> {
    sqlx::query_as(
        "SELECT p.document_seq AS seq, p.agent_key, a.chain_id, a.last_event_block
           FROM agent_profiles p JOIN agents a ON a.agent_key = p.agent_key
          WHERE p.document_seq > $1 ORDER BY p.document_seq",
    )
    .bind(after)
    .fetch_all(pool)
    .await
}

/// A credited payment as the API shows it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub(crate) struct PaymentRow {
    pub(crate) agent_key: String,
    pub(crate) block_number: i64,
    pub(crate) log_index: i64,
    pub(crate) tx_hash: String,
    pub(crate) token: String,
    pub(crate) payer: String,
    pub(crate) payee: String,
    pub(crate) amount: String,
    #[sqlx(try_from = "agentindex_indexer::store::Flag")]
    pub(crate) x402: bool,
    pub(crate) timestamp: i64,
}

/// The changes of `chain_id` in blocks `(after, up_to]`, in chain order within each kind.
pub(crate) async fn between(
    pool: &AnyPool,
    chain_id: i64,
    after: i64,
    up_to: i64,
) -> sqlx::Result<Vec<Change>> {
    let mut changes = Vec::new();
    let agents: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT agent_key, registered_block, last_event_block FROM agents
         WHERE chain_id = $1 AND last_event_block > $2 AND last_event_block <= $3
         ORDER BY last_event_block, agent_key",
    )
    .bind(chain_id)
    .bind(after)
    .bind(up_to)
    .fetch_all(pool)
    .await?;
    changes.extend(
        agents
            .into_iter()
            .map(|(key, registered, block)| Change::Agent {
                chain_id,
                block,
                key,
                registered: registered > after,
            }),
    );
    let rescored: Vec<(String, i64)> = sqlx::query_as(
        "SELECT agent_key, as_of_block FROM agent_reputation
         WHERE chain_id = $1 AND as_of_block > $2 AND as_of_block <= $3 ORDER BY as_of_block, agent_key",
    )
    .bind(chain_id)
    .bind(after)
    .bind(up_to)
    .fetch_all(pool)
    .await?;
    changes.extend(rescored.into_iter().map(|(key, block)| Change::Reputation {
        chain_id,
        block,
        key,
    }));
    let payments: Vec<PaymentRow> = sqlx::query_as(
        "SELECT agent_key, block_number, log_index, tx_hash, token, payer, payee, amount, scheme IS NOT NULL AS x402,
                timestamp
         FROM payments WHERE chain_id = $1 AND block_number > $2 AND block_number <= $3
         ORDER BY block_number, log_index, agent_key",
    )
    .bind(chain_id)
    .bind(after)
    .bind(up_to)
    .fetch_all(pool)
    .await?;
    changes.extend(payments.into_iter().map(|payment| Change::Payment {
        chain_id,
        block: payment.block_number,
        payment,
    }));
    Ok(changes)
}
