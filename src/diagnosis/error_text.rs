//! The out-of-memory message the user pasted: its sizes, its kind, the scenario it
//! points to (`docs/diagnosis.md#tpu-out-of-hbm-at-compile-time`), and which part of the plan the failed request matches.

use crate::report::model::{Category, ErrorMatch, HostReport, ModuleReport};
use crate::units::mib;

/// A size like `3664773120 bytes`, `34.82G`, `3.41GiB`, `512.0M`.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim().trim_end_matches(['.', ',', ')', ';']);
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let unit = unit.trim().to_ascii_lowercase();
    let scale = match unit.trim_end_matches("ib").trim_end_matches('b').trim() {
        "" | "bytes" | "byte" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => {
            if unit.starts_with("bytes") {
                1.0
            } else {
                return None;
            }
        }
    };
    let bytes = value * scale;
    (0.0..1e20).contains(&bytes).then_some(bytes as u64)
}

/// The size right after `marker` in `text` (up to the next space, comma or period-space).
fn size_after(text: &str, marker: &str) -> Option<u64> {
    let start = text.find(marker)? + marker.len();
    let rest = text.get(start..)?.trim_start();
    let end = rest
        .char_indices()
        .find(|&(i, c)| {
            c == ','
                || c == ')'
                || (c == ' ' && !rest[..i].chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
        .map(|(i, _)| i)
        .unwrap_or(rest.len());
    let token = &rest[..end];
    // `3664773120 bytes`: the unit is the next word.
    if token.chars().all(|c| c.is_ascii_digit()) && rest[end..].trim_start().starts_with("bytes") {
        return token.parse().ok();
    }
    parse_size(token)
}

/// What a pasted message says, before it is matched to a plan.
#[derive(Debug, Clone, Default)]
pub struct PastedError {
    pub message: ErrorMatch,
}

/// Reads the kind and sizes of an out-of-memory message.
pub fn read(text: &str) -> PastedError {
    let mut m = ErrorMatch::default();
    if text.contains("TensorCore Hbm usage") {
        m.kind = "tpu_tensorcore_sparsecore".into();
        m.tensorcore_bytes = size_after(text, "TensorCore Hbm usage:");
        m.sparsecore_bytes = size_after(text, "SparseCore Hbm usage");
        m.capacity_bytes = size_after(text, "exceeding available bytes:");
        let (tc, sc) = (
            m.tensorcore_bytes.unwrap_or(0),
            m.sparsecore_bytes.unwrap_or(0),
        );
        m.used_bytes = Some(tc + sc);
        m.scenario = if sc > tc {
            "SparseCore usage dominates: tune --xla_sc_num_serialized_tables_to_optimize_hbm, watch 32-byte alignment padding of narrow embedding tables, lower maximum_parallel_iterations, check mod-sharding of tables".into()
        } else {
            "TensorCore usage dominates: the program's own buffers are too large (see the plan)"
                .into()
        };
    } else if text.contains("Ran out of memory in memory space") {
        m.kind = "tpu_compile_hbm".into();
        let used = text.find("Used ").map(|i| &text[i..]).unwrap_or(text);
        m.used_bytes = size_after(used, "Used");
        m.capacity_bytes = size_after(used, " of ");
        m.requested_bytes = size_after(text, "Exceeded hbm capacity by");
    } else if text.contains("Out of memory while trying to allocate")
        || text.contains("ran out of memory trying to allocate")
        || text.contains("Out of memory allocating")
    {
        m.kind = "allocate".into();
        // BFC's log line: `… trying to allocate 3.41GiB (rounded to 3664773120)…`; the
        // CPU client's: `Out of memory allocating 48400880000 bytes.`
        m.requested_bytes = size_after(text, "(rounded to")
            .or_else(|| size_after(text, "trying to allocate"))
            .or_else(|| size_after(text, "Out of memory allocating"));
    } else if text.contains("would exceed memory") {
        m.kind = "allocation_exceeds_memory".into();
        m.requested_bytes = size_after(text, "Allocation (size=");
        m.capacity_bytes = size_after(text, "would exceed memory (size=");
    } else if text.contains("RESOURCE_EXHAUSTED")
        || text.to_ascii_lowercase().contains("out of memory")
    {
        m.kind = "out_of_memory".into();
    } else {
        m.kind = "unrecognized".into();
        m.scenario = "the text is not an out-of-memory message oomlens knows; paste the RESOURCE_EXHAUSTED line".into();
    }
    PastedError { message: m }
}

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

/// Within 1% (and 4 KiB): allocators round requests up.
fn close(request: u64, size: u64) -> bool {
    request.abs_diff(size) <= size / 100 + 4096
}

/// The module part the failed request of `pasted` is, searched in every module:
/// exact sizes first, then sizes within rounding; the temporary block before an
/// output; among equals, `preferred` (the user's choice), then modules that ran.
pub fn find_request(
    pasted: &PastedError,
    modules: &[ModuleReport],
    preferred: Option<&str>,
) -> Option<RequestMatch> {
    let m = &pasted.message;
    let request = m.requested_bytes?;
    // TPU's compile error gives the excess, not a request.
    if m.kind == "tpu_compile_hbm" {
        return None;
    }
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
                    mib(plan.temp_bytes)
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
                    mib(b.bytes),
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

/// The message as the report shows it: what it says, the plan part its request
/// matched, and the scenario it points to (`docs/diagnosis.md#the-pasted-error`).
pub fn describe(
    pasted: &PastedError,
    matched: Option<&RequestMatch>,
    report: &HostReport,
) -> ErrorMatch {
    let mut m = pasted.message.clone();
    if m.kind == "unrecognized" {
        return m;
    }
    m.matched = matched.map(|r| r.part.clone());
    let module = matched
        .map(|r| r.module.as_str())
        .or(report.selected_module.as_deref())
        .and_then(|s| report.modules.iter().find(|x| x.label == s));
    // The pool the request failed in, from the capture when the message has none.
    if m.capacity_bytes.is_none() {
        m.capacity_bytes = super::capacity(report);
    }
    if m.scenario.is_empty() {
        let capacity = m.capacity_bytes;
        let large = module
            .zip(capacity)
            .and_then(|(module, c)| module.plan.live_at_peak.iter().find(|b| b.bytes > c / 2));
        m.scenario = match large {
            Some(b) => format!(
                "configuration, not capacity: {} {} is over half of the memory; check for a leftover jax.debug.print or a missing sharding annotation",
                b.name, b.shape
            ),
            None => "the aggregate is too big: smaller batch, donate_argnums, bf16, remat (jax.checkpoint), sharding, or host offload".into(),
        };
    }
    m
}

/// [`read`], matched to the selected module's plan and described.
pub fn parse(text: &str, report: &HostReport) -> ErrorMatch {
    let pasted = read(text);
    let matched = find_request(&pasted, &report.modules, report.selected_module.as_deref());
    describe(&pasted, matched.as_ref(), report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_four_messages() {
        let r = HostReport::default();
        let m = parse("RESOURCE_EXHAUSTED: TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available bytes: 95.74G", &r);
        assert_eq!(m.kind, "tpu_tensorcore_sparsecore");
        assert_eq!(m.tensorcore_bytes, Some((34.82 * 1073741824.0) as u64));
        assert_eq!(m.capacity_bytes, Some((95.74 * 1073741824.0) as u64));
        assert!(m.scenario.starts_with("SparseCore"));

        let m = parse("RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 49.34G of 32.00G hbm. Exceeded hbm capacity by 17.34G.", &r);
        assert_eq!(m.kind, "tpu_compile_hbm");
        assert_eq!(m.used_bytes, Some((49.34 * 1073741824.0) as u64));
        assert_eq!(m.capacity_bytes, Some(32 * 1073741824));

        let m = parse(
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3664773120 bytes.",
            &r,
        );
        assert_eq!(m.requested_bytes, Some(3664773120));

        let m = parse(
            "W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB (rounded to 3664773120)requested by op",
            &r,
        );
        assert_eq!(m.kind, "allocate");
        assert_eq!(m.requested_bytes, Some(3664773120));

        let m = parse("Allocation (size=1024) would exceed memory (size=512)", &r);
        assert_eq!(
            (m.requested_bytes, m.capacity_bytes),
            (Some(1024), Some(512))
        );
    }
}
