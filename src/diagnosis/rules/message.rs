//! The triage of an out-of-memory message on what any runtime states (figures read):
//! arguments larger than the program, memory held by other arrays, a fragmented pool,
//! XLA's rematerialization giving up, a host callback in the listing; the aggregate,
//! with its fixes ranked, when the message shows the program itself is too big and no
//! cause explains it; and, when the message shows neither, that it states too little
//! to tell, with how to find out.

use crate::diagnosis::error_text::close;
use crate::diagnosis::line::{advice, pct, Context, Line, CHECK};
use crate::diagnosis::oom;
use crate::evidence::message::{Framework, OomKind, OomMessage};
use crate::report::model::{DiagnosisId, Fix, Label};
use crate::units::size;

use super::message_fixes::fix;
use super::plan::NOTEWORTHY;
use super::{apis, buffer, fragmentation, held, scoped, tpu};

/// Arguments weigh more than the program from this ratio up: then state and batch, not
/// the computation, fill memory.
pub const ARGUMENTS_OVER_PROGRAM: f64 = 1.0;
/// A pool in use to this share of its limit is full: the request failed for capacity.
pub const FULL_POOL: f64 = 0.9;
/// XLA allocates a program's temporaries as one block: a single request this large is
/// a program too big for most accelerators (8–24 GB consumer and T4/V100 GPUs, a TPU
/// core's 8–16 GiB), though not for all.
pub const LARGE_REQUEST: u64 = 8 << 30;
/// A TPU program reservation that fails with at least this share of it free: the
/// program, not what else is held, is what does not fit.
pub const MOSTLY_FREE: f64 = 50.0;

/// The program's arguments (state and batch) weigh more than the program itself.
pub fn arguments_dominate(cx: &Context<'_>) -> Option<Line> {
    let m = cx.failure_message()?;
    let (args, program) = (m.arguments_bytes?, oom::program_part(m)?);
    if args < NOTEWORTHY || (args as f64) <= ARGUMENTS_OVER_PROGRAM * program as f64 {
        return None;
    }
    let text = format!(
        "the program's arguments take {}, more than the program itself ({}, read): the state (parameters, optimizer state) and the batch fill memory, not the computation",
        size(args),
        size(program)
    );
    let saving = args / 2;
    let line = Line::new(
        DiagnosisId::ArgumentsDominate,
        Label::Read,
        text,
        "parameters and optimizer state replicated on every device, kept in 32 bits, or passed twice (old and new state)",
    );
    let fits = oom::excess(m).map(|e| saving >= e);
    Some(line.fixes(vec![
        Fix {
            text: "keep parameters and optimizer state in bf16 (or the optimizer state in 8 bits), which halves their width".into(),
            saving_bytes: Some(saving),
            cost: Some("16-bit state needs care (f32 master weights, loss scaling)".into()),
            fits_after: fits,
        },
        fix(
            "shard parameters and optimizer state over the devices (FSDP: a mesh axis in in_shardings) instead of replicating them".into(),
            None,
            "collectives between the devices",
        ),
        fix(
            "donate the state (donate_argnums) so that the new state reuses the old one's memory".into(),
            None,
            "none at run time; the donated input arrays become unusable after the call",
        ),
        fix(
            "a smaller batch, if the batch is among the arguments".into(),
            None,
            "more steps per epoch",
        ),
    ]))
}

/// The TPU runtime failed to place a program or buffer while more than the request was
/// already held by arrays beside the program's own arguments.
pub fn other_live_arrays(cx: &Context<'_>) -> Option<Line> {
    let m = cx.failure_message()?;
    if m.kind != OomKind::TpuRuntime {
        return None;
    }
    let (held, request) = (m.used_bytes?, m.requested_bytes?);
    // The program's own persistent arrays (its arguments, and the outputs of its last
    // run, which may share memory with them) are not "other".
    let own = m
        .arguments_bytes
        .unwrap_or(0)
        .saturating_add(m.output_bytes.unwrap_or(0));
    let others = held.saturating_sub(own);
    if others <= request || others < NOTEWORTHY {
        return None;
    }
    let free = oom::free_clause(m);
    let args = match (m.arguments_bytes, m.output_bytes) {
        (Some(a), Some(o)) => format!(
            " beyond the program's {} of arguments and {} of outputs",
            size(a),
            size(o)
        ),
        (Some(a), None) => format!(" beyond the program's {} of arguments", size(a)),
        _ => String::new(),
    };
    let text = format!(
        "{} was already allocated when the {} request failed (read{free}): arrays held outside this program take about {} (estimated){args}, more than it asks for",
        size(held),
        size(request),
        size(others),
    );
    let fits = m.free_bytes.map(|f| f.saturating_add(others) >= request);
    let line = Line::new(
        DiagnosisId::OtherLiveArrays,
        Label::Read,
        text,
        "arrays outside the step: earlier outputs kept alive, a dataset or eval copy placed on the device, prefetch",
    );
    Some(
        line.fix("delete arrays you no longer need (del x; or x.delete()), keep data on the host and stream it in batches, and fetch results with jax.device_get instead of keeping them on the device")
            .saving(Some(others))
            .cost("host-to-device transfers per step")
            .fits_after(fits),
    )
}

