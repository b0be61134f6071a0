//! The text-dump parsers on arbitrary text: the input, split at NUL bytes, is one
//! module's buffer assignment, values file, live ranges, HLO text and memory-usage
//! report, read as a plan (`text::plan`) and as a dump handed in as files (`read`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::evidence::dump::text::{self, TextFiles};
use oomlens::evidence::dump::{self, DumpFile};

const STEM: &str = "module_0001.jit_f.cpu_after_optimizations";
const SUFFIXES: [&str; 5] = [
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    ".txt",
    "-memory-usage-report.txt",
];

fuzz_target!(|data: &[u8]| {
    let parts: Vec<&[u8]> = data.splitn(SUFFIXES.len(), |&b| b == 0).collect();
    let texts: Vec<String> = parts
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let part = |i: usize| texts.get(i).map(String::as_str);
    let files = TextFiles {
        assignment: part(0).unwrap_or(""),
        values: part(1),
        live_range: part(2),
        hlo: part(3),
        usage_report: part(4),
    };
    let _ = text::plan(&files);
    let names: Vec<String> = SUFFIXES.iter().map(|s| format!("{STEM}{s}")).collect();
    let handed: Vec<DumpFile<'_>> = names
        .iter()
        .zip(&parts)
        .map(|(name, bytes)| DumpFile { name, bytes })
        .collect();
    let _ = dump::read(&handed);
});
