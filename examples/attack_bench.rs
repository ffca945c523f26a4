//! Attack benchmark: legitimate traffic, the API benchmark's loads at fixed rates (lookups by id,
//! filtered searches, the agent0 SDK's search), sent by `oha` to the real `agentindex serve` binary
//! over 100,000 synthetic agents, measured alone and while one attacker per class of issue #30
//! sends the worst request of its class over and over, from a loopback address of its own
//! (`support/attackers.rs`), in turn for `ATTACK_ROUNDS` rounds (5): the 99th percentile of a
//! sub-millisecond lookup on two cores shared with its own load generator moves by half from one
//! pass to the next, so one pass each proves little either way, and every request's time is kept
//! (oha's timeline) so the p99 is also taken over every round's requests together. The server runs
//! with the shipped limits, the per-client rate included, except that the legitimate load's address
//! is in `unlimited_clients`: it stands for many clients at once. `ATTACK_CLASSES` picks some
//! classes only (to find which one costs what), `ATTACK_LOADS` some loads only. The attackers'
//! client side runs at nice 19, as remote machines' would cost this one nothing
//! (`ATTACKERS_AT_NORMAL_PRIORITY` undoes that). `ATTACK_FLOOR` aims the attackers at a bare 429
//! server instead (`support/floor_server.rs`): what the legitimate load loses then is the floor no
//! server can win back on this machine.
//!
//! Prints each load's p99 alone and under attack in every round, the ratio of their medians and the
//! ratio of the p99s of every round's requests pooled (target: within 2x); what each attacker sent
//! and got back; the server's peak memory of its own (target: under 512 MiB) beside its resident
//! memory with the mapped database file; and the processor time the server and the attackers' own
//! client took.
//!
//! Run with `scripts/bench-attack` (or `cargo run --release --example attack_bench -- [agents]
//! [seconds]` with `oha` in `OHA` and the release binary built).

#[path = "support/agents.rs"]
mod agents;
#[path = "support/api_loads.rs"]
mod api_loads;
#[path = "support/attackers.rs"]
mod attackers;
#[path = "support/floor_server.rs"]
mod floor_server;
#[path = "support/lowered_runtime.rs"]
mod lowered_runtime;
#[path = "support/process_use.rs"]
mod process_use;
#[path = "support/serve_process.rs"]
mod serve_process;

