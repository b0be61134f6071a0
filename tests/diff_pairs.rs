//! `oomlens diff` on the recorded pairs (`tests/fixtures/pairs/<pair>/{before,after}`):
//! each pair's plan deltas against the two runs' `compiled.memory_analysis()`
//! (`oracle.json`), the buffers adding up to the change of the peak exactly, the
//! diagnosis lines resolved, new and remaining, and each resolved line's estimate beside
//! the saving measured now. Multi-host folders are compared host by host.

use std::path::{Path, PathBuf};

use oomlens::diff::model::{Basis, Change, Diff, DiffReport, MatchTier};
use oomlens::diff::{compare_paths, DiffOptions};
use oomlens::report::model::{DiagnosisId, HostReport};
use serde_json::Value;

use DiagnosisId::*;

const MIB: u64 = 1 << 20;

fn pair_dir(pair: &str, side: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pairs")
        .join(pair)
        .join(side)
}

fn oracle(pair: &str, side: &str) -> Value {
    let text = std::fs::read_to_string(pair_dir(pair, side).join("oracle.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The oracle's `memory_analysis()` of the module labelled `label`.
fn analysis<'v>(oracle: &'v Value, label: &str) -> &'v Value {
    oracle["modules"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| format!("{}({})", m["name"].as_str().unwrap(), m["program_id"]) == label)
        .unwrap_or_else(|| panic!("no module {label} in the oracle"))
}

fn field(m: &Value, key: &str) -> i64 {
    m[key].as_i64().unwrap()
}

/// One side's report, as `oomlens PATH` makes it.
fn host_report(pair: &str, side: &str) -> HostReport {
    let r = oomlens::analyze_path(&pair_dir(pair, side), &oomlens::Options::default()).unwrap();
    r.hosts.into_iter().next().unwrap()
}

fn diff(pair: &str) -> Diff {
    let d = compare_paths(
        &pair_dir(pair, "before"),
        &pair_dir(pair, "after"),
        &DiffOptions::default(),
    )
    .unwrap();
    assert_eq!(d.hosts.len(), 1);
    assert!(d.hosts_only_before.is_empty() && d.hosts_only_after.is_empty());
    d.hosts.into_iter().next().unwrap()
}

/// What every pair must satisfy: deltas as `memory_analysis()`, and the buffers adding
/// up to the change of the peak, exactly.
fn check_figures(pair: &str, d: &Diff) {
    let (bp, ap) = (
        d.before.plan.as_ref().unwrap(),
        d.after.plan.as_ref().unwrap(),
    );
    let delta = d.delta.as_ref().unwrap();
    let ob = analysis(&oracle(pair, "before"), d.before.module.as_deref().unwrap()).clone();
    let oa = analysis(&oracle(pair, "after"), d.after.module.as_deref().unwrap()).clone();
    for (got, key) in [
        (delta.argument_bytes, "argument_size_in_bytes"),
        (delta.output_bytes, "output_size_in_bytes"),
        (delta.alias_bytes, "alias_size_in_bytes"),
        (delta.temp_bytes, "temp_size_in_bytes"),
    ] {
        assert_eq!(got, field(&oa, key) - field(&ob, key), "{pair}: Δ {key}");
    }
    assert_eq!(
        delta.peak_bytes,
        ap.peak_bytes as i64 - bp.peak_bytes as i64
    );
    assert_eq!(
        delta.heap_peak_bytes,
        ap.heap_peak_bytes as i64 - bp.heap_peak_bytes as i64
    );
    let roles = |p: &oomlens::report::model::Plan| p.roles_at_peak;
    assert_eq!(
        delta.roles_at_peak.forward,
        roles(ap).forward as i64 - roles(bp).forward as i64
    );

    // Every buffer of both lists is in the rows exactly once.
    let count = |before: bool| {
        d.buffers
            .iter()
            .filter(|r| {
                if before {
                    r.instruction_before.is_some()
                } else {
                    r.instruction_after.is_some()
                }
            })
            .count()
    };
    assert_eq!(count(true), bp.live_at_peak.len(), "{pair}: before rows");
    assert_eq!(count(false), ap.live_at_peak.len(), "{pair}: after rows");

    // The reconciliation: the list holds the memory held for the whole program too,
    // so it adds up to the peak (heap peak + held memory), and its temporaries to the
    // heap peak.
    let r = d.reconciliation.as_ref().unwrap();
    assert_eq!(r.basis, Basis::Peak, "{pair}");
    assert!(r.exact, "{pair}: nothing unlisted: {r:?}");
    let sum =
        d.matched_delta_bytes + d.unmatched_after_bytes as i64 - d.unmatched_before_bytes as i64;
    assert_eq!(
        sum, delta.peak_bytes,
        "{pair}: matched + appeared − went away = Δ peak"
    );
    assert_eq!(r.listed_delta_bytes, sum);
    assert_eq!(r.basis_delta_bytes, delta.peak_bytes);
    assert_eq!(
        r.heap_delta_bytes, delta.heap_peak_bytes,
        "{pair}: the heap's part"
    );
    let rows: i64 = d.buffers.iter().map(|r| r.delta_bytes).sum();
    assert_eq!(rows, delta.peak_bytes, "{pair}: the rows' deltas add up");
    let matched: i64 = d
        .buffers
        .iter()
        .filter(|r| r.matched_by.is_some())
        .map(|r| r.delta_bytes)
        .sum();
    assert_eq!(matched, d.matched_delta_bytes);

    // Rows lead with the largest change.
    for w in d.buffers.windows(2) {
        assert!(w[0].delta_bytes.unsigned_abs() >= w[1].delta_bytes.unsigned_abs());
    }
    // The peak the headline quotes, and no pool on CPU captures.
    assert_eq!(d.headline.peak_before_bytes, Some(bp.peak_bytes));
    assert!(d.headline.pool_bytes.is_none());
    assert!(d.runtime.is_none(), "CPU captures have no allocator events");
    assert!(d.notes.iter().any(|n| n.id == "no_runtime"));
    assert_eq!(
        d.module_choice,
        oomlens::diff::model::ModuleChoice::Selected
    );
    assert!(d.before.selected && d.after.selected && d.diagnosis.compared);
}

fn check_lines(d: &Diff, resolved: &[DiagnosisId], new: &[DiagnosisId], remaining: &[DiagnosisId]) {
    assert_eq!(d.diagnosis.resolved, resolved, "resolved");
    assert_eq!(d.diagnosis.new, new, "new");
    assert_eq!(d.diagnosis.remaining, remaining, "remaining");
}

/// The before run's estimate for `id`, from its own report.
fn estimate(before: &HostReport, id: DiagnosisId) -> u64 {
    before
        .diagnosis
        .iter()
        .filter(|l| l.id == id)
        .filter_map(|l| l.saving_bytes)
        .sum()
}

fn peak_drop(d: &Diff) -> i64 {
    -d.delta.as_ref().unwrap().peak_bytes
}

#[test]
fn checkpoint_resolves_the_forward_activations_and_saves_what_was_estimated() {
    let d = diff("checkpoint");
    check_figures("checkpoint", &d);
    check_lines(&d, &[RoleForward], &[RoleBackward], &[NoAllocatorEvents]);
    let before = host_report("checkpoint", "before");
    assert_eq!(d.predicted_vs_actual.len(), 1);
    let p = &d.predicted_vs_actual[0];
    assert_eq!(p.id, RoleForward);
    assert_eq!(p.estimated_saving_bytes, estimate(&before, RoleForward));
    // memory_analysis(): the temp block drops by 54,444,032 − 39,485,440 bytes; the
    // parameters and outputs do not change, so the peak drops by as much.
    assert_eq!(p.actual_saving_bytes, 54_444_032 - 39_485_440);
    assert_eq!(p.actual_saving_bytes, peak_drop(&d));
    // The estimate counts the backward pass's own peak: one block recomputed with its
    // gradients, about twice its third of the 45.0 MiB kept (15.0 MiB saved, not the
    // 41.0 MiB that dropping the activations alone would give): within 10% here.
    let (estimated, saved) = (
        p.estimated_saving_bytes as f64,
        p.actual_saving_bytes as f64,
    );
    assert!((estimated - saved).abs() <= 0.1 * saved, "{p:?}");
    // The forward-kept S×S buffers of the attention went away; rematerialized ones
    // appeared in the backward pass.
    let gone: u64 = d
        .buffers
        .iter()
        .filter(|r| {
            r.change == Change::OnlyBefore
                && r.shape == "f32[4,4,256,256]"
                && r.op_name.starts_with("jit(train_step)/jvp()/")
        })
        .map(|r| r.before_bytes)
        .sum();
    assert_eq!(gone, 6 * 4 * MIB);
    assert!(d
        .buffers
        .iter()
        .any(|r| r.change == Change::OnlyAfter && r.op_name.contains("rematted_computation")));
    assert!(
        d.headline
            .text
            .starts_with("peak 54.42 MiB → 40.16 MiB (−26.2%)"),
        "{}",
        d.headline.text
    );
}

#[test]
fn donation_resolves_no_donation_and_the_outputs_stop_needing_buffers() {
    let d = diff("donation");
    check_figures("donation", &d);
    let before = host_report("donation", "before");
    assert!(
        before.diagnosis.iter().any(|l| l.id == NoDonation),
        "the before report says no_donation"
    );
    check_lines(&d, &[NoDonation], &[], &[RoleForward, NoAllocatorEvents]);
    let p = &d.predicted_vs_actual[0];
    assert_eq!(
        (p.id, p.estimated_saving_bytes),
        (NoDonation, estimate(&before, NoDonation))
    );
    assert_eq!(d.delta.as_ref().unwrap().alias_bytes, 1_572_864);
    assert_eq!(p.actual_saving_bytes, peak_drop(&d));
    assert!(p.actual_saving_bytes > 0 && (p.actual_saving_bytes as u64) < p.estimated_saving_bytes);
    // An upper bound, and said to be one.
    assert!(p
        .bound
        .as_deref()
        .is_some_and(|b| b.contains("copies donated state")));
    // The parameters are the same parameters (the donated ones are listed under the
    // outputs that reuse them); the outputs' own buffers went away.
    assert!(d
        .buffers
        .iter()
        .filter(|r| r.matched_by == Some(MatchTier::Parameter))
        .all(|r| r.change == Change::Unchanged));
    let outputs_gone: u64 = d
        .buffers
        .iter()
        .filter(|r| {
            r.change == Change::OnlyBefore
                && r.category_before == Some(oomlens::report::model::Category::Output)
        })
        .map(|r| r.before_bytes)
        .sum();
    assert!(outputs_gone > MIB, "{outputs_gone}");
}

#[test]
fn leak_fix_moves_the_grads_from_outputs_to_temporaries_at_the_same_peak() {
    let d = diff("leak");
    check_figures("leak", &d);
    check_lines(&d, &[], &[], &[RoleBackward, NoAllocatorEvents]);
    assert!(d.predicted_vs_actual.is_empty());
    let delta = d.delta.as_ref().unwrap();
    assert_eq!(delta.output_bytes, 2_097_192 - 4_194_348);
    assert_eq!(delta.temp_bytes, 2_424_832 - 327_680);
    assert_eq!(delta.peak_bytes, 0);
    assert!(
        d.headline.text.contains("(unchanged)"),
        "{}",
        d.headline.text
    );
}

#[test]
fn scan_remat_drops_the_stacked_activations() {
    let d = diff("scan_remat");
    check_figures("scan_remat", &d);
    check_lines(
        &d,
        &[RoleForward],
        &[RoleBackward],
        &[ScanStack, NoAllocatorEvents],
    );
    let gone: Vec<_> = d
        .scan_stacks
        .iter()
        .filter(|s| s.change == Change::OnlyBefore)
        .collect();
    assert_eq!(gone.len(), 1);
    assert_eq!(
        (gone[0].shape.as_str(), gone[0].count_before),
        ("f32[6,8,128,512]", 2)
    );
    assert_eq!(gone[0].before_bytes, 24 * MIB);
    // The other stacks stay, one of them in a renumbered loop.
    assert!(d
        .scan_stacks
        .iter()
        .any(|s| s.change == Change::Unchanged && s.while_before != s.while_after));
    let before = host_report("scan_remat", "before");
    let ids: Vec<_> = d.predicted_vs_actual.iter().map(|p| p.id).collect();
    assert_eq!(ids, [RoleForward, ScanStack]);
    let stack = &d.predicted_vs_actual[1];
    assert_eq!(
        stack.subject.as_deref(),
        Some("f32[6,8,128,512] ×2 via while.14")
    );
    assert_eq!(stack.estimated_saving_bytes, 24 * MIB);
    assert_eq!(
        d.predicted_vs_actual[0].estimated_saving_bytes,
        estimate(&before, RoleForward)
    );
    assert_eq!(stack.actual_saving_bytes, peak_drop(&d));
    // XProf's Memory Viewer: peakHeapMib 41.50006 → 19.50006.
    assert_eq!(peak_drop(&d), 22 * MIB as i64);
}

#[test]
fn batch_half_shrinks_the_activations_with_their_shapes() {
    let d = diff("batch_half");
    check_figures("batch_half", &d);
    check_lines(&d, &[], &[], &[RoleForward, NoAllocatorEvents]);
    // The same op on the same line, at half the batch: matched across shapes.
    let halved: Vec<_> = d
        .buffers
        .iter()
        .filter(|r| r.matched_by == Some(MatchTier::OpNameSource))
        .collect();
    assert!(!halved.is_empty());
    for r in &halved {
        assert_eq!(r.change, Change::Shrank, "{r:?}");
        assert_ne!(r.shape_after.as_deref(), Some(r.shape.as_str()), "{r:?}");
    }
    assert!(halved
        .iter()
        .any(|r| r.shape == "f32[4,4,256,256]"
            && r.shape_after.as_deref() == Some("f32[2,4,256,256]")));
    assert!(d.delta.as_ref().unwrap().peak_bytes < 0);
    // The activations line remains, and its other fix, a smaller micro-batch, is the one
    // applied: its estimate for a batch of 2 instead of 4 is beside what it saved.
    assert_eq!(d.predicted_vs_actual.len(), 1);
    let p = &d.predicted_vs_actual[0];
    assert_eq!(p.subject.as_deref(), Some("a batch of 2 instead of 4"));
    assert_eq!(p.fix.as_deref(), Some("a smaller micro-batch"));
    assert_eq!(p.actual_saving_bytes, peak_drop(&d));
}

/// The JSON carries every key of the contract, and its figures are the model's.
#[test]
fn the_json_is_the_contract() {
    let report: DiffReport = compare_paths(
        &pair_dir("checkpoint", "before"),
        &pair_dir("checkpoint", "after"),
        &DiffOptions::default(),
    )
    .unwrap();
    let v = oomlens::report::diff_json::to_value(&report);
    assert_eq!(v["schema"], "oomlens-diff/1");
    for side in ["before", "after"] {
        for key in ["file", "module", "plan"] {
            assert!(!v[side][key].is_null(), "{side}.{key}");
        }
    }
    for key in [
        "argument_bytes",
        "output_bytes",
        "alias_bytes",
        "temp_bytes",
        "heap_peak_bytes",
        "peak_bytes",
    ] {
        assert!(v["delta"][key].is_i64(), "delta.{key}");
    }
    for role in ["forward", "backward", "workspace", "other"] {
        assert!(v["delta"]["roles_at_peak"][role].is_i64());
    }
    let row = &v["buffers"][0];
    for key in [
        "op_name",
        "source",
        "shape",
        "before_bytes",
        "after_bytes",
        "delta_bytes",
        "change",
    ] {
        assert!(!row[key].is_null(), "buffers[].{key}");
    }
    assert!(v["unmatched_before_bytes"].is_u64() && v["unmatched_after_bytes"].is_u64());
    assert_eq!(
        v["diagnosis"]["resolved"],
        serde_json::json!(["role_forward"])
    );
    assert_eq!(v["diagnosis"]["new"], serde_json::json!(["role_backward"]));
    assert_eq!(
        v["diagnosis"]["remaining"],
        serde_json::json!(["no_allocator_events"])
    );
    let p = &v["predicted_vs_actual"][0];
    assert_eq!(p["id"], "role_forward");
    assert!(p["estimated_saving_bytes"].is_u64());
    assert_eq!(p["actual_saving_bytes"], 54_444_032 - 39_485_440);
}

/// A module named by label is found in the other run by its name, and the text and
/// Markdown say the same things.
#[test]
fn a_module_asked_by_label_and_the_renderers() {
    let report = compare_paths(
        &pair_dir("checkpoint", "before"),
        &pair_dir("checkpoint", "after"),
        &DiffOptions {
            module: Some("jit_train_step(10)".into()),
            ..DiffOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        report.hosts[0].module_choice,
        oomlens::diff::model::ModuleChoice::Asked
    );
    let text = oomlens::report::diff_text::render(&report, 5);
    let md = oomlens::report::diff_markdown::render(&report, 5);
    for needle in [
        "peak 54.42 MiB → 40.16 MiB (−26.2%)",
        "was estimated to save 15.02 MiB; it saved 14.27 MiB",
        "resolved   Mostly forward activations, kept for backward",
    ] {
        assert!(text.contains(needle), "text lacks {needle:?}:\n{text}");
    }
    // Ids are for the JSON only; the text names every line by its title.
    assert!(!text.contains("role_forward"), "{text}");
    assert!(
        md.contains("was estimated to save 15.02 MiB; it saved 14.27 MiB"),
        "{md}"
    );
    assert!(
        md.contains("| temporary block | 51.92 MiB | 37.66 MiB | −14.27 MiB | −27.5% |"),
        "{md}"
    );

    // A module in one run only is an error naming the run.
    let err = compare_paths(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/train_eval"),
        &pair_dir("checkpoint", "after"),
        &DiffOptions {
            module: Some("jit_eval_step".into()),
            ..DiffOptions::default()
        },
    )
    .unwrap_err();
    assert_eq!(err.kind(), "unknown_module");
    assert!(err.to_string().contains("after run"), "{err}");
}

/// A throwaway folder removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let n = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let p = std::env::temp_dir().join(format!("oomlens-diff-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// Copies `<pair>/<side>`'s capture in as `<host>.xplane.pb`.
    fn host(&self, host: &str, pair: &str, side: &str) {
        let from = pair_dir(pair, side).join(format!("{pair}_{side}.xplane.pb"));
        std::fs::copy(from, self.0.join(format!("{host}.xplane.pb"))).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn capture_folders_are_compared_host_by_host() {
    let (before, after) = (TempDir::new("before"), TempDir::new("after"));
    before.host("host_a", "checkpoint", "before");
    before.host("host_b", "donation", "before");
    after.host("host_a", "checkpoint", "after");
    after.host("host_c", "donation", "after");
    let d = compare_paths(&before.0, &after.0, &DiffOptions::default()).unwrap();
    assert_eq!(d.hosts.len(), 1);
    assert_eq!(d.hosts[0].host, "host_a");
    assert_eq!(d.hosts[0].diagnosis.resolved, [RoleForward]);
    assert_eq!(d.hosts_only_before, ["host_b"]);
    assert_eq!(d.hosts_only_after, ["host_c"]);
    let text = oomlens::report::diff_text::render(&d, 3);
    assert!(
        text.contains("hosts only in the before run (not compared): host_b"),
        "{text}"
    );

    after.host("host_b", "donation", "after");
    let d = compare_paths(&before.0, &after.0, &DiffOptions::default()).unwrap();
    assert_eq!(d.hosts.len(), 2);
    assert_eq!(d.hosts[1].diagnosis.resolved, [NoDonation]);
    let v = oomlens::report::diff_json::to_value(&d);
    assert_eq!(v["hosts"].as_array().unwrap().len(), 2);

    // No host in common: said, not guessed.
    let other = TempDir::new("other");
    other.host("host_x", "checkpoint", "after");
    other.host("host_y", "donation", "after");
    let err = compare_paths(&before.0, &other.0, &DiffOptions::default()).unwrap_err();
    assert_eq!(err.kind(), "no_common_host");
    assert!(err.to_string().contains("host_a, host_b"), "{err}");
}

/// The page analyzes each run in its own worker and compares the reports there, passed
/// as the engine's JSON text (`analyzeRun`, `compareReports`): read back, the reports
/// give the comparison `oomlens diff` gives, figure for figure, and write the same JSON.
#[test]
fn reports_read_back_from_json_compare_as_the_cli_does() {
    use oomlens::diff::{analyze_run, first_step, second_step, Run, Step};
    for pair in ["checkpoint", "donation", "leak", "scan_remat", "batch_half"] {
        // The page passes each run's folder name as the CLI finds it.
        let options = DiffOptions {
            runs: [Some("before".into()), Some("after".into())],
            ..DiffOptions::default()
        };
        let mut analyze = |run: Run, module: Option<&str>| {
            let side = run.name();
            let options = oomlens::Options {
                module: module.map(str::to_owned),
                ..oomlens::Options::default()
            };
            let report = oomlens::analyze_path(&pair_dir(pair, side), &options)?;
            let text = serde_json::to_string(&report).unwrap();
            let back: oomlens::Report = serde_json::from_str(&text).unwrap();
            assert_eq!(
                serde_json::to_string(&back).unwrap(),
                text,
                "{pair} {side}: read back"
            );
            Ok(back)
        };
        let before = analyze_run(&mut analyze, Run::Before, None).unwrap();
        let after = analyze_run(&mut analyze, Run::After, None).unwrap();
        let stepped = match first_step(&before, &after, &options).unwrap() {
            Step::Done(d) => d,
            Step::Again {
                before: b,
                after: a,
                choice,
            } => {
                let before = match b {
                    Some(m) => analyze_run(&mut analyze, Run::Before, Some(&m)).unwrap(),
                    None => before,
                };
                let after = match a {
                    Some(m) => analyze_run(&mut analyze, Run::After, Some(&m)).unwrap(),
                    None => after,
                };
                second_step(&before, &after, &options, choice).unwrap()
            }
        };
        let cli = compare_paths(
            &pair_dir(pair, "before"),
            &pair_dir(pair, "after"),
            &options,
        )
        .unwrap();
        let (a, b) = (
            oomlens::report::diff_json::render(&stepped),
            oomlens::report::diff_json::render(&cli),
        );
        // The files differ only in how they were named: paths here, folders for the CLI.
        assert_eq!(a, b, "{pair}");
    }
}

/// On every recorded pair, each estimate the before run made for the fix that was
/// applied comes within ±25% of the saving measured (the drop of the peak), or says it
/// is an upper bound and why, and the saving stays under it.
#[test]
fn every_pairs_estimates_come_true() {
    let mut checked = 0;
    for pair in ["checkpoint", "scan_remat", "donation", "batch_half", "leak"] {
        for p in &diff(pair).predicted_vs_actual {
            let (estimated, saved) = (
                p.estimated_saving_bytes as f64,
                p.actual_saving_bytes as f64,
            );
            match &p.bound {
                Some(_) => assert!(saved <= estimated, "{pair}: {p:?}"),
                None => assert!(
                    (estimated - saved).abs() <= 0.25 * saved,
                    "{pair}: estimated {estimated}, saved {saved}: {p:?}"
                ),
            }
            checked += 1;
        }
    }
    // checkpoint, scan_remat (the line and its stack), donation, batch_half.
    assert_eq!(checked, 5);
}

/// Both runs' files share a name (`vm.xplane.pb` in `run_a/` and `run_b/`): each side is
/// named by its run folder, in the view, the text and the Markdown.
#[test]
fn runs_whose_files_share_a_name_are_named_by_their_folders() {
    let root = TempDir::new("same_name");
    for (run, side) in [("run_a", "before"), ("run_b", "after")] {
        let dir = root.0.join(run);
        std::fs::create_dir_all(&dir).unwrap();
        let from = pair_dir("checkpoint", side).join(format!("checkpoint_{side}.xplane.pb"));
        std::fs::copy(from, dir.join("vm.xplane.pb")).unwrap();
    }
    let report = compare_paths(
        &root.0.join("run_a/vm.xplane.pb"),
        &root.0.join("run_b/vm.xplane.pb"),
        &DiffOptions::default(),
    )
    .unwrap();
    let view = oomlens::report::diff_view::report(&report, 5);
    let v = &view.hosts[0];
    assert_eq!(v.before.name, "run_a/vm.xplane.pb");
    assert_eq!(v.after.name, "run_b/vm.xplane.pb");
    assert_eq!(v.title, "run_a/vm.xplane.pb → run_b/vm.xplane.pb");
    let text = oomlens::report::diff_text::render(&report, 5);
    let md = oomlens::report::diff_markdown::render(&report, 5);
    assert!(
        text.starts_with("oomlens diff — run_a/vm.xplane.pb → run_b/vm.xplane.pb"),
        "{text}"
    );
    assert!(
        md.contains("run\\_a/vm.xplane.pb") || md.contains("run_a/vm.xplane.pb"),
        "{md}"
    );
    // Without folders that tell them apart, the side does.
    let same = compare_paths(
        &root.0.join("run_a/vm.xplane.pb"),
        &root.0.join("run_a/vm.xplane.pb"),
        &DiffOptions::default(),
    )
    .unwrap();
    let v = &oomlens::report::diff_view::report(&same, 5).hosts[0];
    assert_eq!(v.title, "vm.xplane.pb (before) → vm.xplane.pb (after)");
}

/// A line is resolved only when its bytes went away: `leak_steps` → `attention_train`
/// loses the role_backward line while the peak grows, so it is "gone", not resolved,
/// and the text and Markdown say so; on the checkpoint pair the peak dropped and
/// role_forward is resolved. The estimated-vs-measured block comes before the tables.
#[test]
fn a_line_is_resolved_only_when_its_bytes_went_away() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let grew = compare_paths(
        &fixtures.join("leak_steps"),
        &fixtures.join("attention_train"),
        &DiffOptions::default(),
    )
    .unwrap();
    let d = &grew.hosts[0];
    assert!(d.headline.peak_after_bytes > d.headline.peak_before_bytes);
    assert!(d.diagnosis.resolved.is_empty(), "{:?}", d.diagnosis);
    assert!(
        d.diagnosis
            .gone
            .iter()
            .any(|id| id.as_str() == "role_backward"),
        "{:?}",
        d.diagnosis
    );
    let text = oomlens::report::diff_text::render(&grew, 5);
    assert!(text.contains("  gone       Mostly backward"), "{text}");
    assert!(!text.contains("resolved   "), "{text}");
    let md = oomlens::report::diff_markdown::render(&grew, 5);
    assert!(md.contains("- gone: **Mostly backward"), "{md}");

    let dropped = diff("checkpoint");
    assert!(dropped
        .diagnosis
        .resolved
        .iter()
        .any(|id| id.as_str() == "role_forward"));
    assert!(dropped.diagnosis.gone.is_empty());
    let report = compare_paths(
        &pair_dir("checkpoint", "before"),
        &pair_dir("checkpoint", "after"),
        &DiffOptions::default(),
    )
    .unwrap();
    for out in [
        oomlens::report::diff_text::render(&report, 5),
        oomlens::report::diff_markdown::render(&report, 5),
    ] {
        let estimated = out.find("Estimated vs measured").expect("the block");
        let plan = out.find("parameters").expect("the plan");
        let diagnosis = out.find("Diagnosis").expect("the lines");
        assert!(estimated < diagnosis && diagnosis < plan, "{out}");
        // The role breakdown once.
        assert_eq!(out.matches("At the heap peak, by role").count(), 1, "{out}");
    }
}

/// Two pasted errors compare: no plan on either side, the diagnosis lines compared, and
/// none of them "resolved" (no peak says their bytes went away).
#[test]
fn two_error_messages_compare() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let report = compare_paths(
        &fixtures.join("oom_first_call/error.txt"),
        &fixtures.join("oom_top_scores/error.txt"),
        &DiffOptions::default(),
    )
    .unwrap();
    let d = &report.hosts[0];
    assert!(d.diagnosis.compared);
    assert!(d.diagnosis.resolved.is_empty());
    assert!(!d.diagnosis.gone.is_empty() || !d.diagnosis.new.is_empty());
    let text = oomlens::report::diff_text::render(&report, 5);
    assert!(
        text.starts_with("oomlens diff — oom_first_call/error.txt → oom_top_scores/error.txt\n"),
        "{text}"
    );
    assert!(
        !text.contains("module:"),
        "no module line without plans: {text}"
    );
    assert!(text.contains("neither run has a compiled plan"), "{text}");
}
