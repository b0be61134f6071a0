//! The scenarios of docs/diagnosis.md#the-scenarios-the-tests-build (and the diagnosis
//! rows they exercise), built as captures. Each returns the capture bytes and what was
//! put in, so the tests compute every expected figure independently of oomlens.

use super::capture_builder::{MS, S, US};
use super::gpu_sim::{ExecutionLog, Flavor, GpuSim, MetadataLayout, Module};
use super::hlo_builder::{array, op, Facts, Intent, ModuleBuilder, BF16, F32, S32};

pub const MIB: u64 = 1 << 20;
pub const GIB: u64 = 1 << 30;
/// AMD MI355X: 288 GiB of HBM (the machine of the reference runs the scenarios model).
pub const MI355X: u64 = 288 * GIB;
/// The reference runs' small pool: 2.79 GiB.
pub const SMALL_POOL: u64 = 2857 * MIB;

pub struct Scenario {
    pub bytes: Vec<u8>,
    pub pool: u64,
    pub device_memory: u64,
    /// (label, facts) of every module, in the order added.
    pub modules: Vec<(String, Facts)>,
    pub executions: Vec<ExecutionLog>,
    /// (requested bytes, wait in ps, start in ps) of each AllocatorRetry.
    pub retries: Vec<(u64, i64, i64)>,
    /// (event name, enclosing Python frame, bytes) of each transfer.
    pub transfers: Vec<(String, String, u64)>,
    /// Bytes held before the capture started (no allocator events).
    pub preexisting: u64,
    /// The most the pool held at once (bytes_allocated).
    pub peak_in_use: u64,
}

impl Scenario {
    pub fn facts(&self, label: &str) -> &Facts {
        &self
            .modules
            .iter()
            .find(|m| m.0 == label)
            .unwrap_or_else(|| panic!("no module {label}"))
            .1
    }

    pub fn executions_of(&self, label: &str) -> Vec<&ExecutionLog> {
        self.executions
            .iter()
            .filter(|e| e.label == label)
            .collect()
    }
}

fn finish(sim: GpuSim, layout: MetadataLayout, preexisting: u64) -> Scenario {
    let pool = sim.bfc.limit;
    let peak_in_use = sim.bfc.peak;
    let device_memory = sim.device_memory();
    let modules = sim
        .modules()
        .iter()
        .map(|m| (m.label(), m.facts.clone()))
        .collect();
    let executions = sim.executions.clone();
    let retries = sim
        .retries
        .iter()
        .map(|r| (r.requested, r.duration_ps, r.start_ps))
        .collect();
    let transfers = sim
        .transfers
        .iter()
        .map(|(n, f, b, _)| (n.clone(), f.clone(), *b))
        .collect();
    Scenario {
        bytes: sim.finish(layout),
        pool,
        device_memory,
        modules,
        executions,
        retries,
        transfers,
        preexisting,
        peak_in_use,
    }
}

fn module(b: ModuleBuilder, function: &str, temp: Option<u64>, kernels: &[(&str, &str)]) -> Module {
    let (name, id) = (b.name.clone(), b.id);
    let (hlo, facts) = b.build(temp);
    Module {
        name,
        id,
        function: function.to_owned(),
        hlo,
        facts,
        kernels: kernels
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect(),
    }
}

/// `init_state(key)`: creates the parameters and the optimizer state (p, m, v).
fn init_module(id: i64, state: &[(&str, &[i64])]) -> Module {
    let mut b = ModuleBuilder::new("jit_init", id);
    b.parameter("key", array(S32, &[2]), false);
    let t = b.temp(
        &op(
            "rng_bit_generator.1",
            "rng-bit-generator",
            array(F32, &[256, 1024]),
            "jit(init)/random_bits",
        ),
        Intent::Other,
    );
    for (name, dims) in state {
        b.output(&op(
            &format!("init_{name}"),
            "fusion",
            array(F32, dims),
            "jit(init)/random_normal",
        ));
    }
    b.free(t);
    module(
        b,
        "init",
        None,
        &[
            ("loop_fusion.1", "jit(init)/random_normal"),
            ("loop_fusion.2", "jit(init)/zeros_like"),
        ],
    )
}

