//! What the BFC allocator says of its pool, when the message states nothing else that
//! names a cause.
//!
//! Its picture (`****__x*`, `docs/oom-messages.md#the-pools-picture`) covers the regions
//! the allocator took from the device, so it tells whose memory they hold:
//! - **All free:** the allocator holds nothing, yet could not get a region for a request
//!   far smaller than any GPU that trains: the device's memory is held by something
//!   else.
//! - **All in use, and no limit stated:** every region it took holds this process's
//!   tensors; the usual cause is the program at its batch needing more than the device
//!   has, which a much smaller batch tells apart from another process. Not when the
//!   message states the program's need and it is small: what else fills the pool, the
//!   picture cannot say.
//!
//! Its regions grown to its limit (`available bytes: 0`), what is in use not stated: the
//! allocator took all it may and a small request still fails, the program's tensors
//! most likely. Grown to its limit with little in use and the request cut from the
//! message (deepmd-kit#3960: 288 MiB of 5.38 GiB): the request was larger than every
//! free piece, one large buffer.

use crate::diagnosis::line::{advice, pct, Context, Line};
use crate::diagnosis::oom;
use crate::evidence::message::{Framework, OomMessage, PoolPicture, NUMPY_ARRAY_OP};
use crate::report::model::{Diagnosis, DiagnosisId, Label};
use crate::units::size;

use super::apis;
use super::batch::unexplained;
use super::held::{self, SMALL_PROGRAM};

/// A picture this share free (or in use) is all free (all in use): a character or two
/// of the other kind is one chunk.
const WHOLE_PERCENT: f64 = 95.0;
/// A picture of fewer characters is a fragment of one (a forum cut it).
const MIN_DRAWN: u32 = 50;
/// Half the memory of the smallest GPUs that train (8 GiB): a request this small that
/// an empty pool cannot serve is not too big for the device.
const SMALL_FOR_ANY_GPU: u64 = 4 << 30;

/// The failure's allocator as a line names it.
fn allocator_name(m: &OomMessage) -> &str {
    m.allocator
        .as_ref()
        .map_or("the allocator", |a| a.display_name())
}

/// The picture of the failure's allocator, when it is whole enough to read.
fn picture(m: &OomMessage) -> Option<PoolPicture> {
    let p = m.allocator.as_ref()?.picture?;
    (p.drawn() >= MIN_DRAWN && m.memory_space.as_deref() != Some("host")).then_some(p)
}

/// The pool is drawn all free, yet a request under [`SMALL_FOR_ANY_GPU`] failed.
pub fn empty_pool(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let p = picture(m).filter(|p| p.free_percent() >= WHOLE_PERCENT)?;
    let request = oom::request(m).filter(|&r| r < SMALL_FOR_ANY_GPU)?;
    let text = format!(
        "{} drew its pool {:.0}% free (read) yet could not serve a request of {} (read): it held almost nothing, and the device would not give it a region that size, so the device's memory was held by something else (estimated)",
        allocator_name(m),
        p.free_percent(),
        size(request)
    );
    let line = Line::new(
        DiagnosisId::HeldElsewhere,
        Label::Estimated,
        text,
        &format!("the device's memory was taken before this allocator asked: another process, another framework in this process ({}), or a pool preallocated elsewhere", apis::frameworks_beside(apis::of(m))),
    );
    Some(
        line.fix(apis::find_the_holder(apis::of(m)))
            .cost("none: the program itself needs no change"),
    )
}

/// PyTorch's caching allocator holds at least this share of the device when a request
/// fails: its own tensors (and their cache) are what fills it.
const PYTORCH_HOLDS_MOST: f64 = 75.0;

/// PyTorch's message says its own allocator holds most of the device (`Of the allocated
/// memory 15.87 GiB is allocated by PyTorch` of 19.94 GiB; the older `9.96 GiB already
/// allocated` of 12 GiB): the program's own tensors fill it. The counterpart of
/// `held::outside_pytorch`.
pub fn pytorch_holds_most(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let (capacity, ours) = (oom::capacity(m)?, held::pytorch_holds(m)?);
    if pct(ours, capacity) < PYTORCH_HOLDS_MOST {
        return None;
    }
    let request = oom::request(m)
        .map(|r| format!(" when a request of {} failed", size(r)))
        .unwrap_or_default();
    let text = format!(
        "PyTorch's allocator held {} of the device's {} ({:.0}%, read){request}: the program's own tensors fill the device, so the usual cause is the model at this batch and input size needing more than it has (estimated)",
        size(ours),
        size(capacity),
        pct(ours, capacity)
    );
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Estimated,
        text,
        "the program's own tensors (weights, optimizer state, the batch's activations, or tensors kept from earlier steps) fill the device",
    );
    let mut fixes = apis::own_tensor_fixes(apis::of(m));
    fixes.push(advice(
        format!(
            "if a much smaller batch also fails, something keeps tensors alive: {}",
            apis::kept_from_earlier_steps(apis::of(m))
        ),
        None,
    ));
    Some(line.fixes(fixes))
}

