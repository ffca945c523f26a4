//! The `Agent` type and what hangs off it: skills (through a DataLoader), the card, documents,
//! relations; its reputation is in [`super::reputation`].

use super::days::{DAY_SECS, DailyPoint, MAX_ENTRIES, utc_date};
use super::filter::AgentSource;
use super::liveness::Liveness;
use super::loader_set::Loaders;
use super::loaders::AgentRowKey;
use super::masumi::MasumiEntry;
use super::page_cost;
use super::relations::{AgentPayment, Feedback, HistoryEvent, ListPage, Validation, charge, paged};
use super::reputation::Reputation;
use crate::read::activity::{FeedbackRow, HistoryRow, ValidationRow};
use crate::read::agent_rows::Cells;
use crate::read::agents::AgentRow;
use crate::read::counts::{self, Relation};
use crate::read::documents::{DocumentRow, LintRow};
use crate::read::skills::SkillRow;
use crate::state::ApiState;
use agentindex_indexer::primitives::caip2_of_chain;
use agentindex_indexer::reputation::{Exclusion, Payment};
use agentindex_indexer::schema::{Table, agent_activity, agent_liveness, masumi_agents};
use async_graphql::{Context, ID, Json, Object, Result, SimpleObject};
use std::sync::Arc;

/// An agent known on-chain, with what its documents and its reputation say.
pub(crate) struct Agent(pub(crate) AgentRow);

impl Agent {
    /// The agent's row of the declared per-agent `table`, through the row DataLoader.
    async fn row_of(&self, ctx: &Context<'_>, table: &'static Table) -> Result<Option<Arc<Cells>>> {
        let loader = &ctx.data_unchecked::<Loaders>().agent_rows;
        Ok(loader
            .load_one(AgentRowKey::new(table, &self.0.agent_key))
            .await?)
    }
}

#[Object]
impl Agent {
    /// Stable id: `{chain}:{identity registry}:{token id}`, `{chain}:{agent contract}`, or
    /// for a Masumi agent `{chain}:{policy id}{asset name}` (the name without its version
    /// under registry V2).
    async fn id(&self) -> ID {
        ID(self.0.agent_key.clone())
    }

    /// EIP-155 chain id; a Cardano network's is 2^30 plus its network magic.
    async fn chain_id(&self) -> i64 {
        self.0.chain_id
    }

    /// The chain's CAIP-2 id: `eip155:{chain id}`, or CIP-34's `cip34:{network id}-{magic}`.
    async fn caip2(&self) -> String {
        caip2_of_chain(u64::try_from(self.0.chain_id).unwrap_or_default())
    }

    /// Masumi agents: the registry entry on Cardano.
    async fn masumi(&self, ctx: &Context<'_>) -> Result<Option<MasumiEntry>> {
        let row = self.row_of(ctx, &masumi_agents::TABLE).await?;
        row.map(|row| MasumiEntry::of(&self.0.agent_key, row))
            .transpose()
    }

    /// How it came on-chain.
    async fn source(&self) -> AgentSource {
        AgentSource::parse(&self.0.source).unwrap_or(AgentSource::Factory)
    }

    /// The agent contract (factory and registry agents).
    async fn address(&self) -> Option<&str> {
        self.0.address.as_deref()
    }

    /// The ERC-8004 token id (ERC-8004 agents).
    async fn token_id(&self) -> Option<&str> {
        self.0.token_id.as_deref()
    }

    /// The identity registry, factory or registry that found it.
    async fn registry(&self) -> Option<&str> {
        self.0.registry.as_deref()
    }

    /// Current on-chain owner, lower-case hex.
    async fn owner(&self) -> &str {
        &self.0.owner
    }

    /// Current operators (approved addresses), lower-case hex.
    async fn operators(&self) -> Result<Vec<String>> {
        stored_json("agents.operators", &self.0.operators)
    }

