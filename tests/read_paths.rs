//! A capture read through a memory-mapped file, from bytes in memory, or by copying
//! reads (as the page reads a `File`) gives the same report: the three ways the stream
//! reader can see the bytes.

#[path = "support/real_captures.rs"]
mod real_captures;

use oomlens::analysis::{analyze, Options};
use oomlens::source::{ByteSource, FileSource};

/// Bytes in memory that can only be copied out, never seen in place.
struct CopyingReads(Vec<u8>);

impl ByteSource for CopyingReads {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        ByteSource::read_at(self.0.as_slice(), offset, buf)
    }
}

fn report(src: &dyn ByteSource) -> String {
    let host = analyze(
        src,
        "host",
        "capture",
        &Options::default(),
        &mut |_, _, _| {},
    )
    .expect("analysis succeeds");
    oomlens::report::json::render(&oomlens::report(vec![host]))
}

#[test]
fn mapped_borrowed_and_copied_reads_give_the_same_report() {
    let files = real_captures::all();
    assert!(!files.is_empty(), "no captures found");
    // Files past the mapping threshold (256 KiB) are read through mapped windows.
    let mapped = files
        .iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() >= 256 << 10))
        .count();
    assert!(
        mapped >= 3,
        "only {mapped} captures are large enough to be mapped"
    );
    for path in &files {
        let bytes = std::fs::read(path).expect("read");
        let file = report(&FileSource::open(path).expect("open"));
        assert_eq!(file, report(&bytes), "{}: file vs bytes", path.display());
        assert_eq!(
            file,
            report(&CopyingReads(bytes)),
            "{}: file vs copying reads",
            path.display()
        );
    }
}
