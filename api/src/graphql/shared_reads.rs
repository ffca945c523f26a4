//! One read per distinct subscription per change: when many subscribers want the same thing
//! (the same normalised filter, the same agent's reputation), the first to handle a published
//! change reads the agent and the others wait for its answer instead of reading again. Answers
//! are kept by the change's sequence number and what was read, for the changes the broadcast
//! still holds; a subscriber further behind than that reads for itself.

use crate::read::agents::AgentRow;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Answers kept at most, so distinct subscriptions times changes cannot grow without end; the
/// oldest go first.
const MAX_KEPT: usize = 8_192;

/// What a read was: a change's sequence number and the normalised read.
type ReadKey = (u64, String);

/// The shared answers.
#[derive(Debug, Default)]
pub(crate) struct SharedReads {
    answers: Mutex<BTreeMap<ReadKey, Arc<OnceCell<Option<AgentRow>>>>>,
}

impl SharedReads {
    /// The agent `read` finds for change `seq` and the read named `what`, read once however many
    /// subscribers ask (a failed read is not kept: the next asker tries again).
    pub(crate) async fn agent<F, Fut>(
        &self,
        seq: u64,
        what: String,
        read: F,
    ) -> sqlx::Result<Option<AgentRow>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = sqlx::Result<Option<AgentRow>>>,
    {
        let cell = {
            let mut answers = self.answers.lock().expect("not poisoned");
            while answers.len() >= MAX_KEPT {
                answers.pop_first();
            }
            Arc::clone(answers.entry((seq, what)).or_default())
        };
        cell.get_or_try_init(read).await.cloned()
    }

    #[cfg(test)]
    fn kept(&self) -> usize {
        self.answers.lock().expect("not poisoned").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn many_subscribers_of_one_change_and_read_cause_one_read() {
        let shared = Arc::new(SharedReads::default());
        let reads = Arc::new(AtomicUsize::new(0));
        let mut waiting = Vec::new();
        for _ in 0..50 {
            let (shared, reads) = (Arc::clone(&shared), Arc::clone(&reads));
            waiting.push(tokio::spawn(async move {
                shared
                    .agent(7, "reputation 1:0xa".into(), || async {
                        reads.fetch_add(1, Ordering::SeqCst);
                        tokio::task::yield_now().await;
                        Ok(None)
                    })
                    .await
                    .unwrap()
            }));
        }
        for waiter in waiting {
            assert!(waiter.await.unwrap().is_none());
        }
        assert_eq!(reads.load(Ordering::SeqCst), 1);
        // Another change, or another read of the same change, is read again.
        shared
            .agent(8, "reputation 1:0xa".into(), || async {
                reads.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            })
            .await
            .unwrap();
        shared
            .agent(7, "agents {}".into(), || async {
                reads.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            })
            .await
            .unwrap();
        assert_eq!(reads.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn the_kept_answers_are_bounded() {
        let shared = SharedReads::default();
        for seq in 0..(MAX_KEPT as u64 + 100) {
            shared
                .agent(seq, String::new(), || async { Ok(None) })
                .await
                .unwrap();
        }
        assert_eq!(shared.kept(), MAX_KEPT);
    }
}
