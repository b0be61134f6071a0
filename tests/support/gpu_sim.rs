//! A JAX program on one GPU, as the profiler records it: Python frames, jitted calls,
//! host-to-device transfers, the BFC allocator's events, and kernels on the device.
//! Two XLA generations are modelled (docs/runtime-events.md#the-layouts, #transfers):
//!
//! - [`Flavor::Jax08`] — XLA 2024–2025 as in the JAX 0.8 ROCm fixtures
//!   (`xla/pjrt/pjrt_stream_executor_client.cc`): the Python thread records
//!   `PjRtStreamExecutorLoadedExecutable::Execute` with `_pt`=5, `_p`=run id inside the
//!   PJRT C-API `PJRT_LoadedExecutable_Execute` (`_ct`=14); an executor thread
//!   (`py_xla_execute/…`) records `…::ExecuteHelper` ⊃ `…::EnqueueExecution` (`_ct`=5,
//!   `_c`=run id) ⊃ `Build buffer allocations` (the allocator events) and
//!   `GpuExecutable::ExecuteThunks` (`module_name`, `xla/service/gpu/gpu_executable.cc`);
//!   transfers are `PjRtStreamExecutorClient::BufferFromHostBuffer` (no stats).
//! - [`Flavor::Current`] — current XLA (`xla/pjrt/common_pjrt_client.cc`): one device
//!   runs on the calling thread inside `CommonPjRtLoadedExecutable::Execute (<name>)`
//!   (`run_id`, `execution_mode`, `name`, `num_replicas`, `num_partitions`,
//!   `num_addressable_devices`, and the producer's `_pt`=5/`_p`) ⊃
//!   `CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice` ⊃
//!   `[0] PjRtStreamExecutorRawLoadedExecutable::Execute` (`replica`, `partition`) ⊃
//!   `[0] GpuExecutable::ExecuteThunks` (`module_name`); transfers are the producer
//!   `CommonPjRtClient::LinearizeIntoImpl` (kPjRt) and the consumer `H2D Dispatch`.
//!
//! Kernels (`xla/backends/profiler/gpu/cupti_collector.cc`, `annotation.cc`;
//! docs/runtime-events.md#device-planes-and-kernels)
//! sit on `/device:GPU:0` line `Stream #1(Kernel)` with `correlation_id` (uint64),
//! `kernel_details` (ref), `tf_op` (ref `XlaModule:`), `name`, `hlo_op`, `hlo_module`
//! (refs) and `program_id` (int64). `AllocatorRetry::AllocateRaw`
//! (`xla/tsl/framework/allocator_retry.cc`, docs/runtime-events.md#allocatorretry) spans
//! the allocator's wait.

use oomlens::proto::xla::HloProto;
use prost::Message;

use super::capture_builder::{r, space, Allocated, Bfc, PlaneBuilder, Val, MS, US};
use super::hlo_builder::Facts;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Jax08,
    Current,
}

/// How `/host:metadata` keys plans (docs/xplane.md#where-the-plans-live).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataLayout {
    /// Up to XLA 083c477a: the event-metadata id is the program id.
    ProgramIdAsId,
    /// Since: sequential ids, `display_name` `<module>(<id>)`, a `program_id` uint64 stat.
    ProgramIdStat,
}

/// A compiled module as the runtime sees it.
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    pub id: i64,
    /// The Python function (`PjitFunction(<fn>)`).
    pub function: String,
    pub hlo: HloProto,
    pub facts: Facts,
    /// Kernels one execution launches: (hlo_op, name).
    pub kernels: Vec<(String, String)>,
}

impl Module {
    pub fn label(&self) -> String {
        format!("{}({})", self.name, self.id)
    }
}

/// What one execution did, for the tests' expectations.
#[derive(Debug, Clone)]
pub struct ExecutionLog {
    pub label: String,
    pub run_id: i64,
    pub start_ps: i64,
    pub in_use_at_start: u64,
    pub launched: bool,
    /// Addresses of the non-aliased outputs it allocated (empty when it failed).
    pub outputs: Vec<Allocated>,
}

#[derive(Debug, Clone)]
pub struct RetryLog {
    pub requested: u64,
    pub start_ps: i64,
    pub duration_ps: i64,
}

pub struct GpuSim {
    pub flavor: Flavor,
    pub host: PlaneBuilder,
    pub device: PlaneBuilder,
    pub bfc: Bfc,
    /// The clock, in ps since the profile started.
    pub t: i64,
    python: usize,
    executor: usize,
    worker: usize,
    kernels: usize,
    run_id: i64,
    context: i64,
    correlation: u64,
    frames: Vec<(String, i64)>,
    modules: Vec<Module>,
    pub executions: Vec<ExecutionLog>,
    pub retries: Vec<RetryLog>,
    /// Transfers: (event name, Python frame enclosing it, bytes, address).
    pub transfers: Vec<(String, String, u64, u64)>,
    device_memory: u64,
}

