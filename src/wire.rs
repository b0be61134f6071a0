//! Protobuf wire-format reading without allocation: a slice reader for small messages
//! (an event, a stat) and a buffered stream reader for the big ones (a plane, a line),
//! which are walked field by field and never loaded whole.
//!
//! Everything here reads bytes from the file, so nothing here may panic or trust a
//! length: lengths are checked against the enclosing message and the file before
//! anything is allocated, and arithmetic on offsets saturates.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

pub mod fields;
mod groups;
mod stream;

use groups::pack_groups;
pub use stream::{read_payload, StreamReader, StreamValue, MAX_INLINE_MESSAGE};

/// How a field's value is encoded: the low three bits of its key. (Wire types 3 and 4,
/// the deprecated groups, are not read: a field that has one is corrupt for us.)
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum WireType {
    /// int32, int64, uint32, uint64, bool, enum: a varint.
    Varint = 0,
    /// double, fixed64: eight bytes, little-endian.
    Fixed64 = 1,
    /// string, bytes, an embedded message, a packed repeated field: a varint length,
    /// then that many bytes.
    LengthDelimited = 2,
    /// float, fixed32: four bytes, little-endian.
    Fixed32 = 5,
}

/// The wire types as the low bits of a key, for `match`.
const VARINT: u8 = WireType::Varint as u8;
const FIXED64: u8 = WireType::Fixed64 as u8;
const LENGTH_DELIMITED: u8 = WireType::LengthDelimited as u8;
const FIXED32: u8 = WireType::Fixed32 as u8;
/// A key is `field_number << 3 | wire_type`.
const FIELD_SHIFT: u32 = 3;
const WIRE_TYPE_MASK: u8 = 7;
/// [`WIRE_TYPE_MASK`] for a key decoded as a whole varint.
const WIRE_TYPE_MASK_U64: u64 = WIRE_TYPE_MASK as u64;

/// The one-byte key of field `field` with wire type `wire_type`, as it starts the
/// field on the wire: `field << 3 | wire_type`. Field numbers 1 to 15 have one-byte
/// keys, which is what the fast paths compare bytes against; a larger number fails to
/// compile where a `const` is made from it. (Inline, so that it is compiled only
/// where called at run time, which the readers never do.)
#[inline]
pub const fn tag(field: u32, wire_type: WireType) -> u8 {
    assert!(
        field >= 1 && field <= 15,
        "only fields 1 to 15 have a one-byte key"
    );
    ((field as u8) << FIELD_SHIFT) | wire_type as u8
}

/// One field's value as it sits on the wire.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl Value<'_> {
    /// The value as a signed 64-bit integer, for varint fields declared int64/int32.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Value::Varint(v) => Some(v as i64),
            _ => None,
        }
    }
}

/// A malformed-wire description; turned into [`Error::Corrupt`] with an offset by callers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    Truncated,
    BadVarint,
    BadWireType(u8),
    LengthPastEnd,
}

impl WireError {
    pub fn describe(self) -> &'static str {
        match self {
            WireError::Truncated => "a field ends past the end of its message",
            WireError::BadVarint => "a varint is longer than 10 bytes",
            WireError::BadWireType(_) => "a field has an unknown wire type",
            WireError::LengthPastEnd => "a length prefix points past the end of its message",
        }
    }
}

