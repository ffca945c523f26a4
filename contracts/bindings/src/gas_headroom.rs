//! Gas limits with headroom for the local chain's transactions.
//!
//! anvil estimates gas at the pending block's timestamp, which is the latest block's when both
//! fall in the same second, and mines the transaction in a block that may be a second later. A call that stores `block.timestamp` over
//! the same timestamp costs 100 gas in the estimate and 2,900 when the second has turned, so an
//! exact estimate runs out of gas now and then (seen as `validationResponse` reverting, which
//! writes `lastUpdate` after the request wrote it a block before). [`GasWithHeadroom`] fills gas
//! like alloy's own filler and then adds a margin, never above the block's gas limit. A gas limit
//! the caller set is kept as it is.

use alloy::network::{Ethereum, TransactionBuilder};
use alloy::providers::fillers::{FillerControlFlow, GasFillable, GasFiller, TxFiller};
use alloy::providers::{Provider, SendableTx};
use alloy::rpc::types::TransactionRequest;
use alloy::transports::TransportResult;

/// Gas added to every estimate: room for ten storage writes that turn from warm no-ops into
/// changes, plus a twentieth of the estimate.
const FIXED_HEADROOM: u64 = 30_000;

/// alloy's [`GasFiller`] with a margin on estimated gas limits.
#[derive(Clone, Debug)]
pub(crate) struct GasWithHeadroom {
    estimator: GasFiller,
    block_gas_limit: u64,
}

impl GasWithHeadroom {
    /// Fills gas, keeping estimated limits at or under `block_gas_limit`.
    pub(crate) fn new(block_gas_limit: u64) -> Self {
        Self {
            estimator: GasFiller::default(),
            block_gas_limit,
        }
    }

    fn with_headroom(&self, estimate: u64) -> u64 {
        let wanted = estimate
            .saturating_add(FIXED_HEADROOM)
            .saturating_add(estimate / 20);
        wanted.min(self.block_gas_limit).max(estimate)
    }
}

impl TxFiller<Ethereum> for GasWithHeadroom {
    type Fillable = GasFillable;

    fn status(&self, tx: &TransactionRequest) -> FillerControlFlow {
        TxFiller::<Ethereum>::status(&self.estimator, tx)
    }

    fn fill_sync(&self, _tx: &mut SendableTx<Ethereum>) {}

    async fn prepare<P>(
        &self,
        provider: &P,
        tx: &TransactionRequest,
    ) -> TransportResult<GasFillable>
    where
        P: Provider<Ethereum>,
    {
        let set_by_caller = tx.gas_limit().is_some();
        let fillable = self.estimator.prepare(provider, tx).await?;
        if set_by_caller {
            return Ok(fillable);
        }
        Ok(match fillable {
            GasFillable::Legacy {
                gas_limit,
                gas_price,
            } => GasFillable::Legacy {
                gas_limit: self.with_headroom(gas_limit),
                gas_price,
            },
            GasFillable::Eip1559 {
                gas_limit,
                estimate,
            } => GasFillable::Eip1559 {
                gas_limit: self.with_headroom(gas_limit),
                estimate,
            },
        })
    }

    async fn fill(
        &self,
        fillable: GasFillable,
        tx: SendableTx<Ethereum>,
    ) -> TransportResult<SendableTx<Ethereum>> {
        TxFiller::<Ethereum>::fill(&self.estimator, fillable, tx).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_is_added_and_capped_by_the_block() {
        let filler = GasWithHeadroom::new(30_000_000);
        assert_eq!(filler.with_headroom(100_000), 135_000);
        assert_eq!(filler.with_headroom(29_990_000), 30_000_000);
        // An estimate already over the cap is left for the node to refuse, not lowered.
        assert_eq!(filler.with_headroom(31_000_000), 31_000_000);
    }
}
