//! Masumi's registry metadata, in each variant the registry and payment services mint.

use super::masumi::{Price, parse_masumi_metadata};
use serde_json::json;

fn codes(report: &super::Report) -> Vec<&'static str> {
    report.lints.iter().map(|l| l.code).collect()
}

#[test]
fn the_first_variant_with_pricing_author_legal_and_chunks() {
    let long = "A summariser that reads long documents and writes short ones for busy people.";
    let chunks: Vec<String> = long
        .as_bytes()
        .chunks(60)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let (meta, report) = parse_masumi_metadata(&json!({
        "name": "Summariser",
        "description": chunks,
        "api_base_url": "https://summariser.example/api",
        "author": {"name": "Ada", "contact": "ada@example.org", "organization": "Lovelace Ltd"},
        "legal": {"privacy_policy": "https://summariser.example/privacy", "terms": "https://summariser.example/terms"},
        "capability": {"name": "gpt", "version": 4},
        "tags": ["summaries", "text"],
        "example_output": [{"name": "sample", "mime_type": "text/plain", "url": "https://summariser.example/sample.txt"}],
        "agentPricing": {"pricingType": "Fixed", "fixedPricing": [{"amount": "5000000", "unit": ""}, {"amount": "1.5", "unit": "x"}]},
        "metadata_version": "1"
    }));
    assert_eq!(meta.variant, "v1");
    assert_eq!(meta.description.as_deref(), Some(long));
    assert_eq!(
        meta.api_url.as_deref(),
        Some("https://summariser.example/api")
    );
    let author = meta.author.clone().unwrap();
    assert_eq!(author.contact_email.as_deref(), Some("ada@example.org"));
    assert_eq!(
        meta.capability.clone().unwrap().version.as_deref(),
        Some("4")
    );
    let pricing = meta.pricing.clone().unwrap();
    assert_eq!(pricing.pricing_type.as_deref(), Some("Fixed"));
    assert_eq!(
        pricing.fixed,
        [Price {
            amount: "5000000".into(),
            unit: "".into()
        }],
        "the amount that is not a whole number is left out"
    );
    assert_eq!(meta.example_outputs.len(), 1);
    assert!(meta.unknown.is_empty());
    assert_eq!(
        codes(&report),
        ["json.string.chunked", "masumi.pricing.amount"]
    );
}

#[test]
fn the_a2a_and_payment_service_variants_are_told_apart_by_their_keys() {
    let (a2a, _) = parse_masumi_metadata(&json!({
        "name": "Card agent", "api_url": "https://a.example", "agent_card_url": "https://a.example/.well-known/agent-card.json",
        "a2a_protocol_versions": ["0.3.0", "1.0"], "metadata_version": "2"
    }));
    assert_eq!(a2a.variant, "a2a");
    assert_eq!(a2a.a2a_protocol_versions, ["0.3.0", "1.0"]);
    let (payment, _) = parse_masumi_metadata(&json!({
        "name": "Paid agent", "api_base_url": "https://p.example", "metadata_version": "2",
        "supported_payment_sources": [{"chain": "Cardano", "network": "Preprod"}]
    }));
    assert_eq!(payment.variant, "v2");
    assert_eq!(payment.payment_sources.unwrap()[0]["chain"], "Cardano");
}

#[test]
fn malformed_metadata_is_linted_and_kept() {
    let (meta, report) = parse_masumi_metadata(&json!({
        "description": 12, "api_base_url": "not a url", "tags": "one", "mood": ["happy"],
        "name": ["x".repeat(70)]
    }));
    assert_eq!(
        meta.description.as_deref(),
        Some("12"),
        "a number is read as its text"
    );
    assert!(meta.tags.is_empty());
    assert_eq!(meta.unknown["mood"], json!(["happy"]));
    let found = codes(&report);
    for code in [
        "masumi.chunk.too_long",
        "json.type.array",
        "masumi.url.invalid",
        "masumi.field.unknown",
    ] {
        assert!(found.contains(&code), "{code} missing from {found:?}");
    }
    let (_, not_object) = parse_masumi_metadata(&json!("just text"));
    assert_eq!(codes(&not_object), ["masumi.metadata.type"]);
    let (_, nameless) = parse_masumi_metadata(&json!({}));
    assert_eq!(codes(&nameless), ["masumi.name.missing"]);
}