    /// From the registration file, else the card, else the chain.
    async fn name(&self) -> Option<&str> {
        self.0
            .profile_name
            .as_deref()
            .or(self.0.chain_name.as_deref())
    }

    /// From the registration file, else the card, else the chain.
    async fn description(&self) -> Option<&str> {
        self.0
            .profile_description
            .as_deref()
            .or(self.0.chain_description.as_deref())
    }

    /// The on-chain active flag.
    async fn active(&self) -> bool {
        self.0.active
    }

    /// The ERC-8004 agent URI or the registry metadata URI.
    async fn uri(&self) -> Option<&str> {
        self.0.uri.as_deref()
    }

    /// The ERC-8004 agentWallet, lower-case hex.
    async fn agent_wallet(&self) -> Option<&str> {
        self.0.agent_wallet.as_deref()
    }

    /// The address whose incoming payments count, lower-case hex.
    async fn payment_address(&self) -> Option<&str> {
        self.0.payment_address.as_deref()
    }

    /// Block it was registered in.
    async fn registered_block(&self) -> i64 {
        self.0.registered_block
    }

    /// Timestamp of that block.
    async fn registered_at(&self) -> i64 {
        self.0.registered_at
    }

    /// Newest block of any of its own events.
    async fn last_event_block(&self) -> i64 {
        self.0.last_event_block
    }

    /// Newest block of anything on-chain about it: its own events, the metadata its owner
    /// set, feedback given to it and revoked.
    async fn last_activity_block(&self, ctx: &Context<'_>) -> Result<Option<i64>> {
        let row = self.row_of(ctx, &agent_activity::TABLE).await?;
        Ok(row.and_then(|cells| cells.integer(agent_activity::last_block)))
    }

    /// Timestamp of that block (what agent0's subgraph calls `updatedAt`).
    async fn last_active_at(&self, ctx: &Context<'_>) -> Result<Option<i64>> {
        let row = self.row_of(ctx, &agent_activity::TABLE).await?;
        Ok(row.and_then(|cells| cells.integer(agent_activity::updated_at)))
    }

    /// Declares x402 payment anywhere.
    async fn x402(&self) -> bool {
        self.0.x402.unwrap_or(false)
    }

    /// Input media types its card accepts.
    async fn input_modes(&self) -> Result<Vec<String>> {
        json_list("agent_profiles.input_modes", self.0.input_modes.as_deref())
    }

    /// Output media types its card produces.
    async fn output_modes(&self) -> Result<Vec<String>> {
        json_list(
            "agent_profiles.output_modes",
            self.0.output_modes.as_deref(),
        )
    }

    /// Skills from its card (or registration file).
    async fn skills(&self, ctx: &Context<'_>) -> Result<Vec<Skill>> {
        let loader = &ctx.data_unchecked::<Loaders>().skills;
        let skills = loader.load_one(self.0.agent_key.clone()).await?;
        Ok(skills.unwrap_or_default().into_iter().map(Skill).collect())
    }

    /// Its A2A Agent Card, when it points at one.
    async fn card(&self) -> Option<AgentCard> {
        let url = self
            .0
            .card_uri
            .clone()
            .or_else(|| self.0.chain_card_uri.clone())?;
        Some(AgentCard {
            url,
            status: self
                .0
                .card_status
                .clone()
                .unwrap_or_else(|| "pending".into()),
            protocol_version: self.0.protocol_version.clone(),
            signature: self.0.card_signature.clone(),
        })
    }

    /// ERC-8004: whether the registration file's `registrations` name this agent.
    async fn registration_verified(&self) -> Option<bool> {
        self.0.registration_verified
    }

    /// ERC-8004: whether the endpoint's domain confirms the registration.
    async fn domain_verified(&self) -> Option<bool> {
        self.0.domain_verified
    }

