//! A folder of several host files (one `.xplane.pb` per host of a multi-host run): each
//! host's report reduced to one summary row, the rows compared (which host ran out
//! first, which differ from the rest), and, natively, the hosts analyzed in parallel
//! with memory bounded whatever their number. `docs/hosts.md` states the rules.

use crate::analysis::{analyze, Options, Progress};
use crate::error::Error;
use crate::report::model::{
    AllocatorKind, HostReport, HostStatus, HostSummary, OomEvidence, Skew, SkewField, Verdict,
};
use crate::source::ByteSource;

/// What [`analyze_host`] gives for one host besides its row: its report, or why
/// there is none.
// On wasm32 the page's workers keep only the row, so nothing reads these.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub enum Analyzed<'a> {
    /// The host's report.
    Report(&'a HostReport),
    /// Why the host could not be analyzed.
    Failed(&'a Error),
}

/// One host of a folder: its summary row and its profile start (ns since the epoch,
/// for [`compare`]). The report is handed to `done`, then dropped; a capture that
/// cannot be analyzed is a `failed` row with its error. The CLI (on a thread per
/// host) and the page (in a worker per host) both make their rows with this.
pub fn analyze_host(
    src: &dyn ByteSource,
    host: &str,
    file: &str,
    options: &Options,
    progress: Progress<'_>,
    done: &mut dyn FnMut(Analyzed<'_>),
) -> (HostSummary, Option<u64>) {
    match analyze(src, host, file, options, progress) {
        Ok(report) => {
            let row = summarize(&report);
            let start = report.profile_start_ns;
            done(Analyzed::Report(&report));
            (row, start)
        }
        Err(e) => {
            done(Analyzed::Failed(&e));
            (failed(host, file, src.len(), &e), None)
        }
    }
}

/// The rows of a folder's hosts (in host order, each with its profile start, as
/// [`analyze_host`] gives them) compared: the cross-host summary, `hosts_summary[]`.
/// What a row says of the others (`ran_out_first`, `skew`) is made here afresh.
pub fn summary(rows: Vec<(HostSummary, Option<u64>)>) -> Vec<HostSummary> {
    let (mut rows, starts): (Vec<HostSummary>, Vec<Option<u64>>) = rows
        .into_iter()
        .map(|(mut r, start)| {
            r.ran_out_first = false;
            r.skew.clear();
            (r, start)
        })
        .unzip();
    compare(&mut rows, &starts);
    rows
}

/// A host's summary row, from its report.
pub fn summarize(h: &HostReport) -> HostSummary {
    let runtime = h.runtime.as_ref();
    let device_pools = || {
        runtime
            .into_iter()
            .flat_map(|r| r.allocators.iter())
            .filter(|a| a.kind == AllocatorKind::Device)
    };
    let plan_peak_bytes = h.selected_module.as_ref().and_then(|label| {
        h.modules
            .iter()
            .find(|m| &m.label == label)
            .map(|m| m.plan.peak_bytes)
    });
    let runtime_peak_bytes = device_pools().map(|a| a.peak_in_use_bytes).max();
    // A pool at 99% or more of its capacity has reached it (docs/hosts.md).
    let at_capacity = device_pools()
        .filter(|a| {
            a.capacity_bytes > 0 && a.peak_in_use_bytes >= a.capacity_bytes - a.capacity_bytes / 100
        })
        .min_by_key(|a| a.peak_time_ps);
    let verdict = h.headline.verdict;
    let retry = runtime.filter(|r| r.retry.count > 0);
    let mut oom_evidence = Vec::new();
    if retry.is_some() {
        oom_evidence.push(OomEvidence::AllocatorRetry);
    }
    if at_capacity.is_some() {
        oom_evidence.push(OomEvidence::PeakAtCapacity);
    }
    if verdict == Verdict::DoesNotFit {
        oom_evidence.push(OomEvidence::PlanExceedsCapacity);
    }
    if verdict == Verdict::Leak {
        oom_evidence.push(OomEvidence::GrowthHeld);
    }
    if h.error.is_some() {
        oom_evidence.push(OomEvidence::PastedError);
    }
    let first_wait = retry.and_then(|r| {
        r.retry
            .waits
            .iter()
            .map(|w| w.start_ns)
            .min_by(|a, b| a.total_cmp(b))
    });
    let ran_out_at_ns = first_wait.or_else(|| at_capacity.map(|a| a.peak_time_ps as f64 / 1000.0));
    let notes: Vec<String> = h.notes.iter().map(|n| n.id.clone()).collect();
    let partial = notes
        .iter()
        .any(|n| n == "capture_truncated" || n == "plane_damaged");
    HostSummary {
        host: h.host.clone(),
        file: h.file.clone(),
        file_bytes: h.file_bytes,
        status: if partial {
            HostStatus::Partial
        } else {
            HostStatus::Analyzed
        },
        error: None,
        error_kind: None,
        verdict: Some(verdict),
        selected_module: h.selected_module.clone(),
        plan_peak_bytes,
        runtime_peak_bytes,
        capacity_bytes: h.capacity_bytes,
        growth_per_execution_bytes: runtime.and_then(|r| r.growth_per_execution_bytes),
        oom_evidence,
        ran_out_at_ns,
        ran_out_first: false,
        notes,
        skew: Vec::new(),
    }
}

/// The row of a host file that could not be analyzed: its one-line error.
// On wasm32 only the page's worker pool calls it.
#[cfg_attr(target_arch = "wasm32", allow(dead_code))]
pub fn failed(host: &str, file: &str, file_bytes: u64, error: &Error) -> HostSummary {
    HostSummary {
        host: host.to_owned(),
        file: file.to_owned(),
        file_bytes,
        status: HostStatus::Failed,
        error: Some(crate::report::clean(&error.to_string(), 4000)),
        error_kind: Some(error.kind().to_owned()),
        ..Default::default()
    }
}

/// Fewer hosts than this have no "rest" to differ from.
const SKEW_MIN_HOSTS: usize = 3;
/// A figure differs from the folder's median by more than this share of it…
const SKEW_SHARE: f64 = 0.10;
/// …and by more than this many bytes.
const SKEW_MIN_BYTES: i64 = 1 << 20;

/// Compares the rows of a folder: marks the host that ran out first, and how each
/// host differs from the rest (`docs/hosts.md`). `starts` gives each row's profile
/// start (ns since the epoch) when known, which puts the hosts' times on one clock.
pub fn compare(rows: &mut [HostSummary], starts: &[Option<u64>]) {
    // Which host ran out first: on the epoch clock when every such host has one, else
    // on the hosts' own clocks.
    let candidates: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.ran_out_at_ns?)))
        .collect();
    let on_epoch = candidates
        .iter()
        .all(|(i, _)| starts.get(*i).copied().flatten().is_some());
    let at = |&(i, t): &(usize, f64)| {
        let base = if on_epoch {
            starts.get(i).copied().flatten().unwrap_or(0) as f64
        } else {
            0.0
        };
        base + t
    };
    if let Some(&(first, _)) = candidates
        .iter()
        .min_by(|a, b| at(a).total_cmp(&at(b)).then(a.0.cmp(&b.0)))
    {
        if let Some(r) = rows.get_mut(first) {
            r.ran_out_first = true;
        }
    }

    let analyzed: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].status != HostStatus::Failed)
        .collect();
    if analyzed.len() < SKEW_MIN_HOSTS {
        return;
    }
    // Categorical fields: the value more than half the hosts share.
    type Text = fn(&HostSummary) -> Option<String>;
    let texts: [(SkewField, Text); 2] = [
        (SkewField::Verdict, |r| {
            r.verdict.map(|v| v.as_str().to_owned())
        }),
        (SkewField::SelectedModule, |r| r.selected_module.clone()),
    ];
    for (field, get) in texts {
        let values: Vec<Option<String>> = analyzed.iter().map(|&i| get(&rows[i])).collect();
        let Some(typical) = majority(&values) else {
            continue;
        };
        for (&i, v) in analyzed.iter().zip(&values) {
            if v.as_ref() != Some(&typical) {
                rows[i].skew.push(Skew {
                    field,
                    bytes: None,
                    typical_bytes: None,
                    value: Some(v.clone().unwrap_or_default()),
                    typical: Some(typical.clone()),
                });
            }
        }
    }
    // Figures: against the median of the hosts that have one.
    type Figure = fn(&HostSummary) -> Option<i64>;
    let figures: [(SkewField, Figure); 4] = [
        (SkewField::PlanPeakBytes, |r| {
            r.plan_peak_bytes
                .map(|b| i64::try_from(b).unwrap_or(i64::MAX))
        }),
        (SkewField::RuntimePeakBytes, |r| {
            r.runtime_peak_bytes
                .map(|b| i64::try_from(b).unwrap_or(i64::MAX))
        }),
        (SkewField::CapacityBytes, |r| {
            r.capacity_bytes
                .map(|b| i64::try_from(b).unwrap_or(i64::MAX))
        }),
        (SkewField::GrowthPerExecutionBytes, |r| {
            r.growth_per_execution_bytes
        }),
    ];
    for (field, get) in figures {
        let mut values: Vec<i64> = analyzed.iter().filter_map(|&i| get(&rows[i])).collect();
        if values.len() < SKEW_MIN_HOSTS {
            continue;
        }
        values.sort_unstable();
        let median = values[values.len() / 2];
        let tolerance = ((median.unsigned_abs() as f64 * SKEW_SHARE) as i64).max(SKEW_MIN_BYTES);
        for &i in &analyzed {
            let Some(v) = get(&rows[i]) else { continue };
            if v.saturating_sub(median).saturating_abs() > tolerance {
                rows[i].skew.push(Skew {
                    field,
                    bytes: Some(v),
                    typical_bytes: Some(median),
                    value: None,
                    typical: None,
                });
            }
        }
    }
}

