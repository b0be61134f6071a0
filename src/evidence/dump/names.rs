//! The dump's file names: `module_NNNN.<module name>.<stage>after_optimizations<kind>`,
//! where NNNN is the module's unique id (the capture's program id on CPU and GPU) and
//! the stage names the backend (`cpu_`, `sm_8.0_gpu_`, …). Files of one module share
//! everything before `after_optimizations`; `before_optimizations` files, object code
//! (`.o`), LLVM IR (`.ll`) and the rest never match.

use std::collections::BTreeMap;

const MODULE_PREFIX: &str = "module_";
const STAGE: &str = "after_optimizations";

/// What one dump file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `….hlo.pb`: an `xla.HloProto` (module and buffer assignment).
    HloProto,
    /// `….txt`: the optimized module as HLO text.
    HloText,
    /// `…-buffer-assignment.txt`: allocations and the values in them.
    BufferAssignment,
    /// `…-buffer-assignment-values.txt`: each value's defining instruction.
    BufferAssignmentValues,
    /// `…-live-range.txt`: the schedule and each value's live range.
    LiveRange,
    /// `…-memory-usage-report.txt`: totals and largest allocations.
    MemoryUsageReport,
}

const KINDS: [(&str, FileKind); 6] = [
    (".hlo.pb", FileKind::HloProto),
    (".txt", FileKind::HloText),
    ("-buffer-assignment.txt", FileKind::BufferAssignment),
    (
        "-buffer-assignment-values.txt",
        FileKind::BufferAssignmentValues,
    ),
    ("-live-range.txt", FileKind::LiveRange),
    ("-memory-usage-report.txt", FileKind::MemoryUsageReport),
];

/// The module a file belongs to: its number and the name-and-stage stem. Ordered by
/// number, as XLA numbered them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct ModuleKey {
    pub number: u64,
    /// `jit_train_step.cpu_`: everything between the number and `after_optimizations`.
    pub stem: String,
}

impl ModuleKey {
    /// The module name the file name suggests, for when the files do not say it:
    /// the stem less its backend stage (`.cpu_`, `.sm_8.0_gpu_`, `.`).
    pub fn name_hint(&self) -> &str {
        let stem = self.stem.as_str();
        if let Some(name) = stem.strip_suffix('.') {
            return name;
        }
        let Some((name, stage)) = stem.rsplit_once('.') else {
            return stem;
        };
        let is_stage =
            stage.ends_with('_') && stage.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !is_stage {
            return stem;
        }
        // A GPU stage carries the compute capability, `sm_8.0_gpu_`: its dot split it.
        match name.rsplit_once(".sm_") {
            Some((before, major)) if major.chars().all(|c| c.is_ascii_digit()) => before,
            _ => name,
        }
    }

    /// The name used in notes: the file names' common part.
    pub fn describe(&self) -> String {
        format!("{MODULE_PREFIX}{:04}.{}", self.number, self.name_hint())
    }
}

/// The last component of a name that may carry folders (`xla_dump/module_…`).
pub fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// Which module and kind a dump file is, or `None` for files oomlens does not read.
pub fn classify(name: &str) -> Option<(ModuleKey, FileKind)> {
    let rest = base_name(name).strip_prefix(MODULE_PREFIX)?;
    let (digits, rest) = rest.split_once('.')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let number = digits.parse().ok()?;
    let at = rest.find(STAGE)?;
    let stem = rest.get(..at)?;
    let suffix = rest.get(at.saturating_add(STAGE.len())..)?;
    let kind = KINDS.iter().find(|(s, _)| *s == suffix).map(|&(_, k)| k)?;
    let key = ModuleKey {
        number,
        stem: stem.to_owned(),
    };
    Some((key, kind))
}

/// Whether a file looks like part of an XLA dump at all (for the error that says no
/// plan was found, as against no dump).
pub fn is_dump_file(name: &str) -> bool {
    base_name(name).starts_with(MODULE_PREFIX)
}

/// One module's files, by kind; `T` is a file handed in, or a path to read later.
#[derive(Debug)]
pub struct ModuleFiles<T> {
    pub proto: Option<T>,
    pub text: TextSet<T>,
}

/// The text files one module's plan can be rebuilt from.
#[derive(Debug)]
pub struct TextSet<T> {
    pub assignment: Option<T>,
    pub values: Option<T>,
    pub live_range: Option<T>,
    pub hlo: Option<T>,
    pub usage_report: Option<T>,
}

impl<T> Default for ModuleFiles<T> {
    fn default() -> Self {
        Self {
            proto: None,
            text: TextSet {
                assignment: None,
                values: None,
                live_range: None,
                hlo: None,
                usage_report: None,
            },
        }
    }
}

