//! The repository stands alone: someone who clones it from its public home has nothing beside
//! it, so no file may read from, or send a reader to, anything outside it.
//!
//! CI clones the repository with a folder of shared material beside it, so a test that quietly
//! read from there would pass in CI and fail for everyone else (one did, until its facts were
//! copied into `contracts/reference/`). These checks read every tracked file: no path climbs
//! into the sibling folder, and every Markdown document a file names exists in the repository.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every tracked file, as paths relative to the root, with its text (binary files skipped).
fn tracked_texts() -> Vec<(String, String)> {
    let listing = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root())
        .output()
        .expect("git lists the repository's files");
    assert!(listing.status.success(), "git ls-files failed");
    listing
        .stdout
        .split(|b| *b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .filter(|name| root().join(name).is_file())
        .filter_map(|name| {
            let text = std::fs::read_to_string(root().join(&name)).ok()?;
            Some((name, text))
        })
        .collect()
}

/// Names in `text` that end in `.md` and are not part of a URL.
fn markdown_mentions(text: &str) -> Vec<String> {
    let is_path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut found = Vec::new();
    for (at, _) in text.match_indices(".md") {
        let after = text[at + 3..].chars().next();
        if after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_path_char(*c))
            .last()
            .map_or(at, |(i, _)| i);
        let mention = text[start..at + 3].trim_start_matches('-');
        let in_url = text[..start].ends_with(':') || mention.starts_with("//");
        if !in_url && mention.len() > 3 {
            found.push(mention.to_string());
        }
    }
    found
}

#[test]
fn no_file_reads_or_points_outside_the_repository() {
    let sibling = ["../", "shared/"].concat();
    let mut wrong = Vec::new();
    for (name, text) in tracked_texts() {
        if name == "tests/standalone.rs" {
            continue;
        }
        for (number, line) in text.lines().enumerate() {
            if line.contains(&sibling) {
                wrong.push(format!("{name}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "lines reaching beside the clone:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_markdown_document_a_file_names_is_in_the_repository() {
    let files = tracked_texts();
    let names: Vec<&str> = files.iter().map(|(name, _)| name.as_str()).collect();
    let exists = |from: &str, mention: &str| {
        let beside = Path::new(from)
            .parent()
            .unwrap_or(Path::new(""))
            .join(mention);
        names.iter().any(|name| {
            *name == mention || Path::new(name) == beside || name.ends_with(&format!("/{mention}"))
        })
    };
    let mut missing = Vec::new();
    for (name, text) in &files {
        // Fixtures quote documents from the wild, links and all; this file's own examples name
        // documents that must not exist.
        if name.ends_with(".json") || name == "tests/standalone.rs" {
            continue;
        }
        for mention in markdown_mentions(text) {
            if !exists(name, &mention) {
                missing.push(format!(
                    "{name}: names `{mention}`, which is not in the repository"
                ));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_checks_see_what_they_look_for() {
    assert_eq!(
        markdown_mentions("see `DESIGN.md` and docs/reputation.md, not https://x.io/SKILL.md"),
        ["DESIGN.md", "docs/reputation.md"]
    );
    assert_eq!(
        markdown_mentions("a.mdx and .md alone"),
        Vec::<String>::new()
    );
    assert!(
        tracked_texts()
            .iter()
            .any(|(name, _)| name == "docs/architecture.md"),
        "the architecture document is tracked"
    );
}
