//! The validation report of a document: findings with a stable code, a severity, a message and
//! the JSON path they concern. Codes are part of the interface (stored, queryable, shown by
//! `card check`), so they are never renamed, only added.

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, nothing wrong.
    Info,
    /// Legal but likely to confuse clients.
    Warning,
    /// The document breaks its specification; the field it concerns is not used.
    Error,
}

impl Severity {
    /// The lower-case name stored and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lint {
    /// Stable code, e.g. `card.skill.id.missing`.
    pub code: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// What is wrong, naming the value when that helps.
    pub message: String,
    /// JSON path of the value concerned, e.g. `$.skills[2].id`.
    pub path: String,
}

/// Findings collected while reading one document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Findings in the order they were made.
    pub lints: Vec<Lint>,
}

impl Report {
    /// Records a finding.
    pub fn push(
        &mut self,
        severity: Severity,
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.lints.push(Lint {
            code,
            severity,
            message: message.into(),
            path: path.into(),
        });
    }

    /// Records an error.
    pub fn error(
        &mut self,
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Error, code, path, message);
    }

    /// Records a warning.
    pub fn warning(
        &mut self,
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Warning, code, path, message);
    }

    /// Records an informational finding.
    pub fn info(
        &mut self,
        code: &'static str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.push(Severity::Info, code, path, message);
    }

    /// Whether any finding is an error.
    pub fn has_errors(&self) -> bool {
        self.lints.iter().any(|l| l.severity == Severity::Error)
    }

    /// Whether a finding with `code` was made.
    pub fn has(&self, code: &str) -> bool {
        self.lints.iter().any(|l| l.code == code)
    }
}