impl GpuSim {
    /// One GPU (`/device:GPU:0`, `memory_size` = `device_memory`) with a BFC pool of
    /// `pool` bytes (`XLA_PYTHON_CLIENT_MEM_FRACTION` × memory, in practice).
    pub fn new(flavor: Flavor, device_memory: u64, pool: u64) -> Self {
        let mut host = PlaneBuilder::new(2, "/host:CPU");
        // Line ids as the profiler writes them: thread ids; Python on `python`.
        let python = host.line(6300611701581713424, "python", 1_000);
        let executor = host.line(
            16974241031265352439_u64 as i64,
            "py_xla_execute/-1472503042444199177",
            2_000,
        );
        let worker = host.line(
            2418215489961931999,
            "tf_pjrt_thread_pool/2418215489961931999",
            2_000,
        );
        let mut device = PlaneBuilder::new(3, "/device:GPU:0");
        // GPU plane stats (docs/runtime-events.md#device-planes-and-kernels): memory_size
        // is uint64 bytes.
        device.plane_stat("device_vendor", Val::Str("AMD".into()));
        device.plane_stat("clock_rate", Val::I64(2_400_000));
        device.plane_stat("core_count", Val::I64(256));
        device.plane_stat("memory_bandwidth", Val::U64(8_000_000_000_000));
        device.plane_stat("memory_size", Val::U64(device_memory));
        device.plane_stat("compute_cap_major", Val::I64(9));
        device.plane_stat("compute_cap_minor", Val::I64(5));
        let kernels = device.line(1, "Stream #1(Kernel)", 3_000);
        Self {
            flavor,
            host,
            device,
            bfc: Bfc::gpu(0, pool),
            t: 10 * MS,
            python,
            executor,
            worker,
            kernels,
            run_id: 20,
            context: 4294967312,
            correlation: 100,
            frames: Vec::new(),
            modules: Vec::new(),
            executions: Vec::new(),
            retries: Vec::new(),
            transfers: Vec::new(),
            device_memory,
        }
    }

    pub fn device_memory(&self) -> u64 {
        self.device_memory
    }

    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    pub fn add_module(&mut self, m: Module) {
        self.modules.push(m);
    }

    pub fn module(&self, name: &str) -> &Module {
        self.modules
            .iter()
            .find(|m| m.name == name)
            .expect("module added")
    }

    pub fn advance(&mut self, ps: i64) {
        self.t += ps;
    }

    /// Opens a Python frame (`$train.py:40 step`, python_hooks.cc names;
    /// docs/runtime-events.md#python-frames).
    pub fn enter(&mut self, frame: &str) {
        self.frames.push((frame.to_owned(), self.t));
        self.t += 2 * US;
    }

    /// Closes the innermost Python frame.
    pub fn exit(&mut self) {
        self.t += 2 * US;
        let (name, start) = self.frames.pop().expect("an open frame");
        let end = self.t;
        self.host.event(self.python, &name, start, end - start, &[]);
        self.t += US;
    }

    /// A leaf Python call, e.g. `$<unknown> append` (a C method, `list.append`).
    pub fn call(&mut self, frame: &str) {
        self.host.event(self.python, frame, self.t, 3 * US, &[]);
        self.t += 5 * US;
    }

    /// `jax.device_put` of `bytes` from the host: the allocator event inside the
    /// transfer event of this XLA generation.
    pub fn transfer(&mut self, bytes: u64) -> u64 {
        let start = self.t;
        let name = match self.flavor {
            Flavor::Jax08 => "PjRtStreamExecutorClient::BufferFromHostBuffer",
            Flavor::Current => "CommonPjRtClient::LinearizeIntoImpl",
        };
        self.t += 5 * US;
        let a = self.bfc.alloc(&mut self.host, self.python, self.t, bytes);
        self.t += 40 * US;
        let stats: Vec<(&str, Val)> = match self.flavor {
            Flavor::Jax08 => vec![],
            Flavor::Current => {
                self.context += 1;
                vec![("_pt", Val::I64(5)), ("_p", Val::I64(self.context))]
            }
        };
        self.host
            .event(self.python, name, start, self.t - start, &stats);
        if self.flavor == Flavor::Current {
            self.host.event(
                self.worker,
                "H2D Dispatch",
                self.t,
                30 * US,
                &[("_ct", Val::I64(5)), ("_c", Val::I64(self.context))],
            );
        }
        let frame = self.frames.last().map(|f| f.0.clone()).unwrap_or_default();
        self.transfers.push((name.to_owned(), frame, bytes, a.addr));
        self.t += 10 * US;
        a.addr
    }

