//! What hangs off an agent besides its card: credited payments with why each does or does not
//! count, ERC-8004 feedback with revocations and responses, validations with every response,
//! and the agent's on-chain history.

use super::loader_set::Loaders;
use super::loaders::PageKey;
use crate::read::activity::{FeedbackRow, HistoryRow, ValidationRow, Window};
use crate::read::counts::Relation;
use crate::read::cursor::Cursor;
use crate::row_budget::RowBudget;
use agentindex_indexer::reputation::{Exclusion, Payment};
use async_graphql::connection::{Connection, Edge, EmptyFields};
use async_graphql::dataloader::{DataLoader, Loader};
use async_graphql::{Context, Json, Object, OutputType, Result, SimpleObject};

/// Largest page a relation returns.
pub(crate) const MAX_LIST: i32 = 100;

/// What a relation's connection tells besides its page: the list's length, counted in the
/// database only when asked for.
pub(crate) struct ListTotal {
    relation: Relation,
    agent: String,
}

#[Object]
impl ListTotal {
    /// Items in the whole list.
    async fn total_count(&self, ctx: &Context<'_>) -> Result<usize> {
        let loader = &ctx.data_unchecked::<Loaders>().counts;
        let count = loader
            .load_one((self.relation, self.agent.clone()))
            .await?
            .unwrap_or(0);
        Ok(usize::try_from(count).unwrap_or(0))
    }
}

/// A page of a relation of one agent.
pub(crate) type ListPage<N> = Connection<String, N, ListTotal, EmptyFields>;

/// The rows `first` and `after` ask a list for: `first` items (and one more, to tell whether a
/// page follows) after the item at the cursor `after`.
fn window(first: i32, after: Option<&str>) -> Result<Window> {
    if !(0..=MAX_LIST).contains(&first) {
        return Err(async_graphql::Error::new(format!(
            "first must be between 0 and {MAX_LIST}, got {first}"
        )));
    }
    let after = match after {
        Some(text) => match Cursor::decode(text) {
            Some(Cursor::Event { b, l }) => Some((b, l)),
            _ => {
                return Err(async_graphql::Error::new(format!(
                    "after: {text:?} is not a cursor of this list"
                )));
            }
        },
        None => None,
    };
    Ok(Window {
        rows: i64::from(first) + 1,
        after,
    })
}

/// Charges `rows` to the request's row budget (requests without one, such as a subscription's
/// events, are bounded by their page sizes alone).
pub(crate) fn charge(ctx: &Context<'_>, rows: u64, what: &str) -> Result<()> {
    match ctx.data_opt::<RowBudget>() {
        Some(budget) => budget
            .charge(rows, what)
            .map_err(|refused| async_graphql::Error::new(refused.to_string())),
        None => Ok(()),
    }
}

/// One page of `relation` of `agent`, read in SQL by `loader` (its `window` of rows, charged
/// to the request's row budget before they are read), newest first, keyed by each item's
/// (block, log index) position so a page starts strictly after the last one seen whatever
/// arrived meanwhile.
pub(crate) async fn paged<L, T, N>(
    ctx: &Context<'_>,
    loader: &DataLoader<L>,
    relation: Relation,
    agent: &str,
    (first, after): (i32, Option<String>),
    position: impl Fn(&T) -> (i64, i64),
) -> Result<ListPage<N>>
where
    L: Loader<PageKey, Value = Vec<T>>,
    L::Error: std::fmt::Display,
    T: Clone + Send + Sync + 'static,
    N: OutputType + From<T>,
{
    let window = window(first, after.as_deref())?;
    charge(ctx, window.rows as u64, ctx.field().name())?;
    let key = PageKey {
        agent: agent.to_string(),
        window,
    };
    let rows = loader
        .load_one(key)
        .await
        // A loader fails only when the store does: carried as a store error's text, so the
        // schema's hidden-errors extension shows the client an error id, not the text.
        .map_err(|error| {
            async_graphql::Error::new_with_source(std::sync::Arc::new(error.to_string()))
        })?
        .unwrap_or_default();
    Ok(page(
        rows,
        position,
        relation,
        agent,
        first,
        window.after.is_some(),
    ))
}

/// The connection over `rows` (a window: the page and perhaps one more).
fn page<T, N: OutputType + From<T>>(
    rows: Vec<T>,
    position: impl Fn(&T) -> (i64, i64),
    relation: Relation,
    agent: &str,
    first: i32,
    has_previous: bool,
) -> ListPage<N> {
    let first = usize::try_from(first).unwrap_or(0);
    let has_next = rows.len() > first;
    let mut connection = Connection::with_additional_fields(
        has_previous,
        has_next,
        ListTotal {
            relation,
            agent: agent.to_string(),
        },
    );
    connection.edges = rows
        .into_iter()
        .take(first)
        .map(|item| {
            let (b, l) = position(&item);
            Edge::new(Cursor::Event { b, l }.encode(), N::from(item))
        })
        .collect();
    connection
}

