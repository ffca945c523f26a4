//! Facts of the ERC-8004 Reputation and Validation registries: feedback, revocations,
//! responses, validation requests and every validation response.

use super::i;
use crate::sources::{Decoded, hex_address, hex_b256};
use crate::store::batch::{ChainContext, EventRecord};
use crate::store::{QueryContext, StoreResult};
use sqlx::SqliteConnection;

pub(super) async fn apply(
    conn: &mut SqliteConnection,
    chain: &ChainContext,
    ev: &EventRecord,
    decoded: &Decoded,
) -> StoreResult<()> {
    let chain_id = chain.chain_id;
    let (block, log) = (i(ev.block_number), i(ev.log_index));
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
            sqlx::query(
                "INSERT INTO feedback (chain_id, registry, token_id, client, feedback_index, value, value_decimals, tag1, tag2,
                    endpoint, feedback_uri, feedback_hash, shape, block_number, log_index, tx_hash, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(token_id.to_string())
            .bind(hex_address(client))
            .bind(index.map(i))
            .bind(value.to_string())
            .bind(i64::from(*decimals))
            .bind(tag1)
            .bind(tag2)
            .bind(endpoint)
            .bind(uri)
            .bind(hex_b256(hash))
            .bind(shape.as_str())
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting feedback")?;
        }
        Decoded::FeedbackRevoked {
            token_id,
            client,
            index,
        } => {
            sqlx::query(
                "INSERT INTO feedback_revocations (chain_id, registry, token_id, client, feedback_index, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(token_id.to_string())
            .bind(hex_address(client))
            .bind(i(*index))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a feedback revocation")?;
        }
        Decoded::ResponseAppended {
            token_id,
            client,
            index,
            responder,
            uri,
            hash,
        } => {
            sqlx::query(
                "INSERT INTO feedback_responses (chain_id, registry, token_id, client, feedback_index, responder, response_uri,
                    response_hash, block_number, log_index)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(token_id.to_string())
            .bind(hex_address(client))
            .bind(i(*index))
            .bind(hex_address(responder))
            .bind(uri)
            .bind(hex_b256(hash))
            .bind(block)
            .bind(log)
            .execute(&mut *conn)
            .await
            .context("inserting a feedback response")?;
        }
        Decoded::ValidationRequest {
            validator,
            token_id,
            uri,
            request_hash,
        } => {
            sqlx::query(
                "INSERT INTO validation_requests (chain_id, registry, request_hash, validator, token_id, request_uri,
                    block_number, log_index, tx_hash)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(hex_b256(request_hash))
            .bind(hex_address(validator))
            .bind(token_id.to_string())
            .bind(uri)
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .execute(&mut *conn)
            .await
            .context("inserting a validation request")?;
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
            sqlx::query(
                "INSERT INTO validation_responses (chain_id, registry, request_hash, validator, token_id, response, response_uri,
                    response_hash, tag, shape, block_number, log_index, tx_hash, timestamp)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(i(chain_id))
            .bind(&identity_hex)
            .bind(hex_b256(request_hash))
            .bind(hex_address(validator))
            .bind(token_id.to_string())
            .bind(i64::from(*response))
            .bind(uri)
            .bind(hex_b256(response_hash))
            .bind(tag)
            .bind(shape.as_str())
            .bind(block)
            .bind(log)
            .bind(hex_b256(&ev.tx_hash))
            .bind(i(ev.block_timestamp))
            .execute(&mut *conn)
            .await
            .context("inserting a validation response")?;
        }
        _ => {}
    }
    Ok(())
}
