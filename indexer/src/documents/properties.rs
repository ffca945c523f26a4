//! Property tests: whatever bytes or JSON arrive, the card and registration readers return a
//! projection or a report, never panic, and every lint names a path inside the document.

use super::lint::Report;
use super::{parse_card, parse_registration, read_card};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Arbitrary JSON, biased towards the field names cards and registration files use.
fn json_value() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("name".to_string()),
        Just("description".to_string()),
        Just("url".to_string()),
        Just("skills".to_string()),
        Just("supportedInterfaces".to_string()),
        Just("capabilities".to_string()),
        Just("extensions".to_string()),
        Just("securitySchemes".to_string()),
        Just("services".to_string()),
        Just("endpoints".to_string()),
        Just("registrations".to_string()),
        Just("x402Support".to_string()),
        Just("params".to_string()),
        Just("signatures".to_string()),
        "[a-zA-Z]{1,8}",
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "\\PC{0,20}".prop_map(Value::String),
        Just(json!("https://agent.example/a2a")),
    ];
    leaf.prop_recursive(5, 64, 8, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..8)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// 2,000 cases per property, or as many as `PROPTEST_CASES` asks for (a longer run by hand).
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(2000);
    ProptestConfig::with_cases(cases)
}

fn paths_are_inside(report: &Report) -> bool {
    report.lints.iter().all(|l| l.path.starts_with('$'))
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_give_a_projection_or_a_reason(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut report = Report::default();
        if parse_card(&bytes, &mut report).is_none() {
            prop_assert!(report.has_errors());
        }
        let mut report = Report::default();
        if parse_registration(&bytes, &mut report).is_none() {
            prop_assert!(report.has_errors());
        }
    }

    #[test]
    fn any_json_reads_without_panicking(value in json_value()) {
        let mut report = Report::default();
        let projection = read_card(&value, &mut report);
        prop_assert_eq!(projection.is_some(), value.is_object());
        prop_assert!(paths_are_inside(&report));
        let mut report = Report::default();
        let _ = parse_registration(value.to_string().as_bytes(), &mut report);
        prop_assert!(paths_are_inside(&report));
    }

    #[test]
    fn a_card_with_a_name_and_an_interface_has_no_errors_from_extra_fields(
        extra in proptest::collection::vec(("x[a-z]{1,6}", "\\PC{0,10}"), 0..5)
    ) {
        let mut value = json!({
            "name": "A", "description": "B",
            "supportedInterfaces": [{"url": "https://a.example", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
        });
        for (key, text) in extra {
            value[key] = json!(text);
        }
        let mut report = Report::default();
        read_card(&value, &mut report);
        prop_assert!(!report.has_errors(), "{:?}", report.lints);
    }
}
