//! The BFC allocator's warning that is not a failure: `Allocator (GPU_0_bfc) ran out of
//! memory trying to allocate 2.25GiB with freed_by_count=0. The caller indicates that
//! this is not a failure, but may mean that there could be performance gains if more
//! memory were available.` The caller that can do without is a library probing for
//! scratch space (cuDNN's autotuner trying a convolution algorithm's workspace): the
//! request is no tensor of the model, and it failed because the GPU is nearly full.

use crate::diagnosis::line::{advice, Context, Line};
use crate::evidence::message::OomKind;
use crate::report::model::{DiagnosisId, Label};
use crate::units::size;

/// The lead line when the text holds only such a warning (no failure, no
/// rematerialization warning).
pub fn allocator_warning(cx: &Context<'_>) -> Option<Line> {
    let m = cx
        .message
        .filter(|m| m.advisory && m.kind == OomKind::BfcRuntime && m.remat.is_none())?;
    if cx.module.is_some() {
        return None;
    }
    let request = m
        .requested_bytes
        .map(|r| format!(" {}", size(r)))
        .unwrap_or_default();
    let of = crate::diagnosis::oom::capacity(m)
        .map(|c| format!(" of a {} pool", size(c)))
        .unwrap_or_default();
    let text = format!(
        "Not a failure: the allocator could not give{request}{of} (read) to a caller that can do without, usually a library probing for scratch space (cuDNN's autotuner trying a faster convolution algorithm): the GPU is nearly full with the model at this batch; training goes on, perhaps slower (estimated)"
    );
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Estimated,
        text,
        "the model's weights, optimizer state and the batch's activations fill the GPU, leaving no room for a library's optional workspace",
    );
    let fix = advice;
    Some(line.fixes(vec![
        fix("nothing, if training runs and its speed is acceptable: the warning only says a faster algorithm could not get its workspace", None),
        fix(
            "to make room: a smaller batch or input size, mixed precision (float16 activations), or a smaller model",
            Some("more steps per epoch, or some accuracy"),
        ),
        fix(
            "if the warning is followed by a real out-of-memory error, paste that error: it says what failed",
            None,
        ),
    ]))
}

/// A warning names one allocation: from this size, one array held whole in host memory
/// (a dataset or images loaded at once, a model's weights read in one piece) is the
/// story, whatever else the program holds.
const ONE_WARNED_ARRAY: u64 = 64 << 20;

/// A host that ran out after such warnings ran out of everything the process held; one
/// allocation is the story only from this size, about a third of a Colab host's RAM.
const ONE_HOST_ARRAY: u64 = 4 << 30;

/// TensorFlow warns of an allocation above 10% of the host's free RAM, so a warning of
/// one this small says the machine had under ten times it (640 MiB) free: something
/// else holds the RAM. tcmalloc reports only from 1 GiB by default, far above this.
const SMALL_HOST_WARNING: u64 = 64 << 20;

/// The last fix of every host warning: whether the host's out-of-memory killer ended
/// the run, and what to paste if the accelerator failed after.
const CHECK_KILLED: &str = "if the run died, check that the host killed it (`dmesg`: `Out of memory: Killed process`); if an accelerator error came after, paste that error";

/// JAX preallocates 75% of a GPU when it starts (90% before 0.4), TensorFlow nearly all
/// of it: a usage from this share up is what the frameworks' pools hold, whatever the
/// program needs.
const PREALLOCATED_SHARE: f64 = 70.0;

