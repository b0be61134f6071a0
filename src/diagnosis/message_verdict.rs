//! The verdict an out-of-memory message gives on its own, when no plan says more:
//! one sentence and its figures, never contradicting the triage's lines (a program that
//! cannot fit, one allocation over the memory, a kernel's blocks are `does_not_fit`; a
//! request that failed among others, `ran_out`). Each step below reads one shape of
//! message; the first that applies gives the verdict.

use crate::diagnosis::rules::held::SMALL_PROGRAM;
use crate::diagnosis::verdict::make;
use crate::diagnosis::{error_text::close, oom};
use crate::evidence::message::{OomKind, OomMessage};
use crate::report::model::{Headline, HeadlineFigure, Label, Verdict};

/// Any size as a message figure: `41.74 GiB`, `129.5 MiB`, `3.47 EiB`.
pub fn read(name: &str, bytes: u64, label: Label) -> HeadlineFigure {
    HeadlineFigure {
        name: name.into(),
        bytes,
        shown: crate::units::size(bytes),
        label,
    }
}

/// The verdict of `m` (see the module's doc).
pub fn headline(m: &OomMessage) -> Headline {
    if crate::diagnosis::rules::scoped::is_scoped(m) {
        return scoped(m);
    }
    if m.advisory {
        return warning(m);
    }
    tensorcore_sparsecore(m)
        .or_else(|| over_capacity(m))
        .or_else(|| driver_without_request(m))
        .or_else(|| compile_time(m))
        .or_else(|| remat_over_limit(m))
        .or_else(|| request(m))
        .or_else(|| program_only(m))
        .or_else(|| allocator_only(m))
        .or_else(|| scheduler(m))
        .unwrap_or_else(|| nothing_stated(m))
}

/// TensorCore plus SparseCore against what is available.
fn tensorcore_sparsecore(m: &OomMessage) -> Option<Headline> {
    let (tc, sc, cap) = (m.tensorcore_bytes?, m.sparsecore_bytes?, oom::capacity(m)?);
    let space = oom::of_space(m);
    let (tc, sc, cap) = (
        read("tensorcore", tc, Label::Read),
        read("sparsecore", sc, Label::Read),
        read("capacity", cap, Label::Read),
    );
    let total = tc.bytes.saturating_add(sc.bytes);
    let mut figures = vec![tc, sc, cap];
    let mut text = format!(
        "Does not fit: TensorCore {} + SparseCore {} = {} of {}{space}",
        figures[0].shown,
        figures[1].shown,
        crate::units::size(total),
        figures[2].shown
    );
    if total > figures[2].bytes {
        let over = read("exceeded_by", total - figures[2].bytes, Label::Estimated);
        text.push_str(&format!(" (exceeded by {})", over.shown));
        figures.push(over);
    }
    Some(make(Verdict::DoesNotFit, text, figures))
}

/// What the program needs over the memory's capacity.
fn over_capacity(m: &OomMessage) -> Option<Headline> {
    let (need, cap) = (oom::needs(m)?, oom::capacity(m)?);
    if need <= cap {
        return None;
    }
    let (need, cap) = (
        read("needs", need, Label::Read),
        read("capacity", cap, Label::Read),
    );
    let mut text = format!(
        "Does not fit: needs {} of {}{}",
        need.shown,
        cap.shown,
        oom::of_space(m)
    );
    let mut figures = vec![need, cap];
    if let Some(e) = m.exceeded_by_bytes {
        let over = read("exceeded_by", e, Label::Read);
        text.push_str(&format!(" (exceeded by {})", over.shown));
        figures.push(over);
    }
    if m.kind == OomKind::TpuEarlyAbort {
        text.push_str("; XLA aborted compilation early");
    }
    Some(make(Verdict::DoesNotFit, text, figures))
}

/// The driver refused a context or a library's workspace: no size to quote.
fn driver_without_request(m: &OomMessage) -> Option<Headline> {
    if m.kind != OomKind::Driver || m.requested_bytes.is_some() {
        return None;
    }
    let device = m
        .device_ordinal
        .map(|d| format!(" on GPU {d}"))
        .unwrap_or_default();
    let text = format!(
        "Ran out of memory: the GPU driver found no memory{device} outside XLA's pool (a context or a library's workspace)"
    );
    Some(make(Verdict::RanOut, text, Vec::new()))
}

