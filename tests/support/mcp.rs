//! Driving the MCP server from tests: the official clients' drivers (`tools/mcp_clients/`),
//! the MCP Inspector's CLI (`tools/inspector/`), and comparing their answers with `/graphql`'s.

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// Runs `job` through one client's driver: `node client.mjs` or `python client.py`.
pub(crate) fn client(program: &str, job: &Value) -> Value {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    let (program, script) = if program == "python" {
        (
            tools.join(".venv/bin/python").display().to_string(),
            "client.py",
        )
    } else {
        ("node".to_string(), "client.mjs")
    };
    let mut command = Command::new(program);
    command
        .arg(tools.join("mcp_clients").join(script))
        .current_dir(&tools);
    super::tool::json_through(command, job, script)
}

/// Runs the MCP Inspector's CLI mode (`tools/inspector`) against `url` with `arguments`, its
/// catalogue file kept in `home`, and reads what it prints.
pub(crate) fn inspector(url: &str, home: &Path, arguments: &[&str]) -> Value {
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/inspector");
    let output = Command::new("node")
        .arg(tools.join("node_modules/.bin/mcp-inspector"))
        .arg("--cli")
        .arg(url)
        .args(arguments)
        .env("HOME", home)
        .env("MCP_CATALOG_PATH", home.join("mcp.json"))
        .current_dir(&tools)
        .output()
        .expect("starting the MCP Inspector (run scripts/install-tools)");
    assert!(
        output.status.success(),
        "the Inspector failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "the Inspector printed no JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

/// Asserts every field `expected` has is in `actual` with the same value (lists element by
/// element, in order); `actual` may have more fields.
pub(crate) fn assert_holds(actual: &Value, expected: &Value, path: &str) {
    match (actual, expected) {
        (Value::Object(actual), Value::Object(expected)) => {
            for (key, value) in expected {
                let inner = actual
                    .get(key)
                    .unwrap_or_else(|| panic!("{path}.{key} is missing from the MCP answer"));
                assert_holds(inner, value, &format!("{path}.{key}"));
            }
        }
        (Value::Array(actual), Value::Array(expected)) => {
            assert_eq!(actual.len(), expected.len(), "{path}: list lengths differ");
            for (n, (a, e)) in actual.iter().zip(expected).enumerate() {
                assert_holds(a, e, &format!("{path}[{n}]"));
            }
        }
        _ => assert_eq!(actual, expected, "{path}"),
    }
}

/// `value` with every number as a float: Python prints `62.0` where node prints `62`.
pub(crate) fn floats(value: &Value) -> Value {
    match value {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(list) => Value::Array(list.iter().map(floats).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| (key.clone(), floats(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A tool call's structured answer, which must not be an error.
pub(crate) fn answer<'a>(results: &'a Value, name: &str) -> &'a Value {
    let result = &results[name];
    assert_eq!(result["isError"], json!(false), "{name}: {result}");
    assert!(
        !result["text"].as_str().unwrap_or_default().is_empty(),
        "{name} has a text rendering: {result}"
    );
    &result["structuredContent"]
}

/// A tool call that must have been answered with a tool error mentioning `words`.
pub(crate) fn assert_tool_error(results: &Value, name: &str, words: &str) {
    let result = &results[name];
    assert_eq!(result["isError"], json!(true), "{name}: {result}");
    let text = result["text"].as_str().unwrap_or_default();
    assert!(
        text.contains(words),
        "{name}: {text:?} should mention {words:?}"
    );
}
