//! Plutus data from its CBOR, as inline datums carry it: constructors (CBOR tags 121–127 and
//! 1280–1400 for the first 128 alternatives, tag 102 for any), maps, lists, integers (big ones
//! as tags 2 and 3) and byte strings (in chunks when indefinite). minicbor reads the CBOR; the
//! Plutus layer on top is this file's. A datum is untrusted: nesting and size are bounded.

use minicbor::Decoder;
use minicbor::data::Type;

/// How deep a datum may nest.
const MAX_DEPTH: usize = 64;
/// How many values a datum may hold in all.
const MAX_VALUES: usize = 10_000;

/// A Plutus data value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlutusData {
    /// Alternative `tag` of a sum type, with its fields.
    Constr {
        /// The alternative, from 0.
        tag: u64,
        /// Its fields.
        fields: Vec<PlutusData>,
    },
    /// Key-value pairs, in order.
    Map(Vec<(PlutusData, PlutusData)>),
    /// A list.
    List(Vec<PlutusData>),
    /// An integer.
    Int(i128),
    /// A byte string.
    Bytes(Vec<u8>),
}

impl PlutusData {
    /// The fields of alternative `tag`, when this is that constructor.
    pub fn fields_of(&self, tag: u64) -> Option<&[PlutusData]> {
        match self {
            Self::Constr { tag: t, fields } if *t == tag => Some(fields),
            _ => None,
        }
    }

    /// The bytes, when this is a byte string.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// The integer, when this is one.
    pub fn int(&self) -> Option<i128> {
        match self {
            Self::Int(value) => Some(*value),
            _ => None,
        }
    }
}

/// Why CBOR is not Plutus data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not Plutus data: {0}")]
pub struct PlutusDataError(String);

/// Decodes one Plutus data value from `cbor` (nothing may follow it).
pub fn decode(cbor: &[u8]) -> Result<PlutusData, PlutusDataError> {
    let mut reader = Reader {
        decoder: Decoder::new(cbor),
        values: 0,
    };
    let value = reader.value(0)?;
    if reader.decoder.position() != cbor.len() {
        return Err(PlutusDataError(format!(
            "{} bytes follow the value",
            cbor.len() - reader.decoder.position()
        )));
    }
    Ok(value)
}

struct Reader<'b> {
    decoder: Decoder<'b>,
    values: usize,
}

fn cbor(error: minicbor::decode::Error) -> PlutusDataError {
    PlutusDataError(error.to_string())
}

impl Reader<'_> {
    fn value(&mut self, depth: usize) -> Result<PlutusData, PlutusDataError> {
        if depth > MAX_DEPTH {
            return Err(PlutusDataError(format!("nested deeper than {MAX_DEPTH}")));
        }
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(PlutusDataError(format!("more than {MAX_VALUES} values")));
        }
        let d = &mut self.decoder;
        match d.datatype().map_err(cbor)? {
            Type::Tag => {
                let tag = u64::from(d.tag().map_err(cbor)?);
                match tag {
                    121..=127 => self.constr(tag - 121, depth),
                    1280..=1400 => self.constr(tag - 1280 + 7, depth),
                    102 => {
                        let len = self.decoder.array().map_err(cbor)?;
                        if len != Some(2) {
                            return Err(PlutusDataError(
                                "tag 102 must hold [alternative, fields]".into(),
                            ));
                        }
                        let alternative = self.decoder.u64().map_err(cbor)?;
                        self.constr(alternative, depth)
                    }
                    2 | 3 => {
                        let magnitude = self.byte_string()?;
                        let value = big(&magnitude)
                            .ok_or_else(|| PlutusDataError("an integer beyond 128 bits".into()))?;
                        Ok(PlutusData::Int(if tag == 2 { value } else { -1 - value }))
                    }
                    other => Err(PlutusDataError(format!("unexpected CBOR tag {other}"))),
                }
            }
            Type::Map | Type::MapIndef => {
                let len = d.map().map_err(cbor)?;
                let mut pairs = Vec::new();
                while self.more(len, pairs.len())? {
                    let key = self.value(depth + 1)?;
                    let value = self.value(depth + 1)?;
                    pairs.push((key, value));
                }
                Ok(PlutusData::Map(pairs))
            }
            Type::Array | Type::ArrayIndef => Ok(PlutusData::List(self.items(depth)?)),
            Type::Bytes | Type::BytesIndef => Ok(PlutusData::Bytes(self.byte_string()?)),
            Type::U8
            | Type::U16
            | Type::U32
            | Type::U64
            | Type::I8
            | Type::I16
            | Type::I32
            | Type::I64
            | Type::Int => {
                let value = d.int().map_err(cbor)?;
                Ok(PlutusData::Int(i128::from(value)))
            }
            other => Err(PlutusDataError(format!("unexpected CBOR {other}"))),
        }
    }

    fn constr(&mut self, tag: u64, depth: usize) -> Result<PlutusData, PlutusDataError> {
        let fields = self.items(depth)?;
        Ok(PlutusData::Constr { tag, fields })
    }

    /// The items of the array that comes next.
    fn items(&mut self, depth: usize) -> Result<Vec<PlutusData>, PlutusDataError> {
        let len = self.decoder.array().map_err(cbor)?;
        let mut items = Vec::new();
        while self.more(len, items.len())? {
            items.push(self.value(depth + 1)?);
        }
        Ok(items)
    }

    /// Whether a container of `len` (none: indefinite) holds more after `read` items,
    /// consuming an indefinite container's end.
    fn more(&mut self, len: Option<u64>, read: usize) -> Result<bool, PlutusDataError> {
        match len {
            Some(len) => Ok((read as u64) < len),
            None => {
                if self.decoder.datatype().map_err(cbor)? == Type::Break {
                    self.decoder.skip().map_err(cbor)?;
                    Ok(false)
                } else {
                    Ok(true)
                }
            }
        }
    }

    fn byte_string(&mut self) -> Result<Vec<u8>, PlutusDataError> {
        let mut bytes = Vec::new();
        for chunk in self.decoder.bytes_iter().map_err(cbor)? {
            bytes.extend_from_slice(chunk.map_err(cbor)?);
        }
        Ok(bytes)
    }
}

