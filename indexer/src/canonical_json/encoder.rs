//! The encoder: a `serde::Serializer` that writes RFC 8785 text straight into one string. An
//! object's members are written as they come, and their names compared as they come; only an
//! object whose members arrived out of order is rewritten in order when it closes (see
//! [`super::members`]), so a map that is already sorted costs nothing more than its text, and
//! one that is not (most structs: their fields come in declaration order) a copy of it. What
//! it writes is what `serde_jcs` writes, down to a non-finite number: an error when it is the
//! whole value, null anywhere inside one (as serde_json, which `serde_jcs` wraps, writes it).

use super::CanonicalJsonError;
use super::key::KeyWriter;
use super::members::{Members, OpenObject};
use super::scalars::{push_f64, push_i64, push_i128, push_string, push_u64, push_u128};
use serde::Serialize;
use serde::ser::{
    SerializeMap, SerializeSeq, SerializeStruct, SerializeStructVariant, SerializeTuple,
    SerializeTupleStruct, SerializeTupleVariant, Serializer,
};

/// The struct name serde_json gives a `RawValue` (JSON text to be copied): `serde_jcs`
/// canonicalises that text, and so does this encoder.
const RAW_VALUE: &str = "$serde_json::private::RawValue";

/// The text written so far and the members of the objects still open.
pub(super) struct Encoder {
    /// The text.
    out: String,
    /// The members of the objects still open.
    members: Members,
    /// Whether nothing has been serialised yet: the value being started is the whole value.
    whole: bool,
}

impl Encoder {
    /// An encoder of one value.
    pub(super) fn new() -> Self {
        Self {
            out: String::with_capacity(256),
            members: Members::default(),
            whole: true,
        }
    }

    /// The text of the value encoded.
    pub(super) fn into_text(self) -> String {
        self.out
    }

    /// Starts a value made of others (none of which is the whole value).
    fn nested(&mut self) -> &mut Self {
        self.whole = false;
        self
    }

    /// Fails for a 128-bit integer that is the whole value, which `serde_jcs` does not take
    /// (serde's default for its serializer); inside a value it is a number like any other.
    fn not_whole(&self, kind: &str) -> Result<(), CanonicalJsonError> {
        if self.whole {
            return Err(CanonicalJsonError::Serialize(format!(
                "{kind} is not supported"
            )));
        }
        Ok(())
    }

    /// Writes `{"variant":`, which an enum variant with a value is wrapped in.
    fn open_variant(&mut self, variant: &str) {
        self.whole = false;
        self.out.push('{');
        push_string(&mut self.out, variant);
        self.out.push(':');
    }

    /// Starts an array, closed by `close`.
    fn open_array(&mut self, close: &'static str) -> Array<'_> {
        self.whole = false;
        self.out.push('[');
        Array {
            encoder: self,
            empty: true,
            close,
        }
    }

    /// Starts an object, opened by `open` and closed by `close`.
    fn open_object(&mut self, open: &str, close: &'static str) -> Object<'_> {
        self.whole = false;
        self.out.push_str(open);
        Object {
            object: self.members.open(&self.out),
            close,
            raw: false,
            encoder: self,
        }
    }
}

/// Serializer methods of a narrower number, each writing it as its widened form.
macro_rules! widened {
    ($($method:ident($narrow:ty) => $wide:ident),+) => {$(
        fn $method(self, value: $narrow) -> Result<(), CanonicalJsonError> {
            self.$wide(value.into())
        }
    )+};
}

impl<'a> Serializer for &'a mut Encoder {
    type Ok = ();
    type Error = CanonicalJsonError;
    type SerializeSeq = Array<'a>;
    type SerializeTuple = Array<'a>;
    type SerializeTupleStruct = Array<'a>;
    type SerializeTupleVariant = Array<'a>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Object<'a>;

    widened! {
        serialize_i8(i8) => serialize_i64,
        serialize_i16(i16) => serialize_i64,
        serialize_i32(i32) => serialize_i64,
        serialize_u8(u8) => serialize_u64,
        serialize_u16(u16) => serialize_u64,
        serialize_u32(u32) => serialize_u64,
        serialize_f32(f32) => serialize_f64
    }

    fn serialize_bool(self, value: bool) -> Result<(), CanonicalJsonError> {
        self.out.push_str(if value { "true" } else { "false" });
        Ok(())
    }

    fn serialize_i64(self, value: i64) -> Result<(), CanonicalJsonError> {
        push_i64(&mut self.out, value);
        Ok(())
    }

    fn serialize_i128(self, value: i128) -> Result<(), CanonicalJsonError> {
        self.not_whole("i128")?;
        push_i128(&mut self.out, value);
        Ok(())
    }

    fn serialize_u64(self, value: u64) -> Result<(), CanonicalJsonError> {
        push_u64(&mut self.out, value);
        Ok(())
    }

    fn serialize_u128(self, value: u128) -> Result<(), CanonicalJsonError> {
        self.not_whole("u128")?;
        push_u128(&mut self.out, value);
        Ok(())
    }

    fn serialize_f64(self, value: f64) -> Result<(), CanonicalJsonError> {
        if value.is_finite() {
            push_f64(&mut self.out, value);
        } else if self.whole {
            return Err(CanonicalJsonError::NonFiniteNumber(value));
        } else {
            self.out.push_str("null");
        }
        Ok(())
    }

    fn serialize_char(self, value: char) -> Result<(), CanonicalJsonError> {
        self.serialize_str(value.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, value: &str) -> Result<(), CanonicalJsonError> {
        push_string(&mut self.out, value);
        Ok(())
    }

    fn serialize_bytes(self, value: &[u8]) -> Result<(), CanonicalJsonError> {
        // An array of numbers, as serde_json writes bytes.
        let mut bytes = self.open_array("]");
        for byte in value {
            bytes.element(byte)?;
        }
        bytes.close()
    }

    fn serialize_none(self) -> Result<(), CanonicalJsonError> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), CanonicalJsonError> {
        value.serialize(self.nested())
    }

    fn serialize_unit(self) -> Result<(), CanonicalJsonError> {
        self.out.push_str("null");
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), CanonicalJsonError> {
        self.serialize_unit()
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
        value.serialize(self.nested())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), CanonicalJsonError> {
        self.open_variant(variant);
        value.serialize(&mut *self)?;
        self.out.push('}');
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Array<'a>, CanonicalJsonError> {
        Ok(self.open_array("]"))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Array<'a>, CanonicalJsonError> {
        Ok(self.open_array("]"))
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Array<'a>, CanonicalJsonError> {
        Ok(self.open_array("]"))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Array<'a>, CanonicalJsonError> {
        self.open_variant(variant);
        Ok(self.open_array("]}"))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Object<'a>, CanonicalJsonError> {
        Ok(self.open_object("{", "}"))
    }

    fn serialize_struct(
        self,
        name: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, CanonicalJsonError> {
        if name == RAW_VALUE {
            // No braces: its one field is JSON text, written in canonical form instead.
            let mut raw = self.open_object("", "");
            raw.raw = true;
            return Ok(raw);
        }
        Ok(self.open_object("{", "}"))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Object<'a>, CanonicalJsonError> {
        self.open_variant(variant);
        Ok(self.open_object("{", "}}"))
    }
}

/// An array being written.
pub(super) struct Array<'a> {
    encoder: &'a mut Encoder,
    /// Whether no element is written yet.
    empty: bool,
    /// What closes it (`]`, and the `}` of a variant wrapping it).
    close: &'static str,
}

impl Array<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CanonicalJsonError> {
        if !self.empty {
            self.encoder.out.push(',');
        }
        self.empty = false;
        value.serialize(&mut *self.encoder)
    }

    fn close(self) -> Result<(), CanonicalJsonError> {
        self.encoder.out.push_str(self.close);
        Ok(())
    }
}

/// The three kinds of sequence serde has, all written as arrays.
macro_rules! array_kinds {
    ($($kind:ident :: $add:ident),+) => {$(
        impl $kind for Array<'_> {
            type Ok = ();
            type Error = CanonicalJsonError;

            fn $add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CanonicalJsonError> {
                self.element(value)
            }

            fn end(self) -> Result<(), CanonicalJsonError> {
                self.close()
            }
        }
    )+};
}

