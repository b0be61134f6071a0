//! Diagnosis lines: each finding with its cause, a fix, the bytes the fix would save
//! (estimated), its cost, and whether the plan then fits (the table of lines is in
//! `docs/diagnosis.md#the-diagnosis-lines`). The rules live in [`rules`], one function
//! per diagnosis id; what they read and how they build a line, in [`line`]; the
//! one-sentence verdict, in [`verdict`].

pub mod error_text;
pub mod line;
pub mod message_verdict;
pub mod oom;
pub mod rules;
pub mod verdict;

pub use line::capacity;
pub use rules::NO_PLAN_TEXT;

use crate::report::model::{Diagnosis, HostReport};
use crate::selection::Failure;
use line::Context;
use rules::{Rule, RULES};

/// The diagnosis lines of a report, in order. `failure` is what selection found says
/// the selected module ran out (it counts as memory pressure).
pub fn diagnose(report: &HostReport, failure: Option<&Failure>) -> Vec<Diagnosis> {
    let cx = Context::new(report, failure);
    let mut out = Vec::new();
    for rule in RULES {
        match rule {
            Rule::One(rule) => out.extend(rule(&cx).map(|l| l.build())),
            Rule::Each(rule) => out.extend(rule(&cx).into_iter().map(|l| l.build())),
        }
    }
    // When no line names a cause: the likely one, said as an estimate, else how to
    // find it.
    let last = rules::batch::likely_giant_tensor(&cx, &out)
        .or_else(|| rules::batch::likely_oversized_matrix(&cx, &out))
        .or_else(|| rules::batch::likely_square(&cx, &out))
        .or_else(|| rules::batch::likely_one_activation(&cx, &out))
        .or_else(|| rules::pool::empty_pool(&cx, &out))
        .or_else(|| rules::start::held_before_start(&cx, &out))
        .or_else(|| rules::batch::likely_batch(&cx, &out))
        .or_else(|| rules::pool::full_pool(&cx, &out))
        .or_else(|| rules::pool::pytorch_holds_most(&cx, &out))
        .or_else(|| rules::pool::one_large_tensor(&cx, &out))
        .or_else(|| rules::pool::pool_at_limit(&cx, &out))
        .or_else(|| rules::pool::mostly_free_at_limit(&cx, &out))
        .or_else(|| rules::start::free_at_start(&cx, &out))
        .or_else(|| rules::message::too_little_to_tell(&cx, &out));
    out.extend(last.map(|l| l.build()));
    out
}
