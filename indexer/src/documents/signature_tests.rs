//! Card signatures with every accepted algorithm, each SDK's canonical form, tampering, refused
//! algorithms and the ways a key can be missing. Keys are fixed test keys in
//! `tests/fixtures/keys`.

use super::signature::{
    Cap, JwksError, MAX_JKU_FETCHES, MAX_KEYS_PER_SIGNATURE, MAX_SIGNATURES, SignatureStatus,
    canonical_variants, verify_card,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
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
        Err::<JwkSet, _>(JwksError::NotModified)
    })
    .await
    .status
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
            Ok::<_, JwksError>(set)
        }
    })
    .await
    .status;
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
    .await
    .status;
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

/// `count` signatures by the ES256 key, each naming its own `jku` on the card's origin.
fn signed_with_jkus(count: usize, same_jku: bool) -> Value {
    let mut signatures = Vec::new();
    for i in 0..count {
        let jku = if same_jku {
            "https://agent.example/jwks.json".to_string()
        } else {
            format!("https://agent.example/jwks-{i}.json")
        };
        let header = json!({"alg": "ES256", "kid": "site", "jku": jku});
        let one = sign(card(), &jcs(&card()), Algorithm::ES256, header);
        signatures.push(one["signatures"][0].clone());
    }
    let mut signed = card();
    signed["signatures"] = Value::Array(signatures);
    signed
}

#[tokio::test]
async fn jku_fetches_per_card_are_capped_and_each_url_is_fetched_once() {
    let origin = Url::parse("https://agent.example/card.json").unwrap();
    let fetches = AtomicUsize::new(0);
    // Every key set is empty, so each signature moves on to the next.
    let fetch = |_url: Url| {
        fetches.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, JwksError>(JwkSet { keys: vec![] }) }
    };
    let result = verify_card(&signed_with_jkus(6, false), Some(&origin), &[], fetch).await;
    assert_eq!(fetches.load(Ordering::SeqCst), MAX_JKU_FETCHES);
    assert_eq!(result.capped, vec![Cap::JkuFetches]);
    assert_eq!(result.status.as_str(), "key_unavailable");
    assert!(Cap::JkuFetches.to_string().contains("at most 2 key sets"));

    fetches.store(0, Ordering::SeqCst);
    let result = verify_card(&signed_with_jkus(6, true), Some(&origin), &[], fetch).await;
    assert_eq!(fetches.load(Ordering::SeqCst), 1, "one URL, fetched once");
    assert!(result.capped.is_empty());
}

#[tokio::test]
async fn signatures_past_the_cap_are_not_checked_and_the_cap_is_named() {
    let origin = Url::parse("https://agent.example/card.json").unwrap();
    // MAX_SIGNATURES that name a key nobody has, then one that verifies.
    let mut signatures: Vec<Value> = (0..MAX_SIGNATURES)
        .map(|_| {
            let header = json!({"alg": "ES256", "kid": "nobody"});
            sign(card(), &jcs(&card()), Algorithm::ES256, header)["signatures"][0].clone()
        })
        .collect();
    let good = sign(
        card(),
        &jcs(&card()),
        Algorithm::ES256,
        json!({"alg": "ES256", "kid": "k"}),
    );
    signatures.push(good["signatures"][0].clone());
    let mut signed = card();
    signed["signatures"] = Value::Array(signatures);
    let trusted = [jwk(Algorithm::ES256, "k")];
    let result = verify_card(&signed, Some(&origin), &trusted, |_| async {
        Err::<JwkSet, _>(JwksError::NotModified)
    })
    .await;
    assert_eq!(
        result.status.as_str(),
        "key_unavailable",
        "the 9th is never read"
    );
    assert_eq!(
        result.capped,
        vec![Cap::Signatures {
            found: MAX_SIGNATURES + 1
        }]
    );
    assert!(result.capped[0].to_string().contains("only the first 8"));
    // Within the cap, the good one is found.
    assert_eq!(verify(&good, &trusted).await.as_str(), "valid");
}

#[tokio::test]
async fn keys_tried_per_signature_are_capped() {
    // No kid in the header, so every trusted key is a candidate; the right one comes last.
    let signed = sign(
        card(),
        &jcs(&card()),
        Algorithm::ES256,
        json!({"alg": "ES256"}),
    );
    let mut trusted: Vec<Jwk> = (0..MAX_KEYS_PER_SIGNATURE)
        .map(|i| jwk(Algorithm::ES384, &format!("other-{i}")))
        .collect();
    trusted.push(jwk(Algorithm::ES256, "right"));
    let result = verify_card(&signed, None, &trusted, |_| async {
        Err::<JwkSet, _>(JwksError::NotModified)
    })
    .await;
    assert_eq!(
        result.status.as_str(),
        "invalid",
        "the 17th key is never tried"
    );
    assert_eq!(
        result.capped,
        vec![Cap::Keys {
            found: MAX_KEYS_PER_SIGNATURE + 1
        }]
    );
    trusted.rotate_right(1);
    assert_eq!(verify(&signed, &trusted).await.as_str(), "valid");
}
