//! The diagnosis rules: one small function per diagnosis id, grouped by what they
//! read. Each returns its line (or lines) or nothing; [`RULES`] runs them in the order
//! the report lists them. Adding a rule means adding one function, one entry here, one
//! title in `report::present`, and one test.

pub mod plan;
pub mod runtime;

use super::line::{Context, Line};
use crate::report::model::{DiagnosisId, Label};

/// A rule: one line at most, or one line per finding.
pub enum Rule {
    One(fn(&Context<'_>) -> Option<Line>),
    Each(fn(&Context<'_>) -> Vec<Line>),
}

/// Every rule, in report order: what the capture lacks, the plan, then the runtime.
pub const RULES: &[Rule] = &[
    Rule::One(no_plan_in_capture),
    Rule::One(plan::plan_exceeds_capacity),
    Rule::One(plan::role_forward),
    Rule::One(plan::role_backward),
    Rule::One(plan::role_workspace),
    Rule::One(plan::no_donation),
    Rule::One(plan::xla_remat),
    Rule::Each(plan::scan_stack),
    Rule::One(plan::debug_callback),
    Rule::One(plan::large_replicated),
    Rule::One(plan::tpu_padding),
    Rule::One(plan::host_offload),
    Rule::One(runtime::no_allocator_events),
    Rule::One(runtime::growth_per_execution),
    Rule::One(runtime::other_live_arrays),
    Rule::One(runtime::allocator_retry),
    Rule::One(runtime::mem_fraction_set),
];

/// What the report says when a capture has no compiled plans, and how to get them.
pub const NO_PLAN_TEXT: &str = "the capture has no compiled plans (no /host:metadata plane with HloProtos): \
plan figures are unavailable. Capture with jax.profiler.trace(logdir) on a JAX that records them (the default; \
do not pass enable_hlo_proto=False in ProfileOptions), and on GPU keep \
XLA_FLAGS=--xla_gpu_executable_embed_debug_info=true (the default)";

/// No compiled plan in the capture: plan figures are unavailable, and how to get them.
fn no_plan_in_capture(cx: &Context<'_>) -> Option<Line> {
    cx.report.modules.is_empty().then(|| {
        Line::new(
            DiagnosisId::NoPlanInCapture,
            Label::Read,
            NO_PLAN_TEXT.into(),
            "the capture has no /host:metadata plans",
        )
    })
}
