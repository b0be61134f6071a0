//! The whole pipeline on arbitrary bytes, rendered by every renderer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::report::{json, markdown, text};

fuzz_target!(|data: &[u8]| {
    let src = data;
    let options = oomlens::Options::default();
    if let Ok(host) = oomlens::analyze(&src, "fuzz", "fuzz.xplane.pb", &options, &mut |_, _, _| {}) {
        let report = oomlens::report(vec![host]);
        let _ = text::render(&report, 10);
        let _ = markdown::render(&report, 10);
        let _ = json::render(&report);
    }
});
