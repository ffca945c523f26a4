//! What `/status` says of each chain: the stored progress (head, finalized and indexed block,
//! lag), and under `run` what its follower meets right now (its state, last error, what to
//! check, and each endpoint's state) from the process's health board. A block nobody has seen
//! is `null`, not 0, so a follower that never reached its endpoint does not read as synced.

use agentindex_indexer::health::{ChainReport, HealthBoard};
use agentindex_indexer::store::ChainStatus;
use serde_json::{Value, json};

/// Every chain known to the store or the board, by chain id.
pub(crate) fn merged(stored: Vec<ChainStatus>, board: Option<&HealthBoard>) -> Vec<Value> {
    let reports = board.map(HealthBoard::reports).unwrap_or_default();
    let mut chains: Vec<Value> = stored
        .into_iter()
        .map(|status| {
            let report = reports.iter().find(|r| r.chain_id == status.chain_id);
            with_report(progress(&status), report)
        })
        .collect();
    for report in &reports {
        let known = chains
            .iter()
            .any(|c| c["chain_id"].as_u64() == Some(report.chain_id));
        if !known {
            let unseen = json!({
                "chain_id": report.chain_id,
                "name": report.name,
                "head_block": null,
                "finalized_block": null,
                "indexed_block": null,
                "reputation_settled_block": null,
                "lag": null,
            });
            chains.push(with_report(unseen, Some(report)));
        }
    }
    chains.sort_by_key(|c| c["chain_id"].as_u64());
    chains
}

/// Operator lines for the chains that are not following, for `/readyz`'s body.
pub(crate) fn troubles(board: Option<&HealthBoard>) -> Vec<String> {
    board
        .map(HealthBoard::reports)
        .unwrap_or_default()
        .iter()
        .filter_map(ChainReport::trouble)
        .collect()
}

/// The stored progress, with the head and what follows from it `null` while no head was seen.
fn progress(status: &ChainStatus) -> Value {
    let seen = status.head_block > 0;
    json!({
        "chain_id": status.chain_id,
        "name": status.name,
        "head_block": seen.then_some(status.head_block),
        "finalized_block": seen.then_some(status.finalized_block),
        "indexed_block": status.indexed_block,
        "reputation_settled_block": status.reputation_settled_block,
        "lag": seen.then_some(status.lag),
    })
}

fn with_report(mut chain: Value, report: Option<&ChainReport>) -> Value {
    if let (Some(report), Value::Object(fields)) = (report, &mut chain) {
        let live = serde_json::to_value(report).unwrap_or(Value::Null);
        for key in ["state", "since", "error", "check", "endpoints"] {
            fields.insert(key.to_string(), live[key].clone());
        }
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentindex_indexer::health::Problem;

    fn stored(chain_id: u64, head: u64) -> ChainStatus {
        ChainStatus {
            chain_id,
            name: format!("chain {chain_id}"),
            head_block: head,
            finalized_block: head.saturating_sub(2),
            indexed_block: (head > 0).then_some(head),
            reputation_settled_block: None,
            lag: 0,
        }
    }

    #[test]
    fn an_unseen_head_is_null_and_a_seen_one_is_kept() {
        let chains = merged(vec![stored(1, 0), stored(2, 10)], None);
        assert_eq!(chains[0]["head_block"], Value::Null);
        assert_eq!(chains[0]["lag"], Value::Null);
        assert_eq!(chains[1]["head_block"], 10);
        assert_eq!(chains[1]["finalized_block"], 8);
        assert!(chains[1].get("state").is_none(), "no board, no live state");
    }

    #[test]
    fn the_board_adds_state_and_endpoints_and_chains_not_stored_yet() {
        let board = HealthBoard::new();
        let base = board.chain(8453, "base", ["https://x.example/v2/***".to_string()]);
        base.failed(0, Problem::Rejected, "HTTP 401: Must be authenticated!");
        base.step_failed("eth_chainId: credentials rejected", false);
        board.chain(1, "ethereum", ["http://127.0.0.1:8545/".to_string()]);
        let chains = merged(vec![stored(1, 5)], Some(&board));
        assert_eq!(chains.len(), 2);
        assert_eq!(chains[0]["state"], "starting");
        assert_eq!(chains[0]["head_block"], 5);
        let base = &chains[1];
        assert_eq!(base["chain_id"], 8453);
        assert_eq!(base["head_block"], Value::Null);
        assert_eq!(base["state"], "failing");
        assert_eq!(base["error"], "eth_chainId: credentials rejected");
        assert_eq!(base["endpoints"][0]["state"], "rejected");
        assert!(base["check"].as_str().unwrap().contains("API key"));
        let lines = troubles(Some(&board));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("chain ethereum (1): starting"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("https://x.example/v2/*** rejected"),
            "{lines:?}"
        );
    }
}
