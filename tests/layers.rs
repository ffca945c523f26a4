//! The layers of the code point one way: each top-level module of the indexer and the API may
//! import only the modules listed for it here, which sit below it (`docs/architecture.md` draws
//! the same picture). A `use crate::…` (or a path through `crate::`) to any other module fails
//! the test, naming the file and the import, so a change that lets `store` leak into `rpc` or a
//! domain type into `config` is caught before review.
//!
//! This reads the source text rather than a compiler's graph: every path into another module
//! starts with `crate::` in this codebase (`super::` never leaves a top-level module), and the
//! last test checks that this stays true.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Indexer modules, bottom first, with what each may import.
const INDEXER: &[(&str, &[&str])] = &[
    ("primitives", &[]),
    ("metrics", &[]),
    ("redact", &[]),
    ("priority", &[]),
    ("config", &["primitives", "redact"]),
    ("sources", &["primitives"]),
    ("rpc", &["primitives", "metrics", "redact", "config"]),
    ("documents", &["primitives", "metrics", "redact", "config"]),
    ("reputation", &["primitives", "config", "priority"]),
    ("agents", &["primitives", "sources"]),
    (
        "store",
        &[
            "primitives",
            "metrics",
            "redact",
            "config",
            "sources",
            "documents",
            "reputation",
            "agents",
            "priority",
        ],
    ),
    (
        "follower",
        &[
            "primitives",
            "metrics",
            "redact",
            "config",
            "sources",
            "rpc",
            "reputation",
            "agents",
            "store",
        ],
    ),
    (
        "feed",
        &["primitives", "config", "reputation", "store", "priority"],
    ),
    (
        "engine",
        &[
            "primitives",
            "metrics",
            "redact",
            "config",
            "sources",
            "rpc",
            "documents",
            "reputation",
            "agents",
            "store",
            "follower",
            "feed",
        ],
    ),
];

/// API modules, bottom first, with what each may import.
const API: &[(&str, &[&str])] = &[
    ("lru", &[]),
    ("budget", &[]),
    ("cache_key", &[]),
    ("client_error", &[]),
    ("low_priority_lane", &[]),
    ("cache", &["cache_key", "lru", "low_priority_lane"]),
    ("metrics", &[]),
    ("read", &[]),
    ("row_budget", &[]),
    ("explorer", &[]),
    ("client", &[]),
    ("time_share", &["client"]),
    ("connections", &["client"]),
    (
        "limits",
        &["metrics", "client", "time_share", "low_priority_lane"],
    ),
    ("changes", &["read"]),
    ("facet_cache", &["cache", "read", "lru"]),
    ("feed_spool", &[]),
    (
        "feed_cache",
        &["lru", "client_error", "client", "feed_spool"],
    ),
    (
        "state",
        &["cache", "changes", "metrics", "facet_cache", "feed_cache"],
    ),
    (
        "feeds",
        &[
            "state",
            "client_error",
            "feed_cache",
            "feed_spool",
            "client",
        ],
    ),
    (
        "graphql",
        &[
            "read",
            "state",
            "changes",
            "cache",
            "metrics",
            "facet_cache",
            "client_error",
            "budget",
            "row_budget",
            "time_share",
        ],
    ),
    (
        "http",
        &[
            "graphql",
            "state",
            "metrics",
            "limits",
            "explorer",
            "cache_key",
            "client_error",
            "row_budget",
        ],
    ),
    (
        "subgraph",
        &[
            "read",
            "metrics",
            "state",
            "http",
            "cache_key",
            "client_error",
            "budget",
            "graphql",
            "row_budget",
        ],
    ),
    (
        "websocket",
        &["client", "connections", "graphql", "time_share"],
    ),
    (
        "server",
        &[
            "graphql",
            "state",
            "feeds",
            "http",
            "subgraph",
            "limits",
            "metrics",
            "explorer",
            "connections",
            "websocket",
            "time_share",
            "low_priority_lane",
        ],
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The top-level module a file of `src` belongs to (`store` for `src/store/facts/mod.rs`,
/// `rpc` for `src/rpc.rs`); `None` for the crate root.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// The top-level modules `text` reaches through `crate::`, comments left out: `crate::store`
/// gives `store`, `crate::{feeds, http}` gives both.
fn crate_imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().last();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `agentindex_indexer::crate…` never happens; `foo_crate::` is not ours
            }
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or_default();
                for item in group.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.push(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push(name);
            }
        }
    }
    found
}

