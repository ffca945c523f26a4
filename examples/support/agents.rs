//! Synthetic agents for the benchmarks: `count` agents written straight into a database, half
//! ERC-8004 agents with feedback, half agent contracts with ratings, each paid four times, and
//! optionally the profile, skills and search row their documents would give.

#![allow(dead_code)]

use agentindex_indexer::primitives::AgentKey;
use agentindex_indexer::reputation::{ReputationRules, TokenRule};
use agentindex_indexer::store::{ChainContext, Dialect, Store};
use alloy::primitives::{Address, U256};
use sqlx::any::AnyPoolOptions;
use sqlx::{Any, AnyPool, QueryBuilder};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The chain the agents are on.
pub(crate) const CHAIN: u64 = 31_337;
/// Rows per INSERT while filling.
const ROWS: usize = 400;
/// Words skills and tags are named from.
pub(crate) const WORDS: [&str; 24] = [
    "translate",
    "summarize",
    "forecast",
    "search",
    "classify",
    "transcribe",
    "caption",
    "route",
    "price",
    "audit",
    "review",
    "schedule",
    "negotiate",
    "trade",
    "monitor",
    "extract",
    "rank",
    "recommend",
    "detect",
    "generate",
    "answer",
    "plan",
    "verify",
    "index",
];

/// Reputation rules with the payment token the agents are paid in.
pub(crate) fn rules() -> ReputationRules {
    ReputationRules {
        tokens: BTreeMap::from([(
            token(),
            TokenRule {
                decimals: 6,
                dust: U256::from(1_000u64),
            },
        )]),
        ..ReputationRules::default()
    }
}

/// The chain context batches and rescoring of these agents use.
pub(crate) fn chain_context(rules: ReputationRules) -> ChainContext {
    ChainContext {
        chain_id: CHAIN,
        name: "bench".into(),
        identity: Some(registry()),
        rules: Arc::new(rules),
    }
}

pub(crate) fn registry() -> Address {
    Address::repeat_byte(0x80)
}

pub(crate) fn token() -> Address {
    Address::repeat_byte(0x0c)
}

/// The owner of agent `n`.
pub(crate) fn owner(n: usize) -> Address {
    address(0x0e, n)
}

fn address(kind: u8, n: usize) -> Address {
    let mut bytes = [0u8; 20];
    bytes[0] = kind;
    bytes[12..].copy_from_slice(&(n as u64).to_be_bytes());
    Address::from(bytes)
}

fn hex(a: &Address) -> String {
    format!("{a:#x}")
}

/// One agent's rows.
struct Agent {
    key: String,
    erc8004: bool,
    n: usize,
    block: i64,
}

/// Runs a statement built with `?` parameters on SQLite or PostgreSQL.
async fn run(conn: &mut sqlx::AnyConnection, q: QueryBuilder<'_, Any>) -> anyhow::Result<()> {
    Dialect::of(conn).portable(q).build().execute(conn).await?;
    Ok(())
}

/// Opens (creating and migrating) the store at `url` and [`fill`]s it through a connection of
/// its own; returns the store and the agents' keys.
pub(crate) async fn open_filled(
    url: &str,
    count: usize,
    documents: bool,
) -> anyhow::Result<(Store, Vec<String>)> {
    let store = Store::open(url).await?;
    let pool = AnyPoolOptions::new()
        .max_connections(1)
        .connect(url)
        .await?;
    let keys = fill(&pool, count, documents).await?;
    pool.close().await;
    Ok((store, keys))
}

/// Scores the agents of `keys` as the indexer's rescore does.
pub(crate) async fn score(store: &Store, keys: &[String]) -> anyhow::Result<()> {
    store
        .writer(4)
        .rescore(Arc::new(chain_context(rules())), keys.to_vec())
        .await?;
    Ok(())
}

/// Writes `count` agents with their facts; returns their keys.
pub(crate) async fn fill(
    pool: &AnyPool,
    count: usize,
    documents: bool,
) -> anyhow::Result<Vec<String>> {
    fill_paid(pool, count, documents, 4).await
}