/// XLA:TPU's compile-time check fails only when the program does not fit.
fn compile_time(m: &OomMessage) -> Option<Headline> {
    if !matches!(m.kind, OomKind::TpuCompileHbm | OomKind::TpuEarlyAbort) {
        return None;
    }
    let mut figures = Vec::new();
    let mut text = "Does not fit: XLA:TPU's compile-time check failed".to_owned();
    if let Some(p) = m.program_bytes.or(m.used_bytes) {
        let needs = read("needs", p, Label::Read);
        text.push_str(&format!(
            " (the program needs {}; the message states no capacity)",
            needs.shown
        ));
        figures.push(needs);
    } else {
        text.push_str("; the message states no total");
    }
    Some(make(Verdict::DoesNotFit, text, figures))
}

/// A failed request: over the capacity, XLA:GPU's temporary block, the driver's, or
/// one among others (with what was free or in use).
/// A failure after XLA's rematerialization warned that it could bring the program only
/// down to more than its limit: the message itself says the program needs more than
/// the memory (`Can't reduce memory use below L … only reduced to R`, R > L), whatever
/// request then failed.
fn remat_over_limit(m: &OomMessage) -> Option<Headline> {
    if !crate::diagnosis::rules::message::remat_gave_up(m) {
        return None;
    }
    // A negative limit (the arguments and outputs alone exceed the memory) states no
    // memory size to set the program against.
    let r = m.remat.as_ref()?;
    let limit = u64::try_from(r.limit_bytes?).ok()?;
    let reached = r.reduced_to_bytes?;
    let (reached, limit) = (
        read("reduced_to", reached, Label::Read),
        read("limit", limit, Label::Read),
    );
    let mut text = format!(
        "Does not fit: XLA's rematerialization could bring the program down only to {}, above the {} it had",
        reached.shown, limit.shown
    );
    let mut figures = vec![reached, limit];
    if let Some(request) = m.requested_bytes {
        let req = read("failed_request", request, Label::Read);
        text.push_str(&format!("; then a request of {} failed", req.shown));
        figures.push(req);
    }
    Some(make(Verdict::DoesNotFit, text, figures))
}

fn request(m: &OomMessage) -> Option<Headline> {
    let request = m.requested_bytes?;
    let req = read("failed_request", request, Label::Read);
    let over = |c: u64| request > c && !oom::is_pool_creation(m);
    if let Some(cap) = oom::capacity(m).filter(|&c| over(c)) {
        let cap = read("capacity", cap, Label::Read);
        let text = format!(
            "Does not fit: one allocation of {} exceeds the {}{}",
            req.shown,
            cap.shown,
            oom::of_space(m)
        );
        return Some(make(Verdict::DoesNotFit, text, vec![req, cap]));
    }
    temp_block(m, request)
        .or_else(|| driver_request(m, &req))
        .or_else(|| {
            let pinned = m
                .allocator
                .as_ref()
                .is_some_and(|a| a.name.contains("host"));
            let memory = match m.memory_space.as_deref() {
                Some("host") if pinned => "pinned host memory",
                Some("host") => "the host's memory (RAM)",
                _ => "memory",
            };
            let mut text = format!(
                "Ran out of {memory}: a request of {} could not be allocated",
                req.shown
            );
            let mut figures = vec![req];
            if let Some(f) = m.free_bytes {
                let free = read("free", f, Label::Read);
                // ROCm on an APU has printed an unsigned counter that wrapped (17179869183.96
                // GiB free of 512 MiB): stated, but not a size.
                if oom::capacity(m).is_some_and(|c| f > c) {
                    text.push_str(&format!(
                        "; the {} it printed as free is more than the device has (a counter that wrapped)",
                        free.shown
                    ));
                } else {
                    text.push_str(&format!("; {} were free", free.shown));
                }
                figures.push(free);
            } else if let Some((in_use, limit, name)) = allocator_use(m) {
                text.push_str(&format!(
                    "; {} of {} in use in {name}",
                    in_use.shown, limit.shown
                ));
                figures.extend([in_use, limit]);
            }
            Some(make(Verdict::RanOut, text, figures))
        })
}

