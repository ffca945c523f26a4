//! Values between the store's SQL and graph-node's JSON: what a field's SQL returned, sent as
//! its graph-node type (`BigInt` and `BigDecimal` as decimal strings, `Bytes` as lower-case
//! hex), and arguments turned into values to bind.

use super::catalogue::Scalar;
use super::refusal::Refusal;
use super::sql::Bind;
use async_graphql::{Name, Number, Value as ConstValue};
use serde_json::Value as Json;

/// What `raw` (a JSON value of a SQL result) is sent as, typed as `scalar`.
pub(crate) fn output(scalar: Scalar, raw: &Json) -> ConstValue {
    if raw.is_null() {
        return ConstValue::Null;
    }
    match scalar {
        Scalar::Id | Scalar::String => ConstValue::String(text_of(raw)),
        Scalar::Bytes => ConstValue::String(text_of(raw).to_ascii_lowercase()),
        Scalar::Int => match raw {
            Json::Number(n) => ConstValue::Number(n.clone()),
            other => text_of(other)
                .parse::<i64>()
                .map(|n| ConstValue::Number(n.into()))
                .unwrap_or(ConstValue::Null),
        },
        Scalar::BigInt | Scalar::Int8 | Scalar::Timestamp => match raw {
            Json::Number(n) if n.is_f64() => {
                ConstValue::String(format!("{:.0}", n.as_f64().unwrap_or(0.0)))
            }
            other => ConstValue::String(text_of(other)),
        },
        Scalar::BigDecimal => match raw {
            Json::Number(n) => ConstValue::String(plain_number(n)),
            other => ConstValue::String(decimal(&text_of(other))),
        },
        Scalar::Boolean => match raw {
            Json::Bool(b) => ConstValue::Boolean(*b),
            Json::Number(n) => ConstValue::Boolean(n.as_f64().is_some_and(|v| v != 0.0)),
            _ => ConstValue::Null,
        },
        Scalar::ValidationStatus => ConstValue::Enum(Name::new(text_of(raw))),
    }
}

/// A list field's JSON array, each element typed as `scalar`.
pub(crate) fn output_list(scalar: Scalar, raw: &Json) -> ConstValue {
    match raw {
        Json::Array(items) => ConstValue::List(items.iter().map(|v| output(scalar, v)).collect()),
        Json::String(text) => match serde_json::from_str::<Json>(text) {
            Ok(parsed @ Json::Array(_)) => output_list(scalar, &parsed),
            _ => ConstValue::List(Vec::new()),
        },
        _ => ConstValue::List(Vec::new()),
    }
}

/// A number the SQL computed (a sum of decimals) as a decimal string without an exponent.
fn plain_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        // Rust writes a float in full, never as `1e20` or `5e-6`.
        format!("{}", n.as_f64().unwrap_or(0.0))
    }
}

