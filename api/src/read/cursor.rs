//! Opaque Relay cursors for keyset pagination: the sort key of the last row seen and its agent
//! key (or, in an agent's own lists, its block and log index), so the next page starts strictly
//! after it however many rows arrived meanwhile.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};

/// Where a page ended, for one ordering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "o", rename_all = "lowercase")]
pub(crate) enum Cursor {
    /// Newest first: (registered block, agent key).
    Newest {
        /// Registered block of the last row.
        b: i64,
        /// Its agent key.
        k: String,
    },
    /// Highest reputation first: (score, agent key).
    Reputation {
        /// Score of the last row.
        s: f64,
        /// Its agent key.
        k: String,
    },
    /// Most relevant first: (rank, the agent's search number), the rank being the negated sum
    /// of the agent's weights for the search's words (`read::ranked_search`).
    Relevance {
        /// Rank of the last row (lower is better).
        r: f64,
        /// Its agent key (its search number is looked up from it).
        k: String,
    },
    /// An agent's payments, feedback, validations or history, newest first: (block, log index).
    Event {
        /// Block of the last item.
        b: i64,
        /// Its log index.
        l: i64,
    },
}

impl Cursor {
    /// The cursor as clients see it.
    pub(crate) fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(self).expect("a cursor serialises"))
    }

    /// Reads a cursor a client sent back; `None` when it is not one of ours.
    pub(crate) fn decode(text: &str) -> Option<Self> {
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_garbage_is_refused() {
        for cursor in [
            Cursor::Newest {
                b: 7,
                k: "1:0xab".into(),
            },
            Cursor::Reputation {
                s: 12.5,
                k: "1:0xab:3".into(),
            },
            Cursor::Relevance {
                r: -1.25,
                k: "x".into(),
            },
            Cursor::Event { b: 9, l: 2 },
        ] {
            assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
        }
        assert_eq!(Cursor::decode("not a cursor"), None);
        assert_eq!(Cursor::decode(&URL_SAFE_NO_PAD.encode("{}")), None);
    }
}
