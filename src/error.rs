//! Everything that can stop an analysis, each with a message that says what is wrong
//! and what the user can do about it. Problems that only limit what the report can say
//! (no plan, no allocator events) are not errors: they become report notes.

use std::path::PathBuf;

use crate::evidence::device_profile::ProfileError;
use crate::evidence::dump::DumpError;

/// What every input error suggests passing instead.
const WHAT_TO_PASS: &str = "pass a profiler capture (*.xplane.pb), a log or the error message (text), an XLA dump (a --xla_dump_to folder or its module_NNNN.… files) or a device memory profile (*.prof)";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot open {path}: {message}; check the path and that you may read it")]
    Open { path: PathBuf, message: String },

    #[error(
        "reading the capture failed at byte {offset}: {message}; re-copy the file and try again"
    )]
    Read { offset: u64, message: String },

    #[error("the file is empty; pass the *.xplane.pb file that jax.profiler.trace(...) wrote")]
    Empty,

    #[error("this is not a profiler capture ({0}); pass the *.xplane.pb file that jax.profiler.trace(...) wrote under <logdir>/plugins/profile/<run>/")]
    NotACapture(String),

    #[error("the capture is corrupt or truncated at byte {offset}: {what}; a capture cut short by a full disk or a killed job cannot be read past this point: capture again")]
    Corrupt { offset: u64, what: &'static str },

    #[error("the capture is truncated: the file has {file_bytes} bytes but its first plane runs to byte {needed}; a capture cut short by a full disk or an interrupted copy cannot be read: copy it again, or capture again")]
    Truncated { file_bytes: u64, needed: u64 },

    #[error("no *.xplane.pb file under {0}; pass a capture file, or the log dir given to jax.profiler.trace (it holds plugins/profile/<run>/<host>.xplane.pb)")]
    NoCaptureInDir(PathBuf),

    #[error("no module named {wanted:?} in this capture; modules: {available}")]
    UnknownModule { wanted: String, available: String },

    #[error("no host named {wanted:?} in this capture; hosts: {available}")]
    UnknownHost { wanted: String, available: String },

    #[error("none of the {hosts} host files could be analyzed; the first one: {first}")]
    NoHostReadable { hosts: usize, first: String },
    /// Text (a log, a pasted error) without an out-of-memory message, and nothing else
    /// usable given.
    #[error("no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on")]
    NoOomMessage,

    #[error("{0} is empty: {WHAT_TO_PASS}")]
    EmptyInput(String),

    #[error("cannot tell what {path} is ({why}): {WHAT_TO_PASS}")]
    UnknownInput { path: String, why: String },

    #[error("nothing oomlens reads in {0}: {WHAT_TO_PASS}, or the folder that holds them")]
    NothingInDir(PathBuf),

    #[error("nothing to analyze: {WHAT_TO_PASS}; --error-text FILE (or - for standard input) takes the error message alone")]
    NoInput,

    #[error(transparent)]
    Dump(#[from] DumpError),

    #[error(transparent)]
    Profile(#[from] ProfileError),

    #[error("no module named {wanted:?} in the {side} run; its modules: {available}")]
    UnknownModuleIn {
        wanted: String,
        /// `before` or `after`.
        side: &'static str,
        available: String,
    },

    #[error("the two runs have no host in common (before: {before}; after: {after}); compare one host file with another instead")]
    NoCommonHost { before: String, after: String },
}

impl Error {
    /// A stable short name for the error, for JSON consumers and the page.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Open { .. } => "open",
            Error::Read { .. } => "read",
            Error::Empty => "empty",
            Error::NotACapture(_) => "not_a_capture",
            Error::Corrupt { .. } => "corrupt",
            Error::Truncated { .. } => "truncated",
            Error::NoCaptureInDir(_) => "no_capture_in_dir",
            Error::UnknownModule { .. } => "unknown_module",
            Error::UnknownHost { .. } => "unknown_host",
            Error::NoOomMessage => "no_oom_message",
            Error::EmptyInput(_) => "empty_input",
            Error::UnknownInput { .. } => "unknown_input",
            Error::NothingInDir(_) => "nothing_in_dir",
            Error::NoInput => "no_input",
            Error::Dump(e) => e.kind(),
            Error::Profile(e) => match e {
                ProfileError::NotADeviceProfile { .. } => "not_a_device_profile",
                ProfileError::TooLarge { .. } => "profile_too_large",
                ProfileError::Truncated { .. } => "profile_truncated",
                ProfileError::Corrupt { .. } => "profile_corrupt",
            },
            Error::UnknownModuleIn { .. } => "unknown_module",
            Error::NoCommonHost { .. } => "no_common_host",
            Error::NoHostReadable { .. } => "no_host_readable",
        }
    }
}
