//! Captures from the other backends, as their profilers write them:
//!
//! - **TPU** (libtpu, observed in `xprof_tpu_inference_2_clean.xplane.pb`;
//!   docs/xplane.md#where-the-plans-live, docs/runtime-events.md#allocator-events,
//!   #the-layouts, #transfers, #device-planes-and-kernels): plans keyed by 64-bit program
//!   fingerprints (above 2^63, so negative as int64), `HloModuleProto.id` different from
//!   the key; allocator events with `index_on_host` and no `allocator_name`, whose
//!   deallocations lack `requested_bytes`/`allocation_bytes`; `bytes_reserved` > 0;
//!   launches `TfrtTpuLoadedExecutable::Execute` (an outer one without stats, an inner
//!   one with `_pt`=5/`_p`); transfers `TfrtTpuClient::BufferFromHostBuffer::TfrtTpuBuffer`;
//!   the device plane's `XLA Modules` line (events named `<module>(<fingerprint>)` with
//!   `run_id`) and `XLA Ops` line (ops whose metadata stats carry `program_id`).
//! - **CPU, current XLA** (`xla/pjrt/cpu/cpu_client.cc`, `xla/backends/cpu/runtime/thunk.cc`,
//!   docs/runtime-events.md#the-layouts): no device plane and no allocator events; each
//!   launch runs its thunks (events named after the op with `hlo_op`, `hlo_module`,
//!   `program_id`, `run_id`, `device_ordinal`), then records
//!   `ThunkExecutor::Execute (wait for completion)` (`run_id`, `device_ordinal`); the
//!   classic runtime records `CpuExecutable::ExecuteAsyncOnStream` (`module_name`).

use prost::Message;

use super::capture_builder::{r, space, AllocatorId, Bfc, PlaneBuilder, Val, MS, US};
use super::hlo_builder::{array, op, tiled, Facts, Intent, ModuleBuilder, F32};
use super::scenarios::MIB;

pub struct Backend {
    pub bytes: Vec<u8>,
    pub facts: Facts,
    pub label: String,
    pub pool: u64,
    pub reserved: u64,
    pub peak_in_use: u64,
    /// Launches: (start ps, run id).
    pub launches: Vec<(i64, i64)>,
}

/// `jit_f(12190760917235803885)`, the fingerprint of the xprof TPU fixture.
pub const FINGERPRINT: u64 = 12190760917235803885;

/// A TPU inference step over a `(4096, 129)` array (the minor dimension pads from 129
/// to 256 in `T(8,128)` tiles), with a host-offloaded (`S(5)`) parameter.
pub fn tpu_inference() -> Backend {
    let padded = 4096 * 256 * 4;
    let mut b = ModuleBuilder::new("jit_f", 12);
    b.parameter_sized("x", tiled(F32, &[4096, 129], 0), false, padded);
    b.parameter("cache", tiled(F32, &[1024, 1024], 5), false);
    b.output(&op("add.3", "add", tiled(F32, &[4096, 129], 0), "jit(f)/add").padded(padded));
    let t = b.temp(
        &op(
            "multiply_fusion",
            "fusion",
            tiled(F32, &[4096, 129], 0),
            "jit(f)/mul",
        )
        .at("infer.py", 12)
        .padded(padded),
        Intent::Other,
    );
    b.free(t);
    let (hlo, facts) = b.build(None);

    let mut metadata = PlaneBuilder::new(1, "/host:metadata");
    let label = format!("jit_f({FINGERPRINT})");
    metadata.metadata_entry(
        FINGERPRINT as i64,
        &label,
        "",
        &[("Hlo Proto", Val::Bytes(hlo.encode_to_vec()))],
    );

    let pool = 31 * 1024 * MIB;
    let mut bfc = Bfc::new(AllocatorId::IndexOnHost(0), pool);
    bfc.reserved = 8 * MIB;
    let mut host = PlaneBuilder::new(2, "/host:CPU");
    let main = host.line(3116817, "main/3116817", 5_000);
    let worker = host.line(3118851, "py_xla_execute/3118851", 5_000);
    let mut device = PlaneBuilder::new(3, "/device:TPU:0");
    device.plane_stat("device_type_string", Val::Str("TPU v6 Lite".into()));
    let modules = device.line(2, "XLA Modules", 0);
    let ops = device.line(3, "XLA Ops", 0);
    device.event_metadata_stats(
        "%add.3 = f32[4096,129]{1,0:T(8,128)} add(x, x)",
        &[
            ("hlo_category", Val::Str("elementwise".into())),
            ("program_id", Val::U64(FINGERPRINT)),
        ],
    );

    let mut t = 10 * MS;
    // device_put(x): the transfer allocates the array on device 0.
    host.event(
        main,
        "TfrtTpuClient::BufferFromHostBuffer::TfrtTpuBuffer",
        t,
        30 * US,
        &[("_pt", Val::I64(5)), ("_p", Val::I64(4294967296))],
    );
    let x = bfc.alloc(&mut host, main, t + 10 * US, padded);
    t += 100 * US;
    let mut launches = Vec::new();
    let mut previous: Option<u64> = None;
    for run in 1..=3i64 {
        let p = 4294967297 + run;
        host.event(main, "TfrtTpuLoadedExecutable::Execute", t, 400 * US, &[]);
        host.event(
            main,
            "TfrtTpuLoadedExecutable::Execute",
            t + US,
            398 * US,
            &[("_pt", Val::I64(5)), ("_p", Val::I64(p))],
        );
        launches.push((t, p));
        // The output is allocated by the runtime's worker, the previous one dropped.
        let y = bfc.alloc(&mut host, worker, t + 50 * US, padded);
        if let Some(old) = previous.replace(y.addr) {
            bfc.free(&mut host, worker, t + 60 * US, old);
        }
        device.event(
            modules,
            &label,
            t + 100 * US,
            200 * US,
            &[
                ("run_id", Val::U64(run as u64)),
                ("replica_id", Val::I64(0)),
                ("_ct", Val::I64(12)),
                ("_c", Val::I64(p)),
            ],
        );
        device.event(
            ops,
            "%add.3 = f32[4096,129]{1,0:T(8,128)} add(x, x)",
            t + 120 * US,
            150 * US,
            &[("device_offset_ps", Val::U64((t + 120 * US) as u64))],
        );
        t += 2 * MS;
    }
    let _ = (x, r("unused"));
    let bytes = space(
        vec![metadata.build(), host.build(), device.build()],
        "t1v-n-tpu",
    );
    Backend {
        bytes,
        facts,
        label,
        pool,
        reserved: bfc.reserved,
        peak_in_use: bfc.peak,
        launches,
    }
}