/// XLA's rematerialization gave up below its limit (its warning), or the listing's
/// labels show instructions it already rematerialized (`….remat3`).
pub fn xla_remat(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    let text = match &m.remat {
        Some(r) => {
            let (limit, reached) = (r.limit_bytes?, r.reduced_to_bytes?);
            if i128::from(reached) <= i128::from(limit) {
                return None;
            }
            let from = r
                .original_bytes
                .map(|o| format!(", down from {}", size(o)))
                .unwrap_or_default();
            format!(
                "XLA's rematerialization gave up: it could only reduce memory to {}{from}, above its limit of {} (read)",
                size(reached),
                remat_limit(limit)
            )
        }
        None => {
            let labels: Vec<&str> = m
                .allocations
                .iter()
                .map(|a| oom::instruction(&a.xla_label))
                .filter(|name| is_remat(name))
                .collect();
            let first = labels.first()?;
            format!(
                "{} of the listed allocations are instructions XLA recomputed ({first}, read)",
                labels.len()
            )
        }
    };
    let line = Line::new(
        DiagnosisId::XlaRemat,
        Label::Read,
        text,
        "XLA's own rematerialization already hit its limit",
    );
    Some(line.fix(
        "expect the fix to come from the program (checkpointing, batch, sharding), not from XLA",
    ))
}

/// `fusion.1265.remat3`: XLA names the copies its rematerialization makes `.remat`,
/// `.remat2`, ….
pub(super) fn is_remat(instruction: &str) -> bool {
    instruction.rsplit('.').next().is_some_and(|last| {
        last.strip_prefix("remat")
            .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()))
    })
}

/// The listing holds a host callback's buffers.
pub fn debug_callback(cx: &Context<'_>) -> Option<Line> {
    let m = cx.message?;
    let a = m.allocations.iter().find(|a| tpu::is_callback(a))?;
    let text = format!(
        "the message lists a host callback's buffer: {} {}{} (read): a callback materializes its operands whole and sends them to the host",
        size(a.size_bytes),
        a.shape,
        oom::origin(a)
    );
    let line = Line::new(
        DiagnosisId::DebugCallback,
        Label::Read,
        text,
        "a leftover jax.debug.print / jax.debug.callback / io_callback",
    );
    Some(
        line.fix(
            "remove the debug print from the step, or print a reduced value (a norm, a slice)",
        ),
    )
}

/// No cause above explains the overflow (none fired, or their savings fall short of
/// it): the aggregate is too big; the fixes ranked, each with what the message
/// supports. Without a plan only (a plan's own lines name the fixes better).
pub fn aggregate_too_big(cx: &Context<'_>) -> Option<Line> {
    // A rematerialization warning alone also shows it: XLA could not bring the
    // program under the memory it was given.
    let m = cx
        .failure_message()
        .or(cx.message.filter(|m| remat_gave_up(m)))?;
    if cx.module.is_some() || !shows_program_too_big(m) {
        return None;
    }
    let causes: Vec<Line> = [
        scoped::scoped_memory,
        held::held_elsewhere,
        buffer::one_buffer,
        tpu::sparsecore_dominates,
        tpu::tpu_padding,
        arguments_dominate,
        other_live_arrays,
        fragmentation::fragmentation,
    ]
    .iter()
    .filter_map(|rule| rule(cx))
    .collect();
    if !causes.is_empty() {
        let savings: Option<u64> = causes
            .iter()
            .map(Line::saving_bytes)
            .try_fold(0u64, |sum, s| s.map(|s| sum.saturating_add(s)));
        match (oom::excess(m), savings) {
            (Some(e), Some(s)) if s < e => {}
            _ => return None,
        }
    }
    let mut text = overflow(m);
    if !causes.is_empty() {
        text.push_str("; the causes above do not cover the overflow");
    }
    let line = Line::new(
        DiagnosisId::AggregateTooBig,
        Label::Read,
        text,
        "no single buffer or cause: the program's batch, state and activations together exceed the memory",
    );
    Some(line.fixes(super::message_fixes::ranked_fixes(m)))
}

