//! Protobuf wire bytes written by hand, for tests that build or cut captures below the
//! message level (where prost would re-encode, or refuse, what they need).
#![allow(dead_code)]

/// Appends `v` as a varint.
pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a length-delimited field.
pub fn field_bytes(field: u32, payload: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(field) << 3 | 2, out);
    varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// A length-delimited field on its own.
pub fn field(field: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    field_bytes(field, payload, &mut out);
    out
}