/// XLA:GPU's failed request is the program's temporary block. The message states no
/// capacity: that the block failed says memory ran out, not that the program is larger
/// than the device.
fn temp_block(m: &OomMessage, request: u64) -> Option<Headline> {
    let gpu = m.kind == OomKind::GpuBufferAssignment;
    let temp = m
        .temp_bytes
        .filter(|&t| gpu && t > 0 && close(request, t))?;
    let temp = read("temp", temp, Label::Read);
    let mut text = format!(
        "Ran out of memory: the program's {} temporary block could not be allocated",
        temp.shown
    );
    let mut figures = vec![temp];
    if let Some(u) = m.used_bytes {
        let needs = read("needs", u, Label::Read);
        if u < SMALL_PROGRAM {
            text.push_str(&format!(
                ", though the program needs only {} in all: something else held the GPU's memory",
                needs.shown
            ));
        } else {
            text.push_str(&format!(" (it needs {} in all)", needs.shown));
        }
        figures.push(needs);
    }
    Some(make(Verdict::RanOut, text, figures))
}

/// The driver refused a request of device or pinned host memory.
fn driver_request(m: &OomMessage, req: &HeadlineFigure) -> Option<Headline> {
    if m.kind != OomKind::Driver {
        return None;
    }
    let where_ = if m.memory_space.as_deref() == Some("host") {
        "pinned host memory"
    } else if oom::is_pool_creation(m) {
        "device memory for the framework's whole pool"
    } else {
        "device memory outside XLA's pool"
    };
    let text = match m.error_code.as_deref().filter(|_| m.is_driver_fault()) {
        Some(code) => format!(
            "The GPU driver could not allocate {} of {where_}, with {code}: not an out-of-memory status, a fault of the driver or its setup",
            req.shown
        ),
        None => format!(
            "Ran out of memory: the GPU driver could not allocate {} of {where_}",
            req.shown
        ),
    };
    Some(make(Verdict::RanOut, text, vec![req.clone()]))
}

/// What the allocator had in use of its limit, and its name.
fn allocator_use(m: &OomMessage) -> Option<(HeadlineFigure, HeadlineFigure, &str)> {
    let a = m.allocator.as_ref()?;
    let (in_use, limit) = (a.in_use_bytes?, a.limit_bytes?);
    let name = a.display_name();
    Some((
        read("in_use", in_use, Label::Read),
        read("capacity", limit, Label::Read),
        name,
    ))
}

/// XLA:GPU's scheduler found the program's arguments and outputs alone over the memory
/// it plans within: no temporary can fit beside them.
fn scheduler(m: &OomMessage) -> Option<Headline> {
    let (io, limit) = (m.io_bytes?, m.scheduler_limit_bytes?);
    if io <= limit {
        return None;
    }
    let (io, limit) = (
        read("arguments_and_outputs", io, Label::Read),
        read("scheduler_limit", limit, Label::Read),
    );
    let text = format!(
        "Does not fit: the program's arguments and outputs alone take {}, over the {} XLA:GPU's scheduler plans within",
        io.shown, limit.shown
    );
    Some(make(Verdict::DoesNotFit, text, vec![io, limit]))
}

/// What the program needs, with no request: against the capacity where one is stated
/// (an allocator's stats are its pool's own words, `allocator_only`).
fn program_only(m: &OomMessage) -> Option<Headline> {
    let needs = read("needs", m.program_bytes.or(oom::needs(m))?, Label::Read);
    let Some(cap) = oom::capacity(m) else {
        let text = format!(
            "Ran out of {}: the program needs {}; the message states no capacity",
            oom::space(m),
            needs.shown
        );
        return Some(make(Verdict::RanOut, text, vec![needs]));
    };
    if allocator_use(m).is_some() {
        return None;
    }
    let cap = read("capacity", cap, Label::Read);
    let text = format!(
        "Ran out of {}: the program needs {} of {}{}",
        oom::space(m),
        needs.shown,
        cap.shown,
        oom::of_space(m)
    );
    Some(make(Verdict::RanOut, text, vec![needs, cap]))
}

/// The allocator's state, without a request.
fn allocator_only(m: &OomMessage) -> Option<Headline> {
    let (in_use, limit, name) = allocator_use(m)?;
    let mut text = format!(
        "Ran out of memory with {} of {} in use in {name}",
        in_use.shown, limit.shown
    );
    let mut figures = vec![in_use, limit];
    match (m.requested_bytes_from_shape, m.requested_shape.as_deref()) {
        (Some(bytes), Some(shape)) => {
            let request = read("request_from_shape", bytes, Label::Estimated);
            text.push_str(&format!(
                "; the request, a tensor of shape {shape}, is {} from its shape",
                request.shown
            ));
            figures.push(request);
        }
        _ => text.push_str("; the message states no request size"),
    }
    Some(make(Verdict::RanOut, text, figures))
}

