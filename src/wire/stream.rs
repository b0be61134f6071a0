//! The stream reader: walks a large message (a plane, a line) straight from a
//! [`ByteSource`] through a window, field by field, never loading it whole.

use super::{
    decode_varint, WireError, FIELD_SHIFT, FIXED32, FIXED64, LENGTH_DELIMITED, VARINT,
    WIRE_TYPE_MASK_U64,
};
use crate::error::Error;
use crate::source::{ByteSource, View};

/// The largest single message the stream reader will hold in memory at once. Events,
/// stats and metadata entries are far smaller; a larger length is a corrupt prefix.
pub const MAX_INLINE_MESSAGE: usize = 256 << 20;

/// The header of a field read from a stream: where its payload starts and how long it is.
#[derive(Debug, Clone, Copy)]
pub enum StreamValue {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    /// A length-delimited payload at `[offset, offset + len)`, not yet read.
    Bytes {
        offset: u64,
        len: u64,
    },
}

const TRUNCATED: &str = "the file ends inside a message (truncated capture)";
const TOO_LARGE: &str = "a message is larger than 256 MiB";

/// Checks a payload `[offset, offset + len)` before anything is allocated for it: no
/// larger than [`MAX_INLINE_MESSAGE`] and inside the data (which ends at `end`).
fn checked_payload_len(offset: u64, len: u64, end: u64) -> Result<usize, Error> {
    if len > MAX_INLINE_MESSAGE as u64 {
        return Err(Error::Corrupt {
            offset,
            what: TOO_LARGE,
        });
    }
    if offset.checked_add(len).is_none_or(|e| e > end) {
        return Err(Error::Corrupt {
            offset,
            what: TRUNCATED,
        });
    }
    usize::try_from(len).map_err(|_| Error::Corrupt {
        offset,
        what: TOO_LARGE,
    })
}

/// Reads `[offset, offset + len)` of `src` into a new buffer, after checking that the
/// range lies inside the file and is not larger than [`MAX_INLINE_MESSAGE`]: a
/// hostile length never becomes an allocation.
pub fn read_payload(src: &dyn ByteSource, offset: u64, len: u64) -> Result<Vec<u8>, Error> {
    let n = checked_payload_len(offset, len, src.len())?;
    let mut buf = vec![0u8; n];
    let read = src.read_at(offset, &mut buf).map_err(|e| Error::Read {
        offset,
        message: e.to_string(),
    })?;
    if read < n {
        return Err(Error::Corrupt {
            offset,
            what: TRUNCATED,
        });
    }
    Ok(buf)
}

/// How much a stream reader reads after a jump forward (see `StreamReader::ensure`).
pub(super) const JUMP_READ: usize = 4096;

/// A jump forward at most this far past the window's end goes on reading whole chunks,
/// as the walk does: a plane of many small lines (thousands of lines of a few KiB) is
/// then passed over through one window per chunk instead of one small read per line
/// or two. Mapping a page costs about what reading one does, so past this distance,
/// where most pages of a chunk would be mapped for nothing, jumps read little.
const SHORT_JUMP: u64 = 64 << 10;

/// Reads a large message from a [`ByteSource`] through a window buffer, so that
/// walking a multi-gigabyte plane touches each byte once and holds one chunk.
pub struct StreamReader<'s> {
    src: &'s dyn ByteSource,
    /// The bytes at `window_start`: seen in place where the source allows it (a mapped
    /// file, a slice), else copied into `buf`.
    view: Option<View<'s>>,
    /// The copy buffer: `filled` bytes are the window; it only grows, so refills do
    /// not zero it again.
    buf: Vec<u8>,
    filled: usize,
    window_start: u64,
    pos: u64,
    chunk: usize,
    /// Reads never go past this offset (the end of the message being walked, or of
    /// the file), so a reader over a tiny message never reads a whole chunk.
    limit: u64,
}

impl<'s> StreamReader<'s> {
    pub fn new(src: &'s dyn ByteSource, chunk: usize) -> Self {
        // Before the first walk over a capture: how this CPU packs varints best.
        super::groups::learn_cpu();
        Self {
            src,
            view: None,
            buf: Vec::new(),
            filled: 0,
            window_start: 0,
            pos: 0,
            chunk: chunk.max(16),
            limit: src.len(),
        }
    }

    /// A reader over the message at `[start, end)` only, positioned at `start`.
    pub fn over(src: &'s dyn ByteSource, chunk: usize, start: u64, end: u64) -> Self {
        let mut reader = Self::new(src, chunk);
        reader.limit = end.min(src.len());
        reader.pos = start;
        reader
    }

    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn seek(&mut self, pos: u64) {
        self.pos = pos;
    }

    fn corrupt(&self, e: WireError) -> Error {
        Error::Corrupt {
            offset: self.pos,
            what: e.describe(),
        }
    }

