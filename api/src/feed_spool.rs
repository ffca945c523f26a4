//! A reputation feed written to a temporary file as it is computed, and read back from it when
//! served: a feed holds one line per agent (about 1.3 KB each, so 130 MB at 100,000 agents), far
//! more than a server should hold in memory once, let alone once per request. Its SHA-256 and
//! length are taken as the lines are written, so the headers that carry them are ready before
//! the first byte of the body is sent.
//!
//! The file never has a name (`O_TMPFILE` on Linux; elsewhere it is unlinked as it is created):
//! the system frees it when the last descriptor closes, so a server that is killed leaves
//! nothing behind in `TMPDIR`. Responses read it at their own offsets from one shared
//! descriptor, so one still streaming keeps the bytes after the cache has dropped the feed.

use axum::body::Bytes;
use futures_util::Stream;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::Arc;

/// Bytes buffered before a write to the file.
const WRITE_BUFFER: usize = 256 * 1024;

/// A feed being written.
pub(crate) struct FeedWriter {
    file: BufWriter<File>,
    hasher: Sha256,
    len: u64,
}

impl FeedWriter {
    /// A new, empty feed in the system's temporary folder (`TMPDIR`).
    pub(crate) fn create() -> io::Result<Self> {
        Self::create_in(&std::env::temp_dir())
    }

    /// A new, empty feed in `folder`, under no name.
    fn create_in(folder: &Path) -> io::Result<Self> {
        Ok(Self {
            file: BufWriter::with_capacity(WRITE_BUFFER, tempfile::tempfile_in(folder)?),
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
    pub(crate) fn finish(self) -> io::Result<Feed> {
        let file = self.file.into_inner().map_err(|e| e.into_error())?;
        Ok(Feed {
            file: Arc::new(file),
            len: self.len,
            digest: self.hasher.finalize().into(),
        })
    }
}

/// A computed feed, in its file.
#[derive(Debug)]
pub(crate) struct Feed {
    file: Arc<File>,
    /// Its length in bytes.
    pub(crate) len: u64,
    /// SHA-256 of its bytes.
    pub(crate) digest: [u8; 32],
}

impl Feed {
    /// The feed's bytes from the start, `chunk` bytes at a time (each read off the async
    /// threads). The stream holds the file open however long it is read.
    pub(crate) fn chunks(&self, chunk: usize) -> impl Stream<Item = io::Result<Bytes>> + use<> {
        let (file, len) = (Arc::clone(&self.file), self.len);
        let chunk = chunk.max(1) as u64;
        futures_util::stream::try_unfold(0u64, move |offset| {
            let file = Arc::clone(&file);
            async move {
                if offset >= len {
                    return Ok(None);
                }
                let size = chunk.min(len - offset);
                let read = tokio::task::spawn_blocking(move || {
                    let mut bytes = vec![0; usize::try_from(size).unwrap_or(usize::MAX)];
                    read_exact_at(&file, &mut bytes, offset).map(|()| bytes)
                });
                let bytes = read.await.map_err(io::Error::other)??;
                Ok(Some((Bytes::from(bytes), offset + size)))
            }
        })
    }
}

/// Fills `bytes` from `file` at `offset`, leaving any shared cursor alone where the system
/// allows it.
#[cfg(unix)]
fn read_exact_at(file: &File, bytes: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, bytes, offset)
}

/// Fills `bytes` from `file` at `offset` (Windows positions each read itself).
#[cfg(windows)]
fn read_exact_at(file: &File, mut bytes: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, bytes, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                bytes = &mut bytes[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::TryStreamExt;

    async fn read_all(feed: &Feed, chunk: usize) -> Vec<u8> {
        let chunks: Vec<Bytes> = feed.chunks(chunk).try_collect().await.unwrap();
        assert!(
            chunks.iter().all(|c| c.len() <= chunk),
            "no chunk over {chunk}"
        );
        chunks.concat()
    }

    #[tokio::test]
    async fn a_feed_reads_back_what_was_written_with_its_digest_and_leaves_no_file() {
        let folder = tempfile::tempdir().unwrap();
        let mut writer = FeedWriter::create_in(folder.path()).unwrap();
        writer.write_line(b"{\"a\":1}").unwrap();
        writer.write_line(b"{\"b\":2}").unwrap();
        let feed = writer.finish().unwrap();
        let expected = b"{\"a\":1}\n{\"b\":2}\n";
        assert_eq!(feed.len, expected.len() as u64);
        assert_eq!(feed.digest, <[u8; 32]>::from(Sha256::digest(expected)));
        // Whole, and three bytes at a time, twice at once: each reader has its own offset.
        let (whole, small) = tokio::join!(read_all(&feed, 1 << 20), read_all(&feed, 3));
        assert_eq!(whole, expected);
        assert_eq!(small, expected);
        // Nothing has a name in the folder, so a killed server leaves nothing there.
        let named = std::fs::read_dir(folder.path()).unwrap().count();
        assert_eq!(named, 0, "the feed's file has no name");

        // A stream started before the feed is dropped still reads all of it.
        let streaming = feed.chunks(4);
        drop(feed);
        let read: Vec<Bytes> = streaming.try_collect().await.unwrap();
        assert_eq!(read.concat(), expected);
    }
}
