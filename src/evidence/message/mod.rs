//! Out-of-memory messages as users paste them: found in a whole log, read field by field
//! into [`OomMessage`].
//!
//! Supported formats (see `docs/oom-messages.md` for an annotated example of each): the
//! XLA:TPU compile-time check with its usage summary and largest allocations, the
//! TensorCore/SparseCore split, the early abort, the TPU runtime's failures, XLA:GPU's
//! buffer-assignment report, the BFC allocator's log and dump, one-line messages, and
//! XLA's rematerialization warning.
//!
//! The text around the message does not matter: tracebacks, log prefixes, `> ` quoting,
//! Markdown emphasis and code fences, terminal colours, Windows line ends, and lines a
//! terminal or forum wrapped inside a field (rejoined). With several messages in one text,
//! a failure beats a warning, then the message stating the most figures wins, then the
//! last one (see `scan`). Sizes are converted 1024-based, an exact count beside a rounded
//! one winning (see `units`).
//!
//! The scan is one pass over the lines, a handful of substring searches per line, with
//! bounded state: linear time, memory bounded by the longest line kept (64 KiB) and the
//! listing kept (512 allocations of bounded strings). No input makes it panic.

mod bfc;
mod clean;
mod fields;
mod gpu;
mod listing;
mod model;
mod scan;
mod short;
mod tpu;
mod units;

pub use model::{AllocatorStats, MessageAllocation, OomKind, OomMessage, RematWarning};

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
