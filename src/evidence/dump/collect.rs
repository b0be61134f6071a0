//! Gathers the modules of a dump one at a time (proto first, text when the proto is
//! missing or unusable), with notes for what could not be read, into a [`Dump`].

use super::names::{base_name, Grouping, ModuleKey, TextSet};
use super::proto::{self, Outcome};
use super::text::{self, TextFiles};
use super::{Dump, DumpError, DumpFile, ModuleSource, PlanSource};
use crate::report::model::{ModuleReport, Note};

/// Modules read from one dump; the rest are named in a note.
pub const MAX_MODULES: usize = 10_000;

#[derive(Default)]
pub struct Collector {
    found: Vec<(ModuleReport, ModuleSource)>,
    notes: Vec<Note>,
    /// The first proto that was not an HloProto: (file, why).
    corrupt: Option<(String, String)>,
    /// The first plan file skipped for its size: (file, bytes, cap).
    too_large: Option<(String, u64, u64)>,
    /// The first file that could not be read: (path, why).
    unreadable: Option<(std::path::PathBuf, String)>,
}

impl Collector {
    pub fn note(&mut self, id: &str, text: String) {
        self.notes.push(Note {
            id: id.into(),
            text,
        });
    }

    /// Notes for the grouping itself: duplicate files, modules over the cap.
    pub fn grouping<T>(&mut self, grouping: &Grouping<T>) {
        if let Some(first) = grouping.duplicates.first() {
            self.note(
                "dump_duplicate_file",
                format!(
                    "{} dump files were given twice (first: {first}); the first copy of each is read",
                    grouping.duplicates.len()
                ),
            );
        }
        if grouping.modules.len() > MAX_MODULES {
            self.note(
                "dump_modules_capped",
                format!(
                    "the dump holds {} modules; the first {MAX_MODULES} are read",
                    grouping.modules.len()
                ),
            );
        }
    }

    /// A plan file over the size cap, not read.
    pub fn too_large(&mut self, file: &str, bytes: u64, cap: u64) {
        self.note(
            "dump_file_too_large",
            format!("{file} holds {bytes} bytes, over the {cap}-byte cap: it is not read"),
        );
        self.too_large.get_or_insert((file.to_owned(), bytes, cap));
    }

    /// A file that could not be read (only a directory walk reads files).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn unreadable(&mut self, path: &std::path::Path, why: &str) {
        let text = format!("cannot read {}: {why}; it is left out", path.display());
        self.note("dump_file_unreadable", text);
        self.unreadable
            .get_or_insert_with(|| (path.to_owned(), why.to_owned()));
    }

    /// Tries the module's proto; `true` when it gave the plan.
    pub fn proto(&mut self, key: &ModuleKey, file: DumpFile<'_>) -> bool {
        let name = base_name(file.name);
        match proto::read_module(key, file.bytes) {
            Outcome::Plan(report) => {
                self.found(*report, PlanSource::Proto, vec![name.to_owned()]);
                true
            }
            Outcome::NoAssignment => {
                self.note(
                    "dump_proto_without_assignment",
                    format!(
                        "{name}: its HloProto has no buffer assignment; the text files are read \
                         if the dump has them"
                    ),
                );
                false
            }
            Outcome::Corrupt(why) => {
                self.note(
                    "dump_proto_unreadable",
                    format!(
                        "{name} is not a readable HloProto ({why}); the text files are read if \
                         the dump has them"
                    ),
                );
                self.corrupt.get_or_insert((name.to_owned(), why));
                false
            }
        }
    }

    /// Tries the module's text files; `true` when they gave the plan.
    pub fn text(&mut self, key: &ModuleKey, files: &TextSet<DumpFile<'_>>) -> bool {
        let Some(assignment) = files.assignment else {
            return false;
        };
        let (values, live_range, hlo, usage_report) = (
            lossy(files.values),
            lossy(files.live_range),
            lossy(files.hlo),
            lossy(files.usage_report),
        );
        let assignment_text = String::from_utf8_lossy(assignment.bytes);
        let input = TextFiles {
            assignment: &assignment_text,
            values: values.as_deref(),
            live_range: live_range.as_deref(),
            hlo: hlo.as_deref(),
            usage_report: usage_report.as_deref(),
        };
        match text::plan(&input) {
            Ok(rebuilt) => {
                let report = text_report(key, rebuilt.plan, rebuilt.module_name);
                for why in rebuilt.notes {
                    self.note("dump_text_incomplete", format!("{}: {why}", report.label));
                }
                let used = [
                    Some(assignment),
                    files.values,
                    files.live_range,
                    files.hlo,
                    files.usage_report,
                ];
                let names = used
                    .into_iter()
                    .flatten()
                    .map(|f| base_name(f.name).to_owned());
                let names = names.collect();
                self.found(report, PlanSource::Text, names);
                true
            }
            Err(why) => {
                let text = format!(
                    "{}: {why}; its plan is left out",
                    base_name(assignment.name)
                );
                self.note("dump_text_unreadable", text);
                false
            }
        }
    }

    /// A module with files but no plan from any of them.
    pub fn missing(&mut self, key: &ModuleKey) {
        self.note(
            "dump_plan_missing",
            format!(
                "{} has no readable plan (no *after_optimizations.hlo.pb with a buffer assignment, \
                 no *-buffer-assignment.txt); dump with --xla_dump_hlo_as_proto",
                key.describe()
            ),
        );
    }

    fn found(&mut self, report: ModuleReport, plan: PlanSource, files: Vec<String>) {
        let source = ModuleSource {
            label: report.label.clone(),
            plan,
            files,
        };
        self.found.push((report, source));
    }

    /// The dump, largest peak first; or the error that says why there is none.
    pub fn finish(mut self, place: &str, dump_files: usize) -> Result<Dump, DumpError> {
        if self.found.is_empty() {
            return Err(match (self.corrupt, self.too_large, self.unreadable) {
                (Some((file, why)), _, _) => DumpError::CorruptProto { file, why },
                (None, Some((file, bytes, cap)), _) => DumpError::TooLarge { file, bytes, cap },
                (None, None, Some((path, message))) => DumpError::Unreadable { path, message },
                _ if dump_files == 0 => DumpError::NoDumpFiles {
                    place: place.into(),
                },
                _ => DumpError::NoPlan {
                    place: place.into(),
                },
            });
        }
        // As a capture's report orders them.
        self.found.sort_by(|(a, _), (b, _)| {
            b.plan
                .peak_bytes
                .cmp(&a.plan.peak_bytes)
                .then_with(|| a.label.cmp(&b.label))
        });
        let (modules, sources) = self.found.into_iter().unzip();
        Ok(Dump {
            modules,
            sources,
            notes: self.notes,
        })
    }
}

/// A text file's text (XLA writes UTF-8; anything else is replaced, not refused).
fn lossy(file: Option<DumpFile<'_>>) -> Option<std::borrow::Cow<'_, str>> {
    file.map(|f| String::from_utf8_lossy(f.bytes))
}

/// The text plan as a module report: the HLO text's module name (else the file
/// name's), the file's number as the program id.
fn text_report(
    key: &ModuleKey,
    plan: crate::report::model::Plan,
    name: Option<String>,
) -> ModuleReport {
    let name = name
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| key.name_hint().to_owned());
    ModuleReport {
        label: format!("{name}({})", key.number),
        name,
        program_id: key.number,
        executions: 0,
        plan,
        plan_source: None,
    }
}
