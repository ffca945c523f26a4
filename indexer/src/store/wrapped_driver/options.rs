//! The connect options of a wrapped driver: the native options, read from the URL the wrapper
//! leaves once its own parameters are split off ([`Wrapper::split_url`]), and what those
//! parameters asked.

use super::connection::WrappedConnection;
use super::{BaseOptions, Wrapper};
use futures::future::BoxFuture;
use sqlx_core::Error;
use sqlx_core::any::AnyConnectOptions;
use sqlx_core::connection::ConnectOptions;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;
use url::Url;

/// The native options and the wrapper's parameters.
pub(crate) struct WrappedOptions<W: Wrapper> {
    pub(crate) base: BaseOptions<W>,
    pub(crate) params: W::Params,
}

impl<W: Wrapper> fmt::Debug for WrappedOptions<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WrappedOptions")
            .field("base", &self.base)
            .field("params", &self.params)
            .finish()
    }
}

impl<W: Wrapper> Clone for WrappedOptions<W> {
    fn clone(&self) -> Self {
        Self {
            base: self.base.clone(),
            params: self.params.clone(),
        }
    }
}

impl<W: Wrapper> FromStr for WrappedOptions<W> {
    type Err = Error;

    fn from_str(url: &str) -> Result<Self, Error> {
        Self::from_url(&url.parse().map_err(Error::config)?)
    }
}

impl<W: Wrapper> TryFrom<&AnyConnectOptions> for WrappedOptions<W> {
    type Error = Error;

    /// What `Any` connects with: the URL, and the statement logging set on the pool.
    fn try_from(any: &AnyConnectOptions) -> Result<Self, Error> {
        let logs = &any.log_settings;
        Ok(Self::from_url(&any.database_url)?
            .log_statements(logs.statements_level)
            .log_slow_statements(logs.slow_statements_level, logs.slow_statements_duration))
    }
}

impl<W: Wrapper> ConnectOptions for WrappedOptions<W> {
    type Connection = WrappedConnection<W>;

    fn from_url(url: &Url) -> Result<Self, Error> {
        let (params, base_url) = W::split_url(url)?;
        let base = W::adjust(BaseOptions::<W>::from_url(&base_url)?, &params);
        Ok(Self { base, params })
    }

    fn to_url_lossy(&self) -> Url {
        self.base.to_url_lossy()
    }

    fn connect(&self) -> BoxFuture<'_, Result<WrappedConnection<W>, Error>> {
        Box::pin(async move {
            let mut base = self.base.connect().await?;
            let wrapper = W::attach(&mut base, &self.params).await?;
            Ok(WrappedConnection { base, wrapper })
        })
    }

    fn log_statements(mut self, level: log::LevelFilter) -> Self {
        self.base = self.base.log_statements(level);
        self
    }

    fn log_slow_statements(mut self, level: log::LevelFilter, duration: Duration) -> Self {
        self.base = self.base.log_slow_statements(level, duration);
        self
    }
}
