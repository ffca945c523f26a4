//! Agent queries ([`AgentQuery`], part of the query root): `agent`, `agents` (filtered, searched, ordered, keyset-paginated) and
//! `indexerStatus`.

use super::agent::Agent;
use super::filter::{AgentFilter, AgentOrder, order};
use crate::read::agents::{self, Order, Selection};
use crate::read::cursor::Cursor;
use crate::state::ApiState;
use agentindex_indexer::health::HealthBoard;
use agentindex_indexer::store::StoreRead;
use async_graphql::connection::PageInfo;
use async_graphql::{Context, Error, ID, Object, Result, SimpleObject};

/// Largest page `agents` returns.
pub const MAX_PAGE: i32 = 100;
/// Page size when `first` is not given.
const DEFAULT_PAGE: i32 = 20;

/// Agent lookups and status.
#[derive(Default)]
pub struct AgentQuery;

#[Object]
impl AgentQuery {
    /// One agent by id.
    async fn agent(&self, ctx: &Context<'_>, id: ID) -> Result<Option<Agent>> {
        let state = ctx.data_unchecked::<ApiState>();
        let found = state.lookups.by_key(state.store.reader(), &id).await?;
        Ok(found.map(Agent))
    }

    /// Agents matching `filter` and `search`, in `orderBy` order (relevance when searching,
    /// else newest), `first` at a time (at most 100) after the cursor `after`. `search` finds
    /// agents whose name, description, skills or tags have every word of it; when none has
    /// them all, the last word also matches words it begins (search as you type).
    #[graphql(complexity = "super::page_cost(first.unwrap_or(DEFAULT_PAGE), child_complexity)")]
    async fn agents(
        &self,
        ctx: &Context<'_>,
        filter: Option<AgentFilter>,
        search: Option<String>,
        order_by: Option<AgentOrder>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<AgentConnection> {
        let first = first.unwrap_or(DEFAULT_PAGE);
        if !(0..=MAX_PAGE).contains(&first) {
            return Err(Error::new(format!(
                "first must be between 0 and {MAX_PAGE}, got {first}"
            )));
        }
        let state = ctx.data_unchecked::<ApiState>();
        let filter = filter.unwrap_or_default();
        filter.check_lists(state.api.reads.max_list_argument)?;
        super::relations::charge(ctx, first as u64 + 1, "agents")?;
        let mut selection = filter.selection(search.as_deref());
        if search.as_deref().is_some_and(|s| !s.trim().is_empty()) && selection.search.is_none() {
            // Only punctuation: nothing can match.
            return Ok(AgentConnection::empty(selection));
        }
        let order = order(order_by, selection.search.is_some());
        let after = match after {
            Some(text) => Some(
                Cursor::decode(&text)
                    .filter(|c| fits(c, order))
                    .ok_or_else(|| {
                        Error::new(format!("after: {text:?} is not a cursor of this ordering"))
                    })?,
            ),
            None => None,
        };
        let pool = state.store.reader();
        agents::settle_search(pool, &mut selection).await?;
        if !reads_the_page(ctx) {
            // Only the count is asked for: no page to read.
            return Ok(AgentConnection {
                empty: false,
                ..AgentConnection::empty(selection)
            });
        }
        let mut listed = agents::list(
            pool,
            &state.term_counts,
            &selection,
            order,
            after.as_ref(),
            i64::from(first) + 1,
        )
        .await?;
        let has_next_page = listed.len() > first as usize;
        listed.truncate(first as usize);
        let edges: Vec<AgentEdge> = listed
            .into_iter()
            .map(|listed| {
                let cursor = listed.cursor(order).encode();
                AgentEdge {
                    node: Agent(listed.row),
                    cursor,
                }
            })
            .collect();
        let page_info = PageInfo {
            has_previous_page: after.is_some(),
            has_next_page,
            start_cursor: edges.first().map(|e| e.cursor.clone()),
            end_cursor: edges.last().map(|e| e.cursor.clone()),
        };
        Ok(AgentConnection {
            edges,
            page_info,
            selection,
            empty: false,
        })
    }

    /// Every indexed chain: head, finalized and indexed block and the lag, and (when this
    /// server also indexes) what its follower meets now.
    async fn indexer_status(&self, ctx: &Context<'_>) -> Result<Vec<ChainStatus>> {
        let state = ctx.data_unchecked::<ApiState>();
        let statuses = state.store.statuses().await?;
        let reports = state
            .health
            .as_deref()
            .map(HealthBoard::reports)
            .unwrap_or_default();
        Ok(statuses
            .into_iter()
            .map(|s| {
                let report = reports.iter().find(|r| r.chain_id == s.chain_id);
                ChainStatus {
                    chain_id: s.chain_id as i64,
                    name: s.name,
                    head_block: s.head_block as i64,
                    finalized_block: s.finalized_block as i64,
                    indexed_block: s.indexed_block.map_or(0, |b| b as i64),
                    lag: s.lag as i64,
                    state: report.map(|r| r.state.label().to_string()),
                    error: report.and_then(|r| r.error.clone()),
                    check: report.and_then(|r| r.check.clone()),
                }
            })
            .collect())
    }
}

fn fits(cursor: &Cursor, order: Order) -> bool {
    matches!(
        (cursor, order),
        (Cursor::Newest { .. }, Order::Newest)
            | (Cursor::Reputation { .. }, Order::Reputation)
            | (Cursor::Relevance { .. }, Order::Relevance)
    )
}

/// Whether the selection on a connection field reads its page (`edges` or `pageInfo`, named
/// directly or in fragments): a query for `totalCount` alone only counts.
fn reads_the_page(ctx: &Context<'_>) -> bool {
    let selected = ctx.look_ahead();
    selected.field("edges").exists() || selected.field("pageInfo").exists()
}

/// A page of agents.
pub(crate) struct AgentConnection {
    edges: Vec<AgentEdge>,
    page_info: PageInfo,
    selection: Selection,
    empty: bool,
}

impl AgentConnection {
    fn empty(selection: Selection) -> Self {
        Self {
            edges: Vec::new(),
            page_info: PageInfo {
                has_previous_page: false,
                has_next_page: false,
                start_cursor: None,
                end_cursor: None,
            },
            selection,
            empty: true,
        }
    }
}

#[Object]
impl AgentConnection {
    /// The agents of this page with their cursors.
    async fn edges(&self) -> &[AgentEdge] {
        &self.edges
    }

