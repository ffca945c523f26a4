//! `Agent.masumi`: what Masumi's registry on Cardano says of an agent of source `MASUMI`, read
//! from its `masumi_agents` row (through the row loader): the current NFT, the metadata in one
//! shape whichever variant minted it, the fields no variant defines, and the lints; and the
//! escrows of Masumi's payment contract that pay it (`masumi_payments`, through the escrow
//! loaders: one read for every agent of a page).

use super::loader_set::Loaders;
use super::loaders::EscrowPageKey;
use super::relations::charge;
use crate::read::agent_rows::Cells;
use agentindex_indexer::documents::masumi::{
    Author, Capability, ExampleOutput, Legal, MasumiMetadata, Price,
};
use agentindex_indexer::schema::masumi_agents;
use async_graphql::{Context, Json, Object, Result, SimpleObject};
use std::sync::Arc;

/// An agent's entry in Masumi's registry.
pub(crate) struct MasumiEntry {
    pub(crate) agent_key: String,
    pub(crate) row: Arc<Cells>,
    pub(crate) metadata: MasumiMetadata,
}

/// The most escrows one `payments` asks for.
const MAX_PAYMENTS: i32 = 100;

impl MasumiEntry {
    /// The entry of agent `agent_key`'s `masumi_agents` row.
    pub(crate) fn of(agent_key: &str, row: Arc<Cells>) -> Result<Self> {
        let text = row.text(masumi_agents::metadata).unwrap_or("{}");
        let metadata = serde_json::from_str(text)
            .map_err(|e| format!("stored masumi_agents.metadata is not readable: {e}"))?;
        Ok(Self {
            agent_key: agent_key.to_string(),
            row,
            metadata,
        })
    }

    fn text(&self, column: agentindex_indexer::schema::Column) -> Option<String> {
        self.row.text(column).map(str::to_string)
    }
}

/// A purchase from the agent through Masumi's payment contract (an escrow on Cardano).
#[derive(SimpleObject)]
pub(crate) struct MasumiPayment {
    /// The purchase: the same key in every state of its escrow.
    escrow_key: String,
    /// Which payment contract: 1 or 2.
    contract_version: i64,
    /// The buyer's payment credential (key or script hash), hex.
    buyer: String,
    /// The seller's payment credential, hex.
    seller: String,
    /// `lovelace`, or the token's unit (policy id and asset name, hex).
    unit: String,
    /// The price, in the unit's smallest amount.
    amount: String,
    /// The state it is in (FundsLocked, ResultSubmitted, RefundRequested, Disputed,
    /// WithdrawAuthorized, RefundAuthorized), or left when paid out.
    state: Option<String>,
    /// How it ended: `released` to the seller, `refunded` to the buyer, or `disputed` (split
    /// by the admins); none while open.
    outcome: Option<String>,
    /// Where it was locked.
    locked_block: i64,
    /// When.
    locked_at: i64,
    /// The locking transaction, hex.
    lock_tx: String,
    /// Where it was paid out.
    settled_block: Option<i64>,
    /// When.
    settled_at: Option<i64>,
}

/// How the agent's escrows stand.
#[derive(SimpleObject, Default)]
pub(crate) struct MasumiPaymentCounts {
    /// Still open.
    open: i64,
    /// Paid to the seller: the ones that count for reputation.
    released: i64,
    /// Returned to the buyer.
    refunded: i64,
    /// Split by the admins after a dispute.
    disputed: i64,
}

/// One fixed price.
#[derive(SimpleObject)]
pub(crate) struct MasumiPrice {
    /// A whole number of the unit.
    amount: String,
    /// `lovelace` for ada (also when the metadata leaves it empty), else the token's unit.
    unit: String,
}

/// What the agent charges.
#[derive(SimpleObject)]
pub(crate) struct MasumiPricing {
    /// `Fixed`, `Free` or `Dynamic`, as written.
    pricing_type: Option<String>,
    /// The fixed prices.
    fixed: Vec<MasumiPrice>,
}

/// Who made the agent.
#[derive(SimpleObject)]
pub(crate) struct MasumiAuthor {
    /// The author's name.
    name: Option<String>,
    /// An e-mail address (`contact_email`, or `contact`).
    contact_email: Option<String>,
    /// Another way to reach them.
    contact_other: Option<String>,
    /// Their organisation.
    organization: Option<String>,
}

