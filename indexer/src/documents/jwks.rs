//! Key sets fetched for card signatures' `jku`, kept by URL for a while, so many cards (or one
//! card checked again and again) pointing at the same key set cost one fetch.

use super::signature::JwksError;
use jsonwebtoken::jwk::JwkSet;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a fetched key set is used before it is fetched again: long enough to spare the host
/// a fetch per card, short enough that a rotated key is seen within minutes.
const KEPT_FOR: Duration = Duration::from_secs(300);
/// How long a failure to fetch one is remembered, so a host that is down is not asked per card.
const FAILURE_KEPT_FOR: Duration = Duration::from_secs(30);
/// Key sets kept at most; when full, the expired ones go, then all (memory stays bounded
/// whatever URLs cards name).
const MAX_ENTRIES: usize = 256;

type Entry = (Instant, Result<JwkSet, JwksError>);

/// The cache; cheap to clone, shared by clones.
#[derive(Clone, Default)]
pub(super) struct JwksCache {
    entries: Arc<Mutex<HashMap<String, Entry>>>,
}

impl std::fmt::Debug for JwksCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.entries.lock().map_or(0, |e| e.len());
        f.debug_struct("JwksCache").field("held", &held).finish()
    }
}

impl JwksCache {
    /// The key set (or failure) kept for `url`, while it is fresh.
    pub(super) fn get(&self, url: &str) -> Option<Result<JwkSet, JwksError>> {
        let entries = self.entries.lock().ok()?;
        let (at, result) = entries.get(url)?;
        let kept_for = if result.is_ok() {
            KEPT_FOR
        } else {
            FAILURE_KEPT_FOR
        };
        (at.elapsed() < kept_for).then(|| result.clone())
    }

    /// Keeps what fetching `url` gave.
    pub(super) fn put(&self, url: &str, result: Result<JwkSet, JwksError>) {
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, (at, _)| at.elapsed() < KEPT_FOR);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(url.to_string(), (Instant::now(), result));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_by_url_and_bounded() {
        let cache = JwksCache::default();
        assert!(cache.get("https://a.example/jwks").is_none());
        cache.put("https://a.example/jwks", Ok(JwkSet { keys: vec![] }));
        assert!(matches!(cache.get("https://a.example/jwks"), Some(Ok(_))));
        assert!(cache.get("https://b.example/jwks").is_none());
        for i in 0..MAX_ENTRIES * 2 {
            cache.put(
                &format!("https://{i}.example/jwks"),
                Err(JwksError::NotModified),
            );
        }
        assert!(cache.entries.lock().unwrap().len() <= MAX_ENTRIES);
    }
}
