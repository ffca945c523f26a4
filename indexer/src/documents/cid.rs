//! Checking bytes a gateway served against the IPFS CID they were asked for, so a gateway (or
//! anyone between it and us) cannot swap a content-addressed document.
//!
//! What can be checked exactly is checked: a CIDv1 whose codec stores the bytes as they are
//! (`raw` 0x55, `json` 0x0200) hashes the bytes; a `dag-pb` CID (every CIDv0, and CIDv1 0x70)
//! hashes the UnixFS node that wraps a file of one block, which is rebuilt here (every common
//! importer keeps a file of up to 256 KiB in one block). What cannot be (a file of several
//! blocks, a path inside a directory, a hash function other than sha2-256 or identity, another
//! codec) is reported as unverified, never as checked.

use sha2::{Digest, Sha256};

/// The largest file every common importer (kubo, Helia, the JS and Go UnixFS importers) keeps
/// in a single `dag-pb` block: their default chunk size. Larger files are several blocks, and
/// their root CID cannot be rebuilt from the bytes alone.
pub const SINGLE_BLOCK_MAX: usize = 256 * 1024;

/// Multicodec codes used here.
const DAG_PB: u64 = 0x70;
const RAW: u64 = 0x55;
const JSON: u64 = 0x0200;
const SHA2_256: u64 = 0x12;
const IDENTITY: u64 = 0x00;

/// Why a CID could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CID {cid}: {reason}")]
pub struct CidError {
    /// The CID as given.
    pub cid: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// A parsed content identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cid {
    /// 0 or 1.
    pub version: u8,
    /// The multicodec of the block (0x70 `dag-pb` for CIDv0).
    pub codec: u64,
    /// The multihash function code.
    pub hash: u64,
    /// The digest.
    pub digest: Vec<u8>,
}

/// What comparing bytes with a CID found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The bytes are the content the CID names.
    Matches,
    /// The bytes are not the content the CID names.
    Differs,
    /// The bytes cannot be checked against this CID; why.
    Unverifiable(String),
}

impl Cid {
    /// Reads a CIDv0 (`Qm…`, base58btc) or a CIDv1 in base32 (`b…`) or base58btc (`z…`).
    pub fn parse(text: &str) -> Result<Self, CidError> {
        let fail = |reason| CidError {
            cid: text.to_string(),
            reason,
        };
        if text.len() == 46 && text.starts_with("Qm") {
            let bytes = base58_decode(text).ok_or_else(|| fail("not base58btc"))?;
            if bytes.len() != 34 || bytes[0] != 0x12 || bytes[1] != 0x20 {
                return Err(fail("a CIDv0 is a 32-byte sha2-256 multihash"));
            }
            return Ok(Self {
                version: 0,
                codec: DAG_PB,
                hash: SHA2_256,
                digest: bytes[2..].to_vec(),
            });
        }
        let bytes = match text.as_bytes().first() {
            Some(b'b') => base32_decode(&text[1..]).ok_or_else(|| fail("not base32"))?,
            Some(b'z') => base58_decode(&text[1..]).ok_or_else(|| fail("not base58btc"))?,
            _ => return Err(fail("an unsupported multibase")),
        };
        let mut rest = bytes.as_slice();
        let version = varint(&mut rest).ok_or_else(|| fail("truncated version"))?;
        if version != 1 {
            return Err(fail("not a CIDv1"));
        }
        let codec = varint(&mut rest).ok_or_else(|| fail("truncated codec"))?;
        let hash = varint(&mut rest).ok_or_else(|| fail("truncated multihash"))?;
        let length = varint(&mut rest).ok_or_else(|| fail("truncated multihash"))?;
        if rest.len() as u64 != length {
            return Err(fail("the digest length does not match"));
        }
        Ok(Self {
            version: 1,
            codec,
            hash,
            digest: rest.to_vec(),
        })
    }

    /// Whether `bytes` are the whole content this CID names.
    pub fn verify(&self, bytes: &[u8]) -> Verdict {
        let block = match self.codec {
            RAW | JSON => bytes.to_vec(),
            DAG_PB if bytes.len() <= SINGLE_BLOCK_MAX => unixfs_file_block(bytes),
            DAG_PB => {
                return Verdict::Unverifiable(format!(
                    "a file of {} bytes is stored in several blocks, which the bytes alone cannot be checked against",
                    bytes.len()
                ));
            }
            other => {
                return Verdict::Unverifiable(format!("codec 0x{other:x} is not checked"));
            }
        };
        let same = match self.hash {
            SHA2_256 => Sha256::digest(&block)[..] == self.digest[..],
            IDENTITY => block == self.digest,
            other => {
                return Verdict::Unverifiable(format!("hash function 0x{other:x} is not checked"));
            }
        };
        if same {
            Verdict::Matches
        } else {
            Verdict::Differs
        }
    }
}

