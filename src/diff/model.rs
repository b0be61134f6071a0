//! The comparison of two runs: what `oomlens diff` prints and its JSON (schema
//! `oomlens-diff/1`, `schema/oomlens-diff.schema.json`). Keys here are a public
//! contract, as the report's are.
//!
//! Signs: every `delta` is after − before, so a negative delta is memory saved; every
//! `saving` is before − after, so a positive saving is memory saved.
//!
//! Provenance: plan figures (`before.plan`, `after.plan`, `delta`, `buffers`,
//! `scan_stacks`) are **read** from the compiled plans; `runtime` is **measured** from
//! allocator events; `estimated_saving_bytes` is **estimated** (the before run's
//! diagnosis said so); `actual_saving_bytes` is **read** (the plans' peaks).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::report::model::{Category, DiagnosisId, Label, Note, Plan, Role, Verdict};

/// The comparison's format and version, written as `schema`.
pub const SCHEMA: &str = "oomlens-diff/1";

/// Two runs compared, host by host.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiffReport {
    /// Always `oomlens-diff/1`.
    pub schema: String,
    /// The tool and its version (`oomlens 0.1.0`).
    pub tool: String,
    /// One comparison per host both runs have (a host file of each when each run has
    /// one). With one, its fields are the JSON's top level (see `report::diff_json`).
    pub hosts: Vec<Diff>,
    /// Hosts only the before run has: not compared.
    pub hosts_only_before: Vec<String>,
    /// Hosts only the after run has: not compared.
    pub hosts_only_after: Vec<String>,
}

/// One host's module in two runs, compared.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Diff {
    /// The host compared (its name in the before run; `before.host` and `after.host`
    /// differ when each run is one file of another name).
    pub host: String,
    /// The run before the change.
    pub before: Side,
    /// The run after the change.
    pub after: Side,
    /// How the modules compared were chosen.
    pub module_choice: ModuleChoice,
    /// The change in one sentence, with the figures it quotes.
    pub headline: DiffHeadline,
    /// after − before of each plan figure (read); absent when a run has no plan.
    pub delta: Option<PlanDelta>,
    /// The buffers live at the peak of either run, matched across the runs (read):
    /// every buffer of both lists once, unchanged ones included, largest change first.
    pub buffers: Vec<BufferChange>,
    /// The sum of `delta_bytes` over the matched buffers (signed).
    pub matched_delta_bytes: i64,
    /// Bytes of the buffers found only in the before run (they went away).
    pub unmatched_before_bytes: u64,
    /// Bytes of the buffers found only in the after run (they appeared).
    pub unmatched_after_bytes: u64,
    /// How the buffers add up to the change of the peak; absent when a run has no plan.
    pub reconciliation: Option<Reconciliation>,
    /// The stacks `lax.scan` keeps, matched by their `while` loop (read).
    pub scan_stacks: Vec<ScanStackChange>,
    /// Runtime figures of both runs (measured), when both recorded allocator events.
    pub runtime: Option<RuntimeDelta>,
    /// Diagnosis lines, by id: which the change resolved, which it brought, which remain.
    pub diagnosis: DiagnosisChange,
    /// For each line no longer reported (resolved or gone) that estimated a saving: the
    /// estimate beside the saving measured now. A line is no longer reported when its id
    /// is not (all the lines of that id), or, for a scan stack, when its stack went away
    /// while other stacks remain.
    pub predicted_vs_actual: Vec<Prediction>,
    /// What could not be compared, and what only one run has (`id`, `text`).
    pub notes: Vec<Note>,
}

/// One run, as compared.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Side {
    /// The capture file the run's report was made from.
    pub file: String,
    /// When both runs' files share a name: the run's folder name, when the caller knows
    /// it (`oomlens diff` takes the nearest folder above each path whose names differ).
    pub run: Option<String>,
    /// The host the file is named for (`<host>.xplane.pb`).
    pub host: String,
    /// The label (`name(program_id)`) of the module compared; absent when the run has
    /// no compiled plan.
    pub module: Option<String>,
    /// How many times that module executed in the capture (measured).
    pub executions: Option<u64>,
    /// That module's plan, as the run's report has it (read).
    pub plan: Option<Plan>,
    /// Whether the run's report (its verdict and diagnosis) is about this module.
    pub selected: bool,
    /// The run's verdict.
    pub verdict: Verdict,
    /// The run's headline sentence.
    pub headline: String,
    /// The pool the run's plan is compared against: its allocator's capacity
    /// (measured), else the capacity its pasted error names (read).
    pub pool_bytes: Option<u64>,
    /// Where that pool figure comes from (`measured`, or `read` from the pasted error).
    pub pool_label: Option<Label>,
}