fn text_of(raw: &Json) -> String {
    match raw {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `digits` or `{digits}e-{scale}` (or a float's text) as a plain decimal, without trailing
/// zeros: `8550e-2` is `85.5`, `-3e-0` is `-3`.
pub(crate) fn decimal(text: &str) -> String {
    let (mantissa, scale) = match text.split_once("e-") {
        Some((m, s)) => (m, s.parse::<usize>().unwrap_or(0)),
        None => (text, 0),
    };
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    // A float's text ("85.25") carries its own point: shift it into the scale.
    let (digits, scale) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (format!("{whole}{fraction}"), scale + fraction.len()),
        None => (mantissa.to_string(), scale),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return text.to_string();
    }
    let digits = if digits.len() <= scale {
        format!("{}{digits}", "0".repeat(scale + 1 - digits.len()))
    } else {
        digits
    };
    let (whole, fraction) = digits.split_at(digits.len() - scale);
    let whole = whole.trim_start_matches('0');
    let whole = if whole.is_empty() { "0" } else { whole };
    let fraction = fraction.trim_end_matches('0');
    let sign = if negative && (whole != "0" || !fraction.is_empty()) {
        "-"
    } else {
        ""
    };
    if fraction.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
    }
}

/// The value to bind for argument `value` compared with a field of type `scalar`; the error
/// names what was expected.
pub(crate) fn bind(scalar: Scalar, value: &ConstValue) -> Result<Bind, Refusal> {
    let wrong = || Refusal::Coerce {
        value: value.to_string(),
        to: scalar.type_name(),
    };
    match scalar {
        Scalar::Id | Scalar::String | Scalar::ValidationStatus => match value {
            ConstValue::String(s) => Ok(Bind::Text(s.clone())),
            ConstValue::Enum(e) => Ok(Bind::Text(e.to_string())),
            ConstValue::Number(n) if scalar == Scalar::Id => Ok(Bind::Text(n.to_string())),
            _ => Err(wrong()),
        },
        Scalar::Bytes => match value {
            ConstValue::String(s)
                if s.starts_with("0x") && s[2..].bytes().all(|b| b.is_ascii_hexdigit()) =>
            {
                Ok(Bind::Text(s.to_ascii_lowercase()))
            }
            ConstValue::String(s) => Err(Refusal::NotBytes { value: s.clone() }),
            _ => Err(wrong()),
        },
        Scalar::Int | Scalar::BigInt | Scalar::Int8 | Scalar::Timestamp => match value {
            ConstValue::Number(n) => n
                .as_i64()
                .map(Bind::Int)
                .or_else(|| n.as_f64().map(Bind::Real))
                .ok_or_else(wrong),
            ConstValue::String(s) => s
                .parse::<i64>()
                .map(Bind::Int)
                .or_else(|_| s.parse::<f64>().map(Bind::Real))
                .map_err(|_| wrong()),
            _ => Err(wrong()),
        },
        Scalar::BigDecimal => match value {
            ConstValue::Number(n) => n.as_f64().map(Bind::Real).ok_or_else(wrong),
            ConstValue::String(s) => s.parse::<f64>().map(Bind::Real).map_err(|_| wrong()),
            _ => Err(wrong()),
        },
        Scalar::Boolean => match value {
            ConstValue::Boolean(b) => Ok(Bind::Int(i64::from(*b))),
            _ => Err(wrong()),
        },
    }
}

/// A bound value as JSON, for lists bound as one JSON array.
pub(crate) fn bind_json(bind: &Bind) -> Json {
    match bind {
        Bind::Text(s) => Json::String(s.clone()),
        Bind::Int(i) => Json::Number((*i).into()),
        Bind::Real(r) => Number::from_f64(*r).map_or(Json::Null, Json::Number),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_read_as_graph_node_writes_them() {
        assert_eq!(decimal("8550e-2"), "85.5");
        assert_eq!(decimal("85e-0"), "85");
        assert_eq!(decimal("-3e-0"), "-3");
        assert_eq!(decimal("5e-3"), "0.005");
        assert_eq!(decimal("-25e-2"), "-0.25");
        assert_eq!(decimal("85.0e-0"), "85");
        assert_eq!(decimal("72.5"), "72.5");
        assert_eq!(decimal("0e-0"), "0");
        assert_eq!(decimal("100e-2"), "1");
        let number = |v: f64| output(Scalar::BigDecimal, &serde_json::json!(v));
        assert_eq!(number(5e-6), ConstValue::String("0.000005".into()));
        assert_eq!(
            number(1e20),
            ConstValue::String("100000000000000000000".into())
        );
        assert_eq!(number(-62.5), ConstValue::String("-62.5".into()));
        assert_eq!(number(62.0), ConstValue::String("62".into()));
    }

    #[test]
    fn arguments_bind_by_the_field_type() {
        assert_eq!(
            bind(Scalar::Bytes, &ConstValue::String("0xABcd".into())),
            Ok(Bind::Text("0xabcd".into()))
        );
        assert!(bind(Scalar::Bytes, &ConstValue::String("abc".into())).is_err());
        assert_eq!(
            bind(Scalar::BigInt, &ConstValue::String("0".into())),
            Ok(Bind::Int(0))
        );
        assert_eq!(
            bind(Scalar::Boolean, &ConstValue::Boolean(true)),
            Ok(Bind::Int(1))
        );
        assert!(bind(Scalar::Boolean, &ConstValue::String("true".into())).is_err());
    }
}
