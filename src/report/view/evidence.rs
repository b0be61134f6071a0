//! The evidence beside a capture: the out-of-memory message and device memory profiles.

use super::*;
use crate::evidence::message::{AllocatorStats, OomMessage, RematWarning};

pub(super) fn error(e: &ErrorReport) -> ErrorView {
    let m = &e.message;
    let from = if e.file.is_empty() {
        String::new()
    } else {
        format!(", {}", e.file)
    };
    let warning = if m.advisory { ", a warning only" } else { "" };
    ErrorView {
        title: format!(
            "The error message (read): {}{from}{warning}",
            present::message_kind(m.kind),
        ),
        label: Label::Read,
        rows: message_rows(m),
        split: m.tensorcore_bytes.zip(m.sparsecore_bytes).map(core_split),
        allocator: m.allocator.as_ref().map(allocator_line),
        remat: m.remat.as_ref().map(remat_line),
        allocations: message_allocations(m),
        matched: e.matched.clone(),
        reading: e.scenario.clone(),
    }
}

/// The figures and names the message states, one row each, in a fixed order.
fn message_rows(m: &OomMessage) -> Vec<Row> {
    let mut rows: Vec<Row> = state_figures(m)
        .into_iter()
        .chain(program_figures(m))
        .filter_map(|(name, value, note)| value.map(|v| row(name, size(v), note)))
        .collect();
    rows.extend(retries_row(m));
    rows.extend(later_warnings_row(m));
    for item in &m.usage {
        rows.push(row(
            &item.name,
            size(item.bytes),
            "in the runtime's own account",
        ));
    }
    let named = [
        ("requested shape", m.requested_shape.as_ref()),
        ("requested type", m.requested_dtype.as_ref()),
        ("requested by op", m.requested_op.as_ref()),
        ("program", m.program.as_ref()),
        ("memory space", m.memory_space.as_ref()),
        ("error code", m.error_code.as_ref()),
    ];
    for (name, value) in named {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            rows.push(row(name, v.clone(), ""));
        }
    }
    if let Some(d) = m.device_ordinal {
        rows.push(row("device", d.to_string(), "ordinal"));
    }
    if let Some(f) = m.framework {
        rows.push(row(
            "framework",
            present::framework(f).to_owned(),
            "named by the text; the fixes use its API",
        ));
    }
    rows
}

/// A size the message may state: its row's name, the size, and a note.
type Figure = (&'static str, Option<u64>, &'static str);

/// The memory's state at the failure: the request against what was used and free.
fn state_figures(m: &OomMessage) -> Vec<Figure> {
    // A banked memory's figures are each bank's; the TPU runtime's `used` was live
    // before the request.
    let bank = m.per_bank_request_bytes.is_some();
    let used = if m.kind == crate::evidence::message::OomKind::TpuRuntime {
        "already allocated when it failed"
    } else if bank {
        "allocated in each bank when it failed"
    } else if m.kind == crate::evidence::message::OomKind::Other {
        // A usage report (Colab's dialog): what is held, by whatever holds it.
        "in use, as the environment reports it"
    } else {
        "what the program needs there"
    };
    let (free, reservable) = if bank {
        (
            "free in each bank when it failed",
            "each bank's largest free block",
        )
    } else {
        ("free when it failed", "the most it could take in one piece")
    };
    // In a warning alone nothing failed: the request is the last one warned about.
    let requested = match (m.advisory, m.later_advisory_requests_bytes.is_empty()) {
        (false, _) => "the allocation that failed",
        (true, true) => "the request warned about: nothing failed",
        (true, false) => "the last request warned about: nothing failed",
    };
    vec![
        ("requested", m.requested_bytes, requested),
        ("used", m.used_bytes, used),
        ("capacity", m.capacity_bytes, "the memory's size"),
        ("exceeded by", m.exceeded_by_bytes, ""),
        ("free", m.free_bytes, free),
        (
            "free at start",
            m.free_at_start_bytes,
            "when the framework found the device: what other processes left it",
        ),
        ("reservable", m.reservable_bytes, reservable),
        (
            "reservable if compacted",
            m.compacted_reservable_bytes,
            "the most it could take with the free memory compacted",
        ),
    ]
}

