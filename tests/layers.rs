//! The layers of the code point one way: each top-level module of every crate (the indexer, the
//! API, the binary, the provider emulator, the contract bindings) may import only the modules
//! listed for it in `layers/tables.rs`, which sit below it (`docs/architecture.md` draws the same
//! picture for the indexer and the API). A `use crate::…` (or a path through `crate::`, in any
//! form: groups, nested groups, groups spread over lines, items the crate root re-exports) to any
//! other module fails the test, naming the file and the import, so a change that lets `store` leak
//! into `rpc` or a domain type into `config` is caught before review. Each table lists a module
//! only after everything it may import, so the layers cannot form a cycle.
//!
//! This reads the source text rather than a compiler's graph: every path into another module starts
//! with `crate::` in this codebase (`super::` never leaves a top-level module), and the last test
//! checks that this stays true.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod tables;

use tables::{CRATES, INDEXER};

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
/// `rpc` for `src/rpc.rs`); `None` for the crate root (`lib.rs` or `main.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// The top-level modules `text` reaches through `crate::`, comments left out: `crate::store`
/// gives `store`, `crate::{feeds, http}` gives both, and so does a group spread over lines or
/// holding groups of its own (`crate::{\n    feeds::{a, b},\n    http,\n}`).
fn crate_imports(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let identifier = |c: &char| c.is_alphanumeric() || *c == '_';
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| identifier(&c)) {
            continue; // `foo_crate::` is not ours
        }
        let Some(group) = rest.strip_prefix('{') else {
            found.push(rest.chars().take_while(identifier).collect());
            continue;
        };
        // The names at the group's own depth: the first word of each comma-separated item.
        let (mut depth, mut item_start) = (0usize, true);
        for (i, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    rest = &group[i..];
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => item_start = true,
                c if item_start && identifier(&c) => {
                    found.push(group[i..].chars().take_while(identifier).collect());
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    found.retain(|name: &String| !name.is_empty());
    found
}

/// Names the crate root re-exports, each to its module, and the module it re-exports whole.
type RootExports = (BTreeMap<String, String>, Option<String>);

/// What the crate root (`lib.rs` or `main.rs` in `src`) re-exports from its modules: each name
/// a `pub use module::…` item names, to its module, and the module of a `pub use module::*`.
fn root_exports(src: &Path) -> RootExports {
    let root_file = ["lib.rs", "main.rs"]
        .iter()
        .map(|name| src.join(name))
        .find(|path| path.exists())
        .expect("a crate root");
    let text = std::fs::read_to_string(root_file).expect("a readable crate root");
    let (mut names, mut glob) = (BTreeMap::new(), None);
    for item in text.split(';') {
        let Some(path) = item.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, rest)) = path.split_once("::") else {
            continue;
        };
        if rest.trim() == "*" {
            glob = Some(module.to_string());
        }
        for name in rest.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if !name.is_empty() {
                names.insert(name.to_string(), module.to_string());
            }
        }
    }
    (names, glob)
}

/// Every import in the crate at `src` that its layer table does not allow, as "file: module".
/// A name reached through `crate::` counts as the module it comes from: itself when it is a
/// module, else the module the root re-exports it from; items the root defines itself are not
/// counted (the root sits above every module).
fn violations(src: &str, layers: &[(&str, &[&str])]) -> Vec<String> {
    let src = root().join(src);
    let allowed: BTreeMap<&str, &[&str]> = layers.iter().copied().collect();
    let (exports, glob) = root_exports(&src);
    let modules: Vec<String> = sources(&src)
        .iter()
        .filter_map(|file| module_of(&src, file))
        .collect();
    let module_named = |name: &str| -> Option<String> {
        if modules.iter().any(|m| m == name) {
            return Some(name.to_string());
        }
        exports.get(name).cloned().or_else(|| {
            let item = name.starts_with(|c: char| c.is_uppercase());
            glob.clone().filter(|_| item)
        })
    };
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
            let Some(from) = module_named(&import) else {
                continue;
            };
            if from != module && !may.contains(&from.as_str()) {
                wrong.push(format!(
                    "{shown}: `{module}` imports `crate::{import}` (of `{from}`)"
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

#[test]
fn every_crates_modules_import_only_the_layers_below_them() {
    let wrong: Vec<String> = CRATES
        .iter()
        .flat_map(|(src, layers)| violations(src, layers))
        .collect();
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// Each table lists a module before every module that may import it, so no module may import
/// one that may import it back: the layers cannot form a cycle.
#[test]
fn every_layer_table_points_one_way() {
    for (src, layers) in CRATES {
        for (at, (module, may)) in layers.iter().enumerate() {
            for below in *may {
                let place = layers.iter().position(|(name, _)| name == below);
                assert!(
                    place.is_some_and(|place| place < at),
                    "{src}: `{module}` may import `{below}`, which is not listed below it"
                );
            }
        }
    }
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
    let spread = "use crate::{\n    feeds::{spool, Feed},\n    http, // crate::engine\n    \
                  store::{a::{b, c}, d},\n};\nuse crate::rpc;";
    assert_eq!(crate_imports(spread), ["feeds", "http", "store", "rpc"]);
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
    for (src, layers) in CRATES {
        let src = root().join(src);
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
