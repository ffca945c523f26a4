//! Dashboard queries: skill and tag facets with counts, totals per chain and source, daily
//! series per chain, and the top agents by reputation.

use super::agent::Agent;
use super::days::{DailyPoint, MAX_ENTRIES};
use super::filter::capped;
use crate::facet_cache::Facet;
use crate::read::agents::{self, Order, Selection};
use crate::read::facets::{self, Series};
use crate::state::ApiState;
use async_graphql::{Context, Enum, Error, Object, Result, SimpleObject};
use std::collections::BTreeMap;

/// Dashboard queries.
#[derive(Default)]
pub struct FacetQuery;

/// A value and how many agents have it.
#[derive(SimpleObject)]
pub(crate) struct FacetCount {
    /// The skill id or tag (lower case).
    value: String,
    /// Agents with it.
    count: i64,
}

/// What one chain holds.
#[derive(SimpleObject, Default)]
pub(crate) struct ChainTotals {
    /// EIP-155 chain id.
    chain_id: i64,
    /// Agents in all.
    agents: i64,
    /// Deployed by factories.
    factory_agents: i64,
    /// Enrolled in registries.
    registry_agents: i64,
    /// ERC-8004 agents.
    erc8004_agents: i64,
    /// Masumi registry entries (Cardano).
    masumi_agents: i64,
    /// Payments credited to agents.
    payments: i64,
    /// ERC-8004 feedback given.
    feedback: i64,
    /// ERC-8004 validation requests.
    validation_requests: i64,
}

/// What a daily series counts.
#[derive(Enum, Copy, Clone, PartialEq, Eq)]
pub(crate) enum DailySeries {
    /// Agents registered.
    Registrations,
    /// Payments credited.
    Payments,
    /// Volume of one payment token, in whole tokens.
    Volume,
    /// ERC-8004 feedback given.
    Feedback,
}

fn bounded(first: i32) -> Result<i64> {
    if (1..=MAX_ENTRIES).contains(&first) {
        Ok(i64::from(first))
    } else {
        Err(Error::new(format!(
            "first must be between 1 and {MAX_ENTRIES}, got {first}"
        )))
    }
}

/// A token whose payments count, as configured.
#[derive(SimpleObject)]
pub(crate) struct PaymentToken {
    /// EIP-155 chain id.
    chain_id: i64,
    /// Token contract, lower-case hex.
    address: String,
    /// Display symbol.
    symbol: String,
    /// Decimals of its amounts (an amount of 10^decimals is one whole token).
    decimals: i32,
}

/// The top `first` of `facet` on `chain_ids`, from the facet cache.
async fn facet_counts(
    ctx: &Context<'_>,
    facet: Facet,
    chain_ids: Option<Vec<i64>>,
    first: i32,
) -> Result<Vec<FacetCount>> {
    let first = usize::try_from(bounded(first)?).unwrap_or(0);
    let state = ctx.data_unchecked::<ApiState>();
    capped(
        "chainIds",
        chain_ids.as_deref(),
        state.api.reads.max_list_argument,
    )?;
    let version = state.cache.version().await?;
    let counted = state
        .facets
        .get(&state.store, version, facet, &chain_ids.unwrap_or_default())
        .await?;
    Ok(counted
        .iter()
        .take(first)
        .map(|(value, count)| FacetCount {
            value: value.clone(),
            count: *count,
        })
        .collect())
}

#[Object]
impl FacetQuery {
    /// The payment tokens of every indexed chain, so amounts (in smallest units) can be shown
    /// in whole tokens.
    async fn payment_tokens(&self, ctx: &Context<'_>) -> Vec<PaymentToken> {
        let state = ctx.data_unchecked::<ApiState>();
        state
            .tokens
            .iter()
            .map(|(chain_id, token)| PaymentToken {
                chain_id: *chain_id as i64,
                address: format!("{:#x}", token.address),
                symbol: token.symbol.clone(),
                decimals: i32::from(token.decimals),
            })
            .collect()
    }

    /// The most advertised skills, with how many agents advertise each.
    #[graphql(complexity = "super::page_cost(first, child_complexity)")]
    async fn skill_facets(
        &self,
        ctx: &Context<'_>,
        chain_ids: Option<Vec<i64>>,
        #[graphql(default = 50)] first: i32,
    ) -> Result<Vec<FacetCount>> {
        facet_counts(ctx, Facet::Skills, chain_ids, first).await
    }

