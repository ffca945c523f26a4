//! Which changes a subscription wants, and the live part of it after its replay: the changes
//! the feed broadcasts that it wants and the replay did not cover, and what a subscriber that
//! falls behind the feed is told (its stream ends rather than going on with a gap).

use crate::changes::Published;
use crate::read::agents::Selection;
use crate::read::changes::{Change, Kind};
use async_graphql::{Error, Result};
use futures_util::Stream;
use std::collections::BTreeMap;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// Which changes a subscription wants.
#[derive(Clone)]
pub(super) enum Wanted {
    Agents(Box<Selection>),
    Reputation(String),
    Payments(Option<String>),
}

impl Wanted {
    /// The only kind of stored change a replay for this reads.
    pub(super) fn replayed(&self) -> Kind {
        match self {
            Wanted::Agents(_) => Kind::Agents,
            Wanted::Reputation(_) => Kind::Reputation,
            Wanted::Payments(_) => Kind::Payments,
        }
    }
}

/// A change and its number in the live feed (`None` when replayed from the store).
#[derive(Debug)]
pub(super) struct Numbered {
    pub(super) seq: Option<u64>,
    pub(super) change: Change,
}

/// Whether `change` is one `wanted` reports.
pub(super) fn wants(wanted: &Wanted, change: &Change) -> bool {
    match (wanted, change) {
        (Wanted::Agents(_), Change::Agent { .. } | Change::Documents { .. }) => true,
        (Wanted::Reputation(id), Change::Reputation { key, .. }) => id == key,
        (Wanted::Payments(id), Change::Payment { payment, .. }) => {
            id.as_ref().is_none_or(|id| *id == payment.agent_key)
        }
        _ => false,
    }
}

