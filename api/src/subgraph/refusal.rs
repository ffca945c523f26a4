//! What the subgraph endpoint refuses in a query's values, in graph-node's words where
//! graph-node has some: a `where` filter it cannot read, an argument of the wrong type, a
//! `block` the index does not stand at. The planner places a refusal in the document
//! (`plan::QueryError`); its text is what the client reads, so each variant's wording is kept
//! as graph-node (or, for what graph-node never refuses, agentindex) has always written it.

/// Why a query's filter, argument or block was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refusal {
    /// `and`, `or` and nested entity filters nest deeper than allowed.
    #[error("the filter nests deeper than {max} levels")]
    FilterTooDeep {
        /// The most levels allowed.
        max: usize,
    },
    /// A filter is not an object.
    #[error("Expected input object of type `{entity}_filter`, found `{found}`")]
    NotAFilter {
        /// The entity filtered.
        entity: &'static str,
        /// The value given, as GraphQL writes it.
        found: String,
    },
    /// A list in a filter holds more items than `[api.reads] max_list_argument`.
    #[error("Filter `{key}` of `{entity}_filter` has {items} items; at most {max} are accepted")]
    ListTooLong {
        /// The filter key holding the list.
        key: String,
        /// The entity filtered.
        entity: &'static str,
        /// Items in the list.
        items: usize,
        /// The most accepted.
        max: usize,
    },
    /// A filter key no field and operator explain.
    #[error("Type `{entity}_filter` has no field `{key}`")]
    NoFilterField {
        /// The entity filtered.
        entity: &'static str,
        /// The key.
        key: String,
    },
    /// A value that is not of the type it is compared with.
    #[error("Failed to coerce value `{value}` to type `{to}`")]
    Coerce {
        /// The value given, as GraphQL writes it.
        value: String,
        /// The GraphQL type expected (`BigInt`).
        to: &'static str,
    },
    /// A string given for `Bytes` that is not `0x` and hex digits.
    #[error("Failed to decode `Bytes` value: `{value}`")]
    NotBytes {
        /// The string given.
        value: String,
    },
    /// A single value where a list is expected (`_in`, list fields).
    #[error("Expected a list of `{of}`, found `{found}`")]
    NotAList {
        /// The GraphQL type of the items.
        of: &'static str,
        /// The value given, as GraphQL writes it.
        found: String,
    },
    /// `block: { number }` above the indexed head (graph-node's wording, which the SDKs read).
    #[error(
        "Failed to decode `block.number` value: `subgraph {subgraph} has only indexed up to block number {indexed} and data for block number {asked} is therefore not yet available`"
    )]
    BlockNotYetIndexed {
        /// The subgraph's name.
        subgraph: &'static str,
        /// The block the index stands at.
        indexed: i64,
        /// The block asked for.
        asked: i64,
    },
    /// `block: { number }` below the indexed head: only the latest state is kept.
    #[error(
        "agentindex answers at its latest indexed block ({indexed}) only; block {asked} is earlier"
    )]
    BlockBeforeHead {
        /// The block the index stands at.
        indexed: i64,
        /// The block asked for.
        asked: i64,
    },
}