    /// Payment terms it declares (a2a-x402 extension, vendor objects, per-skill pricing,
    /// contract terms), as read from its documents.
    async fn payment_terms(&self) -> Result<Json<serde_json::Value>> {
        let terms = match self.0.payment_terms.as_deref() {
            Some(text) => stored_json("agent_profiles.payments", text)?,
            None => serde_json::Value::Array(Vec::new()),
        };
        Ok(Json(terms))
    }

    /// Every document the chain points at for it (registration file, card, on-chain card,
    /// domain proof), with its projection, signature status and lint report.
    async fn documents(&self, ctx: &Context<'_>) -> Result<Vec<Document>> {
        let loader = &ctx.data_unchecked::<Loaders>().documents;
        let documents = loader.load_one(self.0.agent_key.clone()).await?;
        Ok(documents
            .unwrap_or_default()
            .into_iter()
            .map(Document)
            .collect())
    }

    /// Payments credited to it, newest first, each with whether it counts for reputation.
    /// `first` at a time (at most 100) after the cursor `after`.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn payments(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: i32,
        after: Option<String>,
    ) -> Result<ListPage<AgentPayment>> {
        let loader = &ctx.data_unchecked::<Loaders>().payments;
        paged(
            ctx,
            loader,
            Relation::Payments,
            &self.0.agent_key,
            (first, after),
            |(p, _): &(Payment, Option<Exclusion>)| (p.block as i64, p.log_index as i64),
        )
        .await
    }

    /// Payments credited to it per UTC day (counted or not): the newest `days` days that have
    /// any, oldest first (at most 500).
    async fn daily_payments(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 30)] days: i32,
    ) -> Result<Vec<DailyPoint>> {
        let days = i64::from(days);
        if !(1..=i64::from(MAX_ENTRIES)).contains(&days) {
            return Err(async_graphql::Error::new(format!(
                "days must be 1 to {MAX_ENTRIES}, got {days}"
            )));
        }
        charge(ctx, days as u64, "dailyPayments")?;
        let pool = ctx.data_unchecked::<ApiState>().store.reader();
        let mut counted = counts::daily_payments(pool, &self.0.agent_key, days).await?;
        counted.reverse();
        Ok(counted
            .into_iter()
            .map(|(day, count)| DailyPoint {
                day: utc_date(day * DAY_SECS),
                value: count as f64,
            })
            .collect())
    }

    /// ERC-8004 feedback, newest first, revoked ones marked, with their responses.
    /// `first` at a time (at most 100) after the cursor `after`.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn feedback(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: i32,
        after: Option<String>,
    ) -> Result<ListPage<Feedback>> {
        let loader = &ctx.data_unchecked::<Loaders>().feedback;
        paged(
            ctx,
            loader,
            Relation::Feedback,
            &self.0.agent_key,
            (first, after),
            |f: &FeedbackRow| (f.block_number, f.log_index),
        )
        .await
    }

    /// ERC-8004 validation requests, newest first, with every response.
    /// `first` at a time (at most 100) after the cursor `after`.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn validations(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: i32,
        after: Option<String>,
    ) -> Result<ListPage<Validation>> {
        let loader = &ctx.data_unchecked::<Loaders>().validations;
        paged(
            ctx,
            loader,
            Relation::Validations,
            &self.0.agent_key,
            (first, after),
            |v: &ValidationRow| (v.block_number, v.log_index),
        )
        .await
    }

    /// Its on-chain history, newest first.
    /// `first` at a time (at most 100) after the cursor `after`.
    #[graphql(complexity = "page_cost(first, child_complexity)")]
    async fn history(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: i32,
        after: Option<String>,
    ) -> Result<ListPage<HistoryEvent>> {
        let loader = &ctx.data_unchecked::<Loaders>().history;
        paged(
            ctx,
            loader,
            Relation::History,
            &self.0.agent_key,
            (first, after),
            |h: &HistoryRow| (h.block_number, h.log_index),
        )
        .await
    }

    /// Reputation with its components and the inputs that moved each most, as of the newest
    /// block among the agent's own facts.
    async fn reputation(&self) -> Reputation {
        Reputation::of(&self.0)
    }

    /// Whether its endpoints answer, as this instance's prober saw them (null when it declares
    /// none, or probing is off).
    async fn liveness(&self, ctx: &Context<'_>) -> Result<Option<Liveness>> {
        let row = self.row_of(ctx, &agent_liveness::TABLE).await?;
        Ok(row.map(|row| Liveness {
            agent_key: self.0.agent_key.clone(),
            row,
        }))
    }
}

