//! Everything that can stop an analysis, each with a message that says what is wrong
//! and what the user can do about it. Problems that only limit what the report can say
//! (no plan, no allocator events) are not errors: they become report notes.

use std::path::PathBuf;

use crate::evidence::device_profile::ProfileError;
use crate::evidence::dump::DumpError;

/// What every input error suggests passing instead.
const WHAT_TO_PASS: &str = "pass a profiler capture (*.xplane.pb), a log or the error message (text), an XLA dump (a --xla_dump_to folder or its module_NNNN.… files) or a device memory profile (*.prof)";

/// Why an analysis or a comparison could not be made.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be opened.
    #[error("cannot open {path}: {message}; check the path and that you may read it")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why, as the system says.
        message: String,
    },

    /// Reading the capture failed.
    #[error(
        "reading the capture failed at byte {offset}: {message}; re-copy the file and try again"
    )]
    Read {
        /// Where the read failed.
        offset: u64,
        /// Why, as the system says.
        message: String,
    },

    /// The capture file is empty.
    #[error("the file is empty; pass the *.xplane.pb file that jax.profiler.trace(...) wrote")]
    Empty,

    /// The file is not an XSpace protobuf (what it looks like instead).
    #[error("this is not a profiler capture ({0}); pass the *.xplane.pb file that jax.profiler.trace(...) wrote under <logdir>/plugins/profile/<run>/")]
    NotACapture(String),

    /// The capture is damaged at some point.
    #[error("the capture is corrupt or truncated at byte {offset}: {what}; a capture cut short by a full disk or a killed job cannot be read past this point: capture again")]
    Corrupt {
        /// Where the damage is.
        offset: u64,
        /// What is damaged there.
        what: &'static str,
    },

    /// The file ends before its first plane does.
    #[error("the capture is truncated: the file has {file_bytes} bytes but its first plane runs to byte {needed}; a capture cut short by a full disk or an interrupted copy cannot be read: copy it again, or capture again")]
    Truncated {
        /// The file's size.
        file_bytes: u64,
        /// Where its first plane ends.
        needed: u64,
    },

    /// A folder holds no capture.
    #[error("no *.xplane.pb file under {0}; pass a capture file, or the log dir given to jax.profiler.trace (it holds plugins/profile/<run>/<host>.xplane.pb)")]
    NoCaptureInDir(PathBuf),

    /// No module has the name or label asked for.
    #[error("no module named {wanted:?} in this capture; modules: {available}")]
    UnknownModule {
        /// The name or label asked for.
        wanted: String,
        /// The modules there are.
        available: String,
    },

    /// No host has the name asked for.
    #[error("no host named {wanted:?} in this capture; hosts: {available}")]
    UnknownHost {
        /// The host asked for.
        wanted: String,
        /// The hosts there are.
        available: String,
    },

    /// No host file of a folder could be analyzed.
    #[error("none of the {hosts} host files could be analyzed; the first one: {first}")]
    NoHostReadable {
        /// How many host files there are.
        hosts: usize,
        /// The first host file's error.
        first: String,
    },

    /// Text (a log, a pasted error) without an out-of-memory message, and nothing else
    /// usable given.
    #[error("no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on")]
    NoOomMessage,

    /// An input is empty.
    #[error("{0} is empty: {WHAT_TO_PASS}")]
    EmptyInput(String),

    /// An input is neither a capture, text, a dump nor a profile.
    #[error("cannot tell what {path} is ({why}): {WHAT_TO_PASS}")]
    UnknownInput {
        /// The input.
        path: String,
        /// What it looks like.
        why: String,
    },

    /// A folder holds nothing oomlens reads.
    #[error("nothing oomlens reads in {0}: {WHAT_TO_PASS}, or the folder that holds them")]
    NothingInDir(PathBuf),

    /// No input was given.
    #[error("nothing to analyze: {WHAT_TO_PASS}; --error-text FILE (or - for standard input) takes the error message alone")]
    NoInput,

    /// An XLA dump could not be read.
    #[error(transparent)]
    Dump(#[from] DumpError),

    /// A device memory profile could not be read.
    #[error(transparent)]
    Profile(#[from] ProfileError),

    /// A run of a comparison has no module of the name asked for.
    #[error("no module named {wanted:?} in the {side} run; its modules: {available}")]
    UnknownModuleIn {
        /// The name or label asked for.
        wanted: String,
        /// `before` or `after`.
        side: &'static str,
        /// The run's modules.
        available: String,
    },

    /// Two runs of several hosts share no host name.
    #[error("the two runs have no host in common (before: {before}; after: {after}); compare one host file with another instead")]
    NoCommonHost {
        /// The run before's hosts.
        before: String,
        /// The run after's hosts.
        after: String,
    },
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
