//! Facts of the ERC-8004 Reputation and Validation registries: feedback, revocations,
//! responses, validation requests and every validation response.

use crate::primitives::sql_bits;
use crate::schema::{
    feedback, feedback_responses, feedback_revocations, validation_requests, validation_responses,
};
use crate::sources::{Decoded, hex_address, hex_b256};
use crate::store::StoreResult;
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::decode::int;
use crate::store::rows::Rows;

pub(super) fn apply(
    rows: &mut Rows,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
) -> StoreResult<()> {
    let chain_id = chain.chain_id;
    let (block, log) = (
        int("block_number", ev.block_number)?,
        int("log_index", ev.log_index)?,
    );
    // Token ids in reputation and validation events refer to the identity registry.
    let identity_hex = hex_address(&chain.identity.unwrap_or(ev.address));
    match decoded {
        Decoded::NewFeedback {
            token_id,
            client,
            index,
            value,
            decimals,
            tag1,
            tag2,
            endpoint,
            uri,
            hash,
            shape,
        } => {
            rows.push(
feedback::NAME,
"chain_id, registry, token_id, client, feedback_index, value, value_decimals, tag1, tag2, endpoint, feedback_uri, feedback_hash, shape, block_number, log_index, tx_hash, timestamp",
vec![int("chain_id", chain_id)?.into(), (&identity_hex).into(), token_id.to_string().into(), hex_address(client).into(), index.map(sql_bits).into(), value.to_string().into(), i64::from(*decimals).into(), tag1.into(), tag2.into(), endpoint.into(), uri.into(), hex_b256(hash).into(), shape.as_str().into(), block.into(), log.into(), hex_b256(&ev.tx_hash).into(), int("block_timestamp", ev.block_timestamp)?.into()],
);
        }
        Decoded::FeedbackRevoked {
            token_id,
            client,
            index,
        } => {
            rows.push(
                feedback_revocations::NAME,
                "chain_id, registry, token_id, client, feedback_index, block_number, log_index",
                vec![
                    int("chain_id", chain_id)?.into(),
                    (&identity_hex).into(),
                    token_id.to_string().into(),
                    hex_address(client).into(),
                    sql_bits(*index).into(),
                    block.into(),
                    log.into(),
                ],
            );
        }
        Decoded::ResponseAppended {
            token_id,
            client,
            index,
            responder,
            uri,
            hash,
        } => {
            rows.push(
feedback_responses::NAME,
"chain_id, registry, token_id, client, feedback_index, responder, response_uri, response_hash, block_number, log_index",
vec![int("chain_id", chain_id)?.into(), (&identity_hex).into(), token_id.to_string().into(), hex_address(client).into(), sql_bits(*index).into(), hex_address(responder).into(), uri.into(), hex_b256(hash).into(), block.into(), log.into()],
);
        }
        Decoded::ValidationRequest {
            validator,
            token_id,
            uri,
            request_hash,
        } => {
            rows.push(
validation_requests::NAME,
"chain_id, registry, request_hash, validator, token_id, request_uri, block_number, log_index, tx_hash",
vec![int("chain_id", chain_id)?.into(), (&identity_hex).into(), hex_b256(request_hash).into(), hex_address(validator).into(), token_id.to_string().into(), uri.into(), block.into(), log.into(), hex_b256(&ev.tx_hash).into()],
);
        }
        Decoded::ValidationResponse {
            validator,
            token_id,
            request_hash,
            response,
            uri,
            response_hash,
            tag,
            shape,
        } => {
            rows.push(
validation_responses::NAME,
"chain_id, registry, request_hash, validator, token_id, response, response_uri, response_hash, tag, shape, block_number, log_index, tx_hash, timestamp",
vec![int("chain_id", chain_id)?.into(), (&identity_hex).into(), hex_b256(request_hash).into(), hex_address(validator).into(), token_id.to_string().into(), i64::from(*response).into(), uri.into(), hex_b256(response_hash).into(), tag.into(), shape.as_str().into(), block.into(), log.into(), hex_b256(&ev.tx_hash).into(), int("block_timestamp", ev.block_timestamp)?.into()],
);
        }
        _ => {}
    }
    Ok(())
}
