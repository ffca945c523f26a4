//! No two files import each other. Within a crate, a file that reaches into another (through
//! `crate::`, `super::`, `self::` or a child module's name, in a `use` or inline, groups
//! included) depends on it; two files that depend on each other are one piece split in two,
//! and the shared part belongs in a third file both import. A module and its own ancestors are
//! left out (a parent declares and re-exports its children, which use what it defines), and so
//! are test modules. `PENDING` lists the pairs still to untangle; a pair not listed fails the
//! test, and so does a listed pair that is gone (strike it off).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates' source folders.
const CRATES: &[&str] = &[
    "indexer/src",
    "api/src",
    "src",
    "emulator/src",
    "contracts/bindings/src",
];

/// Pairs of files that still import each other, to be untangled (issue #31): none left.
const PENDING: &[(&str, &str)] = &[];

/// A module's path in its crate: `["store", "agents"]` for `store/agents/mod.rs` or
/// `store/agents.rs`, empty for the crate root.
type ModulePath = Vec<String>;

/// Every non-test source file of the crate at `src`, by module path.
fn modules(root: &Path, src: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut found = BTreeMap::new();
    let mut folders = vec![src.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if stem.ends_with("tests") || stem.ends_with("_test") {
                continue;
            }
            let relative = path.parent().unwrap().strip_prefix(src).unwrap();
            let mut module: ModulePath = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if !matches!(stem, "mod" | "lib" | "main") {
                module.push(stem.to_string());
            }
            found.insert(module, path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
    found
}

/// `text` without comments and without what follows its first `#[cfg(test)]` (the test module
/// ends a file in this codebase).
fn code_of(text: &str) -> String {
    let before_tests = text.split("#[cfg(test)]").next().unwrap_or_default();
    before_tests
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn is_identifier(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths written from `at` on (`a::b::{c, d::e}` gives `a b c` and `a b d e`), each as
/// its segments, and where they end.
fn paths_at(code: &str, mut at: usize) -> (Vec<Vec<String>>, usize) {
    let mut segments = Vec::new();
    loop {
        let rest = &code[at..];
        let skipped = rest.len() - rest.trim_start().len();
        let word: String = rest
            .trim_start()
            .chars()
            .take_while(|c| is_identifier(*c))
            .collect();
        if word.is_empty() {
            return (vec![segments], at);
        }
        segments.push(word.clone());
        at += skipped + word.len();
        if !code[at..].starts_with("::") {
            return (vec![segments], at);
        }
        at += 2;
        let rest = &code[at..];
        if !rest.trim_start().starts_with('{') {
            continue;
        }
        at += rest.find('{').unwrap() + 1;
        let mut all = Vec::new();
        loop {
            let (inner, end) = paths_at(code, at);
            all.extend(inner.into_iter().map(|tail| {
                let mut path = segments.clone();
                path.extend(tail);
                path
            }));
            let rest = &code[end..];
            let trimmed = rest.trim_start();
            at = end + (rest.len() - trimmed.len()) + 1;
            match trimmed.chars().next() {
                Some(',') if code[at..].trim_start().starts_with('}') => {
                    let rest = &code[at..];
                    return (all, at + rest.find('}').unwrap() + 1);
                }
                Some(',') => continue,
                _ => return (all, at),
            }
        }
    }
}

/// The files `module` (whose code is `code`) reaches into.
fn reached(
    module: &ModulePath,
    code: &str,
    files: &BTreeMap<ModulePath, PathBuf>,
) -> BTreeSet<ModulePath> {
    let mut found = BTreeSet::new();
    for (at, _) in code.match_indices("::") {
        // The start of the path this `::` belongs to, if it is the path's first `::`.
        let start = code[..at]
            .rfind(|c: char| !is_identifier(c))
            .map_or(0, |i| i + 1);
        let before = &code[..start];
        if before.ends_with("::") || start == at {
            continue;
        }
        let (paths, _) = paths_at(code, start);
        for path in paths.into_iter().filter(|p| !p.is_empty()) {
            let (mut base, rest): (ModulePath, &[String]) = match path[0].as_str() {
                "crate" => (Vec::new(), &path[1..]),
                "super" | "self" => {
                    let mut base = module.clone();
                    let climbs = path.iter().take_while(|s| *s == "super" || *s == "self");
                    for segment in climbs.clone() {
                        if segment == "super" {
                            base.pop();
                        }
                    }
                    let skip = climbs.count();
                    (base, &path[skip..])
                }
                _ => {
                    let mut child = module.clone();
                    child.push(path[0].clone());
                    if !files.contains_key(&child) {
                        continue;
                    }
                    (module.clone(), &path[..])
                }
            };
            let mut target = None;
            for segment in rest {
                base.push(segment.clone());
                if !files.contains_key(&base) {
                    break;
                }
                target = Some(base.clone());
            }
            if let Some(target) = target.filter(|t| t != module) {
                found.insert(target);
            }
        }
    }
    found
}

/// Every pair of files of the crate at `src` that reach into each other, neither an ancestor
/// of the other, as repository paths (the lesser first).
fn cycles(root: &Path, src: &str) -> Vec<(String, String)> {
    let files = modules(root, &root.join(src));
    let mut edges: BTreeMap<&ModulePath, BTreeSet<ModulePath>> = BTreeMap::new();
    for (module, path) in &files {
        let code = code_of(&std::fs::read_to_string(root.join(path)).unwrap());
        edges.insert(module, reached(module, &code, &files));
    }
    let mut found = Vec::new();
    for (a, targets) in &edges {
        for b in targets {
            let ancestor = b.starts_with(a) || a.starts_with(b);
            if *a < b && !ancestor && edges.get(b).is_some_and(|back| back.contains(*a)) {
                let show = |m: &ModulePath| files[m].display().to_string();
                found.push((show(a), show(b)));
            }
        }
    }
    found
}

#[test]
fn no_two_files_import_each_other() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut found: Vec<(String, String)> =
        CRATES.iter().flat_map(|src| cycles(&root, src)).collect();
    found.sort();
    let pending: Vec<(String, String)> = PENDING
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let new: Vec<_> = found.iter().filter(|p| !pending.contains(p)).collect();
    let gone: Vec<_> = pending.iter().filter(|p| !found.contains(p)).collect();
    assert!(
        new.is_empty() && gone.is_empty(),
        "files importing each other: {new:#?}\nlisted but untangled (strike off): {gone:#?}"
    );
}

#[test]
fn the_scanner_follows_every_kind_of_path() {
    let module = |p: &str| -> ModulePath {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    };
    let files: BTreeMap<ModulePath, PathBuf> = ["", "a", "a/b", "a/c", "a/c/d", "e"]
        .iter()
        .map(|p| (module(p), PathBuf::from(format!("{p}.rs"))))
        .collect();
    let code = code_of(
        "use super::{c::{d, X}, Y};\nuse crate::e;\nfn f() { self::g(); }\n\
         // use crate::a::c;\n#[cfg(test)]\nmod tests { use crate::e::Z; }",
    );
    let got = reached(&module("a/b"), &code, &files);
    assert_eq!(got, [module("a/c"), module("a/c/d"), module("e")].into());
    let from_parent = reached(&module("a"), "pub use b::Thing; c::run();", &files);
    assert_eq!(from_parent, [module("a/b"), module("a/c")].into());
}