impl<T> ModuleFiles<T> {
    /// The slot for a kind of file.
    fn slot(&mut self, kind: FileKind) -> &mut Option<T> {
        match kind {
            FileKind::HloProto => &mut self.proto,
            FileKind::HloText => &mut self.text.hlo,
            FileKind::BufferAssignment => &mut self.text.assignment,
            FileKind::BufferAssignmentValues => &mut self.text.values,
            FileKind::LiveRange => &mut self.text.live_range,
            FileKind::MemoryUsageReport => &mut self.text.usage_report,
        }
    }
}

/// A dump's files grouped by module.
#[derive(Debug)]
pub struct Grouping<T> {
    pub modules: BTreeMap<ModuleKey, ModuleFiles<T>>,
    /// Files named like dump files (`module_…`), read or not.
    pub dump_files: usize,
    /// Names given twice (the first one is kept).
    pub duplicates: Vec<String>,
}

/// Groups files by module, keeping the first file of each kind.
pub fn group<T>(files: impl IntoIterator<Item = (String, T)>) -> Grouping<T> {
    let mut grouping = Grouping {
        modules: BTreeMap::new(),
        dump_files: 0,
        duplicates: Vec::new(),
    };
    for (name, file) in files {
        if is_dump_file(&name) {
            grouping.dump_files = grouping.dump_files.saturating_add(1);
        }
        let Some((key, kind)) = classify(&name) else {
            continue;
        };
        let slot = grouping.modules.entry(key).or_default().slot(kind);
        if slot.is_some() {
            grouping.duplicates.push(base_name(&name).to_owned());
        } else {
            *slot = Some(file);
        }
    }
    grouping
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    #[test]
    fn classifies_the_files_a_plan_comes_from() {
        let (key, kind) =
            classify("module_0010.jit_train_step.cpu_after_optimizations.hlo.pb").unwrap();
        assert_eq!(key.number, 10);
        assert_eq!(key.stem, "jit_train_step.cpu_");
        assert_eq!(kind, FileKind::HloProto);
        assert_eq!(key.name_hint(), "jit_train_step");
        let name =
            "xla_dump/module_0010.jit_train_step.cpu_after_optimizations-buffer-assignment.txt";
        assert_eq!(classify(name).unwrap().1, FileKind::BufferAssignment);
        for (suffix, kind) in [
            (
                "-buffer-assignment-values.txt",
                FileKind::BufferAssignmentValues,
            ),
            ("-live-range.txt", FileKind::LiveRange),
            ("-memory-usage-report.txt", FileKind::MemoryUsageReport),
            (".txt", FileKind::HloText),
        ] {
            let name = format!("module_0001.f.cpu_after_optimizations{suffix}");
            assert_eq!(classify(&name).unwrap().1, kind, "{name}");
        }
    }

    #[test]
    fn ignores_everything_else() {
        for name in [
            "module_0010.jit_train_step.before_optimizations.hlo.pb",
            "module_0010.jit_train_step.before_optimizations.txt",
            "module_0010.jit_train_step.cpu_after_optimizations-memory-usage-report.pb",
            "module_0010.jit_train_step.obj-file.wrapped_broadcast_kernel_module.o",
            "module_0010.jit_train_step.__compute_module_wrapped_multiply.ir-no-opt.ll",
            "module_0010.jit_train_step.debug_options",
            "module_x.f.cpu_after_optimizations.txt",
            "module_.f.cpu_after_optimizations.txt",
            "compile_options.pb",
            "",
        ] {
            assert!(classify(name).is_none(), "{name}");
        }
    }

    #[test]
    fn name_hints_drop_the_backend_stage() {
        let hint = |stem: &str| {
            ModuleKey {
                number: 1,
                stem: stem.into(),
            }
            .name_hint()
            .to_owned()
        };
        assert_eq!(hint("jit_f.cpu_"), "jit_f");
        assert_eq!(hint("jit_f.sm_8.0_gpu_"), "jit_f");
        assert_eq!(hint("jit_f.gfx90a_gpu_"), "jit_f");
        assert_eq!(hint("jit_f."), "jit_f");
        assert_eq!(hint("jit_f"), "jit_f");
    }

    #[test]
    fn groups_by_module_and_keeps_the_first_of_a_kind() {
        let files = [
            "module_0002.g.cpu_after_optimizations.hlo.pb",
            "module_0001.f.cpu_after_optimizations-buffer-assignment.txt",
            "a/module_0001.f.cpu_after_optimizations-buffer-assignment.txt",
            "module_0001.f.before_optimizations.txt",
            "notes.txt",
        ];
        let g = group(files.iter().map(|n| (n.to_string(), *n)));
        assert_eq!(g.modules.len(), 2);
        assert_eq!(g.dump_files, 4);
        assert_eq!(g.duplicates.len(), 1);
        let first = g.modules.values().next().unwrap();
        assert_eq!(
            first.text.assignment,
            Some("module_0001.f.cpu_after_optimizations-buffer-assignment.txt")
        );
    }
}
