//! The same advice in each framework's API: a TensorFlow user is told `tf.recompute_grad`
//! and `set_memory_growth`, a PyTorch user `torch.utils.checkpoint` and
//! `torch.cuda.memory_summary()`, never JAX's names. The framework is the one the
//! message's text names (`evidence::message::Framework`); a message that names none, like
//! a capture, is read as JAX's, which is what oomlens is for.

use crate::diagnosis::line::advice;
use crate::evidence::message::{Framework, OomKind, OomMessage};
use crate::report::model::Fix;

/// The framework the advice about `m` speaks to.
pub fn of(m: &OomMessage) -> Framework {
    m.framework.unwrap_or(Framework::Jax)
}

/// How to find what holds the memory when the program is not what filled it.
pub fn find_the_holder(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "find what holds the memory: another process (nvidia-smi or rocm-smi lists the processes on the GPU); another framework in this process (TensorFlow or PyTorch imported beside JAX take the GPU: for TensorFlow used only for data, tf.config.set_visible_devices([], 'GPU')); several JAX processes on one GPU, each preallocating 75% of it (XLA_PYTHON_CLIENT_PREALLOCATE=false, or XLA_PYTHON_CLIENT_MEM_FRACTION=0.3); this process's own arrays kept from earlier steps (jax.live_arrays() lists them; a profiler capture shows which step made them)",
        Framework::Tensorflow => "find what holds the memory: another process (nvidia-smi lists the processes on the GPU: a second training run, a notebook kernel still holding its session); TensorFlow takes nearly all of every GPU it sees, so two TensorFlow processes on one GPU starve each other (tf.config.experimental.set_memory_growth(gpu, True) in each, or a cap with tf.config.set_logical_device_configuration; CUDA_VISIBLE_DEVICES to give each its own GPU); another framework in this process (PyTorch or JAX imported beside TensorFlow); models built again and again in one process, each keeping its weights (tf.keras.backend.clear_session() between them)",
        Framework::TensorflowJs => "find what holds the memory: another process (nvidia-smi lists the processes on the GPU; in a browser, other tabs and the page's own WebGL contexts share it); tensors never disposed, which TensorFlow.js keeps until told (tf.memory().numTensors growing step after step: run each step inside tf.tidy() and dispose() what it returns once used)",
        Framework::Pytorch => "find what holds the memory: another process (nvidia-smi lists the processes on the GPU); another framework in this process (TensorFlow or JAX imported beside PyTorch take most of the GPU when they start); tensors this process keeps from earlier steps (a loss summed without .item(), outputs appended to a list: torch.cuda.memory_summary() and a snapshot from torch.cuda.memory._record_memory_history() show what holds them)",
    }
}

/// Where arrays this process keeps from earlier steps show, after `nvidia-smi lists the
/// processes; `.
pub fn kept_from_earlier_steps(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "jax.live_arrays() lists arrays kept from earlier steps",
        Framework::Tensorflow => "models built earlier in the process keep their weights until tf.keras.backend.clear_session()",
        Framework::TensorflowJs => "tf.memory().numTensors growing step after step counts tensors never disposed",
        Framework::Pytorch => "torch.cuda.memory_summary() shows what PyTorch itself holds",
    }
}

/// Other frameworks that may share the process and take the device.
pub fn frameworks_beside(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "TensorFlow or PyTorch beside JAX",
        Framework::Tensorflow | Framework::TensorflowJs => "PyTorch or JAX beside TensorFlow",
        Framework::Pytorch => "TensorFlow or JAX beside PyTorch",
    }
}

/// Activation checkpointing, by its API name.
pub fn remat(framework: Framework) -> Option<&'static str> {
    match framework {
        Framework::Jax => Some("jax.checkpoint (remat)"),
        Framework::Tensorflow => Some("tf.recompute_grad"),
        Framework::Pytorch => Some("torch.utils.checkpoint"),
        // TensorFlow.js has no activation checkpointing.
        Framework::TensorflowJs => None,
    }
}

/// 16-bit activations, by the API that turns them on.
pub fn sixteen_bit(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "a 16-bit dtype (bf16)",
        Framework::Tensorflow => {
            "mixed precision (tf.keras.mixed_precision.set_global_policy('mixed_float16'), or 'mixed_bfloat16')"
        }
        Framework::Pytorch => "16-bit autocast (torch.autocast('cuda', dtype=torch.bfloat16))",
        Framework::TensorflowJs => "16-bit textures (the WebGL backend's WEBGL_FORCE_F16_TEXTURES)",
    }
}

/// Sharding over more devices, in the framework's words.
pub fn shard(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "shard over more devices",
        Framework::Tensorflow => "spread over more GPUs (tf.distribute: MirroredStrategy splits the batch; a model that alone does not fit one GPU needs its layers split)",
        Framework::Pytorch => "shard over more GPUs (FSDP or DeepSpeed ZeRO shard the parameters, gradients and optimizer state)",
        Framework::TensorflowJs => "run on a device with more memory (tfjs-node-gpu on a larger GPU)",
    }
}

