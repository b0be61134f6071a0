//! The diagnosis rules: one small function per diagnosis id and evidence, grouped by
//! what they read — the plan (`plan`), the runtime events (`runtime`), the error
//! message (`message`, `tpu`), device memory profiles (`profiles`). Each returns its
//! line (or lines) or nothing; [`RULES`] runs them in the order the report lists them,
//! one entry per id: where several kinds of evidence can show the same finding, the
//! entry takes the first that does (a capture's plan before the message). Adding a rule
//! means adding one function, one entry here, one title in `report::present`, and one
//! test.

pub mod advisory;
pub mod apis;
pub mod batch;
pub mod buffer;
pub mod fragmentation;
pub mod held;
pub mod message;
pub mod message_fixes;
pub mod plan;
pub mod pool;
pub mod profiles;
pub mod runtime;
pub mod scoped;
pub mod start;
pub mod tpu;

use super::line::{Context, Line};
use crate::report::model::{DiagnosisId, Label};

/// A rule: one line at most, or one line per finding.
pub enum Rule {
    One(fn(&Context<'_>) -> Option<Line>),
    Each(fn(&Context<'_>) -> Vec<Line>),
}

/// Every rule, in report order: what the capture lacks, the plan (or what the message
/// says of it), then the runtime, and last the aggregate when nothing explains it.
pub const RULES: &[Rule] = &[
    Rule::One(no_plan_in_capture),
    // What the whole story is, when it is there: one kernel's blocks, a fragmented pool,
    // memory held by something else than a small program, one buffer or a size no
    // device has.
    Rule::One(scoped::scoped_memory),
    Rule::One(advisory::allocator_warning),
    Rule::One(advisory::host_warning),
    Rule::One(advisory::usage_warning),
    Rule::One(fragmentation::fragmentation),
    Rule::One(held::held_elsewhere),
    Rule::One(buffer::one_buffer),
    Rule::One(plan::plan_exceeds_capacity),
    Rule::One(tpu::sparsecore_dominates),
    Rule::One(plan::role_forward),
    Rule::One(plan::role_backward),
    Rule::One(plan::role_workspace),
    Rule::One(plan::no_donation),
    Rule::One(|cx| plan::xla_remat(cx).or_else(|| message::xla_remat(cx))),
    Rule::Each(plan::scan_stack),
    Rule::One(|cx| plan::debug_callback(cx).or_else(|| message::debug_callback(cx))),
    Rule::One(|cx| plan::tpu_padding(cx).or_else(|| tpu::tpu_padding(cx))),
    Rule::One(message::arguments_dominate),
    Rule::One(plan::host_offload),
    Rule::One(runtime::no_allocator_events),
    Rule::One(|cx| {
        runtime::growth_per_execution(cx).or_else(|| profiles::growth_between_profiles(cx))
    }),
    Rule::One(|cx| runtime::other_live_arrays(cx).or_else(|| message::other_live_arrays(cx))),
    Rule::One(runtime::allocator_retry),
    Rule::One(runtime::mem_fraction_set),
    Rule::One(message::aggregate_too_big),
];

/// What the report says when a capture has no compiled plans, and how to get them.
pub const NO_PLAN_TEXT: &str = "the capture has no compiled plans (no /host:metadata plane with HloProtos): \
plan figures are unavailable. Capture with jax.profiler.trace(logdir) on a JAX that records them (the default; \
do not pass enable_hlo_proto=False in ProfileOptions), and on GPU keep \
XLA_FLAGS=--xla_gpu_executable_embed_debug_info=true (the default)";

/// No compiled plan in the capture: plan figures are unavailable, and how to get them.
fn no_plan_in_capture(cx: &Context<'_>) -> Option<Line> {
    (cx.capture && cx.report.modules.is_empty()).then(|| {
        Line::new(
            DiagnosisId::NoPlanInCapture,
            Label::Read,
            NO_PLAN_TEXT.into(),
            "the capture has no /host:metadata plans",
        )
    })
}
