//! Launch layouts the runtime scan must count once per launch, each as the profiler
//! writes it, with nothing running out — so the report must not say anything ran out.
//!
//! - **PJRT C API TPU** (JAX 0.10 with libtpu as a PJRT plugin; layout read off a
//!   TPU v6e capture, `docs/runtime-events.md`). The Python thread records jaxlib's
//!   `PjitFunction(<fn>)` twice, nested, the C API client's
//!   `PjRtCApiLoadedExecutable::Execute` (consuming context 0 of type 14, which is no
//!   context) and the producer half of
//!   the call, `PJRT_LoadedExecutable_Execute linkage` (created by
//!   `pjrt::CreatePjrtProfilerExtension` in `xla/pjrt/c/pjrt_c_api_helpers.cc`: a
//!   `TraceMeProducer` of context type 14, kPjrtLibraryCall, whose id travels to the
//!   plugin in the `PJRT_Profiler_Extension`). The plugin's thread records the consumer
//!   half, `PJRT_LoadedExecutable_Execute` (same context), around PjRt's own launch
//!   `CommonPjRtLoadedExecutable::Execute (<module>)` with `run_id`
//!   (`xla/pjrt/common_pjrt_client.cc`), `…::ExecuteHelperOnSingleDevice`, libtpu's
//!   `TpuLoadedExecutable::ExecuteLaunch`, and `MemoryAllocation` events with
//!   `index_on_host` and no `allocator_name`. The device plane has an `XLA Modules`
//!   line (one event per execution, named `<module>(<fingerprint>)`, with `run_id`)
//!   and an `XLA Ops` line. Dispatch is asynchronous: the host queues all launches
//!   before the device has run the first.
//! - **ROCm, JAX 0.8-era StreamExecutor** (`xla/pjrt/pjrt_stream_executor_client.cc`):
//!   `PjRtStreamExecutorLoadedExecutable::Execute` (`_pt`=5, `_p`=run id) around
//!   `GpuExecutable::ExecuteThunks` (`module_name`), on 8 GPUs, each launch allocating
//!   on every GPU's BFC allocator; the device trace holds kernels (roctracer, with
//!   `hlo_module`/`program_id`) for the first launches on GPU 0 only.

use prost::Message;

use super::capture_builder::{r, space, AllocatorId, Bfc, PlaneBuilder, Val, MS, US};
use super::hlo_builder::{array, op, Intent, ModuleBuilder, F32};
use super::scenarios::MIB;

pub struct Layout {
    pub bytes: Vec<u8>,
    pub label: String,
    /// Launches the program made, in time order.
    pub launches: usize,
    /// Launches (1-based, per module) the device trace holds kernels for.
    pub traced: Vec<usize>,
    /// Device planes that recorded kernels.
    pub devices_traced: Vec<String>,
}

/// A program of one temp buffer, `jit_<name>` with program id `id`.
fn small_program(name: &str, id: i64, bytes_per_side: i64) -> prost::bytes::Bytes {
    let mut b = ModuleBuilder::new(name, id);
    b.parameter("x", array(F32, &[bytes_per_side, 1024]), false);
    b.output(&op(
        "add.1",
        "add",
        array(F32, &[bytes_per_side, 1024]),
        "jit(f)/add",
    ));
    let t = b.temp(
        &op(
            "multiply.2",
            "multiply",
            array(F32, &[bytes_per_side, 1024]),
            "jit(f)/mul",
        ),
        Intent::Other,
    );
    b.free(t);
    let (hlo, _) = b.build(None);
    hlo.encode_to_vec().into()
}

/// The device's run ids: the host's own (`Shared`), or numbers of the device's own
/// that the host never names (`Unrelated`), so that only queue order places them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRunIds {
    Shared,
    Unrelated,
}

