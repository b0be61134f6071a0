//! Evidence without a capture, end to end: any bytes handed in as one input file (told
//! apart by content: text, a device memory profile, a dump file by its name) and as
//! pasted text, through `analyze_input_bytes` — the message's triage and verdict, the
//! profiles' diagnosis — and every renderer. It must answer or give an error, never
//! panic (run with -a: an unchecked sum of figures read from the message is a crash).
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::report::{json, markdown, text};

fn render(result: Result<oomlens::Report, oomlens::Error>) {
    if let Ok(report) = result {
        let _ = text::render(&report, 10);
        let _ = markdown::render(&report, 10);
        let _ = json::render(&report);
    }
}

fuzz_target!(|data: &[u8]| {
    let options = oomlens::Options::default();
    // The first byte picks the name the file is given, so that every reader is reached.
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let name = match pick % 3 {
        0 => "log.txt",
        1 => "step.prof",
        _ => "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt",
    };
    render(oomlens::analyze_input_bytes(&[(name, bytes)], &options));
    let pasted = oomlens::Options {
        error_text: Some(String::from_utf8_lossy(bytes).into_owned()),
        ..Default::default()
    };
    render(oomlens::analyze_input_bytes(&[], &pasted));
});
