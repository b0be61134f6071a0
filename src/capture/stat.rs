//! XStat values: read borrowed from an event's wire bytes on the hot path, or owned
//! when kept with plane or event metadata. A string stat is either inline (`str_value`)
//! or a reference into the plane's stat metadata (`ref_value`); numbers may arrive as
//! int64, uint64 or double whatever the stat (capture-format.md §3).

use crate::wire::{Fields, Value, WireError};

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
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct OwnedStat {
    pub metadata_id: u64,
    pub value: StatValue,
}

/// Decodes one XStat message from its wire bytes. A stat without a value is `None`.
#[inline(always)]
pub fn parse_stat(bytes: &[u8]) -> Result<Option<(u64, StatRef<'_>)>, WireError> {
    let mut fields = Fields::new(bytes);
    let mut id = 0u64;
    let mut value = None;
    while let Some((field, v)) = fields.next_field()? {
        value = match (field, v) {
            (1, Value::Varint(x)) => {
                id = x;
                continue;
            }
            (2, Value::Fixed64(x)) => Some(StatRef::Double(f64::from_bits(x))),
            (3, Value::Varint(x)) => Some(StatRef::Uint(x)),
            (4, Value::Varint(x)) => Some(StatRef::Int(x as i64)),
            (5, Value::Bytes(b)) => Some(StatRef::Str(b)),
            (6, Value::Bytes(b)) => Some(StatRef::Bytes(b)),
            (7, Value::Varint(x)) => Some(StatRef::Ref(x)),
            _ => continue,
        };
    }
    Ok(value.map(|v| (id, v)))
}
