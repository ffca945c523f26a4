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
            rows.insert(feedback::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: identity_hex,
                token_id: token_id.to_string(),
                client: hex_address(client),
                feedback_index: index.map(sql_bits),
                value: value.to_string(),
                value_decimals: i64::from(*decimals),
                tag1: tag1.clone(),
                tag2: tag2.clone(),
                endpoint: endpoint.clone(),
                feedback_uri: uri.clone(),
                feedback_hash: hex_b256(hash),
                shape: shape.as_str().to_string(),
                block_number: block,
                log_index: log,
                tx_hash: hex_b256(&ev.tx_hash),
                timestamp: int("block_timestamp", ev.block_timestamp)?,
            });
        }
        Decoded::FeedbackRevoked {
            token_id,
            client,
            index,
        } => {
            rows.insert(feedback_revocations::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: identity_hex,
                token_id: token_id.to_string(),
                client: hex_address(client),
                feedback_index: sql_bits(*index),
                block_number: block,
                log_index: log,
            });
        }
        Decoded::ResponseAppended {
            token_id,
            client,
            index,
            responder,
            uri,
            hash,
        } => {
            rows.insert(feedback_responses::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: identity_hex,
                token_id: token_id.to_string(),
                client: hex_address(client),
                feedback_index: sql_bits(*index),
                responder: hex_address(responder),
                response_uri: uri.clone(),
                response_hash: hex_b256(hash),
                block_number: block,
                log_index: log,
            });
        }
        Decoded::ValidationRequest {
            validator,
            token_id,
            uri,
            request_hash,
        } => {
            rows.insert(validation_requests::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: identity_hex,
                request_hash: hex_b256(request_hash),
                validator: hex_address(validator),
                token_id: token_id.to_string(),
                request_uri: uri.clone(),
                block_number: block,
                log_index: log,
                tx_hash: hex_b256(&ev.tx_hash),
            });
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
            rows.insert(validation_responses::Row {
                chain_id: int("chain_id", chain_id)?,
                registry: identity_hex,
                request_hash: hex_b256(request_hash),
                validator: hex_address(validator),
                token_id: token_id.to_string(),
                response: i64::from(*response),
                response_uri: uri.clone(),
                response_hash: hex_b256(response_hash),
                tag: tag.clone(),
                shape: shape.as_str().to_string(),
                block_number: block,
                log_index: log,
                tx_hash: hex_b256(&ev.tx_hash),
                timestamp: int("block_timestamp", ev.block_timestamp)?,
            });
        }
        _ => {}
    }
    Ok(())
}
