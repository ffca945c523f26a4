//! Each client's share of the server's time. A request rate counts a lookup by id (half a
//! millisecond) the same as the costliest query the other limits allow (a hundred times that),
//! so a client well within its rate could still keep every core busy. Here the time each
//! request takes to answer is charged to its client (and to its IPv6 network, which holds
//! [`CLIENTS_PER_NETWORK`] clients' worth): the charge drains at
//! `[api] server_ms_per_second_per_client`, and a client owing more than
//! `[api] server_ms_burst_per_client` is refused (429 over HTTP, a GraphQL error on a
//! websocket) until it has drained below. Cheap questions never come near it; a client asking
//! expensive ones gets fewer of them, and can hold at most its share of the cores. One owing
//! more than `[api] low_priority_after_ms_per_client` is heavy ([`TimeShare::is_heavy`]): its requests run at low
//! priority, where they get only the time others leave (`crate::low_priority_lane`).
//!
//! Time is wall time from the handler's start until the answer is ready (a streamed feed is
//! not charged here: it has its own share, see `crate::feed_cache`). The clients listed in
//! `[api] unlimited_clients` are never charged.

use crate::client::{CLIENTS_PER_NETWORK, ClientKey, NetworkKey};
use agentindex_indexer::config::{ApiConfig, IpNetwork};
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Forget clients that owe nothing every this many charges.
const FORGET_EVERY: u64 = 4_096;

/// Why a client may not start another request yet.
#[derive(Debug, Clone, PartialEq)]
pub struct OverShare {
    /// Who owes: the client, or its network.
    pub who: String,
    /// How long until it owes no more than its burst.
    pub wait: Duration,
}

impl OverShare {
    /// Whole seconds to wait (for `Retry-After`).
    pub fn retry_after_secs(&self) -> u64 {
        retry_after_secs(self.wait)
    }

    /// The refusal's wording.
    pub fn message(&self) -> String {
        format!(
            "{} used its share of the server's time; retry in {} s",
            self.who,
            self.retry_after_secs()
        )
    }
}

/// `wait` in whole seconds, rounded up, at least one: what `Retry-After` says.
pub fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// What one client (or network) owes, as of `at`.
#[derive(Debug, Clone, Copy)]
struct Account {
    owed: Duration,
    at: Instant,
}

/// Accounts of one kind of key, draining at `rate` (server time per second of real time).
#[derive(Debug)]
struct Ledger<K> {
    /// Seconds of server time forgiven per second.
    rate: f64,
    burst: Duration,
    /// What a key may owe before it is heavy.
    heavy: Duration,
    accounts: Mutex<HashMap<K, Account>>,
}

impl<K: Hash + Eq + Copy> Ledger<K> {
    fn new(rate: f64, burst: Duration, heavy: Duration) -> Self {
        Self {
            rate,
            burst,
            heavy,
            accounts: Mutex::new(HashMap::new()),
        }
    }

    /// What `account` still owes at `now`.
    fn drained(&self, account: Account, now: Instant) -> Duration {
        let forgiven = now.saturating_duration_since(account.at).as_secs_f64() * self.rate;
        account
            .owed
            .saturating_sub(Duration::from_secs_f64(forgiven))
    }

    /// Whether `key` owes more than `heavy` at `now`.
    fn is_heavy(&self, key: K, now: Instant) -> bool {
        let accounts = self.accounts.lock().unwrap_or_else(|e| e.into_inner());
        accounts
            .get(&key)
            .is_some_and(|account| self.drained(*account, now) > self.heavy)
    }

    /// How long `key` must wait at `now` before it owes no more than the burst, if at all.
    fn wait(&self, key: K, now: Instant) -> Option<Duration> {
        let accounts = self.accounts.lock().unwrap_or_else(|e| e.into_inner());
        let owed = self.drained(*accounts.get(&key)?, now);
        let over = owed.checked_sub(self.burst).filter(|d| !d.is_zero())?;
        Some(Duration::from_secs_f64(over.as_secs_f64() / self.rate))
    }

    fn charge(&self, key: K, spent: Duration, now: Instant) {
        let mut accounts = self.accounts.lock().unwrap_or_else(|e| e.into_inner());
        let owed = match accounts.get(&key) {
            Some(account) => self.drained(*account, now),
            None => Duration::ZERO,
        };
        accounts.insert(
            key,
            Account {
                owed: owed.saturating_add(spent),
                at: now,
            },
        );
    }

    /// Drops the accounts that owe nothing any more.
    fn forget_paid(&self, now: Instant) {
        let mut accounts = self.accounts.lock().unwrap_or_else(|e| e.into_inner());
        accounts.retain(|_, account| !self.drained(*account, now).is_zero());
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.accounts.lock().map(|a| a.len()).unwrap_or(0)
    }
}

