//! When a new epoch's trust rank goes into force, agent by agent. Computing the rank and
//! rescoring every paid agent in the batch that crosses an epoch stalled the tip (16-17 s at
//! 100,000 agents and 1,000,000 payments, two thirds of it the rescore), so the agents
//! are split into [`ROLLOUT_GROUPS`] fixed groups (by a hash of their key) and the rank as of
//! epoch `E` goes into force for group `g` at block `E + lag(g)`, the lags spread evenly over
//! `rollout_blocks`. Each batch then rescores the groups whose switch block it passed; the rank
//! itself is stored one block before the first group goes over, and the previous one dropped
//! one block after the last group went over ([`TrustParams::epochs_kept`]).
//!
//! Which rank an agent is scored under is a pure function of its key and the block, so an index
//! that settles at every block and one that settles once at the end hold the same rows.

use super::TrustParams;
use std::collections::BTreeSet;

/// How many groups a new rank goes into force in, one after another.
pub const ROLLOUT_GROUPS: u64 = 32;

/// The rollout group of the agent `key`: FNV-1a of its bytes, modulo [`ROLLOUT_GROUPS`].
pub fn rollout_group(key: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash % ROLLOUT_GROUPS
}

impl TrustParams {
    /// The blocks a new rank goes into force over: `rollout_blocks`, but less than an interval,
    /// so at most two epochs are ever in force at once.
    fn rollout(&self) -> u64 {
        self.rollout_blocks
            .min(self.interval_blocks.max(1).saturating_sub(1))
    }

    /// Blocks after an epoch until its rank is in force for the agents of `group`.
    pub fn switch_lag(&self, group: u64) -> u64 {
        self.rollout() * (group.min(ROLLOUT_GROUPS - 1) + 1) / ROLLOUT_GROUPS
    }

    /// The epoch of the rank in force at `block` for the agents of `group`.
    pub fn epoch_in_force(&self, group: u64, block: u64) -> u64 {
        self.epoch_of(block.saturating_sub(self.switch_lag(group)))
    }

    /// The epoch of the rank in force at `block` for the agent `key`.
    pub fn epoch_in_force_for(&self, key: &str, block: u64) -> u64 {
        self.epoch_in_force(rollout_group(key), block)
    }

    /// Blocks after an epoch until its rank is stored: one before the first group goes over, so
    /// storing the rank and rescoring that group fall in different batches.
    pub fn store_lag(&self) -> u64 {
        self.switch_lag(0).saturating_sub(1)
    }

    /// The epochs whose ranks a chain keeps at `block`: those in force for some group, the
    /// newest once its [`TrustParams::store_lag`] has passed, and the one before it until the
    /// block the last group went over (dropping it is then a batch of its own).
    pub fn epochs_kept(&self, block: u64) -> BTreeSet<u64> {
        let mut kept = self.epochs_in_force(block);
        let newest = self.epoch_of(block);
        if block - newest >= self.store_lag() {
            kept.insert(newest);
        }
        let interval = self.interval_blocks.max(1);
        if self.rollout() > 0 && block - newest <= self.rollout() && newest >= interval {
            kept.insert(newest - interval);
        }
        kept
    }

    /// Every epoch whose rank is in force for some group at `block` (one or two).
    pub fn epochs_in_force(&self, block: u64) -> BTreeSet<u64> {
        (0..ROLLOUT_GROUPS)
            .map(|group| self.epoch_in_force(group, block))
            .collect()
    }

    /// The groups whose rank in force differs between blocks `from` and `to` (either way round:
    /// a reorg moves back).
    pub fn groups_switched(&self, from: u64, to: u64) -> BTreeSet<u64> {
        (0..ROLLOUT_GROUPS)
            .filter(|group| self.epoch_in_force(*group, from) != self.epoch_in_force(*group, to))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(interval_blocks: u64, rollout_blocks: u64) -> TrustParams {
        TrustParams {
            interval_blocks,
            rollout_blocks,
            ..TrustParams::default()
        }
    }

    #[test]
    fn groups_go_over_one_after_another_within_the_rollout() {
        let p = params(1_000, 320);
        assert_eq!(p.switch_lag(0), 10);
        assert_eq!(p.switch_lag(ROLLOUT_GROUPS - 1), 320);
        // Before its lag a group keeps the previous epoch's rank.
        assert_eq!(p.epoch_in_force(0, 2_009), 1_000);
        assert_eq!(p.epoch_in_force(0, 2_010), 2_000);
        assert_eq!(p.epoch_in_force(31, 2_319), 1_000);
        assert_eq!(p.epoch_in_force(31, 2_320), 2_000);
        assert_eq!(p.epochs_in_force(2_100), BTreeSet::from([1_000, 2_000]));
        assert_eq!(p.epochs_in_force(2_500), BTreeSet::from([2_000]));
        // One block switches one group, and the whole rollout switches each group once.
        assert_eq!(p.groups_switched(2_009, 2_010), BTreeSet::from([0]));
        assert_eq!(p.groups_switched(2_029, 2_030), BTreeSet::from([2]));
        assert_eq!(p.groups_switched(2_010, 2_011), BTreeSet::new());
        assert_eq!(p.groups_switched(1_999, 2_320).len() as u64, ROLLOUT_GROUPS);
        // The new rank is kept from the block before the first group goes over.
        assert_eq!(p.store_lag(), 9);
        assert_eq!(p.epochs_kept(2_008), BTreeSet::from([1_000]));
        assert_eq!(p.epochs_kept(2_009), BTreeSet::from([1_000, 2_000]));
        assert_eq!(p.epochs_kept(2_320), BTreeSet::from([1_000, 2_000]));
        assert_eq!(p.epochs_kept(2_321), BTreeSet::from([2_000]));
        assert_eq!(p.epochs_kept(5), BTreeSet::from([0]));
        // Early blocks fall back to the first epoch.
        assert_eq!(p.epoch_in_force(31, 5), 0);
    }

    #[test]
    fn a_rollout_is_shorter_than_an_interval_and_none_means_all_at_the_epoch() {
        let p = params(5, 320);
        assert!((0..ROLLOUT_GROUPS).all(|g| p.switch_lag(g) <= 4));
        assert!(p.epochs_in_force(17).len() <= 2);
        let at_once = params(1_000, 0);
        assert_eq!(at_once.epochs_in_force(2_000), BTreeSet::from([2_000]));
        assert_eq!(at_once.epochs_kept(2_000), BTreeSet::from([2_000]));
        assert_eq!(
            at_once.groups_switched(1_999, 2_000).len() as u64,
            ROLLOUT_GROUPS
        );
        assert_eq!(params(1, 320).epochs_in_force(7), BTreeSet::from([7]));
    }

    #[test]
    fn groups_are_fixed_by_key_and_share_the_agents_evenly() {
        assert_eq!(rollout_group("8453:agent-1"), rollout_group("8453:agent-1"));
        let mut counts = [0u32; ROLLOUT_GROUPS as usize];
        for n in 0..32_000 {
            counts[rollout_group(&format!("8453:agent-{n:06}")) as usize] += 1;
        }
        assert!(
            counts.iter().all(|c| (800..1_200).contains(c)),
            "uneven groups: {counts:?}"
        );
    }
}