/// The value more than half of `values` share (a missing value counts as one).
fn majority(values: &[Option<String>]) -> Option<String> {
    let mut counts: Vec<(&Option<String>, usize)> = Vec::new();
    for v in values {
        match counts.iter_mut().find(|(c, _)| *c == v) {
            Some((_, n)) => *n += 1,
            None => counts.push((v, 1)),
        }
    }
    counts
        .into_iter()
        .find(|(_, n)| n * 2 > values.len())
        .and_then(|(v, _)| v.clone())
}

/// Natively: the hosts of a folder analyzed in parallel.
#[cfg(not(target_arch = "wasm32"))]
pub use native::{analyze_files, jobs_for};

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    use super::{analyze_host, failed, summary, Analyzed};
    use crate::analysis::Options;
    use crate::error::Error;
    use crate::input::HostFile;
    use crate::report::model::HostSummary;
    use crate::source::FileSource;

    /// What one host's analysis may need in memory, at most: the reader's windows and
    /// the per-event history kept (BENCHMARKS.md: 39–68 MiB from 0.1 to 4 GB).
    const MEMORY_PER_HOST: u64 = 128 << 20;

    /// How many hosts to analyze at once: no more than the cores, the hosts, or what
    /// half the available memory holds at [`MEMORY_PER_HOST`] each; `asked` (the CLI's
    /// `--jobs`) overrides the cores, never the memory.
    pub fn jobs_for(hosts: usize, asked: Option<usize>) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let by_memory = available_memory().map_or(usize::MAX, |m| {
            usize::try_from(m / 2 / MEMORY_PER_HOST).unwrap_or(usize::MAX)
        });
        asked.unwrap_or(cores).min(by_memory).min(hosts).max(1)
    }

    /// `MemAvailable` of `/proc/meminfo`, where there is one.
    fn available_memory() -> Option<u64> {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    }

    /// Analyzes `files` on `jobs` threads. Each host's report is handed to `done`
    /// (with the host's place in `files`) as soon as it is made, then dropped: only its
    /// summary row is kept, so memory does not grow with the number of hosts. A file
    /// that cannot be read becomes a row with its error; the others are analyzed. The
    /// rows come back in the order of `files`, compared ([`summary`]).
    pub fn analyze_files(
        files: &[HostFile],
        options: &Options,
        jobs: usize,
        done: &(dyn Fn(usize, Analyzed<'_>) + Sync),
    ) -> Vec<HostSummary> {
        let next = AtomicUsize::new(0);
        let rows: Mutex<Vec<Option<Row>>> = Mutex::new((0..files.len()).map(|_| None).collect());
        let work = || loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(f) = files.get(i) else { break };
            let row = one(f, options, &mut |a| done(i, a));
            if let Ok(mut rows) = rows.lock() {
                if let Some(slot) = rows.get_mut(i) {
                    *slot = Some(row);
                }
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..jobs.max(1) {
                scope.spawn(work);
            }
            work();
        });
        let rows = rows.into_inner().unwrap_or_default();
        summary(
            rows.into_iter()
                .zip(files)
                .map(|(r, f)| match r {
                    Some(row) => row,
                    None => (failed(&f.host, &file_name(f), 0, &Error::Empty), None),
                })
                .collect(),
        )
    }

    fn file_name(f: &HostFile) -> String {
        f.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// A host's summary row and its profile start (ns since the epoch).
    type Row = (HostSummary, Option<u64>);

    /// One host: its row and profile start; the report goes to `done`.
    fn one(f: &HostFile, options: &Options, done: &mut dyn FnMut(Analyzed<'_>)) -> Row {
        let name = file_name(f);
        let src = match FileSource::open(&f.path) {
            Ok(src) => src,
            Err(e) => {
                let e = Error::Open {
                    path: f.path.clone(),
                    message: e.to_string(),
                };
                done(Analyzed::Failed(&e));
                return (failed(&f.host, &name, 0, &e), None);
            }
        };
        analyze_host(&src, &f.host, &name, options, &mut |_, _, _| {}, done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(host: &str, peak: u64, module: &str) -> HostSummary {
        HostSummary {
            host: host.into(),
            verdict: Some(Verdict::Fits),
            selected_module: Some(module.into()),
            plan_peak_bytes: Some(peak),
            capacity_bytes: Some(16 << 30),
            ..Default::default()
        }
    }

    #[test]
    fn the_host_that_differs_is_named_with_the_typical_value() {
        let mut rows: Vec<HostSummary> = (0..6)
            .map(|i| row(&format!("h{i}"), 8 << 30, "jit_step(1)"))
            .collect();
        rows[2].plan_peak_bytes = Some(12 << 30);
        rows[4].selected_module = Some("jit_eval(2)".into());
        // Within 10% of the median is no difference.
        rows[5].plan_peak_bytes = Some((8 << 30) + (500 << 20));
        compare(&mut rows, &[None; 6]);
        assert_eq!(rows[2].skew.len(), 1);
        assert_eq!(rows[2].skew[0].field, SkewField::PlanPeakBytes);
        assert_eq!(rows[2].skew[0].bytes, Some(12 << 30));
        assert_eq!(rows[2].skew[0].typical_bytes, Some(8 << 30));
        assert_eq!(rows[4].skew[0].field, SkewField::SelectedModule);
        assert_eq!(rows[4].skew[0].typical.as_deref(), Some("jit_step(1)"));
        for i in [0, 1, 3, 5] {
            assert!(rows[i].skew.is_empty(), "{i}: {:?}", rows[i].skew);
        }
    }

    #[test]
    fn two_hosts_have_no_rest_to_differ_from() {
        let mut rows = vec![row("a", 1 << 30, "m"), row("b", 4 << 30, "n")];
        compare(&mut rows, &[None, None]);
        assert!(rows.iter().all(|r| r.skew.is_empty()));
    }

    #[test]
    fn the_first_to_run_out_is_found_on_the_epoch_clock_when_every_host_has_one() {
        let mut rows: Vec<HostSummary> = (0..3).map(|i| row(&format!("h{i}"), 1, "m")).collect();
        // h1 ran out 5 s into its profile, h2 9 s into its own, which started 6 s earlier.
        rows[1].ran_out_at_ns = Some(5e9);
        rows[2].ran_out_at_ns = Some(9e9);
        let epoch = 1_700_000_000_000_000_000u64;
        compare(
            &mut rows,
            &[Some(epoch), Some(epoch), Some(epoch - 6_000_000_000)],
        );
        assert!(rows[2].ran_out_first && !rows[1].ran_out_first && !rows[0].ran_out_first);
        // Without a start for one of them: their own clocks.
        for r in &mut rows {
            r.ran_out_first = false;
            r.skew.clear();
        }
        compare(&mut rows, &[Some(epoch), None, Some(epoch - 6_000_000_000)]);
        assert!(rows[1].ran_out_first && !rows[2].ran_out_first);
    }

    #[test]
    fn a_summary_row_takes_the_reports_figures_and_evidence() {
        use crate::report::model::{AllocatorSummary, Retry, RetryWait, Runtime};
        let mut h = HostReport {
            host: "h".into(),
            selected_module: Some("jit_step(3)".into()),
            capacity_bytes: Some(1000),
            ..Default::default()
        };
        h.headline.verdict = Verdict::RanOut;
        h.modules.push(crate::report::model::ModuleReport {
            label: "jit_step(3)".into(),
            plan: crate::report::model::Plan {
                peak_bytes: 900,
                ..Default::default()
            },
            ..Default::default()
        });
        h.runtime = Some(Runtime {
            allocators: vec![AllocatorSummary {
                capacity_bytes: 1000,
                peak_in_use_bytes: 995,
                peak_time_ps: 7_000,
                ..Default::default()
            }],
            retry: Retry {
                count: 2,
                waits: vec![
                    RetryWait {
                        start_ns: 9.0,
                        ..Default::default()
                    },
                    RetryWait {
                        start_ns: 4.0,
                        ..Default::default()
                    },
                ],
                ..Default::default()
            },
            ..Default::default()
        });
        let r = summarize(&h);
        assert_eq!(r.plan_peak_bytes, Some(900));
        assert_eq!(r.runtime_peak_bytes, Some(995));
        assert_eq!(
            r.oom_evidence,
            [OomEvidence::AllocatorRetry, OomEvidence::PeakAtCapacity]
        );
        assert_eq!(r.ran_out_at_ns, Some(4.0));
        assert_eq!(r.status, HostStatus::Analyzed);
    }
}
