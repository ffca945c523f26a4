//! `[api.query_limits]`: how big a GraphQL document may be, checked before it is expanded or
//! executed, on `/graphql` (HTTP and websocket) and on the subgraph endpoint alike. Plain data:
//! the API's `budget` module enforces it.
//!
//! The defaults leave room for every real client (each of the agent0 SDK's documents uses under a
//! quarter of each limit, which a test in the API keeps so; the explorer's largest, an agent's
//! page, has 244 tokens, 5 levels and 152 selections, no directives and no aliases) while a
//! refusal of the worst document costs one pass over at most `max_bytes` of text.

use super::{ConfigError, ConfigResult};
use serde::Deserialize;

/// `[api.query_limits]`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QueryLimitsConfig {
    /// Longest query text accepted, in bytes.
    pub max_bytes: usize,
    /// Most lexical tokens (names, punctuators, numbers, strings) a query may hold; the parser's
    /// work and memory grow with them.
    pub max_tokens: usize,
    /// Most directives (`@skip`, `@include`, …) a query may hold.
    pub max_directives: usize,
    /// Deepest nesting: of `{ [ (` in the text (so a value nested thousands deep never reaches
    /// the parser's recursion), and of selection sets once fragments are expanded.
    pub max_nesting: usize,
    /// Most selections (fields, fragment spreads and inline fragments) once every fragment is
    /// expanded: what the planner and the validators walk.
    pub max_expanded_selections: usize,
    /// Most fields one selection set may ask for once its fragments are merged in.
    pub max_fields_per_level: usize,
    /// Most aliases once fragments are expanded: aliases let a small query ask for the same
    /// expensive field many times, which depth and complexity do not see.
    pub max_aliases: usize,
}

impl Default for QueryLimitsConfig {
    fn default() -> Self {
        Self {
            max_bytes: 16 * 1024,
            max_tokens: 2_000,
            max_directives: 50,
            max_nesting: 32,
            max_expanded_selections: 2_000,
            max_fields_per_level: 200,
            max_aliases: 30,
        }
    }
}

impl QueryLimitsConfig {
    /// Refuses a zero limit (it would refuse every query), naming the key.
    pub(crate) fn validate(&self) -> ConfigResult<()> {
        for (key, value) in [
            ("max_bytes", self.max_bytes),
            ("max_tokens", self.max_tokens),
            ("max_directives", self.max_directives),
            ("max_nesting", self.max_nesting),
            ("max_expanded_selections", self.max_expanded_selections),
            ("max_fields_per_level", self.max_fields_per_level),
        ] {
            if value == 0 {
                return Err(ConfigError::Key {
                    key: format!("api.query_limits.{key}"),
                    message: "must be at least 1".into(),
                });
            }
        }
        // Past this the checks themselves could recurse too deep: the nesting limit is what
        // keeps the parser's and the validators' recursion shallow.
        if self.max_nesting > MAX_NESTING_CEILING {
            return Err(ConfigError::Key {
                key: "api.query_limits.max_nesting".into(),
                message: format!("must be at most {MAX_NESTING_CEILING}"),
            });
        }
        Ok(())
    }
}

/// The highest `max_nesting` accepted: deeper, the recursive GraphQL parser and validators could
/// exhaust a worker thread's stack.
const MAX_NESTING_CEILING: usize = 128;

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigError};
    use std::path::Path;

    fn load(text: &str, vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_toml_and_env(
            text,
            Path::new("test.toml"),
            vars.iter().map(|(k, v)| (k.to_string(), v.to_string())),
        )
    }

    #[test]
    fn query_limits_default_and_are_set_from_the_file_or_the_environment() {
        let config = load("", &[]).unwrap();
        assert_eq!(config.api.query_limits.max_tokens, 2_000);
        assert_eq!(config.api.query_limits.max_nesting, 32);
        let config = load(
            "[api.query_limits]\nmax_tokens = 500\n",
            &[("AGENTINDEX_API__QUERY_LIMITS__MAX_ALIASES", "5")],
        )
        .unwrap();
        assert_eq!(config.api.query_limits.max_tokens, 500);
        assert_eq!(config.api.query_limits.max_aliases, 5);
        assert_eq!(config.api.query_limits.max_bytes, 16 * 1024);
    }

    #[test]
    fn the_shipped_example_states_the_defaults() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/agentindex.example.toml"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let config = load(&text, &[]).unwrap();
        assert_eq!(config.api.query_limits, super::QueryLimitsConfig::default());
        assert!(text.contains("[api.query_limits]"));
    }

    #[test]
    fn zero_or_too_deep_limits_are_refused_naming_the_key() {
        for (var, key) in [
            (
                "AGENTINDEX_API__QUERY_LIMITS__MAX_TOKENS",
                "api.query_limits.max_tokens",
            ),
            (
                "AGENTINDEX_API__QUERY_LIMITS__MAX_EXPANDED_SELECTIONS",
                "api.query_limits.max_expanded_selections",
            ),
        ] {
            match load("", &[(var, "0")]) {
                Err(ConfigError::Key { key: named, .. }) => assert_eq!(named, key),
                other => panic!("{var}=0 was not refused: {other:?}"),
            }
        }
        match load("[api.query_limits]\nmax_nesting = 100000\n", &[]) {
            Err(ConfigError::Key { key, message }) => {
                assert_eq!(key, "api.query_limits.max_nesting");
                assert!(message.contains("at most 128"), "{message}");
            }
            other => panic!("a huge nesting limit was not refused: {other:?}"),
        }
        match load("[api.query_limits]\nmax_tokenz = 1\n", &[]) {
            Err(ConfigError::Key { key, .. }) => assert!(key.contains("query_limits"), "{key}"),
            other => panic!("an unknown key was not refused: {other:?}"),
        }
    }
}
