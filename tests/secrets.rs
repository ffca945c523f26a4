//! API keys in RPC URLs stay out of what the indexer shows: an RPC error's text, and the
//! follower's log lines and final error when the endpoint cannot be reached (a real refused
//! connection on loopback; reqwest's own message quotes the URL it failed on).

use agentindex_indexer::config::Config;
use agentindex_indexer::rpc::{ChainRpc, RetryPolicy};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

const KEY: &str = "SECRETKEY0123";

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn keyed_config(dir: &Path, port: u16) -> String {
    format!(
        r#"
[database]
url = "sqlite://{db}"

[[chains]]
name = "keyed"
chain_id = 84532
rpc = ["http://127.0.0.1:{port}/v2/{KEY}?apikey={KEY}"]
start_block = 0
request_timeout_secs = 2
"#,
        db = dir.join("keyed.db").display()
    )
}

#[tokio::test]
async fn an_rpc_errors_text_names_the_host_and_hides_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port();
    let config = Config::from_toml_and_env(
        &keyed_config(dir.path(), port),
        Path::new("t.toml"),
        Vec::new(),
    )
    .unwrap();
    let rpc = ChainRpc::new(
        &config.chains[0],
        RetryPolicy {
            attempts: 1,
            ..RetryPolicy::default()
        },
    )
    .unwrap();
    let error = rpc.head().await.expect_err("nothing listens there");
    let shown = format!("{error} {error:?} {rpc:?}");
    assert!(shown.contains(&format!("127.0.0.1:{port}")), "{shown}");
    assert!(!shown.contains(KEY), "{shown}");
}

#[test]
fn the_followers_log_lines_hide_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let port = closed_port();
    let config = dir.path().join("agentindex.toml");
    std::fs::write(&config, keyed_config(dir.path(), port)).unwrap();
    let mut tied = crate::support::binary::command(&["index", "--config"], &config);
    tied.command()
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = tied.spawn().unwrap();
    let stderr = child.child().stderr.take().unwrap();
    // Read on a thread so the test ends at its safety bound even if no line comes.
    let (lines, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let mut log = Vec::new();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        match received.recv_timeout(Duration::from_secs(1)) {
            Ok(line) => {
                let failed = line.contains("step failed");
                log.push(line);
                if failed {
                    break;
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    let _ = child.child().kill();
    drop(child);
    let log = log.join("\n");
    assert!(
        log.contains("step failed") && log.contains(&format!("127.0.0.1:{port}")),
        "the follower reported the failing endpoint: {log}"
    );
    assert!(!log.contains(KEY), "{log}");
}
