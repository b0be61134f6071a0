//! Scenario captures (docs/diagnosis.md: the scenarios the tests build, and the diagnosis
//! lines), built in the test by `support/` with the event and stat names XLA's profiler
//! writes, analyzed, and checked against figures computed from what the builder put in —
//! never from oomlens.

mod support;

use oomlens::report::json;
use oomlens::report::model::{Diagnosis, DiagnosisId, HostReport, Label, LiveOrigin, Role};
use oomlens::Options;
use serde_json::Value;
use support::capture_builder::S;
use support::gpu_sim::{Flavor, MetadataLayout};
use support::hlo_builder::Intent;
use support::other_backends::{cpu_training, tpu_inference, FINGERPRINT};
use support::scenarios::*;

const BEFORE_THE_CAPTURE: LiveOrigin = LiveOrigin::BeforeCapture {
    history_from_ps: None,
};

/// Whether arrays came from a transfer inside the user's Python function `function`.
fn transferred_in(origin: &LiveOrigin, function: &str) -> bool {
    matches!(origin, LiveOrigin::Transfer { frame: Some(f), .. } if f.contains(function))
}

struct Analyzed {
    report: HostReport,
    json: Value,
}

fn analyze_with(s: &Scenario, options: &Options) -> Analyzed {
    let report = oomlens::analyze(
        &s.bytes,
        "scenario-host",
        "scenario.xplane.pb",
        options,
        &mut |_, _, _| {},
    )
    .expect("the scenario capture analyzes");
    let json = json::to_value(&oomlens::report(vec![report.clone()]));
    Analyzed { report, json }
}

fn analyze(s: &Scenario) -> Analyzed {
    analyze_with(s, &Options::default())
}

fn with_error(s: &Scenario, text: &str) -> Analyzed {
    analyze_with(
        s,
        &Options {
            error_text: Some(text.into()),
            ..Options::default()
        },
    )
}

impl Analyzed {
    fn ids(&self) -> Vec<DiagnosisId> {
        self.report.diagnosis.iter().map(|d| d.id).collect()
    }

    fn line(&self, id: DiagnosisId) -> &Diagnosis {
        self.report
            .diagnosis
            .iter()
            .find(|d| d.id == id)
            .unwrap_or_else(|| panic!("no `{id:?}` line; the lines are {:?}", self.ids()))
    }

    fn has(&self, id: DiagnosisId) -> bool {
        self.report.diagnosis.iter().any(|d| d.id == id)
    }

    fn assert_lines(&self, present: &[DiagnosisId], absent: &[DiagnosisId]) {
        for id in present {
            assert!(self.has(*id), "expected `{id}` among {:?}", self.ids());
        }
        for id in absent {
            assert!(
                !self.has(*id),
                "did not expect `{id}` among {:?}",
                self.ids()
            );
        }
    }

    fn module(&self, label: &str) -> &oomlens::report::model::ModuleReport {
        self.report
            .modules
            .iter()
            .find(|m| m.label == label)
            .unwrap_or_else(|| panic!("no module {label}"))
    }

    fn runtime(&self) -> &oomlens::report::model::Runtime {
        self.report.runtime.as_ref().expect("a runtime section")
    }
}

/// As oomlens prints sizes: one rule in every report (`oomlens::units`).
use oomlens::units::size;

fn pct(part: u64, whole: u64) -> String {
    format!("{:.1}%", 100.0 * part as f64 / whole as f64)
}

fn all_scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        (
            "attention (XLA 2024–2025)",
            attention_plan_too_big(Flavor::Jax08, MetadataLayout::ProgramIdAsId),
        ),
        (
            "attention (current XLA)",
            attention_plan_too_big(Flavor::Current, MetadataLayout::ProgramIdStat),
        ),
        (
            "gradients kept (XLA 2024–2025)",
            gradients_kept(Flavor::Jax08, MetadataLayout::ProgramIdAsId),
        ),
        (
            "gradients kept (current XLA)",
            gradients_kept(Flavor::Current, MetadataLayout::ProgramIdStat),
        ),
        ("no donation", no_donation()),
        ("eval copy on the device", eval_copy_left_on_device()),
        ("fraction set", fraction_set_plan_bigger_than_device()),
        ("debug print", debug_print_large_tensor()),
    ]
}

// -------------------------------------------------------------------------------------
// (a) attention plan too big
// -------------------------------------------------------------------------------------