// ---------------------------------------------------------------------------------
// (a) attention plan too big
// ---------------------------------------------------------------------------------

/// The reference's attention model ("attention plan too big" in
/// docs/diagnosis.md#the-scenarios-the-tests-build): B=8, H=8, S=1024, five
/// blocks; the heap peak holds five `f32[8,8,1024,1024]` softmax outputs on one source
/// line, kept for the backward pass; the temp block is 3,495 MiB (the error's
/// "3.41GiB"); XLA's remat pass already cloned 89 instructions.
pub fn attention_train_step(id: i64) -> (ModuleBuilder, u64) {
    let mut b = ModuleBuilder::new("jit_train_step", id);
    for name in ["params", "adam_m", "adam_v"] {
        b.parameter(name, array(F32, &[25600, 1024]), true);
    }
    b.parameter("batch", array(F32, &[8, 1024, 448]), false);
    b.output(
        &op(
            "reduce.9",
            "reduce",
            array(F32, &[]),
            "jit(train_step)/jvp(model)/reduce_sum",
        )
        .at("train.py", 41),
    );
    let mut fusion = 0;
    let mut next = |prefix: &str| {
        fusion += 1;
        format!("{prefix}.{fusion}")
    };
    for l in 0..5 {
        let stack = format!("jit(train_step)/jvp(model)/block_{l}");
        b.temp(
            &op(
                &next("loop_layer_norm_fusion"),
                "fusion",
                array(F32, &[8, 1024, 1024]),
                &format!("{stack}/layer_norm"),
            )
            .at("model.py", 31),
            Intent::Forward,
        );
        b.temp(
            &op(
                &next("qkv_fusion"),
                "fusion",
                array(F32, &[8, 1024, 3072]),
                &format!("{stack}/attention/dot_general"),
            )
            .at("model.py", 49),
            Intent::Forward,
        );
        b.temp(
            &op(
                &next("loop_divide_fusion"),
                "fusion",
                array(F32, &[8, 8, 1024, 1024]),
                &format!("{stack}/attention/softmax"),
            )
            .at("model.py", 57),
            Intent::Forward,
        );
        b.temp(
            &op(
                &next("loop_layer_norm_fusion"),
                "fusion",
                array(F32, &[8, 1024, 1024]),
                &format!("{stack}/layer_norm"),
            )
            .at("model.py", 31),
            Intent::Forward,
        );
        b.temp(
            &op(
                &next("loop_gelu_fusion"),
                "fusion",
                array(F32, &[8, 1024, 4096]),
                &format!("{stack}/mlp/gelu"),
            )
            .at("model.py", 66),
            Intent::Forward,
        );
    }
    b.temp(
        &op(
            "logits_fusion",
            "fusion",
            array(F32, &[8, 1024, 4224]),
            "jit(train_step)/jvp(model)/head/dot_general",
        )
        .at("model.py", 80),
        Intent::Forward,
    );
    for l in (1..5).rev() {
        b.temp(
            &op(
                &format!("loop_gelu_grad_fusion.{l}"),
                "fusion",
                array(F32, &[8, 1024, 4096]),
                &format!("jit(train_step)/transpose(jvp(model))/block_{l}/mlp/dot_general"),
            )
            .at("model.py", 66),
            Intent::Backward,
        );
    }
    b.temp(
        &op(
            "dw_fusion.1",
            "fusion",
            array(F32, &[1024, 4096]),
            "jit(train_step)/transpose(jvp(model))/block_0/mlp/dot_general",
        )
        .at("model.py", 65),
        Intent::Backward,
    );
    b.library_call(
        &op(
            "custom-call.12",
            "custom-call",
            array(F32, &[1024, 4096]),
            "jit(train_step)/transpose(jvp(model))/block_0/attention/dot_general",
        )
        .at("model.py", 49)
        .target("__cublas$lt$matmul"),
        Intent::Backward,
        64 * MIB,
    );
    b.temp(
        &op("copy.3", "copy", array(F32, &[8960, 1024]), ""),
        Intent::Other,
    );
    b.free_all();
    b.remat_instructions(
        89,
        "jit(train_step)/transpose(jvp(model))/checkpoint/rematted_computation/mul",
    );
    (b, 3495 * MIB)
}

