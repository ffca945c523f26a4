//! A raw graphql-transport-ws client for the tests that send what a well-behaved client never
//! would (oversized messages, subscription floods) and read the refusals that come back.

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// An answer to a message comes back within this, or the server is taken to have stalled.
const ANSWER_WITHIN: Duration = Duration::from_secs(2);

/// A graphql-transport-ws socket from the attacker's address, initialised.
pub(crate) async fn websocket(
    base: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>> {
    let url = format!("{}/graphql/ws", base.replacen("http", "ws", 1));
    let mut request =
        tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(url)
            .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        "graphql-transport-ws".parse().unwrap(),
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let init = json!({ "type": "connection_init" }).to_string();
    socket.send(Message::text(init)).await.unwrap();
    let ack = next_json(&mut socket).await;
    assert_eq!(ack["type"], "connection_ack", "{ack}");
    socket
}

/// The next text message of `socket` as JSON (pings skipped), within the refusal budget.
pub(crate) async fn next_json<S>(socket: &mut S) -> Value
where
    S: StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        let message = tokio::time::timeout(ANSWER_WITHIN, socket.next())
            .await
            .expect("the server answers the socket in time")
            .expect("the socket is open")
            .expect("a message");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).unwrap();
        }
    }
}

/// The first error message of a graphql-transport-ws answer that refuses a subscription: an
/// `error` message, or a `next` whose payload has errors and no data.
pub(crate) fn refusal(answer: &Value) -> Option<String> {
    let errors = match answer["type"].as_str() {
        Some("error") => &answer["payload"],
        Some("next") if answer["payload"]["data"].is_null() => &answer["payload"]["errors"],
        _ => return None,
    };
    errors[0]["message"].as_str().map(str::to_string)
}

/// Subscribes `query` as `id` on `socket` and returns the server's first message for it.
pub(crate) async fn subscribe<S>(socket: &mut S, id: &str, query: &str) -> Value
where
    S: SinkExt<Message>
        + StreamExt<Item = Result<Message, tokio_tungstenite::tungstenite::Error>>
        + Unpin,
    <S as futures::Sink<Message>>::Error: std::fmt::Debug,
{
    let subscribe = json!({ "id": id, "type": "subscribe", "payload": { "query": query } });
    socket
        .send(Message::text(subscribe.to_string()))
        .await
        .unwrap();
    // Messages of earlier subscriptions (their `complete`) may come first.
    loop {
        let message = next_json(socket).await;
        if message["id"] == id {
            return message;
        }
    }
}
