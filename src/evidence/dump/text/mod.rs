//! A module's plan rebuilt from a text dump (XLA's default, without
//! `--xla_dump_hlo_as_proto`). `docs/xla-dumps.md` describes each file and line read.
//!
//! - Exact, as `memory_analysis()` counts them: the argument, output, alias and temp
//!   totals, host-memory figures, every allocation's size, the memory held for the
//!   whole program, parameter and donation counts (from `*-buffer-assignment.txt`,
//!   donations from the module's `input_output_alias` in `*after_optimizations.txt`).
//! - Rebuilt, said in `replay_note`: the heap peak, the buffers live at it and the
//!   timeline, from each value's offset and live range (`*-live-range.txt`); the
//!   proto's heap-simulator trace is not in the text.
//! - From the HLO text when present: opcodes, `op_name`s, source lines, roles,
//!   rematerialized instructions, host callbacks, scan stacks.

pub mod assignment;
pub mod attrs;
mod buffers;
mod chains;
pub mod hlo;
pub mod live_range;
mod peak;
pub mod replay;
pub mod shape;
mod totals;
pub mod usage_report;

use crate::report::model::{Category, LiveBuffer, Plan, Roles};
use assignment::Assignment;
use buffers::Describe;
use chains::Chains;
use hlo::Hlo;

/// Buffers listed at the peak, as the capture path keeps them.
const LIVE_BUFFERS_KEPT: usize = 200;

/// One module's text files (the buffer assignment is the one that must be there).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextFiles<'a> {
    pub assignment: &'a str,
    pub values: Option<&'a str>,
    pub live_range: Option<&'a str>,
    pub hlo: Option<&'a str>,
    pub usage_report: Option<&'a str>,
}

/// A rebuilt plan, the module's name when the HLO text gives it, and what the files
/// lacked or contradicted.
#[derive(Debug, Clone, Default)]
pub struct TextPlan {
    pub plan: Plan,
    pub module_name: Option<String>,
    pub notes: Vec<String>,
}

/// Rebuilds the plan; `Err` says why there is none.
pub fn plan(files: &TextFiles<'_>) -> Result<TextPlan, String> {
    let assignment = assignment::parse(files.assignment);
    if assignment.allocations.is_empty() {
        return Err("its buffer assignment lists no allocation".into());
    }
    let mut hlo = Hlo::default();
    if let Some(text) = files.hlo {
        hlo.read_module(text);
    }
    // JAX 0.10's XLA writes the values apart; other versions after the allocations.
    for text in files.values.into_iter().chain([files.assignment]) {
        hlo.read_values(text);
    }
    let ranges = files.live_range.map(live_range::parse);
    let chains = Chains::new(&assignment, ranges.as_ref(), &hlo);
    let sequence = ranges
        .as_ref()
        .map(|r| r.sequence.as_slice())
        .unwrap_or_default();
    let mut caveats = Vec::new();
    let mut plan = Plan::default();
    totals::fill(&mut plan, &assignment, &hlo, &mut caveats);
    let mut live = peak::indefinite(&mut plan, &assignment);
    live.extend(peak::heap(
        &mut plan,
        &assignment,
        &chains,
        sequence,
        &mut caveats,
    ));
    plan.peak_bytes = plan.heap_peak_bytes.saturating_add(plan.indefinite_bytes);
    let describe = Describe {
        assignment: &assignment,
        hlo: &hlo,
        chains: &chains,
    };
    describe_live(&mut plan, &describe, &live);
    count_instructions(&mut plan, &hlo);
    plan.replay_note = (!caveats.is_empty()).then(|| caveats.join("; "));
    let mut notes = file_notes(&assignment, &hlo, files);
    if let Some(r) = &ranges {
        if r.unread_lines > 0 {
            notes.push(format!(
                "{} live-range lines could not be read",
                r.unread_lines
            ));
        }
    }
    Ok(TextPlan {
        plan,
        module_name: hlo.module_name,
        notes,
    })
}