/// One request this large from an allocator that allocates tensor by tensor (PyTorch's)
/// or array by array (NumPy's) is one tensor: 63 GiB of host memory asked at once
/// (deeplc#125's predictions over every peptide in one matrix), NumPy's 306 GiB
/// `np.zeros((5020000, 16384))` (heldout42/08).
pub fn one_large_tensor(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let numpy = m.requested_op.as_deref() == Some(NUMPY_ARRAY_OP);
    let (who, unit) = match (m.framework, numpy) {
        (_, true) => ("NumPy", "array"),
        (Some(Framework::Pytorch), false) => ("PyTorch", "tensor"),
        _ => return None,
    };
    let request = oom::request(m).filter(|&r| r >= super::message::LARGE_REQUEST)?;
    // With the memory stated, the tensor must be half of it, as one allocation over
    // half the memory is (`buffer::large_in_message`).
    let half = 100.0 * super::tpu::LARGE_ALLOCATION_OF_CAPACITY;
    if oom::capacity(m).is_some_and(|c| pct(request, c) < half) {
        return None;
    }
    let text = format!(
        "one {unit} of {} was asked for at once (read): {who} allocates {unit} by {unit}, so this is one array, larger than most devices' whole memory: a whole dataset, every pair of items, or every prediction in one {unit} (estimated)",
        size(request)
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Estimated,
        text,
        "one tensor over far more data at once than a step needs",
    );
    Some(line.fixes(vec![
        advice(
            "process the data in batches and keep only what each batch's result needs (reduce it, or write it out) before the next",
            Some("more steps"),
        ),
        advice(
            "check the shape is the one intended: an axis multiplied in, a whole dataset where one batch was meant",
            Some("none"),
        ),
    ]))
}

/// The pool is drawn all in use, and the message states no limit (with one, the rules
/// that read it decide): the program's own tensors.
pub fn full_pool(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let p = picture(m).filter(|p| 100.0 - p.free_percent() >= WHOLE_PERCENT)?;
    // A program stated small did not fill the pool by itself; what did, the picture
    // cannot say.
    if oom::capacity(m).is_some() || oom::needs(m).is_some_and(|n| n < SMALL_PROGRAM) {
        return None;
    }
    let request = oom::request(m)
        .map(|r| format!(" when a request of {} failed", size(r)))
        .unwrap_or_default();
    let text = format!(
        "{} drew its pool {:.0}% in use{request} (read): every region it took held this process's tensors, so the usual cause is the program at this batch and input size needing more than the device has (estimated); the message states no limit to tell how much of the device the pool had",
        allocator_name(m),
        100.0 - p.free_percent(),
    );
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Estimated,
        text,
        "the program's own tensors (its batch's activations, its weights and optimizer state, or arrays kept from earlier steps) fill the pool",
    );
    let mut fixes = apis::own_tensor_fixes(apis::of(m));
    fixes.push(advice(
        format!("if a much smaller batch also fails, something else holds the device: nvidia-smi lists the processes; {}", apis::kept_from_earlier_steps(apis::of(m))),
        None,
    ));
    Some(line.fixes(fixes))
}

/// A request under this share of the pool failing in a pool grown to its limit is the
/// pool being full, not the request being large.
const SMALL_SHARE_OF_POOL: f64 = 10.0;

/// The allocator's regions have grown to its limit and what is in use is not stated.
pub fn pool_at_limit(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let a = m.allocator.as_ref()?;
    let (limit, regions) = (a.limit_bytes?, a.region_allocated_bytes?);
    if a.in_use_bytes.is_some() || regions < limit || m.memory_space.as_deref() == Some("host") {
        return None;
    }
    let request = oom::request(m).filter(|&r| pct(r, limit) < SMALL_SHARE_OF_POOL)?;
    let text = format!(
        "{} has taken its whole limit of {} in regions (read) and a request of only {} ({:.1}% of it, read) still failed: the program's tensors most likely fill the pool (estimated); what is in use is not stated, so free pieces too small for the request cannot be ruled out",
        a.display_name(),
        size(limit),
        size(request),
        pct(request, limit)
    );
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Estimated,
        text,
        "the program's own tensors (its batch's activations, its weights and optimizer state) fill all the memory the allocator may take",
    );
    Some(line.fixes(apis::own_tensor_fixes(apis::of(m))))
}

/// With this share of its limit in use or less, a pool grown to its limit is mostly free.
const MOSTLY_FREE_IN_USE: f64 = 25.0;

/// The allocator's regions have grown to its limit, little of it is in use, and the
/// message does not state the request (its lines were cut): the free memory is this
/// allocator's, in few pieces with so few in use, so what failed was larger than every
/// one of them — one large buffer, not the pool filling up.
pub fn mostly_free_at_limit(cx: &Context<'_>, lines: &[Diagnosis]) -> Option<Line> {
    let m = unexplained(cx, lines)?;
    let a = m.allocator.as_ref()?;
    let (limit, regions, in_use) = (a.limit_bytes?, a.region_allocated_bytes?, a.in_use_bytes?);
    if regions < limit
        || pct(in_use, limit) > MOSTLY_FREE_IN_USE
        || oom::request(m).is_some()
        || m.memory_space.as_deref() == Some("host")
    {
        return None;
    }
    let text = format!(
        "{} has taken its whole limit of {} in regions, yet only {} ({:.0}%) is in use (read): {} of its own pool was free, and with so little in use it lies in few pieces, so the request that failed, which the message does not state, was larger than each of them: one large buffer, not the pool filling up (estimated)",
        a.display_name(),
        size(limit),
        size(in_use),
        pct(in_use, limit),
        size(limit - in_use),
    );
    let line = Line::new(
        DiagnosisId::DominantBuffer,
        Label::Estimated,
        text,
        "one request of a large share of the pool: a tensor over the whole dataset, all pairs of items, or a layer sized wrong",
    );
    Some(line.fixes(vec![
        advice(
            "find the request: the log's lines just before the allocator's stats name it (`ran out of memory trying to allocate …`, `OOM when allocating tensor with shape …`); paste them with the stats",
            None,
        ),
        advice(
            "compute that tensor in pieces (batches over the data, blocks over the pairs) or change the op that makes it",
            Some("more passes"),
        ),
    ]))
}