pub fn attention_plan_too_big(flavor: Flavor, layout: MetadataLayout) -> Scenario {
    let mut sim = GpuSim::new(flavor, MI355X, SMALL_POOL);
    let state: &[(&str, &[i64])] = &[
        ("params", &[25600, 1024]),
        ("adam_m", &[25600, 1024]),
        ("adam_v", &[25600, 1024]),
    ];
    sim.add_module(init_module(3, state));
    let (step, temp) = attention_train_step(5);
    sim.add_module(module(
        step,
        "train_step",
        Some(temp),
        &[(
            "loop_divide_fusion.3",
            "jit(train_step)/jvp(model)/block_0/attention/softmax",
        )],
    ));
    sim.enter("$train.py:1 <module>");
    sim.enter("$train.py:20 init_state");
    let init = sim.execute("jit_init", 0);
    // The state stays; the output tuple's index table is released.
    if let Some(table) = init.outputs.last() {
        sim.free(table.addr);
    }
    sim.exit();
    sim.enter("$train.py:30 get_batch");
    sim.enter("$api.py:2417 device_put");
    sim.transfer(8 * 1024 * 448 * 4);
    sim.exit();
    sim.exit();
    sim.advance(2 * MS);
    sim.enter("$train.py:40 step");
    sim.execute("jit_train_step", 10 * S);
    sim.exit();
    sim.exit();
    finish(sim, layout, 0)
}

// ---------------------------------------------------------------------------------
// (b) keeps gradients every step
// ---------------------------------------------------------------------------------

/// A donated train step that also returns its gradients (104 MiB) and its loss; the
/// program appends both to a Python list every step ("keeps gradients every step" in
/// docs/diagnosis.md#the-scenarios-the-tests-build).
fn grads_train_step(id: i64) -> Module {
    let mut b = ModuleBuilder::new("jit_train_step", id);
    for name in ["params", "adam_m", "adam_v"] {
        b.parameter(name, array(F32, &[26624, 1024]), true);
    }
    b.parameter("batch", array(S32, &[8, 131072]), false);
    b.output(
        &op(
            "grads_fusion",
            "fusion",
            array(F32, &[26624, 1024]),
            "jit(train_step)/transpose(jvp(model))/dot_general",
        )
        .at("train.py", 36),
    );
    b.output(
        &op(
            "reduce.4",
            "reduce",
            array(F32, &[]),
            "jit(train_step)/jvp(model)/reduce_sum",
        )
        .at("train.py", 35),
    );
    let f = b.temp(
        &op(
            "loop_gelu_fusion",
            "fusion",
            array(F32, &[8, 1024, 6400]),
            "jit(train_step)/jvp(model)/mlp/gelu",
        )
        .at("model.py", 22),
        Intent::Forward,
    );
    let g = b.temp(
        &op(
            "loop_gelu_grad_fusion",
            "fusion",
            array(F32, &[8, 1024, 4800]),
            "jit(train_step)/transpose(jvp(model))/mlp/dot_general",
        )
        .at("model.py", 22),
        Intent::Backward,
    );
    let o = b.temp(
        &op("copy.1", "copy", array(F32, &[8, 1024, 576]), ""),
        Intent::Other,
    );
    for x in [o, g, f] {
        b.free(x);
    }
    module(
        b,
        "train_step",
        Some(368 * MIB),
        &[
            ("loop_gelu_fusion", "jit(train_step)/jvp(model)/mlp/gelu"),
            (
                "loop_gelu_grad_fusion",
                "jit(train_step)/transpose(jvp(model))/mlp/dot_general",
            ),
            (
                "grads_fusion",
                "jit(train_step)/transpose(jvp(model))/dot_general",
            ),
        ],
    )
}

