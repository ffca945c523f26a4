//! Fetching one range as the follower sees it: the plan the cost model picks, a range read ahead
//! when there is one, bounds that keep a batch and a scan's answers small (a range too dense is
//! cut to what fits), narrowing when the provider refuses the range, and what the cost model and
//! the metrics learn from it.

use super::fetched::FetchedRange;
use super::strategy::{self, Family, Plan, Way};
use super::{Follower, FollowerError, fetch, resolve};
use crate::metrics::metrics;
use crate::primitives::BlockRef;

/// Logs one batch may hold; a range that returns more is narrowed, so memory stays flat however
/// dense the chain is.
const MAX_BATCH_LOGS: usize = 10_000;
/// Logs a range's scans may bring at most (as the densities seen predict): what a scan returns
/// is held whole until the range is filtered, so the range is cut to keep it this small.
const MAX_SCANNED_LOGS: f64 = 20_000.0;

/// A fetched range, the last block it covers, and that block's header when it was read along.
pub(super) type Fetched = (FetchedRange, u64, Option<BlockRef>);

impl Follower {
    /// Fetches `[from, to]`, or the blocks from `from` that fit in one batch when the range holds
    /// more logs than that; returns them with the last block they cover and, in backfill, that
    /// block's header read at the same time (when the range was not cut). `None` when the
    /// provider wanted a smaller range (the range is now smaller).
    ///
    /// `backfill_until` is the last finalized block a backfill may reach: the ranges after this
    /// one up to it are read ahead when their requests allow (see [`super::ahead`]). `None` at
    /// the tip.
    pub(super) async fn fetch(
        &mut self,
        from: u64,
        to: u64,
        backfill_until: Option<u64>,
    ) -> Result<Option<Fetched>, FollowerError> {
        let plan = self.costs.plan(
            to - from + 1,
            self.watched.agents.len(),
            self.watched.payment_addresses.len(),
            !self.sources.tokens.is_empty(),
        );
        let started = std::time::Instant::now();
        let (to, raw, anchor) = match self.take_ahead(from, plan) {
            Some(read) => (read.to, read.raw, Some(read.anchor)),
            None => {
                // Ranges end where a range read ahead starts, so they meet it.
                let to = match self.ahead.front() {
                    Some(read) => to.min(read.from - 1),
                    None => to,
                };
                let to = self.scan_bounded(plan, from, to);
                self.read(from, to, plan, backfill_until).await
            }
        };
        let request = self.range_request(plan);
        let fetched = match raw {
            Ok(raw) => resolve::resolve(&request, from, to, raw).await,
            Err(error) => Err(error),
        };
        tracing::debug!(target: "agentindex::follower", chain = %self.config.name, from, to, agents = plan.agents.label(), payments = plan.payments.label(), elapsed = ?started.elapsed(), "fetched");
        let fetched = fetched.map(|(fetched, observed)| {
            self.learn(plan, &observed);
            fetched
        });
        self.read_ahead = matches!(&fetched, Ok(f) if f.len() <= MAX_BATCH_LOGS || to == from);
        match fetched {
            Ok(mut fetched) if fetched.len() > MAX_BATCH_LOGS && to > from => {
                let count = fetched.len();
                let kept_to = fetched.keep_at_most(MAX_BATCH_LOGS).unwrap_or(to).min(to);
                self.range.limit_to(kept_to - from + 1);
                tracing::debug!(target: "agentindex::follower", chain = %self.config.name, from, to, logs = count, kept_to, "range too dense, keeping what fits");
                let anchor = match (anchor, kept_to == to) {
                    (Some(header), true) => header.map_err(|e| self.rpc_error(e))?,
                    _ => None,
                };
                Ok(Some((fetched, kept_to, anchor)))
            }
            Ok(fetched) => {
                self.range
                    .succeeded(to - from + 1, fetched.len() as f64 / MAX_BATCH_LOGS as f64);
                let anchor = anchor.transpose().map_err(|e| self.rpc_error(e))?.flatten();
                Ok(Some((fetched, to, anchor)))
            }
            Err(error) if error.kind.wants_smaller_range() => {
                let tried = to - from + 1;
                if self.range.shrink(tried, &error.kind) {
                    tracing::info!(target: "agentindex::follower", chain = %self.config.name, tried, next = self.range.size(), "narrowing the log range");
                    Ok(None)
                } else {
                    Err(FollowerError::RangeFloor {
                        chain: self.config.name.clone(),
                        block: from,
                        source: error,
                    })
                }
            }
            Err(error) => Err(self.rpc_error(error)),
        }
    }

    /// What a range of `plan` is fetched with, from the follower's current state.
    pub(super) fn range_request(&self, plan: Plan) -> fetch::RangeRequest<'_> {
        fetch::RangeRequest {
            rpc: &self.rpc,
            sources: &self.sources,
            watched: &self.watched,
            payment_chunk: self.config.payment_address_chunk,
            funding: &self.funding,
            plan,
        }
    }

    /// The end of a range starting at `from` whose scans, at the densities seen, bring at most
    /// [`MAX_SCANNED_LOGS`].
    fn scan_bounded(&self, plan: Plan, from: u64, to: u64) -> u64 {
        let density: f64 = [
            (plan.agents, Family::Agents),
            (plan.payments, Family::Payments),
        ]
        .into_iter()
        .filter(|(way, _)| *way == Way::Scan)
        .filter_map(|(_, family)| self.costs.density(family))
        .sum();
        if density <= 0.0 {
            return to;
        }
        let blocks = ((MAX_SCANNED_LOGS / density) as u64).max(1);
        to.min(from + blocks - 1)
    }

    /// Updates the cost model and the metrics from a fetched range.
    fn learn(&mut self, plan: Plan, observed: &strategy::Observed) {
        self.costs.observe(observed);
        let chain_id = self.config.chain_id;
        for (family, way) in [
            (Family::Agents, plan.agents),
            (Family::Payments, plan.payments),
        ] {
            metrics().fetch_way(chain_id, family.label(), way.label());
            if let Some(density) = self.costs.density(family) {
                metrics().scan_density(chain_id, family.label(), density);
            }
        }
    }
}
