//! The connect options of [`super::DRIVER`]: SQLite's own, and the time limit a `sqlite:` URL
//! asks for with [`LIMIT_PARAM`].

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

/// SQLite's options and the time limit of every statement (`None`: statements run to their end).
#[derive(Debug, Clone)]
pub(crate) struct GuardedOptions {
    pub(super) sqlite: SqliteConnectOptions,
    pub(super) limit: Option<Duration>,
}

/// Splits [`LIMIT_PARAM`] off `url`: the limit it sets, and the URL without it.
fn split_limit(url: &Url) -> Result<(Option<Duration>, Url), Error> {
    let mut limit = None;
    let mut rest = url.clone();
    rest.set_query(None);
    for (key, value) in url.query_pairs() {
        if key == LIMIT_PARAM {
            let millis: u64 = value.parse().map_err(|e| {
                Error::Configuration(
                    format!("sqlite URL parameter {LIMIT_PARAM}={value}: {e}").into(),
                )
            })?;
            limit = Some(Duration::from_millis(millis));
        } else {
            rest.query_pairs_mut().append_pair(&key, &value);
        }
    }
    Ok((limit, rest))
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
        let (limit, sqlite_url) = split_limit(url)?;
        Ok(Self {
            sqlite: SqliteConnectOptions::from_url(&sqlite_url)?,
            limit,
        })
    }

    fn to_url_lossy(&self) -> Url {
        self.sqlite.to_url_lossy()
    }

    fn connect(&self) -> BoxFuture<'_, Result<GuardedConnection, Error>> {
        Box::pin(GuardedConnection::establish(&self.sqlite, self.limit))
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
        let (limit, rest) = split_limit(&url).unwrap();
        assert_eq!(limit, Some(Duration::from_secs(11)));
        assert_eq!(rest.as_str(), "sqlite:///data/index.db?mode=ro");
        let options = GuardedOptions::from_url(&url).unwrap();
        assert_eq!(options.limit, Some(Duration::from_secs(11)));
        assert_eq!(
            options.sqlite.get_filename(),
            std::path::Path::new("/data/index.db")
        );

        let plain = Url::parse("sqlite:///data/index.db?mode=rw").unwrap();
        assert_eq!(split_limit(&plain).unwrap(), (None, plain.clone()));
        let alone = Url::parse("sqlite:///data/index.db?statement_limit_ms=5").unwrap();
        let (_, rest) = split_limit(&alone).unwrap();
        assert_eq!(rest.as_str(), "sqlite:///data/index.db");
    }

    #[test]
    fn a_limit_that_is_not_milliseconds_is_refused_by_name() {
        let url = Url::parse("sqlite:///data/index.db?statement_limit_ms=10s").unwrap();
        let error = GuardedOptions::from_url(&url).unwrap_err().to_string();
        assert!(error.contains("statement_limit_ms=10s"), "{error}");
    }
}
