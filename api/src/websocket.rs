//! `/graphql/ws`: GraphQL subscriptions over websockets (`graphql-transport-ws` and the older
//! `graphql-ws`), held to `[api.websocket]`. A websocket outlives every per-request limit, so
//! it has its own: messages and frames no larger than `max_message_bytes` (a larger one closes
//! the socket with 1009), at most `max_websockets_per_client` open per client (over it, the
//! upgrade is answered 429), and at most `max_subscriptions_per_connection` live at once on one
//! socket, subscriptions and running queries together (over it, the new one gets a GraphQL
//! error; see [`crate::graphql::subscription_places`]). A socket also ends when nothing has
//! been live on it, the client has answered no ping, or has left a message unread for
//! `idle_timeout_secs`, so a quiet or stalled client does not keep its place; and a client
//! sending more than 50 messages a second (bursts of 200) is closed with 4429.

use crate::client::ClientKey;
use crate::connections::HeldConnection;
use crate::connections::slots::Slots;
use crate::graphql::AgentSchema;
use crate::graphql::subscription_places::LiveSubscriptions;
use crate::time_share::{ChargeTo, TimeShare};
use agentindex_indexer::config::WebsocketConfig;
use async_graphql::Data;
use async_graphql::http::ALL_WEBSOCKET_PROTOCOLS;
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::Extension;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use governor::{Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What the websocket route holds: the schema and the per-client websocket count.
#[derive(Clone)]
pub(crate) struct Websockets {
    schema: AgentSchema,
    open: Slots,
    max_message_bytes: usize,
    max_subscriptions: usize,
    idle: Duration,
    time: Arc<TimeShare>,
}

impl Websockets {
    /// Websockets over `schema` as `config` limits them, the queries sent over them charged to
    /// their client's share of the server's `time`.
    pub(crate) fn new(schema: AgentSchema, config: &WebsocketConfig, time: Arc<TimeShare>) -> Self {
        Self {
            schema,
            // The total is the connection cap's business; websockets are capped per client.
            open: Slots::new("websockets", config.max_websockets_per_client, usize::MAX),
            max_message_bytes: config.max_message_bytes,
            max_subscriptions: config.max_subscriptions_per_connection,
            idle: config.idle_timeout(),
            time,
        }
    }
}

/// `GET /graphql/ws`: upgrades to a GraphQL websocket unless the client holds its share.
pub(crate) async fn subscribe(
    State(websockets): State<Websockets>,
    client: ClientKey,
    connection: Option<Extension<HeldConnection>>,
    protocol: GraphQLProtocol,
    upgrade: WebSocketUpgrade,
) -> Response {
    let slot = match websockets.open.acquire(client) {
        Ok(slot) => slot,
        Err(refused) => {
            tracing::debug!(target: "agentindex::api", %client, %refused, "websocket refused");
            return (
                StatusCode::TOO_MANY_REQUESTS,
                format!("websocket refused: {refused}"),
            )
                .into_response();
        }
    };
    let live = LiveSubscriptions::new(websockets.max_subscriptions);
    let mut data = Data::default();
    data.insert(live.clone());
    data.insert(ChargeTo {
        time: Arc::clone(&websockets.time),
        client,
    });
    let max_bytes = websockets.max_message_bytes;
    let watch = Watch {
        heard: Heard::new(),
        live,
        idle: websockets.idle,
        max_message_bytes: max_bytes,
    };
    upgrade
        .max_message_size(max_bytes)
        .max_frame_size(max_bytes)
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| async move {
            // Both slots live exactly as long as the socket.
            let _slots = (slot, connection);
            serve(socket, websockets.schema, protocol, data, watch).await;
        })
}

