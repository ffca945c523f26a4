//! How many blocks one `eth_getLogs` range spans: it starts small, grows after each range that
//! was not dense (twofold, never past what the density seen would fill), shrinks when a
//! provider complains (to the range the provider suggests, else by half) and, once a provider
//! has refused a range for its width, grows back only after a run of successes. A refusal for
//! the size of the answer says the blocks were dense, not that the range was wide: the range
//! shrinks and grows back as fast as the density allows.

use crate::rpc::RpcErrorKind;

/// Successes in a row before the range grows again once a provider refused a range's width.
const GROW_AFTER_REFUSAL: u32 = 3;
/// How much a range grows at most after a sparse range. Eightfold was tried: on loopback the
/// range overshot into dense blocks, fetched far more logs than a batch holds and dropped them
/// (an M backfill 25% slower, 14% more memory).
const GROWTH: u64 = 2;
/// The share of a batch's log limit a grown range aims to fill.
const TARGET_FILL: f64 = 0.8;
/// Blocks the first range spans: small, so an unexpectedly dense chain is never fetched whole
/// before the range has learnt how dense it is.
const FIRST_RANGE: u64 = 10;

/// The adaptive range size of one chain.
#[derive(Debug, Clone)]
pub struct AdaptiveRange {
    size: u64,
    max: u64,
    successes: u32,
    refused: bool,
}

impl AdaptiveRange {
    /// Starts at a modest size and grows towards `max` blocks.
    pub fn new(max: u64) -> Self {
        Self {
            size: max.clamp(1, FIRST_RANGE),
            max: max.max(1),
            successes: 0,
            refused: false,
        }
    }

    /// Blocks the next range may span.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The range `[from, to]` to ask for next, never past `limit`.
    pub fn next(&self, from: u64, limit: u64) -> (u64, u64) {
        (from, limit.min(from.saturating_add(self.size - 1)))
    }

    /// A range of `blocks` went through, filling `fill` of what a batch may hold. A range more
    /// than half full does not count towards growing; otherwise the range grows [`GROWTH`]-fold,
    /// but never past the span that would hold [`TARGET_FILL`] of a batch at the density just
    /// seen.
    pub fn succeeded(&mut self, blocks: u64, fill: f64) {
        if fill > 0.5 {
            self.successes = 0;
            return;
        }
        self.successes += 1;
        let grow_after = if self.refused { GROW_AFTER_REFUSAL } else { 1 };
        if self.successes >= grow_after && self.size < self.max {
            let by_density = if fill > 0.0 {
                (blocks as f64 * TARGET_FILL / fill) as u64
            } else {
                u64::MAX
            };
            self.size = (self.size * GROWTH)
                .min(self.max)
                .min(by_density.max(self.size));
            self.successes = 0;
        }
    }

    /// Caps the next range at `blocks` (at least one), as when a range held too many logs.
    pub fn limit_to(&mut self, blocks: u64) {
        self.successes = 0;
        self.size = self.size.min(blocks.max(1));
    }

