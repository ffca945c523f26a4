//! The encoder against `serde_jcs`, which it replaces: the same bytes for hand-made values
//! that reach every rule (member order by UTF-16 code units, escapes, number forms, integer
//! extremes, empty containers, every serde shape, map keys of each kind, duplicate names,
//! non-finite numbers) and for many generated ones; an error where `serde_jcs` fails.

use super::*;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;

/// Asserts that `value` encodes to what `serde_jcs` gives, or fails where it fails.
fn same_as_serde_jcs<T: Serialize + Debug + ?Sized>(value: &T) {
    match (to_string(value), serde_jcs::to_string(value)) {
        (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{value:?}"),
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!("{value:?}: ours {ours:?}, serde_jcs {theirs:?}"),
    }
}

/// A map whose entries are serialised in the order listed, duplicates included.
#[derive(Debug)]
struct Entries<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Entries<K, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

/// Names whose UTF-8 order and UTF-16 order differ, with escapes and controls among them.
const TRICKY_NAMES: &[&str] = &[
    "",
    "a",
    "A",
    "b",
    "aa",
    "\u{e9}",
    "\u{7f}",
    "\u{d7ff}",
    "\u{e000}",
    "\u{fb01}",
    "\u{ffff}",
    "\u{10000}",
    "\u{1f600}",
    "\u{10ffff}",
    "\"",
    "\\",
    "/",
    "\n",
    "\u{0}",
    "\u{1f}",
    "\t",
    " ",
    "a\u{e000}",
    "a\u{1f600}",
    "abcdefg",
    "abcdefgh",
    "abcdefghi",
    "abcdefgi",
    "abcdefgh\u{e9}",
];

#[test]
fn objects_are_in_utf16_name_order_however_their_members_arrive() {
    let forwards: Vec<(String, usize)> = TRICKY_NAMES
        .iter()
        .enumerate()
        .map(|(i, name)| (name.to_string(), i))
        .collect();
    let mut backwards = forwards.clone();
    backwards.reverse();
    same_as_serde_jcs(&Entries(forwards.clone()));
    same_as_serde_jcs(&Entries(backwards));
    let sorted: BTreeMap<String, usize> = forwards.into_iter().collect();
    same_as_serde_jcs(&sorted);
    let value: Value = serde_json::to_value(&sorted).unwrap();
    same_as_serde_jcs(&value);
    // Supplementary-plane names before U+E000.., unlike their UTF-8 (and Rust string) order.
    let text = to_string(&json!({"\u{e000}": 1, "\u{1f600}": 2, "z": 3})).unwrap();
    assert_eq!(text, "{\"z\":3,\"\u{1f600}\":2,\"\u{e000}\":1}");
}

#[test]
fn a_name_given_twice_keeps_its_last_value_as_serde_jcs_does() {
    same_as_serde_jcs(&Entries(vec![
        ("b", 1),
        ("a", 2),
        ("b", 3),
        ("a", 4),
        ("c", 5),
    ]));
    same_as_serde_jcs(&Entries(vec![("a", 1), ("a", 2)]));
    same_as_serde_jcs(&Entries(vec![
        ("a", json!({"y": 1, "x": 2})),
        ("a", json!([])),
    ]));
    // Two u64 keys that round to the same double name the same member.
    same_as_serde_jcs(&Entries(vec![
        (1u64 << 60, "first"),
        ((1u64 << 60) + 1, "second"),
    ]));
}

#[test]
fn nested_and_empty_containers() {
    for value in [
        json!({}),
        json!([]),
        json!([[]]),
        json!([{}]),
        json!({"a": {}}),
        json!({"b": [1, {"z": 1, "a": [], "m": {}}], "a": {"y": null, "x": true}, "": false}),
        json!([[[[{"d": [{"c": {"b": {"a": [null]}}}]}]]]]),
        json!({"z": {"y": {"x": {"w": {}, "v": []}, "u": 1}, "t": [{"s": 1, "r": 2}]}}),
        json!(null),
        json!(true),
        json!("text"),
        json!(-12),
    ] {
        same_as_serde_jcs(&value);
    }
    same_as_serde_jcs(&BTreeMap::<String, Value>::new());
    same_as_serde_jcs(&Vec::<u8>::new());
    same_as_serde_jcs(&Entries(Vec::<(String, u8)>::new()));
}

#[test]
fn strings_escape_only_quotes_backslashes_and_controls() {
    let every_control: String = (0u8..=0x7f).map(char::from).collect();
    let mixed = "quote \" backslash \\ slash / tab \t nl \n \u{e9}\u{1f600}\u{ffff}\u{2028}";
    for text in [every_control.as_str(), mixed, "", "\u{0}", "\u{7f}"] {
        same_as_serde_jcs(text);
        same_as_serde_jcs(&json!({ text: text, "k": [text] }));
    }
    assert_eq!(
        to_string("\u{8}\u{c}\u{1}\u{1f}\u{7f}").unwrap(),
        "\"\\b\\f\\u0001\\u001f\u{7f}\""
    );
    // Each escape at each place of a string long enough to be read eight bytes at a time.
    for special in ["\"", "\\", "\u{0}", "\n", "\u{1f}", "\u{e9}", "\u{1f600}"] {
        for place in 0..24 {
            let text = format!("{}{special}{}", "x".repeat(place), "y".repeat(23 - place));
            same_as_serde_jcs(text.as_str());
        }
    }
    same_as_serde_jcs(&'\u{1}');
    same_as_serde_jcs(&'"');
}

/// Doubles whose ECMAScript form takes each of its shapes.
const FLOATS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    100.0,
    0.5,
    4.35,
    0.1 + 0.2,
    5e-324,
    -5e-324,
    f64::MIN_POSITIVE,
    f64::MAX,
    f64::MIN,
    f64::EPSILON,
    1e21,
    1e20,
    123_456_789_012_345_680_000.0,
    1e-6,
    1e-7,
    1.5e-7,
    1e15,
    1e16,
    1e17,
    1e300,
    -1.5e300,
    9_007_199_254_740_992.0,
    9_007_199_254_740_994.0,
    18_446_744_073_709_552_000.0,
    29.706_508_653_546_308,
    std::f64::consts::LN_2,
    333_333_333.333_333_3,
];