array_kinds!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object being written: its members are written as they come, and put in order when it
/// closes if they did not come in order.
pub(super) struct Object<'a> {
    encoder: &'a mut Encoder,
    /// Where its members start, and whether they came in order.
    object: OpenObject,
    /// What closes it (`}`, and the `}` of a variant wrapping it).
    close: &'static str,
    /// Whether it is serde_json's `RawValue`: its one field's text is written, canonically.
    raw: bool,
}

impl Object<'_> {
    /// Writes a member's name with `write_name`, after a comma unless it is the first.
    fn name(
        &mut self,
        write_name: impl FnOnce(&mut String) -> Result<(), CanonicalJsonError>,
    ) -> Result<(), CanonicalJsonError> {
        let encoder = &mut *self.encoder;
        encoder
            .members
            .name(&mut encoder.out, &mut self.object, write_name)
    }

    /// Writes the value of the member just named.
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), CanonicalJsonError> {
        value.serialize(&mut *self.encoder)?;
        self.encoder.members.value_ends(self.encoder.out.len());
        Ok(())
    }

    /// Writes a struct field.
    fn field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), CanonicalJsonError> {
        if self.raw {
            return self.raw_text(value);
        }
        self.name(|out| {
            push_string(out, name);
            Ok(())
        })?;
        self.value(value)
    }

    /// Writes the JSON text `text` (a `RawValue`'s) in canonical form.
    fn raw_text<T: Serialize + ?Sized>(&mut self, text: &T) -> Result<(), CanonicalJsonError> {
        let text = serde_json::to_value(text).map_err(CanonicalJsonError::RawValue)?;
        let parsed: serde_json::Value = serde_json::from_str(text.as_str().unwrap_or_default())
            .map_err(CanonicalJsonError::RawValue)?;
        parsed.serialize(&mut *self.encoder)
    }

    /// Closes it, putting its members in order first when they did not come in order.
    fn close(self) -> Result<(), CanonicalJsonError> {
        let encoder = self.encoder;
        encoder.members.close(&mut encoder.out, self.object);
        encoder.out.push_str(self.close);
        Ok(())
    }
}

impl SerializeMap for Object<'_> {
    type Ok = ();
    type Error = CanonicalJsonError;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), CanonicalJsonError> {
        self.name(|out| key.serialize(KeyWriter(out)))
    }

    fn serialize_value<T: Serialize + ?Sized>(
        &mut self,
        value: &T,
    ) -> Result<(), CanonicalJsonError> {
        self.value(value)
    }

    fn end(self) -> Result<(), CanonicalJsonError> {
        self.close()
    }
}

impl SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = CanonicalJsonError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), CanonicalJsonError> {
        self.field(name, value)
    }

    fn end(self) -> Result<(), CanonicalJsonError> {
        self.close()
    }
}

impl SerializeStructVariant for Object<'_> {
    type Ok = ();
    type Error = CanonicalJsonError;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        name: &'static str,
        value: &T,
    ) -> Result<(), CanonicalJsonError> {
        self.field(name, value)
    }

    fn end(self) -> Result<(), CanonicalJsonError> {
        self.close()
    }
}
