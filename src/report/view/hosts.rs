//! The cross-host summary of a folder of host files.

use super::*;
use crate::report::model::{HostStatus, HostSummary, OomEvidence, Skew, SkewField};

/// The cross-host summary of a folder, laid out: what every renderer leads with when a
/// run left several host files (`docs/hosts.md`).
#[derive(Debug, Clone, Serialize)]
pub struct HostsView {
    /// `256 host files: 254 read, 1 in part, 1 not read`.
    pub title: String,
    /// One row per host: host, read, verdict, module, plan peak, runtime peak,
    /// capacity, growth per execution, OOM evidence, notes.
    pub table: Table,
    /// `host3 ran out first: allocator retry at 12.345 s into its profile`.
    pub first_out: Option<String>,
    /// `host7: plan peak 12.00 GiB, the others 8.00 GiB`: one line per host that
    /// differs from the rest.
    pub skew: Vec<String>,
    /// `host9 (host9.xplane.pb): <its one-line error>`: hosts that could not be read.
    pub failed: Vec<String>,
    /// Said when some host files could not be read while the others were reported.
    pub failed_note: Option<String>,
    /// How to see one host's report.
    pub detail: &'static str,
}

/// Lays out the summary rows of a folder.
pub fn hosts(rows: &[HostSummary]) -> HostsView {
    let failed = rows
        .iter()
        .filter(|r| r.status == HostStatus::Failed)
        .count();
    let columns = [
        ("host", false),
        ("read", false),
        ("verdict", false),
        ("module", false),
        ("plan peak", true),
        ("runtime peak", true),
        ("capacity", true),
        ("growth/exec", true),
        ("OOM evidence", false),
        ("notes", false),
    ]
    .into_iter()
    .map(|(name, numeric)| Column { name, numeric })
    .collect();
    let failed_lines: Vec<String> = rows
        .iter()
        .filter(|r| r.status == HostStatus::Failed)
        .map(|r| {
            format!(
                "{} ({}): {}",
                r.host,
                r.file,
                r.error.as_deref().unwrap_or("")
            )
        })
        .collect();
    let failed_note = (failed > 0).then(|| {
        format!(
            "{failed} of {} host files could not be read; every other host is reported",
            rows.len()
        )
    });
    HostsView {
        title: title(rows),
        table: Table {
            title: "Hosts (plan peak read; runtime peak, capacity and growth measured)".into(),
            label: Label::Measured,
            columns,
            rows: rows.iter().map(host_row).collect(),
            more: None,
            marks: Vec::new(),
        },
        first_out: rows.iter().find(|r| r.ran_out_first).map(first_out),
        skew: rows
            .iter()
            .filter(|r| !r.skew.is_empty())
            .map(skew_line)
            .collect(),
        failed: failed_lines,
        failed_note,
        detail: "one host's report: oomlens PATH --host HOST",
    }
}

/// `256 host files: 254 read, 1 in part, 1 not read`.
fn title(rows: &[HostSummary]) -> String {
    let count = |s: HostStatus| rows.iter().filter(|r| r.status == s).count();
    let (read, partial, failed) = (
        count(HostStatus::Analyzed),
        count(HostStatus::Partial),
        count(HostStatus::Failed),
    );
    let mut parts = vec![format!("{read} read")];
    if partial > 0 {
        parts.push(format!("{partial} in part"));
    }
    if failed > 0 {
        parts.push(format!("{failed} not read"));
    }
    format!(
        "{} host files: {}",
        thousands(rows.len() as u64),
        parts.join(", ")
    )
}

/// A host's row of the table.
fn host_row(r: &HostSummary) -> Vec<Cell> {
    let opt = |b: Option<u64>| b.map_or_else(|| "—".to_owned(), present::size);
    let mut host = r.host.clone();
    if r.ran_out_first {
        host.push_str(" (first)");
    }
    let evidence: Vec<&str> = r
        .oom_evidence
        .iter()
        .map(|&e| present::oom_evidence_words(e))
        .collect();
    let notes = match &r.error_kind {
        Some(kind) => kind.clone(),
        None => r.notes.join(", "),
    };
    vec![
        Cell::new(host),
        Cell::new(present::host_status_words(r.status)),
        Cell::new(r.verdict.map_or("—", present::verdict_words)),
        Cell::new(r.selected_module.clone().unwrap_or_else(|| "—".into())),
        Cell::new(opt(r.plan_peak_bytes)),
        Cell::new(opt(r.runtime_peak_bytes)),
        Cell::new(opt(r.capacity_bytes)),
        Cell::new(
            r.growth_per_execution_bytes
                .map_or_else(|| "—".to_owned(), present::signed_size),
        ),
        Cell::new(if evidence.is_empty() {
            "—".to_owned()
        } else {
            evidence.join(", ")
        }),
        Cell::new(if notes.is_empty() {
            "—".into()
        } else {
            notes
        }),
    ]
}

/// `host3 ran out first: allocator retry at 12.345 s into its profile`.
fn first_out(r: &HostSummary) -> String {
    let what = r
        .oom_evidence
        .iter()
        .find(|&&e| matches!(e, OomEvidence::AllocatorRetry | OomEvidence::PeakAtCapacity))
        .map_or("out of memory", |&e| present::oom_evidence_words(e));
    match r.ran_out_at_ns {
        Some(ns) => format!(
            "{} ran out first: {what} at {} into its profile",
            r.host,
            present::duration(ns)
        ),
        None => format!("{} ran out first: {what}", r.host),
    }
}

/// `host7: plan peak 12.00 GiB, typically 8.00 GiB`: how a host differs from the rest.
fn skew_line(r: &HostSummary) -> String {
    let parts: Vec<String> = r.skew.iter().map(skew_part).collect();
    format!("{}: {}", r.host, parts.join("; "))
}

/// One figure or verdict in which a host differs from the rest, beside the typical one.
fn skew_part(s: &Skew) -> String {
    let name = present::skew_field_words(s.field);
    match (s.bytes, s.typical_bytes) {
        (Some(v), Some(t)) => {
            let shown = |b: i64| {
                if s.field == SkewField::GrowthPerExecutionBytes {
                    present::signed_size(b)
                } else {
                    present::size(b.max(0).unsigned_abs())
                }
            };
            format!("{name} {}, typically {}", shown(v), shown(t))
        }
        _ => {
            // A verdict is written as JSON names it; shown in words.
            let shown = |v: Option<&str>| {
                let v = v.unwrap_or("—");
                ALL_VERDICTS
                    .iter()
                    .find(|x| x.as_str() == v)
                    .map_or(v, |&x| present::verdict_words(x))
                    .to_owned()
            };
            format!(
                "{name} {}, typically {}",
                shown(s.value.as_deref()),
                shown(s.typical.as_deref())
            )
        }
    }
}

const ALL_VERDICTS: [Verdict; 7] = [
    Verdict::DoesNotFit,
    Verdict::Leak,
    Verdict::RanOut,
    Verdict::Fits,
    Verdict::PlanOnly,
    Verdict::RuntimeOnly,
    Verdict::Empty,
];
