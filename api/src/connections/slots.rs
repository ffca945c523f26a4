//! Counted slots: how many of something (connections, websockets) each client holds, each
//! client's network holds (at most [`CLIENTS_PER_NETWORK`] clients' share; see
//! [`crate::client`]) and how many are held in all, each taken as a guard that gives its slot
//! back when dropped, so a slot can never leak whatever way a connection ends.

use crate::client::{CLIENTS_PER_NETWORK, ClientKey, NetworkKey};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Why a slot was not given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlotRefused {
    /// The client holds its share already.
    #[error("{client} already holds {held} {what} (at most {limit} per client)")]
    PerClient {
        /// The client.
        client: ClientKey,
        /// What is counted (`connections`, `websockets`).
        what: &'static str,
        /// How many it holds.
        held: usize,
        /// The cap.
        limit: usize,
    },
    /// The client's network holds its share already.
    #[error("{network} already holds {held} {what} (at most {limit} per network)")]
    PerNetwork {
        /// The network.
        network: NetworkKey,
        /// What is counted.
        what: &'static str,
        /// How many its clients hold.
        held: usize,
        /// The cap.
        limit: usize,
    },
    /// Every slot is taken.
    #[error("the server holds {limit} {what}, its limit")]
    Total {
        /// What is counted.
        what: &'static str,
        /// The cap.
        limit: usize,
    },
}

/// Slots of one kind, per client and in all.
#[derive(Debug, Clone)]
pub struct Slots {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    what: &'static str,
    per_client: usize,
    per_network: usize,
    total: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    by_client: HashMap<ClientKey, usize>,
    by_network: HashMap<NetworkKey, usize>,
    total: usize,
}

/// One slot held; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    inner: Arc<Inner>,
    client: Option<ClientKey>,
}

impl Slots {
    /// Slots of `what`: `per_client` for each client, `total` in all.
    pub fn new(what: &'static str, per_client: usize, total: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                what,
                per_client,
                per_network: per_client.saturating_mul(CLIENTS_PER_NETWORK as usize),
                total,
                held: Mutex::new(Held::default()),
            }),
        }
    }

    /// A slot for `client`, counted against its share and the total.
    pub fn acquire(&self, client: ClientKey) -> Result<Slot, SlotRefused> {
        self.take(Some(client))
    }

    /// A slot counted against the total only (a trusted proxy's connection, which carries many
    /// clients).
    pub fn acquire_shared(&self) -> Result<Slot, SlotRefused> {
        self.take(None)
    }

    /// Slots held now, in all.
    pub fn held(&self) -> usize {
        self.inner.held.lock().expect("not poisoned").total
    }

    fn take(&self, client: Option<ClientKey>) -> Result<Slot, SlotRefused> {
        let inner = &self.inner;
        let mut held = inner.held.lock().expect("not poisoned");
        if held.total >= inner.total {
            return Err(SlotRefused::Total {
                what: inner.what,
                limit: inner.total,
            });
        }
        if let Some(client) = client {
            let by_client = held.by_client.get(&client).copied().unwrap_or(0);
            if by_client >= inner.per_client {
                return Err(SlotRefused::PerClient {
                    client,
                    what: inner.what,
                    held: by_client,
                    limit: inner.per_client,
                });
            }
            let network = client.network();
            let by_network = held.by_network.get(&network).copied().unwrap_or(0);
            if by_network >= inner.per_network {
                return Err(SlotRefused::PerNetwork {
                    network,
                    what: inner.what,
                    held: by_network,
                    limit: inner.per_network,
                });
            }
            *held.by_client.entry(client).or_insert(0) += 1;
            *held.by_network.entry(network).or_insert(0) += 1;
        }
        held.total += 1;
        Ok(Slot {
            inner: Arc::clone(inner),
            client,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.inner.held.lock().expect("not poisoned");
        held.total -= 1;
        if let Some(client) = self.client {
            // Forgotten at zero, so the maps never outgrow the slots held.
            give_back(&mut held.by_client, client);
            give_back(&mut held.by_network, client.network());
        }
    }
}

/// Counts one slot of `key` back, forgetting the key at zero.
fn give_back<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: K) {
    if let Some(count) = counts.get_mut(&key) {
        *count -= 1;
        if *count == 0 {
            counts.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(text: &str) -> ClientKey {
        ClientKey::of(text.parse().unwrap())
    }

    #[test]
    fn a_client_over_its_share_is_refused_until_it_gives_one_back() {
        let slots = Slots::new("connections", 2, 10);
        let a = client("192.0.2.1");
        let first = slots.acquire(a).unwrap();
        let _second = slots.acquire(a).unwrap();
        let refused = slots.acquire(a).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "192.0.2.1 already holds 2 connections (at most 2 per client)"
        );
        assert!(
            slots.acquire(client("192.0.2.2")).is_ok(),
            "others are not affected"
        );
        drop(first);
        assert!(slots.acquire(a).is_ok());
    }

    #[test]
    fn the_64s_of_one_ipv6_48_share_four_clients_worth() {
        let slots = Slots::new("connections", 2, 100);
        // Two slots for each of four /64s of one /48 (spread over its /56s too).
        let held: Vec<Slot> = (0..4)
            .flat_map(|n| {
                let c = client(&format!("2001:db8:7:{:x}00::1", n * 0x11));
                [slots.acquire(c).unwrap(), slots.acquire(c).unwrap()]
            })
            .collect();
        let refused = slots.acquire(client("2001:db8:7:ff00::1")).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "2001:db8:7::/48 already holds 8 connections (at most 8 per network)"
        );
        assert!(
            slots.acquire(client("2001:db8:8::1")).is_ok(),
            "another /48 is not affected"
        );
        drop(held);
        let _again = slots.acquire(client("2001:db8:7:ff00::1")).unwrap();
        assert_eq!(slots.held(), 1, "every dropped slot was given back");
    }

    #[test]
    fn the_total_caps_every_client_and_shared_slots_together() {
        let slots = Slots::new("connections", 5, 2);
        let _one = slots.acquire_shared().unwrap();
        let _two = slots.acquire(client("192.0.2.1")).unwrap();
        assert_eq!(
            slots.acquire(client("192.0.2.2")).unwrap_err(),
            SlotRefused::Total {
                what: "connections",
                limit: 2
            }
        );
        assert_eq!(slots.held(), 2);
    }
}