#[test]
fn attention_plan_too_big_needs_more_than_the_pool() {
    for flavor in [
        (Flavor::Jax08, MetadataLayout::ProgramIdAsId),
        (Flavor::Current, MetadataLayout::ProgramIdStat),
    ] {
        let s = attention_plan_too_big(flavor.0, flavor.1);
        let a = analyze(&s);
        let step = "jit_train_step(5)";
        let facts = s.facts(step);

        // Module selection (docs/diagnosis.md#which-module-the-report-is-about): the last
        // execution launched no kernel.
        assert_eq!(
            a.report.selected_module.as_deref(),
            Some(step),
            "{flavor:?}"
        );
        assert!(
            a.report.selection_reason.contains("launched no kernel"),
            "{}",
            a.report.selection_reason
        );

        // The plan, read.
        let plan = &a.module(step).plan;
        assert_eq!(plan.temp_bytes, facts.temp_bytes);
        assert_eq!(size(plan.temp_bytes), "3.41 GiB");
        assert_eq!(plan.total_bytes, facts.needs());
        assert_eq!(size(facts.needs()), "3.72 GiB");
        assert_eq!(plan.heap_peak_bytes, facts.heap_peak);
        assert_eq!(
            plan.roles_at_peak.forward,
            facts.role_bytes(Intent::Forward)
        );
        assert_eq!(
            plan.roles_at_peak.backward,
            facts.role_bytes(Intent::Backward)
        );
        assert_eq!(
            plan.roles_at_peak.workspace,
            facts.role_bytes(Intent::Workspace)
        );
        assert_eq!(plan.roles_at_peak.other, facts.role_bytes(Intent::Other));
        let forward = pct(facts.role_bytes(Intent::Forward), facts.heap_peak);
        assert_eq!(forward, "81.6%");
        let squares: Vec<_> = plan
            .live_at_peak
            .iter()
            .filter(|b| b.shape == "f32[8,8,1024,1024]")
            .collect();
        assert_eq!(squares.len(), 5);
        assert!(squares
            .iter()
            .all(|b| b.source == "model.py:57" && b.role == Role::Forward));
        assert_eq!(plan.remat_instructions, facts.remat_instructions);
        assert_eq!(plan.remat_instructions, 89);

        // The diagnosis lines.
        a.assert_lines(
            &[
                DiagnosisId::PlanExceedsCapacity,
                DiagnosisId::RoleForward,
                DiagnosisId::XlaRemat,
                DiagnosisId::AllocatorRetry,
                DiagnosisId::MemFractionSet,
            ],
            &[
                DiagnosisId::RoleBackward,
                DiagnosisId::RoleWorkspace,
                DiagnosisId::GrowthPerExecution,
                DiagnosisId::NoDonation,
                DiagnosisId::OtherLiveArrays,
                DiagnosisId::DebugCallback,
                DiagnosisId::LargeReplicated,
                DiagnosisId::NoAllocatorEvents,
            ],
        );
        let exceeds = a.line(DiagnosisId::PlanExceedsCapacity);
        assert_eq!(exceeds.label, Label::Read);
        assert!(
            exceeds
                .text
                .contains(&format!("needs {} (read", size(facts.needs())))
                && exceeds
                    .text
                    .contains(&format!("> capacity {} (measured)", size(s.pool))),
            "{}",
            exceeds.text
        );
        assert!(exceeds.text.contains(&format!("{forward} forward-kept")));
        assert_eq!(size(s.pool), "2.79 GiB");

        let fwd = a.line(DiagnosisId::RoleForward);
        assert_eq!(fwd.label, Label::Read);
        assert!(
            fwd.text.contains(
                "5× f32[8,8,1024,1024] at model.py:57 (jit(train_step)/jvp(model)/block_"
            ),
            "{}",
            fwd.text
        );
        assert!(fwd.text.contains(&format!("= {}", size(5 * 256 * MIB))));
        // jax.checkpoint on each of the 5 blocks: the forward-kept bytes go, but the
        // backward pass recomputes one block at a time and holds its activations with
        // their gradients, about 2/5 of them (docs/diagnosis.md).
        let forward = facts.role_bytes(Intent::Forward);
        let saving = forward - forward * 2 / 5;
        assert_eq!(fwd.saving_bytes, Some(saving));
        assert_eq!(fwd.fits_after, Some(facts.needs() - saving <= s.pool));
        assert!(fwd.cost.is_some());

        assert!(a
            .line(DiagnosisId::XlaRemat)
            .text
            .contains("89 instructions"));

        let retry = a.line(DiagnosisId::AllocatorRetry);
        assert_eq!(retry.label, Label::Measured);
        assert_eq!(s.retries.len(), 1);
        assert_eq!(
            s.retries[0].0, facts.temp_bytes,
            "the temp block is what failed"
        );
        assert!(
            retry
                .text
                .contains("1 AllocatorRetry event in jit_train_step(5) execution 1")
                && retry.text.contains("longest 10.00 s")
                && retry
                    .text
                    .contains("none of the waiting executions started"),
            "{}",
            retry.text
        );
        let rt = a.runtime();
        assert_eq!(rt.retry.count, 1);
        assert_eq!(rt.retry.longest_ns, (10 * S / 1000) as f64);
        assert_eq!(rt.retry.total_ns, (10 * S / 1000) as f64);
        assert!(!rt.retry.any_execution_started_after);
        assert_eq!(rt.retry.waits.len(), 1);
        assert_eq!(
            rt.retry.waits[0].execution.as_deref(),
            Some("jit_train_step(5) execution 1")
        );

        let fraction = a.line(DiagnosisId::MemFractionSet);
        assert_eq!(fraction.label, Label::Measured);
        let at_default = (0.75 * MI355X as f64) as u64;
        assert_eq!(fraction.saving_bytes, Some(at_default - s.pool));
        assert_eq!(fraction.fits_after, Some(true), "3.72 GiB fits in 216 GiB");

        // Executions: init launched kernels, the step did not.
        let init = &s.executions_of("jit_init(3)")[0];
        let failed = &s.executions_of(step)[0];
        assert!(init.launched && !failed.launched);
        let listed: Vec<_> = rt.executions.iter().filter(|e| e.module == step).collect();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].launched_kernels, Some(false));
        assert_eq!(listed[0].run_id, Some(failed.run_id));
        assert_eq!(
            listed[0].in_use_at_start_bytes,
            Some(failed.in_use_at_start)
        );
        assert_eq!(listed[0].start_ns, failed.start_ps as f64 / 1000.0);
        let init_listed = rt.executions.iter().find(|e| e.module == "jit_init(3)");
        assert_eq!(init_listed.and_then(|e| e.launched_kernels), Some(true));

        // Live at the failed execution: its arguments only (the init outputs, the batch).
        let inputs: u64 = rt
            .live_at_last_execution
            .iter()
            .map(|g| g.input_bytes)
            .sum();
        assert_eq!(inputs, facts.parameter_bytes);
    }
}