/// [`fill`] with `per_agent` payments to each agent (from 5,000 payers).
pub(crate) async fn fill_paid(
    pool: &AnyPool,
    count: usize,
    documents: bool,
    per_agent: usize,
) -> anyhow::Result<Vec<String>> {
    let agents: Vec<Agent> = (0..count)
        .map(|n| {
            let erc8004 = n % 2 == 0;
            let key = if erc8004 {
                AgentKey::erc8004(CHAIN, registry(), U256::from(n)).to_string()
            } else {
                AgentKey::contract(CHAIN, address(0xa0, n)).to_string()
            };
            Agent {
                key,
                erc8004,
                n,
                block: (n / 10) as i64 + 1,
            }
        })
        .collect();
    let last_block = agents.last().map_or(1, |a| a.block) + per_agent as i64 * 1_000;
    let time = |block: i64| 1_700_000_000 + 12 * block;
    let mut tx = pool.begin().await?;
    let blocks: Vec<i64> = (1..=last_block).collect();
    for chunk in blocks.chunks(ROWS) {
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO events (chain_id, block_number, log_index, block_hash, block_timestamp,
               tx_hash, address, source, topics, data) ",
        );
        q.push_values(chunk, |mut row, block| {
            row.push_bind(CHAIN as i64)
                .push_bind(*block)
                .push_bind(0)
                .push_bind(vec![0u8; 32])
                .push_bind(time(*block))
                .push_bind(vec![0u8; 32])
                .push_bind(vec![0u8; 20])
                .push_bind("bench")
                .push_bind(Vec::<u8>::new())
                .push_bind(Vec::<u8>::new());
        });
        run(&mut tx, q).await?;
    }
    for chunk in agents.chunks(ROWS) {
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agents (agent_key, chain_id, source, address, registry, token_id, owner,
               operators, uri, active, registered_block, registered_at, last_event_block) ",
        );
        q.push_values(chunk, |mut row, a| {
            let (source, contract, reg, token) = if a.erc8004 {
                (
                    "erc8004",
                    None,
                    Some(hex(&registry())),
                    Some(a.n.to_string()),
                )
            } else {
                ("factory", Some(hex(&address(0xa0, a.n))), None, None)
            };
            row.push_bind(&a.key)
                .push_bind(CHAIN as i64)
                .push_bind(source)
                .push_bind(contract)
                .push_bind(reg)
                .push_bind(token)
                .push_bind(hex(&address(0x0e, a.n)))
                .push_bind("[]")
                .push_bind(a.erc8004.then(|| registration_uri(a.n)))
                .push_bind(1_i64)
                .push_bind(a.block)
                .push_bind(time(a.block))
                .push_bind(a.block);
        });
        run(&mut tx, q).await?;

        let (tokens, contracts): (Vec<&Agent>, Vec<&Agent>) = chunk.iter().partition(|a| a.erc8004);
        if !tokens.is_empty() {
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO identity_registrations (chain_id, registry, token_id, owner, uri,
                   block_number, log_index, tx_hash, timestamp) ",
            );
            q.push_values(&tokens, |mut row, a| {
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&registry()))
                    .push_bind(a.n.to_string())
                    .push_bind(hex(&address(0x0e, a.n)))
                    .push_bind(registration_uri(a.n))
                    .push_bind(a.block)
                    .push_bind(a.n as i64)
                    .push_bind("0x")
                    .push_bind(time(a.block));
            });
            run(&mut tx, q).await?;
            let feedback: Vec<(&Agent, usize)> =
                tokens.iter().flat_map(|a| [(*a, 0), (*a, 1)]).collect();
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO feedback (chain_id, registry, token_id, client, feedback_index, value,
                   value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape,
                   block_number, log_index, tx_hash, timestamp) ",
            );
            q.push_values(&feedback, |mut row, (a, k)| {
                let block = a.block + 500 * (*k as i64 + 1);
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&registry()))
                    .push_bind(a.n.to_string())
                    .push_bind(hex(&address(0xc1, (a.n + k) % 997)))
                    .push_bind(1)
                    .push_bind(((a.n * 7 + k) % 100).to_string())
                    .push_bind(0)
                    .push_bind("quality")
                    .push_bind("")
                    .push_bind("")
                    .push_bind("")
                    .push_bind(format!("{:#066x}", 0))
                    .push_bind("v2")
                    .push_bind(block)
                    .push_bind((a.n * 2 + k) as i64)
                    .push_bind("0x")
                    .push_bind(time(block));
            });
            run(&mut tx, q).await?;
        }
        if !contracts.is_empty() {
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO agent_contract_events (chain_id, agent, kind, value, block_number,
                   log_index, timestamp) ",
            );
            q.push_values(&contracts, |mut row, a| {
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&address(0xa0, a.n)))
                    .push_bind("owner")
                    .push_bind(hex(&address(0x0e, a.n)))
                    .push_bind(a.block)
                    .push_bind(a.n as i64)
                    .push_bind(time(a.block));
            });
            run(&mut tx, q).await?;
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO ratings (chain_id, agent, rater, score, block_number, log_index, timestamp) ",
            );
            q.push_values(&contracts, |mut row, a| {
                let block = a.block + 700;
                row.push_bind(CHAIN as i64)
                    .push_bind(hex(&address(0xa0, a.n)))
                    .push_bind(hex(&address(0xc1, a.n % 997)))
                    .push_bind((a.n % 101) as i64)
                    .push_bind(block)
                    .push_bind(a.n as i64)
                    .push_bind(time(block));
            });
            run(&mut tx, q).await?;
        }
        let payments: Vec<(&Agent, usize)> = chunk
            .iter()
            .flat_map(|a| (0..per_agent).map(move |k| (a, k)))
            .collect();
        // 1,600 payments per statement, under SQLite's limit on bound values.
        for payments in payments.chunks(ROWS * 4) {
            let mut q = QueryBuilder::<Any>::new(
                "INSERT INTO payments (chain_id, block_number, log_index, agent_key, tx_hash, token,
                   payer, payee, amount, eip3009, scheme, timestamp) ",
            );
            q.push_values(payments, |mut row, (a, k)| {
                let block = a.block + 1_000 * (*k as i64 + 1);
                let payee = if a.erc8004 {
                    address(0x0e, a.n)
                } else {
                    address(0xa0, a.n)
                };
                row.push_bind(CHAIN as i64)
                    .push_bind(block)
                    .push_bind((a.n * per_agent + k) as i64)
                    .push_bind(&a.key)
                    .push_bind(format!("{:#066x}", a.n * per_agent + k))
                    .push_bind(hex(&token()))
                    .push_bind(hex(&address(0xb0, (a.n * 31 + k * 17) % 5_000)))
                    .push_bind(hex(&payee))
                    .push_bind(((k + 1) * 250_000).to_string())
                    .push_bind(i64::from(k % 2 == 0))
                    .push_bind((k % 2 == 0).then_some("eip3009"))
                    .push_bind(time(block));
            });
            run(&mut tx, q).await?;
        }
    }
    if documents {
        for chunk in agents.chunks(ROWS) {
            profiles(&mut tx, chunk).await?;
        }
    }
    tx.commit().await?;
    Ok(agents.into_iter().map(|a| a.key).collect())
}

