//! Everything that can stop an analysis, each with a message that says what is wrong
//! and what the user can do about it. Problems that only limit what the report can say
//! (no plan, no allocator events) are not errors: they become report notes.

use std::path::PathBuf;

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
            Error::UnknownModuleIn { .. } => "unknown_module",
            Error::NoCommonHost { .. } => "no_common_host",
            Error::NoHostReadable { .. } => "no_host_readable",
        }
    }
}
