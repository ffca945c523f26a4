//! Where the liveness benchmark's endpoints are, and the registration files that declare them.
//! Every endpoint is on loopback, by IP address (never a DNS name): most are dead (a port
//! nothing listens on, at 127.1.x.y, [`PER_DEAD_HOST`] to a host), a share live on the few
//! live hosts of `probe_hosts.rs` (round robin), optionally a share silent (127.3.x.y, hosts
//! that accept and never answer). A quarter are MCP servers, the rest web pages. The ERC-8004
//! agents' registration documents (`documents.projection`) are rewritten so their `services`
//! list these and nothing else (the synthetic https://agents.example/… endpoints are gone), a
//! few consecutive endpoints to each agent.

#![allow(dead_code)]

use sqlx::AnyPool;
use std::net::{Ipv4Addr, SocketAddr};

/// The port dead hosts are asked on: nothing listens there (checked before the run).
pub(crate) const DEAD_PORT: u16 = 1;
/// Dead endpoints to a dead host.
pub(crate) const PER_DEAD_HOST: usize = 10;
/// Silent endpoints to a silent host.
pub(crate) const PER_SILENT_HOST: usize = 10;
/// Endpoints an agent has probed at most (`store/liveness/targets.rs`, `PER_AGENT`).
const PER_AGENT_PROBED: usize = 16;

/// What is at an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Nothing listens: the connection is refused.
    Dead,
    /// Accepts and never answers: the probe times out.
    Silent,
    /// Answers.
    Live,
}

/// SplitMix64 of `i`: which class and kind endpoint `i` is, the same every run.
fn mix(i: usize) -> u64 {
    let mut z = (i as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The address of dead host `h` (127.1.0.1 and up).
pub(crate) fn dead_host(h: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 1, (h / 250) as u8, (h % 250 + 1) as u8)
}

/// The address of silent host `h` (127.3.0.1 and up).
pub(crate) fn silent_host(h: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 3, (h / 250) as u8, (h % 250 + 1) as u8)
}

/// The address of live host `k` (127.2.0.1 and up).
pub(crate) fn live_host(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 2, 0, (k + 1) as u8)
}

/// How many endpoints of each class, live and silent ones per thousand.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) endpoints: usize,
    live_permille: u64,
    silent_permille: u64,
    pub(crate) dead: usize,
    pub(crate) silent: usize,
    pub(crate) live: usize,
    pub(crate) mcp: usize,
}

impl Plan {
    /// `endpoints` endpoints, `live_permille` of a thousand live, `silent_permille` silent.
    pub(crate) fn new(endpoints: usize, live_permille: u64, silent_permille: u64) -> Self {
        let mut plan = Plan {
            endpoints,
            live_permille,
            silent_permille,
            dead: 0,
            silent: 0,
            live: 0,
            mcp: 0,
        };
        for i in 0..endpoints {
            match plan.class(i) {
                Class::Dead => plan.dead += 1,
                Class::Silent => plan.silent += 1,
                Class::Live => plan.live += 1,
            }
            plan.mcp += usize::from(is_mcp(i));
        }
        plan
    }

    /// The class of endpoint `i`.
    pub(crate) fn class(&self, i: usize) -> Class {
        let draw = mix(i) % 1_000;
        if draw < self.live_permille {
            Class::Live
        } else if draw < self.live_permille + self.silent_permille {
            Class::Silent
        } else {
            Class::Dead
        }
    }

    /// Dead hosts.
    pub(crate) fn dead_hosts(&self) -> usize {
        self.dead.div_ceil(PER_DEAD_HOST)
    }

    /// Silent hosts.
    pub(crate) fn silent_hosts(&self) -> usize {
        self.silent.div_ceil(PER_SILENT_HOST)
    }

    /// Every endpoint as a registration file's service, `(name, URL)`, in order: dead ones on
    /// their hosts in turn, silent ones on `silent` in turn, live ones round robin on `live`.
    pub(crate) fn services(
        &self,
        live: &[SocketAddr],
        silent: &[SocketAddr],
    ) -> Vec<(&'static str, String)> {
        let (mut dead_n, mut silent_n, mut live_n) = (0, 0, 0);
        (0..self.endpoints)
            .map(|i| {
                let address = match self.class(i) {
                    Class::Dead => {
                        dead_n += 1;
                        SocketAddr::from((dead_host((dead_n - 1) / PER_DEAD_HOST), DEAD_PORT))
                    }
                    Class::Silent => {
                        silent_n += 1;
                        silent[(silent_n - 1) / PER_SILENT_HOST]
                    }
                    Class::Live => {
                        live_n += 1;
                        live[(live_n - 1) % live.len()]
                    }
                };
                if is_mcp(i) {
                    ("MCP", format!("http://{address}/mcp/{i}"))
                } else {
                    ("web", format!("http://{address}/agent/{i}"))
                }
            })
            .collect()
    }
}

/// Whether endpoint `i` is an MCP server (a quarter are).
pub(crate) fn is_mcp(i: usize) -> bool {
    (mix(i) >> 20).is_multiple_of(4)
}

/// Checks nothing listens where dead hosts are asked: a connection there is refused.
pub(crate) fn check_dead(plan: &Plan) -> anyhow::Result<()> {
    for h in [0, plan.dead_hosts().saturating_sub(1)] {
        let address = SocketAddr::from((dead_host(h), DEAD_PORT));
        match std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_secs(1)) {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
            other => anyhow::bail!("{address} should refuse connections: {other:?}"),
        }
    }
    Ok(())
}

/// Rewrites every registration document in `pool` so its `services` are consecutive
/// `services`, as many to each agent as it takes to declare them all (the last ones may get
/// fewer); returns the agents and the endpoints each.
pub(crate) async fn declare(
    pool: &AnyPool,
    services: &[(&'static str, String)],
) -> anyhow::Result<(usize, usize)> {
    let rows: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT uri, expect, projection FROM documents WHERE kind = 'registration' ORDER BY uri",
    )
    .fetch_all(pool)
    .await?;
    anyhow::ensure!(!rows.is_empty(), "no registration documents to declare in");
    let per_agent = services.len().div_ceil(rows.len());
    anyhow::ensure!(
        per_agent <= PER_AGENT_PROBED,
        "{} endpoints over {} registrations is {per_agent} each, over the {PER_AGENT_PROBED} \
         probed: use more agents",
        services.len(),
        rows.len()
    );
    let mut tx = pool.begin().await?;
    for (n, (uri, expect, projection)) in rows.iter().enumerate() {
        let from = (n * per_agent).min(services.len());
        let to = ((n + 1) * per_agent).min(services.len());
        let mut file: serde_json::Value = serde_json::from_str(projection)?;
        file["services"] = services[from..to]
            .iter()
            .map(|(name, url)| serde_json::json!({"name": name, "endpoint": url}))
            .collect();
        sqlx::query("UPDATE documents SET projection = $1 WHERE uri = $2 AND expect = $3")
            .bind(file.to_string())
            .bind(uri)
            .bind(expect)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok((rows.len(), per_agent))
}
