//! Cards and registration files of each version and spelling, and broken ones, read into the
//! projection with the expected lints.

use super::card::CardShape;
use super::lint::Report;
use super::{parse_card, parse_registration};
use serde_json::json;

fn card(value: serde_json::Value) -> (super::CardProjection, Report) {
    let mut report = Report::default();
    let projection = parse_card(value.to_string().as_bytes(), &mut report).expect("an object");
    (projection, report)
}

fn v1_card() -> serde_json::Value {
    json!({
        "name": "Translator",
        "description": "Translates text",
        "version": "1.2.0",
        "supportedInterfaces": [
            {"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://agent.example/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "extensions": [
            {"uri": "https://github.com/google-a2a/a2a-x402/v0.1", "required": true,
             "params": {"accepts": [{"network": "base-sepolia", "asset": "0xusdc", "payTo": "0xpay", "maxAmountRequired": "1000"}]}}
        ]},
        "securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "translate", "name": "Translate", "description": "any pair",
                    "tags": ["language", "translation"], "examples": ["hola -> hello"]}]
    })
}

#[test]
fn a_v1_card_reads_completely_without_lints() {
    let (projection, report) = card(v1_card());
    assert!(report.lints.is_empty(), "{:?}", report.lints);
    assert_eq!(projection.shape, CardShape::V1);
    assert_eq!(projection.name.as_deref(), Some("Translator"));
    assert_eq!(projection.interfaces.len(), 2);
    assert_eq!(projection.interfaces[1].binding, "HTTP+JSON");
    assert_eq!(projection.protocol_versions, vec!["1.0"]);
    assert_eq!(projection.capabilities.streaming, Some(true));
    assert_eq!(projection.security_schemes[0].kind, "apiKey");
    assert_eq!(projection.skills[0].tags, vec!["language", "translation"]);
    let pay = &projection.payments[0];
    assert_eq!(
        (
            pay.source.as_str(),
            pay.network.as_deref(),
            pay.pay_to.as_deref(),
            pay.amount.as_deref()
        ),
        (
            "a2a-x402",
            Some("base-sepolia"),
            Some("0xpay"),
            Some("1000")
        )
    );
}

#[test]
fn a_v03_card_gives_the_same_interfaces_in_the_old_shape() {
    let (projection, report) = card(json!({
        "name": "Old", "description": "v0.3",
        "url": "https://old.example/a2a", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0",
        "additionalInterfaces": [
            {"url": "https://old.example/a2a", "transport": "JSONRPC"},
            {"url": "https://old.example/grpc", "transport": "GRPC"}
        ],
        "supportsAuthenticatedExtendedCard": true,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["application/json"],
        "skills": []
    }));
    assert!(!report.has_errors(), "{:?}", report.lints);
    assert_eq!(projection.shape, CardShape::V03);
    let urls: Vec<(&str, &str)> = projection
        .interfaces
        .iter()
        .map(|i| (i.url.as_str(), i.binding.as_str()))
        .collect();
    assert_eq!(
        urls,
        vec![
            ("https://old.example/a2a", "JSONRPC"),
            ("https://old.example/grpc", "GRPC")
        ],
        "the repeated main interface is listed once"
    );
    assert_eq!(projection.capabilities.extended_agent_card, Some(true));
    assert_eq!(projection.security_schemes[0].kind, "http");
    assert_eq!(projection.protocol_versions, vec!["0.3.0"]);
}

#[test]
fn a_hybrid_card_prefers_supported_interfaces() {
    let mut value = v1_card();
    value["url"] = json!("https://legacy.example/a2a");
    let (projection, _) = card(value);
    assert_eq!(projection.shape, CardShape::Hybrid);
    assert_eq!(projection.interfaces[0].url, "https://agent.example/a2a");
}

#[test]
fn vendor_payment_objects_and_skill_pricing_are_found() {
    let mut value = v1_card();
    value["capabilities"]["extensions"] = json!([]);
    value["extensions"] = json!({"x402-payment": {"chain": "base", "token": "USDC", "address": "0xabc", "minPayment": 0.01}});
    value["skills"][0]["extensions"] =
        json!({"pricing": {"priceUsdc": "0.05", "chain": "base", "token": "USDC"}});
    let (projection, _) = card(value);
    let found: Vec<(&str, Option<&str>, Option<&str>)> = projection
        .payments
        .iter()
        .map(|p| (p.source.as_str(), p.amount.as_deref(), p.skill.as_deref()))
        .collect();
    assert_eq!(
        found,
        vec![
            ("x402-payment", Some("0.01"), None),
            ("skill-pricing", Some("0.05"), Some("translate"))
        ]
    );
}

