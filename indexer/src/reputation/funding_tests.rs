use super::*;

fn account(n: u16) -> Address {
    let mut bytes = [0u8; 20];
    bytes[18..].copy_from_slice(&n.to_be_bytes());
    Address::from(bytes)
}

const USDC: Address = Address::repeat_byte(0x55);

/// `funder` sends 4.11 USDC to `funded` at `block`, which moves it on a block later.
fn funding(funder: u16, funded: u16, block: u64) -> FundingEdge {
    FundingEdge {
        funder: account(funder),
        funded: account(funded),
        block,
        log_index: u64::from(funded),
        next_block: block + 1,
        token: USDC,
        amount: U256::from(4_110_000u64),
    }
}

fn payers(range: impl IntoIterator<Item = u16>) -> BTreeSet<Address> {
    range.into_iter().map(account).collect()
}

/// Transfers under 0.01 USDC tie nothing.
fn dust(_: &Address, amount: U256) -> bool {
    amount < U256::from(10_000u64)
}

fn clusters(edges: &[FundingEdge], payers: &BTreeSet<Address>) -> PayerClusters {
    payer_clusters(edges, payers, dust, &FundingParams::default())
}

#[test]
fn wallets_filled_by_one_account_are_one_cluster() {
    // The ring of issue #32: one account funds 16 fresh wallets in the block before they pay.
    let edges: Vec<FundingEdge> = (100..116).map(|w| funding(1, w, 50)).collect();
    let found = clusters(&edges, &payers(100..116));
    assert_eq!(found.of.len(), 16);
    assert!(found.of.values().all(|r| *r == account(100)));
    assert_eq!(
        found.explained[&account(107)],
        PayerCluster {
            funder: account(1),
            size: 16,
            block: 50,
        }
    );
}

#[test]
fn intermediate_wallets_join_the_cluster() {
    // The funder reaches each payer through three intermediate wallets.
    let mut edges = Vec::new();
    for w in 0..16u16 {
        let (h1, h2, h3, payer) = (200 + w, 300 + w, 400 + w, 500 + w);
        edges.push(funding(1, h1, 10));
        edges.push(funding(h1, h2, 11));
        edges.push(funding(h2, h3, 12));
        edges.push(funding(h3, payer, 13));
    }
    let found = clusters(&edges, &payers(500..516));
    assert_eq!(found.of.len(), 16);
    assert_eq!(found.explained[&account(500)].funder, account(1));
    assert_eq!(found.explained[&account(500)].size, 16);
}

#[test]
fn a_hub_clusters_none_of_its_customers() {
    // An exchange funds 200 customers within one window; each pays on its own.
    let edges: Vec<FundingEdge> = (1000..1200)
        .map(|c| funding(9, c, 100 + u64::from(c % 7)))
        .collect();
    let found = clusters(&edges, &payers(1000..1200));
    assert!(found.is_empty());
    assert!(found.hubs.contains(&account(9)));
    assert_eq!(found.sources.len(), 200);
    assert!(found.sources.values().all(|hub| *hub == account(9)));
}

#[test]
fn a_patient_funder_is_no_hub() {
    // 16 wallets per window, window after window: never a hub, so its wallets cluster.
    let params = FundingParams::default();
    let edges: Vec<FundingEdge> = (0..160u16)
        .map(|w| funding(1, 2000 + w, u64::from(w / 16) * (params.window_blocks + 1)))
        .collect();
    let found = clusters(&edges, &payers(2000..2160));
    assert!(!found.hubs.contains(&account(1)));
    assert_eq!(found.of.len(), 160);
}

#[test]
fn mints_stale_and_dust_transfers_join_nothing() {
    let mint = FundingEdge {
        funder: Address::ZERO,
        ..funding(0, 100, 5)
    };
    let mint_too = FundingEdge {
        funder: Address::ZERO,
        ..funding(0, 101, 5)
    };
    let stale = FundingEdge {
        next_block: 5 + FundingParams::default().window_blocks + 1,
        ..funding(1, 102, 5)
    };
    let stale_too = funding(1, 103, 5);
    let crumb = FundingEdge {
        amount: U256::from(1u64),
        ..funding(2, 104, 5)
    };
    let crumb_too = funding(2, 105, 5);
    let found = clusters(
        &[mint, mint_too, stale, stale_too, crumb, crumb_too],
        &payers(100..106),
    );
    assert!(found.is_empty(), "{found:?}");
    assert!(found.hubs.contains(&Address::ZERO));
    assert!(
        found.sources.is_empty(),
        "the mint is no one's source of money"
    );
}

#[test]
fn accounts_that_are_not_payers_are_not_listed() {
    // The funder and the intermediate wallets join the cluster without being listed in it.
    let edges = [funding(1, 2, 10), funding(2, 100, 11), funding(2, 101, 11)];
    let found = clusters(&edges, &payers([100, 101]));
    assert_eq!(
        found.of.keys().copied().collect::<Vec<_>>(),
        [account(100), account(101)]
    );
    assert_eq!(found.explained[&account(100)].funder, account(2));
    assert_eq!(found.explained[&account(100)].size, 2);
}

#[test]
fn one_funded_payer_is_no_cluster() {
    let found = clusters(&[funding(1, 100, 10)], &payers([100]));
    assert!(found.is_empty());
}

#[test]
fn clusters_do_not_depend_on_the_order_of_edges() {
    let mut edges: Vec<FundingEdge> = (100..116).map(|w| funding(1, w, 50)).collect();
    edges.extend((200..203).map(|w| funding(3, w, 60)));
    edges.push(funding(200, 100, 61));
    let all = payers((100..116).chain(200..203));
    let forward = clusters(&edges, &all);
    edges.reverse();
    let backward = clusters(&edges, &all);
    assert_eq!(forward, backward);
    // Joined through 200 -> 100, the two groups are one.
    assert_eq!(forward.of.len(), 19);
    assert_eq!(forward.explained[&account(201)].funder, account(1));
}

#[test]
fn a_transfers_next_move_is_its_recipients_first_payment_or_transfer_after_it() {
    let transfers = vec![
        funding(1, 2, 100),
        // 2 passes money on at block 130, before it pays at 150.
        funding(2, 3, 130),
        // 4's money never moves on.
        funding(1, 4, 100),
    ];
    let paid = [
        (account(2), 90),
        (account(2), 150),
        (account(3), 140),
        (account(9), 101),
    ];
    let next: Vec<u64> = with_next_moves(transfers, &paid)
        .iter()
        .map(|t| t.next_block)
        .collect();
    assert_eq!(next, vec![130, 140, u64::MAX]);
}