/// A failure that states no size at all.
fn nothing_stated(m: &OomMessage) -> Headline {
    let host = m.memory_space.as_deref() == Some("host");
    let text = if m.allocations.is_empty() && host {
        "Ran out of the host's memory (RAM), not the accelerator's, as the message says; it states no size".to_owned()
    } else if m.allocations.is_empty() {
        "Ran out of memory, as the message says; it states no size".to_owned()
    } else {
        format!(
            "Ran out of {}, as the message says; it lists {} allocations but states no total",
            oom::space(m),
            m.allocations.len()
        )
    };
    make(Verdict::RanOut, text, Vec::new())
}

/// A kernel's scoped memory over a core's: the kernel does not fit, whatever the batch.
/// As a warning, it is one of an autotuner's choices for the kernel, skipped (the only
/// scoped message read as a warning).
fn scoped(m: &OomMessage) -> Headline {
    let memory = match m.memory_space.as_deref() {
        Some("shared") | None => "shared memory".to_owned(),
        Some(space) => space.to_ascii_uppercase(),
    };
    let (verdict, opening, kernel, skipped) = if m.advisory {
        (
            Verdict::Warning,
            "A warning, not a failure",
            "one of the autotuner's choices for a kernel",
            ": it skips that choice and tries the others",
        )
    } else {
        (Verdict::DoesNotFit, "Does not fit", "a kernel", "")
    };
    let (need, capacity, each) = crate::diagnosis::rules::scoped::kernel_figures(m);
    let (text, figures) = match (need, capacity) {
        (Some(n), Some(c)) => {
            let (n, c) = (
                read("needs", n, Label::Read),
                read("capacity", c, Label::Read),
            );
            let text = format!(
                "{opening}: {kernel} needs {} of {memory}{each}, a core has {}{skipped}",
                n.shown, c.shown
            );
            (text, vec![n, c])
        }
        (Some(n), None) => {
            let n = read("needs", n, Label::Read);
            let text = format!(
                "{opening}: {kernel} needs {} of {memory}{each}{skipped}",
                n.shown
            );
            (text, vec![n])
        }
        (None, _) => (
            format!("{opening}: {kernel} needs more {memory} than a core has{skipped}"),
            Vec::new(),
        ),
    };
    make(verdict, text, figures)
}

/// The verdict of a warning alone: nothing says memory ran out.
fn warning(m: &OomMessage) -> Headline {
    if let Some((limit, reached)) = m
        .remat
        .as_ref()
        .and_then(|r| Some((r.limit_bytes?, r.reduced_to_bytes?)))
    {
        let reached = read("reduced_to", reached, Label::Read);
        let Ok(limit) = u64::try_from(limit) else {
            let text = format!(
                "A warning, not a failure: XLA's rematerialization only reduced memory to {}; its limit was {}",
                reached.shown,
                crate::diagnosis::rules::message::remat_limit(limit)
            );
            return make(Verdict::Warning, text, vec![reached]);
        };
        let limit = read("limit", limit, Label::Read);
        let text = format!(
            "A warning, not a failure: XLA's rematerialization only reduced memory to {}, above its {} limit",
            reached.shown, limit.shown
        );
        return make(Verdict::Warning, text, vec![reached, limit]);
    }
    let mut figures = Vec::new();
    let host = m.is_host_allocation_warning();
    let text = match m.requested_bytes {
        Some(r) if host => {
            let req = read("request", r, Label::Read);
            let t = format!(
                "A warning, not a failure: the host (CPU) allocated {} at once; this is the machine's RAM, not the accelerator's memory",
                req.shown
            );
            figures.push(req);
            t
        }
        Some(r) => {
            let req = read("request", r, Label::Read);
            let t = format!(
                "A warning, not a failure: the allocator could not allocate {} at once and says the caller goes on",
                req.shown
            );
            figures.push(req);
            t
        }
        None => match (m.used_bytes, oom::capacity(m)) {
            (Some(u), Some(c)) => {
                let (used, cap) = (
                    read("in_use", u, Label::Read),
                    read("capacity", c, Label::Read),
                );
                let t = format!(
                    "A warning, not a failure: {} of the GPU's {} in use",
                    used.shown, cap.shown
                );
                figures.extend([used, cap]);
                t
            }
            _ => "A warning, not a failure: nothing in the text says memory ran out".to_owned(),
        },
    };
    make(Verdict::Warning, text, figures)
}
