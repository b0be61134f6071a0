//! One kernel's scoped memory over what a core has (figures read): TPU VMEM or SMEM
//! (Mosaic, Pallas, XLA's own fusions), GPU shared memory (Pallas on GPU, Triton). The
//! kernel's block sizes, not the model, are what does not fit: the fix is in the
//! kernel, and shrinking the batch does nothing.

use crate::diagnosis::line::{Context, Line};
use crate::diagnosis::oom;
use crate::evidence::message::{OomKind, OomMessage};
use crate::report::model::{DiagnosisId, Label};
use crate::units::size;

/// The memory spaces that belong to one kernel on one core.
pub fn is_scoped(m: &OomMessage) -> bool {
    m.kind == OomKind::ScopedMemory || space(m).is_some() || only_scoped_listed(m)
}

/// A listing pasted without its headline (so without its memory space) whose every
/// allocation is a kernel's scoped one (`Allocation type: scoped`): a kernel's scratch
/// memory ran out, not the program's HBM.
fn only_scoped_listed(m: &OomMessage) -> bool {
    m.memory_space.is_none()
        && !m.allocations.is_empty()
        && m.allocations.iter().all(|a| a.allocation_type == "scoped")
}

fn space(m: &OomMessage) -> Option<&'static str> {
    match m.memory_space.as_deref()? {
        "vmem" => Some("VMEM"),
        "smem" => Some("SMEM"),
        "cmem" => Some("CMEM"),
        "shared" => Some("shared memory"),
        "sbuf" => Some("SBUF"),
        // Tenstorrent's L1 is a kernel's memory when one bank could never hold its
        // share of the buffer; otherwise its banks are full or in pieces, as DRAM's are.
        "l1" if m
            .per_bank_request_bytes
            .zip(m.bank_bytes)
            .is_some_and(|(share, bank)| share > bank) =>
        {
            Some("L1")
        }
        _ => None,
    }
}

/// What one kernel needs of its memory and what a core has, as the message states them,
/// and where both are counted: `""`, or `" in each partition"` (Neuron's SBUF is split
/// into partitions, each instruction's tiles laid across them), or `" in each bank"`
/// (Tenstorrent's L1, one bank per core).
pub fn kernel_figures(m: &OomMessage) -> (Option<u64>, Option<u64>, &'static str) {
    match (m.per_bank_request_bytes, m.bank_bytes) {
        (Some(need), bank) => {
            let each = if m.memory_space.as_deref() == Some("sbuf") {
                " in each partition"
            } else {
                " in each bank"
            };
            (Some(need), bank, each)
        }
        _ => (m.used_bytes.or(m.requested_bytes), oom::capacity(m), ""),
    }
}

/// What one kernel needs of `memory` and what a core has, as the message states them
/// (`needs 144.0 KiB of shared memory where a core has 99.00 KiB`).
fn needs(m: &OomMessage, memory: &str) -> String {
    match kernel_figures(m) {
        (Some(n), Some(c), each) => format!(
            "needs {} of {memory}{each} where a core has {}",
            size(n),
            size(c)
        ),
        (Some(n), None, each) => format!("needs {} of {memory}{each}", size(n)),
        (None, _, _) => format!("needs more {memory} than a core has"),
    }
}

pub fn scoped_memory(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message.filter(|m| is_scoped(m))?;
    let memory = space(m).unwrap_or("scoped memory");
    if m.advisory {
        return Some(skipped_choice(m, memory));
    }
    let mut text = format!("a kernel {} (read)", needs(m, memory));
    if let Some(e) = m.exceeded_by_bytes {
        text.push_str(&format!(", over by {}", size(e)));
    }
    text.push_str(": its block sizes, not the model, do not fit");
    let fix = if memory == "SBUF" {
        "use smaller NKI tiles: fewer bytes per partition for each instruction (a smaller free dimension of the tiles it reads and writes), or split the instruction over more tiles; allocate tiles so that their addresses stay inside the SBUF (a smaller base address or fewer physical tiles in nki.compiler.sbuf.mod_alloc)"
    } else if memory == "L1" {
        "shard the tensor over more cores (a sharded memory config on a larger core grid), keep it in DRAM (ttnn.DRAM_MEMORY_CONFIG), or run the op in slices, so that each core's L1 holds its share and the op's circular buffers"
    } else if memory == "shared memory" {
        "use smaller blocks (a Pallas BlockSpec's block_shape; Triton's BLOCK_M/BLOCK_N/BLOCK_K) or fewer pipeline stages (num_stages), so that one block's tiles fit the GPU's shared memory per block; a GPU with more shared memory (sm_80 and later) takes larger ones"
    } else {
        "use smaller blocks in the kernel (a Pallas BlockSpec's block_shape, or the library kernel's block sizes), so that its tiles and their double buffers fit; or raise the scoped limit where the chip has room: pltpu.CompilerParams(vmem_limit_bytes=…) on the pallas_call, or LIBTPU_INIT_ARGS=--xla_tpu_scoped_vmem_limit_kib=… for XLA's own fusions"
    };
    let line = Line::new(
        DiagnosisId::ScopedMemory,
        Label::Read,
        text,
        "one kernel's tiles, their pipelining buffers and spills need more of a core's on-chip memory than it has; batch size and sharding do not change a kernel's block",
    );
    Some(line.fix(fix).cost(
        "smaller blocks can run slower; a raised limit leaves less on-chip memory to other kernels",
    ))
}

/// One of an autotuner's choices for a kernel over a core's memory, skipped while the
/// run goes on (TorchInductor's `Runtime error during autotuning … Ignoring this
/// choice`): nothing failed; it matters only if every choice fails or the chosen one is
/// slow.
fn skipped_choice(m: &OomMessage, memory: &str) -> Line {
    let needs = needs(m, memory);
    let tries = match m.retried_requests_bytes.len() {
        0 => String::new(),
        1 => ", as does the next one".to_owned(),
        n => format!(", as do the {n} after it"),
    };
    let line = Line::new(
        DiagnosisId::ScopedMemory,
        Label::Read,
        format!(
            "one of the autotuner's choices for a kernel {needs} (read){tries}: the autotuner skips those and benchmarks the others, so nothing failed"
        ),
        "the autotuner tries block sizes and pipeline stages the GPU cannot hold; a skipped choice costs nothing but the speed it might have had",
    );
    line.fix("nothing, for the run: it goes on with the choices that fit. If every choice fails, or the kernel chosen is slow, search only configs that fit (smaller BLOCK_M/BLOCK_N/BLOCK_K or fewer num_stages), or use a GPU with more shared memory per block")
        .cost("none: the choices skipped might have been faster")
}
