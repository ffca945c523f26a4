//! What a `sqlite:` URL asks of [`super::DRIVER`] beyond SQLite's own options: the time limit
//! of [`LIMIT_PARAM`] and the lowered priority of [`LOW_PRIORITY_PARAM`].

use sqlx::sqlite::SqliteConnectOptions;
use sqlx_core::Error;
use std::time::Duration;
use url::Url;

/// The query parameter of a `sqlite:` URL that limits each statement, in milliseconds. Taken
/// out of the URL before SQLite's own options read it (they refuse parameters they do not know).
pub(crate) const LIMIT_PARAM: &str = "statement_limit_ms";
/// The query parameter of a `sqlite:` URL (`low_priority=true`) whose connections' worker
/// threads run at the lowest priority ([`crate::priority`]). Taken out as [`LIMIT_PARAM`] is.
pub(crate) const LOW_PRIORITY_PARAM: &str = "low_priority";

/// Names of the worker threads of low-priority connections (sqlx numbers them; Linux keeps
/// the first 15 bytes of a thread's name).
pub(crate) const LOW_PRIORITY_THREAD: &str = "sqlite-low-";

/// What a URL asks of the driver beyond SQLite's own options: the time limit of every
/// statement (`None`: statements run to their end) and whether the connection's worker thread
/// runs at the lowest priority.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GuardParams {
    pub(super) limit: Option<Duration>,
    pub(super) low_priority: bool,
}

/// Splits [`LIMIT_PARAM`] and [`LOW_PRIORITY_PARAM`] off `url`: what they set, and the URL
/// without them.
pub(super) fn split_own(url: &Url) -> Result<(GuardParams, Url), Error> {
    let mut own = GuardParams {
        limit: None,
        low_priority: false,
    };
    let mut rest = url.clone();
    rest.set_query(None);
    let refused = |key: &str, value: &str, e: &dyn std::fmt::Display| -> Error {
        Error::Configuration(format!("sqlite URL parameter {key}={value}: {e}").into())
    };
    for (key, value) in url.query_pairs() {
        if key == LIMIT_PARAM {
            let millis: u64 = value.parse().map_err(|e| refused(&key, &value, &e))?;
            own.limit = Some(Duration::from_millis(millis));
        } else if key == LOW_PRIORITY_PARAM {
            own.low_priority = value.parse().map_err(|e| refused(&key, &value, &e))?;
        } else {
            rest.query_pairs_mut().append_pair(&key, &value);
        }
    }
    Ok((own, rest))
}

/// SQLite's options with the worker threads of low-priority connections named
/// [`LOW_PRIORITY_THREAD`]`N`.
pub(super) fn name_workers(
    options: SqliteConnectOptions,
    own: &GuardParams,
) -> SqliteConnectOptions {
    if own.low_priority {
        options.thread_name(|id| format!("{LOW_PRIORITY_THREAD}{id}"))
    } else {
        options
    }
}

#[cfg(test)]
mod tests {
    use super::super::guard::StatementGuard;
    use super::*;
    use crate::store::wrapped_driver::WrappedOptions;
    use sqlx_core::connection::ConnectOptions;

    type GuardedOptions = WrappedOptions<StatementGuard>;

    #[test]
    fn the_limit_is_taken_out_of_the_url_and_sqlite_keeps_the_rest() {
        let url = Url::parse("sqlite:///data/index.db?mode=ro&statement_limit_ms=11000").unwrap();
        let (own, rest) = split_own(&url).unwrap();
        assert_eq!(own.limit, Some(Duration::from_secs(11)));
        assert!(!own.low_priority);
        assert_eq!(rest.as_str(), "sqlite:///data/index.db?mode=ro");
        let options = GuardedOptions::from_url(&url).unwrap();
        assert_eq!(options.params.limit, Some(Duration::from_secs(11)));
        assert_eq!(
            options.base.get_filename(),
            std::path::Path::new("/data/index.db")
        );

        let plain = Url::parse("sqlite:///data/index.db?mode=rw").unwrap();
        let (own, rest) = split_own(&plain).unwrap();
        assert_eq!((own.limit, own.low_priority, rest), (None, false, plain));
        let alone = Url::parse("sqlite:///data/index.db?statement_limit_ms=5").unwrap();
        let (_, rest) = split_own(&alone).unwrap();
        assert_eq!(rest.as_str(), "sqlite:///data/index.db");
        let low = Url::parse("sqlite:///i.db?mode=ro&low_priority=true&statement_limit_ms=5");
        let (own, rest) = split_own(&low.unwrap()).unwrap();
        assert!(own.low_priority);
        assert_eq!(own.limit, Some(Duration::from_millis(5)));
        assert_eq!(rest.as_str(), "sqlite:///i.db?mode=ro");
    }

    #[test]
    fn a_limit_that_is_not_milliseconds_is_refused_by_name() {
        let url = Url::parse("sqlite:///data/index.db?statement_limit_ms=10s").unwrap();
        let error = GuardedOptions::from_url(&url).unwrap_err().to_string();
        assert!(error.contains("statement_limit_ms=10s"), "{error}");
        let url = Url::parse("sqlite:///data/index.db?low_priority=yes").unwrap();
        let error = GuardedOptions::from_url(&url).unwrap_err().to_string();
        assert!(error.contains("low_priority=yes"), "{error}");
    }
}
