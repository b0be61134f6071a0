//! Compiled memory plans from an XLA dump directory (`XLA_FLAGS=--xla_dump_to=DIR`):
//! the same [`ModuleReport`]s a capture gives — label `name(program_id)`, the program
//! id being the module's unique id, `executions` 0 (a dump has no runtime events).
//!
//! A module's plan comes from its `*after_optimizations.hlo.pb` when the dump has one
//! (`--xla_dump_hlo_as_proto`): that HloProto holds the buffer assignment a capture's
//! `/host:metadata` holds, so [`crate::plan::analyze`] gives the same plan, byte for
//! byte. Otherwise the plan is rebuilt from the text files ([`text`], which says what
//! is exact there and what is rebuilt). `docs/xla-dumps.md` describes the files.
//!
//! [`read`] takes files handed in as bytes (the page does this) and runs anywhere;
//! [`read_dir`] walks a directory and is native only. Both bound their work: files
//! over a size cap, and files or modules past a count, are left out with a note.
//! Nothing here panics on any input (the lints below); sums saturate.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

mod collect;
#[cfg(not(target_arch = "wasm32"))]
mod dir;
mod error;
mod names;
mod proto;
pub mod text;

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::model::{ModuleReport, Note};
use collect::{Collector, MAX_MODULES};
#[cfg(not(target_arch = "wasm32"))]
pub use dir::read_dir;
pub use error::DumpError;
use names::TextSet;

/// Largest `.hlo.pb` read (a module with large constants can be big; its plan is not).
pub const MAX_PROTO_BYTES: u64 = 512 << 20;
/// Largest text file read.
pub const MAX_TEXT_BYTES: u64 = 256 << 20;
/// Files looked at in one dump (a long run dumps thousands of modules, each with
/// dozens of object and IR files).
pub const MAX_FILES: usize = 200_000;

/// One file of a dump, by name and bytes (the page hands files in this way). The name
/// may carry folders (`xla_dump/module_0001…`); only its last part counts.
#[derive(Debug, Clone, Copy)]
pub struct DumpFile<'a> {
    pub name: &'a str,
    pub bytes: &'a [u8],
}

/// The modules of a dump.
///
/// `modules` is exactly what a capture's [`HostReport`](crate::report::model::HostReport)
/// holds, so it can stand in its place; where each plan came from is kept beside it in
/// `sources` (one per module, same order) rather than in the report model.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Dump {
    /// Every module with a plan, largest peak first (as a capture's report orders them).
    pub modules: Vec<ModuleReport>,
    /// Where each module's plan came from, in the order of `modules`.
    pub sources: Vec<ModuleSource>,
    /// What could not be read, and what to do about it.
    pub notes: Vec<Note>,
}

impl Dump {
    /// Where the plan of the module labelled `label` came from.
    pub fn source_of(&self, label: &str) -> Option<&ModuleSource> {
        self.sources.iter().find(|s| s.label == label)
    }
}

/// Where one module's plan came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ModuleSource {
    /// The module's label, `name(program_id)`.
    pub label: String,
    pub plan: PlanSource,
    /// The dump files the plan was read from.
    pub files: Vec<String>,
}

/// How a plan was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PlanSource {
    /// From `*after_optimizations.hlo.pb`: exact, the capture's own analysis.
    Proto,
    /// Rebuilt from the text files: totals exact, the peak rebuilt (see its
    /// `replay_note`).
    Text,
}

/// The modules of a dump handed in as files. Files that are not part of a module's
/// optimized plan (`before_optimizations`, `.o`, `.ll`, …) are ignored.
pub fn read(files: &[DumpFile<'_>]) -> Result<Dump, DumpError> {
    let mut collector = Collector::default();
    if files.len() > MAX_FILES {
        let text = format!(
            "{} files were given; the first {MAX_FILES} are read",
            files.len()
        );
        collector.note("dump_files_capped", text);
    }
    let named = files
        .iter()
        .take(MAX_FILES)
        .map(|f| (f.name.to_owned(), *f));
    let grouping = names::group(named);
    collector.grouping(&grouping);
    for (key, module) in grouping.modules.iter().take(MAX_MODULES) {
        let proto = module
            .proto
            .and_then(|f| capped(&mut collector, f, MAX_PROTO_BYTES));
        if proto.is_some_and(|f| collector.proto(key, f)) {
            continue;
        }
        let t = &module.text;
        let mut cap = |f: Option<_>| f.and_then(|f| capped(&mut collector, f, MAX_TEXT_BYTES));
        let text = TextSet {
            assignment: cap(t.assignment),
            values: cap(t.values),
            live_range: cap(t.live_range),
            hlo: cap(t.hlo),
            usage_report: cap(t.usage_report),
        };
        if !collector.text(key, &text) && module.proto.is_none() && t.assignment.is_none() {
            collector.missing(key);
        }
    }
    collector.finish("the files given", grouping.dump_files)
}

/// The file, or `None` (with a note) when it is over `cap` bytes.
fn capped<'a>(collector: &mut Collector, file: DumpFile<'a>, cap: u64) -> Option<DumpFile<'a>> {
    let bytes = u64::try_from(file.bytes.len()).unwrap_or(u64::MAX);
    if bytes > cap {
        collector.too_large(names::base_name(file.name), bytes, cap);
        return None;
    }
    Some(file)
}