#[test]
fn masumi_chunked_strings_are_joined() {
    let mut value = v1_card();
    value["description"] = json!([
        "An agent whose description is longer than sixty-three charac",
        "ters."
    ]);
    let (projection, report) = card(value);
    assert_eq!(
        projection.description.as_deref(),
        Some("An agent whose description is longer than sixty-three characters.")
    );
    assert!(report.has("json.string.chunked"));
}

#[test]
fn wrong_types_are_linted_and_the_rest_still_reads() {
    let mut value = v1_card();
    value["name"] = json!(42);
    value["capabilities"]["streaming"] = json!("yes");
    value["skills"] = json!([{"id": "a"}, 7, {"id": "b", "name": "B", "tags": "not-a-list"}]);
    value["supportedInterfaces"][0]["url"] = json!("ftp://x");
    value["mystery"] = json!({"kept": true});
    let (projection, report) = card(value);
    for code in [
        "json.type.boolean",
        "card.skill.incomplete",
        "card.skill.not_object",
        "json.type.array",
        "card.interface.url.scheme",
        "card.field.unknown",
    ] {
        assert!(report.has(code), "{code} missing from {:?}", report.lints);
    }
    assert_eq!(
        projection.name.as_deref(),
        Some("42"),
        "numbers read as text"
    );
    assert_eq!(projection.skills.len(), 1);
    assert_eq!(projection.interfaces.len(), 1);
    let unknown = report
        .lints
        .iter()
        .find(|l| l.code == "card.field.unknown")
        .unwrap();
    assert_eq!(unknown.path, "$.mystery");
    assert!(
        !report.has_errors(),
        "a field breaking the specification is left out, the card stays usable: {:?}",
        report.lints
    );
}

#[test]
fn a_wrongly_typed_optional_field_is_left_out_and_the_card_is_usable() {
    let mut value = v1_card();
    value["capabilities"] = json!(["streaming", "push"]);
    let (projection, report) = card(value);
    assert!(report.has("json.type.object"), "{:?}", report.lints);
    assert!(!report.has_errors(), "{:?}", report.lints);
    assert_eq!(
        projection.capabilities,
        super::card::Capabilities::default()
    );
    assert_eq!(projection.skills.len(), 1, "the rest reads");
}

/// How a document of unknown kind reads.
fn read_any(value: serde_json::Value) -> (super::Projection, Report) {
    let mut report = Report::default();
    let projection = super::check::read(
        value.to_string().as_bytes(),
        super::Expect::Any,
        &mut report,
    )
    .expect("an object");
    (projection, report)
}

#[test]
fn a_documents_kind_is_decided_from_all_it_carries() {
    // A card with a url and a vendor `endpoints` object, and no skills.
    let (projection, report) = read_any(json!({
        "name": "Gateway", "description": "d", "url": "https://gw.example/a2a",
        "protocolVersion": "0.3.0", "capabilities": {},
        "endpoints": {"rest": "https://gw.example/api", "ws": "wss://gw.example/ws"}
    }));
    assert!(
        matches!(projection, super::Projection::Card(_)),
        "{projection:?}"
    );
    assert!(
        report.has("card.skills.missing") && !report.has_errors(),
        "{:?}",
        report.lints
    );
    // A registration file without its type that lists skills of its own.
    let (projection, _) = read_any(json!({
        "name": "Helper", "description": "d", "image": "https://h.example/i.png",
        "services": [{"name": "A2A", "endpoint": "https://h.example"}],
        "registrations": [{"agentId": 3, "agentRegistry": "eip155:1:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432"}],
        "skills": ["search"]
    }));
    assert!(
        matches!(projection, super::Projection::Registration(_)),
        "{projection:?}"
    );
    // The ERC-8004 type settles it whatever else is there.
    let (projection, _) = read_any(json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Both", "url": "https://b.example", "skills": [], "supportedInterfaces": []
    }));
    assert!(
        matches!(projection, super::Projection::Registration(_)),
        "{projection:?}"
    );
}

#[test]
fn a_file_with_only_registrations_is_a_valid_domain_proof() {
    let (projection, report) = registration(json!({
        "registrations": [{"agentId": 9, "agentRegistry": "eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432"}]
    }));
    assert!(!report.has_errors(), "{:?}", report.lints);
    assert!(report.has("registration.proof_only"));
    assert_eq!(projection.registrations.len(), 1);
    // A file that describes an agent still needs its name.
    let (_, report) = registration(json!({
        "services": [{"name": "A2A", "endpoint": "https://a.example"}],
        "registrations": []
    }));
    assert!(report.has("registration.name.missing") && report.has_errors());
}

