//! What the triage reads from an out-of-memory message beyond its raw fields: the
//! memory it ran out of, what the program needs there, by how much it is over, and the
//! data an allocation holds without its padding. Every figure is one the message
//! states, or plain arithmetic on them (said where it is).

use crate::evidence::message::{MessageAllocation, OomKind, OomMessage};

/// The memory's capacity: the message's (`of Y hbm`, `has Y available`, `Limit:`), else
/// the allocator's limit, else (a dump without its limit) the regions it holds.
pub fn capacity(m: &OomMessage) -> Option<u64> {
    m.capacity_bytes
        .or_else(|| m.allocator.as_ref().and_then(|a| a.limit_bytes))
        .or_else(|| m.allocator.as_ref().and_then(|a| a.region_allocated_bytes))
        .filter(|&c| c > 0)
}

/// Whether the driver refused the framework its whole pool: a request within 1% of the
/// pool the framework announced (`Created TensorFlow device (… with 11671 MB memory)`,
/// then `failed to allocate 11.40G (12238104064 bytes) from device`), or, where it
/// announced none (TensorFlow 1.x's `Creating TensorFlow device (/gpu:0)`), of the
/// device's whole memory, which only a framework's pool asks for, or of nine tenths or
/// more of what the device had free (TensorFlow 1.x takes 95% of it: `Free memory:
/// 10.62GiB`, then `failed to allocate 10.09G`). Not a tensor: the device had less free
/// than the framework meant to take, so something else held it.
pub fn is_pool_creation(m: &OomMessage) -> bool {
    let on_device = m.memory_space.as_deref() != Some("host");
    let pool = m
        .allocator
        .as_ref()
        .and_then(|a| a.limit_bytes)
        .or(m.capacity_bytes.filter(|_| on_device));
    let Some(request) = m.requested_bytes.filter(|_| m.kind == OomKind::Driver) else {
        return false;
    };
    let the_pool = pool.is_some_and(|p| request.abs_diff(p) <= p / 100);
    let most_of_free = m
        .free_bytes
        .filter(|_| on_device)
        .is_some_and(|f| request <= f && request.saturating_mul(10) >= f.saturating_mul(9));
    the_pool || most_of_free
}

/// `, 18.92 GiB free` when the message states what was free, for a figure's parenthesis
/// (`(read, 18.92 GiB free)`); empty otherwise.
pub fn free_clause(m: &OomMessage) -> String {
    m.free_bytes
        .map(|f| format!(", {} free", crate::units::size(f)))
        .unwrap_or_default()
}

/// The failed request: as printed, else sized from its tensor's shape and type (an
/// estimate; the caller labels it so where it matters).
pub fn request(m: &OomMessage) -> Option<u64> {
    m.requested_bytes.or(m.requested_bytes_from_shape)
}

/// `HBM`, `VMEM`: the memory space the message names, or `memory`.
pub fn space(m: &OomMessage) -> String {
    match m.memory_space.as_deref() {
        Some(s) if !s.is_empty() => s.to_ascii_uppercase(),
        _ => "memory".into(),
    }
}

/// ` HBM` after a capacity (`of 32.00 GiB HBM`), or ` available` when the message names
/// no memory space.
pub fn of_space(m: &OomMessage) -> String {
    match m.memory_space.as_deref() {
        Some(crate::evidence::message::WORKSPACE) => " workspace limit".into(),
        Some(s) if !s.is_empty() => format!(" {}", s.to_ascii_uppercase()),
        _ => " available".into(),
    }
}

/// What the program needs in that memory: TPU `Used X`, the early abort's `Requires X`,
/// GPU `total allocation`, or TensorCore plus SparseCore. Not the TPU runtime's
/// `Currently allocated`, nor a banked memory's `allocated:` (one bank's, see
/// [`banked`]), which are what was live before the request.
pub fn needs(m: &OomMessage) -> Option<u64> {
    if m.kind == OomKind::TpuRuntime || banked(m) {
        return None;
    }
    match (m.tensorcore_bytes, m.sparsecore_bytes) {
        (Some(tc), Some(sc)) => Some(tc.saturating_add(sc)),
        _ => m.used_bytes,
    }
}

/// A memory made of banks (Tenstorrent's DRAM or L1): the message's `allocated`,
/// `free` and `largest free block` are each bank's, to be set against each bank's share
/// of the request and the bank's size, never against the device's total.
pub fn banked(m: &OomMessage) -> bool {
    m.per_bank_request_bytes.is_some() && m.bank_bytes.is_some()
}

/// What an XLA:GPU buffer assignment needs in all: its `total allocation`, or, when the
/// paste stops before that line, the sum of the four allocations above it (parameters,
/// constants, outputs and temporaries), which is how XLA computes it.
pub fn assignment_total(m: &OomMessage) -> Option<u64> {
    if m.kind != OomKind::GpuBufferAssignment {
        return None;
    }
    m.used_bytes.or_else(|| {
        [
            m.arguments_bytes,
            m.constant_bytes,
            m.output_bytes,
            m.temp_bytes,
        ]
        .into_iter()
        .try_fold(0u64, |sum, part| Some(sum.saturating_add(part?)))
    })
}

