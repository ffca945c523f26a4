//! `Agent.masumi`: what Masumi's registry on Cardano says of an agent of source `MASUMI`, read
//! from its `masumi_agents` row (through the row loader): the current NFT, the metadata in one
//! shape whichever variant minted it, the fields no variant defines, and the lints.

use crate::read::agent_rows::Cells;
use agentindex_indexer::documents::masumi::{
    Author, Capability, ExampleOutput, Legal, MasumiMetadata, Price,
};
use agentindex_indexer::schema::masumi_agents;
use async_graphql::{Json, Object, Result, SimpleObject};
use std::sync::Arc;

/// An agent's entry in Masumi's registry.
pub(crate) struct MasumiEntry {
    pub(crate) row: Arc<Cells>,
    pub(crate) metadata: MasumiMetadata,
}

impl MasumiEntry {
    /// The entry of a `masumi_agents` row.
    pub(crate) fn of(row: Arc<Cells>) -> Result<Self> {
        let text = row.text(masumi_agents::metadata).unwrap_or("{}");
        let metadata = serde_json::from_str(text)
            .map_err(|e| format!("stored masumi_agents.metadata is not readable: {e}"))?;
        Ok(Self { row, metadata })
    }

    fn text(&self, column: agentindex_indexer::schema::Column) -> Option<String> {
        self.row.text(column).map(str::to_string)
    }
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
