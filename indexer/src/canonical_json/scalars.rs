//! The scalars of RFC 8785 JSON as text. A string is escaped as the RFC says: only `"`, `\` and
//! U+0000..U+001F, with the short forms `\b \t \n \f \r` and `\u00xx` (lower case) for the other
//! controls. A number takes ECMAScript's form (the shortest digits that read back to the same
//! double, `1e+21` from 1e21 up, `0` for -0); an integer is first taken as the double it rounds
//! to, as JavaScript would hold it, so 2^64 - 1 is written `18446744073709552000`.

/// Every integer of at most this magnitude is a double exactly, and the spacing of doubles
/// there is at most 1: the ECMAScript form of such an integer is its decimal digits.
const EXACT_INTEGERS: u64 = 1 << 53;

/// Appends `text` as a JSON string, quotes included.
pub(super) fn push_string(out: &mut String, text: &str) {
    out.push('"');
    let bytes = text.as_bytes();
    let (mut copied, mut at) = (0, 0);
    while at < bytes.len() {
        // Eight bytes at a time while none needs an escape (most strings need none).
        let eight = bytes
            .get(at..at + 8)
            .and_then(|e| <[u8; 8]>::try_from(e).ok());
        if eight.is_some_and(|eight| !any_to_escape(u64::from_le_bytes(eight))) {
            at += 8;
            continue;
        }
        let byte = bytes[at];
        if byte < 0x20 || byte == b'"' || byte == b'\\' {
            // An ASCII byte is a character of its own, so `at` is a character boundary.
            out.push_str(&text[copied..at]);
            push_escape(out, byte);
            copied = at + 1;
        }
        at += 1;
    }
    out.push_str(&text[copied..]);
    out.push('"');
}

/// Whether any of the eight bytes packed in `eight` is a control character, a quote or a
/// backslash (each test is exact for the word as a whole, though not byte by byte).
fn any_to_escape(eight: u64) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word;
    let controls = below(eight, 0x20);
    let quotes = below(eight ^ (ONES * u64::from(b'"')), 1);
    let backslashes = below(eight ^ (ONES * u64::from(b'\\')), 1);
    (controls | quotes | backslashes) & HIGH_BITS != 0
}

/// Appends the escape of `byte` (a quote, a backslash or a control character).
fn push_escape(out: &mut String, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        0x08 => "\\b",
        0x09 => "\\t",
        0x0a => "\\n",
        0x0c => "\\f",
        0x0d => "\\r",
        _ => {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
            return;
        }
    };
    out.push_str(short);
}

/// Appends a finite `value` in ECMAScript's form.
pub(super) fn push_f64(out: &mut String, value: f64) {
    debug_assert!(value.is_finite(), "{value} has no JSON form");
    if value.fract() == 0.0 && value.abs() <= EXACT_INTEGERS as f64 {
        // A whole number a double holds exactly: its digits, which is what the shortest
        // round-trip form gives (-0 included: it is written 0).
        push_digits(out, value.abs() as u64, value < 0.0);
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(value));
    }
}

/// Appends `value` as the double it rounds to.
pub(super) fn push_i64(out: &mut String, value: i64) {
    if value.unsigned_abs() <= EXACT_INTEGERS {
        push_digits(out, value.unsigned_abs(), value < 0);
    } else {
        push_f64(out, value as f64);
    }
}

/// Appends `value` as the double it rounds to.
pub(super) fn push_u64(out: &mut String, value: u64) {
    if value <= EXACT_INTEGERS {
        push_digits(out, value, false);
    } else {
        push_f64(out, value as f64);
    }
}

/// Appends `value` as the double it rounds to.
pub(super) fn push_i128(out: &mut String, value: i128) {
    match i64::try_from(value) {
        Ok(small) => push_i64(out, small),
        Err(_) => push_f64(out, value as f64),
    }
}

/// Appends `value` as the double it rounds to.
pub(super) fn push_u128(out: &mut String, value: u128) {
    match u64::try_from(value) {
        Ok(small) => push_u64(out, small),
        Err(_) => push_f64(out, value as f64),
    }
}

/// Appends the decimal digits of `magnitude`, after a minus sign when `negative` (and it is
/// not zero).
fn push_digits(out: &mut String, magnitude: u64, negative: bool) {
    let mut digits = [0u8; 20];
    let mut first = digits.len();
    let mut rest = magnitude;
    loop {
        first -= 1;
        digits[first] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative && magnitude != 0 {
        out.push('-');
    }
    out.extend(digits[first..].iter().map(|&digit| char::from(digit)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_bytes_at_a_time_find_exactly_the_bytes_to_escape() {
        for byte in 0..=u8::MAX {
            let to_escape = byte < 0x20 || byte == b'"' || byte == b'\\';
            for filler in [b'a', b'!', b'#', b'[', b']', 0x7f, 0x80, 0xc3, 0xff] {
                for place in 0..8 {
                    let mut eight = [filler; 8];
                    eight[place] = byte;
                    let found = any_to_escape(u64::from_le_bytes(eight));
                    assert_eq!(found, to_escape, "{byte:#x} at {place} among {filler:#x}");
                }
            }
        }
    }
}
