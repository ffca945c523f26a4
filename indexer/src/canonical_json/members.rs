//! The members of the objects being written, and the order RFC 8785 puts them in: by name,
//! comparing the names' UTF-16 code units. That is code point order except that a character
//! beyond the BMP (two surrogates, from U+D800) comes before one of U+E000..U+FFFF. Each member
//! is written where it comes and remembered by its positions in the text; its name is compared
//! with the one before as written (escaped, between its quotes), so nothing is copied to compare
//! it, and only an object whose members did not come in order is rewritten, in order, when it
//! closes.

use std::cmp::Ordering;
use std::str::Chars;

/// One member of an object as the encoder wrote it, by its positions in the text: where its
/// name's opening quote is, where the name ends (after its closing quote) and where its value
/// ends.
#[derive(Debug, Clone, Copy)]
struct Member {
    /// The position of the name's opening quote.
    name_start: usize,
    /// The position just after the name's closing quote.
    name_end: usize,
    /// The position just after the value.
    end: usize,
    /// The name's first eight bytes as a number (see [`plain_prefix`]), when it is plain.
    prefix: Option<u64>,
}

impl Member {
    /// The member's name as written (escaped, without its quotes) in `text`, which starts at
    /// position `offset` of the encoder's text.
    fn name<'t>(&self, text: &'t str, offset: usize) -> &'t str {
        &text[self.name_start + 1 - offset..self.name_end - 1 - offset]
    }

    /// The length of its name as written, quotes included.
    fn quoted_len(&self) -> usize {
        self.name_end - self.name_start
    }

    /// The order of this member's name and `other`'s, both in `text` (starting at position
    /// `offset` of the encoder's text).
    fn order(&self, other: &Member, text: &str, offset: usize) -> Ordering {
        let (Some(mine), Some(theirs)) = (self.prefix, other.prefix) else {
            return compare_names(self.name(text, offset), other.name(text, offset));
        };
        match mine.cmp(&theirs) {
            // Alike in their first eight bytes, and neither has more (quoted, at most 10).
            Ordering::Equal if self.quoted_len() <= 10 && other.quoted_len() <= 10 => {
                Ordering::Equal
            }
            // Plain names: byte order is code unit order.
            Ordering::Equal => self.name(text, offset).cmp(other.name(text, offset)),
            unequal => unequal,
        }
    }
}

/// The first eight bytes of a name as written, zero-padded, as a big-endian number, when the
/// name is plain: ASCII with no escape, so one code unit a byte and none of them zero. Such
/// numbers order plain names as their first eight characters do.
fn plain_prefix(name: &str) -> Option<u64> {
    let mut prefix = 0;
    for (at, &byte) in name.as_bytes().iter().enumerate() {
        if !byte.is_ascii() || byte == b'\\' {
            return None;
        }
        if at < 8 {
            prefix |= u64::from(byte) << (56 - 8 * at);
        }
    }
    Some(prefix)
}

/// The members of every object still open, innermost last, and room to reorder them.
#[derive(Debug, Default)]
pub(super) struct Members {
    open: Vec<Member>,
    scratch: String,
}

/// An object still open: where its members start, and whether they came in order so far.
#[derive(Debug)]
pub(super) struct OpenObject {
    /// Where its members start in the text (just after its `{`).
    start: usize,
    /// Its first member's place among the open members.
    first: usize,
    /// Whether every member so far came after the one before it.
    in_order: bool,
}

impl Members {
    /// An object whose members start at the end of `out`.
    pub(super) fn open(&self, out: &str) -> OpenObject {
        OpenObject {
            start: out.len(),
            first: self.open.len(),
            in_order: true,
        }
    }

    /// Writes a member's name into `out` with `write_name` (quoted), after a comma unless it
    /// is `object`'s first, and the colon after it; notes whether it came in order.
    pub(super) fn name<E>(
        &mut self,
        out: &mut String,
        object: &mut OpenObject,
        write_name: impl FnOnce(&mut String) -> Result<(), E>,
    ) -> Result<(), E> {
        let previous = self.open[object.first..].last().copied();
        if previous.is_some() {
            out.push(',');
        }
        let name_start = out.len();
        write_name(out)?;
        let name_end = out.len();
        let member = Member {
            name_start,
            name_end,
            end: name_end + 1,
            prefix: plain_prefix(&out[name_start + 1..name_end - 1]),
        };
        if let Some(previous) = previous.filter(|_| object.in_order) {
            object.in_order = previous.order(&member, out, 0) == Ordering::Less;
        }
        out.push(':');
        self.open.push(member);
        Ok(())
    }