    /// The provider refused a range of `tried` blocks; returns false when it cannot shrink.
    pub fn shrink(&mut self, tried: u64, error: &RpcErrorKind) -> bool {
        self.successes = 0;
        if !matches!(error, RpcErrorKind::TooManyResults { .. }) {
            self.refused = true;
        }
        let hinted = match error {
            RpcErrorKind::RangeTooLarge {
                suggested: Some((from, to)),
                ..
            }
            | RpcErrorKind::TooManyResults {
                suggested: Some((from, to)),
                ..
            } => Some(to - from + 1),
            RpcErrorKind::RangeTooLarge {
                max_range: Some(max),
                ..
            } => Some(*max),
            _ => None,
        };
        let next = hinted.filter(|h| *h < tried).unwrap_or(tried / 2).max(1);
        self.size = next;
        next < tried
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn too_large(max: Option<u64>, suggested: Option<(u64, u64)>) -> RpcErrorKind {
        RpcErrorKind::RangeTooLarge {
            message: String::new(),
            max_range: max,
            suggested,
        }
    }

    #[test]
    fn halves_without_a_hint_and_stops_at_one() {
        let mut range = AdaptiveRange::new(1000);
        assert!(range.shrink(1000, &too_large(None, None)));
        assert_eq!(range.size(), 500);
        let mut tiny = AdaptiveRange::new(1);
        assert!(
            !tiny.shrink(1, &too_large(None, None)),
            "one block cannot shrink"
        );
        assert_eq!(tiny.size(), 1);
    }

    #[test]
    fn follows_the_providers_hint() {
        let mut range = AdaptiveRange::new(2000);
        range.shrink(2000, &too_large(None, Some((100, 149))));
        assert_eq!(range.size(), 50);
        let mut range = AdaptiveRange::new(2000);
        range.shrink(2000, &too_large(Some(1000), None));
        assert_eq!(range.size(), 1000);
        // A hint no smaller than what failed is ignored.
        let mut range = AdaptiveRange::new(2000);
        range.shrink(800, &too_large(Some(5000), None));
        assert_eq!(range.size(), 400);
    }

    #[test]
    fn after_a_refusal_grows_back_only_after_a_run_of_successes() {
        let mut range = AdaptiveRange::new(1000);
        range.shrink(1000, &too_large(None, None));
        range.shrink(500, &too_large(None, None));
        assert_eq!(range.size(), 250);
        for _ in 1..GROW_AFTER_REFUSAL {
            range.succeeded(range.size(), 0.0);
        }
        assert_eq!(range.size(), 250, "not yet");
        range.succeeded(range.size(), 0.0);
        assert_eq!(range.size(), 500);
        for _ in 0..10 * GROW_AFTER_REFUSAL {
            range.succeeded(range.size(), 0.0);
        }
        assert_eq!(range.size(), 1000);
    }

    #[test]
    fn starts_small_and_doubles_after_each_sparse_range() {
        let mut range = AdaptiveRange::new(2000);
        assert_eq!(range.size(), FIRST_RANGE);
        range.succeeded(range.size(), 0.0);
        assert_eq!(range.size(), 2 * FIRST_RANGE);
        for _ in 0..10 {
            range.succeeded(range.size(), 0.0);
        }
        assert_eq!(range.size(), 2000);
        let mut dense = AdaptiveRange::new(2000);
        for _ in 0..10 {
            dense.succeeded(dense.size(), 0.7);
        }
        assert_eq!(
            dense.size(),
            FIRST_RANGE,
            "dense batches do not grow the range"
        );
    }

    #[test]
    fn grows_no_further_than_the_density_seen_allows() {
        let mut range = AdaptiveRange::new(2000);
        range.succeeded(10, 0.2);
        assert_eq!(range.size(), 20, "doubling stays under the target");
        range.succeeded(20, 0.3);
        assert_eq!(
            range.size(),
            40,
            "0.8 would take 53 blocks, doubling gives 40"
        );
        range.succeeded(40, 0.45);
        assert_eq!(
            range.size(),
            71,
            "0.8 takes 71 blocks, fewer than doubling's 80"
        );
    }

    #[test]
    fn a_refused_answer_size_narrows_without_slowing_the_regrowth() {
        let mut range = AdaptiveRange::new(2000);
        let too_many = RpcErrorKind::TooManyResults {
            message: String::new(),
            suggested: None,
        };
        assert!(range.shrink(10, &too_many));
        assert_eq!(range.size(), 5);
        range.succeeded(5, 0.0);
        assert_eq!(range.size(), 10, "grows after one sparse range");
    }

    #[test]
    fn next_range_stops_at_the_limit() {
        let mut range = AdaptiveRange::new(100);
        for _ in 0..10 {
            range.succeeded(range.size(), 0.0);
        }
        assert_eq!(range.next(10, 1000), (10, 109));
        assert_eq!(range.next(10, 50), (10, 50));
    }
}