#[test]
fn pasted_error_matches_the_temp_block() {
    let s = attention_plan_too_big(Flavor::Jax08, MetadataLayout::ProgramIdAsId);
    let facts = s.facts("jit_train_step(5)");
    for text in [
        format!(
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate {} bytes.",
            facts.temp_bytes
        ),
        format!(
            "W external/xla/xla/tsl/framework/bfc_allocator.cc:501] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB (rounded to {})requested by op",
            facts.temp_bytes
        ),
    ] {
        let a = with_error(&s, &text);
        let e = &a.json["error"];
        // The message's own format and figures (it states no capacity: the capture's
        // pool is the report's `capacity_bytes`).
        let kind = if text.contains("bfc_allocator") { "bfc_runtime" } else { "short" };
        assert_eq!(e["kind"], kind);
        assert_eq!(e["requested_bytes"].as_u64(), Some(facts.temp_bytes));
        assert_eq!(e["capacity_bytes"], serde_json::Value::Null);
        assert_eq!(a.json["capacity_bytes"].as_u64(), Some(s.pool));
        assert_eq!(e["matched_part"], "temp_block");
        let matched = e["matched"].as_str().expect("matched");
        assert!(
            matched.contains("temporary block of jit_train_step(5)") && matched.contains("3.41 GiB"),
            "{matched}"
        );
    }
    assert_eq!(
        format!("{:.2}GiB", facts.temp_bytes as f64 / GIB as f64),
        "3.41GiB"
    );
}

// -------------------------------------------------------------------------------------
// (b) keeps gradients every step
// -------------------------------------------------------------------------------------

