//! Attacks on the connections themselves: websockets past their caps, and connections that
//! never finish their headers.

use super::*;

pub(super) async fn websocket_attacks_are_refused(base: &str) {
    // A fragment bomb, subscribed.
    let mut socket = websocket(base).await;
    let bomb =
        fragment_bomb("newPayments", "Payment", "amount", 24).replacen("query", "subscription", 1);
    let answer = subscribe(&mut socket, "bomb", &bomb).await;
    assert!(
        refusal(&answer).is_some(),
        "a subscribed fragment bomb is refused: {answer}"
    );

    // A replay from block 0 when only the last 5 blocks may be replayed.
    let answer = subscribe(
        &mut socket,
        "replay",
        "subscription { newPayments(sinceBlock: 0) { amount } }",
    )
    .await;
    let said = refusal(&answer).unwrap_or_default();
    assert!(
        said.contains("at most 5 blocks back"),
        "a replay from too far back is refused: {answer}"
    );

    // More subscriptions than one socket may hold: of 51 sent on a fresh socket, one is refused
    // naming the cap (the other 50 stay live and quiet).
    let mut socket = websocket(base).await;
    for n in 0..=50 {
        let subscribe = json!({ "id": format!("s{n}"), "type": "subscribe",
            "payload": { "query": "subscription { newPayments { amount } }" } });
        socket
            .send(Message::text(subscribe.to_string()))
            .await
            .unwrap();
    }
    let answer = next_json(&mut socket).await;
    assert!(
        refusal(&answer).is_some_and(|said| said.contains("max_subscriptions_per_connection")),
        "the 51st subscription is refused naming the cap: {answer}"
    );

    // A message over the size cap closes the socket.
    let big = json!({ "type": "ping", "payload": { "pad": "x".repeat(1 << 20) } });
    let _ = socket.send(Message::text(big.to_string())).await;
    let closed = tokio::time::timeout(REFUSAL_BUDGET, async {
        loop {
            match socket.next().await {
                None | Some(Err(_)) => return true,
                Some(Ok(Message::Close(_))) => return true,
                Some(Ok(_)) => continue,
            }
        }
    })
    .await;
    assert_eq!(closed, Ok(true), "a 1 MiB message closes the socket");
}

/// Opens `count` connections that send part of a request's headers and then nothing, and
/// checks that those over the per-client cap are closed at once and every other one soon after
/// the header timeout.
pub(super) async fn slow_headers_are_cut_off(base: &str, count: usize) {
    let address = base.trim_start_matches("http://").to_string();
    let began = Instant::now();
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        let Ok(mut stream) = TcpStream::connect(&address).await else {
            // Refused outright is as good as closed.
            continue;
        };
        let _ = stream
            .write_all(b"GET /graphql HTTP/1.1\r\nHost: attacker\r\nX-Slow: ")
            .await;
        held.push(stream);
    }
    let deadline = Duration::from_secs(HEADER_TIMEOUT_SECS + 3);
    let closed_after = futures::future::join_all(held.into_iter().map(|mut stream| async move {
        let mut buffer = [0u8; 512];
        loop {
            match tokio::time::timeout(deadline, stream.read(&mut buffer)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return Some(began.elapsed()),
                // A 408 or similar answer before the close is fine: read on to the close.
                Ok(Ok(_)) => continue,
                Err(_) => return None,
            }
        }
    }))
    .await;
    let open = closed_after.iter().filter(|c| c.is_none()).count();
    assert_eq!(
        open, 0,
        "{open} of {count} slow connections were still held"
    );
    let at_once = closed_after
        .iter()
        .flatten()
        .filter(|after| after.as_secs() < HEADER_TIMEOUT_SECS)
        .count();
    assert!(
        at_once >= count - CONNECTIONS_PER_CLIENT,
        "only {at_once} of {count} were closed before the header timeout: the per-client cap is \
         {CONNECTIONS_PER_CLIENT}"
    );
}
