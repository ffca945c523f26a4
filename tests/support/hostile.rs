//! What the hostile-client tests watch while they attack a running server: `/healthz` asked
//! every few milliseconds from a client address of its own (so per-client caps on the attacker
//! never touch it), and the server process's resident memory.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// The address the health watcher connects from: loopback, but not the attackers' 127.0.0.1.
pub(crate) const WATCHER_ADDRESS: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// How often `/healthz` is asked.
const EVERY: Duration = Duration::from_millis(20);

/// `/healthz` asked over and over until [`HealthWatch::finish`].
pub(crate) struct HealthWatch {
    stop: Arc<AtomicBool>,
    task: JoinHandle<HealthRecord>,
}

/// What the watcher saw.
#[derive(Debug)]
pub(crate) struct HealthRecord {
    /// Answers received (all 200).
    pub(crate) answers: usize,
    /// The slowest answer.
    pub(crate) slowest: Duration,
    /// Requests that failed or answered other than 200, with what happened.
    pub(crate) failures: Vec<String>,
    /// Answers slower than the budget, with when they came (since the watch began).
    pub(crate) slow: Vec<(Duration, Duration)>,
}

impl HealthWatch {
    /// Starts asking `{base}/healthz`; an answer slower than `budget` is recorded as slow.
    pub(crate) fn start(base: &str, budget: Duration) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let url = format!("{base}/healthz");
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let client = reqwest::Client::builder()
                .local_address(WATCHER_ADDRESS)
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap();
            let mut record = HealthRecord {
                answers: 0,
                slowest: Duration::ZERO,
                failures: Vec::new(),
                slow: Vec::new(),
            };
            // The watcher's own connection is opened before its clock starts: what it times is
            // the server's answers, not the set-up of a fresh client on a busy machine (a
            // first answer took 128 ms once while the whole suite shared two cores, before any
            // attack began). A failure to answer is still recorded.
            answered(&client, &url, &mut record).await;
            let began = Instant::now();
            while !stopped.load(Ordering::Relaxed) {
                let asked = Instant::now();
                if answered(&client, &url, &mut record).await {
                    let took = asked.elapsed();
                    record.answers += 1;
                    record.slowest = record.slowest.max(took);
                    if took > budget {
                        record.slow.push((asked - began, took));
                    }
                }
                tokio::time::sleep(EVERY).await;
            }
            record
        });
        Self { stop, task }
    }

    /// Stops watching and returns what was seen.
    pub(crate) async fn finish(self) -> HealthRecord {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// Asks `url` once: whether it answered 200; anything else is recorded as a failure.
async fn answered(client: &reqwest::Client, url: &str, record: &mut HealthRecord) -> bool {
    match client.get(url).send().await {
        Ok(response) if response.status() == 200 => true,
        Ok(response) => {
            record
                .failures
                .push(format!("status {}", response.status()));
            false
        }
        Err(e) => {
            record.failures.push(e.to_string());
            false
        }
    }
}

/// The resident set of process `pid` now (VmRSS), in KiB.
pub(crate) fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in /proc/PID/status")
}