/// How to keep a dataset off the device and feed it a batch at a time.
pub fn keep_data_on_host(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "keep the data in host memory (NumPy) and put one batch at a time on the device (jax.device_put per batch, or a prefetching loader); free arrays no longer needed (del, and jax.live_arrays() to see what is left)",
        Framework::Tensorflow => "keep the data on the host and feed batches (tf.data.Dataset.from_tensor_slices built under tf.device('/CPU:0'), batched, with prefetch) instead of tensors of the whole set on the GPU",
        Framework::TensorflowJs => "keep the data out of tensors and make one batch's tensors at a time, disposing them after the step (tf.tidy)",
        Framework::Pytorch => "keep the data on the CPU and move one batch at a time to the device (a DataLoader with pin_memory=True); free tensors no longer needed",
    }
}

/// Sharding in the words of the framework and the device `m` failed on: PyTorch on a
/// TPU is PyTorch/XLA, which shards with its SPMD API, not FSDP over GPUs.
pub fn shard_for(m: &OomMessage) -> &'static str {
    let on_tpu = matches!(
        m.kind,
        OomKind::TpuCompileHbm | OomKind::TpuTcSc | OomKind::TpuEarlyAbort | OomKind::TpuRuntime
    );
    match of(m) {
        Framework::Pytorch if on_tpu => "shard over more TPU cores (PyTorch/XLA's SPMD: torch_xla.distributed.spmd.mark_sharding, or its FSDP)",
        framework => shard(framework),
    }
}

/// The fixes when the program's own tensors fill the pool: the first also tells whether
/// they do.
pub fn own_tensor_fixes(framework: Framework) -> Vec<Fix> {
    let recompute = match framework {
        Framework::Jax => "recompute activations in the backward pass (jax.checkpoint, tf.recompute_grad) and use 16-bit activations (bf16)",
        Framework::Tensorflow => "recompute activations in the backward pass (tf.recompute_grad) and use mixed precision (tf.keras.mixed_precision.set_global_policy('mixed_float16'))",
        Framework::Pytorch => "recompute activations in the backward pass (torch.utils.checkpoint) and use 16-bit activations (torch.autocast with bf16)",
        Framework::TensorflowJs => "dispose each step's intermediate tensors as soon as they are used (tf.tidy), and use a smaller model or input",
    };
    vec![
        advice(
            "halve the batch (or the input size) to see whether it then fits",
            Some("more steps per epoch"),
        ),
        advice(
            recompute,
            Some("about a third more compute; some numerical care"),
        ),
    ]
}

/// How to tell, when the message states too little, whether the program is too big or
/// something else fills the device, and what to give oomlens for more.
pub fn tell_the_cause(framework: Framework, check: &str) -> [String; 2] {
    match framework {
        Framework::Jax => [
            format!("compare what the program needs ({check}: argument + output + temp − alias) with what the device has (jax.local_devices()[0].memory_stats()['bytes_limit']): near or above it, the program is too big (a smaller batch, jax.checkpoint, sharding, bf16); far below it, something else holds memory (nvidia-smi, jax.live_arrays(), XLA_PYTHON_CLIENT_PREALLOCATE=false)"),
            "give oomlens more: the whole log from the first error on, the XLA dump (XLA_FLAGS=--xla_dump_to=DIR), or a profiler capture (jax.profiler.trace)".into(),
        ],
        Framework::Tensorflow => [
            "compare what the model takes at its peak (tf.config.experimental.get_memory_info('GPU:0')['peak'] after a step at a smaller batch, times the batch ratio) with the pool TensorFlow made (the log's `Created device … with N MB memory` line): near or above it, the model is too big (a smaller batch, tf.recompute_grad, mixed precision); far below it, something else holds memory (nvidia-smi; several TensorFlow processes each taking the whole GPU: tf.config.experimental.set_memory_growth(gpu, True))".into(),
            "give oomlens more: the whole log from the first error on — the BFC allocator prints its chunks and its Stats: block just before the error, at warning level (TF_CPP_MIN_LOG_LEVEL of 2 or more hides them)".into(),
        ],
        Framework::Pytorch => [
            "compare what the model takes at its peak (torch.cuda.max_memory_allocated() after a step at a smaller batch, times the batch ratio) with what the GPU has (torch.cuda.mem_get_info()): near or above it, the model is too big (a smaller batch, torch.utils.checkpoint, autocast, FSDP); far below it, something else holds memory (nvidia-smi, torch.cuda.memory_summary())".into(),
            "give oomlens more: the whole error (PyTorch's states what it holds, what it keeps reserved and what is free), or a memory snapshot (torch.cuda.memory._record_memory_history(), then torch.cuda.memory._dump_snapshot())".into(),
        ],
        Framework::TensorflowJs => [
            "watch tf.memory() (numBytes, numTensors) across steps: growing step after step, tensors are never disposed (tf.tidy, dispose()); steady and near the device's memory, the model or its input is too big for it".into(),
            "give oomlens more: the whole log from the first error on (tfjs-node prints TensorFlow's allocator lines before it)".into(),
        ],
    }
}