#[test]
fn gradients_kept_every_step_grow_by_the_outputs() {
    for (flavor, layout) in [
        (Flavor::Jax08, MetadataLayout::ProgramIdAsId),
        (Flavor::Current, MetadataLayout::ProgramIdStat),
    ] {
        let s = gradients_kept(flavor, layout);
        let a = analyze(&s);
        let step = "jit_train_step(7)";
        let facts = s.facts(step);
        assert_eq!(
            a.report.selected_module.as_deref(),
            Some(step),
            "{flavor:?}"
        );
        assert!(a
            .report
            .selection_reason
            .contains("largest module that executed"));

        let logs = s.executions_of(step);
        assert_eq!(logs.len(), GROWTH_STEPS);
        let rt = a.runtime();
        let starts: Vec<u64> = logs.iter().map(|l| l.in_use_at_start).collect();
        assert_eq!(rt.in_use_at_selected_starts, starts);
        assert_eq!(size(starts[0]), "316.0 MiB");
        assert_eq!(size(*starts.last().unwrap()), "1.22 GiB");

        // Each step keeps its non-aliased outputs, as BFC rounds them (256 bytes).
        let kept: u64 = facts
            .non_aliased_output_sizes
            .iter()
            .map(|&b| b.div_ceil(256) * 256)
            .sum();
        assert_eq!(rt.growth_per_execution_bytes, Some(kept as i64));
        let ratio = rt.growth_ratio_to_outputs.expect("a ratio");
        assert!((ratio - kept as f64 / facts.non_aliased_output_bytes as f64).abs() < 1e-12);
        assert_eq!(format!("{ratio:.2}"), "1.00");

        // The plan fits.
        let plan = &a.module(step).plan;
        assert_eq!(plan.total_bytes, facts.needs());
        assert_eq!(size(facts.needs()), "788.0 MiB");
        assert!(facts.needs() < s.pool);

        a.assert_lines(
            &[DiagnosisId::GrowthPerExecution, DiagnosisId::MemFractionSet],
            &[
                DiagnosisId::PlanExceedsCapacity,
                DiagnosisId::RoleForward,
                DiagnosisId::RoleBackward,
                DiagnosisId::RoleWorkspace,
                DiagnosisId::NoDonation,
                DiagnosisId::OtherLiveArrays,
                DiagnosisId::AllocatorRetry,
                DiagnosisId::XlaRemat,
            ],
        );
        let growth = a.line(DiagnosisId::GrowthPerExecution);
        assert_eq!(growth.label, Label::Measured);
        for part in [
            "grows 104.0 MiB per execution".to_string(),
            format!(
                "{} → {} over 10 executions",
                size(starts[0]),
                size(starts[9])
            ),
            "= 1.00× the non-aliased outputs".into(),
            "$<unknown> append".into(),
        ] {
            assert!(growth.text.contains(&part), "{part:?} in {}", growth.text);
        }
        let accumulated = starts[9] - starts[0];
        assert_eq!(growth.saving_bytes, Some(accumulated));
        assert_eq!(growth.cost.as_deref(), Some("none"));
        assert_eq!(growth.fits_after, Some(true));

        assert!(rt
            .host_events_between_last_executions
            .iter()
            .any(|e| e.name == "$<unknown> append" && e.count == 1));

        // Live at the last execution: the outputs of executions 1–9 (grads and loss),
        // the state from before the capture and the current batch (its arguments).
        let live = &rt.live_at_last_execution;
        let outputs = live
            .iter()
            .find(|g| {
                g.origin
                    == LiveOrigin::Outputs {
                        module: step.into(),
                        executions: (1..=9).collect(),
                    }
            })
            .unwrap_or_else(|| panic!("{live:?}"));
        assert_eq!(outputs.bytes, kept * 9);
        assert_eq!(outputs.count, 18);
        assert_eq!(outputs.input_bytes, 0);
        let before = live
            .iter()
            .find(|g| g.origin == BEFORE_THE_CAPTURE)
            .expect("the state");
        assert_eq!(before.bytes, s.preexisting);
        assert_eq!(before.input_bytes, s.preexisting);
        let (transfer_event, frame, batch) = s.transfers.last().cloned().unwrap();
        let batch_group = live
            .iter()
            .find(|g| {
                g.origin
                    == LiveOrigin::Transfer {
                        event: transfer_event.clone(),
                        frame: Some(frame.clone()),
                    }
            })
            .unwrap_or_else(|| panic!("{live:?}"));
        assert_eq!(batch_group.bytes, batch);
        assert_eq!(batch_group.input_bytes, batch);
        assert!(rt
            .executions
            .iter()
            .all(|e| e.launched_kernels == Some(true)));
    }
}

// -------------------------------------------------------------------------------------
// (c) no donation
// -------------------------------------------------------------------------------------

#[test]
fn no_donation_keeps_old_and_new_state_together() {
    let s = no_donation();
    let step = "jit_train_step(9)";
    let facts = s.facts(step);
    let failed_output = 161280 * 1024 * 4;
    let a = with_error(
        &s,
        &format!(
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate {failed_output} bytes."
        ),
    );
    assert_eq!(a.report.selected_module.as_deref(), Some(step));
    let plan = &a.module(step).plan;
    assert_eq!(plan.parameter_bytes, facts.parameter_bytes);
    assert_eq!(size(plan.parameter_bytes), "1.86 GiB");
    assert_eq!(size(plan.output_bytes), "1.86 GiB");
    assert_eq!(plan.donated_parameter_count, 0);
    assert_eq!(plan.temp_bytes, 172 * MIB);
    assert_eq!(plan.total_bytes, facts.needs());
    assert_eq!(size(facts.needs()), "3.88 GiB");

    a.assert_lines(
        &[
            DiagnosisId::PlanExceedsCapacity,
            DiagnosisId::NoDonation,
            DiagnosisId::RoleBackward,
            DiagnosisId::RoleWorkspace,
            DiagnosisId::AllocatorRetry,
            DiagnosisId::MemFractionSet,
        ],
        &[
            DiagnosisId::RoleForward,
            DiagnosisId::GrowthPerExecution,
            DiagnosisId::OtherLiveArrays,
            DiagnosisId::XlaRemat,
        ],
    );
    let exceeds = a.line(DiagnosisId::PlanExceedsCapacity);
    assert!(exceeds.text.contains("needs 3.88 GiB") && exceeds.text.contains("2.79 GiB"));

    let donation = a.line(DiagnosisId::NoDonation);
    assert_eq!(donation.label, Label::Estimated);
    // Every parameter has an output of its shape (new state; the batch and the predictions).
    assert_eq!(donation.saving_bytes, Some(facts.parameter_bytes));
    assert_eq!(
        donation.fits_after,
        Some(facts.needs() - facts.parameter_bytes <= s.pool)
    );
    assert_eq!(donation.fits_after, Some(true));
    assert!(donation.text.contains("0 donated") && donation.text.contains("1.86 GiB"));
    assert!(donation
        .fix
        .as_deref()
        .unwrap_or("")
        .contains("donate_argnums"));

    let backward = a.line(DiagnosisId::RoleBackward);
    assert!(backward
        .text
        .contains(&pct(facts.role_bytes(Intent::Backward), facts.heap_peak)));
    let workspace = a.line(DiagnosisId::RoleWorkspace);
    assert!(workspace.text.contains(&pct(64 * MIB, facts.heap_peak)));

    // The failed request is one output (the second new-state array), not the temp block.
    assert_eq!(s.retries[0].0, failed_output);
    let matched = a.json["error"]["matched"].as_str().expect("matched");
    assert!(
        matched.contains("f32[161280,1024]")
            && matched.contains(step)
            && matched.starts_with("new_"),
        "{matched}"
    );
}

