//! XStat values: read borrowed from an event's wire bytes on the hot path, or owned
//! when kept with plane or event metadata. A string stat is either inline (`str_value`)
//! or a reference into the plane's stat metadata (`ref_value`); numbers may arrive as
//! int64, uint64 or double whatever the stat (docs/xplane.md#stat-values).

use crate::wire::fields::{
    XSTAT_BYTES_VALUE, XSTAT_BYTES_VALUE_TAG, XSTAT_DOUBLE_VALUE, XSTAT_DOUBLE_VALUE_TAG,
    XSTAT_INT64_VALUE, XSTAT_INT64_VALUE_TAG, XSTAT_METADATA_ID, XSTAT_METADATA_ID_TAG,
    XSTAT_REF_VALUE, XSTAT_REF_VALUE_TAG, XSTAT_STR_VALUE, XSTAT_STR_VALUE_TAG, XSTAT_UINT64_VALUE,
    XSTAT_UINT64_VALUE_TAG,
};
use crate::wire::{varint_at, Fields, Value, WireError};

/// A stat value borrowed from wire bytes.
#[derive(Debug, Clone, Copy)]
pub enum StatRef<'a> {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(&'a [u8]),
    Bytes(&'a [u8]),
    /// An interned string: the name of `stat_metadata[id]` in the same plane.
    Ref(u64),
}

impl StatRef<'_> {
    /// Any numeric kind as i64 (doubles truncated toward zero, u64 reinterpreted).
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            StatRef::Int(v) => Some(v),
            StatRef::Uint(v) => Some(v as i64),
            StatRef::Double(v) if v.is_finite() => Some(v as i64),
            _ => None,
        }
    }

    /// Any numeric kind as u64 (negative int64 reinterpreted, as TPU ids require).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            StatRef::Int(v) => Some(v as u64),
            StatRef::Uint(v) => Some(v),
            StatRef::Double(v) if v.is_finite() && v >= 0.0 => Some(v as u64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            StatRef::Int(v) => Some(v as f64),
            StatRef::Uint(v) => Some(v as f64),
            StatRef::Double(v) => Some(v),
            _ => None,
        }
    }

    pub fn to_owned_value(&self) -> StatValue {
        match *self {
            StatRef::Int(v) => StatValue::Int(v),
            StatRef::Uint(v) => StatValue::Uint(v),
            StatRef::Double(v) => StatValue::Double(v),
            StatRef::Str(s) => StatValue::Str(String::from_utf8_lossy(s).into()),
            StatRef::Bytes(b) => StatValue::Bytes(b.to_vec().into()),
            StatRef::Ref(r) => StatValue::Ref(r),
        }
    }
}

/// A stat value kept beyond the wire bytes it came from.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum StatValue {
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(Box<str>),
    Bytes(Box<[u8]>),
    Ref(u64),
    /// A large `bytes_value` left in the file: `[offset, offset + len)`.
    BytesAt {
        offset: u64,
        len: u64,
    },
}

impl StatValue {
    pub fn as_ref(&self) -> Option<StatRef<'_>> {
        Some(match self {
            StatValue::Int(v) => StatRef::Int(*v),
            StatValue::Uint(v) => StatRef::Uint(*v),
            StatValue::Double(v) => StatRef::Double(*v),
            StatValue::Str(s) => StatRef::Str(s.as_bytes()),
            StatValue::Bytes(b) => StatRef::Bytes(b),
            StatValue::Ref(r) => StatRef::Ref(*r),
            StatValue::BytesAt { .. } => return None,
        })
    }
}

/// One stat as stored with metadata.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OwnedStat {
    pub metadata_id: u64,
    pub value: StatValue,
}

/// Decodes one XStat message from its wire bytes. A stat without a value is `None`.
#[inline(always)]
pub fn parse_stat(bytes: &[u8]) -> Result<Option<(u64, StatRef<'_>)>, WireError> {
    if let Some(stat) = parse_common_stat(bytes) {
        return Ok(Some(stat));
    }
    parse_any_stat(bytes)
}

/// The general decoder behind [`parse_stat`]: any field order, any id length.
fn parse_any_stat(bytes: &[u8]) -> Result<Option<(u64, StatRef<'_>)>, WireError> {
    let mut fields = Fields::new(bytes);
    let mut id = 0u64;
    let mut value = None;
    while let Some((field, v)) = fields.next_field()? {
        value = match (field, v) {
            (XSTAT_METADATA_ID, Value::Varint(x)) => {
                id = x;
                continue;
            }
            (XSTAT_DOUBLE_VALUE, Value::Fixed64(x)) => Some(StatRef::Double(f64::from_bits(x))),
            (XSTAT_UINT64_VALUE, Value::Varint(x)) => Some(StatRef::Uint(x)),
            (XSTAT_INT64_VALUE, Value::Varint(x)) => Some(StatRef::Int(x as i64)),
            (XSTAT_STR_VALUE, Value::Bytes(b)) => Some(StatRef::Str(b)),
            (XSTAT_BYTES_VALUE, Value::Bytes(b)) => Some(StatRef::Bytes(b)),
            (XSTAT_REF_VALUE, Value::Varint(x)) => Some(StatRef::Ref(x)),
            _ => continue,
        };
    }
    Ok(value.map(|v| (id, v)))
}

