//! `[api.websocket]`: what one client may hold over GraphQL subscriptions (`/graphql/ws`). A
//! websocket outlives every per-request limit, so it gets its own: message size, sockets per
//! client, live operations per socket, how far back a `sinceBlock` replay may reach, and how
//! long a socket may sit idle or unanswered.

use super::{ConfigError, ConfigResult};
use serde::Deserialize;

/// The longest `idle_timeout_secs` allowed: a day.
const MAX_IDLE_TIMEOUT_SECS: u64 = 86_400;

/// `[api.websocket]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebsocketConfig {
    /// Largest websocket message (and frame) a client may send, in bytes; a larger one closes
    /// the socket. The same as the HTTP body cap by default.
    #[serde(default = "WebsocketConfig::default_max_message_bytes")]
    pub max_message_bytes: usize,
    /// Websockets one client may hold open at once; over it, the upgrade is answered 429.
    #[serde(default = "WebsocketConfig::default_max_websockets_per_client")]
    pub max_websockets_per_client: usize,
    /// Subscriptions live at once on one websocket; over it, a new one gets an error.
    #[serde(default = "WebsocketConfig::default_max_subscriptions_per_connection")]
    pub max_subscriptions_per_connection: usize,
    /// How many blocks behind the newest final block a `sinceBlock` replay may start; further
    /// back is refused (the replay reads every change since, in pages).
    #[serde(default = "WebsocketConfig::default_max_replay_blocks")]
    pub max_replay_blocks: u64,
    /// Seconds a websocket may go with nothing live on it (no subscription, no running query)
    /// before it is closed; also how long a client may leave the server's pings unanswered
    /// (it is pinged every half of this), and how long it may leave a message unread.
    #[serde(default = "WebsocketConfig::default_idle_timeout_secs")]
    pub idle_timeout_secs: u64,
}

impl WebsocketConfig {
    fn default_max_message_bytes() -> usize {
        64 * 1024
    }
    fn default_max_websockets_per_client() -> usize {
        16
    }
    fn default_max_subscriptions_per_connection() -> usize {
        50
    }
    fn default_max_replay_blocks() -> u64 {
        100_000
    }
    fn default_idle_timeout_secs() -> u64 {
        60
    }

    /// How long a socket may sit idle, unanswered or unread ([`Self::idle_timeout_secs`]).
    pub fn idle_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.idle_timeout_secs)
    }

    pub(super) fn validate(&self) -> ConfigResult<()> {
        for (key, value) in [
            ("api.websocket.max_message_bytes", self.max_message_bytes),
            (
                "api.websocket.max_websockets_per_client",
                self.max_websockets_per_client,
            ),
            (
                "api.websocket.max_subscriptions_per_connection",
                self.max_subscriptions_per_connection,
            ),
            (
                "api.websocket.max_replay_blocks",
                usize::try_from(self.max_replay_blocks).unwrap_or(usize::MAX),
            ),
            (
                "api.websocket.idle_timeout_secs",
                usize::try_from(self.idle_timeout_secs).unwrap_or(usize::MAX),
            ),
        ] {
            if value == 0 {
                return Err(ConfigError::Key {
                    key: key.into(),
                    message: "must be at least 1".into(),
                });
            }
        }
        if self.idle_timeout_secs > MAX_IDLE_TIMEOUT_SECS {
            return Err(ConfigError::Key {
                key: "api.websocket.idle_timeout_secs".into(),
                message: format!("must be at most {MAX_IDLE_TIMEOUT_SECS} (a day)"),
            });
        }
        Ok(())
    }
}

impl Default for WebsocketConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: Self::default_max_message_bytes(),
            max_websockets_per_client: Self::default_max_websockets_per_client(),
            max_subscriptions_per_connection: Self::default_max_subscriptions_per_connection(),
            max_replay_blocks: Self::default_max_replay_blocks(),
            idle_timeout_secs: Self::default_idle_timeout_secs(),
        }
    }
}
