//! The files embedded in the binary: the explorer's own and GraphiQL's page
//! (`api/assets/explorer`, written for agentindex, served as they are), and the third-party
//! browser builds they load (`api/assets/vendor`: GraphiQL, React, ReactDOM and graphql-ws as
//! the pinned npm packages ship them, stored gzipped by `scripts/vendor-builds`).

use axum::http::HeaderValue;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::sync::OnceLock;

const HTML: &str = "text/html; charset=utf-8";
const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
const SVG: &str = "image/svg+xml";

/// One embedded file.
pub(crate) struct Asset {
    /// Its path under `api/assets`, for errors.
    pub(crate) path: &'static str,
    /// Its media type.
    pub(crate) content_type: &'static str,
    /// Its bytes as stored.
    pub(crate) body: &'static [u8],
    /// Whether `body` is gzipped.
    pub(crate) gzipped: bool,
    etag: OnceLock<HeaderValue>,
}

impl Asset {
    const fn new(
        path: &'static str,
        content_type: &'static str,
        body: &'static [u8],
        gzipped: bool,
    ) -> Self {
        Self {
            path,
            content_type,
            body,
            gzipped,
            etag: OnceLock::new(),
        }
    }

    /// A strong ETag: the start of the SHA-256 of the stored bytes.
    pub(crate) fn etag(&self) -> HeaderValue {
        self.etag
            .get_or_init(|| {
                let digest = Sha256::digest(self.body);
                let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
                HeaderValue::from_str(&format!("\"{hex}\"")).expect("hex is a header value")
            })
            .clone()
    }

    /// The file's own bytes (inflated when stored gzipped), for a client that takes no gzip.
    pub(crate) fn inflated(&self) -> std::io::Result<Vec<u8>> {
        if !self.gzipped {
            return Ok(self.body.to_vec());
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(self.body).read_to_end(&mut out)?;
        Ok(out)
    }
}

macro_rules! explorer {
    ($file:literal, $type:expr) => {
        Asset::new(
            concat!("explorer/", $file),
            $type,
            include_bytes!(concat!("../../assets/explorer/", $file)),
            false,
        )
    };
}

macro_rules! vendor {
    ($file:literal, $type:expr) => {
        Asset::new(
            concat!("vendor/", $file),
            $type,
            include_bytes!(concat!("../../assets/vendor/", $file, ".gz")),
            true,
        )
    };
}

static PAGE: Asset = explorer!("index.html", HTML);

/// The explorer's files, served under `/explorer/`.
static EXPLORER: [Asset; 15] = [
    explorer!("app.js", JS),
    explorer!("navigation.js", JS),
    explorer!("api.js", JS),
    explorer!("live.js", JS),
    explorer!("dom.js", JS),
    explorer!("format.js", JS),
    explorer!("chart.js", JS),
    explorer!("search.js", JS),
    explorer!("agent.js", JS),
    explorer!("agent_sections.js", JS),
    explorer!("masumi.js", JS),
    explorer!("ecosystem.js", JS),
    explorer!("style.css", CSS),
    explorer!("icon.svg", SVG),
    explorer!("graphiql.js", JS),
];

/// GraphiQL's page (answered by `GET /graphql` without a query).
pub(crate) static GRAPHIQL_PAGE: &str = include_str!("../../assets/explorer/graphiql.html");

/// The third-party builds, served under `/vendor/`.
static VENDOR: [Asset; 5] = [
    vendor!("react.production.min.js", JS),
    vendor!("react-dom.production.min.js", JS),
    vendor!("graphiql.min.js", JS),
    vendor!("graphiql.min.css", CSS),
    vendor!("graphql-ws.min.js", JS),
];

/// The explorer's page.
pub(crate) fn page() -> &'static Asset {
    &PAGE
}

/// The explorer's file `name`.
pub(crate) fn explorer(name: &str) -> Option<&'static Asset> {
    find(&EXPLORER, "explorer/", name)
}

/// The third-party build `name`.
pub(crate) fn vendor(name: &str) -> Option<&'static Asset> {
    find(&VENDOR, "vendor/", name)
}

fn find(assets: &'static [Asset], folder: &str, name: &str) -> Option<&'static Asset> {
    assets
        .iter()
        .find(|asset| asset.path.strip_prefix(folder) == Some(name))
}

/// Bytes the explorer's own files and GraphiQL's page add to the binary.
pub fn own_bytes() -> usize {
    PAGE.body.len() + GRAPHIQL_PAGE.len() + EXPLORER.iter().map(|a| a.body.len()).sum::<usize>()
}

/// Bytes the gzipped third-party builds add to the binary.
pub fn vendor_bytes() -> usize {
    VENDOR.iter().map(|a| a.body.len()).sum()
}

/// Each third-party build's path under `api/assets` and its bytes as the npm package ships
/// them, for the test that keeps them equal to the pinned packages.
pub fn vendor_builds() -> std::io::Result<Vec<(&'static str, Vec<u8>)>> {
    VENDOR
        .iter()
        .map(|asset| Ok((asset.path, asset.inflated()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_file_inflates_and_has_a_distinct_etag() {
        let all: Vec<&Asset> = std::iter::once(&PAGE)
            .chain(EXPLORER.iter())
            .chain(VENDOR.iter())
            .collect();
        let mut etags = std::collections::BTreeSet::new();
        for asset in &all {
            let bytes = asset
                .inflated()
                .unwrap_or_else(|e| panic!("{}: {e}", asset.path));
            assert!(!bytes.is_empty(), "{} is empty", asset.path);
            assert!(etags.insert(asset.etag()), "{} repeats an ETag", asset.path);
        }
    }

    #[test]
    fn the_explorer_and_graphiql_add_less_than_a_megabyte() {
        let total = own_bytes() + vendor_bytes();
        assert!(
            own_bytes() > 10_000 && total < 1_000_000,
            "the explorer's own files take {} bytes, the vendored builds {}",
            own_bytes(),
            vendor_bytes()
        );
    }
}
