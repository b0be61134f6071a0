//! How much memory decoding a profile would take, found by walking its wire format
//! without allocating, before prost decodes it.
//!
//! A bound on the pprof bytes alone is not a bound on memory: an empty `Sample` is two
//! bytes on the wire but a 72-byte struct once decoded, and a packed location id of one
//! byte becomes eight. So each record and each packed number is counted and priced at
//! the size of what prost builds for it, twice over for the slack of growing vectors.

use std::mem::size_of;

use crate::proto::pprof::{Function, Label, Line, Location, Sample, ValueType};
use crate::wire::fields::{
    LOCATION_LINE, PROFILE_FUNCTION, PROFILE_LOCATION, PROFILE_SAMPLE, PROFILE_SAMPLE_TYPE,
    PROFILE_STRING_TABLE, SAMPLE_LABEL, SAMPLE_LOCATION_ID, SAMPLE_VALUE,
};
use crate::wire::{Fields, Value, WireError};

/// Vectors grow by doubling, so what they hold can take up to twice its size.
const GROWTH_SLACK: u64 = 2;

/// The bytes prost would allocate to decode `pprof`, or the wire error that would
/// stop it.
pub(super) fn decoded_size(pprof: &[u8]) -> Result<u64, WireError> {
    let mut total = 0u64;
    let mut fields = Fields::new(pprof);
    while let Some((field, value)) = fields.next_field()? {
        let bytes = match (field, value) {
            (PROFILE_SAMPLE_TYPE, _) => price::<ValueType>(1),
            (PROFILE_SAMPLE, Value::Bytes(sample)) => {
                price::<Sample>(1).saturating_add(sample_contents(sample)?)
            }
            (PROFILE_LOCATION, Value::Bytes(location)) => {
                price::<Location>(1).saturating_add(location_contents(location)?)
            }
            (PROFILE_FUNCTION, _) => price::<Function>(1),
            (PROFILE_STRING_TABLE, Value::Bytes(text)) => {
                price::<Vec<u8>>(1).saturating_add(len(text))
            }
            // Unknown fields are skipped by prost without allocating.
            _ => 0,
        };
        total = total.saturating_add(bytes);
    }
    Ok(total)
}

/// A sample's location ids and values (8 bytes each, packed or not) and labels.
fn sample_contents(sample: &[u8]) -> Result<u64, WireError> {
    let mut total = 0u64;
    let mut fields = Fields::new(sample);
    while let Some((field, value)) = fields.next_field()? {
        let bytes = match (field, value) {
            (SAMPLE_LOCATION_ID | SAMPLE_VALUE, Value::Bytes(packed)) => {
                price::<u64>(packed_count(packed))
            }
            (SAMPLE_LOCATION_ID | SAMPLE_VALUE, _) => price::<u64>(1),
            (SAMPLE_LABEL, _) => price::<Label>(1),
            _ => 0,
        };
        total = total.saturating_add(bytes);
    }
    Ok(total)
}

/// A location's lines (inlined calls).
fn location_contents(location: &[u8]) -> Result<u64, WireError> {
    let mut total = 0u64;
    let mut fields = Fields::new(location);
    while let Some((field, _)) = fields.next_field()? {
        if field == LOCATION_LINE {
            total = total.saturating_add(price::<Line>(1));
        }
    }
    Ok(total)
}

/// How many varints a packed field holds: each ends with a byte below 0x80.
fn packed_count(packed: &[u8]) -> u64 {
    let ends = packed.iter().filter(|b| **b < 0x80).count();
    u64::try_from(ends).unwrap_or(u64::MAX)
}

fn price<T>(count: u64) -> u64 {
    let each = u64::try_from(size_of::<T>()).unwrap_or(u64::MAX);
    count.saturating_mul(each).saturating_mul(GROWTH_SLACK)
}

fn len(bytes: &[u8]) -> u64 {
    u64::try_from(bytes.len()).unwrap_or(u64::MAX)
}