/// How the modules compared were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ModuleChoice {
    /// Named by the user (`--module`), found in both runs.
    Asked,
    /// The module each run's report is about; their names agree.
    Selected,
    /// The largest module whose name both runs have (the selected ones differ).
    LargestCommon,
    /// Each run's selected module: the runs have no module name in common.
    NoCommonName,
    /// A run has no compiled plan: plans are not compared.
    NoPlan,
}

/// The change in one sentence.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiffHeadline {
    /// "peak 62.9 MiB → 24.4 MiB (−61.2%): now fits the 48.0 MiB pool".
    pub text: String,
    /// The module's peak in each run (read): heap peak + memory held for the whole
    /// program, as XProf's Memory Viewer.
    pub peak_before_bytes: Option<u64>,
    /// The module's peak in the after run (read).
    pub peak_after_bytes: Option<u64>,
    /// Whether the after run fits its pool, and did before.
    pub fit: Fit,
    /// The pool the fit is judged against (the after run's, else the before run's).
    pub pool_bytes: Option<u64>,
    /// Where the pool figure comes from (`measured`, or `read` from a pasted error).
    pub pool_label: Option<Label>,
    /// How much the after run's plan still exceeds the pool (its needs − the pool),
    /// when it does not fit.
    pub short_bytes: Option<u64>,
}

/// Whether the plan fits its pool (needs ≤ pool, as each run's verdict judges it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    /// It did not fit before and fits after.
    NowFits,
    /// It fit before and fits after.
    StillFits,
    /// It did not fit before and still does not.
    StillDoesNotFit,
    /// It fit before and does not after.
    NoLongerFits,
    /// No pool is known (no allocator events, no pasted error), or a run has no plan.
    Unknown,
}

/// after − before of each plan figure, in bytes (negative: the after run needs less).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct PlanDelta {
    /// Of `memory_analysis().argument_size_in_bytes`.
    pub argument_bytes: i64,
    /// Of `output_size_in_bytes`.
    pub output_bytes: i64,
    /// Of `alias_size_in_bytes` (donated parameters reused for outputs).
    pub alias_bytes: i64,
    /// Of `temp_size_in_bytes`.
    pub temp_bytes: i64,
    /// Of the heap peak (temporary buffers at their peak).
    pub heap_peak_bytes: i64,
    /// Of the peak (heap peak + memory held for the whole program).
    pub peak_bytes: i64,
    /// Of the donated parameters' bytes.
    pub donated_bytes: i64,
    /// Of what the program needs at once (argument + output + temp − alias).
    pub total_bytes: i64,
    /// Of the memory held for the whole program (parameters, outputs, constants).
    pub indefinite_bytes: i64,
    /// Of the heap at its peak, by role.
    pub roles_at_peak: RolesDelta,
}

/// after − before of the heap at its peak, by role.
#[derive(Debug, Clone, Copy, Default, Serialize, JsonSchema)]
pub struct RolesDelta {
    /// Forward activations kept for the backward pass.
    pub forward: i64,
    /// Gradients and their temporaries.
    pub backward: i64,
    /// Library scratch (custom-call workspace).
    pub workspace: i64,
    /// Everything else.
    pub other: i64,
}

/// What became of a buffer live at the peak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Matched, and larger after.
    Grew,
    /// Matched, and smaller after.
    Shrank,
    /// Matched, and the same size.
    Unchanged,
    /// Only in the before run: it went away.
    OnlyBefore,
    /// Only in the after run: it appeared.
    OnlyAfter,
}

/// How two buffers (or scan stacks) were found to be the same, tried in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchTier {
    /// Parameters of the same shape (same instruction name first). A donated
    /// parameter's allocation is shared with the output that reuses it, and the plan may
    /// list it under that output's instruction: it is still the parameter.
    Parameter,
    /// Same JAX `op_name`, source line and shape (one of `op_name`, source non-empty).
    OpNameSourceShape,
    /// Same defining instruction name and shape.
    InstructionShape,
    /// Same shape and role.
    ShapeRole,
    /// Same `op_name`, source line and role, and a shape of the same element type and
    /// rank (the batch or a length changed).
    OpNameSource,
    /// Scan stacks: the same `while` loop and shape.
    WhileShape,
}