/// A varint at the start of `buf`: (value, bytes used).
#[inline(always)]
pub(crate) fn decode_varint(buf: &[u8]) -> Result<(u64, usize), WireError> {
    // One byte (keys, ids, small numbers): a branch that each call site, once inlined,
    // predicts from its own history.
    if let Some(&b) = buf.first() {
        if b < 0x80 {
            return Ok((u64::from(b), 1));
        }
    }
    // Up to 8 bytes, read as one word without a branch per byte (their lengths vary
    // from event to event, so those branches mispredict).
    if let Some(word) = buf.first_chunk::<8>().map(|w| u64::from_le_bytes(*w)) {
        let stops = !word & 0x8080_8080_8080_8080;
        if stops != 0 {
            // The lowest clear high bit ends the varint: bit 8k+7 for k+1 bytes.
            let used = (stops.trailing_zeros() as usize).wrapping_add(1) / 8;
            let bits = (used as u32).wrapping_mul(8);
            let x = word & (u64::MAX >> 64u32.wrapping_sub(bits));
            return Ok((pack_groups(x), used));
        }
        // Nine or ten bytes (ids and hashes that use all 64 bits): the eight read, then
        // the last one or two; a tenth byte holds the top bit.
        let low = pack_groups(word);
        match buf.get(8..10) {
            Some(&[last @ 0..=0x7f, _]) => return Ok((low | u64::from(last) << 56, 9)),
            Some(&[b8, last @ 0..=0x7f]) => {
                let high = u64::from(b8 & 0x7f) << 56 | u64::from(last).wrapping_shl(63);
                return Ok((low | high, 10));
            }
            Some(_) => return Err(WireError::BadVarint),
            None => {}
        }
    }
    let mut value = 0u64;
    let mut shift = 0u32;
    let mut used = 0usize;
    for &b in buf.iter().take(10) {
        value |= u64::from(b & 0x7f).wrapping_shl(shift);
        shift = shift.saturating_add(7);
        used = used.saturating_add(1);
        if b < 0x80 {
            return Ok((value, used));
        }
    }
    if buf.len() >= 10 {
        Err(WireError::BadVarint)
    } else {
        Err(WireError::Truncated)
    }
}

/// The varint that is exactly `raw[from..from + len]`, as the general decoder reads it
/// (every byte but the last carries the continuation bit); `None` otherwise. Up to
/// eight bytes are checked and packed from one word: the word that starts with the
/// varint where eight bytes follow its start, else the word that ends with it (a stat
/// at the end of its event). The stat's frame already told the length, so no byte is
/// searched for.
#[inline(always)]
pub(crate) fn varint_at(raw: &[u8], from: usize, len: usize) -> Option<u64> {
    // One byte (zeros, small counts): a branch each call site predicts on its own.
    if len == 1 {
        return raw.get(from).filter(|&&b| b < 0x80).map(|&b| u64::from(b));
    }
    if (2..=8).contains(&len) {
        let bits = (len as u32).wrapping_mul(8);
        let word = match raw.get(from..).and_then(|b| b.first_chunk::<8>()) {
            Some(word) => Some(u64::from_le_bytes(*word)),
            None => from
                .checked_add(len)
                .and_then(|end| raw.get(end.checked_sub(8)?..end)?.first_chunk::<8>())
                .map(|word| u64::from_le_bytes(*word) >> 64u32.wrapping_sub(bits)),
        };
        if let Some(word) = word {
            let mask = u64::MAX >> 64u32.wrapping_sub(bits);
            let continues = word & mask & 0x8080_8080_8080_8080;
            return (continues == (mask >> 8) & 0x8080_8080_8080_8080)
                .then(|| pack_groups(word & mask));
        }
    }
    let (&last, init) = raw.get(from..)?.get(..len)?.split_last()?;
    if last >= 0x80 || init.len() > 9 {
        return None;
    }
    let mut value = 0u64;
    for (i, &b) in init.iter().enumerate() {
        if b < 0x80 {
            return None;
        }
        value |= u64::from(b & 0x7f).wrapping_shl((i as u32).wrapping_mul(7));
    }
    Some(value | u64::from(last).wrapping_shl((init.len() as u32).wrapping_mul(7)))
}