/// Whether a rematerialization warning stayed above its limit (a limit of 0 is no
/// memory size: XLA prints it when it has none; a negative one is the memory less the
/// arguments and outputs, which alone exceed it).
pub(crate) fn remat_gave_up(m: &OomMessage) -> bool {
    let Some(r) = m.remat.as_ref() else {
        return false;
    };
    match (r.limit_bytes, r.reduced_to_bytes) {
        (Some(limit), Some(reached)) => limit != 0 && i128::from(reached) > i128::from(limit),
        // A negative limit with what was reached cut off (a note quotes `Can't reduce
        // memory use below -137.14GiB by rematerialization` alone): nothing reached is
        // below zero.
        (Some(limit), None) => limit < 0,
        _ => false,
    }
}

/// A rematerialization limit as the report says it: a negative one says what it means.
pub fn remat_limit(limit: i64) -> String {
    match u64::try_from(limit) {
        Ok(bytes) => size(bytes),
        Err(_) => format!(
            "−{} (below zero: the arguments and outputs alone exceed the memory)",
            size(limit.unsigned_abs())
        ),
    }
}

/// Whether the message shows that the program itself is too big: its need over the
/// memory; XLA:TPU's compile-time check (which fails only so); XLA:GPU's failed request
/// being the temporary block of a program that is not small; a single request of a
/// whole program's size; an allocator pool full; rematerialization unable to reach its
/// limit; the same request failing on several devices at once.
fn shows_program_too_big(m: &OomMessage) -> bool {
    if let (Some(need), Some(cap)) = (oom::needs(m).or(m.total_bytes), oom::capacity(m)) {
        if need > cap {
            return true;
        }
    }
    // Each bank already holds so much that its share of the request does not fit even
    // in one piece of the bank's free memory: the program's own buffers fill the banks.
    if let (Some(share), Some(bank), Some(allocated)) =
        (m.per_bank_request_bytes, m.bank_bytes, m.used_bytes)
    {
        if allocated.saturating_add(share) > bank && m.free_bytes.is_none_or(|f| f < share) {
            return true;
        }
    }
    // The arguments and outputs alone over what XLA:GPU's scheduler may plan within.
    if m.io_bytes
        .zip(m.scheduler_limit_bytes)
        .is_some_and(|(io, limit)| io > limit)
    {
        return true;
    }
    if m.exceeded_by_bytes.is_some()
        || matches!(
            m.kind,
            OomKind::TpuCompileHbm | OomKind::TpuEarlyAbort | OomKind::TpuTcSc
        )
        || remat_gave_up(m)
        // A NeuronCore's memory belongs to one process: what fills it is this program's
        // own tensors (the models it loaded, their inputs and outputs).
        || m.kind == OomKind::NeuronRuntime
    {
        return true;
    }
    if let (Some(request), Some(temp)) = (m.requested_bytes, m.temp_bytes) {
        let large = oom::assignment_total(m)
            .or(m.used_bytes)
            .is_none_or(|u| u >= held::SMALL_PROGRAM);
        if m.kind == OomKind::GpuBufferAssignment && temp > 0 && close(request, temp) && large {
            return true;
        }
    }
    // The same request failing on several devices at once (the scanner keeps such
    // repeats only for other devices: `scan::is_repeat_on_another_device`): each replica
    // of the step runs out, so what fills every device is the step's own.
    let repeated_elsewhere = m.kind != OomKind::Driver
        && m.retried_requests_bytes.len() >= 2
        && m.retried_requests_bytes
            .iter()
            .all(|&r| Some(r) == m.requested_bytes);
    if repeated_elsewhere {
        return true;
    }
    // PyTorch allocates tensor by tensor: one request is one tensor, never a program's
    // temporaries (`pool::one_large_tensor`).
    let whole_program_request = matches!(
        m.kind,
        OomKind::GpuBufferAssignment | OomKind::Short | OomKind::BfcRuntime
    ) && m.requested_shape.is_none()
        && m.framework != Some(Framework::Pytorch);
    if whole_program_request && m.requested_bytes.is_some_and(|r| r >= LARGE_REQUEST) {
        return true;
    }
    if let Some(a) = &m.allocator {
        if let (Some(in_use), Some(limit)) = (a.in_use_bytes, a.limit_bytes) {
            if limit >= held::SMALL_POOL && in_use as f64 >= FULL_POOL * limit as f64 {
                return true;
            }
        }
        if peaked_at_limit(a) {
            return true;
        }
    }
    // PyTorch's allocator holds nearly the whole device: its own tensors fill it.
    if let (Some(held), Some(cap)) = (held::pytorch_holds(m), oom::capacity(m)) {
        if cap >= held::SMALL_POOL && held as f64 >= FULL_POOL * cap as f64 {
            return true;
        }
    }
    m.kind == OomKind::TpuRuntime
        && m.requested_bytes.zip(m.free_bytes).is_some_and(|(r, f)| {
            r > f && pct(f, r) >= MOSTLY_FREE && m.reservable_bytes.is_none_or(|x| x >= f)
        })
}