/// Runs the GraphQL protocol over `socket` until either side ends it: async-graphql speaks the
/// protocol into a short queue, and [`write`] alone writes to the socket, so it can ping, watch
/// for idleness and stop waiting on a client that does not read. A message over `max_bytes`
/// ends the socket with close code 1009 (message too big).
async fn serve(
    socket: WebSocket,
    schema: AgentSchema,
    protocol: GraphQLProtocol,
    data: Data,
    watch: Watch,
) {
    let (sink, stream) = socket.split();
    let too_big = Arc::new(AtomicBool::new(false));
    let noted = Arc::clone(&too_big);
    let heard = watch.heard.clone();
    let stream = stream.inspect(move |message| match message {
        Ok(_) => heard.note(),
        // Tungstenite refuses the message whole, before buffering it; its error ends the read.
        Err(error) if error.to_string().contains("Message too long") => {
            noted.store(true, Ordering::Relaxed);
        }
        Err(_) => {}
    });
    // A client may send only so many messages a second: each one is parsed, and a start is
    // validated, before any place is taken.
    let flooded = Arc::new(AtomicBool::new(false));
    let over = Arc::clone(&flooded);
    let rate = RateLimiter::direct(
        Quota::per_second(NonZeroU32::new(MESSAGES_PER_SECOND).expect("not zero"))
            .allow_burst(NonZeroU32::new(MESSAGES_BURST).expect("not zero")),
    );
    let stream = stream.take_while(move |message| {
        let within = matches!(message, Ok(Message::Pong(_))) || rate.check().is_ok();
        if !within {
            over.store(true, Ordering::Relaxed);
        }
        std::future::ready(within)
    });
    let (queue, queued) = mpsc::channel::<Message>(OUTGOING_QUEUE);
    let queue = futures_util::sink::unfold(queue, |queue, message| async move {
        queue.send(message).await.map(|()| queue)
    });
    let graphql = GraphQLWebSocket::new_with_pair(queue, stream, schema, protocol)
        .with_data(data)
        .serve();
    let writer = write(sink, queued, &watch);
    futures_util::pin_mut!(graphql, writer);
    // When the protocol ends first, what it queued last (an error, a close) is still written.
    let (mut sink, ending) = match futures_util::future::select(graphql, writer).await {
        Either::Left(((), writer)) => writer.await,
        Either::Right((written, _graphql)) => written,
    };
    let max_bytes = watch.max_message_bytes;
    let close = if too_big.load(Ordering::Relaxed) {
        tracing::debug!(target: "agentindex::api", max_bytes, "websocket message too big");
        Some((
            close_code::SIZE,
            format!("a message was larger than {max_bytes} bytes"),
        ))
    } else if flooded.load(Ordering::Relaxed) {
        tracing::debug!(target: "agentindex::api", "websocket client sent too many messages");
        Some((
            CLOSE_TOO_MANY_MESSAGES,
            format!(
                "more than {MESSAGES_PER_SECOND} messages a second (bursts of {MESSAGES_BURST})"
            ),
        ))
    } else {
        ending.close_frame(watch.idle)
    };
    if let Some((code, reason)) = close {
        let frame = Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        }));
        let _ = tokio::time::timeout(watch.idle, sink.send(frame)).await;
    }
}

/// Messages a client may send a second on one socket, and in a burst; past them the socket is
/// closed with [`CLOSE_TOO_MANY_MESSAGES`] (pongs are not counted).
const MESSAGES_PER_SECOND: u32 = 50;
const MESSAGES_BURST: u32 = 200;
/// The close code for a client that sent too many messages (4429: 4000 and up are the
/// application's; graphql-ws uses 44xx for the client's mistakes).
const CLOSE_TOO_MANY_MESSAGES: u16 = 4429;

/// Messages async-graphql may queue for a socket before it waits for the socket to take them.
const OUTGOING_QUEUE: usize = 16;

/// What [`write`] watches on one socket.
struct Watch {
    /// When the client was last heard from (any message, pongs included).
    heard: Heard,
    /// The socket's live operations.
    live: LiveSubscriptions,
    /// `[api.websocket] idle_timeout_secs`.
    idle: Duration,
    /// `[api.websocket] max_message_bytes`, for the close reason.
    max_message_bytes: usize,
}

/// When a client was last heard from, shared between the reading and the writing side.
#[derive(Clone)]
struct Heard(Arc<Mutex<Instant>>);

impl Heard {
    fn new() -> Self {
        Self(Arc::new(Mutex::new(Instant::now())))
    }

    fn note(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn elapsed(&self) -> Duration {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).elapsed()
    }
}

/// Why the writing side stopped.
enum Ending {
    /// The protocol ended (the client closed, or sent something it cannot take).
    Done,
    /// Nothing was live on the socket for the idle time.
    Idle,
    /// The client answered no ping for the idle time.
    Unanswered,
    /// The client left a message unread for the idle time.
    Unread,
}

impl Ending {
    /// The close frame the socket ends with, if one can still be sent.
    fn close_frame(&self, idle: Duration) -> Option<(u16, String)> {
        let secs = idle.as_secs();
        match self {
            Ending::Done | Ending::Unread => None,
            Ending::Idle => Some((
                close_code::NORMAL,
                format!("nothing was live on this websocket for {secs} s"),
            )),
            Ending::Unanswered => {
                Some((close_code::AWAY, format!("no answer to pings for {secs} s")))
            }
        }
    }
}

/// Writes what the protocol queues to `sink`, pings the client every half of the idle time,
/// and gives up on a socket that had nothing live, answered nothing, or left a message unread
/// for the idle time. Hands the sink back with why it stopped.
async fn write(
    mut sink: SplitSink<WebSocket, Message>,
    mut queued: mpsc::Receiver<Message>,
    watch: &Watch,
) -> (SplitSink<WebSocket, Message>, Ending) {
    let idle = watch.idle;
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + idle / 2, idle / 2);
    let mut busy_at = Instant::now();
    loop {
        let message = tokio::select! {
            message = queued.recv() => match message {
                Some(message) => {
                    // An answer went out: the socket is in use, whatever is live at the next
                    // tick (a query answered between two ticks counts).
                    busy_at = Instant::now();
                    message
                }
                None => return (sink, Ending::Done),
            },
            _ = ticks.tick() => {
                if watch.live.live() > 0 {
                    busy_at = Instant::now();
                } else if busy_at.elapsed() >= idle {
                    return (sink, Ending::Idle);
                }
                if watch.heard.elapsed() >= idle {
                    return (sink, Ending::Unanswered);
                }
                Message::Ping(Default::default())
            }
        };
        match tokio::time::timeout(idle, sink.send(message)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return (sink, Ending::Done),
            Err(_) => return (sink, Ending::Unread),
        }
    }
}
