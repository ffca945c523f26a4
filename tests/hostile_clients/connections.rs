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
/// checks that the server never holds more than the per-client cap of them at once, closes the
/// others at once, and closes every held one soon after the header timeout. Each connection is
/// timed from its own opening, so a connect loop slowed by a busy machine changes nothing.
pub(super) async fn slow_headers_are_cut_off(base: &str, count: usize) {
    let address = base.trim_start_matches("http://").to_string();
    let patience = Duration::from_secs(HEADER_TIMEOUT_SECS + 3);
    let mut watched = Vec::with_capacity(count);
    for _ in 0..count {
        let opened = Instant::now();
        let Ok(mut stream) = TcpStream::connect(&address).await else {
            // Refused outright is as good as closed.
            continue;
        };
        let _ = stream
            .write_all(b"GET /graphql HTTP/1.1\r\nHost: attacker\r\nX-Slow: ")
            .await;
        // Read at once, so the close is seen when it happens and not after the loop.
        watched.push(tokio::spawn(async move {
            let mut buffer = [0u8; 512];
            loop {
                match tokio::time::timeout(patience, stream.read(&mut buffer)).await {
                    Ok(Ok(0)) | Ok(Err(_)) => return (opened, Some(Instant::now())),
                    // A 408 or similar answer before the close is fine: read on to the close.
                    Ok(Ok(_)) => continue,
                    Err(_) => return (opened, None),
                }
            }
        }));
    }
    let mut lives = Vec::with_capacity(watched.len());
    for watch in watched {
        let (opened, closed) = watch.await.expect("a connection's watch ends");
        let closed =
            closed.unwrap_or_else(|| panic!("a slow connection was held past {patience:?}"));
        lives.push((opened, closed));
    }
    // Held: open longer than half the header timeout (one closed at once lasts milliseconds).
    let held_for = Duration::from_millis(HEADER_TIMEOUT_SECS * 500);
    let held: Vec<_> = lives
        .iter()
        .filter(|(opened, closed)| *closed - *opened >= held_for)
        .collect();
    // Held at once at a connection's opening: those opened before it and seen closed more
    // than `held_for` after it (a close is seen a little late on a busy machine).
    let most_at_once = held
        .iter()
        .map(|(opened, _)| {
            held.iter()
                .filter(|(o, c)| o <= opened && *opened + held_for < *c)
                .count()
        })
        .max()
        .unwrap_or(0);
    assert!(
        most_at_once <= CONNECTIONS_PER_CLIENT,
        "{most_at_once} slow connections were held at once: the per-client cap is \
         {CONNECTIONS_PER_CLIENT}"
    );
    // Some are held (other connections of this client may hold part of the cap).
    assert!(
        !held.is_empty(),
        "no slow connection was held to the header timeout: all were closed at once"
    );
    assert!(
        held.len() < lives.len(),
        "none of {} slow connections was closed at once past the cap of {CONNECTIONS_PER_CLIENT}",
        lives.len()
    );
}