#[test]
fn numbers_take_ecmascripts_form() {
    for &float in FLOATS {
        same_as_serde_jcs(&float);
        same_as_serde_jcs(&[float]);
        same_as_serde_jcs(&json!({ "n": float }));
        same_as_serde_jcs(&(float as f32));
    }
    assert_eq!(to_string(&1e21).unwrap(), "1e+21");
    assert_eq!(to_string(&-0.0).unwrap(), "0");
    assert_eq!(to_string(&1.0).unwrap(), "1");
    assert_eq!(to_string(&1e-7).unwrap(), "1e-7");
    for float in [0.1f32, f32::MAX, f32::MIN_POSITIVE, 1e-45, 16_777_217.0] {
        same_as_serde_jcs(&float);
    }
}

#[test]
fn integers_are_the_doubles_they_round_to() {
    let exact = 1i64 << 53;
    for integer in [
        0,
        1,
        -1,
        exact - 1,
        exact,
        exact + 1,
        -exact,
        -exact - 1,
        i64::MIN,
        i64::MAX,
    ] {
        same_as_serde_jcs(&integer);
        same_as_serde_jcs(&Entries(vec![(integer, integer)]));
    }
    for integer in [
        u64::MAX,
        u64::MAX - 1,
        1 << 53,
        (1 << 53) + 1,
        1 << 63,
        10u64.pow(19),
    ] {
        same_as_serde_jcs(&integer);
        same_as_serde_jcs(&Entries(vec![(integer, integer)]));
    }
    // 128-bit integers: numbers inside a value, an error alone (as with serde_jcs).
    for integer in [i128::MIN, i128::MAX, i128::from(i64::MIN) - 1, 0, -7] {
        same_as_serde_jcs(&integer);
        same_as_serde_jcs(&[integer]);
        same_as_serde_jcs(&Entries(vec![(integer, integer)]));
    }
    for integer in [u128::MAX, u128::from(u64::MAX) + 1, 12] {
        same_as_serde_jcs(&integer);
        same_as_serde_jcs(&[integer]);
        same_as_serde_jcs(&Entries(vec![(integer, integer)]));
    }
    assert!(to_string(&7i128).is_err());
    same_as_serde_jcs(&(i8::MIN, i8::MAX, i16::MIN, i16::MAX, i32::MIN, i32::MAX));
    same_as_serde_jcs(&(u8::MAX, u16::MAX, u32::MAX));
    assert_eq!(to_string(&u64::MAX).unwrap(), "18446744073709552000");
}

#[derive(Debug, Serialize)]
struct Unit;

#[derive(Debug, Serialize)]
struct Wrapper(f64);

#[derive(Debug, Serialize)]
struct Pair(u8, &'static str);

#[derive(Debug, Serialize)]
enum Shape {
    Plain,
    Wrapped(Vec<u8>),
    Tuple(u8, f64),
    Fields { zeta: u8, alpha: Option<f64> },
}

#[derive(Debug, Serialize)]
struct Declared {
    zeta: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<u8>,
    alpha: Shape,
    middle: Vec<Shape>,
    #[serde(rename = "\u{e000}")]
    private_use: u8,
    #[serde(rename = "\u{1f600}")]
    emoji: u8,
    #[serde(with = "as_bytes")]
    bytes: Vec<u8>,
}

mod as_bytes {
    pub(super) fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(b)
    }
}

