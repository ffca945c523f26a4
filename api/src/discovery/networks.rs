//! Networks as payment terms write them (`base-sepolia`, `84532`, `eip155:84532`) and as x402
//! version 2 names them (CAIP-2): a filter matches every spelling of its network, and a listing
//! shows CAIP-2 where the chain is known.

use agentindex_indexer::config::networks::NETWORKS;

/// The EIP-155 chain `written` names, if it names one.
fn chain_id(written: &str) -> Option<u64> {
    let written = written.trim();
    if let Some(id) = written.strip_prefix("eip155:") {
        return id.parse().ok();
    }
    if let Ok(id) = written.parse() {
        return Some(id);
    }
    let lower = written.to_ascii_lowercase();
    NETWORKS
        .iter()
        .find(|network| network.name == lower)
        .map(|network| network.chain_id)
}

/// `written` as CAIP-2 (`eip155:{id}`) where it names a known EVM chain, else as written.
pub(crate) fn caip2(written: &str) -> String {
    chain_id(written).map_or_else(|| written.trim().to_owned(), |id| format!("eip155:{id}"))
}

/// Every way terms may write the network `wanted` names: CAIP-2, the bare chain id and the
/// preset's name for an EVM chain; itself otherwise.
pub(crate) fn spellings(wanted: &str) -> Vec<String> {
    let Some(id) = chain_id(wanted) else {
        return vec![wanted.trim().to_owned()];
    };
    let mut all = vec![format!("eip155:{id}"), id.to_string()];
    all.extend(
        NETWORKS
            .iter()
            .filter(|network| network.chain_id == id)
            .map(|network| network.name.to_owned()),
    );
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_chain_means_it() {
        for written in ["base-sepolia", "84532", "eip155:84532", "Base-Sepolia"] {
            assert_eq!(caip2(written), "eip155:84532", "{written}");
            let all = spellings(written);
            for spelling in ["eip155:84532", "84532", "base-sepolia"] {
                assert!(all.contains(&spelling.to_string()), "{written}: {all:?}");
            }
        }
        let solana = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
        assert_eq!(caip2(solana), solana);
        assert_eq!(spellings(solana), vec![solana.to_string()]);
    }
}
