//! A reputation feed written to a temporary file as it is computed, and read back from it when
//! served: a feed holds one line per agent (about 1.3 KB each, so 130 MB at 100,000 agents), far
//! more than a server should hold in memory once, let alone once per request. Its SHA-256 and
//! length are taken as the lines are written, so the headers that carry them are ready before
//! the first byte of the body is sent. The file is deleted when the last holder of its [`Feed`]
//! drops it (a response still streaming it keeps its own open descriptor).

use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use tempfile::TempPath;

/// Bytes buffered before a write to the file.
const WRITE_BUFFER: usize = 256 * 1024;

/// A feed being written.
pub(crate) struct FeedWriter {
    file: BufWriter<File>,
    path: TempPath,
    hasher: Sha256,
    len: u64,
}

impl FeedWriter {
    /// A new, empty feed in the system's temporary folder (`TMPDIR`).
    pub(crate) fn create() -> io::Result<Self> {
        let (file, path) = tempfile::Builder::new()
            .prefix("agentindex-feed-")
            .suffix(".jsonl")
            .tempfile()?
            .into_parts();
        Ok(Self {
            file: BufWriter::with_capacity(WRITE_BUFFER, file),
            path,
            hasher: Sha256::new(),
            len: 0,
        })
    }

    /// Appends `line` and a newline.
    pub(crate) fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        for part in [line, b"\n"] {
            self.file.write_all(part)?;
            self.hasher.update(part);
            self.len += part.len() as u64;
        }
        Ok(())
    }

    /// The written feed, flushed to its file.
    pub(crate) fn finish(mut self) -> io::Result<Feed> {
        self.file.flush()?;
        Ok(Feed {
            path: self.path,
            len: self.len,
            digest: self.hasher.finalize().into(),
        })
    }
}

/// A computed feed, in its file.
#[derive(Debug)]
pub(crate) struct Feed {
    path: TempPath,
    /// Its length in bytes.
    pub(crate) len: u64,
    /// SHA-256 of its bytes.
    pub(crate) digest: [u8; 32],
}

impl Feed {
    /// The feed's bytes, to be read from the start.
    pub(crate) async fn open(&self) -> io::Result<tokio::fs::File> {
        tokio::fs::File::open(&self.path).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn a_feed_reads_back_what_was_written_with_its_digest_and_is_deleted_when_dropped() {
        let mut writer = FeedWriter::create().unwrap();
        writer.write_line(b"{\"a\":1}").unwrap();
        writer.write_line(b"{\"b\":2}").unwrap();
        let feed = writer.finish().unwrap();
        let expected = b"{\"a\":1}\n{\"b\":2}\n";
        assert_eq!(feed.len, expected.len() as u64);
        assert_eq!(feed.digest, <[u8; 32]>::from(Sha256::digest(expected)));
        let mut read = Vec::new();
        let mut file = feed.open().await.unwrap();
        file.read_to_end(&mut read).await.unwrap();
        assert_eq!(read, expected);

        // A reader that opened the file keeps it readable after the feed is dropped; the
        // name is gone at once.
        let path = feed.path.to_path_buf();
        let mut still_open = feed.open().await.unwrap();
        drop(feed);
        assert!(!path.exists(), "the file is deleted with its feed");
        let mut again = Vec::new();
        still_open.read_to_end(&mut again).await.unwrap();
        assert_eq!(again, expected);
    }
}