    /// Makes `[pos, pos + need)` available in the window, or as much as the source has
    /// before the reader's limit; returns what is available (possibly shorter).
    fn ensure(&mut self, need: usize) -> Result<&[u8], Error> {
        let window_end = self.window_start.saturating_add(self.window().len() as u64);
        let covered =
            self.pos >= self.window_start && self.pos.saturating_add(need as u64) <= window_end;
        if !covered {
            let available = self.limit.saturating_sub(self.pos);
            // Read ahead a whole chunk when the walk goes on from the window or jumps
            // a little past it (see `SHORT_JUMP`); after a longer jump (skipping a large
            // line's payload to reach the next field) read only a little, so skipping
            // over a plane's lines does not read them.
            let continues =
                self.pos >= self.window_start && self.pos <= window_end.saturating_add(SHORT_JUMP);
            let ahead = if continues || self.window().is_empty() {
                self.chunk
            } else {
                self.chunk.min(JUMP_READ)
            };
            let want = (need.max(ahead) as u64).min(available);
            // `want` is at most `need.max(chunk)`, a usize.
            let n = usize::try_from(want).unwrap_or(0);
            self.refill(n)?;
        }
        let start = usize::try_from(self.pos.saturating_sub(self.window_start)).unwrap_or(0);
        let rest = self.window().get(start..).unwrap_or_default();
        Ok(rest.get(..need.min(rest.len())).unwrap_or_default())
    }

    /// The bytes held from `window_start` on.
    pub(super) fn window(&self) -> &[u8] {
        match &self.view {
            Some(view) => view,
            None => self.buf.get(..self.filled).unwrap_or_default(),
        }
    }

    /// Makes the window the `n` bytes from `pos` (fewer at the end of the source).
    fn refill(&mut self, n: usize) -> Result<(), Error> {
        // The old window goes first: a mapped one is unmapped before the next is made.
        self.view = None;
        self.filled = 0;
        self.window_start = self.pos;
        if let Some(mut view) = self.src.view(self.pos, n) {
            // A view longer than asked for (a block's rest) ends at the reader's limit,
            // as a copied window would.
            let room = usize::try_from(self.limit.saturating_sub(self.pos)).unwrap_or(usize::MAX);
            view.clip(room);
            self.view = Some(view);
            return Ok(());
        }
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        let target = self.buf.get_mut(..n).unwrap_or_default();
        self.filled = self
            .src
            .read_at(self.pos, target)
            .map_err(|e| Error::Read {
                offset: self.pos,
                message: e.to_string(),
            })?;
        Ok(())
    }

    fn varint(&mut self, end: u64) -> Result<u64, Error> {
        let max = usize::try_from(end.saturating_sub(self.pos).min(10)).unwrap_or(10);
        let bytes = self.ensure(max)?;
        match decode_varint(bytes) {
            Ok((v, n)) => {
                self.pos = self.pos.saturating_add(n as u64);
                Ok(v)
            }
            Err(e) => Err(self.corrupt(e)),
        }
    }

    /// The next field of a message that ends at `end`, `None` at its end. A
    /// length-delimited payload is not read: call [`Self::bytes`] or skip it by seeking.
    pub fn next_field(&mut self, end: u64) -> Result<Option<(u32, StreamValue)>, Error> {
        if self.pos >= end {
            return Ok(None);
        }
        let key = self.varint(end)?;
        let field = u32::try_from(key >> FIELD_SHIFT).unwrap_or(u32::MAX);
        let value = match (key & WIRE_TYPE_MASK_U64) as u8 {
            VARINT => StreamValue::Varint(self.varint(end)?),
            FIXED64 => StreamValue::Fixed64(u64::from_le_bytes(self.fixed::<8>(end)?)),
            FIXED32 => StreamValue::Fixed32(u32::from_le_bytes(self.fixed::<4>(end)?)),
            LENGTH_DELIMITED => {
                let len = self.varint(end)?;
                let offset = self.pos;
                if len > end.saturating_sub(offset) {
                    return Err(self.corrupt(WireError::LengthPastEnd));
                }
                self.pos = offset.saturating_add(len);
                StreamValue::Bytes { offset, len }
            }
            other => return Err(self.corrupt(WireError::BadWireType(other))),
        };
        Ok(Some((field, value)))
    }

    fn fixed<const N: usize>(&mut self, end: u64) -> Result<[u8; N], Error> {
        if end.saturating_sub(self.pos) < N as u64 {
            return Err(self.corrupt(WireError::Truncated));
        }
        let bytes = self.ensure(N)?;
        let out: [u8; N] = bytes.try_into().map_err(|_| Error::Corrupt {
            offset: self.pos,
            what: WireError::Truncated.describe(),
        })?;
        self.pos = self.pos.saturating_add(N as u64);
        Ok(out)
    }

    /// Up to `max` bytes starting at `pos` (fewer at the end of the source), borrowed
    /// from the window; refills it from `pos` when needed.
    pub fn window_at(&mut self, pos: u64, max: usize) -> Result<&[u8], Error> {
        self.pos = pos;
        let window = self.ensure(max)?;
        Ok(window)
    }

    /// Reads a payload into memory (borrowed from the window until the next call).
    /// The length is checked against [`MAX_INLINE_MESSAGE`] and the end of the data
    /// before anything is allocated.
    pub fn bytes(&mut self, offset: u64, len: u64) -> Result<&[u8], Error> {
        let n = checked_payload_len(offset, len, self.limit)?;
        let saved = self.pos;
        self.pos = offset;
        // `ensure` may reload the window; read into it, then restore the cursor.
        let got = self.ensure(n).map(<[u8]>::len);
        self.pos = saved;
        if got? < n {
            return Err(Error::Corrupt {
                offset,
                what: TRUNCATED,
            });
        }
        let start = usize::try_from(offset.saturating_sub(self.window_start)).unwrap_or(0);
        start
            .checked_add(n)
            .and_then(|end| self.window().get(start..end))
            .ok_or(Error::Corrupt {
                offset,
                what: TRUNCATED,
            })
    }
}
