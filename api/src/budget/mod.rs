//! How big a GraphQL document may be, decided before anything expands it: one place that owns
//! it for every entry point (`/graphql` over HTTP and websocket through [`extension`], the
//! subgraph endpoint through its planner).
//!
//! Two passes, each linear in the text: [`lexical`] counts bytes, tokens, directives and the
//! nesting of `{ [ (` before the parser runs (the parser recurses once per level, so a value
//! nested thousands deep would overflow its stack); [`document`] walks the parsed document with
//! each fragment's expanded size computed once, so fragments spreading fragments (an exponential
//! fan-out in a few hundred bytes) are measured without being expanded. Whatever passes both is
//! small enough for async-graphql's own validators and the subgraph planner, which do expand.
//!
//! Each dialect words a refusal its own way: [`BudgetError`]'s `Display` is async-graphql's
//! style (for `/graphql`), [`BudgetError::subgraph_message`] graph-node's.

pub(crate) mod document;
pub(crate) mod extension;
pub(crate) mod lexical;

use agentindex_indexer::config::QueryLimitsConfig;
use async_graphql::Pos;

/// Why a document was refused, with the limit it passed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The text is longer than `max_bytes`.
    #[error("the query is {bytes} bytes; at most {limit} are accepted")]
    TooLong {
        /// Its length.
        bytes: usize,
        /// `max_bytes`.
        limit: usize,
    },
    /// The variables, as JSON, are longer than `max_bytes`. A variable is copied into every
    /// place the query names it, so its size multiplies with the query's references to it.
    #[error("the variables are {bytes} bytes; at most {limit} are accepted")]
    VariablesTooLong {
        /// Their length as JSON.
        bytes: usize,
        /// `max_bytes`.
        limit: usize,
    },
    /// The text holds more than `max_tokens` tokens.
    #[error("The query has {tokens} tokens; at most `{limit}` are accepted")]
    TooManyTokens {
        /// Tokens counted.
        tokens: usize,
        /// `max_tokens`.
        limit: usize,
    },
    /// The text holds more than `max_directives` directives.
    #[error("The query has {directives} directives; at most `{limit}` are accepted")]
    TooManyDirectives {
        /// Directives counted.
        directives: usize,
        /// `max_directives`.
        limit: usize,
    },
    /// Brackets in the text, or selection sets once fragments are expanded, nest deeper than
    /// `max_nesting`.
    #[error("Query is nested too deep: it nests more than `{limit}` levels")]
    TooDeep {
        /// `max_nesting`.
        limit: usize,
        /// Where the limit was passed.
        at: Pos,
    },
    /// More than `max_expanded_selections` selections once fragments are expanded.
    #[error(
        "The query has more than `{limit}` fields, fragment spreads and inline fragments once its fragments are expanded"
    )]
    TooManySelections {
        /// `max_expanded_selections`.
        limit: usize,
    },
    /// One selection set asks for more than `max_fields_per_level` fields.
    #[error("A selection set asks for {fields} fields; at most `{limit}` are accepted")]
    TooWide {
        /// Fields in that set, its fragments merged in.
        fields: usize,
        /// `max_fields_per_level`.
        limit: usize,
        /// The selection set.
        at: Pos,
    },
    /// More than `max_aliases` aliases once fragments are expanded.
    #[error("the query uses {aliases} aliases; at most {limit} are allowed")]
    TooManyAliases {
        /// Aliases counted, fragments expanded.
        aliases: usize,
        /// `max_aliases`.
        limit: usize,
    },
    /// A block string (`"""`) is never closed. The parser would not stop there: it reads the
    /// `""` as an empty string and parses on, through brackets this pass took for string
    /// content, so such a text is refused before it reaches the parser.
    #[error("Syntax error: the block string opened here is never closed")]
    UnclosedBlockString {
        /// Where it opens.
        at: Pos,
    },
    /// A fragment spreads itself, directly or through others.
    #[error("Cannot spread fragment `{name}` within itself")]
    FragmentCycle {
        /// A fragment on the cycle.
        name: String,
        /// The spread that closes it.
        at: Pos,
    },
}