/// The server's time, shared out among clients.
#[derive(Debug)]
pub struct TimeShare {
    unlimited: Vec<IpNetwork>,
    clients: Ledger<ClientKey>,
    networks: Ledger<NetworkKey>,
    charges: AtomicU64,
}

impl TimeShare {
    /// Shares as `[api]` sets them (zero values were refused when the config loaded).
    pub fn new(config: &ApiConfig) -> Self {
        let rate = f64::from(config.server_ms_per_second_per_client.max(1)) / 1000.0;
        let burst = Duration::from_millis(u64::from(config.server_ms_burst_per_client.max(1)));
        let heavy = Duration::from_millis(u64::from(config.low_priority_after_ms_per_client));
        let share = CLIENTS_PER_NETWORK.max(1);
        Self {
            unlimited: config.unlimited_clients.clone(),
            clients: Ledger::new(rate, burst, heavy),
            networks: Ledger::new(
                rate * f64::from(share),
                burst.saturating_mul(share),
                heavy.saturating_mul(share),
            ),
            charges: AtomicU64::new(0),
        }
    }

    /// Whether `client` is one of the operator's own, never charged.
    pub fn is_unlimited(&self, client: ClientKey) -> bool {
        self.unlimited
            .iter()
            .any(|network| network.contains(client.address()))
    }

    /// Why `client` may not start a request now, if it may not.
    pub fn refusal(&self, client: ClientKey) -> Option<OverShare> {
        self.refusal_at(client, Instant::now())
    }

    /// Whether `client` (or its network) owes more than `[api]
    /// low_priority_after_ms_per_client` (four times that for a network): it has lately used
    /// much of its share, and its requests go to the low-priority lane
    /// ([`crate::low_priority_lane`]). Never for an unlimited client.
    pub fn is_heavy(&self, client: ClientKey) -> bool {
        self.is_heavy_at(client, Instant::now())
    }

    fn is_heavy_at(&self, client: ClientKey, now: Instant) -> bool {
        !self.is_unlimited(client)
            && (self.clients.is_heavy(client, now)
                || (client.is_ipv6() && self.networks.is_heavy(client.network(), now)))
    }

    /// Charges `client` (and its network) for `spent`.
    pub fn charge(&self, client: ClientKey, spent: Duration) {
        self.charge_at(client, spent, Instant::now());
    }

    fn refusal_at(&self, client: ClientKey, now: Instant) -> Option<OverShare> {
        if self.is_unlimited(client) {
            return None;
        }
        if let Some(wait) = self.clients.wait(client, now) {
            return Some(OverShare {
                who: client.to_string(),
                wait,
            });
        }
        // An IPv4 client is its own network, so only IPv6 clients are counted twice.
        let network = client.network();
        let wait = self
            .networks
            .wait(network, now)
            .filter(|_| client.is_ipv6())?;
        Some(OverShare {
            who: format!("network {network}"),
            wait,
        })
    }

    fn charge_at(&self, client: ClientKey, spent: Duration, now: Instant) {
        if self.is_unlimited(client) {
            return;
        }
        self.clients.charge(client, spent, now);
        if client.is_ipv6() {
            self.networks.charge(client.network(), spent, now);
        }
        if self.charges.fetch_add(1, Ordering::Relaxed) % FORGET_EVERY == FORGET_EVERY - 1 {
            self.clients.forget_paid(now);
            self.networks.forget_paid(now);
        }
    }
}

/// Whom an operation's time is charged to where no middleware sees it: set in a websocket
/// connection's data, read by `crate::graphql::operation_limits` for each query it runs.
#[derive(Clone)]
pub struct ChargeTo {
    /// The shares.
    pub time: Arc<TimeShare>,
    /// The socket's client.
    pub client: ClientKey,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// 200 ms of server time a second, 1 s at once.
    fn share(unlimited: &[&str]) -> TimeShare {
        TimeShare::new(&ApiConfig {
            server_ms_per_second_per_client: 200,
            server_ms_burst_per_client: 1_000,
            low_priority_after_ms_per_client: 250,
            unlimited_clients: unlimited.iter().map(|n| n.parse().expect("cidr")).collect(),
            ..ApiConfig::default()
        })
    }

    fn client(address: &str) -> ClientKey {
        ClientKey::of(address.parse::<IpAddr>().expect("address"))
    }

