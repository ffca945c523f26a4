//! The binary rows of a bulk load, byte for byte: the framing PostgreSQL reads, each column
//! type's binary form of the values the store binds, NULL in every type, the conversions an
//! `INSERT` would make on its own, and the values it would refuse, refused here by row and
//! column.

use super::encode::{Column, ColumnType, rows};
use sqlx::any::AnyTypeInfoKind;
use sqlx_core::any::AnyValueKind as V;
use std::borrow::Cow;

/// The signature, flags and header extension length every stream starts with.
const HEADER: &[u8] = b"PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0";

fn column(name: &str, ty: ColumnType) -> Column {
    Column {
        name: name.to_string(),
        ty,
    }
}

/// The bytes of `value` as the only field of a one-column row of type `ty`: its length and
/// its bytes.
fn one_field(ty: ColumnType, value: V<'_>) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    rows(&mut out, &[column("c", ty)], &[value]).map_err(|e| e.to_string())?;
    let framing = HEADER.len() + 2;
    assert_eq!(&out[..HEADER.len()], HEADER);
    assert_eq!(&out[HEADER.len()..framing], &[0, 1], "one field in the row");
    assert_eq!(&out[out.len() - 2..], &[0xff, 0xff], "the trailer");
    Ok(out[framing..out.len() - 2].to_vec())
}

/// A field of `bytes` after their length.
fn sized(bytes: &[u8]) -> Vec<u8> {
    let mut field = (bytes.len() as i32).to_be_bytes().to_vec();
    field.extend_from_slice(bytes);
    field
}

#[test]
fn rows_are_framed_as_postgresql_reads_them() {
    let columns = [
        column("n", ColumnType::Int8),
        column("t", ColumnType::Text),
        column("b", ColumnType::Bytea),
    ];
    let values = [
        V::BigInt(258),
        V::Text(Cow::Borrowed("é")),
        V::Blob(Cow::Borrowed(&[0, 255])),
        V::Integer(-1),
        V::Null(AnyTypeInfoKind::Text),
        V::Blob(Cow::Borrowed(&[])),
    ];
    let mut expected = HEADER.to_vec();
    expected.extend_from_slice(&[0, 3]);
    expected.extend_from_slice(&[0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]);
    expected.extend_from_slice(&[0, 0, 0, 2, 0xc3, 0xa9]);
    expected.extend_from_slice(&[0, 0, 0, 2, 0, 255]);
    expected.extend_from_slice(&[0, 3]);
    expected.extend_from_slice(&[0, 0, 0, 8, 255, 255, 255, 255, 255, 255, 255, 255]);
    expected.extend_from_slice(&[255, 255, 255, 255]);
    expected.extend_from_slice(&[0, 0, 0, 0]);
    expected.extend_from_slice(&[255, 255]);
    let mut out = b"left from before".to_vec();
    rows(&mut out, &columns, &values).unwrap();
    assert_eq!(out, expected);
    // No rows at all is a stream of its own, header and trailer.
    rows(&mut out, &columns, &[]).unwrap();
    assert_eq!(out, [HEADER, &[255, 255]].concat());
}

#[test]
fn null_is_a_length_of_minus_one_in_every_type() {
    use ColumnType::*;
    for ty in [Bool, Int2, Int4, Int8, Float4, Float8, Text, Bytea] {
        for kind in [
            AnyTypeInfoKind::Null,
            AnyTypeInfoKind::BigInt,
            AnyTypeInfoKind::Text,
            AnyTypeInfoKind::Blob,
        ] {
            assert_eq!(one_field(ty, V::Null(kind)), Ok(vec![255; 4]), "{ty:?}");
        }
    }
}