impl BudgetError {
    /// Where in the document the limit was passed, when one place is to blame.
    pub fn position(&self) -> Option<Pos> {
        match self {
            Self::TooDeep { at, .. }
            | Self::TooWide { at, .. }
            | Self::FragmentCycle { at, .. }
            | Self::UnclosedBlockString { at } => Some(*at),
            _ => None,
        }
    }

    /// The refusal in graph-node's words where graph-node has the limit (depth, fragment
    /// cycles), in its style (``query has … `N` ``) where it has none.
    pub fn subgraph_message(&self) -> String {
        match self {
            Self::TooLong { bytes, limit } => {
                format!("the query is {bytes} bytes; at most {limit} are accepted")
            }
            Self::VariablesTooLong { .. } => self.to_string(),
            Self::TooManyTokens { tokens, limit } => {
                format!("query has `{tokens}` tokens and thereby exceeds the limit of `{limit}`")
            }
            Self::TooManyDirectives { directives, limit } => format!(
                "query has `{directives}` directives and thereby exceeds the limit of `{limit}`"
            ),
            Self::TooDeep { limit, .. } => {
                format!("query has a depth that exceeds the limit of `{limit}`")
            }
            Self::TooManySelections { limit } => format!(
                "query has more than `{limit}` selections once its fragments are expanded and thereby exceeds the limit of `{limit}`"
            ),
            Self::TooWide { fields, limit, .. } => format!(
                "query asks for `{fields}` fields in one selection set and thereby exceeds the limit of `{limit}`"
            ),
            Self::TooManyAliases { aliases, limit } => {
                format!("query uses `{aliases}` aliases and thereby exceeds the limit of `{limit}`")
            }
            Self::FragmentCycle { name, .. } => {
                format!("query has fragment cycle including `{name}`")
            }
            Self::UnclosedBlockString { .. } => self.to_string(),
        }
    }

    /// The refusal as async-graphql reports errors (`errors[0].message` and `locations`).
    pub(crate) fn server_error(&self) -> async_graphql::ServerError {
        async_graphql::ServerError::new(self.to_string(), self.position())
    }
}

/// The limits of `[api.query_limits]`, checked by [`lexical`] and [`document`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryBudget {
    limits: QueryLimitsConfig,
}

impl QueryBudget {
    /// A budget of `limits` (validated when the config loaded).
    pub fn new(limits: QueryLimitsConfig) -> Self {
        Self { limits }
    }

    /// The limits.
    pub fn limits(&self) -> &QueryLimitsConfig {
        &self.limits
    }

    /// Checks `text` before the parser runs: bytes, tokens, directives, bracket nesting.
    pub fn check_text(&self, text: &str) -> Result<(), BudgetError> {
        lexical::check(text, &self.limits).map(drop)
    }

    /// Checks `variables` before any is substituted: their size as JSON, against `max_bytes`
    /// (counted without building the text).
    pub fn check_variables(&self, variables: &async_graphql::Variables) -> Result<(), BudgetError> {
        let mut counter = ByteCounter(0);
        // Writing into a counter cannot fail; a value that would not serialise counts as none.
        let _ = serde_json::to_writer(&mut counter, variables);
        if counter.0 > self.limits.max_bytes {
            return Err(BudgetError::VariablesTooLong {
                bytes: counter.0,
                limit: self.limits.max_bytes,
            });
        }
        Ok(())
    }

    /// Checks a parsed `document` before anything expands it: expanded selections, depth,
    /// fields per level, aliases, fragment cycles.
    pub fn check_document(
        &self,
        document: &async_graphql::parser::types::ExecutableDocument,
    ) -> Result<(), BudgetError> {
        document::check(document, &self.limits).map(drop)
    }
}

impl Default for QueryBudget {
    fn default() -> Self {
        Self::new(QueryLimitsConfig::default())
    }
}

/// Counts the bytes written to it.
struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