/// The program's parts, and what the allocators beside XLA's state.
fn program_figures(m: &OomMessage) -> Vec<Figure> {
    vec![
        (
            "total",
            m.total_bytes,
            "reserved + program + arguments, at least",
        ),
        ("reserved", m.reserved_bytes, "kept by the runtime"),
        ("program", m.program_bytes, ""),
        ("arguments", m.arguments_bytes, "parameters"),
        ("outputs", m.output_bytes, ""),
        ("constants", m.constant_bytes, ""),
        ("temporary", m.temp_bytes, ""),
        (
            "padding",
            m.padding_bytes,
            "of the temporaries: padded − unpadded",
        ),
        ("fragmentation", m.fragmentation_bytes, ""),
        ("temp fragmentation", m.temp_fragmentation_bytes, ""),
        (
            "aliased",
            m.aliased_bytes,
            "outputs sharing their arguments' buffers",
        ),
        (
            "warned before",
            // A warning whose run died after it is the failure itself: one row. In a
            // warning alone, every warning is in the "warned" row instead.
            m.advisory_request_bytes
                .filter(|&a| !m.advisory && Some(a) != m.requested_bytes),
            "a request the allocator called not a failure, before this one",
        ),
        ("PyTorch allocated", m.pytorch_allocated_bytes, ""),
        (
            "PyTorch cached",
            m.pytorch_reserved_unallocated_bytes,
            "reserved by PyTorch but unallocated",
        ),
        (
            "PyTorch reserved",
            m.pytorch_reserved_bytes,
            "reserved in total by PyTorch, allocated or cached",
        ),
        (
            "process in use",
            m.process_used_bytes,
            "the failing process's memory on the device",
        ),
        (
            "per bank",
            m.per_bank_request_bytes,
            "the request's share of each bank",
        ),
        ("bank size", m.bank_bytes, ""),
        (
            "nearest obstacle at",
            m.obstacle_offset_bytes,
            "from the bottom of memory",
        ),
        ("obstacle size", m.obstacle_bytes, ""),
    ]
}

/// The later tries of the request, the first four shown.
fn retries_row(m: &OomMessage) -> Option<Row> {
    sizes_row(
        "later tries",
        &m.retried_requests_bytes,
        "the same request again, each failed",
    )
}

/// The requests of the allocator's later not-a-failure warnings, the first four shown.
/// In a warning alone they are the whole story: every warning, the first included, in
/// the order printed, and only where there are several (one is the requested row).
fn later_warnings_row(m: &OomMessage) -> Option<Row> {
    if !m.advisory {
        return sizes_row(
            "warned again",
            &m.later_advisory_requests_bytes,
            "later requests the allocator called not a failure",
        );
    }
    if m.later_advisory_requests_bytes.is_empty() {
        return None;
    }
    let every: Vec<u64> = m
        .advisory_request_bytes
        .into_iter()
        .chain(m.later_advisory_requests_bytes.iter().copied())
        .collect();
    sizes_row(
        "warned",
        &every,
        "each request the allocator called not a failure, in order",
    )
}

/// A row of sizes, the first four shown, with their count.
fn sizes_row(name: &str, sizes: &[u64], note: &str) -> Option<Row> {
    if sizes.is_empty() {
        return None;
    }
    let shown: Vec<String> = sizes.iter().take(4).map(|&b| size(b)).collect();
    let more = if sizes.len() > 4 { ", …" } else { "" };
    Some(row(
        name,
        format!("{}{more} ({} in all)", shown.join(", "), sizes.len()),
        note,
    ))
}