    /// The most used tags (of skills, and those agents declare themselves, as a Masumi entry
    /// does), with how many agents carry each.
    #[graphql(complexity = "super::page_cost(first, child_complexity)")]
    async fn tag_facets(
        &self,
        ctx: &Context<'_>,
        chain_ids: Option<Vec<i64>>,
        #[graphql(default = 50)] first: i32,
    ) -> Result<Vec<FacetCount>> {
        facet_counts(ctx, Facet::Tags, chain_ids, first).await
    }

    /// Agents by source and activity, per indexed chain.
    async fn totals(&self, ctx: &Context<'_>) -> Result<Vec<ChainTotals>> {
        let pool = ctx.data_unchecked::<ApiState>().store.reader();
        let mut totals: BTreeMap<i64, ChainTotals> = BTreeMap::new();
        for facets::ChainActivity {
            chain_id,
            payments,
            feedback,
            validation_requests,
        } in facets::activity(pool).await?
        {
            totals.insert(
                chain_id,
                ChainTotals {
                    chain_id,
                    payments,
                    feedback,
                    validation_requests,
                    ..ChainTotals::default()
                },
            );
        }
        for (chain_id, source, count) in facets::agents_by_source(pool).await? {
            let entry = totals.entry(chain_id).or_insert_with(|| ChainTotals {
                chain_id,
                ..ChainTotals::default()
            });
            entry.agents += count;
            match source.as_str() {
                "factory" => entry.factory_agents += count,
                "registry" => entry.registry_agents += count,
                "erc8004" => entry.erc8004_agents += count,
                "masumi" => entry.masumi_agents += count,
                _ => {}
            }
        }
        Ok(totals.into_values().collect())
    }

    /// The newest `days` days with data of `series` on `chainId`, oldest first. `VOLUME`
    /// needs `token` (a configured payment token of the chain).
    async fn daily_series(
        &self,
        ctx: &Context<'_>,
        chain_id: i64,
        series: DailySeries,
        token: Option<String>,
        #[graphql(default = 30)] days: i32,
    ) -> Result<Vec<DailyPoint>> {
        let state = ctx.data_unchecked::<ApiState>();
        let days = bounded(days)?;
        let (series, divisor) = match series {
            DailySeries::Registrations => (Series::Registrations, 1.0),
            DailySeries::Payments => (Series::Payments, 1.0),
            DailySeries::Feedback => (Series::Feedback, 1.0),
            DailySeries::Volume => {
                let token_text = token
                    .as_deref()
                    .ok_or_else(|| Error::new("VOLUME needs token"))?;
                let wanted = token_text.to_lowercase();
                let rule = state
                    .rules
                    .get(&(chain_id as u64))
                    .and_then(|rules| {
                        rules
                            .tokens
                            .iter()
                            .find(|(address, _)| format!("{address:#x}") == wanted)
                            .map(|(_, rule)| rule)
                    })
                    .ok_or_else(|| {
                        Error::new(format!(
                            "token {token_text} is not a payment token of chain {chain_id}"
                        ))
                    })?;
                (Series::Volume, 10f64.powi(i32::from(rule.decimals)))
            }
        };
        let rows = facets::daily(
            state.store.reader(),
            chain_id,
            series,
            token.as_deref(),
            days,
        )
        .await?;
        Ok(rows
            .into_iter()
            .map(|(day, value)| DailyPoint {
                day,
                value: value / divisor,
            })
            .collect())
    }

    /// The agents with the highest composite reputation.
    #[graphql(complexity = "super::page_cost(first, child_complexity)")]
    async fn top_agents(
        &self,
        ctx: &Context<'_>,
        chain_ids: Option<Vec<i64>>,
        #[graphql(default = 10)] first: i32,
    ) -> Result<Vec<Agent>> {
        let first = bounded(first)?.min(100);
        let state = ctx.data_unchecked::<ApiState>();
        capped(
            "chainIds",
            chain_ids.as_deref(),
            state.api.reads.max_list_argument,
        )?;
        super::relations::charge(ctx, first as u64, "topAgents")?;
        let selection = Selection {
            chain_ids: chain_ids.unwrap_or_default(),
            ..Selection::default()
        };
        let pool = state.store.reader();
        let counts = &state.term_counts;
        let listed = agents::list(pool, counts, &selection, Order::Reputation, None, first).await?;
        Ok(listed.into_iter().map(|l| Agent(l.row)).collect())
    }
}
