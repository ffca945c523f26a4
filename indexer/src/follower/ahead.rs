//! Backfill ranges read ahead. A range's first requests (the configured contracts' logs, the
//! agent contracts known so far, the scans, its last header) are read for up to
//! `ranges_in_flight` ranges at once; each is then resolved against the watched sets in chain
//! order, exactly as if it had been read alone: what earlier ranges discovered in between
//! (agent contracts, payment addresses) is fetched or filtered for then. Only finalized blocks
//! are read ahead, so nothing read ahead can be replaced.
//!
//! `Follower::read` reads a range and those ahead of it; `Follower::take_ahead` hands one back.
//! A range read ahead is used by the fetch that starts where it starts with the same plan; the
//! ranges before it (after a range was narrowed or cut short) end where it starts so as to meet
//! it. A change of plan drops them all; the reach of the tip drops those passed.

use super::Follower;
use super::fetch::{self, RawRange};
use super::strategy::Plan;
use crate::primitives::BlockRef;
use crate::rpc::RpcError;
use alloy::eips::BlockNumberOrTag;

/// One range read ahead: its raw logs and its last block's header, or what failed.
#[derive(Debug)]
pub(super) struct Ahead {
    pub(super) from: u64,
    pub(super) to: u64,
    pub(super) plan: Plan,
    pub(super) raw: Result<RawRange, RpcError>,
    pub(super) anchor: Result<Option<BlockRef>, RpcError>,
}

impl Follower {
    /// The range read ahead that starts at `from` with `plan`, if there is one. Ranges read
    /// ahead with another plan, or that start before `from`, are forgotten; later ones are kept
    /// for the fetches that reach them (after a narrowed or cut range, say).
    pub(super) fn take_ahead(&mut self, from: u64, plan: Plan) -> Option<Ahead> {
        if self.ahead.iter().any(|read| read.plan != plan) {
            self.ahead.clear();
        }
        while self.ahead.front().is_some_and(|read| read.from < from) {
            self.ahead.pop_front();
        }
        match self.ahead.front() {
            Some(read) if read.from == from => self.ahead.pop_front(),
            _ => None,
        }
    }

    /// Reads the raw logs of `[from, to]` (and its header in backfill), and with them those of
    /// the ranges after it that may be read ahead, which are kept for the fetches to come.
    pub(super) async fn read(
        &mut self,
        from: u64,
        to: u64,
        plan: Plan,
        backfill_until: Option<u64>,
    ) -> (
        u64,
        Result<RawRange, RpcError>,
        Option<Result<Option<BlockRef>, RpcError>>,
    ) {
        // Read ahead up to the first range already read ahead, if any.
        let later = match backfill_until {
            Some(limit) if self.read_ahead => {
                let limit = self.ahead.front().map_or(limit, |read| read.from - 1);
                following(from, to, limit, self.config.ranges_in_flight - 1)
            }
            _ => Vec::new(),
        };
        let request = self.range_request(plan);
        let rpc = &self.rpc;
        let request = &request;
        let with_anchor = backfill_until.is_some();
        let reads = std::iter::once((from, to))
            .chain(later)
            .map(|(f, t)| async move {
                let anchor = async {
                    match with_anchor {
                        true => Some(rpc.header(BlockNumberOrTag::Number(t)).await),
                        false => None,
                    }
                };
                let (raw, anchor) = tokio::join!(fetch::fetch_raw(request, f, t), anchor);
                (f, t, raw, anchor)
            });
        let mut reads = futures::future::join_all(reads).await.into_iter();
        let (_, to, raw, anchor) = reads.next().expect("the range itself is read");
        let read: Vec<Ahead> = reads
            .map(|(from, to, raw, anchor)| Ahead {
                from,
                to,
                plan,
                raw,
                anchor: anchor.unwrap_or(Ok(None)),
            })
            .collect();
        for range in read.into_iter().rev() {
            self.ahead.push_front(range);
        }
        // Held at most twice a read's worth: the farthest are read again when reached.
        self.ahead.truncate(2 * (self.config.ranges_in_flight - 1));
        (to, raw, anchor)
    }
}

/// Up to `count` ranges after `[from, to]`, each as wide, none past `limit`.
pub(super) fn following(from: u64, to: u64, limit: u64, count: usize) -> Vec<(u64, u64)> {
    let width = to - from + 1;
    let mut ranges = Vec::with_capacity(count);
    let mut start = to + 1;
    while ranges.len() < count && start <= limit {
        let end = limit.min(start.saturating_add(width - 1));
        ranges.push((start, end));
        start = end + 1;
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::following;

    #[test]
    fn ranges_ahead_are_as_wide_and_stop_at_the_limit() {
        assert_eq!(
            following(100, 149, 1_000, 3),
            vec![(150, 199), (200, 249), (250, 299)]
        );
        assert_eq!(following(100, 149, 220, 3), vec![(150, 199), (200, 220)]);
        assert_eq!(following(100, 149, 149, 3), vec![]);
        assert_eq!(following(5, 5, 100, 2), vec![(6, 6), (7, 7)]);
        assert_eq!(following(100, 149, 1_000, 0), vec![]);
    }
}
