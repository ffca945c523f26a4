//! The accept loop, in place of `axum::serve`, so that connections have limits of their own:
//! a header-read timeout (hyper's, started as soon as the server waits for a request head, so a
//! connection that sends nothing is closed too, and a kept-alive one left idle), an idle timeout
//! for a connection on which nothing moves ([`idle`]), and caps on open connections per client
//! and in all ([`slots`]), checked at accept: a connection over a cap is answered a short 429 or
//! 503 and closed before a byte of it is parsed. A trusted proxy's connections carry many
//! clients, so they count against the total only; its clients are told apart per request
//! ([`crate::client`]). Every request carries its peer (`ConnectInfo`), its client
//! ([`ClientKey`]) and its connection's slot ([`HeldConnection`], which a websocket keeps, so an
//! upgraded connection stays counted). Shutdown stops accepting, lets each connection finish
//! the request it is answering, and returns once they all closed.

mod idle;
pub mod slots;

use crate::client::{ClientKey, TrustedProxies};
use agentindex_indexer::config::ConnectionsConfig;
use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use slots::{Slot, SlotRefused, Slots};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower_service::Service;

/// How long to wait after a failed accept (out of file descriptors, say) before the next: the
/// error is most often the process's own limit, which only closing connections relieves.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The slot a request's connection holds; a websocket keeps a clone for as long as it lives.
#[derive(Debug, Clone)]
pub struct HeldConnection {
    _slot: Arc<Slot>,
}

/// What every connection is held to, as `[api.connections]` configures it.
#[derive(Debug, Clone)]
pub struct ConnectionPolicy {
    header_read_timeout: Duration,
    idle_timeout: Duration,
    slots: Slots,
    proxies: TrustedProxies,
}

impl ConnectionPolicy {
    /// The policy `config` sets (zero values were refused when it loaded).
    pub fn new(config: &ConnectionsConfig) -> Self {
        Self {
            header_read_timeout: Duration::from_secs(config.header_read_timeout_secs),
            idle_timeout: Duration::from_secs(config.idle_timeout_secs),
            slots: Slots::new(
                "connections",
                config.max_connections_per_client,
                config.max_connections,
            ),
            proxies: TrustedProxies::new(config.trusted_proxies.clone()),
        }
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.slots.held()
    }
}

/// Accepts connections on `listener` and serves `app` on each until `shutdown` turns true;
/// then waits for the open connections to finish what they are answering.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    policy: ConnectionPolicy,
    mut shutdown: watch::Receiver<bool>,
) {
    // Each connection holds a receiver; all of them dropped means every connection closed.
    let (closing, connections) = watch::channel(false);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop_requested(&mut shutdown) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                tracing::warn!(target: "agentindex::api", %error, "accepting a connection");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let slot = if policy.proxies.trusts(peer.ip()) {
            policy.slots.acquire_shared()
        } else {
            policy.slots.acquire(ClientKey::of(peer.ip()))
        };
        match slot {
            Ok(slot) => {
                let connection = Connection {
                    peer,
                    app: app.clone(),
                    policy: policy.clone(),
                    slot: HeldConnection {
                        _slot: Arc::new(slot),
                    },
                };
                tokio::spawn(connection.run(stream, connections.clone()));
            }
            Err(refused) => refuse(stream, peer, &refused),
        }
    }
    drop(connections);
    let _ = closing.send(true);
    closing.closed().await;
}

/// Resolves once `shutdown` is true, or never when nobody can ask for a shutdown any more.
async fn stop_requested(shutdown: &mut watch::Receiver<bool>) {
    while !*shutdown.borrow_and_update() {
        if shutdown.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Answers a connection over a cap with one short response, without reading it, and closes
/// it. The write never waits: what the socket buffer does not take is not sent.
fn refuse(stream: TcpStream, peer: SocketAddr, refused: &SlotRefused) {
    tracing::debug!(target: "agentindex::api", %peer, %refused, "connection refused");
    let status = match refused {
        SlotRefused::PerClient { .. } | SlotRefused::PerNetwork { .. } => "429 Too Many Requests",
        SlotRefused::Total { .. } => "503 Service Unavailable",
    };
    let body = format!("connection refused: {refused}\n");
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.try_write(response.as_bytes());
}

/// One accepted connection and what its requests carry.
struct Connection {
    peer: SocketAddr,
    app: Router,
    policy: ConnectionPolicy,
    slot: HeldConnection,
}

impl Connection {
    async fn run(self, stream: TcpStream, mut closing: watch::Receiver<bool>) {
        let activity = idle::Activity::new();
        let io = TokioIo::new(idle::Watched::new(stream, activity.clone()));
        let (peer, idle_timeout) = (self.peer, self.policy.idle_timeout);
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.policy.header_read_timeout);
        let served = builder
            .serve_connection(
                io,
                hyper::service::service_fn(move |request| self.answer(request)),
            )
            .with_upgrades();
        tokio::pin!(served);
        let mut shutting_down = false;
        loop {
            tokio::select! {
                result = served.as_mut() => {
                    if let Err(error) = result {
                        tracing::debug!(target: "agentindex::api", %peer, %error, "connection ended");
                    }
                    break;
                }
                () = stop_requested(&mut closing), if !shutting_down => {
                    shutting_down = true;
                    served.as_mut().graceful_shutdown();
                }
                () = activity.idle_for(idle_timeout) => {
                    tracing::debug!(target: "agentindex::api", %peer, ?idle_timeout, "closing an idle connection");
                    break;
                }
            }
        }
    }

    fn answer(
        &self,
        mut request: hyper::Request<Incoming>,
    ) -> impl Future<Output = Result<axum::response::Response, std::convert::Infallible>> + use<>
    {
        let client = self
            .policy
            .proxies
            .client(self.peer.ip(), request.headers());
        let extensions = request.extensions_mut();
        extensions.insert(ConnectInfo(self.peer));
        extensions.insert(client);
        extensions.insert(self.slot.clone());
        let mut app = self.app.clone();
        async move { app.call(request).await }
    }
}
