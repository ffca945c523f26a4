//! A feed written to a temporary file as it is computed: a feed holds one line per agent (about
//! 2.5 KB each, so 250 MB at 100,000 agents), far more than should be held in memory. Its
//! length, lines and SHA-256 are taken as the lines are written.
//!
//! The file never has a name (`O_TMPFILE` on Linux; elsewhere it is unlinked as it is created):
//! the system frees it when the last descriptor closes, so a process that is killed leaves
//! nothing behind in `TMPDIR`.

use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Bytes buffered before a write to the file.
const WRITE_BUFFER: usize = 256 * 1024;

/// A feed being written.
pub struct SpoolWriter {
    file: BufWriter<File>,
    hasher: Sha256,
    len: u64,
    lines: u64,
}

/// A feed written whole, in its file (read it from offset 0).
#[derive(Debug)]
pub struct Spooled {
    /// The file.
    pub file: File,
    /// Its length in bytes.
    pub len: u64,
    /// Its lines.
    pub lines: u64,
    /// SHA-256 of its bytes.
    pub digest: [u8; 32],
}

impl Spooled {
    /// The digest in lowercase hex.
    pub fn sha256_hex(&self) -> String {
        hex(&self.digest)
    }
}

/// A digest in lowercase hex.
fn hex(digest: &[u8; 32]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl SpoolWriter {
    /// A new, empty feed in the system's temporary folder (`TMPDIR`).
    pub fn create() -> io::Result<Self> {
        Self::create_in(&std::env::temp_dir())
    }

    /// A new, empty feed in `folder`, under no name.
    pub fn create_in(folder: &Path) -> io::Result<Self> {
        Ok(Self {
            file: BufWriter::with_capacity(WRITE_BUFFER, tempfile::tempfile_in(folder)?),
            hasher: Sha256::new(),
            len: 0,
            lines: 0,
        })
    }

    /// Appends `line` and a newline.
    pub fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        for part in [line, b"\n"] {
            self.file.write_all(part)?;
            self.hasher.update(part);
            self.len += part.len() as u64;
        }
        self.lines += 1;
        Ok(())
    }

    /// Appends `lines`, whole lines each ending in a newline (a stored feed's page).
    pub fn write_lines(&mut self, lines: &[u8]) -> io::Result<()> {
        self.file.write_all(lines)?;
        self.hasher.update(lines);
        self.len += lines.len() as u64;
        self.lines += lines.iter().filter(|&&b| b == b'\n').count() as u64;
        Ok(())
    }

    /// The length so far, in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The SHA-256 of what was written so far, in lowercase hex.
    pub fn sha256_hex(&self) -> String {
        hex(&self.hasher.clone().finalize().into())
    }

    /// The written feed, flushed to its file.
    pub fn finish(self) -> io::Result<Spooled> {
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        Ok(Spooled {
            file,
            len: self.len,
            lines: self.lines,
            digest: self.hasher.finalize().into(),
        })
    }
}
