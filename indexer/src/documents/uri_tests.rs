//! How URIs resolve in every spelling, and how they are refused: examples, then properties
//! over arbitrary text.

use super::*;
use proptest::prelude::*;

const CID0: &str = "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG";
const CID1: &str = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";

fn options() -> ResolveOptions {
    ResolveOptions {
        ipfs_gateways: vec![
            Url::parse("https://gw-one.example/ipfs/").unwrap(),
            Url::parse("https://gw-two.example/ipfs/").unwrap(),
        ],
        ..ResolveOptions::default()
    }
}

fn urls(uri: &str) -> Vec<String> {
    match resolve(uri, &options()).unwrap() {
        Target::Http(urls) => urls.into_iter().map(String::from).collect(),
        other => panic!("{uri} resolved to {other:?}"),
    }
}

fn inline(uri: &str) -> (Vec<u8>, String) {
    match resolve(uri, &options()).unwrap() {
        Target::Inline { bytes, media_type } => (bytes, media_type),
        other => panic!("{uri} resolved to {other:?}"),
    }
}

#[test]
fn ipfs_in_every_spelling_goes_through_each_gateway() {
    let expected = vec![
        format!("https://gw-one.example/ipfs/{CID0}/card.json"),
        format!("https://gw-two.example/ipfs/{CID0}/card.json"),
    ];
    assert_eq!(urls(&format!("ipfs://{CID0}/card.json")), expected);
    assert_eq!(urls(&format!("ipfs://ipfs/{CID0}/card.json")), expected);
    assert_eq!(urls(&format!("IPFS://{CID0}/card.json")), expected);
    assert_eq!(urls(&format!("{CID0}/card.json")), expected);
    let gateway = format!("https://other.example/ipfs/{CID0}/card.json");
    let mut with_original = expected.clone();
    with_original.push(gateway.clone());
    assert_eq!(urls(&gateway), with_original);
    assert_eq!(
        urls(&format!("https://{CID1}.ipfs.dweb.link/a.json")),
        vec![
            format!("https://gw-one.example/ipfs/{CID1}/a.json"),
            format!("https://gw-two.example/ipfs/{CID1}/a.json"),
            format!("https://{CID1}.ipfs.dweb.link/a.json"),
        ]
    );
    assert_eq!(
        urls("ipns://agent.example/x.json")[0],
        "https://gw-one.example/ipns/agent.example/x.json"
    );
}

#[test]
fn the_cid_of_ipfs_content_in_every_spelling() {
    let whole = |cid: &str| {
        Some(IpfsContent {
            cid: cid.into(),
            inside: false,
        })
    };
    let inside = |cid: &str| {
        Some(IpfsContent {
            cid: cid.into(),
            inside: true,
        })
    };
    assert_eq!(ipfs_content(&format!("ipfs://{CID0}")), whole(CID0));
    assert_eq!(ipfs_content(&format!("ipfs://ipfs/{CID0}/")), whole(CID0));
    assert_eq!(
        ipfs_content(&format!("{CID0}?filename=a.json")),
        whole(CID0)
    );
    assert_eq!(
        ipfs_content(&format!("ipfs://{CID0}/card.json")),
        inside(CID0)
    );
    assert_eq!(
        ipfs_content(&format!("https://gw.example/ipfs/{CID1}")),
        whole(CID1)
    );
    assert_eq!(
        ipfs_content(&format!("https://{CID1}.ipfs.dweb.link/a.json")),
        inside(CID1)
    );
    assert_eq!(ipfs_content("ipns://agent.example/x.json"), None);
    assert_eq!(ipfs_content("https://agent.example/card.json"), None);
}

#[test]
fn arweave_and_plain_urls() {
    assert_eq!(urls("ar://abc123/x"), vec!["https://arweave.net/abc123/x"]);
    assert_eq!(
        urls("https://agent.example/.well-known/agent-card.json"),
        vec!["https://agent.example/.well-known/agent-card.json"]
    );
}

#[test]
fn data_uris_in_base64_and_percent_encoding() {
    assert_eq!(
        inline("data:application/json;base64,eyJhIjoxfQ=="),
        (b"{\"a\":1}".to_vec(), "application/json".into())
    );
    assert_eq!(
        inline("data:application/json;base64,eyJhIjoxfQ").0,
        b"{\"a\":1}"
    );
    assert_eq!(inline("data:;base64,eyJh\nIjoxfQ%3D%3D").0, b"{\"a\":1}");
    assert_eq!(
        inline("data:,%7B%22a%22%3A1%7D"),
        (b"{\"a\":1}".to_vec(), "text/plain;charset=US-ASCII".into())
    );
    assert_eq!(inline("data:text/plain,100%").0, b"100%");
}

#[test]
fn refusals_say_why() {
    let o = options();
    assert_eq!(resolve("  ", &o), Err(UriError::Empty));
    assert_eq!(
        resolve("ftp://x.example/a", &o),
        Err(UriError::UnsupportedScheme("ftp".into()))
    );
    assert_eq!(
        resolve("file:///etc/passwd", &o),
        Err(UriError::UnsupportedScheme("file".into()))
    );
    assert_eq!(
        resolve("agent.json", &o),
        Err(UriError::UnsupportedScheme("none".into()))
    );
    assert!(matches!(
        resolve("http://x.example/a", &o),
        Err(UriError::HttpNotAllowed(_))
    ));
    assert!(matches!(
        resolve("ipfs://not-a-cid", &o),
        Err(UriError::Malformed { .. })
    ));
    assert!(matches!(
        resolve("data:application/json;base64,!!!!", &o),
        Err(UriError::Malformed { .. })
    ));
    let huge = format!("data:;base64,{}", "A".repeat(2 << 20));
    assert!(matches!(resolve(&huge, &o), Err(UriError::TooLarge { .. })));
    let no_gateways = ResolveOptions {
        ipfs_gateways: vec![],
        ..o
    };
    assert!(matches!(
        resolve(&format!("ipfs://{CID0}"), &no_gateways),
        Err(UriError::NoGateway(_))
    ));
}

#[test]
fn http_is_accepted_when_allowed() {
    let o = ResolveOptions {
        allow_http: true,
        ..options()
    };
    assert_eq!(
        resolve("http://127.0.0.1:8080/card", &o),
        Ok(Target::Http(vec![
            Url::parse("http://127.0.0.1:8080/card").unwrap()
        ]))
    );
}

proptest! {
    /// Any string resolves or is refused with a reason; it never panics, and an inline
    /// document is never larger than the limit.
    #[test]
    fn any_text_resolves_or_is_refused(uri in "\\PC{0,300}") {
        let options = ResolveOptions { max_bytes: 4096, ..ResolveOptions::default() };
        if let Ok(Target::Inline { bytes, .. }) = resolve(&uri, &options) {
            prop_assert!(bytes.len() <= 4096);
        }
    }

    /// Base64 `data:` URIs give back exactly the bytes that were encoded.
    #[test]
    fn base64_data_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let uri = format!("data:application/octet-stream;base64,{encoded}");
        prop_assert_eq!(
            resolve(&uri, &ResolveOptions::default()),
            Ok(Target::Inline { bytes, media_type: "application/octet-stream".into() })
        );
    }

    /// URI-shaped inputs with arbitrary paths never panic.
    #[test]
    fn scheme_shaped_inputs(scheme in "(ipfs|ipns|ar|data|https|http|IPFS)://?", rest in "[ -~]{0,120}") {
        let _ = resolve(&format!("{scheme}{rest}"), &ResolveOptions::default());
    }
}