    /// Whether more follow and where this page ended.
    async fn page_info(&self) -> &PageInfo {
        &self.page_info
    }

    /// How many agents match in all (every page).
    async fn total_count(&self, ctx: &Context<'_>) -> Result<i64> {
        if self.empty {
            return Ok(0);
        }
        let pool = ctx.data_unchecked::<ApiState>().store.reader();
        Ok(agents::count(pool, &self.selection).await?)
    }
}

/// One agent of a page.
#[derive(SimpleObject)]
pub(crate) struct AgentEdge {
    /// The agent.
    node: Agent,
    /// Pass as `after` to continue after it.
    cursor: String,
}

/// One chain's indexing status.
#[derive(SimpleObject)]
pub(crate) struct ChainStatus {
    /// EIP-155 chain id.
    chain_id: i64,
    /// Configured name.
    name: String,
    /// Newest head seen.
    head_block: i64,
    /// Newest finalized block seen.
    finalized_block: i64,
    /// Last block fully indexed (0 before the first).
    indexed_block: i64,
    /// Blocks between the head and the index.
    lag: i64,
    /// Where the chain's follower stands (`starting`, `following`, `failing`, `stopped`);
    /// null when this server only serves the database (`/status` has each endpoint's state).
    state: Option<String>,
    /// The follower's last error while it is failing or stopped.
    error: Option<String>,
    /// What to check first while the chain is not following.
    check: Option<String>,
}
