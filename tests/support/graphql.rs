//! Real GraphQL clients for tests: the npm `graphql-request` library
//! (`tools/graphql/query.mjs`) for queries and `graphql-ws` (`tools/graphql/subscribe.mjs`) for
//! subscriptions, each run by node as an SDK would use it.

use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};

/// Runs `requests` ([{query, variables}]) through graphql-request against `endpoint`.
pub(crate) fn gql(endpoint: &str, requests: Value) -> Vec<Value> {
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/graphql");
    let mut command = Command::new("node");
    command.arg("query.mjs").arg(endpoint).current_dir(&tools);
    let answers = super::tool::json_through(command, &requests, "graphql-request");
    serde_json::from_value(answers).expect("an answer per request")
}

/// One query's data, failing on errors.
pub(crate) fn data(endpoint: &str, query: &str, variables: Value) -> Value {
    let mut results = gql(
        endpoint,
        json!([{ "query": query, "variables": variables }]),
    );
    let result = results.remove(0);
    assert!(result.get("errors").is_none(), "{query}: {result}");
    result["data"].clone()
}

/// Starts `tools/graphql/subscribe.mjs` for `count` events of `query`.
pub(crate) fn subscriber(ws: &str, query: &str, variables: Value, count: usize) -> Child {
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/graphql");
    Command::new("node")
        .arg("subscribe.mjs")
        .args([
            ws,
            query,
            &variables.to_string(),
            &count.to_string(),
            "60000",
        ])
        .current_dir(&tools)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs")
}

/// Waits until `subscriber` says the server acknowledged its connection.
pub(crate) fn wait_connected(subscriber: &mut Child) {
    use std::io::BufRead;
    let stderr = subscriber.stderr.take().expect("stderr is piped");
    let mut lines = std::io::BufReader::new(stderr).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.trim() == "connected" => break,
            Some(Ok(_)) => continue,
            other => panic!("the subscriber ended before connecting: {other:?}"),
        }
    }
    // Keep draining stderr so the subscriber never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
}

/// The events a subscriber printed, once it got them all.
pub(crate) fn events_of(child: Child) -> Vec<Value> {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "graphql-ws subscriber failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The (payer, amount) of each `newPayments` event, in order.
pub(crate) fn payments_heard(events: &[Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            let payment = &e["newPayments"];
            (
                payment["payer"].as_str().unwrap().to_string(),
                payment["amount"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