/// A buffer live at the peak, in one run or both.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BufferChange {
    /// Grew, shrank, unchanged, or found in one run only.
    pub change: Change,
    /// How it was matched; absent for a buffer found in one run only.
    pub matched_by: Option<MatchTier>,
    /// The JAX `op_name` (the before run's when matched).
    pub op_name: String,
    /// `path/file.py:123`, or empty.
    pub source: String,
    /// The shape in the before run (the after run's when only after).
    pub shape: String,
    /// The shape in the after run, when matched with another shape.
    pub shape_after: Option<String>,
    /// Padded bytes in the before run (0 when only after).
    pub before_bytes: u64,
    /// Padded bytes in the after run (0 when only before).
    pub after_bytes: u64,
    /// after_bytes − before_bytes.
    pub delta_bytes: i64,
    /// The defining instruction in the before run (with `{i}` for a tuple element).
    pub instruction_before: Option<String>,
    /// The defining instruction in the after run.
    pub instruction_after: Option<String>,
    /// The defining instruction's opcode (the before run's when matched).
    pub opcode: String,
    /// The role (the before run's when matched).
    pub role: Role,
    /// How its allocation lives in the before run (`temporary` ones make up the heap
    /// peak; the others are held for the whole program).
    pub category_before: Option<Category>,
    /// How its allocation lives in the after run.
    pub category_after: Option<Category>,
}

/// Which plan figure the buffers live at the peak add up to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// `peak_bytes`: the list holds the memory held for the whole program too
    /// (parameters, outputs, constants) beside the heap's temporaries.
    Peak,
    /// `heap_peak_bytes`: the list holds only the heap's temporaries.
    HeapPeak,
}

/// The buffers add up to the change of the peak:
/// `matched_delta_bytes + unmatched_after_bytes − unmatched_before_bytes
///  + unlisted_after_bytes − unlisted_before_bytes = basis_delta_bytes`, exactly.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Reconciliation {
    /// The figure the list adds up to.
    pub basis: Basis,
    /// after − before of that figure.
    pub basis_delta_bytes: i64,
    /// matched_delta_bytes + unmatched_after_bytes − unmatched_before_bytes.
    pub listed_delta_bytes: i64,
    /// The basis figure minus the bytes listed, in each run: 0 when the list holds
    /// everything (it is cut at 200 buffers, and a held allocation is listed by its
    /// largest buffer).
    pub unlisted_before_bytes: i64,
    /// The same for the after run.
    pub unlisted_after_bytes: i64,
    /// Whether the listed buffers alone account for the change (nothing unlisted).
    pub exact: bool,
    /// Of `listed_delta_bytes`, the part in temporary buffers: the change of the heap
    /// peak when `exact`.
    pub heap_delta_bytes: i64,
}

/// A stack `lax.scan` keeps, in one run or both.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ScanStackChange {
    /// Grew, shrank, unchanged, or found in one run only.
    pub change: Change,
    /// How it was matched (`while_shape`, else `shape_role`); absent in one run only.
    pub matched_by: Option<MatchTier>,
    /// The shape of one stacked buffer (`f32[6,8,128,512]`).
    pub shape: String,
    /// The `while` instruction in the before run.
    pub while_before: Option<String>,
    /// The `while` instruction in the after run (renumbered when the program changed).
    pub while_after: Option<String>,
    /// How many buffers of this shape the loop stacks, in the before run.
    pub count_before: u64,
    /// The same in the after run.
    pub count_after: u64,
    /// Bytes stacked in the before run (0 when only after).
    pub before_bytes: u64,
    /// Bytes stacked in the after run (0 when only before).
    pub after_bytes: u64,
    /// after_bytes − before_bytes.
    pub delta_bytes: i64,
    /// The role of the stacked values (the before run's when matched).
    pub role: Role,
}

/// A figure in both runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Figures {
    /// In the before run.
    pub before: u64,
    /// In the after run.
    pub after: u64,
    /// after − before.
    pub delta: i64,
}

impl Figures {
    /// The figures of both runs and their change.
    pub fn of(before: u64, after: u64) -> Self {
        Figures {
            before,
            after,
            delta: signed_delta(before, after),
        }
    }
}