// -------------------------------------------------------------------------------------
// (d) an eval copy of the dataset left on the device
// -------------------------------------------------------------------------------------

#[test]
fn eval_copy_left_on_device_names_the_transfer() {
    let s = eval_copy_left_on_device();
    let step = "jit_train_step(11)";
    let facts = s.facts(step);
    let a = with_error(
        &s,
        &format!(
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate {} bytes.",
            facts.temp_bytes
        ),
    );
    // The eval step has the larger plan and ran, but the train step is where memory ran out.
    assert_eq!(a.report.modules[0].label, "jit_eval_step(13)");
    assert_eq!(a.report.selected_module.as_deref(), Some(step));
    let logs = s.executions_of(step);
    assert_eq!(logs.len(), 4);
    assert!(logs[..3].iter().all(|l| l.launched) && !logs[3].launched);
    let listed: Vec<_> = a
        .runtime()
        .executions
        .iter()
        .filter(|e| e.module == step)
        .collect();
    assert_eq!(
        listed
            .iter()
            .map(|e| e.launched_kernels)
            .collect::<Vec<_>>(),
        vec![Some(true), Some(true), Some(true), Some(false)]
    );

    a.assert_lines(
        &[DiagnosisId::OtherLiveArrays, DiagnosisId::AllocatorRetry],
        &[
            DiagnosisId::GrowthPerExecution,
            DiagnosisId::MemFractionSet,
            DiagnosisId::PlanExceedsCapacity,
            DiagnosisId::NoDonation,
        ],
    );
    let other = a.line(DiagnosisId::OtherLiveArrays);
    assert_eq!(other.label, Label::Measured);
    assert!(
        other.text.contains(&format!(
            "other live arrays take {}",
            size(EVAL_SET_BYTES)
        )) && other.text.contains(
            "host-to-device transfer (PjRtStreamExecutorClient::BufferFromHostBuffer in $train.py:60 load_eval_set)"
        ),
        "{}",
        other.text
    );
    assert_eq!(other.saving_bytes, Some(EVAL_SET_BYTES));
    let live_at_start = logs[3].in_use_at_start;
    let adds = facts.needs() - facts.parameter_bytes;
    assert_eq!(
        other.fits_after,
        Some(live_at_start - EVAL_SET_BYTES + adds <= s.pool)
    );
    assert_eq!(other.fits_after, Some(true));
    assert!(
        live_at_start + adds > s.pool,
        "without the fix it does not fit"
    );

    let live = &a.runtime().live_at_last_execution;
    let eval_set = live
        .iter()
        .find(|g| transferred_in(&g.origin, "load_eval_set"))
        .expect("eval set");
    assert_eq!(
        (eval_set.bytes, eval_set.count, eval_set.input_bytes),
        (EVAL_SET_BYTES, 1, 0)
    );
    let batch = live
        .iter()
        .find(|g| transferred_in(&g.origin, "get_batch"))
        .expect("batch");
    assert_eq!(
        (batch.bytes, batch.input_bytes),
        (TRAIN_BATCH_BYTES, TRAIN_BATCH_BYTES)
    );
    let before = live
        .iter()
        .find(|g| g.origin == BEFORE_THE_CAPTURE)
        .expect("state");
    assert_eq!(
        (before.bytes, before.input_bytes),
        (s.preexisting, s.preexisting)
    );

    assert_eq!(
        a.json["error"]["requested_bytes"].as_u64(),
        Some(facts.temp_bytes)
    );
    assert!(a.json["error"]["matched"]
        .as_str()
        .unwrap_or("")
        .contains("temporary block of jit_train_step(11)"));
}

// -------------------------------------------------------------------------------------
// (e) a pool far below the device's memory
// -------------------------------------------------------------------------------------

