//! Skill and tag facets kept between requests. Counting them groups every skill row (and, for
//! tags, every tag in them): 0.3 s and 0.5 s at 100,000 agents, on every dashboard load, and an
//! indexer beside the API changes the database every block, so the response cache (keyed by the
//! database's version) never holds them for long.
//!
//! A count is reused exactly while the database is unchanged. One that took longer than
//! [`SLOW`] to make is also served while it is younger than [`MAX_STALE`] after the database
//! changed, and is recounted in the background once it is older than [`REFRESH_AFTER`]: such
//! facets lag the index by seconds, never by more than [`MAX_STALE`]. Counts that are quick to
//! make (small indexes, every test) are always exact. The unfiltered facets are counted once
//! when the API starts, so the first visitor does not wait for them.
//!
//! Clients choose the chain filter, so the cache is bounded: at most `[api.caches]
//! facet_cache_entries` counts, the least recently used dropped first, and a filter is reduced
//! to the configured chains it names (sorted, once each) before it becomes a key, so no list of
//! chain ids makes more keys than there are subsets of the configured chains.

use crate::cache::ResponseCache;
use crate::lru::Lru;
use crate::read::facets::{self, Counted};
use agentindex_indexer::store::{Store, low_priority};
use sqlx::AnyPool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A count that took at least this long may be served stale.
const SLOW: Duration = Duration::from_millis(50);
/// A stale count older than this is recounted in the background (served meanwhile).
const REFRESH_AFTER: Duration = Duration::from_secs(10);
/// A stale count older than this is recounted before answering.
const MAX_STALE: Duration = Duration::from_secs(120);
/// Entries counted per facet; requests take the top of them.
pub(crate) const COUNTED: i64 = 500;

/// Which facet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Facet {
    /// Skill ids.
    Skills,
    /// Skill tags.
    Tags,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    facet: Facet,
    chain_ids: Vec<i64>,
}

struct Entry {
    counted: Arc<Vec<Counted>>,
    /// The database version it was counted at.
    version: i64,
    at: Instant,
    cost: Duration,
    refreshing: bool,
}

/// The facets counted so far, by facet and chain filter.
pub(crate) struct FacetCache {
    entries: Mutex<Lru<Key, Entry>>,
    /// The configured chains, sorted: the only ids a filter keeps.
    chains: Vec<i64>,
}

impl std::fmt::Debug for FacetCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FacetCache").finish_non_exhaustive()
    }
}

/// What to do with a request, given what is held.
enum Plan {
    Serve(Arc<Vec<Counted>>),
    ServeAndRefresh(Arc<Vec<Counted>>),
    Count,
}

impl FacetCache {
    /// A cache of at most `capacity` counts, over the configured `chains`.
    pub(crate) fn new(capacity: usize, chains: impl IntoIterator<Item = u64>) -> Self {
        let mut chains: Vec<i64> = chains.into_iter().map(|id| id as i64).collect();
        chains.sort_unstable();
        Self {
            entries: Mutex::new(Lru::new(capacity)),
            chains,
        }
    }

    /// The configured chains among `chain_ids`, sorted, once each; `None` when the filter names
    /// chains and none of them is configured (nothing can match).
    fn filter(&self, chain_ids: &[i64]) -> Option<Vec<i64>> {
        if chain_ids.is_empty() {
            return Some(Vec::new());
        }
        let kept: Vec<i64> = self
            .chains
            .iter()
            .copied()
            .filter(|id| chain_ids.contains(id))
            .collect();
        (!kept.is_empty()).then_some(kept)
    }

    /// Counts held, for `/metrics`.
    pub(crate) fn len(&self) -> usize {
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .len()
    }

    /// The top [`COUNTED`] values of `facet` on `chain_ids` (all chains when empty; chains not
    /// configured count nothing), the database being at `version`.
    pub(crate) async fn get(
        self: &Arc<Self>,
        store: &Store,
        version: i64,
        facet: Facet,
        chain_ids: &[i64],
    ) -> sqlx::Result<Arc<Vec<Counted>>> {
        let Some(chain_ids) = self.filter(chain_ids) else {
            return Ok(Arc::new(Vec::new()));
        };
        let key = Key { facet, chain_ids };
        match self.plan(&key, version) {
            Plan::Serve(counted) => Ok(counted),
            Plan::ServeAndRefresh(counted) => {
                // Nobody waits for a recount: it reads at low priority.
                let cache = Arc::clone(self);
                let store = store.clone();
                tokio::spawn(low_priority::scope(async move {
                    let pool = store.reader();
                    if let Err(error) = cache.count(pool, version, key.clone()).await {
                        tracing::warn!(target: "agentindex::api", %error, ?key, "recounting a facet");
                        cache.finished_refreshing(&key);
                    }
                }));
                Ok(counted)
            }
            Plan::Count => self.count(store.reader(), version, key).await,
        }
    }

    /// Counts the unfiltered facets in the background, so the first dashboard does not wait.
    /// Nobody waits for it either: it reads the store's low-priority pool.
    pub(crate) fn warm(
        self: &Arc<Self>,
        store: &Store,
        versions: Arc<ResponseCache>,
    ) -> tokio::task::JoinHandle<()> {
        let (cache, store) = (Arc::clone(self), store.clone());
        tokio::spawn(low_priority::scope(async move {
            let pool = store.reader();
            let counted = async {
                let version: i64 = versions.version().await?;
                for facet in [Facet::Skills, Facet::Tags] {
                    let key = Key {
                        facet,
                        chain_ids: Vec::new(),
                    };
                    cache.count(pool, version, key).await?;
                }
                Ok::<(), sqlx::Error>(())
            };
            if let Err(error) = counted.await {
                tracing::warn!(target: "agentindex::api", %error, "counting facets at start");
            }
        }))
    }

