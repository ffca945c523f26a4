//! RFC 8785 (JCS) canonical JSON of any serde-serialisable value, byte for byte what
//! `serde_jcs` writes, written fast: straight into one string ([`encoder`]), with the members
//! of an object compared as they come and put in UTF-16 name order only when they did not come
//! in it ([`members`]), numbers in ECMAScript's form and strings escaped as the RFC says
//! ([`scalars`]), map keys as names ([`key`]). The stored reputation rows and the reputation
//! feed are written with it (`store::reputation`, `feed`), so a feed line can copy a stored
//! evaluation as it is.
//!
//! A non-finite number has no JSON form: as with `serde_jcs`, it is an error when it is the
//! whole value, and null inside one (where serde_json, which `serde_jcs` wraps, writes null).

mod encoder;
mod key;
mod members;
mod scalars;

use encoder::Encoder;
use serde::Serialize;

/// Why a value has no canonical JSON form.
#[derive(Debug, thiserror::Error)]
pub enum CanonicalJsonError {
    /// The whole value is a NaN or an infinity, which JSON cannot write.
    #[error("the number {0} has no JSON form")]
    NonFiniteNumber(f64),
    /// A map key is a NaN or an infinity.
    #[error("the map key {0} has no JSON form")]
    NonFiniteKey(f64),
    /// A map key is of a kind that cannot be an object's member name.
    #[error("a map key must be a string, a number, a bool or a unit variant, not {0}")]
    KeyNotAString(&'static str),
    /// A serde_json `RawValue` did not hold JSON text.
    #[error("a raw JSON value could not be read: {0}")]
    RawValue(#[source] serde_json::Error),
    /// The value's own `Serialize` implementation failed.
    #[error("{0}")]
    Serialize(String),
}

impl serde::ser::Error for CanonicalJsonError {
    fn custom<T: std::fmt::Display>(message: T) -> Self {
        Self::Serialize(message.to_string())
    }
}

/// `value` as RFC 8785 canonical JSON text.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, CanonicalJsonError> {
    let mut encoder = Encoder::new();
    value.serialize(&mut encoder)?;
    Ok(encoder.into_text())
}

/// `value` as RFC 8785 canonical JSON bytes.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>, CanonicalJsonError> {
    to_string(value).map(String::into_bytes)
}

#[cfg(test)]
mod tests;