/// `jit_f` run three times through the PJRT C API on one TPU, nothing running out.
pub fn tpu_pjrt_c_api(runs: DeviceRunIds) -> Layout {
    const FINGERPRINT: u64 = 16249880398273487461;
    let label = format!("jit_f({FINGERPRINT})");
    let mut metadata = PlaneBuilder::new(1, "/host:metadata");
    metadata.metadata_entry(
        FINGERPRINT as i64,
        &label,
        "",
        &[(
            "Hlo Proto",
            Val::Bytes(small_program("jit_f", 3, 256).to_vec()),
        )],
    );
    let pool = 31 * 1024 * MIB;
    let mut bfc = Bfc::new(AllocatorId::IndexOnHost(0), pool);
    let mut host = PlaneBuilder::new(2, "/host:CPU");
    let python = host.line(10, "python", 0);
    let plugin = host.line(11, "main", 0);
    let mut device = PlaneBuilder::new(3, "/device:TPU:0");
    let modules = device.line(2, "XLA Modules", 0);
    let ops = device.line(3, "XLA Ops", 0);
    device.event_metadata_stats(
        "%add.1 = f32[256,1024]{1,0:T(8,128)} add(x, x)",
        &[("program_id", Val::U64(FINGERPRINT))],
    );
    let launches = 3;
    let mut t = 10 * MS;
    let mut queued = Vec::new();
    for k in 0..launches as i64 {
        let link = 7_000_000 + k;
        // A 64-bit run id, negative when read as a signed integer, as libtpu prints it.
        let run = -1_440_502_658 + k;
        // As the real capture: jaxlib's call twice, nested, and the C API client's
        // event consuming context 0 (no context) of type 14.
        host.event(python, "PjitFunction(f)", t, 200 * US, &[]);
        host.event(python, "PjitFunction(f)", t + US, 198 * US, &[]);
        host.event(
            python,
            "PjRtCApiLoadedExecutable::Execute",
            t + 10 * US,
            180 * US,
            &[("_ct", Val::I64(14)), ("_c", Val::I64(0))],
        );
        host.event(
            python,
            "PJRT_LoadedExecutable_Execute linkage",
            t + 11 * US,
            US,
            &[("_pt", Val::I64(14)), ("_p", Val::I64(link))],
        );
        host.event(
            plugin,
            "PJRT_LoadedExecutable_Execute",
            t + 13 * US,
            170 * US,
            &[("_ct", Val::I64(14)), ("_c", Val::I64(link))],
        );
        host.event(
            plugin,
            "CommonPjRtLoadedExecutable::Execute (jit_f)",
            t + 14 * US,
            168 * US,
            &[("run_id", Val::I64(run))],
        );
        host.event(
            plugin,
            "CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice",
            t + 15 * US,
            160 * US,
            &[],
        );
        host.event(
            plugin,
            "TpuLoadedExecutable::ExecuteLaunch",
            t + 100 * US,
            50 * US,
            &[],
        );
        let out = bfc.alloc(&mut host, plugin, t + 110 * US, 256 * 1024 * 4);
        queued.push((run, out));
        // Asynchronous dispatch: the next launch is queued long before this one runs.
        t += 300 * US;
    }
    // The device runs the queue in order, each run 5 ms.
    let mut d = 20 * MS;
    for (k, (run, out)) in queued.into_iter().enumerate() {
        let device_run = match runs {
            DeviceRunIds::Shared => run,
            DeviceRunIds::Unrelated => k as i64 + 1,
        };
        device.event(
            modules,
            &label,
            d,
            5 * MS,
            &[("run_id", Val::I64(device_run)), ("_ct", Val::I64(12))],
        );
        device.event(
            ops,
            "%add.1 = f32[256,1024]{1,0:T(8,128)} add(x, x)",
            d + 100 * US,
            4 * MS,
            &[],
        );
        bfc.free(&mut host, plugin, d + 6 * MS, out.addr);
        d += 6 * MS;
    }
    let bytes = space(
        vec![metadata.build(), host.build(), device.build()],
        "t1v-n-v6e",
    );
    Layout {
        bytes,
        label,
        launches,
        traced: (1..=launches).collect(),
        devices_traced: vec!["/device:TPU:0".into()],
    }
}

/// `jit_step` run ten times on 8 GPUs (StreamExecutor PjRt, ROCm), 1.1 GiB of a
/// 143 GiB pool each, with a device trace that holds kernels for the first five
/// launches on GPU 0 only.
pub fn rocm_incomplete_device_trace() -> Layout {
    let label = "jit_step(5)".to_string();
    let mut metadata = PlaneBuilder::new(1, "/host:metadata");
    metadata.metadata_entry(
        5,
        &label,
        "",
        &[(
            "Hlo Proto",
            Val::Bytes(small_program("jit_step", 5, 256).to_vec()),
        )],
    );
    let pool = 143 * 1024 * MIB;
    let gpus = 8u32;
    let mut host = PlaneBuilder::new(2, "/host:CPU");
    let python = host.line(10, "python", 0);
    let mut bfcs: Vec<Bfc> = (0..gpus).map(|g| Bfc::gpu(g, pool)).collect();
    let mut planes: Vec<PlaneBuilder> = (0..gpus)
        .map(|g| {
            let mut p = PlaneBuilder::new(10 + g as i64, &format!("/device:GPU:{g}"));
            p.plane_stat("memory_size", Val::U64(192 * 1024 * MIB));
            p
        })
        .collect();
    let stream = planes[0].line(1, "Stream #1(Kernel)", 0);
    let launches = 10;
    let traced_launches = 5;
    let mut t = 10 * MS;
    for k in 0..launches {
        let run = 900 + k as i64;
        host.event(python, "PjitFunction(step)", t, 400 * US, &[]);
        host.event(
            python,
            "PjRtStreamExecutorLoadedExecutable::Execute",
            t + 10 * US,
            380 * US,
            &[("_pt", Val::I64(5)), ("_p", Val::I64(run))],
        );
        host.event(
            python,
            "GpuExecutable::ExecuteThunks",
            t + 20 * US,
            360 * US,
            &[("module_name", r("jit_step"))],
        );
        // Every GPU allocates the launch's output and frees it at the end.
        for bfc in bfcs.iter_mut() {
            let out = bfc.alloc(&mut host, python, t + 30 * US, 1100 * MIB);
            bfc.free(&mut host, python, t + 350 * US, out.addr);
        }
        if k < traced_launches {
            planes[0].event(
                stream,
                "multiply_kernel",
                t + 50 * US,
                100 * US,
                &[
                    ("hlo_module", r("jit_step")),
                    ("hlo_op", r("multiply.2")),
                    ("program_id", Val::I64(5)),
                    ("correlation_id", Val::U64(k as u64 + 1)),
                ],
            );
        }
        t += MS;
    }
    let mut all = vec![metadata.build()];
    all.extend(planes.into_iter().map(PlaneBuilder::build));
    all.push(host.build());
    Layout {
        bytes: space(all, "rocm-host"),
        label,
        launches,
        traced: (1..=traced_launches).collect(),
        devices_traced: vec!["/device:GPU:0".into()],
    }
}