#[test]
fn fraction_set_far_below_device_memory() {
    let s = fraction_set_plan_bigger_than_device();
    let a = analyze(&s);
    let facts = s.facts("jit_big_step(3)");
    a.assert_lines(
        &[
            DiagnosisId::MemFractionSet,
            DiagnosisId::PlanExceedsCapacity,
            DiagnosisId::AllocatorRetry,
        ],
        &[],
    );
    let line = a.line(DiagnosisId::MemFractionSet);
    assert_eq!(line.label, Label::Measured);
    assert!(
        line.text
            .contains("4.00 GiB of the device's 16.00 GiB (25%"),
        "{}",
        line.text
    );
    let at_default = (0.75 * s.device_memory as f64) as u64;
    assert_eq!(line.saving_bytes, Some(at_default - s.pool));
    // 20 GiB does not fit even in 75% of 16 GiB: raising the fraction is not the fix.
    assert!(facts.needs() > at_default);
    assert_eq!(line.fits_after, Some(false));

    // At JAX's default fraction (0.75 of the device), nothing is said.
    let d = analyze(&eval_copy_left_on_device());
    assert!(!d.has(DiagnosisId::MemFractionSet), "{:?}", d.ids());
}

// -------------------------------------------------------------------------------------
// (f) a leftover jax.debug.print
// -------------------------------------------------------------------------------------

#[test]
fn debug_print_callbacks_and_large_tensors() {
    let s = debug_print_large_tensor();
    let a = analyze(&s);
    assert_eq!(a.report.selected_module.as_deref(), Some("jit_step(5)"));
    a.assert_lines(
        &[DiagnosisId::DebugCallback, DiagnosisId::LargeReplicated],
        &[DiagnosisId::MemFractionSet, DiagnosisId::OtherLiveArrays],
    );
    let cb = a.line(DiagnosisId::DebugCallback);
    assert_eq!(cb.label, Label::Read);
    assert!(
        cb.text
            .contains("xla_ffi_python_gpu_callback (jit(step)/debug_callback)"),
        "{}",
        cb.text
    );
    let big = a.line(DiagnosisId::LargeReplicated);
    assert_eq!(big.label, Label::Read);
    let bytes = 40960u64 * 40960 * 4;
    assert!(bytes > s.pool / 2);
    assert!(
        big.text.contains("f32[40960,40960]") && big.text.contains("host callback"),
        "{}",
        big.text
    );
    assert_eq!(big.saving_bytes, Some(bytes));

    // The eval step, picked by name, uses the legacy callback target.
    let e = analyze_with(
        &s,
        &Options {
            module: Some("jit_eval".into()),
            ..Options::default()
        },
    );
    assert_eq!(e.report.selected_module.as_deref(), Some("jit_eval(7)"));
    assert_eq!(e.report.selection_reason, "chosen by the user");
    assert!(e
        .line(DiagnosisId::DebugCallback)
        .text
        .contains("xla_python_gpu_callback (jit(eval)/debug_callback)"));
    assert!(!e.has(DiagnosisId::LargeReplicated));
}

// -------------------------------------------------------------------------------------
// Contracts over every scenario
// -------------------------------------------------------------------------------------

#[test]
fn every_line_is_labelled_and_every_fix_is_costed() {
    for (name, s) in all_scenarios() {
        let a = analyze(&s);
        assert!(!a.report.diagnosis.is_empty(), "{name}");
        for d in &a.report.diagnosis {
            assert!(
                matches!(d.label, Label::Measured | Label::Read | Label::Estimated),
                "{name}: {}",
                d.id
            );
            let Some(_) = &d.fix else { continue };
            if matches!(
                d.id,
                DiagnosisId::XlaRemat | DiagnosisId::DebugCallback | DiagnosisId::HostOffload
            ) {
                continue; // evidence lines: no bytes to save by themselves
            }
            assert!(d.saving_bytes.is_some(), "{name}: {} has no saving", d.id);
            assert!(d.cost.is_some(), "{name}: {} has no cost", d.id);
            assert!(d.fits_after.is_some(), "{name}: {} has no fits_after", d.id);
        }
    }
}

