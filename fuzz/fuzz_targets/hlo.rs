//! The plan analysis on arbitrary HloProto bytes: prost's decode, then the totals,
//! the heap replay, roles and scan stacks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::proto::xla::HloProto;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(hlo) = HloProto::decode(data) {
        let _ = oomlens::plan::analyze(&hlo);
    }
});
