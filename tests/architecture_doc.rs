//! `docs/architecture.md` names files and folders as it draws the code; each must exist, so the
//! map cannot drift from the territory unnoticed (it once sent readers to a `store/writer.rs`
//! that held something else). A path with a folder is read from the repository's root or from
//! the source root of a crate or the explorer, as the document abbreviates it; a bare file
//! name must be some source file's.

use std::path::{Path, PathBuf};

/// Where the document's abbreviated paths start.
const ROOTS: &[&str] = &[
    "",
    "indexer",
    "indexer/src",
    "api/src",
    "api/assets/explorer",
    "contracts",
];

/// Folders a bare file name is looked for in.
const SOURCES: &[&str] = &[
    "indexer/src",
    "api/src",
    "api/assets",
    "contracts",
    "emulator",
    "src",
    "tests",
];

/// The code spans of `text` that name a file or folder: a span with a `/`, or ending in a
/// source file's extension, that is not a URL, a route or a template.
fn named_paths(text: &str) -> Vec<&str> {
    let extensions = [".rs", ".js", ".md", ".sql", ".toml", ".sh"];
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| !span.contains(char::is_whitespace) && !span.is_empty())
        .filter(|span| span.contains('/') || extensions.iter().any(|e| span.ends_with(e)))
        .filter(|span| !span.starts_with('/') && !span.contains("://") && !span.contains('{'))
        .map(|span| span.split(':').next().unwrap_or(span))
        .collect()
}

fn exists_somewhere_under(folder: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if path.is_dir() {
            exists_somewhere_under(&path, name)
        } else {
            path.file_name().is_some_and(|n| n == name)
        }
    })
}

fn exists(root: &Path, named: &str) -> bool {
    if named.contains('/') {
        ROOTS.iter().any(|r| root.join(r).join(named).exists())
    } else {
        SOURCES
            .iter()
            .any(|folder| exists_somewhere_under(&root.join(folder), named))
    }
}

#[test]
fn every_path_the_architecture_names_exists() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let named = named_paths(&text);
    assert!(named.len() > 40, "read the document's paths: {named:?}");
    let missing: Vec<&str> = named.into_iter().filter(|p| !exists(&root, p)).collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names what does not exist: {missing:?}"
    );
    // The check itself tells a missing path from a present one.
    assert!(!exists(&root, "indexer/src/store/no_such_file.rs"));
    assert!(!exists(&root, "no_such_file.rs"));
    assert!(exists(&root, "store/sql_writer.rs"));
}
