//! An honest first run: `agentindex run` whose RPC endpoint refuses connections, says nothing,
//! rejects its API key or serves another chain reports it within two seconds of starting, on
//! the terminal (its log), in `/status` (the chain's state and error, each endpoint's state,
//! blocks nobody has seen as `null`) and in `/readyz`'s body, with what to check; a database URL
//! that does not connect is reported as fast.
//!
//! The endpoints are real: anvil, the provider emulator (`agentindex-emulator`, the hosted
//! providers' manners, here Alchemy's refusal of a wrong key), a closed port, and a loopback
//! socket that accepts and never answers (a hung node or a firewall that swallows packets,
//! which nothing real on loopback does on its own).

use crate::support::{self, binary};
use agentindex_contracts::{Devnet, DevnetOptions};
use agentindex_emulator::{Emulator, Limits, Provider};
use alloy::providers::Provider as _;
use serde_json::Value;
use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

/// What the issue promises: every first-run problem shown within two seconds of the start.
const REPORTED_WITHIN: Duration = Duration::from_secs(2);

/// A key as providers issue them: it must not appear in any log line or answer.
const WRONG_KEY: &str = "k3yWr0ngAbCdEfGhIjKlMnOpQrStUv12";

/// `agentindex run` on `rpc` for `devnet`'s chain, logging to a file; the process, its API,
/// its log file and when it was started.
struct FirstRun {
    _process: binary::Running,
    api: String,
    log: std::path::PathBuf,
    started: Instant,
    _dir: tempfile::TempDir,
}

impl FirstRun {
    fn start(devnet: &Devnet, rpc: &[String]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("first.db");
        let toml =
            support::config_toml(devnet, rpc, &db, 0, "") + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
        let config = dir.path().join("first.toml");
        std::fs::write(&config, toml).unwrap();
        let log = dir.path().join("first.log");
        let started = Instant::now();
        let (process, api) = binary::start_logging_to(&["run", "--config"], &config, &log);
        Self {
            _process: process,
            api,
            log,
            started,
            _dir: dir,
        }
    }

    /// Waits, until two seconds after the start, for a log line holding every one of `words`;
    /// the line.
    async fn log_line(&self, words: &[&str]) -> String {
        wait_for_line(&self.log, self.started + REPORTED_WITHIN, |line| {
            words.iter().all(|w| line.contains(w))
        })
        .await
    }

    /// Waits, until two seconds after the start, for `/status` to show the chain with
    /// `accept` true of it; the chain's entry.
    async fn status_where(&self, accept: impl Fn(&Value) -> bool) -> Value {
        let deadline = self.started + REPORTED_WITHIN;
        self.status_until(deadline, accept).await
    }

