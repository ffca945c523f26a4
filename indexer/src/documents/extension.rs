//! A protocol extension a card declares (`capabilities.extensions[]`): read with the card and
//! searched for payment terms, so it sits below both readers and neither imports the other.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A declared protocol extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extension {
    /// Its URI.
    pub uri: String,
    /// What the card says it is for.
    pub description: Option<String>,
    /// Whether clients must support it.
    pub required: bool,
    /// Its parameters as given.
    pub params: Value,
}