pub const GROWTH_STEPS: usize = 10;

/// `history.append((grads, loss))` every step: in use at each execution start grows by
/// the step's non-aliased outputs, 316 → 1,252 MiB over ten executions.
pub fn gradients_kept(flavor: Flavor, layout: MetadataLayout) -> Scenario {
    let mut sim = GpuSim::new(flavor, MI355X, SMALL_POOL);
    sim.add_module(grads_train_step(7));
    // The state (p, m, v) was created before the capture started.
    let mut preexisting = 0;
    for _ in 0..3 {
        sim.bfc.preexisting(104 * MIB);
        preexisting += 104 * MIB;
    }
    let mut batch: Option<u64> = None;
    sim.enter("$train.py:50 <module>");
    for _ in 0..GROWTH_STEPS {
        sim.enter("$train.py:40 step");
        sim.enter("$train.py:30 get_batch");
        let new = sim.transfer(8 * 131072 * 4);
        sim.exit();
        if let Some(old) = batch.replace(new) {
            sim.free(old);
        }
        let run = sim.execute("jit_train_step", 0);
        // Outputs: grads, loss, then the tuple's index table (released at once).
        if let Some(table) = run.outputs.get(2) {
            sim.free(table.addr);
        }
        sim.call("$<unknown> append");
        sim.exit();
        sim.advance(3 * MS);
    }
    sim.exit();
    finish(sim, layout, preexisting)
}

/// The fix of [`gradients_kept`]: the same program and pool, but the loop keeps the
/// loss's value instead of the step's outputs, so every step's grads are freed once
/// it returns and in use at each execution start stays flat.
pub fn gradients_released(flavor: Flavor, layout: MetadataLayout) -> Scenario {
    let mut sim = GpuSim::new(flavor, MI355X, SMALL_POOL);
    sim.add_module(grads_train_step(7));
    let mut preexisting = 0;
    for _ in 0..3 {
        sim.bfc.preexisting(104 * MIB);
        preexisting += 104 * MIB;
    }
    let mut batch: Option<u64> = None;
    sim.enter("$train.py:50 <module>");
    for _ in 0..GROWTH_STEPS {
        sim.enter("$train.py:40 step");
        sim.enter("$train.py:30 get_batch");
        let new = sim.transfer(8 * 131072 * 4);
        sim.exit();
        if let Some(old) = batch.replace(new) {
            sim.free(old);
        }
        let run = sim.execute("jit_train_step", 0);
        for out in &run.outputs {
            sim.free(out.addr);
        }
        sim.exit();
        sim.advance(3 * MS);
    }
    sim.exit();
    finish(sim, layout, preexisting)
}

// ---------------------------------------------------------------------------------
// (c) no donation
// ---------------------------------------------------------------------------------