/// A JAX program on the CPU backend (current XLA): three launches of `jit_step` through
/// the thunk runtime, one of `jit_eval` seen only as `CpuExecutable::ExecuteAsyncOnStream`.
pub fn cpu_training() -> Backend {
    let mut b = ModuleBuilder::new("jit_step", 1);
    b.parameter("w", array(F32, &[1024, 1024]), true);
    b.parameter("x", array(F32, &[64, 1024]), false);
    b.output(&op(
        "reduce.1",
        "reduce",
        array(F32, &[]),
        "jit(step)/reduce_sum",
    ));
    let t0 = b.temp(
        &op(
            "dot.2",
            "dot",
            array(F32, &[64, 1024]),
            "jit(step)/jvp(model)/dot_general",
        ),
        Intent::Forward,
    );
    b.free(t0);
    let (step, facts) = b.build(None);
    let mut e = ModuleBuilder::new("jit_eval", 2);
    e.parameter("w", array(F32, &[1024, 1024]), false);
    e.output(&op(
        "reduce.4",
        "reduce",
        array(F32, &[]),
        "jit(eval)/reduce_sum",
    ));
    let (eval, _) = e.build(None);

    let mut metadata = PlaneBuilder::new(1, "/host:metadata");
    metadata.metadata_entry(
        1,
        "jit_step(1)",
        "",
        &[("Hlo Proto", Val::Bytes(step.encode_to_vec()))],
    );
    metadata.metadata_entry(
        2,
        "jit_eval(2)",
        "",
        &[("Hlo Proto", Val::Bytes(eval.encode_to_vec()))],
    );

    let mut host = PlaneBuilder::new(2, "/host:CPU");
    let python = host.line(1, "python", 0);
    let mut t = MS;
    let mut launches = Vec::new();
    for run in [101i64, 102, 103] {
        // The last launch is not inside a `PjitFunction` event (dispatched from a
        // worker): only its thunks' `run_id` name its module.
        if run != 103 {
            host.event(python, "PjitFunction(step)", t, 300 * US, &[]);
        }
        for (i, thunk) in ["dot.2", "reduce.1"].iter().enumerate() {
            host.event(
                python,
                thunk,
                t + (10 + 50 * i as i64) * US,
                40 * US,
                &[
                    ("hlo_op", r(thunk)),
                    ("hlo_module", r("jit_step")),
                    ("program_id", Val::I64(1)),
                    ("run_id", Val::I64(run)),
                    ("device_ordinal", Val::I64(0)),
                ],
            );
        }
        let wait = t + 120 * US;
        host.event(
            python,
            "ThunkExecutor::Execute (wait for completion)",
            wait,
            100 * US,
            &[("run_id", Val::I64(run)), ("device_ordinal", Val::I64(0))],
        );
        launches.push((wait, run));
        t += MS;
    }
    host.event(
        python,
        "CpuExecutable::ExecuteAsyncOnStream",
        t,
        200 * US,
        &[("module_name", r("jit_eval"))],
    );
    launches.push((t, 0));
    let bytes = space(vec![metadata.build(), host.build()], "cpu-host");
    Backend {
        bytes,
        facts,
        label: "jit_step(1)".into(),
        pool: 0,
        reserved: 0,
        peak_in_use: 0,
        launches,
    }
}
