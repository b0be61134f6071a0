//! Out-of-memory messages as users paste them: found in a whole log, read field by field
//! into [`OomMessage`].
//!
//! Supported formats (see `docs/oom-messages.md` for an annotated example of each): the
//! XLA:TPU compile-time check with its usage summary and largest allocations, the
//! TensorCore/SparseCore split, the early abort, the TPU runtime's failures, XLA:GPU's
//! buffer-assignment report, the BFC allocator's log and dump, one-line messages (PyTorch's
//! caching allocator and Tenstorrent's DRAM banks among them), AWS Neuron's runtime, and
//! XLA's rematerialization warning.
//!
//! The text around the message does not matter: tracebacks, log prefixes, `> ` quoting,
//! Markdown emphasis and code fences, terminal colours, Windows line ends, and lines a
//! terminal or forum wrapped inside a field (rejoined). With several messages in one text,
//! a failure beats a warning, then the message stating the most figures wins, then the
//! last one (see `scan::choice`). Sizes are converted 1024-based, an exact count beside a
//! rounded one winning (see `units`).
//!
//! The scan is one pass over the lines, a handful of substring searches per line, with
//! bounded state: linear time, memory bounded by the longest line kept (64 KiB) and the
//! listing kept (512 allocations of bounded strings). No input makes it panic.

mod bfc;
mod clean;
mod draft;
mod driver;
mod fields;
mod foreign;
mod framework;
mod gpu;
mod listing;
mod merge;
mod model;
mod neuron;
mod other;
mod scan;
mod scoped;
mod short;
mod tpu;
mod units;

pub use model::{
    AllocatorStats, ChunkClass, Framework, MessageAllocation, OomKind, OomMessage, PoolPicture,
    RematWarning, UsageItem,
};
pub use short::{CONSTANT_OP, JIT_CODE_OP, NUMPY_ARRAY_OP, PROGRAM_LOAD_OP, WORKSPACE};

/// No out-of-memory message in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on")]
pub struct NoOomMessage;

/// Finds and parses the out-of-memory message in `text` (a whole log is fine).
pub fn parse(text: &str) -> Result<OomMessage, NoOomMessage> {
    let mut scanner = scan::Scanner::default();
    let mut buf = String::new();
    clean::for_each_line(text, |line| scanner.physical(line, &mut buf));
    scanner.finish().ok_or(NoOomMessage)
}

/// [`parse`] over bytes that need not be UTF-8 (a log file as read): each line is read
/// as UTF-8 with invalid bytes replaced, one line at a time, so a large log is never
/// copied whole.
pub fn parse_bytes(bytes: &[u8]) -> Result<OomMessage, NoOomMessage> {
    let mut lines = Lines::default();
    lines.feed(bytes);
    lines.finish()
}

/// [`parse`] over a reader (a file, standard input), read in blocks: time is linear in
/// its length and memory bounded whatever that length (a line longer than
/// 64 KiB is read in pieces, as [`parse`] reads it).
pub fn parse_reader(
    mut reader: impl std::io::Read,
) -> std::io::Result<Result<OomMessage, NoOomMessage>> {
    let mut lines = Lines::default();
    let mut block = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        lines.feed(block.get(..n).unwrap_or(&[]));
    }
    Ok(lines.finish())
}

/// Bytes cut into lines for the scanner, keeping at most one unfinished line.
#[derive(Default)]
struct Lines {
    scanner: scan::Scanner,
    buf: String,
    /// The line read so far (no `\n` yet), at most about twice the longest line read as one.
    partial: Vec<u8>,
}

impl Lines {
    fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = bytes.iter().position(|&b| b == b'\n') {
            let (line, rest) = bytes.split_at(end);
            self.partial.extend_from_slice(line);
            self.line();
            bytes = rest.get(1..).unwrap_or(&[]);
        }
        self.partial.extend_from_slice(bytes);
        // A line without an end in sight: its first pieces go now, as `for_each_line`
        // would cut them, ending on a character boundary.
        while self.partial.len() > 2 * clean::MAX_LINE {
            let mut cut = clean::MAX_LINE;
            while cut > 0 && self.partial.get(cut).is_some_and(|b| b & 0xC0 == 0x80) {
                cut -= 1;
            }
            let cut = if cut == 0 { clean::MAX_LINE } else { cut };
            let head: Vec<u8> = self.partial.drain(..cut).collect();
            self.text(&head);
        }
    }

    /// The line in `partial` is complete.
    fn line(&mut self) {
        let line = std::mem::take(&mut self.partial);
        self.text(&line);
        self.partial = line;
        self.partial.clear();
    }

    fn text(&mut self, bytes: &[u8]) {
        let text = String::from_utf8_lossy(bytes);
        let (scanner, buf) = (&mut self.scanner, &mut self.buf);
        clean::for_each_line(&text, |line| scanner.physical(line, buf));
    }

    fn finish(mut self) -> Result<OomMessage, NoOomMessage> {
        if !self.partial.is_empty() {
            self.line();
        }
        self.scanner.finish().ok_or(NoOomMessage)
    }
}