/// Appends `v` as a varint (for tests that build wire bytes by hand).
#[cfg(test)]
pub(crate) fn encode_varint(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// Iterates over the fields of one message held in memory.
pub struct Fields<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Fields<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes consumed so far (for error offsets).
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline(always)]
    fn varint(&mut self) -> Result<u64, WireError> {
        // Fast path: keys, ids and small values are one byte.
        if let Some(&b) = self.buf.get(self.pos) {
            if b < 0x80 {
                self.pos = self.pos.saturating_add(1);
                return Ok(u64::from(b));
            }
        }
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let (v, n) = decode_varint(rest)?;
        self.pos = self.pos.saturating_add(n);
        Ok(v)
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::LengthPastEnd)?;
        let out = self
            .buf
            .get(self.pos..end)
            .ok_or(WireError::LengthPastEnd)?;
        self.pos = end;
        Ok(out)
    }

    /// Passes over consecutive fields with the one-byte key `key` and a payload under
    /// 16 KiB (a length in one or two bytes) that starts with an event's metadata id
    /// in one or two bytes ([`fields::XEVENT_METADATA_ID_TAG`], then the id) for which
    /// `skip(id, payload)` holds, and reads the first such field it does not pass over (see
    /// [`Skipped`]). Stops before anything else, which [`Fields::next_field`] then
    /// reads. Real captures have hundreds of event types, so ids past 127 are as common
    /// as the others.
    #[inline(always)]
    pub fn skip_small_messages(
        &mut self,
        key: u8,
        mut skip: impl FnMut(i64, &'a [u8]) -> bool,
    ) -> Skipped<'a> {
        let mut skipped = Skipped {
            last: None,
            kept: None,
        };
        while let Some((len, tail)) = self.small_message_at(key) {
            let payload = tail.get(..len);
            let id = match payload {
                Some([fields::XEVENT_METADATA_ID_TAG, id @ 0..=0x7f, ..]) => i64::from(*id),
                Some([fields::XEVENT_METADATA_ID_TAG, low @ 0x80..=0xff, high @ 0..=0x7f, ..]) => {
                    i64::from(*low & 0x7f) | i64::from(*high) << 7
                }
                _ => break,
            };
            let Some(payload) = payload else { break };
            let at = self.pos;
            let header = self
                .buf
                .len()
                .wrapping_sub(self.pos)
                .wrapping_sub(tail.len());
            self.pos = self.pos.wrapping_add(header).wrapping_add(len);
            if !skip(id, payload) {
                skipped.kept = Some((payload, at));
                break;
            }
            skipped.last = Some(payload);
        }
        skipped
    }

    /// At the current position, a field with key `key` whose length takes one or two
    /// bytes: the length and what follows it.
    #[inline(always)]
    fn small_message_at(&self, key: u8) -> Option<(usize, &'a [u8])> {
        match self.buf.get(self.pos..)? {
            [k, len @ 0..=0x7f, tail @ ..] if *k == key => Some((usize::from(*len), tail)),
            [k, low @ 0x80..=0xff, high @ 0..=0x7f, tail @ ..] if *k == key => {
                Some((usize::from(*low & 0x7f) | usize::from(*high) << 7, tail))
            }
            _ => None,
        }
    }

    /// The next field number and value, `None` at the end of the message.
    #[inline(always)]
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, WireError> {
        let rest = match self.buf.get(self.pos..) {
            Some(rest) if !rest.is_empty() => rest,
            _ => return Ok(None),
        };
        // Fast path for the shape of nearly every field in a capture: a one-byte key
        // and a one-byte varint or length (events, stats, ids, small numbers).
        if let [key @ 0..=0x7f, small @ 0..=0x7f, tail @ ..] = rest {
            let field = u32::from(*key >> FIELD_SHIFT);
            match *key & WIRE_TYPE_MASK {
                VARINT => {
                    self.pos = self.pos.wrapping_add(2);
                    return Ok(Some((field, Value::Varint(u64::from(*small)))));
                }
                LENGTH_DELIMITED => {
                    let len = usize::from(*small);
                    let bytes = tail.get(..len).ok_or(WireError::LengthPastEnd)?;
                    self.pos = self.pos.wrapping_add(2).wrapping_add(len);
                    return Ok(Some((field, Value::Bytes(bytes))));
                }
                _ => {}
            }
        }
        let key = self.varint()?;
        let field = u32::try_from(key >> FIELD_SHIFT).unwrap_or(u32::MAX);
        let value = match (key & WIRE_TYPE_MASK_U64) as u8 {
            VARINT => Value::Varint(self.varint()?),
            FIXED64 => {
                let b = self.take(8)?;
                Value::Fixed64(u64::from_le_bytes(
                    b.try_into().map_err(|_| WireError::Truncated)?,
                ))
            }
            LENGTH_DELIMITED => {
                let len = usize::try_from(self.varint()?).map_err(|_| WireError::LengthPastEnd)?;
                Value::Bytes(self.take(len)?)
            }
            FIXED32 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes(
                    b.try_into().map_err(|_| WireError::Truncated)?,
                ))
            }
            other => return Err(WireError::BadWireType(other)),
        };
        Ok(Some((field, value)))
    }
}

/// What [`Fields::skip_small_messages`] met: the last payload it passed over, and the
/// field it read and did not pass over (its payload, and where its key lies in the
/// buffer), after which the reader now stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped<'a> {
    pub last: Option<&'a [u8]>,
    pub kept: Option<(&'a [u8], usize)>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests;
