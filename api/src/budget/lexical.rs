//! The pass over a query's raw text, before the parser sees it: bytes, tokens (GraphQL Armor's
//! "max tokens"), directives, and how deep `{ [ (` nest. It keeps counters only, no token list,
//! so refusing the worst text costs one pass over at most `max_bytes`.
//!
//! It lexes GraphQL as the spec does wherever a miscount would matter: strings with escapes and
//! block strings (`"""…"""`, where `\"""` does not end one) are one token whatever brackets they
//! hold, comments run to the end of the line, commas are ignored like whitespace, `...` is one
//! token. Where the text is not GraphQL the parser refuses it where it fails, so the nesting
//! counted here bounds the parser's recursion, with one exception refused here: a block string
//! never closed, which the parser reads as an empty string `""` and parses on from.

use super::BudgetError;
use agentindex_indexer::config::QueryLimitsConfig;
use async_graphql::Pos;

/// What the text holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TextCounts {
    /// Names, numbers, strings and punctuators.
    pub(crate) tokens: usize,
    /// `@` signs outside strings and comments.
    pub(crate) directives: usize,
    /// Deepest nesting of `{ [ (` reached.
    pub(crate) nesting: usize,
}

/// Counts `text` against `limits`: refused as soon as brackets nest past `max_nesting`, else
/// after one pass if it is too long or holds too many tokens or directives.
pub(crate) fn check(text: &str, limits: &QueryLimitsConfig) -> Result<TextCounts, BudgetError> {
    if text.len() > limits.max_bytes {
        return Err(BudgetError::TooLong {
            bytes: text.len(),
            limit: limits.max_bytes,
        });
    }
    let counts = count(text, limits.max_nesting)?;
    if counts.tokens > limits.max_tokens {
        return Err(BudgetError::TooManyTokens {
            tokens: counts.tokens,
            limit: limits.max_tokens,
        });
    }
    if counts.directives > limits.max_directives {
        return Err(BudgetError::TooManyDirectives {
            directives: counts.directives,
            limit: limits.max_directives,
        });
    }
    Ok(counts)
}

/// One pass over `text`, stopping where brackets nest past `max_nesting`.
fn count(text: &str, max_nesting: usize) -> Result<TextCounts, BudgetError> {
    let bytes = text.as_bytes();
    let mut counts = TextCounts::default();
    let mut depth = 0usize;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' | b',' => {
                at += 1;
                continue;
            }
            b'#' => {
                at = line_end(bytes, at);
                continue;
            }
            b'"' if bytes[at..].starts_with(b"\"\"\"") => {
                at = block_string_end(bytes, at + 3).ok_or_else(|| {
                    BudgetError::UnclosedBlockString {
                        at: position(text, at),
                    }
                })?
            }
            b'"' => at = string_end(bytes, at + 1),
            b'{' | b'[' | b'(' => {
                depth += 1;
                if depth > max_nesting {
                    return Err(BudgetError::TooDeep {
                        limit: max_nesting,
                        at: position(text, at),
                    });
                }
                counts.nesting = counts.nesting.max(depth);
                at += 1;
            }
            b'}' | b']' | b')' => {
                depth = depth.saturating_sub(1);
                at += 1;
            }
            b'.' if bytes[at..].starts_with(b"...") => at += 3,
            b'@' => {
                counts.directives += 1;
                at += 1;
            }
            b'-' | b'0'..=b'9' => at = number_end(bytes, at + 1),
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => at = name_end(bytes, at + 1),
            // Other punctuators (`! $ & : = |`) and anything the parser will refuse: one each.
            _ => at += 1,
        }
        counts.tokens += 1;
    }
    Ok(counts)
}

/// Where a comment starting at `at` ends: at the next line terminator.
fn line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|b| matches!(b, b'\n' | b'\r'))
        .map_or(bytes.len(), |n| at + n)
}

/// Past the `"` closing a string whose content starts at `at`; a backslash escapes the byte
/// after it. A line terminator ends it (unterminated: the parser refuses it there).
fn string_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'"' => return at + 1,
            b'\n' | b'\r' => return at,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Past the `"""` closing a block string whose content starts at `at` (`\"""` does not close),
/// or `None` when nothing closes it.
fn block_string_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    while at < bytes.len() {
        if bytes[at..].starts_with(b"\\\"\"\"") {
            at += 4;
        } else if bytes[at..].starts_with(b"\"\"\"") {
            return Some(at + 3);
        } else {
            at += 1;
        }
    }
    None
}

/// Past a number: digits, `.`, exponents with their sign, and letters the parser will refuse.
fn number_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&byte) = bytes.get(at) {
        let exponent_sign =
            matches!(byte, b'+' | b'-') && matches!(bytes.get(at - 1), Some(b'e' | b'E'));
        let fraction = byte == b'.' && !bytes[at..].starts_with(b"...");
        if byte.is_ascii_alphanumeric() || byte == b'_' || exponent_sign || fraction {
            at += 1;
        } else {
            break;
        }
    }
    at
}

/// Past a name: `[_0-9A-Za-z]*`.
fn name_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(bytes.len(), |n| at + n)
}

/// The line and column (1-based, in characters) of byte `at`.
fn position(text: &str, at: usize) -> Pos {
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    Pos {
        line,
        column: before[line_start..].chars().count() + 1,
    }
}

#[cfg(test)]
#[path = "lexical_tests.rs"]
mod tests;
