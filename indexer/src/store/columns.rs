//! Column types both databases read alike, for rows that the store and the API decode.
//!
//! Flags are integers (0 or 1) in both schemas, but an expression such as `EXISTS (…)` is an
//! integer in SQLite and a boolean in PostgreSQL; [`Flag`] reads either as a `bool`, on fields
//! declared `#[sqlx(try_from = "Flag")] field: bool` (or `MaybeFlag` for `Option<bool>`). JSON
//! is text in both ([`JsonColumn`]).

use sqlx::any::{AnyTypeInfo, AnyTypeInfoKind, AnyValueRef};
use sqlx::error::BoxDynError;
use sqlx::{Any, Decode, Type, ValueRef};

/// A flag column or expression: an integer (non-zero is true) or a boolean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag(pub bool);

/// A flag that may be NULL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaybeFlag(pub Option<bool>);

impl From<Flag> for bool {
    fn from(flag: Flag) -> Self {
        flag.0
    }
}

impl From<MaybeFlag> for Option<bool> {
    fn from(flag: MaybeFlag) -> Self {
        flag.0
    }
}

fn flag_compatible(ty: &AnyTypeInfo) -> bool {
    matches!(
        ty.kind(),
        AnyTypeInfoKind::Bool
            | AnyTypeInfoKind::SmallInt
            | AnyTypeInfoKind::Integer
            | AnyTypeInfoKind::BigInt
            | AnyTypeInfoKind::Null
    )
}

fn decode_flag(value: AnyValueRef<'_>) -> Result<bool, BoxDynError> {
    if value.type_info().kind() == AnyTypeInfoKind::Bool {
        <bool as Decode<Any>>::decode(value)
    } else {
        <i64 as Decode<Any>>::decode(value).map(|n| n != 0)
    }
}

impl Type<Any> for Flag {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        flag_compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for Flag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        decode_flag(value).map(Self)
    }
}

impl Type<Any> for MaybeFlag {
    fn type_info() -> AnyTypeInfo {
        <i64 as Type<Any>>::type_info()
    }

    fn compatible(ty: &AnyTypeInfo) -> bool {
        flag_compatible(ty)
    }
}

impl<'r> Decode<'r, Any> for MaybeFlag {
    fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
        if value.is_null() {
            return Ok(Self(None));
        }
        decode_flag(value).map(|flag| Self(Some(flag)))
    }
}

/// A column of JSON text, parsed: the databases' drivers share no JSON type, so JSON is read as
/// text (`#[sqlx(try_from = "String")]`).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonColumn(pub serde_json::Value);

impl TryFrom<String> for JsonColumn {
    type Error = serde_json::Error;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        serde_json::from_str(&text).map(Self)
    }
}