    /// Drops a device array (the Python reference went away).
    pub fn free(&mut self, addr: u64) {
        let start = self.t;
        self.t += US;
        self.bfc.free(&mut self.host, self.python, self.t, addr);
        self.t += US;
        if self.flavor == Flavor::Jax08 {
            self.host.event(
                self.python,
                "PjRtStreamExecutorBuffer::Release",
                start,
                self.t - start,
                &[],
            );
        }
        self.t += US;
    }

    /// Calls the jitted function of module `name`: allocates its non-aliased outputs
    /// and its temp block, runs its kernels, frees the temp block. If a request does
    /// not fit, the allocator waits `retry_ps` (`AllocatorRetry::AllocateRaw`), gives
    /// up, frees what it had allocated, and no kernel runs.
    pub fn execute(&mut self, name: &str, retry_ps: i64) -> ExecutionLog {
        let m = self.module(name).clone();
        self.run_id += 9;
        let run = self.run_id;
        let label = m.label();
        let t0 = self.t;
        let in_use_at_start = self.bfc.in_use;
        let (line, alloc_line) = match self.flavor {
            Flavor::Jax08 => (self.python, self.executor),
            Flavor::Current => (self.python, self.python),
        };
        // Host launch events on the calling thread.
        let launch_start = t0 + 3 * US;
        let mut t = launch_start + 20 * US;
        let helper_start = t;
        t += 10 * US;
        // Build buffer allocations: outputs, then the temp block.
        let mut requests: Vec<u64> = m.facts.non_aliased_output_sizes.clone();
        // The root tuple's pointer table lives in device memory too on GPU.
        let table =
            m.facts.non_aliased_output_bytes - m.facts.non_aliased_output_sizes.iter().sum::<u64>();
        if table > 0 {
            requests.push(table);
        }
        let temp = m.facts.temp_bytes;
        if temp > 0 {
            requests.push(temp);
        }
        let build_start = t;
        let mut allocated: Vec<Allocated> = Vec::new();
        let mut failed = false;
        for &req in &requests {
            t += 2 * US;
            if !self.bfc.fits(req) {
                self.host
                    .event(alloc_line, "AllocatorRetry::AllocateRaw", t, retry_ps, &[]);
                self.retries.push(RetryLog {
                    requested: req,
                    start_ps: t,
                    duration_ps: retry_ps,
                });
                t += retry_ps + 5 * US;
                failed = true;
                break;
            }
            let a = self.bfc.alloc(&mut self.host, alloc_line, t, req);
            allocated.push(a);
        }
        t += 5 * US;
        if failed {
            for a in allocated.drain(..) {
                t += US;
                self.bfc.free(&mut self.host, alloc_line, t, a.addr);
            }
        }
        self.host.event(
            alloc_line,
            "Build buffer allocations",
            build_start,
            t - build_start,
            &[],
        );
        let mut outputs = Vec::new();
        if !failed {
            let thunks_start = t;
            t += 10 * US;
            let module_start = t;
            for (hlo_op, op_name) in &m.kernels {
                self.correlation += 1;
                self.device.event(
                    self.kernels,
                    &format!("{}_kernel", hlo_op.replace('.', "_")),
                    t + 5 * US,
                    50 * US,
                    &[
                        ("correlation_id", Val::U64(self.correlation)),
                        ("kernel_details", r(" grid:1024,1,1 block:256,1,1")),
                        ("tf_op", r("XlaModule:")),
                        ("name", r(op_name)),
                        ("hlo_op", r(hlo_op)),
                        ("hlo_module", r(&m.name)),
                        ("program_id", Val::I64(m.id)),
                    ],
                );
                self.host.event(alloc_line, hlo_op, t, 20 * US, &[]);
                t += 60 * US;
            }
            self.host.event(
                alloc_line,
                &format!("{}:XLA GPU module", m.name),
                module_start,
                t - module_start,
                &[],
            );
            t += 5 * US;
            let thunks = match self.flavor {
                Flavor::Jax08 => "GpuExecutable::ExecuteThunks",
                Flavor::Current => "[0] GpuExecutable::ExecuteThunks",
            };
            self.host.event(
                alloc_line,
                thunks,
                thunks_start,
                t - thunks_start,
                &[("module_name", r(&m.name))],
            );
            if self.flavor == Flavor::Current {
                self.host.event(
                    alloc_line,
                    "[0] PjRtStreamExecutorRawLoadedExecutable::Execute",
                    thunks_start - US,
                    t - thunks_start + 2 * US,
                    &[("replica", Val::I64(0)), ("partition", Val::I64(0))],
                );
            }
            // The temp block is freed when the stream is done with it.
            t += 5 * US;
            if temp > 0 {
                let temp_block = allocated.pop().expect("temp allocated last");
                self.bfc
                    .free(&mut self.host, alloc_line, t, temp_block.addr);
            }
            t += 5 * US;
            outputs = allocated;
        }
        t += 5 * US;
        let helper_end = t;
        match self.flavor {
            Flavor::Jax08 => {
                self.host.event(
                    self.executor,
                    "PjRtStreamExecutorLoadedExecutable::EnqueueExecution",
                    helper_start + US,
                    helper_end - helper_start - 2 * US,
                    &[("_ct", Val::I64(5)), ("_c", Val::I64(run))],
                );
                self.host.event(
                    self.executor,
                    "PjRtStreamExecutorLoadedExecutable::ExecuteHelper",
                    helper_start,
                    helper_end - helper_start,
                    &[],
                );
            }
            Flavor::Current => {
                self.host.event(
                    line,
                    "CommonPjRtLoadedExecutable::ExecuteHelperOnSingleDevice",
                    helper_start,
                    helper_end - helper_start,
                    &[],
                );
            }
        }
        t += 10 * US;
        let launch_end = t;
        match self.flavor {
            Flavor::Jax08 => {
                self.context += 1;
                let ctx = self.context;
                self.host.event(
                    line,
                    "PJRT_LoadedExecutable_Execute linkage",
                    t0,
                    US,
                    &[("_pt", Val::I64(14)), ("_p", Val::I64(ctx))],
                );
                self.host.event(
                    line,
                    "PJRT_LoadedExecutable_Execute",
                    t0 + 2 * US,
                    launch_end - t0,
                    &[("_ct", Val::I64(14)), ("_c", Val::I64(ctx))],
                );
                self.host.event(
                    line,
                    "PjRtStreamExecutorLoadedExecutable::Execute",
                    launch_start,
                    launch_end - launch_start - US,
                    &[("_pt", Val::I64(5)), ("_p", Val::I64(run))],
                );
            }
            Flavor::Current => {
                self.host.event(
                    line,
                    &format!("CommonPjRtLoadedExecutable::Execute ({})", m.name),
                    launch_start,
                    launch_end - launch_start,
                    &[
                        ("run_id", Val::I64(run)),
                        ("execution_mode", r("kDefault")),
                        ("name", r(&m.name)),
                        ("num_replicas", Val::I64(1)),
                        ("num_partitions", Val::I64(1)),
                        ("num_addressable_devices", Val::I64(1)),
                        ("_pt", Val::I64(5)),
                        ("_p", Val::I64(run)),
                    ],
                );
            }
        }
        t += 5 * US;
        self.host.event(
            self.python,
            &format!("PjitFunction({})", m.function),
            t0 - US,
            t - t0 + US,
            &[],
        );
        self.t = t + 20 * US;
        // The launch starts with the outermost launch event on the calling thread: the
        // PJRT C API's `PJRT_LoadedExecutable_Execute` on XLA 2024–2025.
        let log = ExecutionLog {
            label,
            run_id: run,
            start_ps: match self.flavor {
                Flavor::Jax08 => t0 + 2 * US,
                Flavor::Current => launch_start,
            },
            in_use_at_start,
            launched: !failed && !m.kernels.is_empty(),
            outputs,
        };
        self.executions.push(log.clone());
        log
    }

