//! The connect options of [`super::DRIVER`]: SQLite's own, the time limit a `sqlite:` URL
//! asks for with [`LIMIT_PARAM`], and the lowered priority it asks for with
//! [`LOW_PRIORITY_PARAM`].

use super::connection::GuardedConnection;
use futures::future::BoxFuture;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx_core::Error;
use sqlx_core::any::AnyConnectOptions;
use sqlx_core::connection::ConnectOptions;
use std::str::FromStr;
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

/// SQLite's options, the time limit of every statement (`None`: statements run to their end)
/// and whether the connection's worker thread runs at the lowest priority.
#[derive(Debug, Clone)]
pub(crate) struct GuardedOptions {
    pub(super) sqlite: SqliteConnectOptions,
    pub(super) limit: Option<Duration>,
    pub(super) low_priority: bool,
}

/// What `url` asks of the driver beyond SQLite's own options.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OwnParams {
    limit: Option<Duration>,
    low_priority: bool,
}

/// Splits [`LIMIT_PARAM`] and [`LOW_PRIORITY_PARAM`] off `url`: what they set, and the URL
/// without them.
fn split_own(url: &Url) -> Result<(OwnParams, Url), Error> {
    let mut own = OwnParams {
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

impl FromStr for GuardedOptions {
    type Err = Error;

    fn from_str(url: &str) -> Result<Self, Error> {
        Self::from_url(&url.parse().map_err(Error::config)?)
    }
}

impl TryFrom<&AnyConnectOptions> for GuardedOptions {
    type Error = Error;

    /// What `Any` connects with: the URL, and the statement logging set on the pool.
    fn try_from(any: &AnyConnectOptions) -> Result<Self, Error> {
        let logs = &any.log_settings;
        Ok(Self::from_url(&any.database_url)?
            .log_statements(logs.statements_level)
            .log_slow_statements(logs.slow_statements_level, logs.slow_statements_duration))
    }
}

impl ConnectOptions for GuardedOptions {
    type Connection = GuardedConnection;

    fn from_url(url: &Url) -> Result<Self, Error> {
        let (own, sqlite_url) = split_own(url)?;
        let mut sqlite = SqliteConnectOptions::from_url(&sqlite_url)?;
        if own.low_priority {
            sqlite = sqlite.thread_name(|id| format!("{LOW_PRIORITY_THREAD}{id}"));
        }
        Ok(Self {
            sqlite,
            limit: own.limit,
            low_priority: own.low_priority,
        })
    }

    fn to_url_lossy(&self) -> Url {
        self.sqlite.to_url_lossy()
    }

    fn connect(&self) -> BoxFuture<'_, Result<GuardedConnection, Error>> {
        Box::pin(GuardedConnection::establish(
            &self.sqlite,
            self.limit,
            self.low_priority,
        ))
    }

    fn log_statements(mut self, level: log::LevelFilter) -> Self {
        self.sqlite = self.sqlite.log_statements(level);
        self
    }

    fn log_slow_statements(mut self, level: log::LevelFilter, duration: Duration) -> Self {
        self.sqlite = self.sqlite.log_slow_statements(level, duration);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_taken_out_of_the_url_and_sqlite_keeps_the_rest() {
        let url = Url::parse("sqlite:///data/index.db?mode=ro&statement_limit_ms=11000").unwrap();
        let (own, rest) = split_own(&url).unwrap();
        assert_eq!(own.limit, Some(Duration::from_secs(11)));
        assert!(!own.low_priority);
        assert_eq!(rest.as_str(), "sqlite:///data/index.db?mode=ro");
        let options = GuardedOptions::from_url(&url).unwrap();
        assert_eq!(options.limit, Some(Duration::from_secs(11)));
        assert_eq!(
            options.sqlite.get_filename(),
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
