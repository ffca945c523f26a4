//! The proofs of payment in agents' feedback files, as reputation may believe them: a feedback
//! file (fetched by the documents worker, kept under `documents` with `expect = 'feedback'`)
//! counts only when its bytes are the ones the chain committed to (their keccak256 is the
//! event's `feedbackHash`, or the URI is content-addressed and no hash was given), it does not
//! name another chain, agent or client, and its proof names this chain. Whether the cited payment
//! is one of the agent's counted payments is reputation's rule (`reputation::evidence`).

use crate::documents::uri::is_content_addressed;
use crate::documents::{Expect, FeedbackFileProjection};
use crate::reputation::CitedPayment;
use crate::schema::documents;
use crate::store::Dialect;
use crate::store::decode;
use crate::store::in_list::push_in;
use crate::store::{QueryContext, StoreResult};
use alloy::primitives::{Address, B256};
use sqlx::{Any, AnyConnection, QueryBuilder};
use std::collections::{BTreeMap, BTreeSet};

/// URIs per IN list.
const URIS_PER_QUERY: usize = 2_000;

/// A feedback file as stored: the keccak256 of its bytes and what was read from it.
pub(super) struct StoredFile {
    hash: Option<B256>,
    file: FeedbackFileProjection,
}

/// The feedback files read well at `uris`, by URI.
pub(super) async fn stored(
    conn: &mut AnyConnection,
    uris: &BTreeSet<String>,
) -> StoreResult<BTreeMap<String, StoredFile>> {
    let mut out = BTreeMap::new();
    let uris: Vec<&String> = uris.iter().collect();
    for chunk in uris.chunks(URIS_PER_QUERY) {
        let mut query = QueryBuilder::<Any>::new(format!(
            "SELECT uri, hash, projection FROM {documents_table} WHERE status = 'ok' AND kind = 'feedback' AND expect = ",
            documents_table = documents::NAME,
        ));
        query.push_bind(Expect::Feedback.as_str());
        query.push(" AND uri");
        push_in(&mut query, chunk.iter().map(|u| u.as_str()));
        let rows: Vec<(String, Option<String>, String)> = Dialect::of(conn)
            .portable(query)
            .build_query_as()
            .fetch_all(&mut *conn)
            .await
            .context("reading feedback files")?;
        for (uri, hash, projection) in rows {
            let hash = decode::parse_opt(documents::NAME, "hash", hash.as_deref())?;
            let file = decode::json(documents::NAME, "projection", &projection)?;
            out.insert(uri, StoredFile { hash, file });
        }
    }
    Ok(out)
}

/// The feedback a file is for, as the chain has it.
pub(super) struct OnChainFeedback<'a> {
    pub(super) chain_id: u64,
    pub(super) registry: Address,
    pub(super) token_id: &'a str,
    pub(super) client: Address,
    pub(super) uri: &'a str,
    pub(super) hash: B256,
}

/// The payment `stored` cites for `feedback`, when the file may be believed.
pub(super) fn cited(stored: &StoredFile, feedback: &OnChainFeedback<'_>) -> Option<CitedPayment> {
    let committed = if feedback.hash == B256::ZERO {
        is_content_addressed(feedback.uri)
    } else {
        stored.hash == Some(feedback.hash)
    };
    let file = &stored.file;
    let proof = file.proof_of_payment.as_ref()?;
    let fits = file.fits(
        feedback.chain_id,
        feedback.registry,
        feedback.token_id,
        feedback.client,
    ) && proof.chain_id.is_none_or(|c| c == feedback.chain_id);
    (committed && fits).then_some(CitedPayment {
        tx_hash: proof.tx_hash,
        from: proof.from_address,
        to: proof.to_address,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::documents::ProofOfPayment;
    use alloy::primitives::keccak256;

    fn file(hash: Option<B256>) -> StoredFile {
        StoredFile {
            hash,
            file: FeedbackFileProjection {
                agent_id: Some("3".into()),
                proof_of_payment: Some(ProofOfPayment {
                    tx_hash: B256::repeat_byte(7),
                    from_address: None,
                    to_address: None,
                    chain_id: Some(31337),
                }),
                ..Default::default()
            },
        }
    }

    fn feedback<'a>(uri: &'a str, hash: B256) -> OnChainFeedback<'a> {
        OnChainFeedback {
            chain_id: 31337,
            registry: Address::with_last_byte(0x80),
            token_id: "3",
            client: Address::with_last_byte(1),
            uri,
            hash,
        }
    }

    #[test]
    fn a_file_counts_only_when_its_bytes_are_the_ones_the_chain_committed_to() {
        let bytes_hash = keccak256(b"the file");
        let https = "https://reviews.example/f.json";
        let ipfs = "ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
        assert!(cited(&file(Some(bytes_hash)), &feedback(https, bytes_hash)).is_some());
        assert!(
            cited(
                &file(Some(bytes_hash)),
                &feedback(https, B256::repeat_byte(1))
            )
            .is_none()
        );
        assert!(
            cited(&file(Some(bytes_hash)), &feedback(https, B256::ZERO)).is_none(),
            "a mutable URL without a hash proves nothing"
        );
        assert!(cited(&file(Some(bytes_hash)), &feedback(ipfs, B256::ZERO)).is_some());
    }

    #[test]
    fn a_file_for_another_agent_or_chain_proves_nothing() {
        let hash = keccak256(b"the file");
        let uri = "https://reviews.example/f.json";
        let mut other_agent = feedback(uri, hash);
        other_agent.token_id = "4";
        assert!(cited(&file(Some(hash)), &other_agent).is_none());
        let mut other_chain = feedback(uri, hash);
        other_chain.chain_id = 1;
        assert!(cited(&file(Some(hash)), &other_chain).is_none());
    }
}