/// Runtime figures of both runs, all **measured** (allocator and execution events).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RuntimeDelta {
    /// The device pool compared in the before run (its first device allocator).
    pub allocator_before: String,
    /// The device pool compared in the after run.
    pub allocator_after: String,
    /// The pool's capacity.
    pub capacity_bytes: Figures,
    /// The most the pool held at once.
    pub peak_in_use_bytes: Figures,
    /// In use at each start of the compared module, in the before run.
    pub in_use_at_starts_before: Vec<u64>,
    /// The same in the after run.
    pub in_use_at_starts_after: Vec<u64>,
    /// In use at the last start of the compared module, when both runs have one.
    pub in_use_at_last_start_bytes: Option<Figures>,
    /// Growth of in-use memory per execution in the before run, when measured.
    pub growth_per_execution_before: Option<i64>,
    /// The same in the after run.
    pub growth_per_execution_after: Option<i64>,
    /// `AllocatorRetry` waits (the allocator found no free memory and waited).
    pub retry_count: Figures,
    /// Their total duration in the before run, in ns.
    pub retry_total_ns_before: f64,
    /// The same in the after run.
    pub retry_total_ns_after: f64,
    /// Executions recorded in each run (of every module).
    pub executions: Figures,
}

/// Diagnosis ids of both runs' reports, compared.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct DiagnosisChange {
    /// Whether both reports are about the modules compared (otherwise the lists are
    /// empty and a note says why).
    pub compared: bool,
    /// In the before run only, and their bytes went away: the module's peak (read) or
    /// the pool's peak in use (measured) dropped. The change resolved them.
    pub resolved: Vec<DiagnosisId>,
    /// In the before run only, but neither peak dropped (or neither was known): the
    /// line is no longer reported, and nothing shows that its bytes went away.
    pub gone: Vec<DiagnosisId>,
    /// In the after run only.
    pub new: Vec<DiagnosisId>,
    /// In both.
    pub remaining: Vec<DiagnosisId>,
}

/// A resolved diagnosis line's estimated saving beside the saving measured now.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Prediction {
    /// The resolved line's id.
    pub id: DiagnosisId,
    /// What the line was about, when lines of its id remain after and this one alone
    /// was resolved: a scan stack that went away (`f32[6,8,128,512] ×2 via while.14`).
    pub subject: Option<String>,
    /// How many of the before run's lines this is about (their estimates are added up:
    /// each is about other buffers).
    pub lines: u64,
    /// What the before run's diagnosis estimated its fix would save (estimated).
    pub estimated_saving_bytes: u64,
    /// The drop of the module's peak (`peak_bytes`, parameters included) from before to
    /// after (read); negative when the peak grew.
    pub actual_saving_bytes: i64,
    /// The drop of the device pool's peak in use (measured), when both runs recorded
    /// allocator events.
    pub actual_in_use_saving_bytes: Option<i64>,
    /// Why the estimate is an upper bound, when the line said it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<String>,
    /// The fix compared, when it is not the one the line's id names (a smaller batch
    /// seen in the buffers' shapes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

/// after − before, saturated to `i64`.
pub fn signed_delta(before: u64, after: u64) -> i64 {
    let d = i128::from(after) - i128::from(before);
    i64::try_from(d).unwrap_or(if d < 0 { i64::MIN } else { i64::MAX })
}

/// What could not be compared, or what only one run has; its sentence is the
/// presentation layer's (`report::present::diff_note`), its id is stable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffNote {
    /// A run has no compiled plan (`side`: `before`, `after` or `either`).
    NoPlan {
        /// `before`, `after` or `either`.
        side: &'static str,
    },
    /// The runs have no module name in common; their selected modules are compared.
    NamesDiffer {
        /// The module compared in the run before.
        before: String,
        /// The module compared in the run after.
        after: String,
    },
    /// A run's report is about another module than the one compared, so its diagnosis
    /// lines are not compared.
    NotSelected {
        /// `before` or `after`.
        side: &'static str,
        /// The module compared.
        module: String,
        /// The module the run's report selected.
        selected: String,
    },
    /// Allocator events are missing in `side` (`before`, `after` or `either`).
    NoAllocatorEvents {
        /// `before`, `after` or `either`.
        side: &'static str,
    },
    /// Only `side` was given the out-of-memory error text.
    ErrorTextOnly {
        /// `before` or `after`.
        side: &'static str,
    },
    /// The pools of the two runs differ.
    PoolsDiffer {
        /// The pool of the run before, in bytes.
        before: u64,
        /// The pool of the run after, in bytes.
        after: u64,
    },
}
