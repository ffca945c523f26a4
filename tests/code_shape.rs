//! The shape the code keeps (issue #31): no file of the repository's own code over
//! [`MAX_LINES`] lines, and no `Result<_, String>` in library code (an error is a type that
//! names what failed, not a sentence to pass along). Test code is left out of the second rule:
//! files named `tests.rs`, `*_tests.rs` or `*_test.rs`, and whatever follows a `#[cfg(test)]`
//! line.

use std::path::{Path, PathBuf};

/// The longest a file may be.
const MAX_LINES: usize = 500;

/// The folders holding the repository's own code, and the extensions of its files there.
const CODE_FOLDERS: &[&str] = &[
    "src",
    "indexer/src",
    "api/src",
    "emulator/src",
    "contracts/bindings/src",
    "contracts/src",
    "tests",
    "examples",
    "scripts",
];
const CODE_EXTENSIONS: &[&str] = &["rs", "js", "sh", "py", "sol"];
/// Folders of code copied from elsewhere (vendored), which are not ours to split.
const NOT_OURS: &[&str] = &["vendor", "node_modules", "lib"];

/// The crates' source folders, where the `Result<_, String>` rule holds.
const LIBRARY_FOLDERS: &[&str] = &[
    "src",
    "indexer/src",
    "api/src",
    "emulator/src",
    "contracts/bindings/src",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `folder` with one of `extensions`, outside vendored folders.
fn files(folder: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !NOT_OURS.contains(&name.as_str()) {
                found.extend(files(&path, extensions));
            }
        } else if path
            .extension()
            .is_some_and(|e| extensions.iter().any(|x| e == *x))
        {
            found.push(path);
        }
    }
    found
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Files of `text` longer than [`MAX_LINES`]: their line counts.
fn too_long(text: &str) -> Option<usize> {
    let lines = text.lines().count();
    (lines > MAX_LINES).then_some(lines)
}

#[test]
fn no_file_is_longer_than_the_limit() {
    let mut long = Vec::new();
    for folder in CODE_FOLDERS {
        for path in files(&root().join(folder), CODE_EXTENSIONS) {
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            if let Some(lines) = too_long(&text) {
                long.push(format!("{} ({lines} lines)", relative(&path)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines (split each by job): {long:#?}"
    );
}

/// Whether a file is test code as a whole.
fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| n == "tests.rs" || n.ends_with("_tests.rs") || n.ends_with("_test.rs"))
}

/// The lines of library code in `text` (up to its first `#[cfg(test)]`) that return a
/// `Result` whose error is a bare `String`, with their line numbers.
fn string_errors(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    // A signature may wrap, so each line is read with the one after it.
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        if line.trim_start().starts_with("//") {
            continue;
        }
        let joined = match lines.get(n + 1) {
            Some(next) if !line.contains(';') => format!("{line} {}", next.trim()),
            _ => (*line).to_string(),
        };
        if let Some(at) = line.find("Result<")
            && returns_string_error(&joined[at..])
        {
            found.push((n + 1, line.trim().to_string()));
        }
    }
    found
}

/// Whether the generic arguments opening `text` (which starts at `Result<`) end in `String`
/// as the second argument.
fn returns_string_error(text: &str) -> bool {
    let inner = &text["Result<".len()..];
    let (mut depth, mut last_comma) = (0usize, None);
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            '>' if depth == 0 => {
                return last_comma.is_some_and(|at: usize| inner[at + 1..i].trim() == "String");
            }
            '>' => depth -= 1,
            ',' if depth == 0 => last_comma = Some(i),
            _ => {}
        }
    }
    false
}

#[test]
fn library_code_returns_no_string_errors() {
    let mut found = Vec::new();
    for folder in LIBRARY_FOLDERS {
        for path in files(&root().join(folder), &["rs"]) {
            if is_test_file(&path) {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a readable source file");
            for (line, code) in string_errors(&text) {
                found.push(format!("{}:{line}: {code}", relative(&path)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "Result<_, String> in library code (give the error a type): {found:#?}"
    );
}

#[test]
fn the_rules_tell_what_they_look_for() {
    assert!(returns_string_error("Result<u64, String>"));
    assert!(returns_string_error("Result<Option<String>, String> {"));
    assert!(!returns_string_error("Result<BTreeMap<Address, String>>"));
    assert!(!returns_string_error(
        "Result<HashMap<String, String>, Error>"
    ));
    assert!(!returns_string_error("Result<String, StoreError>"));
    let code =
        "fn a() -> Result<\n    u8, String> {}\n#[cfg(test)]\nfn b() -> Result<u8, String> {}";
    assert_eq!(string_errors(code).len(), 1);
    assert_eq!(too_long(&"x\n".repeat(MAX_LINES)), None);
    assert_eq!(too_long(&"x\n".repeat(MAX_LINES + 1)), Some(MAX_LINES + 1));
}
