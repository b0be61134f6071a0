//! The out-of-memory message parser on arbitrary text: it never panics, and what it
//! returns holds together.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::evidence::message::{parse, OomKind, OomMessage};

/// Bounds the parser promises (see `src/evidence/message/`).
const MAX_ALLOCATIONS: usize = 512;
const MAX_FIELD: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse(&text) {
        Err(e) => assert_eq!(
            e.to_string(),
            "no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on"
        ),
        Ok(msg) => {
            check(&msg);
            // Deterministic, and the JSON contract round-trips.
            assert_eq!(parse(&text).as_ref(), Ok(&msg));
            let json = serde_json::to_string(&msg).expect("serializes");
            let back: OomMessage = serde_json::from_str(&json).expect("deserializes");
            assert_eq!(back, msg);
        }
    }
});

fn check(msg: &OomMessage) {
    assert!(msg.allocations.len() <= MAX_ALLOCATIONS);
    if msg.omitted_allocations > 0 {
        assert_eq!(msg.allocations.len(), MAX_ALLOCATIONS);
    }
    // A one-line message has no listing, and only a block can be cut short.
    if msg.kind == OomKind::Short {
        assert!(msg.allocations.is_empty() && !msg.truncated);
    }
    for a in &msg.allocations {
        for s in [&a.shape, &a.op_name, &a.op_type, &a.xla_label, &a.allocation_type] {
            assert!(s.len() <= MAX_FIELD);
        }
        assert!(a.source.len() <= MAX_FIELD);
        assert!(a.padding_expansion.is_none_or(f64::is_finite));
    }
    for s in [&msg.requested_op, &msg.requested_shape, &msg.requested_dtype, &msg.memory_space] {
        assert!(s.as_ref().is_none_or(|s| s.len() <= MAX_FIELD));
    }
}
