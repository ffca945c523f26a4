//! A field's value written straight from the SQL's JSON into the response: the bytes
//! [`values::output`](super::values::output) would give once serialized, without building a
//! value per field. What the statements return almost always is copied or lightly rewritten
//! (a string without escapes as it is, an integer `BigInt` quoted, a flag as `true` or
//! `false`); anything else goes through `values::output` and is serialized, so the two never
//! differ.

use super::catalogue::Scalar;
use super::values::{output, output_list};
use serde_json::Value as Json;
use serde_json::value::RawValue;

/// Writes what `raw` (one value of a statement's row, as JSON text) is sent as, typed as
/// `scalar`. Fails only where reading the row as JSON values fails.
pub(crate) fn write_output(
    scalar: Scalar,
    raw: &RawValue,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let text = raw.get();
    match (scalar, text.as_bytes().first()) {
        (_, Some(b'n')) => out.extend_from_slice(b"null"),
        (
            Scalar::Id | Scalar::String | Scalar::BigInt | Scalar::Int8 | Scalar::Timestamp,
            Some(b'"'),
        ) => write_json_string(text, out)?,
        (Scalar::Bytes, Some(b'"')) if !has_escape(text) => {
            out.extend(text.bytes().map(|b| b.to_ascii_lowercase()));
        }
        (Scalar::Bytes, Some(b'"')) => {
            let string: String = serde_json::from_str(text)?;
            write_str(&string.to_ascii_lowercase(), out);
        }
        (Scalar::BigInt | Scalar::Int8 | Scalar::Timestamp, _) if is_plain_integer(text) => {
            out.push(b'"');
            out.extend_from_slice(text.as_bytes());
            out.push(b'"');
        }
        (Scalar::Int, _) if is_plain_integer(text) => out.extend_from_slice(text.as_bytes()),
        (Scalar::Boolean, _) if text == "1" || text == "true" => out.extend_from_slice(b"true"),
        (Scalar::Boolean, _) if text == "0" || text == "false" => out.extend_from_slice(b"false"),
        _ => {
            let json: Json = serde_json::from_str(text)?;
            serde_json::to_writer(&mut *out, &output(scalar, &json))?;
        }
    }
    Ok(())
}

/// Writes a list field's JSON array (`raw`), each element typed as `scalar`, as
/// [`output_list`] reads it (anything but an array, or text holding one, is an empty list).
pub(crate) fn write_output_list(
    scalar: Scalar,
    raw: &RawValue,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    if raw.get().starts_with('[') {
        let items: Vec<&RawValue> = serde_json::from_str(raw.get())?;
        out.push(b'[');
        for (n, item) in items.into_iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            write_output(scalar, item, out)?;
        }
        out.push(b']');
        return Ok(());
    }
    let json: Json = serde_json::from_str(raw.get())?;
    serde_json::to_writer(&mut *out, &output_list(scalar, &json))
}

/// Writes `text` as a JSON string, escaped as the response's serializer escapes it.
pub(crate) fn write_str(text: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, text).expect("writing to a Vec cannot fail");
}

/// Writes the JSON string `json` as the response's serializer writes the text it holds: as it
/// is when it has no escape (it then holds no quote, backslash or control character, the only
/// characters the serializer escapes), else read and written again.
fn write_json_string(json: &str, out: &mut Vec<u8>) -> serde_json::Result<()> {
    if !has_escape(json) {
        out.extend_from_slice(json.as_bytes());
    } else {
        let text: String = serde_json::from_str(json)?;
        write_str(&text, out);
    }
    Ok(())
}

/// Whether the JSON string `json` has an escape in it.
fn has_escape(json: &str) -> bool {
    json.as_bytes().contains(&b'\\')
}

/// Whether `text` is an integer written as a JSON number is written back: no sign but a minus
/// before a non-zero digit, no leading zero, and few enough digits to read as an integer
/// (longer ones read as floats, and are written differently).
fn is_plain_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text).as_bytes();
    let leading_zero = digits.first() == Some(&b'0') && (digits.len() > 1 || text.len() > 1);
    !digits.is_empty()
        && digits.len() <= 18
        && digits.iter().all(u8::is_ascii_digit)
        && !leading_zero
}

#[cfg(test)]
#[path = "written_tests.rs"]
mod tests;