/// Every import in `crate_dir/src` that its layer table does not allow, as "file: module".
fn violations(crate_dir: &str, layers: &[(&str, &[&str])]) -> Vec<String> {
    let src = root().join(crate_dir).join("src");
    let allowed: BTreeMap<&str, &[&str]> = layers.iter().copied().collect();
    let mut wrong = Vec::new();
    for file in sources(&src) {
        let Some(module) = module_of(&src, &file) else {
            continue;
        };
        let shown = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        let Some(may) = allowed.get(module.as_str()) else {
            wrong.push(format!(
                "{shown}: module `{module}` has no place in the layer table"
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        for import in crate_imports(&text) {
            if import != module && !may.contains(&import.as_str()) {
                wrong.push(format!("{shown}: `{module}` imports `crate::{import}`"));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

#[test]
fn indexer_modules_import_only_the_layers_below_them() {
    let wrong = violations("indexer", INDEXER);
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn api_modules_import_only_the_layers_below_them() {
    let wrong = violations("api", API);
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_rules_the_issue_names_are_in_the_table() {
    let may = |module: &str| {
        INDEXER
            .iter()
            .find(|(name, _)| *name == module)
            .map(|(_, may)| *may)
            .expect("a module of the table")
    };
    for module in [
        "documents",
        "rpc",
        "config",
        "reputation",
        "sources",
        "primitives",
    ] {
        assert!(
            !may(module).contains(&"store"),
            "{module} may not import store"
        );
    }
    for domain in [
        "documents",
        "reputation",
        "sources",
        "rpc",
        "store",
        "follower",
        "engine",
    ] {
        assert!(
            !may("config").contains(&domain),
            "config may not import {domain}"
        );
    }
    assert!(may("primitives").is_empty());
}

#[test]
fn the_scanner_sees_imports_in_every_form() {
    let text = "use crate::store::Store;\n\
                use crate::{feeds, http::Router};\n\
                let x = crate::rpc::call(); // crate::engine in a comment\n\
                pub(crate) use foo_crate::thing;";
    assert_eq!(crate_imports(text), ["store", "feeds", "http", "rpc"]);
    let wrong = {
        let layers: &[(&str, &[&str])] = &[("rpc", &[])];
        let allowed: BTreeMap<&str, &[&str]> = layers.iter().copied().collect();
        crate_imports("use crate::store::BlockRef;")
            .into_iter()
            .filter(|import| !allowed["rpc"].contains(&import.as_str()))
            .collect::<Vec<_>>()
    };
    assert_eq!(wrong, ["store"], "an upward import is found");
}

#[test]
fn no_module_reaches_another_through_super() {
    // A chain of `super::` as long as a file's depth under src (1 for src/a.rs, 2 for
    // src/a/b.rs) reaches the crate root, or just below it from a nested `mod tests`; the
    // name after it must then not be another top-level module, or the scan above would miss it.
    for (crate_dir, layers) in [("indexer", INDEXER), ("api", API)] {
        let src = root().join(crate_dir).join("src");
        for file in sources(&src) {
            let Some(own) = module_of(&src, &file) else {
                continue;
            };
            let depth = file
                .strip_prefix(&src)
                .expect("under src")
                .components()
                .count();
            let text = std::fs::read_to_string(&file).expect("a readable source file");
            let climb = "super::".repeat(depth);
            for line in text.lines() {
                let code = line.split("//").next().unwrap_or_default();
                for (at, _) in code.match_indices(&climb) {
                    let name: String = code[at + climb.len()..]
                        .trim_start_matches("super::")
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let other = layers.iter().any(|(m, _)| *m == name && *m != own);
                    assert!(
                        !other,
                        "{}: `{}` reaches `{name}` through super",
                        file.display(),
                        code.trim()
                    );
                }
            }
        }
    }
}