    /// The capture: `/host:metadata` (one plan per module), `/host:CPU`,
    /// `/device:GPU:0` and `Task Environment`.
    pub fn finish(self, layout: MetadataLayout) -> Vec<u8> {
        let mut metadata = PlaneBuilder::new(1, "/host:metadata");
        for (i, m) in self.modules.iter().enumerate() {
            let label = m.label();
            let hlo = m.hlo.encode_to_vec();
            match layout {
                MetadataLayout::ProgramIdAsId => {
                    metadata.metadata_entry(m.id, &label, "", &[("Hlo Proto", Val::Bytes(hlo))])
                }
                MetadataLayout::ProgramIdStat => metadata.metadata_entry(
                    i as i64 + 1,
                    &label,
                    &label,
                    &[
                        ("Hlo Proto", Val::Bytes(hlo)),
                        ("program_id", Val::U64(m.id as u64)),
                    ],
                ),
            }
        }
        let mut task = PlaneBuilder::new(4, "Task Environment");
        task.plane_stat("profile_start_time", Val::U64(1_760_000_000_000_000_000));
        task.plane_stat(
            "profile_stop_time",
            Val::U64(1_760_000_000_000_000_000 + (self.t / 1000) as u64),
        );
        space(
            vec![
                metadata.build(),
                self.host.build(),
                self.device.build(),
                task.build(),
            ],
            "scenario-host",
        )
    }
}