/// A big-endian magnitude as an integer, when it fits.
fn big(magnitude: &[u8]) -> Option<i128> {
    let digits = magnitude
        .iter()
        .skip_while(|b| **b == 0)
        .collect::<Vec<_>>();
    if digits.len() > 15 {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0i128, |acc, b| (acc << 8) | i128::from(**b)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_lists_maps_integers_and_bytes() {
        // 121([h'01', -5, [], {1: 2}]) ; 1280([]) = alternative 7 ; 102([200, [3]])
        let cbor = alloy::hex::decode("d8799f4101249f80ffa10102ff").unwrap();
        let value = decode(&cbor).unwrap();
        assert_eq!(
            value,
            PlutusData::Constr {
                tag: 0,
                fields: vec![
                    PlutusData::Bytes(vec![1]),
                    PlutusData::Int(-5),
                    PlutusData::List(vec![PlutusData::List(vec![])]),
                    PlutusData::Map(vec![(PlutusData::Int(1), PlutusData::Int(2))]),
                ]
            }
        );
        assert_eq!(
            decode(&alloy::hex::decode("d9050080").unwrap()).unwrap(),
            PlutusData::Constr {
                tag: 7,
                fields: vec![]
            }
        );
        assert!(
            decode(&alloy::hex::decode("d86683010203").unwrap()).is_err(),
            "a tag 102 of three items is refused"
        );
        assert_eq!(
            decode(&alloy::hex::decode("d8668218c88103").unwrap()).unwrap(),
            PlutusData::Constr {
                tag: 200,
                fields: vec![PlutusData::Int(3)]
            }
        );
        // A bignum: 2^64.
        assert_eq!(
            decode(&alloy::hex::decode("c249010000000000000000").unwrap()).unwrap(),
            PlutusData::Int(1 << 64)
        );
        // Indefinite bytes in two chunks.
        assert_eq!(
            decode(&alloy::hex::decode("5f41014102ff").unwrap()).unwrap(),
            PlutusData::Bytes(vec![1, 2])
        );
    }

    #[test]
    fn hostile_datums_are_refused_not_followed() {
        let deep: Vec<u8> = std::iter::repeat_n(0x81u8, 100).chain([0x00]).collect();
        assert!(decode(&deep).unwrap_err().0.contains("deeper"));
        assert!(
            decode(&[0x63, b'a', b'b', b'c']).is_err(),
            "text is not Plutus data"
        );
        assert!(decode(&[0x01, 0x02]).unwrap_err().0.contains("follow"));
        assert!(decode(&[0x82, 0x01]).is_err(), "a truncated list");
    }
}
