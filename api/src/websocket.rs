//! `/graphql/ws`: GraphQL subscriptions over websockets (`graphql-transport-ws` and the older
//! `graphql-ws`), held to `[api.websocket]`. A websocket outlives every per-request limit, so
//! it has its own: messages and frames no larger than `max_message_bytes` (a larger one closes
//! the socket with 1009), at most `max_websockets_per_client` open per client (over it, the
//! upgrade is answered 429), and at most `max_subscriptions_per_connection` live at once on one
//! socket (over it, the new subscription gets a GraphQL error; see
//! [`crate::graphql::subscription_places`]).

use crate::client::ClientKey;
use crate::connections::HeldConnection;
use crate::connections::slots::Slots;
use crate::graphql::AgentSchema;
use crate::graphql::subscription_places::LiveSubscriptions;
use agentindex_indexer::config::WebsocketConfig;
use async_graphql::Data;
use async_graphql::http::ALL_WEBSOCKET_PROTOCOLS;
use async_graphql_axum::{GraphQLProtocol, GraphQLWebSocket};
use axum::Extension;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::{SinkExt, StreamExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What the websocket route holds: the schema and the per-client websocket count.
#[derive(Clone)]
pub(crate) struct Websockets {
    schema: AgentSchema,
    open: Slots,
    max_message_bytes: usize,
    max_subscriptions: usize,
}

impl Websockets {
    /// Websockets over `schema` as `config` limits them.
    pub(crate) fn new(schema: AgentSchema, config: &WebsocketConfig) -> Self {
        Self {
            schema,
            // The total is the connection cap's business; websockets are capped per client.
            open: Slots::new("websockets", config.max_websockets_per_client, usize::MAX),
            max_message_bytes: config.max_message_bytes,
            max_subscriptions: config.max_subscriptions_per_connection,
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
    let mut data = Data::default();
    data.insert(LiveSubscriptions::new(websockets.max_subscriptions));
    let max_bytes = websockets.max_message_bytes;
    upgrade
        .max_message_size(max_bytes)
        .max_frame_size(max_bytes)
        .protocols(ALL_WEBSOCKET_PROTOCOLS)
        .on_upgrade(move |socket| async move {
            // Both slots live exactly as long as the socket.
            let _slots = (slot, connection);
            serve(socket, websockets.schema, protocol, data, max_bytes).await;
        })
}

/// Runs the GraphQL protocol over `socket` until either side ends it; a message over
/// `max_bytes` ends it with close code 1009 (message too big).
async fn serve(
    socket: WebSocket,
    schema: AgentSchema,
    protocol: GraphQLProtocol,
    data: Data,
    max_bytes: usize,
) {
    let (mut sink, stream) = socket.split();
    let too_big = Arc::new(AtomicBool::new(false));
    let noted = Arc::clone(&too_big);
    let stream = stream.inspect(move |message| {
        // Tungstenite refuses the message whole, before buffering it; its error ends the read.
        if let Err(error) = message
            && error.to_string().contains("Message too long")
        {
            noted.store(true, Ordering::Relaxed);
        }
    });
    GraphQLWebSocket::new_with_pair(&mut sink, stream, schema, protocol)
        .with_data(data)
        .serve()
        .await;
    if too_big.load(Ordering::Relaxed) {
        tracing::debug!(target: "agentindex::api", max_bytes, "websocket message too big");
        let reason = format!("a message was larger than {max_bytes} bytes");
        let _ = sink
            .send(Message::Close(Some(CloseFrame {
                code: close_code::SIZE,
                reason: reason.into(),
            })))
            .await;
    }
}