fn undonated_train_step(id: i64) -> Module {
    let mut b = ModuleBuilder::new("jit_train_step", id);
    for name in ["params", "adam_m", "adam_v"] {
        b.parameter(name, array(F32, &[161280, 1024]), false);
    }
    b.parameter("batch", array(F32, &[8, 384, 1024]), false);
    for name in ["params", "adam_m", "adam_v"] {
        b.output(
            &op(
                &format!("new_{name}"),
                "fusion",
                array(F32, &[161280, 1024]),
                "jit(train_step)/optimizer/add",
            )
            .at("optim.py", 88),
        );
    }
    b.output(
        &op(
            "predictions",
            "fusion",
            array(F32, &[8, 384, 1024]),
            "jit(train_step)/jvp(model)/head/dot_general",
        )
        .at("model.py", 80),
    );
    let g = b.temp(
        &op(
            "dense_grad_fusion",
            "fusion",
            array(F32, &[8, 1024, 2816]),
            "jit(train_step)/transpose(jvp(model))/dense/dot_general",
        )
        .at("model.py", 12),
        Intent::Backward,
    );
    let (r, w) = b.library_call(
        &op(
            "custom-call.3",
            "custom-call",
            array(F32, &[8, 384, 1024]),
            "jit(train_step)/jvp(model)/dense/dot_general",
        )
        .at("model.py", 12)
        .target("__cublas$lt$matmul"),
        Intent::Forward,
        64 * MIB,
    );
    let o = b.temp(
        &op("copy.7", "copy", array(F32, &[2048, 1024]), ""),
        Intent::Other,
    );
    for x in [o, w, r, g] {
        b.free(x);
    }
    module(
        b,
        "train_step",
        None,
        &[(
            "custom-call.3",
            "jit(train_step)/jvp(model)/dense/dot_general",
        )],
    )
}

/// `jax.jit(train_step)` without `donate_argnums` ("no donation" in
/// docs/diagnosis.md#the-scenarios-the-tests-build): old and new
/// state are live together; the second new-state output does not fit.
pub fn no_donation() -> Scenario {
    let mut sim = GpuSim::new(Flavor::Jax08, MI355X, SMALL_POOL);
    let dims: &[i64] = &[161280, 1024];
    sim.add_module(init_module(
        3,
        &[("params", dims), ("adam_m", dims), ("adam_v", dims)],
    ));
    sim.add_module(undonated_train_step(9));
    sim.enter("$train.py:1 <module>");
    let init = sim.execute("jit_init", 0);
    if let Some(table) = init.outputs.last() {
        sim.free(table.addr);
    }
    sim.enter("$train.py:30 get_batch");
    sim.transfer(8 * 384 * 1024 * 4);
    sim.exit();
    sim.enter("$train.py:40 step");
    sim.execute("jit_train_step", 10 * S);
    sim.exit();
    sim.exit();
    finish(sim, MetadataLayout::ProgramIdAsId, 0)
}

// ---------------------------------------------------------------------------------
// (d) an eval copy of the dataset left on the device
// ---------------------------------------------------------------------------------

pub const EVAL_SET_BYTES: u64 = 10 * GIB;
pub const TRAIN_BATCH_BYTES: u64 = 64 * MIB;

fn donated_step_6g(id: i64) -> Module {
    let mut b = ModuleBuilder::new("jit_train_step", id);
    for name in ["params", "adam_m", "adam_v"] {
        b.parameter(name, array(F32, &[262144, 1024]), true);
    }
    b.parameter("batch", array(F32, &[64, 1024, 256]), false);
    b.output(
        &op(
            "reduce.2",
            "reduce",
            array(F32, &[]),
            "jit(train_step)/jvp(model)/reduce_sum",
        )
        .at("train.py", 35),
    );
    let f = b.temp(
        &op(
            "loop_gelu_fusion",
            "fusion",
            array(F32, &[64, 1024, 16384]),
            "jit(train_step)/jvp(model)/mlp/gelu",
        )
        .at("model.py", 22),
        Intent::Forward,
    );
    let g = b.temp(
        &op(
            "gelu_grad_fusion",
            "fusion",
            array(F32, &[64, 1024, 8192]),
            "jit(train_step)/transpose(jvp(model))/mlp/dot_general",
        )
        .at("model.py", 22),
        Intent::Backward,
    );
    b.free(g);
    b.free(f);
    module(
        b,
        "train_step",
        None,
        &[("loop_gelu_fusion", "jit(train_step)/jvp(model)/mlp/gelu")],
    )
}

