//! What stops a dump from being read at all. Problems with one module or one file
//! (a corrupt proto beside good ones, a file over the size cap) only become notes.

use std::path::PathBuf;

/// The advice every "no plan" error ends with.
const HOW_TO_DUMP: &str =
    "run with XLA_FLAGS=--xla_dump_to=DIR (add --xla_dump_hlo_as_proto for exact plans)";

#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    #[error("no XLA dump files in {place}: {HOW_TO_DUMP}")]
    NoDumpFiles { place: String },

    #[error("the XLA dump in {place} holds no compiled plan (no *after_optimizations.hlo.pb with a buffer assignment, no *after_optimizations-buffer-assignment.txt): {HOW_TO_DUMP}")]
    NoPlan { place: String },

    #[error("{file} is not a readable HloProto ({why}); the dump was cut short or altered: dump again with XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_proto")]
    CorruptProto { file: String, why: String },

    #[error("{file} holds {bytes} bytes, over the {cap}-byte cap for one dump file; pass a dump of a smaller program, or the module's text files instead")]
    TooLarge { file: String, bytes: u64, cap: u64 },

    #[error("cannot read {path}: {message}; check the path and that you may read it")]
    Unreadable { path: PathBuf, message: String },
}

impl DumpError {
    /// A stable short name for the error, for JSON consumers and the page.
    pub fn kind(&self) -> &'static str {
        match self {
            DumpError::NoDumpFiles { .. } => "no_dump_files",
            DumpError::NoPlan { .. } => "no_plan_in_dump",
            DumpError::CorruptProto { .. } => "corrupt_proto",
            DumpError::TooLarge { .. } => "file_too_large",
            DumpError::Unreadable { .. } => "unreadable",
        }
    }
}