#[test]
fn documents_that_are_not_cards_say_so() {
    for (bytes, code) in [
        (&b"\xff\xfe{}"[..], "document.encoding"),
        (b"{\"name\": ", "document.json"),
        (b"[1, 2]", "card.not_object"),
        (b"{}", "card.name.missing"),
    ] {
        let mut report = Report::default();
        let _ = parse_card(bytes, &mut report);
        assert!(report.has(code), "{code} for {bytes:?}: {:?}", report.lints);
        assert!(report.has_errors());
    }
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let mut report = Report::default();
    assert!(parse_card(deep.as_bytes(), &mut report).is_none());
    assert!(
        report.has("document.json"),
        "nesting beyond the parser's limit is an error"
    );
}

fn registration(value: serde_json::Value) -> (super::RegistrationProjection, Report) {
    let mut report = Report::default();
    let projection =
        parse_registration(value.to_string().as_bytes(), &mut report).expect("an object");
    (projection, report)
}

#[test]
fn every_registration_file_revision_reads_to_the_same_projection() {
    let current = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Agent", "description": "Does things", "image": "https://img.example/a.png",
        "services": [{"name": "A2A", "endpoint": "https://agent.example", "version": "0.3.0"},
                     {"name": "MCP", "endpoint": "https://mcp.example/", "version": "2025-06-18"}],
        "x402Support": true, "active": true,
        "registrations": [{"agentId": 22, "agentRegistry": "eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432"}],
        "supportedTrust": ["reputation", "crypto-economic"]
    });
    let older = json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Agent", "description": "Does things", "image": "https://img.example/a.png",
        "endpoints": [{"type": "A2A", "url": "https://agent.example", "version": "0.3.0"},
                      {"type": "MCP", "url": "https://mcp.example/", "version": "2025-06-18"}],
        "x402support": {"enabled": true}, "active": true,
        "registrations": [{"agentId": "22", "agentRegistry": "eip155:8453:0x8004A169FB4a3325136EB29fA0ceB6D2e539a432"}],
        "supportedTrusts": ["reputation", "crypto-economic"]
    });
    let oldest = {
        let mut v = older.clone();
        let trust = v
            .as_object_mut()
            .unwrap()
            .remove("supportedTrusts")
            .unwrap();
        v["trustModels"] = trust;
        v
    };
    let (expected, report) = registration(current);
    assert!(report.lints.is_empty(), "{:?}", report.lints);
    for other in [older, oldest] {
        assert_eq!(registration(other).0, expected);
    }
    assert!(expected.names_agent(8453, "0x8004a169fb4a3325136eb29fa0ceb6d2e539a432", "22"));
    assert!(!expected.names_agent(84532, "0x8004a169fb4a3325136eb29fa0ceb6d2e539a432", "22"));
    assert_eq!(
        expected.a2a_card_urls(),
        vec![
            "https://agent.example/.well-known/agent-card.json",
            "https://agent.example/.well-known/agent.json"
        ]
    );
}

#[test]
fn an_a2a_service_says_what_its_skills_are_as_the_agent0_sdk_writes_them() {
    let (file, report) = registration(json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Agent", "description": "Sees things",
        "services": [{"name": "A2A", "endpoint": "https://agent.example", "version": "0.30",
                      "a2aSkills": ["vision", "ocr"]}]
    }));
    assert!(report.lints.is_empty(), "{:?}", report.lints);
    assert_eq!(file.services[0].a2a_skills, vec!["vision", "ocr"]);
    let (file, report) = registration(json!({
        "type": "https://eips.ethereum.org/EIPS/eip-8004#registration-v1",
        "name": "Agent", "description": "Sees things",
        "services": [{"name": "A2A", "endpoint": "https://agent.example", "a2aSkills": "vision"}]
    }));
    assert!(file.services[0].a2a_skills.is_empty());
    assert!(
        !report.lints.is_empty(),
        "a list that is not one is reported"
    );
}

#[test]
fn a_card_url_in_the_a2a_service_is_used_as_is() {
    assert_eq!(
        super::registration::card_urls("https://agent.example/cards/main.json"),
        vec!["https://agent.example/cards/main.json"]
    );
    assert!(super::registration::card_urls("not a url").is_empty());
}

#[test]
fn hex_recipients_are_folded_and_others_kept() {
    assert_eq!(
        super::payments::recipient(" 0xAbC0000000000000000000000000000000000001 "),
        "0xabc0000000000000000000000000000000000001"
    );
    let base58 = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
    assert_eq!(super::payments::recipient(base58), base58);
}