/// `TensorCore 1.0 GiB (80.0%) · SparseCore 256 MiB (20.0%)`, from a TPU's split.
fn core_split((tc, sc): (u64, u64)) -> String {
    let total = tc.saturating_add(sc).max(1);
    format!(
        "TensorCore {} ({:.1}%) · SparseCore {} ({:.1}%)",
        size(tc),
        100.0 * tc as f64 / total as f64,
        size(sc),
        100.0 * sc as f64 / total as f64
    )
}

/// The allocator's figures the message states, in one line.
fn allocator_line(a: &AllocatorStats) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut add = |name: &str, v: Option<u64>| {
        if let Some(v) = v {
            parts.push(format!("{name} {}", size(v)));
        }
    };
    add("limit", a.limit_bytes);
    add("in use", a.in_use_bytes);
    add("max in use", a.max_in_use_bytes);
    add("largest free block", a.largest_free_block_bytes);
    add("reserved", a.reserved_bytes);
    add("largest allocation", a.max_alloc_size_bytes);
    add("pool holds", a.mempool_reserved_bytes);
    add("pool held at most", a.mempool_reserved_high_bytes);
    add("pool used", a.mempool_used_bytes);
    add("pool used at most", a.mempool_used_high_bytes);
    if let Some(n) = a.num_allocs {
        parts.push(format!("{n} allocations"));
    }
    if let Some(c) = a.largest_in_use.first() {
        parts.push(format!(
            "largest chunks in use {} × {}",
            c.count,
            size(c.size_bytes)
        ));
    }
    let name = if a.name.is_empty() {
        "allocator"
    } else {
        a.name.as_str()
    };
    if parts.is_empty() {
        name.to_owned()
    } else {
        format!("{name}: {}", parts.join(", "))
    }
}

/// What the rematerialization warning says, in one line.
fn remat_line(r: &RematWarning) -> String {
    let show = |b: Option<u64>| b.map(size).unwrap_or_else(|| "?".into());
    let from = r
        .original_bytes
        .map(|o| format!(", down from {}", size(o)))
        .unwrap_or_default();
    format!(
        "rematerialization: could not reduce memory below {}; only reduced to {}{from}",
        r.limit_bytes
            .map(crate::diagnosis::rules::message::remat_limit)
            .unwrap_or_else(|| "?".into()),
        show(r.reduced_to_bytes)
    )
}

pub(super) fn message_allocations(m: &crate::evidence::message::OomMessage) -> Option<Table> {
    if m.allocations.is_empty() {
        return None;
    }
    let top = limits::MESSAGE_ALLOCATIONS;
    let rows = m
        .allocations
        .iter()
        .take(top)
        .map(|a| {
            let short = present::short_source(&a.source);
            let expansion = crate::diagnosis::oom::expansion(a)
                .map(|x| format!("{x:.1}×"))
                .unwrap_or_default();
            let what = if a.op_name.is_empty() {
                a.xla_label.clone()
            } else {
                a.op_name.clone()
            };
            vec![
                Cell::bytes(a.size_bytes),
                Cell::new(a.unpadded_bytes.map(size).unwrap_or_default()),
                Cell::new(expansion),
                Cell::new(a.shape.clone()),
                Cell::new(a.allocation_type.clone()),
                Cell {
                    text: short.to_owned(),
                    full: (short != a.source).then(|| a.source.clone()),
                },
                Cell::new(what),
            ]
        })
        .collect();
    let left = m.allocations.len().saturating_sub(top) as u64 + m.omitted_allocations;
    let more = (left > 0).then(|| format!("… {left} more allocations listed"));
    Some(Table {
        title: "Largest allocations the message lists (read)".into(),
        label: Label::Read,
        columns: vec![
            column("size", true),
            column("unpadded", true),
            column("×", true),
            column("shape", false),
            column("type", false),
            column("source", false),
            column("op_name / XLA label", false),
        ],
        rows,
        more,
        marks: Vec::new(),
    })
}