/// Where ERC-8004 agent `n`'s registration file is.
fn registration_uri(n: usize) -> String {
    format!("https://agents.example/{n}/registration.json")
}

/// Whether agent `n` declares x402 payment.
fn takes_x402(n: usize) -> bool {
    (mix(n) >> 8).is_multiple_of(3)
}

/// The registration file projection of ERC-8004 agent `n`, as the documents worker stores it: an
/// A2A service, an MCP service for a third, an OASF service with the first skill for a quarter.
fn registration_projection(n: usize) -> String {
    let skills = skills_of(n);
    let mut services = vec![serde_json::json!({
        "name": "A2A", "endpoint": format!("https://agents.example/{n}"), "version": "1.0"
    })];
    if n.is_multiple_of(3) {
        services.push(serde_json::json!({
            "name": "MCP", "endpoint": format!("https://agents.example/{n}/mcp"), "version": "2025-06-18"
        }));
    }
    if n.is_multiple_of(4) {
        services.push(serde_json::json!({
            "name": "OASF", "endpoint": format!("https://agents.example/{n}/oasf"), "version": "0.8",
            "skills": [format!("analytical_skills/{}", skills[0].0)], "domains": ["technology"]
        }));
    }
    serde_json::json!({
        "name": format!("Agent {n}"),
        "description": format!("Agent {n} does {}", WORDS[n % WORDS.len()]),
        "image": null,
        "services": services,
        "x402_support": takes_x402(n),
        "active": !n.is_multiple_of(10),
        "registrations": [],
        "supported_trust": ["reputation"],
    })
    .to_string()
}

