//! Rules on device memory profiles (figures measured: what the program held when each
//! was saved): the Python line whose arrays grew from the first profile to the last.

use crate::diagnosis::line::{Context, Line};
use crate::evidence::device_profile::KIND_BUFFER;
use crate::report::model::{DiagnosisId, Label};
use crate::units::size;

use super::plan::NOTEWORTHY;

/// Arrays made at one line grew between the first and last profile, at every profile:
/// the program keeps what that line makes (a leak across steps).
pub fn growth_between_profiles(cx: &Context<'_>) -> Option<Line> {
    let report = cx.report;
    let (first, last) = (report.profiles.first()?, report.profiles.last()?);
    let g = report
        .growth
        .iter()
        .filter(|g| g.kind == KIND_BUFFER && g.bytes > 0 && g.rose_every_step)
        .max_by_key(|g| g.bytes)?;
    if (g.bytes as u64) < NOTEWORTHY {
        return None;
    }
    let every = if report.profiles.len() > 2 {
        format!(", rising at each of the {} profiles", report.profiles.len())
    } else {
        String::new()
    };
    let text = format!(
        "the arrays made at {} grew by {} ({:+} buffers) from {} to {} (measured{every}): the program keeps what this line makes; the profiles hold {} → {} in all",
        g.frame,
        size(g.bytes as u64),
        g.count,
        first.file,
        last.file,
        size(first.total_bytes),
        size(last.total_bytes),
    );
    let line = Line::new(
        DiagnosisId::GrowthPerExecution,
        Label::Measured,
        text,
        "arrays made every step stay referenced (a leak across steps)",
    );
    Some(
        line.fix(format!(
            "find what keeps the arrays made at {} alive — a list that appends each step's outputs, a cache, a closure — and drop the reference, reduce inside the step (a norm, not the tree), or jax.device_get the value; a bigger pool only delays the OOM",
            g.frame
        ))
        .saving(Some(g.bytes as u64))
        .cost("none"),
    )
}
