//! Progress of indexing: a bar per chain on a terminal (blocks, events, events/s, ETA) and one
//! for documents (read, invalid, failed, waiting), structured log lines otherwise.

use agentindex_indexer::config::Config;
use agentindex_indexer::follower::Outcome;
use agentindex_indexer::store::StoreRead;
use agentindex_indexer::store::{DocumentCounts, Store};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

/// Reports follower outcomes, by chain name.
#[derive(Clone)]
pub(crate) struct Reporter {
    bars: Option<Arc<Bars>>,
}

struct Bars {
    multi: MultiProgress,
    start: HashMap<String, u64>,
    chains: Mutex<HashMap<String, (ProgressBar, u64)>>,
}

impl Reporter {
    /// Bars when stderr is a terminal and `LOG_FORMAT` is not json.
    pub(crate) fn for_config(config: &Config) -> Self {
        let json = std::env::var("LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"));
        let bars = (std::io::stderr().is_terminal() && !json).then(|| {
            Arc::new(Bars {
                multi: MultiProgress::new(),
                start: config
                    .chains
                    .iter()
                    .map(|c| (c.name.clone(), c.start_block.known().unwrap_or(0)))
                    .collect(),
                chains: Mutex::new(HashMap::new()),
            })
        });
        Self { bars }
    }

    /// Follows the documents in `store` until the process ends: a bar on a terminal, a log
    /// line whenever the counts changed (at most every ten seconds) otherwise.
    pub(crate) fn watch_documents(&self, store: Store) {
        let bar = self.bars.as_ref().map(|bars| {
            let bar = bars.multi.add(ProgressBar::new(0));
            bar.set_style(
                ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
                    .expect("a valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix("documents");
            bar
        });
        tokio::spawn(async move {
            let every = if bar.is_some() { 1 } else { 10 };
            let mut ticks = tokio::time::interval(std::time::Duration::from_secs(every));
            let mut last = DocumentCounts::default();
            loop {
                ticks.tick().await;
                let Ok(counts) = store.document_counts().await else {
                    continue;
                };
                let tried = counts.ok + counts.invalid + counts.failed;
                match &bar {
                    Some(bar) => {
                        bar.set_length(tried + counts.pending);
                        bar.set_position(tried);
                        bar.set_message(format!(
                            "{} read, {} invalid, {} failed, {} waiting",
                            counts.ok, counts.invalid, counts.failed, counts.pending
                        ));
                    }
                    None if counts != last => tracing::info!(
                        target: "agentindex::documents",
                        read = counts.ok,
                        invalid = counts.invalid,
                        failed = counts.failed,
                        waiting = counts.pending,
                        "documents"
                    ),
                    None => {}
                }
                last = counts;
            }
        });
    }

    pub(crate) fn report(&self, chain: &str, outcome: &Outcome) {
        match &self.bars {
            Some(bars) => bars.update(chain, outcome),
            None => log(chain, outcome),
        }
    }
}

impl Bars {
    fn update(&self, chain: &str, outcome: &Outcome) {
        let mut chains = self.chains.lock().expect("progress lock");
        let start = self.start.get(chain).copied().unwrap_or(0);
        let (bar, events) = chains.entry(chain.to_string()).or_insert_with(|| {
            let bar = self.multi.add(ProgressBar::new(0));
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>12} [{bar:30}] block {pos}/{len} {msg} eta {eta}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix(chain.to_string());
            (bar, 0)
        });
        match outcome {
            Outcome::Indexed {
                to,
                events: n,
                head,
                ..
            } => {
                *events += n;
                bar.set_length(head.saturating_sub(start) + 1);
                bar.set_position(to.saturating_sub(start) + 1);
                let rate = *events as f64 / bar.elapsed().as_secs_f64().max(0.001);
                bar.set_message(format!("{events} events, {rate:.0} events/s"));
            }
            Outcome::Synced { head } => {
                bar.set_length(head.saturating_sub(start) + 1);
                bar.set_position(head.saturating_sub(start) + 1);
            }
            Outcome::Rewound { ancestor, .. } => bar.set_position(ancestor.saturating_sub(start)),
            Outcome::Retry | Outcome::Done => {}
        }
    }
}

fn log(chain: &str, outcome: &Outcome) {
    match outcome {
        Outcome::Indexed {
            from,
            to,
            events,
            head,
        } => tracing::info!(
            target: "agentindex::index",
            chain,
            from,
            to,
            events,
            lag = head.saturating_sub(*to),
            "indexed"
        ),
        Outcome::Synced { head } => {
            tracing::debug!(target: "agentindex::index", chain, head, "at head")
        }
        Outcome::Rewound { ancestor, removed } => {
            tracing::warn!(target: "agentindex::index", chain, ancestor, removed, "reorg undone")
        }
        Outcome::Retry | Outcome::Done => {}
    }
}