/// The lead line when the text holds warnings of large host allocations (TensorFlow's
/// `Allocation of N exceeds 10% of free system memory`, tcmalloc's `large alloc N
/// bytes`), alone or followed by the host failing (`std::bad_alloc`, the shell's
/// `Killed`): not the accelerator's memory; the host's RAM is filling, and a process
/// killed after them was killed by the host's out-of-memory killer.
pub fn host_warning(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    if cx.module.is_some() {
        return None;
    }
    let warned = m.advisory && m.is_host_allocation_warning();
    let died = !m.advisory
        && m.kind == OomKind::Other
        && m.memory_space.as_deref() == Some("host")
        && m.requested_bytes.is_none();
    let request = if warned {
        m.requested_bytes?
    } else if died {
        *m.host_allocations_bytes.iter().max()?
    } else {
        return None;
    };
    let (lead, then) = if warned {
        (
            "Not an accelerator failure: ",
            "; if the process was then killed, the host ran out of RAM (estimated)",
        )
    } else {
        (
            "The host ran out of RAM after warning of large allocations (read): ",
            " (estimated)",
        )
    };
    let one_array = if warned {
        ONE_WARNED_ARRAY
    } else {
        ONE_HOST_ARRAY
    };
    let (id, text, cause) = if request < SMALL_HOST_WARNING {
        (
            DiagnosisId::HeldElsewhere,
            format!(
                "{lead}an allocation of only {} exceeds 10% of the host's free RAM, so under {} of RAM was free (estimated): other processes, or arrays the program kept, hold the machine's memory",
                size(request),
                size(request.saturating_mul(10))
            ),
            "the host's RAM held by something else",
        )
    } else if request >= one_array {
        (
            DiagnosisId::DominantBuffer,
            format!(
                "{lead}one host allocation of {} (read), an array held whole in the machine's RAM (a dataset or images loaded at once, a model's weights read in one piece){then}",
                size(request)
            ),
            "one large array in host memory",
        )
    } else {
        (
            DiagnosisId::AggregateTooBig,
            format!(
                "{lead}the host allocates {} at once (read) and more besides: the model and its data outgrow the machine's RAM{then}",
                size(request)
            ),
            "the model's weights, optimizer state and data together in host memory",
        )
    };
    let line = Line::new(id, Label::Estimated, text, cause);
    let fix = advice;
    if id == DiagnosisId::HeldElsewhere {
        return Some(line.fixes(vec![
            fix(
                "see what holds the RAM (free -h, top sorted by memory): other notebooks or processes, or this process's own arrays kept from earlier cells or steps; free them or restart the runtime",
                None,
            ),
            fix(
                CHECK_KILLED,
                None,
            ),
        ]));
    }
    Some(line.fixes(vec![
        fix(
            "stream the data instead of loading it whole (tf.data from files, numpy.memmap, smaller images or shards)",
            Some("more code in the input pipeline"),
        ),
        fix(
            "a machine with more RAM, or load the model in 16 bits",
            Some("cost, or some precision"),
        ),
        fix(
            CHECK_KILLED,
            None,
        ),
    ]))
}

/// The lead line when the text holds only a usage warning (Colab's `Your GPU is close to
/// its memory limit … Currently, 10.07 GB / 11.17 GB is being used.`) at a share the
/// frameworks' preallocation alone reaches.
pub fn usage_warning(cx: &Context<'_>) -> Option<Line> {
    let m = cx
        .message
        .filter(|m| m.advisory && m.kind == OomKind::Other)?;
    let (used, capacity) = (m.used_bytes?, m.capacity_bytes?);
    if cx.module.is_some() || crate::diagnosis::line::pct(used, capacity) < PREALLOCATED_SHARE {
        return None;
    }
    let text = format!(
        "Not a failure: {} of the GPU's {} in use ({:.0}%, read) is what JAX (75% of the GPU, 90% before 0.4) and TensorFlow (nearly all) take for their pools when they start, however little the program needs (estimated)",
        size(used),
        size(capacity),
        crate::diagnosis::line::pct(used, capacity)
    );
    let line = Line::new(
        DiagnosisId::HeldElsewhere,
        Label::Estimated,
        text,
        "the framework's preallocated pool, not the program's arrays",
    );
    let fix = advice;
    Some(line.fixes(vec![
        fix(
            "to see what the program itself uses: XLA_PYTHON_CLIENT_PREALLOCATE=false for JAX (or tf.config.experimental.set_memory_growth for TensorFlow), set before the framework starts",
            Some("allocation on demand can fragment the GPU's memory and run a little slower"),
        ),
        fix(
            "if another framework in the same notebook also holds the GPU (TensorFlow beside JAX), keep it on the CPU: tf.config.set_visible_devices([], 'GPU')",
            None,
        ),
    ]))
}