#[test]
fn every_serde_shape_is_written_as_serde_jcs_writes_it() {
    let declared = Declared {
        zeta: 1,
        skipped: None,
        alpha: Shape::Fields {
            zeta: 2,
            alpha: Some(0.5),
        },
        middle: vec![
            Shape::Plain,
            Shape::Wrapped(vec![1, 2]),
            Shape::Tuple(3, -0.0),
        ],
        private_use: 3,
        emoji: 4,
        bytes: vec![0, 255, 7],
    };
    same_as_serde_jcs(&declared);
    same_as_serde_jcs(&Unit);
    same_as_serde_jcs(&());
    same_as_serde_jcs(&Pair(1, "x"));
    same_as_serde_jcs(&Shape::Plain);
    same_as_serde_jcs(&Shape::Tuple(1, 2.5));
    same_as_serde_jcs(&Option::<u8>::None);
    same_as_serde_jcs(&Some("x"));
    same_as_serde_jcs(&(1u8, "two", [3.5], ()));
}

#[test]
fn map_keys_of_every_kind_are_names_or_errors() {
    same_as_serde_jcs(&BTreeMap::from([(true, 1), (false, 2)]));
    same_as_serde_jcs(&BTreeMap::from([
        ('b', 1),
        ('\u{1f600}', 2),
        ('\u{e000}', 3),
    ]));
    same_as_serde_jcs(&BTreeMap::from([(-5i8, 1), (3, 2), (-100, 3)]));
    same_as_serde_jcs(&Entries(vec![(1.5, 1), (-0.0, 2), (1e21, 3), (0.1, 4)]));
    same_as_serde_jcs(&Entries(vec![(Shape::Plain, 1)]));
    same_as_serde_jcs(&Entries(vec![(Some("k"), 1)]));
    // Keys JSON cannot name: both fail.
    same_as_serde_jcs(&Entries(vec![(f64::NAN, 1)]));
    same_as_serde_jcs(&Entries(vec![((), 1)]));
    same_as_serde_jcs(&Entries(vec![(Option::<u8>::None, 1)]));
    same_as_serde_jcs(&Entries(vec![(vec![1u8], 1)]));
    same_as_serde_jcs(&Entries(vec![(Shape::Wrapped(vec![]), 1)]));
    assert!(matches!(
        to_string(&Entries(vec![((), 1)])),
        Err(CanonicalJsonError::KeyNotAString(_))
    ));
}

#[test]
fn a_non_finite_number_is_an_error_alone_and_null_inside_a_value() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(matches!(
            to_string(&bad),
            Err(CanonicalJsonError::NonFiniteNumber(_))
        ));
        same_as_serde_jcs(&bad);
        same_as_serde_jcs(&(bad as f32));
        same_as_serde_jcs(&[bad]);
        same_as_serde_jcs(&Some(bad));
        same_as_serde_jcs(&Wrapper(bad));
        same_as_serde_jcs(&Shape::Tuple(1, bad));
        same_as_serde_jcs(&BTreeMap::from([("n", bad)]));
        assert_eq!(to_string(&[bad]).unwrap(), "[null]");
    }
}

#[test]
fn a_raw_value_is_written_in_canonical_form() {
    let raw = serde_json::value::RawValue::from_string(
        r#"{ "b" : 1.0, "a": [1e2, "x", {"\u00e9": 0.10}] }"#.into(),
    )
    .unwrap();
    same_as_serde_jcs(&raw);
    same_as_serde_jcs(&json!({"outer": 1}));
    same_as_serde_jcs(&BTreeMap::from([("z", &raw), ("a", &raw)]));
    assert_eq!(
        to_string(&raw).unwrap(),
        r#"{"a":[100,"x",{"é":0.1}],"b":1}"#
    );
}

/// A small deterministic generator (xorshift), so the generated values are the same each run.
struct Generator(u64);

impl Generator {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }

    fn name(&mut self) -> String {
        (0..self.below(4))
            .map(|_| TRICKY_NAMES[self.below(TRICKY_NAMES.len() as u64)])
            .collect()
    }

    fn number(&mut self) -> Value {
        match self.below(4) {
            0 => json!(self.next() as i64),
            1 => json!(self.next() >> self.below(64)),
            2 => json!(FLOATS[self.below(FLOATS.len() as u64)]),
            _ => {
                let float = f64::from_bits(self.next());
                json!(if float.is_finite() { float } else { 0.25 })
            }
        }
    }

    fn value(&mut self, depth: u32) -> Value {
        match self.below(if depth == 0 { 4 } else { 6 }) {
            0 => Value::Null,
            1 => Value::Bool(self.next().is_multiple_of(2)),
            2 => self.number(),
            3 => Value::String(self.name()),
            4 => (0..self.below(5)).map(|_| self.value(depth - 1)).collect(),
            _ => Value::Object(
                (0..self.below(6))
                    .map(|_| (self.name(), self.value(depth - 1)))
                    .collect(),
            ),
        }
    }
}

#[test]
fn generated_values_encode_as_serde_jcs_encodes_them() {
    let mut generator = Generator(0x9e37_79b9_7f4a_7c15);
    let empty = String::new();
    for _ in 0..3_000 {
        let value = generator.value(4);
        same_as_serde_jcs(&value);
        // The same members in the order generated rather than sorted, duplicates possible.
        if let Value::Object(map) = &value {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.reverse();
            entries.push((&empty, &Value::Null));
            same_as_serde_jcs(&Entries(entries));
        }
    }
}