use api_loads::{Load, Measured, finish_oha, start_oha};
use process_use::{Cpu, Peaks, sample_memory};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The address the legitimate loads come from (oha's, the default loopback source); the
/// attackers come from 127.0.0.10 and up.
const LEGITIMATE: &str = "127.0.0.1";

/// Connections `oha` keeps open per load.
const CONNECTIONS: usize = 16;

/// Runs `loads` one after the other for `seconds` each, keeping every request's timing in a
/// file of `timelines` per load: what each measured, and that file.
fn measure_all(
    oha: &str,
    base: &str,
    dir: &Path,
    timelines: &Path,
    loads: &[Load],
    seconds: usize,
) -> anyhow::Result<Vec<(Measured, PathBuf)>> {
    let list = dir.join("urls.txt");
    loads
        .iter()
        .map(|load| {
            let timeline = api_loads::timeline_file(timelines, load);
            let child = start_oha(
                oha,
                base,
                &list,
                load,
                &load.paths,
                seconds,
                CONNECTIONS,
                Some(&timeline),
            )?;
            Ok((finish_oha(load.name, child)?, timeline))
        })
        .collect()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let (count, seconds, oha) = api_loads::bench_args()?;
    let classes = attackers::chosen()?;
    let rate = attackers::rate()?;
    let binary =
        std::env::var("AGENTINDEX_BIN").unwrap_or_else(|_| "target/release/agentindex".into());
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("attack.db").display());
    let started = Instant::now();
    let (store, keys) = agents::open_filled(&url, count, true).await?;
    agents::score(&store, &keys).await?;
    // The three final epoch boundaries below the indexed block hold stored feeds, as the
    // indexer's feed keeper leaves them (`[reputation] feeds_kept`, 3, every 1,000 blocks).
    let indexed = agents::indexed_block(&store).await?;
    let boundary = indexed - indexed % 1_000;
    let stored: Vec<u64> = (1..=3)
        .filter_map(|k| boundary.checked_sub(k * 1_000))
        .collect();
    agents::store_feeds(&store, &stored).await?;
    store.close().await;
    println!(
        "loaded {count} agents in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let config = dir.path().join("serve.toml");
    // The shipped limits, but for the legitimate load's own address: it stands for many
    // clients at once, as an operator's server-side renderer would.
    let api = format!("unlimited_clients = [\"{LEGITIMATE}\"]");
    std::fs::write(&config, api_loads::serve_config_with(&url, &api))?;
    let server = serve_process::start(&binary, &config, "error", Stdio::null(), |_| Ok(()))?;
    let pid = server.child.id();
    println!("serving at {} (pid {pid})", server.base);

    let mut rng = rand::rng();
    let loads = chosen_loads(vec![
        Load {
            name: "agent by id @300/s",
            paths: api_loads::by_id(&keys, &mut rng),
            rate: Some(300),
        },
        Load {
            name: "filtered search @200/s",
            paths: api_loads::filtered_searches(&mut rng),
            rate: Some(200),
        },
        Load {
            name: "agent0 SDK search @100/s",
            paths: api_loads::sdk_searches(count, &mut rng),
            rate: Some(100),
        },
    ])?;

    // Every request's timing is kept, in `OHA_TIMELINES` if set, for the pooled percentiles.
    let timelines = match std::env::var_os("OHA_TIMELINES") {
        Some(folder) => PathBuf::from(folder),
        None => dir.path().join("timelines"),
    };
    std::fs::create_dir_all(&timelines)?;
    // A first pass faults in the pages the loads read, so no measured pass pays for it.
    measure_all(&oha, &server.base, dir.path(), &timelines, &loads, 2)?;
    let rounds = rounds()?;
    // With ATTACK_FLOOR set the attackers aim at a bare 429 server instead (see floor_server).
    let floor = match std::env::var_os("ATTACK_FLOOR") {
        Some(_) => Some(floor_server::start()?),
        None => None,
    };
    let target = floor.as_ref().map_or(&server.base, |floor| &floor.base);
    let warmup = Duration::from_secs(attackers::warmup()?);
    let mut report = Report::default();
    for round in 0..rounds {
        let alone = measured(pid, || {
            measure_all(&oha, &server.base, dir.path(), &timelines, &loads, seconds)
        })
        .await?;
        report
            .alone
            .push(pooled(alone.0, &mut report.pooled_alone).await?);
        report.peaks_alone = report.peaks_alone.max(alone.1);
        report.cpu_alone = report.cpu_alone.plus(alone.2);
        report.seconds_alone += alone.3;

        let stop = Arc::new(AtomicBool::new(false));
        let attacking = attackers::runtime()?;
        let running = attackers::start(
            attacking.handle(),
            target,
            &classes,
            rate,
            &stop,
            round as u64,
        );
        // The attackers get a while (ATTACK_WARMUP_SECS, 5) to reach full strength and to spend
        // their bursts (of requests and of the server's time) before the measured pass.
        tokio::time::sleep(warmup).await;
        let own_before = Cpu::of(std::process::id());
        let attacked = measured(pid, || {
            measure_all(&oha, &server.base, dir.path(), &timelines, &loads, seconds)
        })
        .await?;
        report.attackers_cpu = report
            .attackers_cpu
            .plus(Cpu::of(std::process::id()).since(own_before));
        stop.store(true, Ordering::Relaxed);
        for attacker in running {
            let (class, tally) = attacker.join().await;
            report.count(class, &tally);
        }
        drop(attacking);
        report
            .attacked
            .push(pooled(attacked.0, &mut report.pooled_attacked).await?);
        report.peaks_attacked = report.peaks_attacked.max(attacked.1);
        report.cpu_attacked = report.cpu_attacked.plus(attacked.2);
        report.seconds_attacked += attacked.3;
    }
    report.print(&loads, classes.len(), rate);
    let metrics = reqwest::get(format!("{}/metrics", server.base))
        .await?
        .text()
        .await?;
    for line in metrics.lines().filter(|l| {
        l.starts_with("agentindex_api_feed_") || l.starts_with("agentindex_api_low_priority")
    }) {
        println!("{line}");
    }
    drop(server);
    Ok(())
}

/// The loads whose names contain one of the words of `ATTACK_LOADS` (comma-separated, say
/// `id` or `filtered,sdk`), or all of them when it is unset: a shorter run when only some
/// loads are being looked at.
fn chosen_loads(loads: Vec<Load>) -> anyhow::Result<Vec<Load>> {
    let Ok(words) = std::env::var("ATTACK_LOADS") else {
        return Ok(loads);
    };
    let wanted: Vec<String> = words.split(',').map(|w| w.trim().to_lowercase()).collect();
    let chosen: Vec<Load> = loads
        .into_iter()
        .filter(|load| {
            let name = load.name.to_lowercase();
            wanted.iter().any(|word| name.contains(word.as_str()))
        })
        .collect();
    if chosen.is_empty() {
        anyhow::bail!("ATTACK_LOADS={words:?} names none of the loads");
    }
    Ok(chosen)
}

/// Rounds of a pass alone and a pass attacked (`ATTACK_ROUNDS`, 5).
fn rounds() -> anyhow::Result<usize> {
    match std::env::var("ATTACK_ROUNDS") {
        Err(_) => Ok(5),
        Ok(text) => text
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| anyhow::anyhow!("ATTACK_ROUNDS={text:?} is not a positive number")),
    }
}

