//! How each provider's wording of a refusal is read: result caps and range caps with the limit
//! or range they name, failures that pass, reverts and missing methods, and every wording the
//! emulator speaks.

use super::*;

#[test]
fn result_caps_with_and_without_a_suggested_range() {
    let alchemy = "Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x1a2b, 0x1a3f]";
    assert_eq!(
        classify_message(-32602, alchemy),
        RpcErrorKind::TooManyResults {
            message: alchemy.into(),
            suggested: Some((0x1a2b, 0x1a3f))
        }
    );
    for (text, suggested) in [
        (
            "query returned more than 10000 results. Try with this block range [0x10, 0x20].",
            Some((16, 32)),
        ),
        (
            "query exceeds max results 20000, retry with the range 5000-6000",
            Some((5000, 6000)),
        ),
        ("logs matched by query exceeds limit of 10000", None),
        ("backend response too large", None),
        ("response size should not greater than 10000000 bytes", None),
    ] {
        match classify_message(-32005, text) {
            RpcErrorKind::TooManyResults { suggested: s, .. } => {
                assert_eq!(s, suggested, "{text}")
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn range_caps_in_each_providers_words() {
    for (text, max, suggested) in [
        (
            "You can make eth_getLogs requests with up to a 5 block range. Based on your parameters, this block range should work: [0x0, 0x4]",
            Some(5),
            Some((0, 4)),
        ),
        ("block range too large", None, None),
        ("Block range is too large", None, None),
        ("block range is too wide", None, None),
        ("exceed maximum block range: 5000", Some(5000), None),
        ("query exceeds max block range 100000", Some(100_000), None),
        (
            "eth_getLogs is limited to a 10,000 range",
            Some(10_000),
            None,
        ),
        (
            "requested too many blocks from 0 to 5000, maximum is set to 2048",
            Some(2048),
            None,
        ),
        (
            "eth_getLogs range exceeds the range allowed for your plan (12000 > 10000)",
            Some(10_000),
            None,
        ),
        (
            "eth_getLogs range is too large, max is 10k blocks",
            Some(10_000),
            None,
        ),
        (
            "maximum [from, to] blocks distance: 10000",
            Some(10_000),
            None,
        ),
        ("Requested range exceeds maximum range limit", None, None),
        (
            "ranges over 10000 blocks are not supported on freetier",
            Some(10_000),
            None,
        ),
    ] {
        match classify_message(-32000, text) {
            RpcErrorKind::RangeTooLarge {
                max_range,
                suggested: s,
                ..
            } => {
                assert_eq!(max_range, max, "{text}");
                assert_eq!(s, suggested, "{text}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn rate_limits_pass_reverts_and_missing_methods_are_final_the_rest_unknown() {
    for text in [
        "Too Many Requests",
        "request timed out",
        "rate limit exceeded",
        "Your app has exceeded its compute units per second capacity",
        "daily request count exceeded, request rate limited",
        "no backend is currently healthy to serve traffic",
    ] {
        assert!(classify_message(-32000, text).is_retryable(), "{text}");
    }
    let missing = classify_message(-32601, "the method eth_foo does not exist/is not available");
    assert!(matches!(missing, RpcErrorKind::Unsupported(_)));
    let reverted = classify_message(3, "execution reverted");
    assert!(matches!(reverted, RpcErrorKind::Reverted(_)));
    assert!(missing.is_final() && reverted.is_final());
    for text in [
        "invalid argument 0: hex string without 0x prefix",
        "invalid block range params",
        "something nobody has seen",
    ] {
        let kind = classify_message(-32602, text);
        assert!(matches!(kind, RpcErrorKind::Unknown(_)), "{text}: {kind:?}");
        assert!(!kind.is_retryable() && !kind.is_final());
    }
}

/// The emulator speaks every wording collected from providers; each must shrink the range
/// (to the size named or suggested, when the provider says one), and each rate-limit answer
/// must be retried.
#[test]
fn every_emulated_provider_wording_is_understood() {
    use agentindex_emulator::Provider;
    use alloy::transports::HttpError;
    for provider in Provider::ALL {
        let range = provider.range_refusal(100, 199, 10);
        match classify_message(range.code, &range.message) {
            RpcErrorKind::RangeTooLarge {
                max_range,
                suggested,
                ..
            } => {
                assert!(
                    max_range.is_none_or(|m| m == 10),
                    "{provider:?}: {max_range:?}"
                );
                assert_eq!(suggested.unwrap_or((100, 109)), (100, 109), "{provider:?}");
            }
            RpcErrorKind::TooManyResults { suggested, .. } => {
                assert_eq!(suggested.unwrap_or((100, 109)), (100, 109), "{provider:?}");
            }
            other => panic!("{provider:?} range refusal read as {other:?}"),
        }
        let results = provider.result_refusal(10_000, (100, 150));
        match classify_message(results.code, &results.message) {
            RpcErrorKind::TooManyResults { suggested, .. } => {
                assert_eq!(suggested.unwrap_or((100, 150)), (100, 150), "{provider:?}");
            }
            other => panic!("{provider:?} result refusal read as {other:?}"),
        }
        let limited = provider.rate_limited(25);
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": limited.code, "message": limited.message}});
        let error = AlloyRpcError::Transport(TransportErrorKind::HttpError(HttpError {
            status: limited.status,
            body: body.to_string(),
        }));
        assert!(classify(&error).is_retryable(), "{provider:?}: {limited:?}");
        assert!(
            classify_message(limited.code, &limited.message).is_retryable(),
            "{provider:?} rate limit in a 200 answer: {limited:?}"
        );
        let refused = provider.key_rejected();
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1,
            "error": {"code": refused.code, "message": refused.message}});
        let error = AlloyRpcError::Transport(TransportErrorKind::HttpError(HttpError {
            status: refused.status,
            body: body.to_string(),
        }));
        for kind in [
            classify(&error),
            classify_message(refused.code, &refused.message),
        ] {
            assert!(
                matches!(kind, RpcErrorKind::Rejected(_)),
                "{provider:?} key refusal read as {kind:?}"
            );
        }
    }
}

#[test]
fn refused_keys_are_rejections_neither_final_nor_retried_on_the_same_endpoint() {
    for (code, text) in [
        (-32600, "Must be authenticated!"),
        (-32002, "invalid project id"),
        (-32001, "invalid API key"),
        (
            -32000,
            "Unauthorized: You must authenticate your request with an API key.",
        ),
        (-32002, "rejected due to project ID settings"),
    ] {
        let kind = classify_message(code, text);
        assert!(
            matches!(kind, RpcErrorKind::Rejected(_)),
            "{text}: {kind:?}"
        );
        assert!(!kind.is_retryable() && !kind.is_final(), "{text}");
        assert_eq!(kind.problem(), Some(crate::health::Problem::Rejected));
    }
    // A contract's own refusal is an answer about the contract, not about the key.
    let reverted = classify_message(3, "execution reverted: Unauthorized()");
    assert!(matches!(reverted, RpcErrorKind::Reverted(_)));
    assert_eq!(reverted.problem(), None);
}
