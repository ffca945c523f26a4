//! A reputation feed served from the temporary file it was written to
//! ([`agentindex_indexer::feed::spool`], which takes its SHA-256 and length as the lines are
//! written, so the headers that carry them are ready before the first byte of the body is
//! sent). Responses read it at their own offsets from one shared descriptor, so one still
//! streaming keeps the bytes after the cache has dropped the feed.

use agentindex_indexer::feed::spool::Spooled;
use axum::body::Bytes;
use futures_util::Stream;
use std::fs::File;
use std::io;
use std::sync::Arc;

/// A feed being written (the indexer's, which the feed keeper writes stored feeds with too).
pub(crate) use agentindex_indexer::feed::spool::SpoolWriter as FeedWriter;

/// A computed feed, in its file.
#[derive(Debug)]
pub(crate) struct Feed {
    file: Arc<File>,
    /// Its length in bytes.
    pub(crate) len: u64,
    /// SHA-256 of its bytes.
    pub(crate) digest: [u8; 32],
}

impl From<Spooled> for Feed {
    fn from(spooled: Spooled) -> Self {
        Self {
            file: Arc::new(spooled.file),
            len: spooled.len,
            digest: spooled.digest,
        }
    }
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
    use sha2::{Digest, Sha256};

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
        let feed = Feed::from(writer.finish().unwrap());
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
