//! The profile's bytes as pprof: JAX gzips them, but raw pprof (what `gunzip` leaves)
//! is accepted too. Both are bounded by [`super::MAX_PROFILE_BYTES`] before anything is
//! decoded, so a gzip bomb stops at the limit instead of filling memory.

use std::borrow::Cow;
use std::io::{ErrorKind, Read};

use super::Fault;

/// Every gzip member starts with these two bytes (RFC 1952 §2.3.1).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The pprof bytes inside `bytes`, at most `limit` of them.
pub(super) fn pprof_bytes(bytes: &[u8], limit: u64) -> Result<Cow<'_, [u8]>, Fault> {
    if bytes.is_empty() {
        return Err(Fault::NotAProfile("the file is empty".into()));
    }
    if !bytes.starts_with(&GZIP_MAGIC) {
        return raw(bytes, limit).map(Cow::Borrowed);
    }
    gunzip(bytes, limit).map(Cow::Owned)
}

fn raw(bytes: &[u8], limit: u64) -> Result<&[u8], Fault> {
    if u64::try_from(bytes.len()).map_or(true, |n| n > limit) {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// Inflates one gzip member (JAX writes one), reading one byte past `limit` to tell
/// "exactly at the limit" from "over it".
fn gunzip(bytes: &[u8], limit: u64) -> Result<Vec<u8>, Fault> {
    let mut decoder = flate2::read::GzDecoder::new(bytes).take(limit.saturating_add(1));
    let mut out = Vec::new();
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Err(Fault::Truncated),
            Err(e) => return Err(Fault::Corrupt(format!("its gzip data is damaged ({e})"))),
        };
        let read = chunk.get(..n).unwrap_or_default();
        grow_within(&mut out, read.len(), limit);
        out.extend_from_slice(read);
    }
    if u64::try_from(out.len()).map_or(true, |n| n > limit) {
        return Err(too_large(limit));
    }
    Ok(out)
}

/// Bytes inflated per read.
const CHUNK: usize = 64 << 10;

/// Makes room for `more` bytes, doubling as a vector does but never past one byte over
/// `limit`, so a gzip bomb costs at most the limit, not the next power of two above it.
fn grow_within(out: &mut Vec<u8>, more: usize, limit: u64) {
    let needed = out.len().saturating_add(more);
    if needed <= out.capacity() {
        return;
    }
    let cap = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let target = out
        .capacity()
        .saturating_mul(2)
        .max(needed)
        .min(cap.max(needed));
    out.reserve_exact(target.saturating_sub(out.len()));
}

fn too_large(limit: u64) -> Fault {
    Fault::TooLarge(format!(
        "it holds more than {} MiB of pprof data",
        limit >> 20
    ))
}