/// The message shows a failure but nothing that tells its cause (no line above names
/// one): how to find it.
pub fn too_little_to_tell(
    cx: &Context<'_>,
    lines: &[crate::report::model::Diagnosis],
) -> Option<Line> {
    let m = cx.failure_message()?;
    if cx.module.is_some() || lines.iter().any(|d| d.id.names_a_cause()) {
        return None;
    }
    let mut stated = Vec::new();
    if let Some(r) = oom::request(m) {
        let shape = m
            .requested_shape
            .as_deref()
            .map(|s| format!(" (a tensor {s})"))
            .unwrap_or_default();
        let estimated = if m.requested_bytes.is_none() {
            " (its size estimated from its shape)"
        } else {
            ""
        };
        stated.push(format!("a request of {} failed{shape}{estimated}", size(r)));
    }
    if let Some(f) = m.free_bytes {
        stated.push(format!("{} was free", size(f)));
    }
    if let Some(a) = &m.allocator {
        if let (Some(in_use), Some(limit)) = (a.in_use_bytes, a.limit_bytes) {
            stated.push(format!(
                "{} of {} was in use ({:.0}%)",
                size(in_use),
                size(limit),
                pct(in_use, limit)
            ));
        }
    }
    if stated.is_empty() && m.memory_space.as_deref() == Some("host") {
        return Some(host_too_little(apis::of(m)));
    }
    let stated = if stated.is_empty() {
        "the message says that memory ran out and states no size".to_owned()
    } else {
        format!("the message says {} (read)", stated.join("; "))
    };
    let text = format!(
        "{stated}: not what the program needs, nor what else held memory, so whether the program is too big or something else filled the device cannot be told from it"
    );
    let line = Line::new(
        DiagnosisId::TooLittleToTell,
        Label::Read,
        text,
        "too little in the message: the program's need and the device's memory are not stated",
    );
    let how = |text: String| advice(text, None);
    Some(line.fixes(apis::tell_the_cause(apis::of(m), CHECK).map(how).to_vec()))
}

/// The host's RAM ran out and the message states no size (XLA:CPU's JIT `Cannot
/// allocate memory`, `std::bad_alloc`, the OOM killer): how to tell the program's host
/// arrays from what else fills the machine.
fn host_too_little(framework: Framework) -> Line {
    let line = Line::new(
        DiagnosisId::TooLittleToTell,
        Label::Read,
        "the message says the host (CPU) ran out of RAM and states no size (read): whether the program's own arrays (a dataset loaded whole, arrays kept across steps, XLA:CPU's buffers) or other processes filled it cannot be told from it".into(),
        "too little in the message: neither the process's memory nor the machine's is stated",
    );
    let how = |text: String| advice(text, None);
    line.fixes(vec![
        how(format!("watch the process's resident memory across steps (free -h, top, or psutil.Process().memory_info().rss): if it grows step after step, something is kept ({})", apis::host_kept(framework))),
        how("check the kernel's log for the OOM killer (dmesg | grep -i 'killed process'), and load data in pieces rather than whole".into()),
    ])
}

/// The allocator's own peak (`MaxInUse`) reached its limit, in a pool of a GiB or more:
/// this process's tensors once filled the whole pool, so a failure later is the program's
/// need meeting the limit again, whatever is in use at the dump.
fn peaked_at_limit(a: &crate::evidence::message::AllocatorStats) -> bool {
    a.max_in_use_bytes
        .zip(a.limit_bytes)
        .is_some_and(|(peak, limit)| {
            limit >= held::SMALL_POOL && peak as f64 >= FULL_POOL * limit as f64
        })
}

