//! Fetched documents, their lint findings, and which agent each describes. See [`super`] for what a
//! declaration holds.

super::tables! {
    /// Every fetched document (card, registration file, feedback file) by URI and expected
    /// kind: its state, bytes' digest and when it is next fetched.
    documents [uri, expect] {
        uri: String,
        expect: String,
        /// ok | invalid | failed
        status: String,
        /// the URL it came from after redirects, or data:
        source: Option<String>,
        bytes: Option<Vec<u8>>,
        /// keccak256 of bytes
        hash: Option<String>,
        etag: Option<String>,
        last_modified: Option<String>,
        /// card | registration, once read
        kind: Option<String>,
        /// JSON
        projection: Option<String>,
        /// cards: unsigned | valid | invalid | key_unavailable | unsupported
        signature: Option<String>,
        /// the first error, when any
        error: Option<String>,
        /// failed attempts in a row
        failures: i64,
        /// unix seconds
        fetched_at: i64,
        next_fetch_at: i64,
    }

    /// The validation report of each document, a row per finding.
    document_lints [] {
        uri: String,
        expect: String,
        code: String,
        /// error | warning | info
        severity: String,
        message: String,
        path: String,
        position: i64,
    }

    /// Which documents describe which agent, in which role.
    agent_documents [agent_key, role, uri, expect] {
        agent_key: String,
        /// registration | card | metadata | domain | onchain
        role: String,
        uri: String,
        expect: String,
    }
}