/// By how much the need exceeds the memory: the message's own `Exceeded … by Z`, else
/// the need less the capacity, else (a runtime failure) the request less what was free.
pub fn excess(m: &OomMessage) -> Option<u64> {
    if let Some(e) = m.exceeded_by_bytes {
        return Some(e);
    }
    if let (Some(need), Some(cap)) = (needs(m), capacity(m)) {
        if need > cap {
            return Some(need - cap);
        }
    }
    match (m.requested_bytes, m.free_bytes) {
        (Some(r), Some(f)) if r > f => Some(r - f),
        _ => None,
    }
}

/// The program's own part, against which its arguments are weighed: TPU `program`, or
/// for XLA:GPU's buffer assignment the total less the parameters (outputs, constants
/// and temporaries).
pub fn program_part(m: &OomMessage) -> Option<u64> {
    match m.kind {
        OomKind::GpuBufferAssignment => {
            let args = m.arguments_bytes?;
            m.used_bytes.map(|u| u.saturating_sub(args))
        }
        _ => m.program_bytes,
    }
}

/// The bytes of data an allocation holds without its layout padding.
pub fn data_bytes(a: &MessageAllocation) -> u64 {
    match (a.unpadded_bytes, a.padding_bytes) {
        (Some(u), _) => u,
        (None, Some(p)) => a.size_bytes.saturating_sub(p),
        (None, None) => a.size_bytes,
    }
}

/// The padding of an allocation: `Extra memory due to padding`, or size less unpadded.
pub fn padding(a: &MessageAllocation) -> u64 {
    a.padding_bytes.unwrap_or_else(|| {
        a.size_bytes
            .saturating_sub(a.unpadded_bytes.unwrap_or(a.size_bytes))
    })
}

/// How many times its data an allocation takes (the printed expansion when there is
/// one), when its data is known.
pub fn expansion(a: &MessageAllocation) -> Option<f64> {
    if let Some(x) = a.padding_expansion {
        return Some(x);
    }
    let data = data_bytes(a);
    (data > 0 && (a.unpadded_bytes.is_some() || a.padding_bytes.is_some()))
        .then(|| a.size_bytes as f64 / data as f64)
}

/// Where an allocation comes from, for a sentence: `(FloorMod at model.py:12)`, the
/// op name when there is no type, the XLA label's instruction when there is neither.
pub fn origin(a: &MessageAllocation) -> String {
    let what = if !a.op_type.is_empty() {
        a.op_type.clone()
    } else if !a.op_name.is_empty() {
        short(&a.op_name, 120)
    } else {
        instruction(&a.xla_label).to_owned()
    };
    let at = if a.source.is_empty() {
        String::new()
    } else {
        format!(" at {}", crate::report::present::short_source(&a.source))
    };
    match (what.is_empty(), at.is_empty()) {
        (true, true) => String::new(),
        _ => format!(" ({}{at})", what.trim()),
    }
}

/// The instruction an XLA label defines: `fusion.1265.remat3` in `fusion.1265.remat3 =
/// fusion(…)`, `copy.40488` in `%copy.40488 = s32[…] copy(…)`, `fusion.549` in `output
/// of fusion.549@{1}`.
pub fn instruction(label: &str) -> &str {
    // The TPU runtime's tag for a buffer it could not place: `output of
    // xor_convert_fusion@{}` (the value at that index of the instruction's output).
    if let Some(value) = label.strip_prefix("output of ") {
        let name = value.split('@').next().unwrap_or(value).trim();
        return if name.contains(' ') { "" } else { name };
    }
    let name = label.split(" = ").next().unwrap_or(label).trim();
    let name = name.strip_prefix('%').unwrap_or(name);
    if name.contains(' ') {
        ""
    } else {
        name
    }
}

/// `text`, cut to `max` characters with `…`.
pub fn short(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excess_from_the_message_or_its_figures() {
        let m = OomMessage {
            used_bytes: Some(10),
            capacity_bytes: Some(4),
            ..Default::default()
        };
        assert_eq!(excess(&m), Some(6));
        let m = OomMessage {
            kind: OomKind::TpuRuntime,
            requested_bytes: Some(10),
            free_bytes: Some(3),
            used_bytes: Some(100),
            ..Default::default()
        };
        assert_eq!((needs(&m), excess(&m)), (None, Some(7)));
    }

    #[test]
    fn instructions_from_labels() {
        assert_eq!(
            instruction("fusion.1265.remat3 = fusion(custom-call.224), kind=kOutput"),
            "fusion.1265.remat3"
        );
        assert_eq!(instruction("%copy.40488 = s32[8]{0} copy(…)"), "copy.40488");
        assert_eq!(
            instruction("register allocator spill slots call depth 2"),
            ""
        );
    }
}