/// The live part of a subscription: the changes `receiver` hears that `wanted` wants and its
/// replay did not cover. One that falls over the feed's capacity behind has missed changes: its
/// stream ends with an error saying from which block of each chain to subscribe again
/// (`sinceBlock` replays them from the store), rather than going on with a gap.
pub(super) fn live(
    mut receiver: broadcast::Receiver<Published>,
    wanted: Wanted,
    since_block: Option<i64>,
    replayed_through: BTreeMap<i64, i64>,
) -> impl Stream<Item = Result<Numbered>> {
    async_stream::stream! {
        // Per chain, the block after which nothing can have been missed: where its snapshot
        // stood when the subscription began, then the start of the run of the last change
        // heard.
        let mut safe_after = replayed_through.clone();
        loop {
            match receiver.recv().await {
                Ok(Published { seq, change, run_after }) => {
                    let Some((chain, block)) = change.chain_and_block() else {
                        if wants(&wanted, &change) {
                            yield Ok(Numbered { seq: Some(seq), change });
                        }
                        continue;
                    };
                    if let Some(after) = run_after {
                        safe_after.insert(chain, after);
                    }
                    if already_covered(since_block, &replayed_through, chain, block) {
                        continue;
                    }
                    if wants(&wanted, &change) {
                        yield Ok(Numbered { seq: Some(seq), change });
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(target: "agentindex::api", missed, "a subscriber fell behind and missed changes; its subscription ends");
                    yield Err(Error::new(fell_behind(missed, &safe_after)));
                    break;
                }
                Err(RecvError::Closed) => break,
            }
        }
    }
}

/// What a subscriber that fell `missed` changes behind is told: per chain, the block after which
/// it may have missed changes (`safe_after`). Document updates are not replayed.
fn fell_behind(missed: u64, safe_after: &BTreeMap<i64, i64>) -> String {
    let chains: Vec<String> = safe_after
        .iter()
        .map(|(chain, after)| format!("chain {chain} after block {after}"))
        .collect();
    let resume = match safe_after.values().min() {
        Some(lowest) => format!(
            "subscribe again with sinceBlock {lowest} to replay what it missed ({}; a chain \
             that was not being indexed then, from its start; on chains far apart in height, one \
             subscription per chain)",
            chains.join(", ")
        ),
        None => "subscribe again with sinceBlock to replay what it missed".to_string(),
    };
    format!(
        "this subscription fell {missed} changes behind and missed them; {resume}; document \
         updates among them are not replayed"
    )
}

/// Whether a live change at `block` of `chain` was replayed already: with `sinceBlock`, a
/// replay read each chain through the block it was published through when the subscription
/// began. A chain absent then is new since (its indexing started later), so all of it is news,
/// whatever `sinceBlock` says: one number for every chain cannot say where a chain with other
/// block heights starts.
fn already_covered(
    since_block: Option<i64>,
    replayed_through: &BTreeMap<i64, i64>,
    chain: i64,
    block: i64,
) -> bool {
    since_block.is_some()
        && replayed_through
            .get(&chain)
            .is_some_and(|through| block <= *through)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn agent_at(seq: u64, block: i64, run_after: i64) -> Published {
        Published {
            seq,
            change: Change::Agent {
                chain_id: 1,
                block,
                key: format!("1:{block}"),
                registered: true,
            },
            run_after: Some(run_after),
        }
    }

    #[tokio::test]
    async fn a_subscriber_that_falls_behind_is_told_where_to_resume_and_ends() {
        let (sender, receiver) = broadcast::channel(4);
        let wanted = Wanted::Agents(Box::default());
        // Chain 1 was published through block 5, chain 2 through 700, when it began.
        let stream = live(receiver, wanted, None, BTreeMap::from([(1, 5), (2, 700)]));
        futures_util::pin_mut!(stream);
        // It hears block 40 of a run of chain 1 that began after block 30: the run is sent kind
        // by kind, so what it misses next may be anywhere after block 30.
        sender.send(agent_at(0, 40, 30)).unwrap();
        let heard = stream.next().await.unwrap().unwrap();
        assert_eq!(heard.change.chain_and_block(), Some((1, 40)));
        // Six more while it does not read: two fall out of the feed's window.
        for (seq, block) in (1..=6).zip(11..) {
            sender.send(agent_at(seq, block, 30)).unwrap();
        }
        let error = stream.next().await.unwrap().unwrap_err();
        assert_eq!(
            error.message,
            "this subscription fell 2 changes behind and missed them; subscribe again with \
             sinceBlock 30 to replay what it missed (chain 1 after block 30, chain 2 after block \
             700; a chain that was not being indexed then, from its start; on chains far apart \
             in height, one subscription per chain); document updates among them are not \
             replayed"
        );
        assert!(
            stream.next().await.is_none(),
            "the stream ends, without a gap"
        );
    }

    #[tokio::test]
    async fn live_changes_a_replay_covered_are_not_heard_twice() {
        let (sender, receiver) = broadcast::channel(16);
        let wanted = Wanted::Agents(Box::default());
        let stream = live(receiver, wanted, Some(5), BTreeMap::from([(1, 11)]));
        futures_util::pin_mut!(stream);
        for (seq, block) in (0..3).zip(10..) {
            sender.send(agent_at(seq, block, 9)).unwrap();
        }
        drop(sender);
        let blocks: Vec<i64> = stream
            .map(|c| c.unwrap().change.chain_and_block().unwrap().1)
            .collect()
            .await;
        assert_eq!(blocks, [12], "blocks 10 and 11 were replayed");
    }

    #[test]
    fn a_live_change_is_left_out_only_when_replayed() {
        // Chain 1 was published through block 30 when the subscription began; chain 2 had not
        // appeared, so it is published whole as it does.
        let replayed = BTreeMap::from([(1, 30)]);
        assert!(already_covered(Some(20), &replayed, 1, 30), "replayed");
        assert!(
            !already_covered(Some(20), &replayed, 1, 31),
            "after the replay"
        );
        // `sinceBlock` is one number for every chain: a lower chain's news is never cut by it.
        assert!(!already_covered(Some(29_950_000), &replayed, 2, 11_000_000));
        assert!(
            !already_covered(None, &replayed, 1, 5),
            "a live-only subscription hears all"
        );
    }
}