/// Adds each load's request times from its timeline to `into` (one list per load, in the
/// loads' order) and hands back what each load's oha reported.
async fn pooled(
    pass: Vec<(Measured, PathBuf)>,
    into: &mut Vec<Vec<f64>>,
) -> anyhow::Result<Vec<Measured>> {
    into.resize_with(pass.len(), Vec::new);
    let mut measured = Vec::with_capacity(pass.len());
    for ((load, timeline), times) in pass.into_iter().zip(into.iter_mut()) {
        times.extend(api_loads::durations_ms(&timeline).await?);
        measured.push(load);
    }
    Ok(measured)
}

/// Runs `pass` while sampling the server's memory and processor time: what it measured, the
/// memory peaks, the processor time and the seconds it took.
async fn measured<T>(
    pid: u32,
    pass: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<(T, Peaks, Cpu, f64)> {
    let sampling = Arc::new(AtomicBool::new(false));
    let memory = sample_memory(pid, sampling.clone());
    let (before, clock) = (Cpu::of(pid), Instant::now());
    // oha runs as a child process: this thread only waits for it.
    let measured = tokio::task::block_in_place(pass);
    let cpu = Cpu::of(pid).since(before);
    let seconds = clock.elapsed().as_secs_f64();
    sampling.store(true, Ordering::Relaxed);
    let peaks = memory.await?;
    Ok((measured?, peaks, cpu, seconds))
}

/// Everything measured over the rounds.
#[derive(Default)]
struct Report {
    /// Per round, each load's measure alone.
    alone: Vec<Vec<Measured>>,
    /// Per round, each load's measure under attack.
    attacked: Vec<Vec<Measured>>,
    /// Per load, every request's time over every pass alone, in milliseconds.
    pooled_alone: Vec<Vec<f64>>,
    /// The same over every pass attacked.
    pooled_attacked: Vec<Vec<f64>>,
    peaks_alone: Peaks,
    peaks_attacked: Peaks,
    cpu_alone: Cpu,
    cpu_attacked: Cpu,
    seconds_alone: f64,
    seconds_attacked: f64,
    /// The attackers' own client's processor time while the attacked passes ran.
    attackers_cpu: Cpu,
    /// What each attacker sent, was refused and was answered, over every round.
    tallies: Vec<(attackers::Class, [u64; 3])>,
}

impl Report {
    fn count(&mut self, class: attackers::Class, tally: &attackers::Tally) {
        let read = |n: &AtomicU64| n.load(Ordering::Relaxed);
        let counts = [
            read(&tally.sent),
            read(&tally.refused),
            read(&tally.answered),
        ];
        match self.tallies.iter_mut().find(|(seen, _)| *seen == class) {
            Some((_, total)) => {
                for (sum, n) in total.iter_mut().zip(counts) {
                    *sum += n;
                }
            }
            None => self.tallies.push((class, counts)),
        }
    }

    fn print(&self, loads: &[Load], attackers: usize, rate: u32) {
        let p99s = |passes: &[Vec<Measured>], load: usize| -> Vec<f64> {
            passes.iter().map(|pass| pass[load].p99_ms).collect()
        };
        println!(
            "\n{:<26} {:>24} {:>24} {:>9}",
            "legitimate load, p99", "alone, each round", "attacked, each round", "ratio"
        );
        for (n, load) in loads.iter().enumerate() {
            let (alone, attacked) = (p99s(&self.alone, n), p99s(&self.attacked, n));
            let list = |values: &[f64]| {
                values
                    .iter()
                    .map(|v| format!("{v:.2}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            println!(
                "{:<26} {:>21} ms {:>21} ms {:>8.2}x",
                load.name,
                list(&alone),
                list(&attacked),
                median(&attacked) / median(&alone)
            );
        }
        println!("(ratio: the median p99 attacked over the median p99 alone)");
        // The rounds' requests taken together: a p99 over every round's requests rests on a
        // hundred slowest answers or more rather than each round's thirty.
        println!(
            "\n{:<26} {:>12} {:>12} {:>9} {:>18}",
            "legitimate load, pooled", "p99 alone", "p99 attacked", "ratio", "requests"
        );
        for (n, load) in loads.iter().enumerate() {
            let (alone, attacked) = (&self.pooled_alone[n], &self.pooled_attacked[n]);
            let (p99_alone, p99_attacked) = (
                api_loads::percentile(alone, 0.99),
                api_loads::percentile(attacked, 0.99),
            );
            println!(
                "{:<26} {p99_alone:>9.2} ms {p99_attacked:>9.2} ms {:>8.2}x {:>18}",
                load.name,
                p99_attacked / p99_alone,
                format!("{} / {}", alone.len(), attacked.len()),
            );
        }
        println!("(every round's requests alone, and attacked, taken together)");
        println!(
            "\n{:<24} {:>10} {:>10} {:>10}",
            "attacker", "sent", "refused", "answered"
        );
        for (class, [sent, refused, answered]) in &self.tallies {
            println!(
                "{:<24} {sent:>10} {refused:>10} {answered:>10}",
                format!("{class:?}")
            );
        }
        println!(
            "\n{attackers} attackers, each at {rate} requests (messages, connections) a second, \
             over {} rounds",
            self.alone.len()
        );
        let mib = |kib: u64| kib as f64 / 1024.0;
        println!(
            "\nserver peak memory, MiB       {:>10} {:>10}\n\
             own (RssAnon; bound 512)     {:>10.1} {:>10.1}\n\
             resident (VmRSS, with the    {:>10.1} {:>10.1}\n  mapped database file)",
            "alone",
            "attacked",
            mib(self.peaks_alone.anonymous),
            mib(self.peaks_attacked.anonymous),
            mib(self.peaks_alone.resident),
            mib(self.peaks_attacked.resident),
        );
        let cores = |cpu: f64, seconds: f64| cpu / seconds.max(f64::EPSILON);
        println!(
            "\nprocessor use, cores          {:>10} {:>10}\n\
             server, in all               {:>10.2} {:>10.2}\n\
             server, on lowered threads   {:>10.2} {:>10.2}\n\
             the attackers' own client               {:>10.2}",
            "alone",
            "attacked",
            cores(self.cpu_alone.total, self.seconds_alone),
            cores(self.cpu_attacked.total, self.seconds_attacked),
            cores(self.cpu_alone.lowered, self.seconds_alone),
            cores(self.cpu_attacked.lowered, self.seconds_attacked),
            cores(self.attackers_cpu.total, self.seconds_attacked),
        );
    }
}

/// The median of `values` (the mean of the middle two of an even count).
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}