#[test]
fn each_type_holds_its_own_values_in_network_order() {
    use ColumnType::*;
    let cases: Vec<(ColumnType, V<'_>, Vec<u8>)> = vec![
        (Bool, V::Bool(true), sized(&[1])),
        (Bool, V::Bool(false), sized(&[0])),
        (Int2, V::SmallInt(-2), sized(&(-2i16).to_be_bytes())),
        (Int4, V::Integer(i32::MIN), sized(&i32::MIN.to_be_bytes())),
        (Int8, V::BigInt(i64::MAX), sized(&i64::MAX.to_be_bytes())),
        (Int8, V::BigInt(i64::MIN), sized(&i64::MIN.to_be_bytes())),
        (Float4, V::Real(1.5), sized(&1.5f32.to_be_bytes())),
        (Float8, V::Double(0.1), sized(&0.1f64.to_be_bytes())),
        (Float8, V::Double(f64::NAN), sized(&f64::NAN.to_be_bytes())),
        (Float8, V::Double(-0.0), sized(&(-0.0f64).to_be_bytes())),
        (Text, V::Text(Cow::Borrowed("")), sized(b"")),
        (
            Text,
            V::Text(Cow::Borrowed("0x1f €")),
            sized("0x1f €".as_bytes()),
        ),
        (
            Bytea,
            V::Blob(Cow::Borrowed(&[0, 1, 254])),
            sized(&[0, 1, 254]),
        ),
        (Bytea, V::Blob(Cow::Borrowed(&[])), sized(&[])),
    ];
    for (ty, value, expected) in cases {
        let shown = format!("{ty:?} {value:?}");
        assert_eq!(one_field(ty, value), Ok(expected), "{shown}");
    }
}

#[test]
fn what_an_insert_converts_on_its_own_is_converted_alike() {
    use ColumnType::*;
    let cases: Vec<(ColumnType, V<'_>, Vec<u8>)> = vec![
        // The store binds every integer (and every flag, as 0 or 1) as a 64-bit one.
        (Int2, V::BigInt(-32768), sized(&(-32768i16).to_be_bytes())),
        (Int4, V::BigInt(1), sized(&1i32.to_be_bytes())),
        (Int8, V::Integer(7), sized(&7i64.to_be_bytes())),
        (Float4, V::BigInt(3), sized(&3f32.to_be_bytes())),
        (Float4, V::Double(0.5), sized(&0.5f32.to_be_bytes())),
        (
            Float8,
            V::Real(0.1),
            sized(&f64::from(0.1f32).to_be_bytes()),
        ),
        (
            Float8,
            V::BigInt(1 << 53),
            sized(&9007199254740992f64.to_be_bytes()),
        ),
        (Text, V::BigInt(-42), sized(b"-42")),
        (Text, V::Bool(true), sized(b"true")),
    ];
    for (ty, value, expected) in cases {
        let shown = format!("{ty:?} {value:?}");
        assert_eq!(one_field(ty, value), Ok(expected), "{shown}");
    }
}

#[test]
fn what_an_insert_refuses_is_refused_by_row_and_column() {
    use ColumnType::*;
    let refused: Vec<(ColumnType, V<'_>)> = vec![
        (Int2, V::BigInt(32768)),
        (Int4, V::BigInt(i64::from(i32::MAX) + 1)),
        (Int8, V::Text(Cow::Borrowed("1"))),
        (Int8, V::Bool(true)),
        (Int8, V::Double(1.0)),
        (Bool, V::BigInt(1)),
        (Float4, V::Double(1e300)),
        (Float4, V::Double(1e-300)),
        (Text, V::Blob(Cow::Borrowed(b"ab"))),
        (Text, V::Double(1.0)),
        (Bytea, V::Text(Cow::Borrowed("\\x00"))),
    ];
    for (ty, value) in refused {
        let shown = format!("{ty:?} {value:?}");
        let error = one_field(ty, value).expect_err(&shown);
        assert!(
            error.starts_with(&format!("row 0: column c ({ty:?}) cannot hold")),
            "{error}"
        );
    }
    let columns = [
        column("n", ColumnType::Int8),
        column("hash", ColumnType::Bytea),
    ];
    let values = [
        V::BigInt(1),
        V::Blob(Cow::Borrowed(&[1])),
        V::BigInt(2),
        V::Text(Cow::Borrowed("0xab")),
    ];
    let mut out = Vec::new();
    let error = rows(&mut out, &columns, &values).unwrap_err().to_string();
    assert!(error.starts_with("row 1: column hash (Bytea)"), "{error}");
    let error = rows(&mut out, &columns, &values[..1])
        .unwrap_err()
        .to_string();
    assert_eq!(error, "1 values are not whole rows of 2 columns");
}

#[test]
fn a_refused_value_is_shown_cut_short() {
    let blob = vec![7u8; 1 << 20];
    let error = one_field(ColumnType::Text, V::Blob(Cow::Owned(blob))).unwrap_err();
    assert!(error.len() < 200 && error.ends_with('…'), "{error}");
}
