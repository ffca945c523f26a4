//! Each client network's share of reputation feeds: [`FEEDS_PER_CLIENT`] in a row, then one per
//! period, as a generic cell rate (each network's "theoretical arrival time"). Unlike a plain
//! rate limiter it can be asked whether a network may take a feed without taking one
//! ([`Shares::may_take`]): the feed cache asks that before it makes a feed, so a client past its
//! share never sets a lane to work on a feed it would then be refused.

use super::FEEDS_PER_CLIENT;
use crate::client::NetworkKey;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The networks' shares.
pub(super) struct Shares {
    /// When each network's share is next whole again, pushed one period on per feed taken;
    /// networks whose share is whole are dropped.
    full_at: Mutex<HashMap<NetworkKey, Instant>>,
    period: Duration,
}

impl Shares {
    /// Shares of one feed per `period` after [`FEEDS_PER_CLIENT`] in a row.
    pub(super) fn new(period: Duration) -> Self {
        Self {
            full_at: Mutex::new(HashMap::new()),
            period: period.max(Duration::from_millis(1)),
        }
    }

    /// How far ahead of now a network's share may run out before it is refused.
    fn tolerance(&self) -> Duration {
        self.period * FEEDS_PER_CLIENT.saturating_sub(1)
    }

    /// `Ok` if `network` may take a feed at `now`, else how long until it may.
    pub(super) fn may_take(&self, network: NetworkKey, now: Instant) -> Result<(), Duration> {
        let full_at = self.full_at.lock().unwrap_or_else(|e| e.into_inner());
        self.wait(full_at.get(&network).copied(), now)
    }

    /// Takes a feed from `network`'s share at `now`, or says how long until it may.
    pub(super) fn take(&self, network: NetworkKey, now: Instant) -> Result<(), Duration> {
        let mut full_at = self.full_at.lock().unwrap_or_else(|e| e.into_inner());
        // Networks whose share is whole again are forgotten, so the map holds recent ones only.
        full_at.retain(|_, at| *at > now);
        let at = full_at.get(&network).copied();
        self.wait(at, now)?;
        full_at.insert(network, at.map_or(now, |at| at.max(now)) + self.period);
        Ok(())
    }

    fn wait(&self, full_at: Option<Instant>, now: Instant) -> Result<(), Duration> {
        match full_at {
            Some(at) if at > now + self.tolerance() => Err(at - self.tolerance() - now),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientKey;

    fn network(n: u8) -> NetworkKey {
        ClientKey::of(std::net::IpAddr::from([192, 0, 2, n])).network()
    }

    #[test]
    fn a_network_takes_its_burst_then_one_per_period_and_asking_takes_nothing() {
        let shares = Shares::new(Duration::from_secs(30));
        let start = Instant::now();
        for _ in 0..10 {
            assert_eq!(shares.may_take(network(1), start), Ok(()));
        }
        for _ in 0..FEEDS_PER_CLIENT {
            assert_eq!(shares.take(network(1), start), Ok(()));
        }
        let wait = shares.take(network(1), start).unwrap_err();
        assert_eq!(wait, Duration::from_secs(30));
        assert_eq!(shares.may_take(network(1), start), Err(wait));
        assert_eq!(shares.take(network(2), start), Ok(()), "its own share");
        let later = start + Duration::from_secs(29);
        assert_eq!(
            shares.may_take(network(1), later),
            Err(Duration::from_secs(1))
        );
        let period_on = start + Duration::from_secs(30);
        assert_eq!(shares.may_take(network(1), period_on), Ok(()));
        assert_eq!(shares.take(network(1), period_on), Ok(()));
        assert!(shares.take(network(1), period_on).is_err());
    }

    #[test]
    fn a_share_left_unused_fills_up_to_the_burst_and_no_further() {
        let shares = Shares::new(Duration::from_secs(30));
        let start = Instant::now();
        shares.take(network(1), start).unwrap();
        shares.take(network(2), start).unwrap();
        let long_after = start + Duration::from_secs(3_600);
        for _ in 0..FEEDS_PER_CLIENT {
            shares.take(network(1), long_after).unwrap();
        }
        assert!(shares.take(network(1), long_after).is_err());
        assert!(
            shares
                .full_at
                .lock()
                .unwrap()
                .keys()
                .all(|key| *key == network(1)),
            "whole shares are forgotten"
        );
    }
}