    /// Notes that the value of the member last named ends at `end`.
    pub(super) fn value_ends(&mut self, end: usize) {
        // Objects inside the value have closed and taken their members off: the last is its.
        if let Some(member) = self.open.last_mut() {
            member.end = end;
        }
    }

    /// Closes `object`, whose members run to the end of `out`, putting them in order first
    /// when they did not come in order (its closing brace is the caller's to write).
    pub(super) fn close(&mut self, out: &mut String, object: OpenObject) {
        if !object.in_order {
            sort_members(
                out,
                &mut self.scratch,
                &mut self.open[object.first..],
                object.start,
            );
        }
        self.open.truncate(object.first);
    }
}

/// The order of two names as written, by their UTF-16 code units.
fn compare_names(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() && !a.contains('\\') && !b.contains('\\') {
        // ASCII unescaped: one code unit per byte.
        return a.cmp(b);
    }
    NameUnits(a.chars()).cmp(NameUnits(b.chars()))
}

/// The characters of a name as written, escapes read, each as a number whose order is the
/// UTF-16 order of the characters (see [`utf16_rank`]).
struct NameUnits<'a>(Chars<'a>);

impl Iterator for NameUnits<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let written = self.0.next()?;
        let character = if written == '\\' {
            self.unescape()
        } else {
            written
        };
        Some(utf16_rank(character))
    }
}

impl NameUnits<'_> {
    /// The character of the escape whose backslash was just read (one the encoder writes).
    fn unescape(&mut self) -> char {
        match self.0.next() {
            Some('b') => '\u{8}',
            Some('t') => '\t',
            Some('n') => '\n',
            Some('f') => '\u{c}',
            Some('r') => '\r',
            Some('u') => {
                let code = (&mut self.0)
                    .take(4)
                    .fold(0, |code, digit| code * 16 + digit.to_digit(16).unwrap_or(0));
                char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            // `"` and `\` stand for themselves.
            Some(other) => other,
            None => '\\',
        }
    }
}

/// A number for `character` that orders characters as their UTF-16 code units do: a
/// character beyond the BMP starts with a surrogate (U+D800..U+DBFF), so U+E000..U+FFFF move
/// above every other character; the rest keep their code point.
fn utf16_rank(character: char) -> u32 {
    let code = u32::from(character);
    if (0xE000..=0xFFFF).contains(&code) {
        code - 0xE000 + 0x11_0000
    } else {
        code
    }
}

/// Rewrites the members of an object whose members start at `start` of `out` (just after its
/// `{`) and run to its end, in name order; of members with the same name the last written is
/// kept, as a map keeps the last value put under a key. `scratch` is working room.
fn sort_members(out: &mut String, scratch: &mut String, members: &mut [Member], start: usize) {
    scratch.clear();
    scratch.push_str(&out[start..]);
    // A stable sort: members with the same name stay in the order they were written.
    members.sort_by(|a, b| a.order(b, scratch, start));
    out.truncate(start);
    let mut first = true;
    for (index, member) in members.iter().enumerate() {
        let overwritten = members
            .get(index + 1)
            .is_some_and(|next| next.order(member, scratch, start) == Ordering::Equal);
        if overwritten {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&scratch[member.name_start - start..member.end - start]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_ordered_by_utf16_code_units_with_escapes_read() {
        let ordered = [
            "",
            "\\u0001",
            "\\b",
            "\\t",
            "\\n",
            "\\f",
            "\\r",
            "\\u001f",
            " ",
            "\\\"",
            "A",
            "\\\\",
            "a",
            "ab",
            "\u{7f}",
            "\u{e9}",
            "\u{d7ff}",
            "\u{10000}",
            "\u{1f600}",
            "\u{10ffff}",
            "\u{e000}",
            "\u{ffff}",
        ];
        for (i, a) in ordered.iter().enumerate() {
            for (j, b) in ordered.iter().enumerate() {
                assert_eq!(compare_names(a, b), i.cmp(&j), "{a:?} against {b:?}");
            }
        }
    }
}
