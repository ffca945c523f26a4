//! How many operations one websocket has live: the socket's handler puts a
//! [`LiveSubscriptions`] in the connection's data, each subscription takes a
//! [`SubscriptionSlot`] from it when it starts and its stream drops the slot when it ends or is
//! stopped, and a query sent over the socket holds one while it runs
//! (`super::operation_limits`); over `[api.websocket] max_subscriptions_per_connection` a new
//! one gets a GraphQL error naming the cap.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The subscriptions live on one websocket, and how many may be.
#[derive(Debug, Clone)]
pub(crate) struct LiveSubscriptions {
    live: Arc<AtomicUsize>,
    max: usize,
}

/// One live subscription's place; given back when its stream is dropped.
#[derive(Debug)]
pub(crate) struct SubscriptionSlot {
    live: Arc<AtomicUsize>,
}

impl LiveSubscriptions {
    /// Room for `max` subscriptions at once.
    pub(crate) fn new(max: usize) -> Self {
        Self {
            live: Arc::new(AtomicUsize::new(0)),
            max,
        }
    }

    /// How many operations are live now.
    pub(crate) fn live(&self) -> usize {
        self.live.load(Ordering::Acquire)
    }

    /// A place for one more subscription, or an error naming the cap.
    pub(crate) fn take(&self) -> async_graphql::Result<SubscriptionSlot> {
        let taken = self
            .live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |live| {
                (live < self.max).then_some(live + 1)
            });
        match taken {
            Ok(_) => Ok(SubscriptionSlot {
                live: Arc::clone(&self.live),
            }),
            Err(live) => Err(async_graphql::Error::new(format!(
                "this connection has {live} operations live (subscriptions and running queries), \
                 the most one connection may have \
                 (api.websocket.max_subscriptions_per_connection); stop one first"
            ))),
        }
    }
}

impl Drop for SubscriptionSlot {
    fn drop(&mut self) {
        self.live.fetch_sub(1, Ordering::AcqRel);
    }
}