#[test]
fn runtime_json_has_the_issue_3_keys() {
    for (name, s) in all_scenarios() {
        let a = analyze(&s);
        let rt = &a.json["runtime"];
        let alloc = &rt["allocators"][0];
        assert_eq!(alloc["name"], "GPU_0_bfc", "{name}");
        assert_eq!(alloc["capacity_bytes"].as_u64(), Some(s.pool), "{name}");
        assert_eq!(
            alloc["peak_in_use_bytes"].as_u64(),
            Some(s.peak_in_use),
            "{name}"
        );
        assert_eq!(
            alloc["fragmentation_at_peak"].as_f64(),
            Some(0.125),
            "{name}"
        );
        let executions = rt["executions"].as_array().expect("executions");
        assert_eq!(executions.len(), s.executions.len(), "{name}");
        for (e, log) in executions.iter().zip(&s.executions) {
            assert_eq!(e["module"], log.label.as_str(), "{name}");
            assert_eq!(e["run_id"].as_i64(), Some(log.run_id), "{name}");
            assert_eq!(
                e["start_ns"].as_f64(),
                Some(log.start_ps as f64 / 1000.0),
                "{name}"
            );
            assert_eq!(
                e["in_use_at_start_bytes"].as_u64(),
                Some(log.in_use_at_start),
                "{name}"
            );
            // Unknown (null) when the device recorded no kernel at all.
            let any_kernel = s.executions.iter().any(|l| l.launched);
            let expected = any_kernel.then_some(log.launched);
            assert_eq!(e["launched_kernels"].as_bool(), expected, "{name}");
        }
        let retry = &rt["retry"];
        assert_eq!(
            retry["count"].as_u64(),
            Some(s.retries.len() as u64),
            "{name}"
        );
        let longest = s.retries.iter().map(|r| r.1).max().unwrap_or(0);
        let total: i64 = s.retries.iter().map(|r| r.1).sum();
        assert_eq!(retry["longest_ns"].as_f64(), Some((longest / 1000) as f64));
        assert_eq!(retry["total_ns"].as_f64(), Some((total / 1000) as f64));
        // Each wait is placed on the timeline's clock, in time order.
        let waits = retry["waits"].as_array().expect("waits");
        assert_eq!(waits.len(), s.retries.len().min(200), "{name}");
        for (w, r) in waits.iter().zip(&s.retries) {
            assert_eq!(w["start_ns"].as_f64(), Some(r.2 as f64 / 1000.0), "{name}");
            assert_eq!(
                w["duration_ns"].as_f64(),
                Some(r.1 as f64 / 1000.0),
                "{name}"
            );
        }
        assert!(rt.get("growth_per_execution_bytes").is_some());
        assert!(rt.get("growth_ratio_to_outputs").is_some());
        for g in rt["live_at_last_execution"].as_array().expect("live") {
            assert!(g["origin"].is_string() && g["bytes"].is_u64() && g["count"].is_u64());
        }
        assert_eq!(a.json["provenance"]["runtime"], "measured");
    }
}

#[test]
fn current_xla_names_the_failed_launch_without_a_jit_hint() {
    // Current XLA names the module in the launch event itself: the failed launch is
    // labelled even though it never reached `ExecuteThunks`.
    let s = attention_plan_too_big(Flavor::Current, MetadataLayout::ProgramIdStat);
    let a = analyze(&s);
    let failed = a
        .runtime()
        .executions
        .iter()
        .find(|e| e.launched_kernels == Some(false))
        .expect("the failed launch");
    assert_eq!(failed.module, "jit_train_step(5)");
    assert_eq!(a.module("jit_train_step(5)").program_id, 5);
}

// -------------------------------------------------------------------------------------
// The CLI
// -------------------------------------------------------------------------------------

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("oomlens-scenarios-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn cli_reports_and_reads_the_error_text_from_stdin() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let s = attention_plan_too_big(Flavor::Jax08, MetadataLayout::ProgramIdAsId);
    let facts = s.facts("jit_train_step(5)");
    let dir = scratch_dir("cli");
    let capture = dir.join("attention.xplane.pb");
    std::fs::write(&capture, &s.bytes).expect("write capture");

    let mut child = Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .arg(&capture)
        .args(["--error-text", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run oomlens");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            format!(
                "RESOURCE_EXHAUSTED: Out of memory while trying to allocate {} bytes.\n",
                facts.temp_bytes
            )
            .as_bytes(),
        )
        .expect("write stdin");
    let out = child.wait_with_output().expect("oomlens finishes");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("module: jit_train_step(5)"), "{text}");
    assert!(
        text.contains("matches the temporary block of jit_train_step(5) (3.41 GiB)"),
        "{text}"
    );

    // The report ends with the diagnosis lines (then the check command).
    let diagnosis = text.rfind("\nDiagnosis:\n").expect("a diagnosis section");
    let tail = &text[diagnosis..];
    for id in [
        DiagnosisId::PlanExceedsCapacity,
        DiagnosisId::RoleForward,
        DiagnosisId::XlaRemat,
        DiagnosisId::AllocatorRetry,
        DiagnosisId::MemFractionSet,
    ] {
        // The title, never the id, as the card's heading.
        let heading = format!("] {}\n", oomlens::report::present::title(id));
        assert!(tail.contains(&heading), "{id} in {tail}");
        assert!(!tail.contains(id.as_str()), "{id} in {tail}");
    }
    let last_line = text.trim_end().lines().last().unwrap_or("");
    assert!(last_line.starts_with("Check on your side:"), "{last_line}");
    let between = &tail[..tail.rfind("\nCheck on your side").unwrap_or(tail.len())];
    assert!(
        between
            .lines()
            .skip(2)
            .all(|l| l.starts_with("  [") || l.starts_with("      ") || l.is_empty()),
        "only diagnosis lines after the heading: {between}"
    );

    // JSON on standard output; nothing written next to the capture.
    let out = Command::new(env!("CARGO_BIN_EXE_oomlens"))
        .arg(&capture)
        .args(["--format", "json"])
        .output()
        .expect("run oomlens");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["selected_module"], "jit_train_step(5)");
    assert_eq!(v["runtime"]["retry"]["count"], 1);
    let files: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert_eq!(files.len(), 1, "the CLI wrote next to the capture");
    let _ = std::fs::remove_dir_all(&dir);
}

// -------------------------------------------------------------------------------------
// Other backends
// -------------------------------------------------------------------------------------