/// Where a host process's RAM went, in its framework's terms.
pub fn host_kept(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => {
            "results appended to a list, a cache, jax.live_arrays() on the CPU backend"
        }
        _ => "results appended to a list, a cache, a dataset loaded whole",
    }
}

/// One allocation over half the memory: its likely causes, the fix and its cost.
pub fn one_large_allocation(framework: Framework) -> [&'static str; 3] {
    match framework {
        Framework::Jax => [
            "a configuration error, not capacity: an unexpectedly large tensor, from a leftover jax.debug.print forcing a full tensor to be materialized, a missing sharding annotation (replicated), or a wrong mesh shape",
            "remove debug prints of large arrays; check its sharding (jax.debug.visualize_array_sharding) and shard it over the mesh (in_shardings, jax.lax.with_sharding_constraint); check the shape is the one intended",
            "none if it was a debug print; a sharded array needs its devices' collectives",
        ],
        Framework::Tensorflow | Framework::TensorflowJs => [
            "a configuration error, not capacity: an unexpectedly large tensor, from a shape not the one intended (an axis multiplied in, a layer sized from a flattened map), or data placed on the device whole rather than a batch at a time",
            "check the shape of the tensor the message names (model.summary() lists each layer's); feed the data in batches (a tf.data pipeline with .batch, model.predict(x, batch_size=…)) rather than whole",
            "none if the shape was wrong; batches take more steps",
        ],
        Framework::Pytorch => [
            "a configuration error, not capacity: an unexpectedly large tensor, from a shape not the one intended (an axis multiplied in, a broadcast), or data moved to the GPU whole rather than a batch at a time",
            "check the shape of the tensor made where it failed (print x.shape of the inputs); move data to the GPU a batch at a time (a DataLoader), and shard a layer too large for one GPU (FSDP)",
            "none if the shape was wrong; a sharded layer needs its GPUs' collectives",
        ],
    }
}

/// How to find a shape or sharding gone wrong.
pub fn check_shapes(framework: Framework) -> &'static str {
    match framework {
        Framework::Jax => "check the shapes the program is traced with (jax.eval_shape(f, *args), or print x.shape of the inputs) and the sharding of its largest arrays (jax.debug.visualize_array_sharding); the largest allocation or op in the error names where to look",
        Framework::Tensorflow | Framework::TensorflowJs => "check the shapes the model is built with (model.summary(), or print x.shape of the inputs): a dimension multiplied in, a whole dataset in one batch; the op or tensor shape in the error names where to look",
        Framework::Pytorch => "check the shapes the model runs with (print x.shape of the inputs and of the tensor made where it failed): a dimension multiplied in, a whole dataset in one batch; the traceback's last line of your code names where to look",
    }
}

/// A fragmented GPU pool: let the driver place allocations.
pub fn driver_allocator(framework: Framework) -> &'static str {
    match framework {
        Framework::Tensorflow | Framework::TensorflowJs => "let the driver place allocations (TF_GPU_ALLOCATOR=cuda_malloc_async), or free long-lived tensors before the large step so that large blocks stay whole",
        Framework::Pytorch => "let the allocator split less (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), or free long-lived tensors before the large step so that large blocks stay whole",
        Framework::Jax => "let the driver place allocations (XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async for JAX, TF_GPU_ALLOCATOR=cuda_malloc_async for TensorFlow), or free long-lived arrays before the large step so that large blocks stay whole",
    }
}

/// Processes that must share a GPU: each takes only what it needs. Where the text names
/// no framework (TensorFlow's device lines name none), both settings are given.
pub fn take_what_it_needs(framework: Option<Framework>) -> &'static str {
    match framework {
        Some(Framework::Tensorflow | Framework::TensorflowJs) => "if they must share the GPU, let each take only what it needs (tf.config.experimental.set_memory_growth(gpu, True), or a cap with tf.config.set_logical_device_configuration)",
        Some(Framework::Jax) => "if they must share the GPU, let each take only what it needs (XLA_PYTHON_CLIENT_PREALLOCATE=false, or XLA_PYTHON_CLIENT_MEM_FRACTION)",
        Some(Framework::Pytorch) => "if they must share the GPU, cap each (torch.cuda.set_per_process_memory_fraction)",
        None => "if they must share the GPU, let each take only what it needs (TensorFlow: tf.config.experimental.set_memory_growth(gpu, True); JAX: XLA_PYTHON_CLIENT_PREALLOCATE=false)",
    }
}