fn eval_step(id: i64) -> Module {
    let mut b = ModuleBuilder::new("jit_eval_step", id);
    b.parameter("params", array(F32, &[262144, 1024]), false);
    b.parameter("eval_x", array(F32, &[10240, 256, 1024]), false);
    b.output(
        &op(
            "logits",
            "fusion",
            array(F32, &[10240, 6400]),
            "jit(eval_step)/model/head/dot_general",
        )
        .at("model.py", 80),
    );
    let t = b.temp(
        &op(
            "hidden_fusion",
            "fusion",
            array(F32, &[1024, 1024, 1024]),
            "jit(eval_step)/model/dot_general",
        )
        .at("model.py", 22),
        Intent::Other,
    );
    b.free(t);
    module(
        b,
        "eval_step",
        None,
        &[
            ("hidden_fusion", "jit(eval_step)/model/dot_general"),
            ("logits", "jit(eval_step)/model/head/dot_general"),
        ],
    )
}

/// Three train steps, an evaluation that puts the whole eval set (10 GiB) on the
/// device and keeps it, then the fourth train step runs out of memory.
pub fn eval_copy_left_on_device() -> Scenario {
    // A 24 GiB GPU at JAX's default fraction (0.75): 18 GiB.
    let device = 24 * GIB;
    let mut sim = GpuSim::new(Flavor::Jax08, device, device / 4 * 3);
    sim.add_module(donated_step_6g(11));
    sim.add_module(eval_step(13));
    let mut preexisting = 0;
    for _ in 0..3 {
        sim.bfc.preexisting(GIB);
        preexisting += GIB;
    }
    let mut batch: Option<u64> = None;
    sim.enter("$train.py:90 <module>");
    let train = |sim: &mut GpuSim, batch: &mut Option<u64>, retry: i64| {
        sim.enter("$train.py:40 step");
        sim.enter("$train.py:30 get_batch");
        let new = sim.transfer(TRAIN_BATCH_BYTES);
        sim.exit();
        if let Some(old) = batch.replace(new) {
            sim.free(old);
        }
        let run = sim.execute("jit_train_step", retry);
        // float(loss): the loss comes back to the host and its buffers go.
        for o in run.outputs.iter().rev() {
            sim.free(o.addr);
        }
        sim.exit();
        sim.advance(5 * MS);
    };
    for _ in 0..3 {
        train(&mut sim, &mut batch, 0);
    }
    sim.enter("$train.py:70 evaluate");
    sim.enter("$train.py:60 load_eval_set");
    sim.transfer(EVAL_SET_BYTES);
    sim.exit();
    let run = sim.execute("jit_eval_step", 0);
    for o in run.outputs.iter().rev() {
        sim.free(o.addr);
    }
    sim.exit();
    sim.advance(5 * MS);
    train(&mut sim, &mut batch, 10 * S);
    sim.exit();
    finish(sim, MetadataLayout::ProgramIdAsId, preexisting)
}

// ---------------------------------------------------------------------------------
// (e) a pool far below the device's memory, for a plan larger than the device
// ---------------------------------------------------------------------------------

pub fn fraction_set_plan_bigger_than_device() -> Scenario {
    let device = 16 * GIB;
    let mut sim = GpuSim::new(Flavor::Jax08, device, 4 * GIB);
    let mut b = ModuleBuilder::new("jit_big_step", 3);
    b.parameter("params", array(BF16, &[1024, 1024, 1024]), true);
    b.output(&op(
        "reduce.1",
        "reduce",
        array(F32, &[]),
        "jit(big_step)/jvp(model)/reduce_sum",
    ));
    for i in 0..9 {
        b.temp(
            &op(
                &format!("act_fusion.{i}"),
                "fusion",
                array(BF16, &[1024, 1024, 1024]),
                "jit(big_step)/jvp(model)/mlp/dot_general",
            )
            .at("model.py", 40),
            Intent::Forward,
        );
    }
    b.free_all();
    sim.add_module(module(
        b,
        "big_step",
        None,
        &[("act_fusion.0", "jit(big_step)/jvp(model)/mlp/dot_general")],
    ));
    sim.bfc.preexisting(2 * GIB);
    sim.enter("$train.py:12 <module>");
    sim.execute("jit_big_step", 10 * S);
    sim.exit();
    finish(sim, MetadataLayout::ProgramIdAsId, 2 * GIB)
}