/// The live buffers, their roles, padding and scan stacks.
fn describe_live(plan: &mut Plan, describe: &Describe<'_>, live: &[(chains::ValueRef, u64)]) {
    let mut buffers: Vec<LiveBuffer> = live
        .iter()
        .filter_map(|&(value, bytes)| describe.buffer(value, bytes))
        .collect();
    let mut roles = Roles::default();
    for b in buffers.iter().filter(|b| b.category == Category::Temporary) {
        roles.add(b.role, b.bytes);
    }
    plan.roles_at_peak = roles;
    plan.padding_bytes = buffers
        .iter()
        .map(|b| b.bytes.saturating_sub(b.unpadded_bytes))
        .fold(0, u64::saturating_add);
    plan.scan_stacks = describe.scan_stacks(live);
    buffers.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    buffers.truncate(LIVE_BUFFERS_KEPT);
    plan.live_at_peak = buffers;
}

/// Rematerialized instructions and host callbacks, as the capture path counts them.
fn count_instructions(plan: &mut Plan, hlo: &Hlo) {
    plan.remat_instructions = hlo
        .instructions
        .keys()
        .filter(|n| n.contains(".remat"))
        .count() as u64;
    let mut callbacks: Vec<String> = hlo
        .instructions
        .values()
        .filter(|i| i.opcode == "custom-call" && i.custom_call_target.contains("callback"))
        .map(|i| match i.op_name.as_str() {
            "" => i.custom_call_target.clone(),
            op => format!("{} ({})", i.custom_call_target, op),
        })
        .collect();
    callbacks.sort();
    callbacks.dedup();
    plan.host_callbacks = callbacks;
}

/// What the files lack or contradict: unread lines, totals that disagree with the
/// allocations (a file cut short), no HLO text.
fn file_notes(assignment: &Assignment, hlo: &Hlo, files: &TextFiles<'_>) -> Vec<String> {
    let mut notes = Vec::new();
    if assignment.unread_lines > 0 {
        notes.push(format!(
            "{} lines of its buffer assignment could not be read",
            assignment.unread_lines
        ));
    }
    let all: u64 = assignment
        .allocations
        .iter()
        .map(|a| a.size)
        .fold(0, u64::saturating_add);
    let stated = assignment
        .total_bytes_used
        .or_else(|| files.values.and_then(assignment::total_bytes_used));
    let report = files
        .usage_report
        .map(usage_report::parse)
        .unwrap_or_default();
    let mut checks: Vec<(u64, u64)> = stated
        .into_iter()
        .chain(report.all)
        .map(|s| (s, all))
        .collect();
    for (color, stated) in report.by_color {
        let of_color = assignment.allocations.iter().filter(|a| a.color == color);
        checks.push((
            stated,
            of_color.map(|a| a.size).fold(0, u64::saturating_add),
        ));
    }
    if let Some((stated, listed)) = checks.into_iter().find(|(s, l)| s != l) {
        notes.push(format!(
            "its buffer assignment lists {listed} bytes of allocations but the dump's totals say \
             {stated}: a file may be cut short, and the plan may miss allocations"
        ));
    }
    let listed = assignment
        .allocations
        .iter()
        .map(|a| a.values.len())
        .fold(0, usize::saturating_add);
    let used = files
        .values
        .map(|t| t.lines().filter(|l| l.starts_with('<')).count());
    if used.is_some_and(|used| used != listed) {
        notes.push(format!(
            "its buffer assignment places {listed} values but the values file lists {}: a file \
             may be cut short, and the peak may miss buffers",
            used.unwrap_or(0)
        ));
    }
    let texts = [
        Some(files.assignment),
        files.values,
        files.live_range,
        files.hlo,
    ];
    if texts
        .into_iter()
        .flatten()
        .any(|t| !t.is_empty() && !t.ends_with('\n'))
    {
        notes.push(
            "a text file ends mid-line: it was cut short, and the plan may be incomplete".into(),
        );
    }
    if !hlo.has_module {
        notes.push(
            "the dump has no optimized HLO text (*after_optimizations.txt): opcodes, op names and \
             source lines are only those the values file gives, and donations are guessed"
                .into(),
        );
    }
    notes
}