pub(super) fn profiles(h: &HostReport) -> Option<ProfilesView> {
    let last = h.profiles.last()?;
    Some(ProfilesView {
        title: "Device memory profiles (measured)".into(),
        rows: h.profiles.iter().map(profile_line).collect(),
        devices: (last.devices.len() > 1).then(|| profile_devices(last)),
        groups: (!last.groups.is_empty()).then(|| profile_groups(last)),
        growth: (h.profiles.len() > 1).then(|| profile_growth(h)),
    })
}

/// What the latest profile holds on each device, in one line.
fn profile_devices(last: &DeviceProfile) -> String {
    let mut list: Vec<String> = last
        .devices
        .iter()
        .take(limits::PROFILE_DEVICES)
        .map(|d| format!("{} {} ({} buffers)", d.device, size(d.bytes), d.count))
        .collect();
    if last.devices.len() > limits::PROFILE_DEVICES {
        list.push(format!(
            "… and {} more devices",
            last.devices.len() - limits::PROFILE_DEVICES
        ));
    }
    format!("{} by device: {}", last.file, list.join(" · "))
}

/// What the latest profile holds, by the Python line that made it.
fn profile_groups(last: &DeviceProfile) -> Table {
    let top = limits::PROFILE_GROUPS;
    let rows = last
        .groups
        .iter()
        .take(top)
        .map(|g| {
            vec![
                Cell::bytes(g.bytes),
                Cell::new(g.count.to_string()),
                Cell::new(g.kind.clone()),
                Cell::new(g.devices.to_string()),
                Cell {
                    text: g.frame.clone(),
                    full: (!g.path.is_empty()).then(|| format!("{}:{}", g.path, g.line)),
                },
            ]
        })
        .collect();
    Table {
        title: "Held at the latest profile (measured), by the Python line that made it".into(),
        label: Label::Measured,
        columns: vec![
            column("bytes", true),
            column("count", true),
            column("kind", false),
            column("devices", true),
            column("frame", false),
        ],
        rows,
        more: (last.groups.len() > top)
            .then(|| format!("… and {} more lines", last.groups.len() - top)),
        marks: Vec::new(),
    }
}

/// How what the profiles hold grew from the first to the last, by Python line.
fn profile_growth(h: &HostReport) -> Table {
    let top = limits::GROWTH;
    let rows = h
        .growth
        .iter()
        .take(top)
        .map(|g| {
            let sign = if g.bytes < 0 { "−" } else { "+" };
            vec![
                Cell::new(format!("{sign}{}", size(g.bytes.unsigned_abs()))),
                Cell::new(format!("{:+}", g.count)),
                Cell::new(g.kind.clone()),
                Cell::new(if g.rose_every_step { "yes" } else { "no" }),
                Cell {
                    text: g.frame.clone(),
                    full: (!g.path.is_empty()).then(|| format!("{}:{}", g.path, g.line)),
                },
            ]
        })
        .collect();
    Table {
        title: "Growth from the first profile to the last (measured), largest change first".into(),
        label: Label::Measured,
        columns: vec![
            column("bytes", true),
            column("count", true),
            column("kind", false),
            column("rising", false),
            column("frame", false),
        ],
        rows,
        more: if h.growth.is_empty() {
            Some("nothing changed".into())
        } else {
            (h.growth.len() > top).then(|| format!("… and {} more lines", h.growth.len() - top))
        },
        marks: Vec::new(),
    }
}

/// `step1.prof: 4.0 MiB on cpu:0 (2 buffers 4.0 MiB, 1 executable 0 B)`.
pub(super) fn profile_line(p: &DeviceProfile) -> String {
    format!(
        "{}: {} on {} ({} buffers {}, {} executables {})",
        p.file,
        size(p.total_bytes),
        p.device,
        p.buffer_count,
        size(p.buffer_bytes),
        p.executable_count,
        size(p.executable_bytes)
    )
}
