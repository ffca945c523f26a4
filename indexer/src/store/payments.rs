//! Reading agents' credited payments back from the store: one agent's whole list, for
//! reputation, and a page of many agents' lists, for the API.

use super::decode;
use super::{Dialect, PageWindow, QueryContext, StoreResult};
use crate::primitives::sql_bound;
use crate::reputation::{Exclusion, Payment};
use crate::schema::payments;
use sqlx::{Any, AnyConnection, AnyPool, QueryBuilder};
use std::collections::BTreeMap;

/// Each agent's credited payments, newest first, with why each does not count (`None`: it does).
pub type ClassifiedPayments = BTreeMap<String, Vec<(Payment, Option<Exclusion>)>>;

/// Agents per statement of [`pages`]: one `UNION ALL` branch each (SQLite allows 500).
const AGENTS_PER_STATEMENT: usize = 100;

/// The payments credited to `agent_key` up to and including `up_to_block`, in chain order.
pub(super) async fn of_agent(
    pool: &AnyPool,
    agent_key: &str,
    up_to_block: u64,
) -> StoreResult<Vec<Payment>> {
    let rows: Vec<PaymentRow> = sqlx::query_as(&format!(
        "SELECT payer, payee, token, amount, block_number, log_index, timestamp, scheme IS NOT NULL AS x402, tx_hash FROM {payments_table}
         WHERE agent_key = $1 AND block_number <= $2 ORDER BY block_number, log_index",
        payments_table = payments::NAME,
    ))
    .bind(agent_key)
    .bind(sql_bound(up_to_block))
    .fetch_all(pool)
    .await
    .context("reading an agent's payments")?;
    rows.iter().map(PaymentRow::parse).collect()
}

/// The window `page` of the payments credited to each of `keys`, in chain order: each agent's
/// newest `page.rows` strictly before `page.after`, read through its index (`payments_agent`)
/// newest first and stopped there, however many payments it was sent.
pub(super) async fn pages(
    conn: &mut AnyConnection,
    keys: &[String],
    page: PageWindow,
) -> StoreResult<BTreeMap<String, Vec<Payment>>> {
    let mut out: BTreeMap<String, Vec<Payment>> = BTreeMap::new();
    for chunk in keys.chunks(AGENTS_PER_STATEMENT) {
        let mut query = QueryBuilder::<Any>::new("");
        for (branch, key) in chunk.iter().enumerate() {
            if branch > 0 {
                query.push(" UNION ALL ");
            }
            query.push(format!(
                "SELECT * FROM (SELECT agent_key, payer, payee, token, amount, block_number,
                    log_index, timestamp, scheme IS NOT NULL AS x402, tx_hash
                 FROM {payments_table} p WHERE p.agent_key = ",
                payments_table = payments::NAME,
            ));
            query.push_bind(key.clone());
            if let Some((block, log_index)) = page.after {
                query.push(" AND p.block_number <= ");
                query.push_bind(sql_bound(block));
                query.push(" AND (p.block_number < ");
                query.push_bind(sql_bound(block));
                query.push(" OR p.log_index < ");
                query.push_bind(sql_bound(log_index));
                query.push(")");
            }
            query.push(" ORDER BY p.block_number DESC, p.log_index DESC LIMIT ");
            query.push_bind(sql_bound(page.rows));
            query.push(format!(") AS page{branch}"));
        }
        let rows: Vec<KeyedPaymentRow> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading a page of agents' payments")?;
        for KeyedPaymentRow { agent_key, row } in rows {
            out.entry(agent_key).or_default().push(row.parse()?);
        }
    }
    for payments in out.values_mut() {
        payments.sort_by_key(|p| (p.block, p.log_index));
    }
    Ok(out)
}

/// A `payments` row with the agent it is credited to, as [`pages`] reads it.
#[derive(sqlx::FromRow)]
struct KeyedPaymentRow {
    agent_key: String,
    #[sqlx(flatten)]
    row: PaymentRow,
}

impl PaymentRow {
    fn parse(&self) -> StoreResult<Payment> {
        PaymentFields {
            payer: &self.payer,
            payee: &self.payee,
            token: &self.token,
            amount: &self.amount,
            block: self.block_number,
            log_index: self.log_index,
            timestamp: self.timestamp,
            x402: self.x402,
            tx_hash: &self.tx_hash,
        }
        .parse()
    }
}

/// A `payments` row as [`of_agent`] reads it.
#[derive(sqlx::FromRow)]
struct PaymentRow {
    payer: String,
    payee: String,
    token: String,
    amount: String,
    block_number: i64,
    log_index: i64,
    timestamp: i64,
    #[sqlx(try_from = "crate::store::Flag")]
    x402: bool,
    tx_hash: String,
}

/// The stored columns of a payment.
pub(in crate::store) struct PaymentFields<'a> {
    pub(in crate::store) payer: &'a str,
    pub(in crate::store) payee: &'a str,
    pub(in crate::store) token: &'a str,
    pub(in crate::store) amount: &'a str,
    pub(in crate::store) block: i64,
    pub(in crate::store) log_index: i64,
    pub(in crate::store) timestamp: i64,
    pub(in crate::store) x402: bool,
    pub(in crate::store) tx_hash: &'a str,
}

impl PaymentFields<'_> {
    /// The payment they describe, or the column that does not read back.
    pub(in crate::store) fn parse(&self) -> StoreResult<Payment> {
        let table = payments::NAME;
        Ok(Payment {
            payer: decode::parse(table, "payer", self.payer)?,
            payee: decode::parse(table, "payee", self.payee)?,
            token: decode::parse(table, "token", self.token)?,
            amount: decode::parse(table, "amount", self.amount)?,
            block: decode::uint(table, "block_number", self.block)?,
            log_index: decode::uint(table, "log_index", self.log_index)?,
            timestamp: decode::uint(table, "timestamp", self.timestamp)?,
            x402: self.x402,
            tx_hash: decode::parse(table, "tx_hash", self.tx_hash)?,
        })
    }
}
