//! Backfill ranges read ahead. A range's first requests (the configured contracts' logs, the
//! agent contracts known so far, the scans, its last header) are read for up to
//! `ranges_in_flight` ranges at once; each is then resolved against the watched sets in chain
//! order, exactly as if it had been read alone: what earlier ranges discovered in between
//! (agent contracts, payment addresses) is fetched or filtered for then. Only finalized blocks
//! are read ahead, so nothing read ahead can be replaced.
//!
//! A range read ahead is used by the fetch that starts where it starts with the same plan; the
//! ranges before it (after a range was narrowed or cut short) end where it starts so as to meet
//! it. A change of plan drops them all; the reach of the tip drops those passed.

use super::fetch::RawRange;
use super::strategy::Plan;
use crate::rpc::RpcError;
use crate::store::BlockRef;

/// One range read ahead: its raw logs and its last block's header, or what failed.
#[derive(Debug)]
pub(super) struct Ahead {
    pub(super) from: u64,
    pub(super) to: u64,
    pub(super) plan: Plan,
    pub(super) raw: Result<RawRange, RpcError>,
    pub(super) anchor: Result<Option<BlockRef>, RpcError>,
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