/// The shape nearly every stat has: a one-byte id, then one value that ends the
/// message (a number, or a string or bytes under 128 long). Anything else (a long id,
/// more fields) is `None` and goes through the general decoder, which gives the same
/// answer for these.
#[inline(always)]
fn parse_common_stat(bytes: &[u8]) -> Option<(u64, StatRef<'_>)> {
    let [XSTAT_METADATA_ID_TAG, id @ 0..=0x7f, key, rest @ ..] = bytes else {
        return None;
    };
    Some((u64::from(*id), stat_value(bytes, 3, rest, *key)?))
}

/// The value of a stat in the usual shape: `value`, its bytes at `from` in `raw`, after
/// the one-byte `key`; `None` when the value does not fill the stat. `raw` may run past
/// the stat (a whole event): a number is then read from a word of it.
#[inline(always)]
pub(super) fn stat_value<'a>(
    raw: &'a [u8],
    from: usize,
    value: &'a [u8],
    key: u8,
) -> Option<StatRef<'a>> {
    Some(match key {
        XSTAT_DOUBLE_VALUE_TAG => {
            StatRef::Double(f64::from_le_bytes(*<&[u8; 8]>::try_from(value).ok()?))
        }
        XSTAT_UINT64_VALUE_TAG | XSTAT_INT64_VALUE_TAG | XSTAT_REF_VALUE_TAG => {
            // The varint fills the stat, whose length the frame gave: it is checked
            // and packed from a word of the event's bytes, the one it starts where
            // eight follow, else the one it ends (the event's last stat).
            let v = varint_at(raw, from, value.len())?;
            match key {
                XSTAT_UINT64_VALUE_TAG => StatRef::Uint(v),
                XSTAT_INT64_VALUE_TAG => StatRef::Int(v as i64),
                _ => StatRef::Ref(v),
            }
        }
        XSTAT_STR_VALUE_TAG | XSTAT_BYTES_VALUE_TAG => {
            // A length in one byte, and the bytes it gives fill the stat.
            let (&n, bytes) = value.split_first()?;
            if usize::from(n) != bytes.len() {
                return None;
            }
            match key {
                XSTAT_STR_VALUE_TAG => StatRef::Str(bytes),
                _ => StatRef::Bytes(bytes),
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    fn varint(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        crate::wire::encode_varint(v, &mut out);
        out
    }

    fn same(a: Option<(u64, StatRef<'_>)>, b: Option<(u64, StatRef<'_>)>) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    /// The fast path answers exactly as the general decoder wherever it answers.
    #[test]
    fn the_common_stat_shape_decodes_as_the_general_decoder_does() {
        let values = [
            0u64,
            1,
            127,
            128,
            300,
            1 << 28,
            1 << 35,
            1 << 42,
            (1 << 49) + 7,
            1 << 56,
            u64::MAX >> 1,
            u64::MAX,
        ];
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for id in [0u64, 1, 5, 127, 128, 4000] {
            for v in values {
                for key in [0x18u8, 0x20, 0x38] {
                    let mut b = vec![0x08];
                    b.extend(varint(id));
                    b.push(key);
                    b.extend(varint(v));
                    cases.push(b.clone());
                    // A second value, a truncated value, a trailing byte.
                    let mut two = b.clone();
                    two.extend([0x18, 0x07]);
                    cases.push(two);
                    cases.push(b[..b.len() - 1].to_vec());
                    let mut tail = b.clone();
                    tail.push(0x00);
                    cases.push(tail);
                }
                let mut d = vec![0x08];
                d.extend(varint(id));
                d.push(0x11);
                d.extend((v as f64).to_le_bytes());
                cases.push(d.clone());
                cases.push(d[..d.len() - 3].to_vec());
            }
        }
        cases.push(vec![0x08, 0x03, 0x2a, 0x02, b'h', b'i']);
        // Strings and bytes: empty, a length that does not fill the stat, another
        // field after.
        cases.push(vec![0x08, 0x03, 0x32, 0x03, 0xff, 0x00, 0x80]);
        cases.push(vec![0x08, 0x03, 0x2a, 0x00]);
        cases.push(vec![0x08, 0x03, 0x2a, 0x05, b'h', b'i']);
        cases.push(vec![0x08, 0x03, 0x2a, 0x01, b'h', b'i']);
        cases.push(vec![0x08, 0x03, 0x2a, 0x02, b'h', b'i', 0x20, 0x01]);
        cases.push(vec![0x18, 0x05, 0x08, 0x03]);
        let mut fast_answers = 0;
        for case in &cases {
            let general = parse_any_stat(case).ok().flatten();
            if let Some(fast) = parse_common_stat(case) {
                fast_answers += 1;
                assert!(same(Some(fast), general), "{case:02x?}");
            }
            assert!(
                same(parse_stat(case).ok().flatten(), general),
                "{case:02x?}"
            );
        }
        assert!(
            fast_answers > 100,
            "the fast path answered {fast_answers} cases"
        );
    }
}
