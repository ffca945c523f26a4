//! Counted slots: how many of something (connections, websockets) each client holds and how
//! many are held in all, each taken as a guard that gives its slot back when dropped, so a slot
//! can never leak whatever way a connection ends.

use crate::client::ClientKey;
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
    total: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    by_client: HashMap<ClientKey, usize>,
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
            let count = held.by_client.entry(client).or_insert(0);
            if *count >= inner.per_client {
                return Err(SlotRefused::PerClient {
                    client,
                    what: inner.what,
                    held: *count,
                    limit: inner.per_client,
                });
            }
            *count += 1;
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
        if let Some(client) = self.client
            && let Some(count) = held.by_client.get_mut(&client)
        {
            *count -= 1;
            if *count == 0 {
                // Forgotten at once, so a map of clients never outgrows the slots held.
                held.by_client.remove(&client);
            }
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
