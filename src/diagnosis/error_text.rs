//! The out-of-memory message the user pasted: its sizes, its kind, the scenario it
//! points to (mission-spec §9), and which part of the plan the failed request matches.

use crate::report::model::{Category, ErrorMatch, HostReport};
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

pub fn parse(text: &str, report: &HostReport) -> ErrorMatch {
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
    {
        m.kind = "allocate".into();
        // BFC's log line: `… trying to allocate 3.41GiB (rounded to 3664773120)…`.
        m.requested_bytes =
            size_after(text, "(rounded to").or_else(|| size_after(text, "trying to allocate"));
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
        return m;
    }

    let module = report
        .selected_module
        .as_deref()
        .and_then(|s| report.modules.iter().find(|x| x.label == s));
    if let (Some(module), Some(req)) = (module, m.requested_bytes) {
        let close = |a: u64, b: u64| a.abs_diff(b) <= b / 100 + 4096;
        let plan = &module.plan;
        if m.kind != "tpu_compile_hbm" && close(req, plan.temp_bytes) {
            m.matched = Some(format!(
                "the temporary block of {} ({})",
                module.label,
                mib(plan.temp_bytes)
            ));
        } else if let Some(b) = plan.live_at_peak.iter().find(|b| {
            // An execution allocates its outputs (never its parameters) and temp block.
            b.category == Category::Output && close(req, b.bytes)
        }) {
            m.matched = Some(format!(
                "{} {} ({}) of {}",
                b.name,
                b.shape,
                mib(b.bytes),
                module.label
            ));
        }
    }
    // The pool the request failed in, from the capture when the message has none.
    if m.capacity_bytes.is_none() && m.kind != "unrecognized" {
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