/// A payment credited to an agent.
#[derive(SimpleObject)]
pub(crate) struct AgentPayment {
    /// Who paid, lower-case hex.
    payer: String,
    /// The address paid (bound to the agent then).
    payee: String,
    /// Token contract (the zero address for the chain's coin).
    token: String,
    /// Amount in the token's smallest unit, as a decimal string.
    amount: String,
    /// Settled an EIP-3009 authorisation (an x402 payment).
    x402: bool,
    /// Block.
    block_number: i64,
    /// Log index in the block.
    log_index: i64,
    /// Block timestamp.
    timestamp: i64,
    /// Whether it counts for reputation.
    counts: bool,
    /// Why not: self_payment | owner | operator | wallet | dust | unknown_token.
    excluded_because: Option<String>,
}

impl From<(Payment, Option<Exclusion>)> for AgentPayment {
    fn from((p, reason): (Payment, Option<Exclusion>)) -> Self {
        Self {
            payer: format!("{:#x}", p.payer),
            payee: format!("{:#x}", p.payee),
            token: format!("{:#x}", p.token),
            amount: p.amount.to_string(),
            x402: p.x402,
            block_number: p.block as i64,
            log_index: p.log_index as i64,
            timestamp: p.timestamp as i64,
            counts: reason.is_none(),
            excluded_because: reason.map(|r| r.as_str().to_string()),
        }
    }
}

/// ERC-8004 feedback given to an agent.
#[derive(SimpleObject)]
pub(crate) struct Feedback {
    /// Who gave it.
    client: String,
    /// Its index among the client's feedback (absent for legacy shapes).
    index: Option<i64>,
    /// Value as a signed decimal integer.
    value: String,
    /// Decimals of `value`.
    value_decimals: i64,
    /// First tag.
    tag1: String,
    /// Second tag.
    tag2: String,
    /// Endpoint the feedback is about.
    endpoint: String,
    /// Off-chain feedback file.
    uri: String,
    /// Block.
    block_number: i64,
    /// Log index in the block.
    log_index: i64,
    /// Transaction.
    tx_hash: String,
    /// Block timestamp.
    timestamp: i64,
    /// Revoked by the client.
    revoked: bool,
    /// Responses appended: responder, uri, hash, block.
    responses: Json<serde_json::Value>,
}

impl From<FeedbackRow> for Feedback {
    fn from(f: FeedbackRow) -> Self {
        Self {
            client: f.client,
            index: f.feedback_index,
            value: f.value,
            value_decimals: f.value_decimals,
            tag1: f.tag1,
            tag2: f.tag2,
            endpoint: f.endpoint,
            uri: f.feedback_uri,
            block_number: f.block_number,
            log_index: f.log_index,
            tx_hash: f.tx_hash,
            timestamp: f.timestamp,
            revoked: f.revoked,
            responses: Json(f.responses.0),
        }
    }
}

/// An ERC-8004 validation request for an agent.
#[derive(SimpleObject)]
pub(crate) struct Validation {
    /// The request's hash.
    request_hash: String,
    /// The validator asked.
    validator: String,
    /// The request file.
    request_uri: String,
    /// Block.
    block_number: i64,
    /// Log index in the block.
    log_index: i64,
    /// Transaction.
    tx_hash: String,
    /// Every response, oldest first: response (0–100), uri, tag, block, timestamp.
    responses: Json<serde_json::Value>,
}

impl From<ValidationRow> for Validation {
    fn from(v: ValidationRow) -> Self {
        Self {
            request_hash: v.request_hash,
            validator: v.validator,
            request_uri: v.request_uri,
            block_number: v.block_number,
            log_index: v.log_index,
            tx_hash: v.tx_hash,
            responses: Json(v.responses.0),
        }
    }
}

/// One on-chain event in an agent's history.
#[derive(SimpleObject)]
pub(crate) struct HistoryEvent {
    /// Block.
    block_number: i64,
    /// Log index in the block.
    log_index: i64,
    /// What happened: registered, transferred, uri_updated, metadata_set, approval, discovered,
    /// owner, card, active, interval, heartbeat, registry_registered, registry_approved, …
    kind: String,
    /// What the event said.
    detail: Json<serde_json::Value>,
}

impl From<HistoryRow> for HistoryEvent {
    fn from(h: HistoryRow) -> Self {
        Self {
            block_number: h.block_number,
            log_index: h.log_index,
            kind: h.kind,
            detail: Json(h.detail.0),
        }
    }
}