    /// [`FirstRun::status_where`] with its own deadline.
    async fn status_until(&self, deadline: Instant, accept: impl Fn(&Value) -> bool) -> Value {
        let url = format!("{}/status", self.api);
        let client = reqwest::Client::new();
        loop {
            let last: Value = client.get(&url).send().await.unwrap().json().await.unwrap();
            if let Some(chain) = last.as_array().and_then(|a| a.first())
                && accept(chain)
            {
                return chain.clone();
            }
            assert!(
                Instant::now() < deadline,
                "/status did not show it in time ({:?} after the start): {last:#}",
                self.started.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// `/readyz`'s status and body.
    async fn readyz(&self) -> (u16, String) {
        let answer = reqwest::get(format!("{}/readyz", self.api)).await.unwrap();
        (answer.status().as_u16(), answer.text().await.unwrap())
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }
}

/// Reads the log at `log` until a line `accept`s or `deadline` passes (each try is a file read;
/// the deadline is what is under test, not a guess at how long something takes); the line.
async fn wait_for_line(log: &Path, deadline: Instant, accept: impl Fn(&str) -> bool) -> String {
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = text.lines().find(|line| accept(line)) {
            return line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no such log line in time; the log:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The devnet the config names (31337), and another whose anvil answers chain id 999.
async fn this_chain_and_another() -> (Devnet, Devnet) {
    let options = DevnetOptions {
        chain_id: 999,
        ..DevnetOptions::default()
    };
    let (this, other) = tokio::join!(Devnet::start(), Devnet::start_with(options));
    (this.unwrap(), other.unwrap())
}

/// A loopback port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loopback socket that accepts connections and never answers; dropped, it closes them.
struct Silent {
    url: String,
    _task: tokio::task::JoinHandle<()>,
}

async fn silent_endpoint() -> Silent {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    Silent { url, _task: task }
}

fn endpoint_state(chain: &Value, index: usize) -> &str {
    chain["endpoints"][index]["state"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_refuses_connections_is_reported_within_two_seconds() {
    let devnet = Devnet::start().await.unwrap();
    let url = format!("http://127.0.0.1:{}", closed_port());
    let run = FirstRun::start(&devnet, std::slice::from_ref(&url));
    {
        let line = run.log_line(&["endpoint unreachable", &url]).await;
        assert!(line.contains("WARN"), "{line}");
        assert!(line.to_lowercase().contains("connection refused"), "{line}");
        assert!(line.contains("check="), "says what to check: {line}");
        let chain = run
            .status_where(|c| endpoint_state(c, 0) == "unreachable")
            .await;
        assert_eq!(chain["state"], "failing", "{chain:#}");
        assert_eq!(
            chain["head_block"],
            Value::Null,
            "an unseen head is not 0: {chain:#}"
        );
        assert_eq!(chain["lag"], Value::Null, "{chain:#}");
        let endpoint = &chain["endpoints"][0];
        assert_eq!(endpoint["url"], url);
        assert!(
            endpoint["error"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("refused")
        );
        assert!(
            endpoint["check"]
                .as_str()
                .unwrap()
                .contains("host and port")
        );
        assert!(
            chain["error"].as_str().unwrap().contains("eth_chainId"),
            "{chain:#}"
        );
        let (status, body) = run.readyz().await;
        assert_eq!(status, 503);
        assert!(body.contains(&format!("{url} unreachable")), "{body}");
        let answer = support::api::post_json(
            &format!("{}/graphql", run.api),
            &serde_json::json!({"query": "{ indexerStatus { state error check } }"}),
        )
        .await;
        let status = &answer["data"]["indexerStatus"][0];
        assert_eq!(status["state"], "failing", "{answer:#}");
        assert!(
            status["error"].as_str().unwrap().contains("eth_chainId"),
            "{answer:#}"
        );
        assert!(
            status["check"].as_str().unwrap().contains("host and port"),
            "{answer:#}"
        );
        assert!(body.contains("check: the URL's host and port"), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_never_answers_is_reported_within_two_seconds() {
    let devnet = Devnet::start().await.unwrap();
    let silent = silent_endpoint().await;
    let run = FirstRun::start(&devnet, std::slice::from_ref(&silent.url));
    {
        run.log_line(&[
            "endpoint does not answer",
            &silent.url,
            "no answer within 1.5 s",
        ])
        .await;
        let chain = run.status_where(|c| endpoint_state(c, 0) == "silent").await;
        assert_eq!(
            chain["state"], "starting",
            "the first step still waits: {chain:#}"
        );
        assert!(
            chain["endpoints"][0]["check"]
                .as_str()
                .unwrap()
                .contains("JSON-RPC")
        );
        let (status, body) = run.readyz().await;
        assert_eq!(status, 503);
        assert!(body.contains("silent: no answer within 1.5 s"), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_api_key_is_reported_within_two_seconds_and_never_shown() {
    let devnet = Devnet::start().await.unwrap();
    let limits = Limits {
        provider: Provider::Alchemy,
        api_key: Some("the-right-key-of-this-project-0001".into()),
        ..Limits::default()
    };
    let provider = Emulator::start(&devnet.endpoint(), limits).await.unwrap();
    let rpc = format!("{}/v2/{WRONG_KEY}", provider.url());
    let run = FirstRun::start(&devnet, &[rpc]);
    {
        let shown = format!("{}/…", provider.url());
        let line = run
            .log_line(&["rejects the request's credentials", &shown])
            .await;
        assert!(
            line.contains("Must be authenticated!"),
            "the provider's words: {line}"
        );
        assert!(line.contains("API key"), "says what to check: {line}");
        let chain = run
            .status_where(|c| endpoint_state(c, 0) == "rejected")
            .await;
        assert_eq!(chain["state"], "failing", "{chain:#}");
        let error = chain["endpoints"][0]["error"].as_str().unwrap();
        assert!(error.contains("Must be authenticated!"), "{chain:#}");
        let (status, body) = run.readyz().await;
        assert_eq!(status, 503);
        assert!(body.contains("rejected"), "{body}");
        let status = reqwest::get(format!("{}/status", run.api))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for (what, text) in [
            ("the log", run.log_text()),
            ("/status", status),
            ("/readyz", body),
        ] {
            assert!(
                !text.contains(WRONG_KEY),
                "{what} shows the API key:\n{text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_of_another_chain_is_left_out_and_shown() {
    let (devnet, other) = this_chain_and_another().await;
    let rpc = [other.endpoint(), devnet.endpoint()];
    let run = FirstRun::start(&devnet, &rpc);
    let head = devnet.provider().get_block_number().await.unwrap();
    {
        let line = run
            .log_line(&["endpoint serves another chain", &other.endpoint()])
            .await;
        assert!(
            line.contains("answers 999, the config says 31337"),
            "{line}"
        );
        // The right endpoint carries the chain: it is followed to its head (a backfill, given
        // longer than the report).
        let deadline = run.started + Duration::from_secs(60);
        let chain = run
            .status_until(deadline, |c| {
                c["state"] == "following" && c["indexed_block"].as_u64() == Some(head)
            })
            .await;
        assert_eq!(endpoint_state(&chain, 0), "wrong_chain", "{chain:#}");
        assert_eq!(endpoint_state(&chain, 1), "answering", "{chain:#}");
        assert_eq!(
            chain["check"],
            Value::Null,
            "a following chain needs no check"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_chain_whose_only_endpoint_serves_another_chain_stops_within_two_seconds() {
    let (devnet, other) = this_chain_and_another().await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        &dir.path().join("wrong.toml"),
        &devnet,
        &[other.endpoint()],
        None,
    );
    let stderr = fails_within_two_seconds(&config).await;
    assert!(
        stderr.contains("reports chain id 999, the config says 31337"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_that_refuses_connections_is_reported_within_two_seconds() {
    let devnet = Devnet::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let database = format!(
        "postgres://agentindex:s3cretpassw0rd@127.0.0.1:{}/agentindex",
        closed_port()
    );
    let config = write_config(
        &dir.path().join("db.toml"),
        &devnet,
        &[devnet.endpoint()],
        Some(&database),
    );
    let stderr = fails_within_two_seconds(&config).await;
    assert!(
        stderr.contains("postgres://agentindex:***@127.0.0.1"),
        "{stderr}"
    );
    assert!(
        stderr.to_lowercase().contains("connection refused"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cretpassw0rd"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_that_never_answers_is_reported_within_two_seconds() {
    let devnet = Devnet::start().await.unwrap();
    let silent = silent_endpoint().await;
    let port = silent.url.rsplit(':').next().unwrap().to_string();
    let database = format!("postgres://agentindex@127.0.0.1:{port}/agentindex");
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        &dir.path().join("db.toml"),
        &devnet,
        &[devnet.endpoint()],
        Some(&database),
    );
    let log = dir.path().join("db.log");
    let started = Instant::now();
    let mut tied = binary::command(&["run", "--config"], &config);
    tied.command()
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    let _process = tied.spawn().unwrap();
    let line = wait_for_line(&log, started + REPORTED_WITHIN, |l| {
        l.contains("database does not answer")
    })
    .await;
    assert!(
        line.contains(&format!("postgres://agentindex@127.0.0.1:{port}")),
        "{line}"
    );
}

/// A config for `devnet`'s chain on `rpc`, its database at `database` (a SQLite file beside it
/// when `None`).
fn write_config(
    path: &Path,
    devnet: &Devnet,
    rpc: &[String],
    database: Option<&str>,
) -> std::path::PathBuf {
    let url = database.map_or_else(
        || support::database_url(&path.with_extension("db")),
        str::to_string,
    );
    let toml =
        support::config_toml_at(devnet, rpc, &url, 0, "") + "\n[api]\nlisten = \"127.0.0.1:0\"\n";
    std::fs::write(path, toml).unwrap();
    path.to_path_buf()
}

/// Runs `agentindex run` on `config`, which must fail within two seconds of its start; what it
/// wrote to stderr.
async fn fails_within_two_seconds(config: &Path) -> String {
    let started = Instant::now();
    let output = finish(&["run", "--config"], config).await;
    assert!(
        started.elapsed() < REPORTED_WITHIN,
        "took {:?}",
        started.elapsed()
    );
    assert!(!output.status.success());
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `agentindex ARGS CONFIG` to its end (tied to the test process) and returns what it
/// printed.
async fn finish(args: &[&str], config: &Path) -> std::process::Output {
    let mut tied = binary::command(args, config);
    tied.command()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = tied.spawn().unwrap();
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap()
}
