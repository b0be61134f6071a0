//! The out-of-memory message given with the plans (pasted, or found in a log): which
//! part of which module's plan its failed request is, and the message as the report
//! carries it. The message itself is read by [`crate::evidence::message`]; what it points
//! to is the triage of `rules::message` and `rules::tpu`.

use crate::evidence::message::OomMessage;
use crate::report::model::{Category, ErrorReport, MatchedPart, ModuleReport};
use crate::units::size;

/// The part of a module's plan a failed request is: an execution allocates its
/// temporary block and its outputs (never its parameters).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestMatch {
    /// The module's label.
    pub module: String,
    /// `the temporary block of jit_f(6) (46,159 MiB)`, `add.3 f32[…] (4.0 MiB) of jit_f(6)`.
    pub part: String,
    /// The part's bytes.
    pub bytes: u64,
    /// Whether the part is the temporary block.
    pub is_temp_block: bool,
    /// Whether the request equals the part's size exactly.
    pub exact: bool,
}

/// Within 1% (and 4 KiB): allocators round requests up, and messages print rounded
/// sizes (`47.29MiB`).
pub fn close(request: u64, size: u64) -> bool {
    request.abs_diff(size) <= size / 100 + 4096
}

/// The module part the failed request of `message` is, searched in every module:
/// exact sizes first, then sizes within rounding; the temporary block before an
/// output; among equals, `preferred` (the user's choice), then modules that ran. A
/// warning (no failure in the text) matches nothing.
pub fn find_request(
    message: &OomMessage,
    modules: &[ModuleReport],
    preferred: Option<&str>,
) -> Option<RequestMatch> {
    if message.advisory {
        return None;
    }
    let request = message.requested_bytes?;
    let mut best: Option<(u8, RequestMatch)> = None;
    for module in modules {
        let plan = &module.plan;
        let mut candidates: Vec<RequestMatch> = Vec::new();
        if plan.temp_bytes > 0 && close(request, plan.temp_bytes) {
            candidates.push(RequestMatch {
                module: module.label.clone(),
                part: format!(
                    "the temporary block of {} ({})",
                    module.label,
                    size(plan.temp_bytes)
                ),
                bytes: plan.temp_bytes,
                is_temp_block: true,
                exact: request == plan.temp_bytes,
            });
        }
        if let Some(b) = plan
            .live_at_peak
            .iter()
            .find(|b| b.category == Category::Output && close(request, b.bytes))
        {
            candidates.push(RequestMatch {
                module: module.label.clone(),
                part: format!(
                    "{} {} ({}) of {}",
                    b.name,
                    b.shape,
                    size(b.bytes),
                    module.label
                ),
                bytes: b.bytes,
                is_temp_block: false,
                exact: request == b.bytes,
            });
        }
        for c in candidates {
            let rank = u8::from(c.exact) * 8
                + u8::from(c.is_temp_block) * 4
                + u8::from(preferred == Some(module.label.as_str())) * 2
                + u8::from(module.executions > 0);
            if best.as_ref().is_none_or(|(r, _)| rank > *r) {
                best = Some((rank, c));
            }
        }
    }
    best.map(|(_, c)| c)
}

/// The message as the report carries it: the parser's figures unchanged, and the plan
/// part its request matched. The scenario is filled in once the triage has run
/// (`docs/diagnosis.md#the-pasted-error`).
pub fn describe(message: OomMessage, file: &str, matched: Option<&RequestMatch>) -> ErrorReport {
    ErrorReport {
        message,
        file: file.to_owned(),
        matched: matched.map(|r| r.part.clone()),
        matched_module: matched.map(|r| r.module.clone()),
        matched_part: matched.map(|r| {
            if r.is_temp_block {
                MatchedPart::TempBlock
            } else {
                MatchedPart::Output
            }
        }),
        matched_exactly: matched.map(|r| r.exact),
        scenario: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::message::parse;

    fn module(label: &str, temp: u64, executions: u64) -> ModuleReport {
        let mut m = ModuleReport {
            label: label.into(),
            executions,
            ..Default::default()
        };
        m.plan.temp_bytes = temp;
        m
    }

    #[test]
    fn the_request_matches_a_temporary_block_exactly_or_within_rounding() {
        let modules = [
            module("jit_a(1)", 3_664_773_120, 0),
            module("jit_b(2)", 1 << 20, 3),
        ];
        let m =
            parse("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3664773120 bytes.")
                .unwrap();
        let r = find_request(&m, &modules, None).expect("a match");
        assert_eq!(
            (r.module.as_str(), r.is_temp_block, r.exact),
            ("jit_a(1)", true, true)
        );
        // `3.41GiB` printed rounded: within 1%.
        let m = parse("Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB requested by op dot")
            .unwrap();
        let r = find_request(&m, &modules, None).expect("a match");
        assert!(!r.exact);
        let report = describe(m, "-", Some(&r));
        assert_eq!(report.matched_part, Some(MatchedPart::TempBlock));
        assert_eq!(report.matched_module.as_deref(), Some("jit_a(1)"));
    }

    #[test]
    fn warnings_and_messages_without_a_size_match_nothing() {
        let modules = [module("jit_a(1)", 1 << 30, 0)];
        let warning = parse("Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.00GiB with freed_by_count=0. The caller indicates that this is not a failure")
            .unwrap();
        assert!(warning.advisory);
        assert_eq!(find_request(&warning, &modules, None), None);
        let tpu = parse("RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G.")
            .unwrap();
        assert_eq!(find_request(&tpu, &modules, None), None);
    }
}
