//! A least-recently-used map bounded by a total weight (bytes, or 1 per entry for a count
//! bound), shared by the API's caches so none of them grows with what clients ask for. Inserting
//! past the bound drops the least recently used entries until the new one fits; an entry heavier
//! than the whole bound is not kept at all.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;

/// The map. Not synchronised: each cache wraps it in its own lock.
#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    entries: HashMap<K, Slot<V>>,
    /// Keys by the tick they were last used at, oldest first.
    order: BTreeMap<u64, K>,
    tick: u64,
    weight: usize,
    capacity: usize,
}

#[derive(Debug)]
struct Slot<V> {
    value: V,
    weight: usize,
    used: u64,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    /// An empty map holding at most `capacity` in total weight.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            weight: 0,
            capacity,
        }
    }

    /// The value of `key`, marked as just used.
    pub(crate) fn get(&mut self, key: &K) -> Option<&V> {
        self.get_mut(key).map(|value| &*value)
    }

    /// The value of `key`, mutably, marked as just used.
    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.tick += 1;
        let slot = self.entries.get_mut(key)?;
        let key = self
            .order
            .remove(&slot.used)
            .expect("every entry is ordered");
        slot.used = self.tick;
        self.order.insert(self.tick, key);
        Some(&mut slot.value)
    }

    /// The value of `key`, mutably, without marking it used.
    pub(crate) fn peek_mut(&mut self, key: &K) -> Option<&mut V> {
        self.entries.get_mut(key).map(|slot| &mut slot.value)
    }

    /// Keeps `value` under `key`, weighing `weight`, dropping the least recently used entries
    /// until it fits. Returns whether it was kept (not when heavier than the whole capacity).
    pub(crate) fn insert(&mut self, key: K, value: V, weight: usize) -> bool {
        self.remove(&key);
        if weight > self.capacity {
            return false;
        }
        while self.weight + weight > self.capacity {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(slot) = self.entries.remove(&oldest) {
                self.weight -= slot.weight;
            }
        }
        self.tick += 1;
        self.order.insert(self.tick, key.clone());
        self.entries.insert(
            key,
            Slot {
                value,
                weight,
                used: self.tick,
            },
        );
        self.weight += weight;
        true
    }

    /// Drops `key`'s entry, if any.
    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let slot = self.entries.remove(key)?;
        self.order.remove(&slot.used);
        self.weight -= slot.weight;
        Some(slot.value)
    }

    /// Drops every entry.
    pub(crate) fn clear(&mut self) {
        self.entries.clear();
        self.order.clear();
        self.weight = 0;
    }

    /// The total weight held.
    pub(crate) fn weight(&self) -> usize {
        self.weight
    }

    /// The number of entries held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

/// An [`Lru`] whose entries are valid at one database version only (the response and feed
/// caches): asked at another version it has nothing, and an entry of a newer version drops the
/// older ones first, so a stale answer is never served.
#[derive(Debug)]
pub(crate) struct VersionedLru<K, V> {
    version: i64,
    lru: Lru<K, V>,
}

impl<K: Hash + Eq + Clone, V> VersionedLru<K, V> {
    /// An empty map holding at most `capacity` in total weight.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            version: i64::MIN,
            lru: Lru::new(capacity),
        }
    }

    /// The value of `key` computed at `version`, marked as just used.
    pub(crate) fn get(&mut self, key: &K, version: i64) -> Option<&V> {
        if self.version != version {
            return None;
        }
        self.lru.get(key)
    }

    /// Keeps `value`, computed at `version`, under `key` (see [`Lru::insert`]).
    pub(crate) fn insert(&mut self, key: K, version: i64, value: V, weight: usize) -> bool {
        if self.version != version {
            self.version = version;
            self.lru.clear();
        }
        self.lru.insert(key, value, weight)
    }

    /// The total weight held.
    pub(crate) fn weight(&self) -> usize {
        self.lru.weight()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_weight_never_passes_the_capacity_and_the_least_recent_go_first() {
        let mut lru = Lru::new(100);
        for n in 0..10 {
            assert!(lru.insert(n, n, 30));
            assert!(lru.weight() <= 100, "after {n}: {}", lru.weight());
        }
        assert_eq!(lru.len(), 3);
        assert!(lru.get(&7).is_some(), "7 is among the newest three");
        lru.insert(10, 10, 30);
        assert!(lru.get(&7).is_some(), "7 was used, so 8 went instead");
        assert!(lru.get(&8).is_none());
        assert!(lru.get(&9).is_some() && lru.get(&10).is_some());
        assert_eq!(lru.weight(), 90);
    }

    #[test]
    fn an_entry_heavier_than_the_capacity_is_not_kept_and_evicts_nothing() {
        let mut lru = Lru::new(100);
        lru.insert("small", 1, 10);
        assert!(!lru.insert("huge", 2, 101));
        assert_eq!(lru.get(&"small"), Some(&1));
        assert_eq!(lru.get(&"huge"), None);
        assert_eq!(lru.weight(), 10);
    }

    #[test]
    fn replacing_a_key_counts_its_weight_once() {
        let mut lru = Lru::new(100);
        lru.insert("a", 1, 40);
        lru.insert("a", 2, 50);
        assert_eq!((lru.len(), lru.weight()), (1, 50));
        assert_eq!(lru.remove(&"a"), Some(2));
        assert_eq!((lru.len(), lru.weight()), (0, 0));
        lru.insert("b", 3, 60);
        lru.clear();
        assert_eq!((lru.len(), lru.weight()), (0, 0));
    }
}
