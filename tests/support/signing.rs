//! Signing Agent Cards in tests the way the A2A SDKs do: a detached JWS over the JCS canonical
//! card without `signatures`, with the fixed test keys of `tests/fixtures/keys`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{Value, json};

/// The ES256 test key.
pub(crate) fn es256_key() -> EncodingKey {
    EncodingKey::from_ec_pem(include_bytes!("../fixtures/keys/es256.pem")).unwrap()
}

/// The ES256 test key's public JWK, with `kid`.
pub(crate) fn es256_jwk(kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&es256_key(), Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.into());
    jwk
}

/// `card` with an ES256 signature by the test key under `kid`.
pub(crate) fn sign_es256(mut card: Value, kid: &str) -> Value {
    if let Some(map) = card.as_object_mut() {
        map.remove("signatures");
    }
    let payload = serde_jcs::to_vec(&card).unwrap();
    let protected =
        URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "kid": kid, "typ": "JOSE"}).to_string());
    let message = format!("{protected}.{}", URL_SAFE_NO_PAD.encode(payload));
    let signature =
        jsonwebtoken::crypto::sign(message.as_bytes(), &es256_key(), Algorithm::ES256).unwrap();
    card["signatures"] = json!([{"protected": protected, "signature": signature}]);
    card
}