/// The two skills of agent `n`: (id, tags).
fn skills_of(n: usize) -> [(&'static str, [String; 2]); 2] {
    let tag = |i: usize| WORDS[i % WORDS.len()].to_string();
    let n = mix(n) as usize;
    [
        (
            WORDS[n % WORDS.len()],
            [tag(n * 5), format!("tag{}", n % 50)],
        ),
        (
            WORDS[(n * 7 + 3) % WORDS.len()],
            [tag(n * 11 + 1), format!("tag{}", (n + 7) % 50)],
        ),
    ]
}

/// `n` scrambled, so properties drawn from it (skills, tags, signed, x402) line up neither with
/// each other nor with the reputation, which follows `n` modulo 100: every skill has agents
/// with and without each property, at every score.
fn mix(n: usize) -> u64 {
    (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40
}

/// Profiles, skills and search rows, as documents would give them.
async fn profiles(tx: &mut sqlx::AnyConnection, chunk: &[Agent]) -> anyhow::Result<()> {
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO agent_profiles (agent_key, name, description, card_uri, card_status,
           card_signature, protocol_version, x402, input_modes, output_modes, payments, chain_block) ",
    );
    q.push_values(chunk, |mut row, a| {
        row.push_bind(&a.key)
            .push_bind(format!("Agent {}", a.n))
            .push_bind(format!("Agent {} does {}", a.n, WORDS[a.n % WORDS.len()]))
            .push_bind(format!("https://agents.example/{}/card.json", a.n))
            .push_bind("ok")
            .push_bind(if (mix(a.n) >> 12).is_multiple_of(4) {
                "valid"
            } else {
                "unsigned"
            })
            .push_bind("1.0")
            .push_bind(i64::from(takes_x402(a.n)))
            .push_bind(r#"["text/plain"]"#)
            .push_bind(r#"["application/json"]"#)
            .push_bind("[]")
            .push_bind(a.block);
    });
    run(&mut *tx, q).await?;
    let skills: Vec<(&Agent, &'static str, String)> = chunk
        .iter()
        .flat_map(|a| {
            skills_of(a.n).map(|(id, tags)| {
                (
                    a,
                    id,
                    serde_json::to_string(&tags).expect("strings serialise"),
                )
            })
        })
        .collect();
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO agent_skills (agent_key, skill_id, name, description, tags) ",
    );
    q.push_values(&skills, |mut row, (a, id, tags)| {
        row.push_bind(&a.key)
            .push_bind(*id)
            .push_bind(*id)
            .push_bind(format!("{id} for you"))
            .push_bind(tags);
    });
    q.push(" ON CONFLICT DO NOTHING");
    run(&mut *tx, q).await?;
    let mut q = QueryBuilder::<Any>::new(
        "INSERT INTO agent_search (agent_key, name, description, skills, tags) ",
    );
    q.push_values(chunk, |mut row, a| {
        let skills = skills_of(a.n);
        row.push_bind(&a.key)
            .push_bind(format!("Agent {}", a.n))
            .push_bind(format!("Agent {} does {}", a.n, WORDS[a.n % WORDS.len()]))
            .push_bind(format!("{} {}", skills[0].0, skills[1].0))
            .push_bind(
                skills
                    .iter()
                    .flat_map(|(_, tags)| tags.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
    });
    run(&mut *tx, q).await?;
    let tokens: Vec<&Agent> = chunk.iter().filter(|a| a.erc8004).collect();
    if !tokens.is_empty() {
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO documents (uri, expect, status, source, hash, kind, projection,
               fetched_at, next_fetch_at) ",
        );
        q.push_values(&tokens, |mut row, a| {
            row.push_bind(registration_uri(a.n))
                .push_bind("registration")
                .push_bind("ok")
                .push_bind(registration_uri(a.n))
                .push_bind(format!("{:#066x}", a.n))
                .push_bind("registration")
                .push_bind(registration_projection(a.n))
                .push_bind(1_700_000_000i64)
                .push_bind(1_800_000_000i64);
        });
        run(&mut *tx, q).await?;
        // What agentindex keeps of each file's fields, as the documents worker writes it.
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agent_registrations (agent_key, uri, name, description, image, active,
               x402, supported_trusts, services, mcp_endpoint, mcp_version, a2a_endpoint,
               a2a_version, web_endpoint, email_endpoint, oasf_endpoint, oasf_version,
               oasf_skills, oasf_domains, ens, did) ",
        );
        q.push_values(&tokens, |mut row, a| {
            let file: serde_json::Value =
                serde_json::from_str(&registration_projection(a.n)).expect("our own JSON");
            let service = |name: &str| {
                file["services"]
                    .as_array()
                    .and_then(|list| list.iter().find(|s| s["name"] == name).cloned())
            };
            let field = |name: &str, key: &str| {
                service(name).and_then(|s| s[key].as_str().map(str::to_string))
            };
            let list = |key: &str| service("OASF").map_or("[]".to_string(), |s| s[key].to_string());
            row.push_bind(&a.key)
                .push_bind(registration_uri(a.n))
                .push_bind(file["name"].as_str().map(str::to_string))
                .push_bind(file["description"].as_str().map(str::to_string))
                .push_bind(None::<String>)
                .push_bind(file["active"].as_bool().map(i64::from))
                .push_bind(file["x402_support"].as_bool().map(i64::from))
                .push_bind(file["supported_trust"].to_string())
                .push_bind(file["services"].to_string())
                .push_bind(field("MCP", "endpoint"))
                .push_bind(field("MCP", "version"))
                .push_bind(field("A2A", "endpoint"))
                .push_bind(field("A2A", "version"))
                .push_bind(None::<String>)
                .push_bind(None::<String>)
                .push_bind(field("OASF", "endpoint"))
                .push_bind(field("OASF", "version"))
                .push_bind(list("skills"))
                .push_bind(list("domains"))
                .push_bind(None::<String>)
                .push_bind(None::<String>);
        });
        run(&mut *tx, q).await?;
        let mut q = QueryBuilder::<Any>::new(
            "INSERT INTO agent_registration_text (agent_key, name, description) ",
        );
        q.push_values(&tokens, |mut row, a| {
            row.push_bind(&a.key)
                .push_bind(format!("Agent {}", a.n))
                .push_bind(format!("Agent {} does {}", a.n, WORDS[a.n % WORDS.len()]));
        });
        run(&mut *tx, q).await?;
        let mut q =
            QueryBuilder::<Any>::new("INSERT INTO agent_documents (agent_key, role, uri, expect) ");
        q.push_values(&tokens, |mut row, a| {
            row.push_bind(&a.key)
                .push_bind("registration")
                .push_bind(registration_uri(a.n))
                .push_bind("registration");
        });
        run(&mut *tx, q).await?;
    }
    Ok(())
}
