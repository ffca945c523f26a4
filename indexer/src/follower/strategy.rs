//! Which way each range's logs are fetched: by address (agent contracts in the address list,
//! payment addresses in the topics) or by scanning an event signature across the chain and
//! keeping what matters locally.
//!
//! By address, a range costs a request per chunk of addresses, so the cost grows with the number
//! of agents (Base holds more than 256,000, each with a wallet). A scan costs a request per
//! provider result cap's worth of matching logs, whatever the number of agents, but brings every
//! transfer of the token. [`CostModel`] estimates both per range from what it has observed (the
//! density of the scanned logs, the provider's result cap) and picks the cheaper; both give the
//! same rows, since what is stored is decided by position on the chain alone.

use crate::config::FetchStrategy;

/// Addresses per `eth_getLogs` address list.
pub(super) const ADDRESS_CHUNK: usize = 500;
/// Logs a provider is assumed to return in one answer until it says otherwise (most cap at
/// 10,000; some at 20,000).
const DEFAULT_RESULT_CAP: u64 = 10_000;
/// Returned logs that weigh as much as one more request: a scan that brings many logs nobody
/// asked for costs bandwidth and the provider's time even when it needs few requests.
const LOGS_PER_REQUEST: f64 = 2_000.0;
/// Under `auto`, a family whose address chunks cost at least this many requests (two chunks of
/// payment addresses, both ways, and the pairing) is scanned once to learn how dense the scan is;
/// below it, a single chunk stays: one chunk is cheap whatever the chain's traffic.
const PROBE_AT_REQUESTS: u64 = 5;
/// Weight of the newest range in the running density (an exponential moving average).
const DENSITY_WEIGHT: f64 = 0.3;

/// The two families of logs whose fetching depends on the number of agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Logs emitted by agent contracts.
    Agents,
    /// Transfers of payment tokens into and out of payment addresses.
    Payments,
}

impl Family {
    /// The family's name in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Family::Agents => "agents",
            Family::Payments => "payments",
        }
    }
}

/// How one family is fetched for one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Address chunks.
    Addresses,
    /// A scan of the family's event signatures.
    Scan,
}

impl Way {
    /// The way's name in metrics and logs.
    pub fn label(self) -> &'static str {
        match self {
            Way::Addresses => "addresses",
            Way::Scan => "scan",
        }
    }
}

/// The ways chosen for one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Agent-contract logs.
    pub agents: Way,
    /// Token transfers.
    pub payments: Way,
}

/// What one range's fetch saw, for the model to learn from.
#[derive(Debug, Clone, Copy, Default)]
pub struct Observed {
    /// Blocks the range spanned.
    pub blocks: u64,
    /// Logs the agent-event scan returned, when it ran.
    pub agent_scan_logs: Option<u64>,
    /// Logs the token scan returned, when it ran.
    pub token_scan_logs: Option<u64>,
    /// The most logs one answer held without refusal, over the range's scans.
    pub largest_answer: u64,
    /// The smallest answer a provider refused for its number of results.
    pub refused_answer: Option<u64>,
}

/// The running estimates one chain's follower decides with.
#[derive(Debug, Clone)]
pub struct CostModel {
    setting: FetchStrategy,
    payment_chunk: usize,
    /// Logs per block the agent-event scan returns.
    agent_density: Option<f64>,
    /// Logs per block the token scan returns.
    token_density: Option<f64>,
    /// Logs one answer may hold.
    result_cap: u64,
}

impl CostModel {
    /// A model following `setting`, chunking payment addresses by `payment_chunk`.
    pub fn new(setting: FetchStrategy, payment_chunk: usize) -> Self {
        Self {
            setting,
            payment_chunk: payment_chunk.max(1),
            agent_density: None,
            token_density: None,
            result_cap: DEFAULT_RESULT_CAP,
        }
    }

    /// The ways for a range of `blocks` blocks with `agents` agent contracts and `payees`
    /// payment addresses watched, when the chain has payment tokens (`tokens`).
    pub fn plan(&self, blocks: u64, agents: usize, payees: usize, tokens: bool) -> Plan {
        match self.setting {
            FetchStrategy::Addresses => Plan {
                agents: Way::Addresses,
                payments: Way::Addresses,
            },
            FetchStrategy::Scan => Plan {
                agents: Way::Scan,
                payments: if tokens { Way::Scan } else { Way::Addresses },
            },
            FetchStrategy::Auto => Plan {
                agents: self.choose(chunks(agents, ADDRESS_CHUNK), self.agent_density, blocks),
                payments: match tokens {
                    // Into and out of each chunk, and the settlement pairing when any came.
                    true => self.choose(
                        2 * chunks(payees, self.payment_chunk) + u64::from(payees > 0),
                        self.token_density,
                        blocks,
                    ),
                    false => Way::Addresses,
                },
            },
        }
    }

