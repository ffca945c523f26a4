//! Card signatures with every accepted algorithm, each SDK's canonical form, tampering, refused
//! algorithms and the ways a key can be missing. Keys are fixed test keys in
//! `tests/fixtures/keys`.

use super::signature::{SignatureStatus, canonical_variants, verify_card};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use url::Url;

macro_rules! key {
    ($file:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/keys/",
            $file
        ))
    };
}

fn encoding_key(alg: Algorithm) -> EncodingKey {
    match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(key!("es256.pem")).unwrap(),
        Algorithm::ES384 => EncodingKey::from_ec_pem(key!("es384.pem")).unwrap(),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(key!("eddsa.pem")).unwrap(),
        _ => EncodingKey::from_rsa_pem(key!("rsa.pem")).unwrap(),
    }
}

fn jwk(alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = if alg == Algorithm::EdDSA {
        serde_json::from_slice(key!("eddsa.public.jwk.json")).unwrap()
    } else {
        Jwk::from_encoding_key(&encoding_key(alg), alg).unwrap()
    };
    jwk.common.key_id = Some(kid.to_string());
    jwk
}

fn card() -> Value {
    json!({
        "name": "Señor Agent", "description": "Translates ✓", "version": "1.0.0",
        "supportedInterfaces": [{"url": "https://agent.example/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"extensions": []}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "documentationUrl": "",
        "skills": [{"id": "t", "name": "T", "description": "d", "tags": ["x"], "examples": []}]
    })
}

/// Signs `payload` as a detached JWS and attaches it to `card`.
fn sign(mut card: Value, payload: &[u8], alg: Algorithm, header: Value) -> Value {
    let protected = URL_SAFE_NO_PAD.encode(header.to_string());
    let message = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
    let signature =
        jsonwebtoken::crypto::sign(message.as_bytes(), &encoding_key(alg), alg).unwrap();
    card["signatures"] = json!([{"protected": protected, "signature": signature}]);
    card
}

fn jcs(value: &Value) -> Vec<u8> {
    serde_jcs::to_vec(value).unwrap()
}

async fn verify(card: &Value, trusted: &[Jwk]) -> SignatureStatus {
    verify_card(card, None, trusted, |_| async {
        Err::<JwkSet, _>("no jku".to_string())
    })
    .await
}

#[tokio::test]
async fn every_accepted_algorithm_verifies_and_a_changed_card_does_not() {
    for (alg, name) in [
        (Algorithm::ES256, "ES256"),
        (Algorithm::ES384, "ES384"),
        (Algorithm::EdDSA, "EdDSA"),
        (Algorithm::RS256, "RS256"),
        (Algorithm::PS256, "PS256"),
    ] {
        let header = json!({"alg": name, "kid": "k1", "typ": "JOSE"});
        let signed = sign(card(), &jcs(&card()), alg, header);
        let trusted = [jwk(alg, "k1")];
        assert_eq!(verify(&signed, &trusted).await.as_str(), "valid", "{name}");
        let mut changed = signed.clone();
        changed["description"] = json!("Translates, now for a fee");
        assert_eq!(
            verify(&changed, &trusted).await.as_str(),
            "invalid",
            "{name}: a card changed after signing"
        );
    }
}

#[tokio::test]
async fn the_python_and_js_canonical_forms_are_accepted() {
    let variants = canonical_variants(&card());
    assert_eq!(
        variants.len(),
        3,
        "as is, pruned with escapes, pruned (no defaults here)"
    );
    let pruned = String::from_utf8(variants[2].clone()).unwrap();
    assert!(!pruned.contains("documentationUrl") && !pruned.contains("examples"));
    let escaped = String::from_utf8(variants[1].clone()).unwrap();
    assert!(
        escaped.contains("Se\\u00f1or") && escaped.contains("\\u2713"),
        "{escaped}"
    );
    let trusted = [jwk(Algorithm::ES256, "k")];
    for payload in &variants[1..] {
        let signed = sign(
            card(),
            payload,
            Algorithm::ES256,
            json!({"alg": "ES256", "kid": "k"}),
        );
        assert_eq!(verify(&signed, &trusted).await.as_str(), "valid");
    }
}

#[tokio::test]
async fn none_and_hmac_are_never_accepted() {
    let trusted = [jwk(Algorithm::ES256, "k")];
    let none = {
        let mut c = card();
        let protected = URL_SAFE_NO_PAD.encode(json!({"alg": "none"}).to_string());
        c["signatures"] = json!([{"protected": protected, "signature": ""}]);
        c
    };
    assert_eq!(
        verify(&none, &trusted).await,
        SignatureStatus::Unsupported { alg: "none".into() }
    );
    let mut hmac = card();
    let protected = URL_SAFE_NO_PAD.encode(json!({"alg": "HS256", "kid": "k"}).to_string());
    hmac["signatures"] = json!([{"protected": protected, "signature": "AAAA"}]);
    assert_eq!(verify(&hmac, &trusted).await.as_str(), "unsupported");
}

#[tokio::test]
async fn keys_come_from_the_trusted_set_or_a_jku_on_the_cards_origin() {
    let header = json!({"alg": "ES256", "kid": "site", "jku": "https://agent.example/jwks.json"});
    let signed = sign(card(), &jcs(&card()), Algorithm::ES256, header);
    assert_eq!(verify(&signed, &[]).await.as_str(), "key_unavailable");

    let origin = Url::parse("https://agent.example/.well-known/agent-card.json").unwrap();
    let set = JwkSet {
        keys: vec![jwk(Algorithm::ES256, "site")],
    };
    let status = verify_card(&signed, Some(&origin), &[], |url| {
        let set = set.clone();
        async move {
            assert_eq!(url.as_str(), "https://agent.example/jwks.json");
            Ok::<_, String>(set)
        }
    })
    .await;
    assert_eq!(
        status,
        SignatureStatus::Valid {
            kid: Some("site".into()),
            alg: "ES256".into(),
            source: "https://agent.example/jwks.json".into()
        }
    );

    let elsewhere = Url::parse("https://other.example/card.json").unwrap();
    let status = verify_card(&signed, Some(&elsewhere), &[], |_| async {
        panic!("a jku on another origin is never fetched")
    })
    .await;
    assert!(
        matches!(status, SignatureStatus::KeyUnavailable { reason } if reason.contains("not on the card's origin"))
    );

    let wrong_key = [jwk(Algorithm::ES384, "site")];
    assert_eq!(verify(&signed, &wrong_key).await.as_str(), "invalid");
}

#[tokio::test]
async fn unsigned_and_malformed_signatures() {
    assert_eq!(verify(&card(), &[]).await, SignatureStatus::Unsigned);
    let mut broken = card();
    broken["signatures"] = json!([{"protected": "!!!", "signature": "x"}]);
    assert_eq!(verify(&broken, &[]).await.as_str(), "invalid");
    broken["signatures"] = json!([{"signature": "x"}]);
    assert_eq!(verify(&broken, &[]).await.as_str(), "invalid");
}