    fn plan(&self, key: &Key, version: i64) -> Plan {
        let mut entries = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let Some(entry) = entries.get_mut(key) else {
            return Plan::Count;
        };
        if entry.version == version {
            return Plan::Serve(Arc::clone(&entry.counted));
        }
        let age = entry.at.elapsed();
        if entry.cost < SLOW || age >= MAX_STALE {
            return Plan::Count;
        }
        if age >= REFRESH_AFTER && !entry.refreshing {
            entry.refreshing = true;
            return Plan::ServeAndRefresh(Arc::clone(&entry.counted));
        }
        Plan::Serve(Arc::clone(&entry.counted))
    }

    async fn count(
        &self,
        pool: &AnyPool,
        version: i64,
        key: Key,
    ) -> sqlx::Result<Arc<Vec<Counted>>> {
        let started = Instant::now();
        let counted = Arc::new(match key.facet {
            Facet::Skills => facets::skills(pool, &key.chain_ids, COUNTED).await?,
            Facet::Tags => facets::tags(pool, &key.chain_ids, COUNTED).await?,
        });
        let entry = Entry {
            counted: Arc::clone(&counted),
            version,
            at: started,
            cost: started.elapsed(),
            refreshing: false,
        };
        self.entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(key, entry, 1);
        Ok(counted)
    }

    fn finished_refreshing(&self, key: &Key) {
        if let Some(entry) = self
            .entries
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .peek_mut(key)
        {
            entry.refreshing = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_counts_at_start_read_the_low_priority_pool() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("facets.db").display());
        let options = agentindex_indexer::store::OpenOptions {
            read_statement_timeout: None,
            low_priority_readers: 1,
        };
        let store = Store::open_with(&url, options).await.unwrap();
        let versions = Arc::new(ResponseCache::new(store.reader().clone(), 1 << 20));
        let cache = Arc::new(FacetCache::new(8, [1]));
        cache.warm(&store, Arc::clone(&versions)).await.unwrap();
        assert_eq!(cache.len(), 2, "skills and tags are counted");

        // With the low-priority pool closed and the ordinary one open, nothing is counted.
        low_priority::scope(async { store.reader().close().await }).await;
        let cache = Arc::new(FacetCache::new(8, [1]));
        cache.warm(&store, versions).await.unwrap();
        assert_eq!(
            cache.len(),
            0,
            "the counts read the closed low-priority pool"
        );
    }

    fn cache_with(version: i64, age: Duration, cost: Duration) -> (FacetCache, Key) {
        let key = Key {
            facet: Facet::Tags,
            chain_ids: Vec::new(),
        };
        let cache = FacetCache::new(8, [1]);
        cache.entries.lock().unwrap().insert(
            key.clone(),
            Entry {
                counted: Arc::new(vec![("nlp".into(), 3)]),
                version,
                at: Instant::now().checked_sub(age).unwrap(),
                cost,
                refreshing: false,
            },
            1,
        );
        (cache, key)
    }

    fn plan_name(plan: Plan) -> &'static str {
        match plan {
            Plan::Serve(_) => "serve",
            Plan::ServeAndRefresh(_) => "serve and refresh",
            Plan::Count => "count",
        }
    }

    #[test]
    fn an_unchanged_database_is_answered_from_the_count() {
        let (cache, key) = cache_with(7, MAX_STALE * 2, Duration::ZERO);
        assert_eq!(plan_name(cache.plan(&key, 7)), "serve");
    }

    #[test]
    fn quick_counts_are_always_exact() {
        let (cache, key) = cache_with(7, Duration::ZERO, SLOW / 2);
        assert_eq!(plan_name(cache.plan(&key, 8)), "count");
    }

    #[test]
    fn slow_counts_are_served_stale_and_refreshed_once_then_recounted_when_too_old() {
        let (young, key) = cache_with(7, Duration::from_secs(1), SLOW * 4);
        assert_eq!(plan_name(young.plan(&key, 8)), "serve");

        let (old, key) = cache_with(7, REFRESH_AFTER + Duration::from_secs(1), SLOW * 4);
        assert_eq!(plan_name(old.plan(&key, 8)), "serve and refresh");
        assert_eq!(
            plan_name(old.plan(&key, 8)),
            "serve",
            "one refresh at a time"
        );

        let (too_old, key) = cache_with(7, MAX_STALE + Duration::from_secs(1), SLOW * 4);
        assert_eq!(plan_name(too_old.plan(&key, 8)), "count");
    }

    #[test]
    fn a_chain_filter_keys_only_configured_chains_once_each_in_order() {
        let cache = FacetCache::new(8, [8453, 1, 84532]);
        assert_eq!(cache.filter(&[]), Some(vec![]), "no filter: every chain");
        assert_eq!(cache.filter(&[84532, 1, 1, 84532, 1]), Some(vec![1, 84532]));
        let hostile: Vec<i64> = (0..100_000).collect();
        assert_eq!(cache.filter(&hostile), Some(vec![1, 8453, 84532]));
        assert_eq!(
            cache.filter(&[5, 6, 7]),
            None,
            "nothing configured is named"
        );
    }

    #[test]
    fn counts_kept_stay_within_the_configured_number() {
        let cache = FacetCache::new(2, [1, 2, 3]);
        for chain_ids in [vec![1], vec![2], vec![3], vec![1, 2]] {
            let key = Key {
                facet: Facet::Skills,
                chain_ids,
            };
            let entry = Entry {
                counted: Arc::new(Vec::new()),
                version: 1,
                at: Instant::now(),
                cost: Duration::ZERO,
                refreshing: false,
            };
            cache.entries.lock().unwrap().insert(key, entry, 1);
        }
        assert_eq!(cache.len(), 2);
    }
}