/// A JSON list of strings from a column that is NULL when the agent has no profile yet.
fn json_list(column: &str, text: Option<&str>) -> Result<Vec<String>> {
    match text {
        Some(text) => stored_json(column, text),
        // An agent without a profile yet has no modes.
        None => Ok(Vec::new()),
    }
}

/// A JSON column read back as `T`; one that does not parse is an error naming the column,
/// never an empty value.
fn stored_json<T: serde::de::DeserializeOwned>(column: &str, text: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|error| async_graphql::Error::new(format!("{column} does not read back: {error}")))
}

/// A skill an agent advertises.
pub(crate) struct Skill(SkillRow);

#[Object]
impl Skill {
    /// Skill id.
    async fn id(&self) -> &str {
        &self.0.id
    }

    /// Name.
    async fn name(&self) -> &str {
        &self.0.name
    }

    /// Description.
    async fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }

    /// Tags, lower case.
    async fn tags(&self) -> &[String] {
        &self.0.tags
    }
}

/// An agent's A2A Agent Card as last fetched.
#[derive(SimpleObject)]
pub(crate) struct AgentCard {
    /// Where it was fetched from.
    url: String,
    /// ok | invalid | failed | pending | hash_mismatch.
    status: String,
    /// Its A2A protocol version.
    protocol_version: Option<String>,
    /// Signature status: unsigned | valid | invalid | key_unavailable | unsupported.
    signature: Option<String>,
}

/// A document an agent points at, as last fetched.
pub(crate) struct Document(DocumentRow);

#[Object]
impl Document {
    /// registration | card | metadata | domain | onchain.
    async fn role(&self) -> &str {
        &self.0.role
    }

    /// Where it is.
    async fn uri(&self) -> &str {
        &self.0.uri
    }

    /// ok | invalid | failed, or absent before the first fetch.
    async fn status(&self) -> Option<&str> {
        self.0.status.as_deref()
    }

    /// card | registration, once read.
    async fn kind(&self) -> Option<&str> {
        self.0.kind.as_deref()
    }

    /// A card's signature status.
    async fn signature(&self) -> Option<&str> {
        self.0.signature.as_deref()
    }

    /// The first error, when it failed.
    async fn error(&self) -> Option<&str> {
        self.0.error.as_deref()
    }

    /// When it was last fetched (unix seconds).
    async fn fetched_at(&self) -> Option<i64> {
        self.0.fetched_at
    }

    /// Its normalised projection: for a card its interfaces, capabilities, security schemes,
    /// skills, extensions and payment terms; for a registration file its services, trust
    /// models, registrations and x402 support.
    async fn projection(&self) -> Result<Option<Json<serde_json::Value>>> {
        self.0
            .projection
            .as_deref()
            .map(|p| stored_json("documents.projection", p).map(Json))
            .transpose()
    }

    /// The validation report.
    async fn lints(&self) -> Vec<Lint> {
        self.0.lints.iter().cloned().map(Lint::from).collect()
    }
}

/// One finding of a document's validation report.
#[derive(SimpleObject)]
pub(crate) struct Lint {
    /// Stable code, e.g. `card.skills.missing`.
    code: String,
    /// error | warning | info.
    severity: String,
    /// What is wrong.
    message: String,
    /// JSON path in the document.
    path: String,
}

impl From<LintRow> for Lint {
    fn from(l: LintRow) -> Self {
        Self {
            code: l.code,
            severity: l.severity,
            message: l.message,
            path: l.path,
        }
    }
}