/// The agent's legal documents.
#[derive(SimpleObject)]
pub(crate) struct MasumiLegal {
    /// The privacy policy's URL.
    privacy_policy: Option<String>,
    /// The terms of use' URL.
    terms: Option<String>,
    /// Anything else.
    other: Option<String>,
}

/// What the agent runs.
#[derive(SimpleObject)]
pub(crate) struct MasumiCapability {
    /// The model or program.
    name: Option<String>,
    /// Its version.
    version: Option<String>,
}

/// A sample of the agent's output.
#[derive(SimpleObject)]
pub(crate) struct MasumiExampleOutput {
    /// What it is.
    name: Option<String>,
    /// Its media type.
    mime_type: Option<String>,
    /// Where it is.
    url: Option<String>,
}

#[Object]
impl MasumiEntry {
    /// The current NFT's unit: the policy id followed by the asset name, hex (Masumi's
    /// agent identifier).
    async fn unit(&self) -> Option<String> {
        self.text(masumi_agents::unit)
    }

    /// The registry's minting policy.
    async fn policy_id(&self) -> Option<String> {
        self.text(masumi_agents::policy_id)
    }

    /// The current NFT's asset name, hex.
    async fn asset_name(&self) -> Option<String> {
        self.text(masumi_agents::asset_name)
    }

    /// Which registry contract minted it: 1 or 2.
    async fn registry_version(&self) -> Option<i64> {
        self.row.integer(masumi_agents::registry_version)
    }

    /// How many times it was updated (V2: each update mints the next version).
    async fn updates(&self) -> Option<i64> {
        self.row.integer(masumi_agents::updates)
    }

    /// The block its NFT was burned in, when it is deregistered.
    async fn deregistered_block(&self) -> Option<i64> {
        self.row.integer(masumi_agents::deregistered_block)
    }

    /// Which metadata variant minted it: `v1`, `v2` (the payment service's) or `a2a`.
    async fn metadata_variant(&self) -> &str {
        &self.metadata.variant
    }

    /// `metadata_version`, as written.
    async fn metadata_version(&self) -> Option<&str> {
        self.metadata.metadata_version.as_deref()
    }

    /// `type`, when given (inbox agents say `MasumiInboxV1`).
    async fn kind(&self) -> Option<&str> {
        self.metadata.kind.as_deref()
    }

    /// The agent's API: `api_base_url`, or `api_url` under the A2A variant.
    async fn api_url(&self) -> Option<&str> {
        self.metadata.api_url.as_deref()
    }

    /// The A2A Agent Card's URL (A2A variant); the card itself is `Agent.card`.
    async fn agent_card_url(&self) -> Option<&str> {
        self.metadata.agent_card_url.as_deref()
    }

    /// The A2A protocol versions it speaks.
    #[graphql(name = "a2aProtocolVersions")]
    async fn a2a_protocol_versions(&self) -> &[String] {
        &self.metadata.a2a_protocol_versions
    }

    /// A picture of the agent.
    async fn image(&self) -> Option<&str> {
        self.metadata.image.as_deref()
    }

    /// Its tags, as the metadata lists them.
    async fn tags(&self) -> &[String] {
        &self.metadata.tags
    }

    /// What it runs.
    async fn capability(&self) -> Option<MasumiCapability> {
        self.metadata
            .capability
            .clone()
            .map(|Capability { name, version }| MasumiCapability { name, version })
    }

    /// Who made it.
    async fn author(&self) -> Option<MasumiAuthor> {
        self.metadata.author.clone().map(
            |Author {
                 name,
                 contact_email,
                 contact_other,
                 organization,
             }| MasumiAuthor {
                name,
                contact_email,
                contact_other,
                organization,
            },
        )
    }

    /// Its legal documents.
    async fn legal(&self) -> Option<MasumiLegal> {
        self.metadata.legal.clone().map(
            |Legal {
                 privacy_policy,
                 terms,
                 other,
             }| MasumiLegal {
                privacy_policy,
                terms,
                other,
            },
        )
    }