    #[test]
    fn a_client_is_refused_once_it_owes_more_than_its_burst_until_it_has_drained() {
        let share = share(&[]);
        let now = Instant::now();
        let alice = client("192.0.2.7");
        share.charge_at(alice, Duration::from_millis(900), now);
        assert_eq!(share.refusal_at(alice, now), None, "within the burst");
        share.charge_at(alice, Duration::from_millis(500), now);
        let refused = share.refusal_at(alice, now).expect("400 ms over the burst");
        // 400 ms owed over the burst drain at 200 ms a second: two seconds.
        assert_eq!(refused.wait, Duration::from_secs(2));
        assert_eq!(refused.retry_after_secs(), 2);
        assert!(
            refused.message().contains("192.0.2.7"),
            "{}",
            refused.message()
        );
        let later = now + Duration::from_millis(1_900);
        assert!(share.refusal_at(alice, later).is_some(), "not drained yet");
        assert_eq!(share.refusal_at(alice, now + Duration::from_secs(2)), None);
        // Another client owes nothing.
        assert_eq!(share.refusal_at(client("192.0.2.8"), now), None);
    }

    #[test]
    fn ipv6_clients_of_one_network_share_four_clients_worth() {
        let share = share(&[]);
        let now = Instant::now();
        // Five /64s of one /48, each within its own burst: 5 x 900 ms > 4 x 1 s.
        let clients: Vec<ClientKey> = (1..=5)
            .map(|n| client(&format!("2001:db8:7:{n}::1")))
            .collect();
        for &c in &clients[..4] {
            share.charge_at(c, Duration::from_millis(900), now);
        }
        assert_eq!(share.refusal_at(clients[4], now), None, "3.6 s of 4 s");
        share.charge_at(clients[4], Duration::from_millis(900), now);
        let refused = share
            .refusal_at(client("2001:db8:7:99::1"), now)
            .expect("the network owes 4.5 s");
        assert_eq!(refused.who, "network 2001:db8:7::/48");
        // 500 ms over drain at 4 x 200 ms a second.
        assert_eq!(refused.wait, Duration::from_millis(625));
        assert_eq!(share.refusal_at(client("2001:db8:8::1"), now), None);
    }

    #[test]
    fn a_client_owing_over_its_low_priority_threshold_is_heavy_until_it_drains_below() {
        let renderer = share(&["10.1.0.0/16"]);
        let share = share(&[]);
        let now = Instant::now();
        let alice = client("192.0.2.7");
        assert!(!share.is_heavy_at(alice, now), "a stranger owes nothing");
        share.charge_at(alice, Duration::from_millis(250), now);
        assert!(
            !share.is_heavy_at(alice, now),
            "exactly the threshold is not over it"
        );
        share.charge_at(alice, Duration::from_millis(50), now);
        assert!(share.is_heavy_at(alice, now));
        // 300 ms owed drain to 250 in a quarter of a second at 200 ms a second.
        assert!(share.is_heavy_at(alice, now + Duration::from_millis(200)));
        assert!(!share.is_heavy_at(alice, now + Duration::from_millis(250)));
        assert!(!share.is_heavy_at(client("192.0.2.8"), now));
        // A fresh /64 of a /48 owing 1.04 s (over its 4 x 250 ms) is heavy through it.
        for n in 1..=4 {
            share.charge_at(
                client(&format!("2001:db8:7:{n}::1")),
                Duration::from_millis(260),
                now,
            );
        }
        assert!(share.is_heavy_at(client("2001:db8:7:99::1"), now));
        assert!(!share.is_heavy_at(client("2001:db8:8::1"), now));
        renderer.charge_at(client("10.1.2.3"), Duration::from_secs(60), now);
        assert!(!renderer.is_heavy_at(client("10.1.2.3"), now));
    }

    #[test]
    fn unlimited_clients_are_never_charged() {
        let share = share(&["10.1.0.0/16"]);
        let now = Instant::now();
        let renderer = client("10.1.2.3");
        share.charge_at(renderer, Duration::from_secs(60), now);
        assert_eq!(share.refusal_at(renderer, now), None);
        assert_eq!(share.clients.len(), 0);
    }

    #[test]
    fn clients_that_owe_nothing_are_forgotten() {
        let share = share(&[]);
        let now = Instant::now();
        for n in 0..FORGET_EVERY - 2 {
            let address = IpAddr::from(u32::try_from(n).expect("small").to_be_bytes());
            share.charge_at(ClientKey::of(address), Duration::from_millis(10), now);
        }
        share.charge_at(client("192.0.2.1"), Duration::from_secs(5), now);
        assert_eq!(
            share.clients.len(),
            usize::try_from(FORGET_EVERY - 1).expect("small")
        );
        // The round's last charge comes a second later: 10 ms owed are drained, 5 s are not.
        share.charge_at(
            client("192.0.2.2"),
            Duration::ZERO,
            now + Duration::from_secs(1),
        );
        assert_eq!(share.clients.len(), 1);
        assert!(share.refusal_at(client("192.0.2.1"), now).is_some());
    }
}
