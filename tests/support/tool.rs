//! Programs of the pinned tooling (SDK drivers, GraphQL clients, signers) that read one JSON
//! document on stdin and print one on stdout.

use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `command` with `input` on its stdin and returns the JSON it prints; `what` names it in
/// the panic when it cannot start, fails or prints something else.
pub(crate) fn json_through(mut command: Command, input: &Value, what: &str) -> Value {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what} (run scripts/install-tools): {e}"));
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.to_string().as_bytes())
        .unwrap_or_else(|e| panic!("writing to {what}: {e}"));
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("waiting for {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{what} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}