#[test]
fn tpu_capture_memory_id_fingerprints_padding_and_offload() {
    let s = tpu_inference();
    let report = oomlens::analyze(
        &s.bytes,
        "tpu",
        "tpu.xplane.pb",
        &Options::default(),
        &mut |_, _, _| {},
    )
    .expect("analyzes");
    let a = Analyzed {
        json: json::to_value(&oomlens::report(vec![report.clone()])),
        report,
    };
    assert_eq!(a.report.selected_module.as_deref(), Some(s.label.as_str()));
    let m = a.module(&s.label);
    assert_eq!(m.program_id, FINGERPRINT, "the metadata id, read as u64");
    assert_eq!(m.executions, 3);

    // The allocator is found by index_on_host (no allocator_name on TPU) and named as
    // its device is.
    let rt = a.runtime();
    assert_eq!(rt.allocators.len(), 1);
    assert_eq!(rt.allocators[0].name, "TPU:0");
    assert_eq!(rt.allocators[0].capacity_bytes, s.pool);
    assert_eq!(
        rt.allocators[0].peak_in_use_bytes,
        s.reserved + s.peak_in_use
    );
    let launches: Vec<_> = rt
        .executions
        .iter()
        .map(|e| (e.module.as_str(), e.run_id))
        .collect();
    let expected: Vec<_> = s
        .launches
        .iter()
        .map(|&(_, p)| (s.label.as_str(), Some(p)))
        .collect();
    assert_eq!(launches, expected);
    assert!(rt
        .executions
        .iter()
        .all(|e| e.launched_kernels == Some(true)));
    // Reserved memory is the runtime's, not an array held from before the capture.
    assert!(
        !rt.live_at_last_execution
            .iter()
            .any(|g| matches!(g.origin, LiveOrigin::BeforeCapture { .. })),
        "{:?}",
        rt.live_at_last_execution
    );

    a.assert_lines(
        &[DiagnosisId::TpuPadding, DiagnosisId::HostOffload],
        &[
            DiagnosisId::NoDonation,
            DiagnosisId::OtherLiveArrays,
            DiagnosisId::GrowthPerExecution,
            DiagnosisId::NoAllocatorEvents,
        ],
    );
    let padded = 4096 * 256 * 4;
    let dense = 4096 * 129 * 4;
    let pad = a.line(DiagnosisId::TpuPadding);
    assert_eq!(pad.label, Label::Read);
    // Live at the peak: x, the output and the temporary, each padded 129 → 256.
    assert_eq!(pad.saving_bytes, Some(3 * (padded - dense)));
    assert_eq!(pad.fits_after, Some(true));
    let offload = a.line(DiagnosisId::HostOffload);
    assert_eq!(offload.label, Label::Read);
    assert!(
        offload.text.contains("4.00 MiB parameters"),
        "{}",
        offload.text
    );
    assert_eq!(
        a.json["modules"][0]["plan"]["host_argument_bytes"].as_u64(),
        Some(4 * MIB)
    );
    assert_eq!(
        s.facts.parameter_bytes, padded,
        "host memory is not device memory"
    );
}

#[test]
fn cpu_capture_names_launches_without_allocator_events() {
    let s = cpu_training();
    let a = {
        let report = oomlens::analyze(
            &s.bytes,
            "cpu",
            "cpu.xplane.pb",
            &Options::default(),
            &mut |_, _, _| {},
        )
        .expect("analyzes");
        Analyzed {
            json: json::to_value(&oomlens::report(vec![report.clone()])),
            report,
        }
    };
    assert_eq!(a.report.selected_module.as_deref(), Some("jit_step(1)"));
    assert_eq!(a.module("jit_step(1)").executions, 3);
    assert_eq!(a.module("jit_eval(2)").executions, 1);
    let rt = a.runtime();
    assert!(rt.allocators.is_empty());
    let launches: Vec<_> = rt
        .executions
        .iter()
        .map(|e| (e.module.as_str(), e.run_id, e.start_ns))
        .collect();
    let expected: Vec<_> = s
        .launches
        .iter()
        .enumerate()
        .map(|(i, &(t, run))| {
            let module = if i < 3 { "jit_step(1)" } else { "jit_eval(2)" };
            (module, (run != 0).then_some(run), t as f64 / 1000.0)
        })
        .collect();
    assert_eq!(launches, expected);
    assert!(rt
        .executions
        .iter()
        .all(|e| e.launched_kernels.is_none() && e.in_use_at_start_bytes.is_none()));
    a.assert_lines(
        &[DiagnosisId::NoAllocatorEvents],
        &[
            DiagnosisId::GrowthPerExecution,
            DiagnosisId::OtherLiveArrays,
            DiagnosisId::AllocatorRetry,
        ],
    );
    let line = a.line(DiagnosisId::NoAllocatorEvents);
    assert_eq!(line.label, Label::Read);
    assert!(line.text.contains("CPU backend"), "{}", line.text);
    assert!(a.json["runtime"]["allocators"]
        .as_array()
        .is_some_and(|v| v.is_empty()));
}
