//! The DataLoaders one GraphQL operation reads relations through, as one piece of context
//! data: the schema holds a set shared by every request (loads batched across requests), and a
//! request run at low priority (see `crate::low_priority_lane`) brings a set of its own, which
//! reads the store's low-priority pool and is never batched with anyone else's loads.

use super::loaders::{
    AgentRowLoader, CountLoader, DocumentLoader, EscrowLoader, EscrowOutcomeLoader,
    EvaluationLoader, FeedbackLoader, HistoryLoader, LivenessLoader, PaymentLoader, SkillLoader,
    ValidationLoader,
};
use crate::state::ApiState;
use agentindex_indexer::store::low_priority;
use async_graphql::dataloader::DataLoader;
use futures_util::future::BoxFuture;

/// Every DataLoader of the schema.
pub(crate) struct Loaders {
    pub(crate) skills: DataLoader<SkillLoader>,
    pub(crate) documents: DataLoader<DocumentLoader>,
    pub(crate) feedback: DataLoader<FeedbackLoader>,
    pub(crate) validations: DataLoader<ValidationLoader>,
    pub(crate) payments: DataLoader<PaymentLoader>,
    pub(crate) evaluations: DataLoader<EvaluationLoader>,
    pub(crate) history: DataLoader<HistoryLoader>,
    pub(crate) counts: DataLoader<CountLoader>,
    /// Rows of the declared per-agent tables (`AgentRowKey`).
    pub(crate) agent_rows: DataLoader<AgentRowLoader>,
    /// What the prober saw of agents' endpoints.
    pub(crate) liveness: DataLoader<LivenessLoader>,
    /// Masumi agents' newest escrows.
    pub(crate) escrows: DataLoader<EscrowLoader>,
    /// How Masumi agents' escrows ended.
    pub(crate) escrow_outcomes: DataLoader<EscrowOutcomeLoader>,
}

/// `request` as the calling task should run it: inside a [`low_priority::scope`], with loaders
/// of its own on the low-priority pool (the schema's shared ones read the ordinary pool, and
/// would batch its loads with everyone's); elsewhere unchanged.
pub(crate) fn for_request(
    request: async_graphql::Request,
    state: &ApiState,
) -> async_graphql::Request {
    if low_priority::in_scope() {
        request.data(Loaders::new(state))
    } else {
        request
    }
}

impl Loaders {
    /// Loaders over `state`'s store, reading the pool the calling task reads (the low-priority
    /// one inside a [`low_priority::scope`]); their batches run as tasks that read it too.
    pub(crate) fn new(state: &ApiState) -> Self {
        let low = low_priority::in_scope();
        let spawn = move |load: BoxFuture<'static, ()>| {
            if low {
                tokio::spawn(low_priority::scope(load))
            } else {
                tokio::spawn(load)
            }
        };
        let pool = || state.store.reader().clone();
        Self {
            skills: DataLoader::new(SkillLoader(pool()), spawn),
            documents: DataLoader::new(DocumentLoader(pool()), spawn),
            feedback: DataLoader::new(FeedbackLoader(pool()), spawn),
            validations: DataLoader::new(ValidationLoader(pool()), spawn),
            payments: DataLoader::new(PaymentLoader(state.clone()), spawn),
            evaluations: DataLoader::new(EvaluationLoader(pool()), spawn),
            history: DataLoader::new(HistoryLoader(pool()), spawn),
            counts: DataLoader::new(CountLoader(pool()), spawn),
            agent_rows: DataLoader::new(AgentRowLoader(pool()), spawn),
            liveness: DataLoader::new(LivenessLoader(pool()), spawn),
            escrows: DataLoader::new(EscrowLoader(pool()), spawn),
            escrow_outcomes: DataLoader::new(EscrowOutcomeLoader(pool()), spawn),
        }
    }
}