    /// Requests (and their weight in logs) a scan of `blocks` at `density` would cost.
    fn scan_cost(&self, density: f64, blocks: u64) -> f64 {
        let logs = density * blocks as f64;
        (logs / self.result_cap as f64).ceil().max(1.0) + logs / LOGS_PER_REQUEST
    }

    fn choose(&self, by_address: u64, density: Option<f64>, blocks: u64) -> Way {
        match density {
            None if by_address >= PROBE_AT_REQUESTS => Way::Scan,
            None => Way::Addresses,
            Some(density) if self.scan_cost(density, blocks) < by_address as f64 => Way::Scan,
            Some(_) => Way::Addresses,
        }
    }

    /// Learns from a range just fetched.
    pub fn observe(&mut self, seen: &Observed) {
        let blocks = seen.blocks.max(1) as f64;
        let blend = |old: Option<f64>, logs: Option<u64>| match (old, logs) {
            (old, None) => old,
            (None, Some(logs)) => Some(logs as f64 / blocks),
            (Some(old), Some(logs)) => {
                Some(old * (1.0 - DENSITY_WEIGHT) + DENSITY_WEIGHT * logs as f64 / blocks)
            }
        };
        self.agent_density = blend(self.agent_density, seen.agent_scan_logs);
        self.token_density = blend(self.token_density, seen.token_scan_logs);
        if let Some(refused) = seen.refused_answer {
            self.result_cap = self.result_cap.min(refused.saturating_sub(1).max(1));
        }
        if seen.largest_answer > self.result_cap && seen.refused_answer.is_none() {
            self.result_cap = seen.largest_answer;
        }
    }

    /// Logs per block of a family's scan, when known.
    pub fn density(&self, family: Family) -> Option<f64> {
        match family {
            Family::Agents => self.agent_density,
            Family::Payments => self.token_density,
        }
    }
}

fn chunks(items: usize, chunk: usize) -> u64 {
    items.div_ceil(chunk) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto() -> CostModel {
        CostModel::new(FetchStrategy::Auto, 200)
    }

    fn scanned(blocks: u64, agent_logs: u64, token_logs: u64) -> Observed {
        Observed {
            blocks,
            agent_scan_logs: Some(agent_logs),
            token_scan_logs: Some(token_logs),
            largest_answer: agent_logs.max(token_logs),
            refused_answer: None,
        }
    }

    #[test]
    fn few_addresses_are_fetched_by_address_until_a_density_is_known() {
        let model = auto();
        let plan = model.plan(100, 10, 10, true);
        assert_eq!(plan.agents, Way::Addresses);
        assert_eq!(
            plan.payments,
            Way::Addresses,
            "2 chunks and a pairing: 3 requests"
        );
        let plan = model.plan(100, 10, 0, true);
        assert_eq!(
            plan.payments,
            Way::Addresses,
            "nobody to pay: free by address"
        );
    }

    #[test]
    fn many_addresses_are_scanned_to_learn_and_then_by_cost() {
        let mut model = auto();
        let plan = model.plan(1, 20_000, 20_000, true);
        assert_eq!(
            plan,
            Plan {
                agents: Way::Scan,
                payments: Way::Scan
            }
        );
        // Base-like: 25 transfers a block, few agent events.
        model.observe(&scanned(1, 0, 25));
        let tip = model.plan(1, 20_000, 20_000, true);
        assert_eq!(
            tip,
            Plan {
                agents: Way::Scan,
                payments: Way::Scan
            }
        );
        assert_eq!(
            model.plan(1, 100_000, 100_000, true),
            tip,
            "flat in the agents"
        );
        // 2,000 blocks of 25 transfers: 5 answers and 50,000 logs, against 201 by address.
        assert_eq!(model.plan(2_000, 20_000, 20_000, true).payments, Way::Scan);
        // With 300 payees, 2,000 dense blocks cost more scanned than by address.
        assert_eq!(model.plan(2_000, 300, 300, true).payments, Way::Addresses);
    }

    #[test]
    fn a_refused_answer_lowers_the_cap_the_model_plans_with() {
        let mut model = auto();
        model.observe(&scanned(10, 0, 1_000));
        let before = model.scan_cost(100.0, 1_000);
        model.observe(&Observed {
            blocks: 10,
            refused_answer: Some(1_001),
            ..Observed::default()
        });
        assert!(model.scan_cost(100.0, 1_000) > before);
        assert_eq!(model.result_cap, 1_000);
    }

    #[test]
    fn a_fixed_setting_is_obeyed() {
        let scan = CostModel::new(FetchStrategy::Scan, 200);
        assert_eq!(
            scan.plan(5, 1, 1, true),
            Plan {
                agents: Way::Scan,
                payments: Way::Scan
            }
        );
        assert_eq!(
            scan.plan(5, 1, 1, false).payments,
            Way::Addresses,
            "no token to scan"
        );
        let by_address = CostModel::new(FetchStrategy::Addresses, 200);
        assert_eq!(
            by_address.plan(5, 1_000_000, 1_000_000, true),
            Plan {
                agents: Way::Addresses,
                payments: Way::Addresses
            }
        );
    }
}
