//! A whole log as the error text: read line by line from a file or a pipe, in bounded
//! memory, with the same result as the message alone. Its own test binary, so that the
//! memory its `oomlens` runs take (`getrusage(RUSAGE_CHILDREN)`) is theirs alone.

#![cfg(unix)]
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use oomlens::evidence::message;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/errors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

/// A reader that hands out `n` bytes at a time, so that lines and characters are cut
/// between reads.
struct Trickle<'a> {
    bytes: &'a [u8],
    n: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.n.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

#[test]
fn reading_in_pieces_gives_what_the_whole_text_gives() {
    for file in corpus() {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let whole = message::parse(&text);
        assert_eq!(message::parse_bytes(&bytes), whole, "{file:?}");
        for n in [1, 7, 4096] {
            let read = message::parse_reader(Trickle { bytes: &bytes, n }).unwrap();
            assert_eq!(read, whole, "{file:?} in pieces of {n}");
        }
    }
    // A line far longer than a read, and a character cut between reads.
    let long = format!(
        "{}\nRESOURCE_EXHAUSTED: Out of memory while trying to allocate 4096 bytes. é\n",
        "é".repeat(300_000)
    );
    let read = message::parse_reader(Trickle {
        bytes: long.as_bytes(),
        n: 65_537,
    })
    .unwrap();
    assert_eq!(read, message::parse(&long));
    assert_eq!(read.unwrap().requested_bytes, Some(4096));
}

fn log_lines(out: &mut impl Write, bytes: usize) {
    let line = "I0101 12:00:00.000000 1234 train.py:88] step 1234 loss 0.4375 grad_norm 1.25 lr 3e-4 throughput 12345.6 examples/s\n";
    let mut written = 0;
    while written < bytes {
        out.write_all(line.as_bytes()).unwrap();
        written += line.len();
    }
}

fn max_rss_of_children_kib() -> i64 {
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    usage.ru_maxrss
}

#[test]
fn a_100_mb_log_is_read_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("oomlens-big-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let with = dir.join("train.log");
    let without = dir.join("quiet.log");
    let tail = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/errors/23-speedppi-1-gpu-fragmentation.txt"),
    )
    .unwrap();
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&with).unwrap());
        log_lines(&mut f, 100 << 20);
        f.write_all(&tail).unwrap();
        let mut g = std::io::BufWriter::new(std::fs::File::create(&without).unwrap());
        log_lines(&mut g, 100 << 20);
    }
    let bin = env!("CARGO_BIN_EXE_oomlens");
    let out = Command::new(bin)
        .arg(&with)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let alone = message::parse(&String::from_utf8_lossy(&tail)).unwrap();
    assert_eq!(
        report["error"]["requested_bytes"],
        alone.requested_bytes.unwrap()
    );
    assert_eq!(report["error"]["kind"], "gpu_buffer_assignment");
    assert_eq!(
        report["inputs"][0]["bytes"].as_u64().unwrap(),
        std::fs::metadata(&with).unwrap().len()
    );
    let out = Command::new(bin).arg(&without).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "oomlens: no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on\n"
    );
    // The log was never held whole: each run stayed far below its 100 MiB.
    let rss = max_rss_of_children_kib();
    assert!(rss < 48 * 1024, "an oomlens run took {rss} KiB");
    let _ = std::fs::remove_dir_all(&dir);
}