/// `; its peak in use was …` where the allocator's peak, above what the program needs
/// now, reached the limit: what shows the program too big when `need` alone does not.
fn peak_clause(m: &OomMessage, need: u64, cap: u64) -> String {
    m.allocator
        .as_ref()
        .filter(|a| need <= cap && peaked_at_limit(a))
        .and_then(|a| a.max_in_use_bytes)
        .filter(|&p| p > need)
        .map(|p| {
            format!(
                "; its peak in use was {} ({:.0}% of the pool, MaxInUse, read): the program's own tensors filled it",
                size(p),
                pct(p, cap)
            )
        })
        .unwrap_or_default()
}

/// The message's own statement of the overflow, for the aggregate line.
fn overflow(m: &OomMessage) -> String {
    let space = oom::space(m);
    let mut text = match (oom::needs(m), oom::capacity(m), m.requested_bytes) {
        (Some(need), Some(cap), _) => {
            let over = match (m.exceeded_by_bytes, oom::excess(m)) {
                (Some(e), _) => format!(", exceeded by {}", size(e)),
                (None, Some(e)) => format!("; exceeded by {}, estimated", size(e)),
                (None, None) => String::new(),
            };
            let peak = peak_clause(m, need, cap);
            format!(
                "needs {} of {}{} (read{over}){peak}",
                size(need),
                size(cap),
                oom::of_space(m)
            )
        }
        (_, _, Some(request)) => {
            let mut t = format!("a request of {} failed (read", size(request));
            match (m.per_bank_request_bytes, m.bank_bytes, m.used_bytes) {
                (Some(share), Some(bank), Some(allocated)) => t.push_str(&format!(
                    "; each bank needs {} more, and {} of its {} were already allocated",
                    size(share),
                    size(allocated),
                    size(bank)
                )),
                _ => {
                    if let Some(f) = m.free_bytes {
                        t.push_str(&format!(", {} free", size(f)));
                    }
                    if let (OomKind::NeuronRuntime, Some(used)) = (m.kind, m.used_bytes) {
                        t.push_str(&format!(
                            ", {} already in use on the NeuronCore",
                            size(used)
                        ));
                    }
                }
            }
            if let Some(a) = &m.allocator {
                if let (Some(limit), Some(in_use)) = (a.limit_bytes, a.in_use_bytes) {
                    t.push_str(&format!(
                        ", {} of {} in use ({:.0}%)",
                        size(in_use),
                        size(limit),
                        pct(in_use, limit)
                    ));
                }
            }
            if let (Some(held), Some(cap)) = (held::pytorch_holds(m), oom::capacity(m)) {
                t.push_str(&format!(
                    ", {} of {} held by PyTorch's allocator ({:.0}%)",
                    size(held),
                    size(cap),
                    pct(held, cap)
                ));
            }
            t.push(')');
            t.push_str(&pool_state(m));
            t
        }
        (Some(need), None, None) => format!(
            "needs {} of {space} (read; the message states no capacity)",
            size(need)
        ),
        (None, _, None) => {
            let mut t = match m.program_bytes {
                Some(p) => format!("the program needs {} of {space} (read)", size(p)),
                None => "the message states no size".to_owned(),
            };
            if let Some(a) = &m.allocator {
                if let (Some(limit), Some(in_use)) = (a.limit_bytes, a.in_use_bytes) {
                    t.push_str(&format!(
                        "; {} of {} in use in {} ({:.0}%, read)",
                        size(in_use),
                        size(limit),
                        a.display_name(),
                        pct(in_use, limit)
                    ));
                    t.push_str(&pool_state(m));
                }
            }
            t
        }
    };
    if m.allocations.is_empty() {
        text.push_str(
            "; the message lists no allocations, so the fixes below are ranked without them",
        );
    }
    text
}

/// Whether the allocator's pool was full when the request failed (capacity), or not
/// (then fragmentation or memory outside the pool cannot be told apart without its
/// largest free block).
fn pool_state(m: &OomMessage) -> String {
    let Some(a) = &m.allocator else {
        return String::new();
    };
    let (Some(limit), Some(in_use)) = (a.limit_bytes, a.in_use_bytes) else {
        return String::new();
    };
    if in_use as f64 >= FULL_POOL * limit as f64 {
        return "; the pool is full: capacity, not fragmentation".into();
    }
    if a.largest_free_block_bytes.is_none() {
        return "; the pool was not full, and without its largest free block (newer allocators print LargestFreeBlock) fragmentation cannot be told from memory taken outside the pool".into();
    }
    String::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remat_names() {
        assert!(is_remat("fusion.1265.remat3"));
        assert!(is_remat("broadcast.6042.remat"));
        assert!(!is_remat("fusion.1265"));
        assert!(!is_remat("rematerialized"));
        assert!(!is_remat(""));
    }
}
