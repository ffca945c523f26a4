//! An object member's name, from whatever a map's key serialises as: a string as it is, and
//! (as serde_json allows) a number, a bool, a character or a unit enum variant as the text of
//! it, quoted; any other key is an error, as there.

use super::CanonicalJsonError;
use super::scalars::{push_f64, push_i64, push_i128, push_string, push_u64, push_u128};
use serde::Serialize;
use serde::ser::{Impossible, Serializer};

/// Writes a map key, quoted, at the end of the text it holds.
pub(super) struct KeyWriter<'a>(pub(super) &'a mut String);

impl KeyWriter<'_> {
    /// Writes a quoted number (or bool) with `write`.
    fn quoted(self, write: impl FnOnce(&mut String)) -> Result<(), CanonicalJsonError> {
        self.0.push('"');
        write(self.0);
        self.0.push('"');
        Ok(())
    }
}

/// The error of a key of kind `kind`.
fn not_a_name(kind: &'static str) -> CanonicalJsonError {
    CanonicalJsonError::KeyNotAString(kind)
}

type Never = Impossible<(), CanonicalJsonError>;

impl Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = CanonicalJsonError;
    type SerializeSeq = Never;
    type SerializeTuple = Never;
    type SerializeTupleStruct = Never;
    type SerializeTupleVariant = Never;
    type SerializeMap = Never;
    type SerializeStruct = Never;
    type SerializeStructVariant = Never;

    fn serialize_str(self, value: &str) -> Result<(), CanonicalJsonError> {
        push_string(self.0, value);
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<(), CanonicalJsonError> {
        self.serialize_str(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), CanonicalJsonError> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), CanonicalJsonError> {
        value.serialize(self)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), CanonicalJsonError> {
        value.serialize(self)
    }

    fn serialize_bool(self, value: bool) -> Result<(), CanonicalJsonError> {
        self.quoted(|out| out.push_str(if value { "true" } else { "false" }))
    }

    fn serialize_i8(self, value: i8) -> Result<(), CanonicalJsonError> {
        self.serialize_i64(value.into())
    }

    fn serialize_i16(self, value: i16) -> Result<(), CanonicalJsonError> {
        self.serialize_i64(value.into())
    }

    fn serialize_i32(self, value: i32) -> Result<(), CanonicalJsonError> {
        self.serialize_i64(value.into())
    }

    fn serialize_i64(self, value: i64) -> Result<(), CanonicalJsonError> {
        self.quoted(|out| push_i64(out, value))
    }

    fn serialize_i128(self, value: i128) -> Result<(), CanonicalJsonError> {
        self.quoted(|out| push_i128(out, value))
    }

    fn serialize_u8(self, value: u8) -> Result<(), CanonicalJsonError> {
        self.serialize_u64(value.into())
    }

    fn serialize_u16(self, value: u16) -> Result<(), CanonicalJsonError> {
        self.serialize_u64(value.into())
    }

    fn serialize_u32(self, value: u32) -> Result<(), CanonicalJsonError> {
        self.serialize_u64(value.into())
    }

    fn serialize_u64(self, value: u64) -> Result<(), CanonicalJsonError> {
        self.quoted(|out| push_u64(out, value))
    }

    fn serialize_u128(self, value: u128) -> Result<(), CanonicalJsonError> {
        self.quoted(|out| push_u128(out, value))
    }

    fn serialize_f32(self, value: f32) -> Result<(), CanonicalJsonError> {
        self.serialize_f64(value.into())
    }

    fn serialize_f64(self, value: f64) -> Result<(), CanonicalJsonError> {
        if !value.is_finite() {
            return Err(CanonicalJsonError::NonFiniteKey(value));
        }
        self.quoted(|out| push_f64(out, value))
    }

    fn serialize_bytes(self, _value: &[u8]) -> Result<(), CanonicalJsonError> {
        Err(not_a_name("bytes"))
    }

    fn serialize_none(self) -> Result<(), CanonicalJsonError> {
        Err(not_a_name("none"))
    }

    fn serialize_unit(self) -> Result<(), CanonicalJsonError> {
        Err(not_a_name("unit"))
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), CanonicalJsonError> {
        Err(not_a_name("a unit struct"))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), CanonicalJsonError> {
        Err(not_a_name("an enum variant with a value"))
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("a sequence"))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("a tuple"))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("a tuple struct"))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("an enum variant with a value"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("a map"))
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("a struct"))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Never, CanonicalJsonError> {
        Err(not_a_name("an enum variant with a value"))
    }
}