// ---------------------------------------------------------------------------------
// (f) a leftover jax.debug.print of a large tensor
// ---------------------------------------------------------------------------------

/// `jax.debug.print("{}", x @ x.T)` inside the step: a 6.25 GiB tensor materialized
/// for a host callback (`xla_ffi_python_gpu_callback`, current jaxlib); an eval step
/// with the legacy `xla_python_gpu_callback` target.
pub fn debug_print_large_tensor() -> Scenario {
    let device = 16 * GIB;
    let mut sim = GpuSim::new(Flavor::Jax08, device, 12 * GIB);
    let mut b = ModuleBuilder::new("jit_step", 5);
    b.parameter("x", array(F32, &[4096, 4096]), false);
    b.output(&op(
        "reduce.3",
        "reduce",
        array(F32, &[]),
        "jit(step)/reduce_sum",
    ));
    let big = b.temp(
        &op(
            "gemm_fusion",
            "fusion",
            array(F32, &[40960, 40960]),
            "jit(step)/dot_general",
        )
        .at("step.py", 14),
        Intent::Other,
    );
    b.instruction(
        &op(
            "custom-call.5",
            "custom-call",
            array(F32, &[]),
            "jit(step)/debug_callback",
        )
        .at("step.py", 15)
        .target("xla_ffi_python_gpu_callback"),
    );
    b.free(big);
    sim.add_module(module(
        b,
        "step",
        None,
        &[("gemm_fusion", "jit(step)/dot_general")],
    ));
    let mut e = ModuleBuilder::new("jit_eval", 7);
    e.parameter("x", array(F32, &[1024, 1024]), false);
    e.output(&op(
        "reduce.1",
        "reduce",
        array(F32, &[]),
        "jit(eval)/reduce_sum",
    ));
    let t = e.temp(
        &op(
            "exp_fusion",
            "fusion",
            array(F32, &[1024, 1024]),
            "jit(eval)/exp",
        ),
        Intent::Other,
    );
    e.instruction(
        &op(
            "custom-call.2",
            "custom-call",
            array(F32, &[]),
            "jit(eval)/debug_callback",
        )
        .at("eval.py", 9)
        .target("xla_python_gpu_callback"),
    );
    e.free(t);
    sim.add_module(module(e, "eval", None, &[("exp_fusion", "jit(eval)/exp")]));
    sim.enter("$step.py:30 <module>");
    let x = sim.transfer(4096 * 4096 * 4);
    for _ in 0..2 {
        let run = sim.execute("jit_step", 0);
        for o in run.outputs.iter().rev() {
            sim.free(o.addr);
        }
        sim.advance(US * 500);
    }
    sim.free(x);
    let y = sim.transfer(1024 * 1024 * 4);
    let run = sim.execute("jit_eval", 0);
    for o in run.outputs.iter().rev() {
        sim.free(o.addr);
    }
    sim.free(y);
    sim.exit();
    finish(sim, MetadataLayout::ProgramIdAsId, 0)
}

/// The scenarios written out as captures (`write_scenarios`) and rendered whole by
/// other tests, each with the name its file takes.
pub fn named() -> [(&'static str, Scenario); 6] {
    [
        (
            "attention_plan_too_big",
            attention_plan_too_big(Flavor::Jax08, MetadataLayout::ProgramIdAsId),
        ),
        (
            "gradients_kept",
            gradients_kept(Flavor::Current, MetadataLayout::ProgramIdStat),
        ),
        ("no_donation", no_donation()),
        ("eval_copy_left_on_device", eval_copy_left_on_device()),
        (
            "fraction_set_plan_bigger_than_device",
            fraction_set_plan_bigger_than_device(),
        ),
        ("debug_print_large_tensor", debug_print_large_tensor()),
    ]
}
