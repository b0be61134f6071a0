//! What the device held when the framework found it (TensorFlow's device properties,
//! `totalMemory: 11.92GiB freeMemory: 496.38MiB`), for a tensor's failure later in the
//! run that states nothing else of the memory (`free_at_start_bytes`):
//! - **Little free at start:** other processes held most of the device before this one
//!   began (infogan#5: 496 MiB of 12 GiB free, a 24.5 MiB tensor failing later).
//! - **Nearly all free at start:** nothing else held it then, so this process's own
//!   tensors most likely filled it by the failure (tf-seq2seq#11: 5.83 of 5.93 GiB free).
//!
//! In between, the start says too little.

use crate::diagnosis::line::{advice, pct, Context, Line};
use crate::diagnosis::oom;
use crate::evidence::message::OomMessage;
use crate::report::model::{Diagnosis, DiagnosisId, Label};
use crate::units::size;

use super::batch::unexplained;

/// Under this share of the device free at start, others held most of it.
const HELD_BEFORE_PERCENT: f64 = 50.0;
/// At this share free at start or more, nothing else held the device.
const ALL_FREE_PERCENT: f64 = 90.0;

/// The device's size and what was free at start, with the failed request in words.
fn at_start(m: &OomMessage) -> Option<(u64, u64, String)> {
    let (total, free) = (m.capacity_bytes?, m.free_at_start_bytes?);
    let request = match (oom::request(m), m.requested_shape.as_deref()) {
        (Some(r), Some(shape)) => format!("the request of {} (a tensor {shape})", size(r)),
        (Some(r), None) => format!("the request of {}", size(r)),
        (None, _) => "the request".to_owned(),
    };
    (total > 0).then_some((total, free, request))
}

/// Little of the device was free when the framework found it.
pub fn held_before_start(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let (total, free, request) = at_start(m)?;
    if pct(free, total) >= HELD_BEFORE_PERCENT {
        return None;
    }
    let text = format!(
        "when the framework found the device, only {} of its {} was free ({:.0}%, read): other processes held {} before this one began, so {request} failed later on a device already mostly taken (estimated)",
        size(free),
        size(total),
        pct(free, total),
        size(total - free)
    );
    let line = Line::new(
        DiagnosisId::HeldElsewhere,
        Label::Estimated,
        text,
        "other processes on the same device before this one started: another training run or notebook kernel, a second session, the display",
    );
    Some(line.fixes(vec![
        advice(
            "find them: nvidia-smi lists the processes on the GPU and what each holds; stop the ones you do not need",
            Some("none: the program itself needs no change"),
        ),
        advice(super::apis::take_what_it_needs(m.framework), None),
    ]))
}

/// Nearly all the device was free when the framework found it.
pub fn free_at_start(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let (total, free, request) = at_start(m)?;
    if pct(free, total) < ALL_FREE_PERCENT {
        return None;
    }
    let text = format!(
        "when the framework found the device, {} of its {} was free ({:.0}%, read): nothing else held it then, so what filled it by the time {request} failed was most likely this process's own tensors, the model at this batch and input size (estimated)",
        size(free),
        size(total),
        pct(free, total)
    );
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Estimated,
        text,
        "the program's own tensors (its batch's activations, its weights and optimizer state, or tensors kept from earlier steps) fill the device",
    );
    let mut fixes = super::apis::own_tensor_fixes(super::apis::of(m));
    fixes.push(advice(
        "if a much smaller batch also fails, something started since holds the device (nvidia-smi lists the processes), or the run keeps tensors from step to step",
        None,
    ));
    Some(line.fixes(fixes))
}
