//! `agentindex card check URL`: fetch one Agent Card or registration file, print its projection
//! and lint report as JSON, and exit non-zero when the report has errors.

use agentindex_indexer::config::{Config, DocumentsConfig};
use agentindex_indexer::documents::{Checker, Expect, Severity};
use std::path::Path;
use std::process::ExitCode;

pub(crate) async fn run(uri: &str, config_path: Option<&Path>) -> anyhow::Result<ExitCode> {
    let documents = match config_path {
        Some(path) => Config::load(path)?.documents,
        None => DocumentsConfig::default(),
    };
    let checked = Checker::from_config(&documents)?
        .check(uri, Expect::Any, None)
        .await;
    println!("{}", serde_json::to_string_pretty(&checked)?);
    let mut errors = checked
        .report
        .lints
        .iter()
        .filter(|l| l.severity == Severity::Error);
    match errors.next() {
        None => {
            eprintln!("{uri}: usable ({} findings)", checked.report.lints.len());
            Ok(ExitCode::SUCCESS)
        }
        Some(first) => {
            eprintln!(
                "{uri}: {} error(s); first: {} at {}: {}",
                errors.count() + 1,
                first.code,
                first.path,
                first.message
            );
            Ok(ExitCode::FAILURE)
        }
    }
}