    /// What it charges (`agentPricing`).
    async fn pricing(&self) -> Option<MasumiPricing> {
        self.metadata.pricing.clone().map(|pricing| MasumiPricing {
            pricing_type: pricing.pricing_type,
            fixed: pricing
                .fixed
                .into_iter()
                .map(|Price { amount, unit }| MasumiPrice {
                    amount,
                    unit: if unit.is_empty() {
                        "lovelace".into()
                    } else {
                        unit
                    },
                })
                .collect(),
        })
    }

    /// Samples of its output.
    async fn example_outputs(&self) -> Vec<MasumiExampleOutput> {
        self.metadata
            .example_outputs
            .iter()
            .cloned()
            .map(
                |ExampleOutput {
                     name,
                     mime_type,
                     url,
                 }| MasumiExampleOutput {
                    name,
                    mime_type,
                    url,
                },
            )
            .collect()
    }

    /// The payment service's `supported_payment_sources`, as written.
    async fn payment_sources(&self) -> Option<Json<serde_json::Value>> {
        self.metadata.payment_sources.clone().map(Json)
    }

    /// Fields no Masumi metadata variant defines, as written.
    async fn unknown_fields(&self) -> Json<serde_json::Map<String, serde_json::Value>> {
        Json(self.metadata.unknown.clone())
    }

    /// Purchases from it through Masumi's payment contract, newest first, `first` of them (at
    /// most 100).
    async fn payments(
        &self,
        ctx: &Context<'_>,
        #[graphql(default = 20)] first: i32,
    ) -> Result<Vec<MasumiPayment>> {
        if !(1..=MAX_PAYMENTS).contains(&first) {
            return Err(format!("first must be 1 to {MAX_PAYMENTS}, got {first}").into());
        }
        charge(ctx, first as u64, "masumi.payments")?;
        let loader = &ctx.data_unchecked::<Loaders>().escrows;
        let rows = loader
            .load_one(EscrowPageKey {
                agent: self.agent_key.clone(),
                rows: i64::from(first),
            })
            .await?
            .unwrap_or_default();
        Ok(rows
            .into_iter()
            .map(|r| MasumiPayment {
                escrow_key: r.escrow_key,
                contract_version: r.contract_version,
                buyer: r.buyer,
                seller: r.seller,
                unit: r.unit,
                amount: r.amount,
                state: r.state,
                outcome: r.outcome,
                locked_block: r.locked_block,
                locked_at: r.locked_at,
                lock_tx: r.lock_tx,
                settled_block: r.settled_block,
                settled_at: r.settled_at,
            })
            .collect())
    }

    /// How many of its escrows are open, and how many ended each way.
    async fn payment_counts(&self, ctx: &Context<'_>) -> Result<MasumiPaymentCounts> {
        let loader = &ctx.data_unchecked::<Loaders>().escrow_outcomes;
        let outcomes = loader.load_one(self.agent_key.clone()).await?;
        let mut counts = MasumiPaymentCounts::default();
        for (outcome, count) in outcomes.unwrap_or_default() {
            match outcome.as_deref() {
                None => counts.open += count,
                Some("released") => counts.released += count,
                Some("refunded") => counts.refunded += count,
                Some("disputed") => counts.disputed += count,
                Some(_) => {}
            }
        }
        Ok(counts)
    }

    /// The metadata as minted (CIP-25 object, chunked strings as chunks).
    async fn raw_metadata(&self) -> Result<Option<Json<serde_json::Value>>> {
        self.row
            .text(masumi_agents::raw_metadata)
            .map(|text| {
                serde_json::from_str(text)
                    .map(Json)
                    .map_err(|e| format!("stored raw metadata is not JSON: {e}").into())
            })
            .transpose()
    }

    /// Why the current NFT has no metadata, when it has none.
    async fn metadata_error(&self) -> Option<String> {
        self.text(masumi_agents::metadata_error)
    }

    /// What reading the metadata found wrong or worth knowing (codes as `card check` prints
    /// them: `masumi.name.missing`, `masumi.field.unknown`, `json.string.chunked`, …).
    async fn lints(&self) -> Result<Json<serde_json::Value>> {
        let text = self.row.text(masumi_agents::lints).unwrap_or("[]");
        serde_json::from_str(text)
            .map(Json)
            .map_err(|e| format!("stored lints are not JSON: {e}").into())
    }
}