/// The `dag-pb` block of a UnixFS file held in one block: a PBNode with no links whose Data is
/// the UnixFS message `{Type: File, Data: bytes, filesize: len}` (protobuf, fields in order;
/// an empty file has no Data field, as importers write it).
fn unixfs_file_block(bytes: &[u8]) -> Vec<u8> {
    let mut unixfs = vec![0x08, 0x02];
    if !bytes.is_empty() {
        unixfs.push(0x12);
        put_varint(&mut unixfs, bytes.len() as u64);
        unixfs.extend_from_slice(bytes);
    }
    unixfs.push(0x18);
    put_varint(&mut unixfs, bytes.len() as u64);
    let mut node = vec![0x0a];
    put_varint(&mut node, unixfs.len() as u64);
    node.extend_from_slice(&unixfs);
    node
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// An unsigned LEB128 varint from the front of `bytes`, advancing past it.
fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(9) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Some(value);
        }
    }
    None
}

/// RFC 4648 base32, lower case, without padding (multibase `b`).
fn base32_decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 5 / 8);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let value = match c {
            b'a'..=b'z' => c - b'a',
            b'2'..=b'7' => c - b'2' + 26,
            _ => return None,
        };
        buffer = (buffer << 5) | u32::from(value);
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Bitcoin's base58 (multibase `z`, and CIDv0).
fn base58_decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    let mut number: Vec<u8> = Vec::new(); // big-endian base 256
    for c in text.bytes() {
        let mut carry = ALPHABET.iter().position(|&a| a == c)? as u32;
        for digit in number.iter_mut().rev() {
            carry += u32::from(*digit) * 58;
            *digit = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            number.insert(0, (carry & 0xff) as u8);
            carry >>= 8;
        }
    }
    let zeros = text.bytes().take_while(|&c| c == b'1').count();
    let mut out = vec![0; zeros];
    out.extend(number);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ipfs add` (kubo's defaults, CIDv0) of small files, from kubo's and other projects'
    /// published vectors.
    #[test]
    fn cidv0_of_single_block_files_matches_ipfs_add() {
        for (content, cid) in [
            (&b""[..], "QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH"),
            (b"hello\n", "QmZULkCELmmk5XNfCgTnCyFgAVxBRBXyDHGGMVoLFLiXEN"),
            (
                b"hello world\n",
                "QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o",
            ),
            (
                b"hello world",
                "Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD",
            ),
            (b"world\n", "QmaRGe7bVmVaLmxbrMiVNXqW4pRNNp3xq7hFtyRKA3mtJL"),
        ] {
            let cid = Cid::parse(cid).unwrap();
            assert_eq!(cid.verify(content), Verdict::Matches, "{content:?}");
            assert_eq!(cid.verify(b"something else"), Verdict::Differs);
        }
    }

    /// CIDv1 `raw` of "hello world": sha2-256 b94d27b9… of the bytes themselves.
    #[test]
    fn cidv1_raw_hashes_the_bytes() {
        let cid =
            Cid::parse("bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e").unwrap();
        assert_eq!((cid.version, cid.codec, cid.hash), (1, RAW, SHA2_256));
        assert_eq!(cid.verify(b"hello world"), Verdict::Matches);
        assert_eq!(cid.verify(b"hello world\n"), Verdict::Differs);
    }

    #[test]
    fn cidv1_dag_pb_is_the_same_node_as_cidv0() {
        // The CIDv0 of "hello world" re-encoded as CIDv1 dag-pb in base32.
        let v0 = Cid::parse("Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD").unwrap();
        let mut v1 = vec![0x01, 0x70, 0x12, 0x20];
        v1.extend_from_slice(&v0.digest);
        let text = format!("b{}", base32_encode(&v1));
        let cid = Cid::parse(&text).unwrap();
        assert_eq!(cid.codec, DAG_PB);
        assert_eq!(cid.verify(b"hello world"), Verdict::Matches);
    }

    #[test]
    fn what_cannot_be_checked_says_so() {
        let v0 = Cid::parse("QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH").unwrap();
        assert!(matches!(
            v0.verify(&vec![b'x'; SINGLE_BLOCK_MAX + 1]),
            Verdict::Unverifiable(_)
        ));
        // blake2b-256 (0xb220) over raw bytes.
        let mut blake = vec![0x01, 0x55, 0xa0, 0xe4, 0x02, 0x20];
        blake.extend([7u8; 32]);
        let cid = Cid::parse(&format!("b{}", base32_encode(&blake))).unwrap();
        assert!(matches!(cid.verify(b"x"), Verdict::Unverifiable(_)));
        // dag-cbor (0x71).
        let mut cbor = vec![0x01, 0x71, 0x12, 0x20];
        cbor.extend([7u8; 32]);
        let cid = Cid::parse(&format!("b{}", base32_encode(&cbor))).unwrap();
        assert!(matches!(cid.verify(b"x"), Verdict::Unverifiable(_)));
    }

    #[test]
    fn malformed_cids_are_refused_with_a_reason() {
        for bad in [
            "Qm0000000000000000000000000000000000000000000",
            "QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbd0",
            "bafy!",
            "xyz",
            "b",
        ] {
            assert!(Cid::parse(bad).is_err(), "{bad}");
        }
    }

    fn base32_encode(bytes: &[u8]) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
        let (mut out, mut buffer, mut bits) = (String::new(), 0u32, 0u32);
        for &byte in bytes {
            buffer = (buffer << 8) | u32::from(byte);
            bits += 8;
            while bits >= 5 {
                bits -= 5;
                out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
            }
            buffer &= (1 << bits) - 1;
        }
        if bits > 0 {
            out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
        }
        out
    }
}
