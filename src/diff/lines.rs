//! The diagnosis lines of two runs compared by id, and each resolved line's estimated
//! saving beside the saving measured now.

use super::model::{
    signed_delta, BufferChange, Change, DiagnosisChange, MatchTier, Prediction, RuntimeDelta,
    ScanStackChange,
};
use crate::plan::shape::dims_of;
use crate::report::model::{DiagnosisId, HostReport, Plan, Role};

/// A report's diagnosis ids, in report order, each once.
fn ids(report: &HostReport) -> Vec<DiagnosisId> {
    let mut out: Vec<DiagnosisId> = Vec::new();
    for d in &report.diagnosis {
        if !out.contains(&d.id) {
            out.push(d.id);
        }
    }
    out
}

/// Resolved (before only), new (after only) and remaining (both), by id.
pub fn compare(before: &HostReport, after: &HostReport) -> DiagnosisChange {
    let (b, a) = (ids(before), ids(after));
    DiagnosisChange {
        compared: true,
        resolved: b.iter().copied().filter(|id| !a.contains(id)).collect(),
        gone: Vec::new(),
        new: a.iter().copied().filter(|id| !b.contains(id)).collect(),
        remaining: b.iter().copied().filter(|id| a.contains(id)).collect(),
    }
}

/// For each resolved id whose lines estimated a saving: that estimate (added up over
/// the id's lines), and the drop of the module's peak from before to after.
pub fn predictions(
    before: &HostReport,
    resolved: &[DiagnosisId],
    plans: (&Plan, &Plan),
    runtime: Option<&RuntimeDelta>,
) -> Vec<Prediction> {
    let actual = signed_delta(plans.1.peak_bytes, plans.0.peak_bytes);
    let in_use = runtime.map(|r| -r.peak_in_use_bytes.delta);
    resolved
        .iter()
        .filter_map(|&id| {
            let lines: Vec<_> = before.diagnosis.iter().filter(|d| d.id == id).collect();
            let estimates: Vec<u64> = lines.iter().filter_map(|d| d.saving_bytes).collect();
            if estimates.is_empty() {
                return None;
            }
            Some(Prediction {
                id,
                subject: None,
                lines: lines.len() as u64,
                estimated_saving_bytes: estimates.into_iter().fold(0, u64::saturating_add),
                actual_saving_bytes: actual,
                actual_in_use_saving_bytes: in_use,
                bound: lines.iter().find_map(|d| d.saving_bound.clone()),
                fix: None,
            })
        })
        .collect()
}

/// The scan stacks that went away while `scan_stack` lines remain: each one's line
/// (the before run's line about that stack) was resolved on its own.
pub fn scan_stack_predictions(
    before: &HostReport,
    change: &DiagnosisChange,
    stacks: &[ScanStackChange],
    plans: (&Plan, &Plan),
    runtime: Option<&RuntimeDelta>,
) -> Vec<Prediction> {
    if !change.remaining.contains(&DiagnosisId::ScanStack) {
        return Vec::new();
    }
    let actual = signed_delta(plans.1.peak_bytes, plans.0.peak_bytes);
    let in_use = runtime.map(|r| -r.peak_in_use_bytes.delta);
    stacks
        .iter()
        .filter(|s| s.change == Change::OnlyBefore)
        .filter_map(|s| {
            let subject = format!(
                "{} ×{} via {}",
                s.shape,
                s.count_before,
                s.while_before.as_deref().unwrap_or_default()
            );
            // The scan_stack rule writes one line per loop, its stacks as items; a
            // forward stack's bytes are its share of the line's estimated saving.
            let loop_name = s.while_before.as_deref()?;
            let line = before.diagnosis.iter().find(|d| {
                d.id == DiagnosisId::ScanStack && d.subject.as_deref() == Some(loop_name)
            })?;
            line.saving_bytes?;
            let item = line.items.iter().find(|i| {
                i.role == Role::Forward && i.shape == s.shape && i.count == s.count_before
            })?;
            Some(Prediction {
                id: DiagnosisId::ScanStack,
                subject: Some(subject),
                lines: 1,
                estimated_saving_bytes: item.bytes,
                actual_saving_bytes: actual,
                actual_in_use_saving_bytes: in_use,
                bound: None,
                fix: None,
            })
        })
        .collect()
}

/// When the buffers matched by op and source line changed only their leading
/// dimension, all by one ratio (the batch changed), and the before run's line on the
/// activations proposed a smaller micro-batch: that fix's estimate for this batch (the
/// before run's heap peak scaled by the ratio: its temporaries scale with the batch)
/// beside what it saved.
pub fn batch_prediction(
    before: &HostReport,
    buffers: &[BufferChange],
    plans: (&Plan, &Plan),
    runtime: Option<&RuntimeDelta>,
) -> Option<Prediction> {
    before
        .diagnosis
        .iter()
        .find(|d| d.id == DiagnosisId::RoleForward)?;
    let (from, to) = batch_change(buffers)?;
    let heap = plans.0.heap_peak_bytes;
    let estimated = heap.saturating_sub(heap.saturating_mul(to) / from.max(1));
    Some(Prediction {
        id: DiagnosisId::RoleForward,
        subject: Some(format!("a batch of {to} instead of {from}")),
        lines: 1,
        estimated_saving_bytes: estimated,
        actual_saving_bytes: signed_delta(plans.1.peak_bytes, plans.0.peak_bytes),
        actual_in_use_saving_bytes: runtime.map(|r| -r.peak_in_use_bytes.delta),
        bound: None,
        fix: Some("a smaller micro-batch".into()),
    })
}

/// The batch before and after, when at least two buffers matched by op and source line
/// kept every dimension but the leading one, and the most of them agree on its change.
fn batch_change(buffers: &[BufferChange]) -> Option<(u64, u64)> {
    let mut seen: Vec<((u64, u64), u32)> = Vec::new();
    for b in buffers
        .iter()
        .filter(|b| b.matched_by == Some(MatchTier::OpNameSource))
    {
        let Some(after) = b.shape_after.as_deref() else {
            continue;
        };
        let (x, y) = (dims_of(&b.shape), dims_of(after));
        let same_rest = x.len() == y.len() && x.len() >= 2 && x.get(1..) == y.get(1..);
        match (x.first(), y.first()) {
            (Some(&f), Some(&t)) if same_rest && f != t && f > 0 && t > 0 => {
                match seen.iter_mut().find(|s| s.0 == (f, t)) {
                    Some(s) => s.1 += 1,
                    None => seen.push(((f, t), 1)),
                }
            }
            _ => {}
        }
    }
    seen.into_iter()
        .filter(|s| s.1 >= 2)
        .max_by_key(|s| s.1)
        .map(|s| s.0)
}
