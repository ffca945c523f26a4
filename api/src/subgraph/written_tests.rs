//! Every value written straight into the response is the bytes `values::output` gives once
//! serialized, for every scalar and kind of JSON a statement returns.

use super::*;

const SCALARS: [Scalar; 8] = [
    Scalar::Id,
    Scalar::String,
    Scalar::Int,
    Scalar::BigInt,
    Scalar::BigDecimal,
    Scalar::Bytes,
    Scalar::Boolean,
    Scalar::ValidationStatus,
];

/// JSON values as SQLite's and PostgreSQL's JSON functions write them, and a few they never do.
const RAWS: &[&str] = &[
    "null",
    "true",
    "false",
    "0",
    "1",
    "-0",
    "-1",
    "2",
    "0.07",
    "31337",
    "-42",
    "1700000000",
    "999999999999999999",
    "9999999999999999999",
    "18446744073709551616",
    "-9223372036854775809",
    "1.5",
    "85.0",
    "1e3",
    "1E+21",
    "-0.0",
    "\"\"",
    "\"plain text\"",
    "\"0xABCdef\"",
    "\"0x\\u0041b\"",
    "\"line\\nbreak \\\"quoted\\\" back\\\\slash \\/ slash\"",
    "\"tab\\tand\\u0001control\"",
    "\"caf\u{e9} \u{1F600}\"",
    "\"\\u00e9 escaped\"",
    "\"8550e-2\"",
    "\"-3e-0\"",
    "\"72.5\"",
    "\"Valid\"",
    "\"12345678901234567890123\"",
    "[]",
    "[1,2]",
    "[\"a\",\"B\"]",
    "{\"a\":1}",
    "\"[\\\"in\\\",\\\"text\\\"]\"",
];

fn expected(scalar: Scalar, raw: &str) -> Vec<u8> {
    let json: Json = serde_json::from_str(raw).unwrap();
    serde_json::to_vec(&output(scalar, &json)).unwrap()
}

fn expected_list(scalar: Scalar, raw: &str) -> Vec<u8> {
    let json: Json = serde_json::from_str(raw).unwrap();
    serde_json::to_vec(&output_list(scalar, &json)).unwrap()
}

fn raw(text: &str) -> &RawValue {
    serde_json::from_str(text).unwrap()
}

#[test]
fn every_value_is_written_as_its_value_would_be_serialized() {
    for scalar in SCALARS {
        for text in RAWS {
            let mut out = Vec::new();
            write_output(scalar, raw(text), &mut out).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(expected(scalar, text)).unwrap(),
                "{scalar:?} of {text}"
            );
        }
    }
}

#[test]
fn every_list_is_written_as_its_value_would_be_serialized() {
    let mut lists: Vec<String> = RAWS.iter().map(|text| text.to_string()).collect();
    lists.push(format!("[{}]", RAWS.join(",")));
    lists.push(format!("[ {} ]", RAWS.join(" , ")));
    for scalar in SCALARS {
        for text in &lists {
            let mut out = Vec::new();
            write_output_list(scalar, raw(text), &mut out).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                String::from_utf8(expected_list(scalar, text)).unwrap(),
                "{scalar:?} list of {text}"
            );
        }
    }
}

#[test]
fn a_string_the_serializer_cannot_read_fails_as_it_did() {
    let lone = raw("\"\\ud800\"");
    let mut out = Vec::new();
    assert!(write_output(Scalar::String, lone, &mut out).is_err());
}
