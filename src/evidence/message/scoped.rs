//! A kernel's scoped memory over what one core has: Mosaic's `Scoped allocation with
//! size 31.07M and limit 16.00M exceeded scoped vmem limit by 15.07M`, Pallas on GPU's
//! `Shared memory size limit exceeded: requested 4194304, available: 101376`, Triton's
//! `out of resource: shared memory, Required: 65536, Hardware limit: 49152`, and XLA:GPU's
//! `Shared memory requested exceeds device resources`, and the Neuron NKI compiler's
//! `Instruction … couldn't be allocated in SB` (with `Total Accessed Bytes per partition
//! by instruction: N` and `Total SB Partition Size: M` on the lines after) or `Allocated
//! memory out of bound {tile}@SB<…>`. The block sizes of one kernel, not the model, are
//! what does not fit. (XLA:TPU's compile-time check in memory space
//! `vmem` or `smem` is read by `tpu` and triaged the same way.)

use super::draft::{set, Draft};
use super::fields::{after, count_after, size_after, word};
use super::model::OomKind;

/// Phrases of a scoped-memory failure (the scan's triggers include them).
pub const TRIGGERS: [&str; 11] = [
    "Scoped allocation with size",
    "Shared memory size limit exceeded",
    "out of resource: shared memory",
    // PyTorch Inductor's autotuner names the kernel instead (`OutOfMemoryError: out of
    // resource: triton_flex_attention Required: 262144 Hardware limit:232448`).
    "OutOfMemoryError: out of resource:",
    // The exception named without its module (`OutOfResources: shared memory, Required:
    // 147456, Hardware limit: 101376`).
    "OutOfResources: shared memory",
    "Shared memory requested exceeds",
    "couldn't be allocated in SB",
    "Allocated memory out of bound",
    // IREE's GPU code generation (`'func.func' op uses 1114112 bytes of shared memory;
    // exceeded the limit of 166912 bytes`) and its CUDA HAL loading a kernel
    // (`Requested shared memory size of 819200 larger than allowed size of 166912`).
    "bytes of shared memory; exceeded the limit of",
    "Requested shared memory size of",
    // ptxas compiling an XLA:GPU fusion: `Entry function '…' uses too much shared data
    // (0xc180 bytes, 0xc000 max)`.
    "uses too much shared data",
];

/// NKI's figures for one instruction: what it touches in each SBUF partition, and a
/// partition's size. SBUF is split into partitions as a DRAM is into banks.
const SBUF_ACCESSED: &str = "Total Accessed Bytes per partition by instruction:";
const SBUF_PARTITION: &str = "Total SB Partition Size:";

/// A scoped-memory failure, or `None` when `body` is not one.
pub fn headline(body: &str) -> Option<Draft> {
    if !TRIGGERS.iter().any(|t| body.contains(t)) {
        return None;
    }
    let mut draft = Draft::new(OomKind::ScopedMemory, true);
    let m = &mut draft.msg;
    if body.contains("couldn't be allocated in SB") || body.contains("@SB<") {
        m.memory_space = Some("sbuf".into());
        // The figures' lines may have been joined onto the headline.
        sbuf_figures(&mut draft, body);
    } else if let Some(rest) = after(body, "Scoped allocation with size ") {
        m.requested_bytes = size_after(body, "Scoped allocation with size ");
        m.capacity_bytes = size_after(rest, "and limit ");
        m.exceeded_by_bytes =
            after(rest, "exceeded scoped ").and_then(|r| size_after(r, " limit by "));
        m.memory_space = after(rest, "exceeded scoped ").and_then(word);
    } else {
        m.memory_space = Some("shared".into());
        // Triton glues its fields when the exception is printed without separators
        // (`shared memoryRequired: 110592Hardware limit: 101376`).
        if let Some((used, max)) = ptxas_shared(body) {
            m.requested_bytes = Some(used);
            m.capacity_bytes = Some(max);
            return Some(draft);
        }
        m.requested_bytes = count_after(body, "Required:")
            .or_else(|| count_after(body, "Requested shared memory size of "))
            .or_else(|| count_after(body, "requested "))
            .or_else(|| count_after(body, "requested: "))
            .or_else(|| iree_uses(body));
        // `Hardware limit: N` (`Hardware limitation: N` in some Triton versions).
        let hardware = after(body, "Hardware limit")
            .and_then(|r| r.split_once(':'))
            .and_then(|(_, v)| super::units::size_exact_prefix(v, true))
            .map(|s| s.0);
        m.capacity_bytes = hardware
            .or_else(|| count_after(body, "available:"))
            .or_else(|| count_after(body, "exceeded the limit of "))
            .or_else(|| count_after(body, "larger than allowed size of "));
    }
    Some(draft)
}

/// ptxas's `uses too much shared data (0xc180 bytes, 0xc000 max)`: the kernel's shared
/// data and the limit, in hexadecimal. The shared memory the system takes for itself
/// counts against the limit too (`(0x4000 bytes + 0x10 bytes system, 0x4000 max)`).
fn ptxas_shared(body: &str) -> Option<(u64, u64)> {
    let (_, rest) = body.split_once("uses too much shared data (")?;
    let (used, rest) = rest.split_once(" bytes")?;
    let hex = |s: &str| u64::from_str_radix(s.trim().strip_prefix("0x")?, 16).ok();
    let (system, rest) = match rest.strip_prefix(" + ") {
        Some(more) => {
            let (system, rest) = more.split_once(" bytes system")?;
            (hex(system)?, rest)
        }
        None => (0, rest),
    };
    let (_, rest) = rest.split_once(", ")?;
    let (max, _) = rest.split_once(" max")?;
    Some((hex(used)?.checked_add(system)?, hex(max)?))
}

/// IREE's `… uses N bytes of shared memory`: the count just before that phrase (a
/// negative count, an overflow in the compiler, is no size).
fn iree_uses(body: &str) -> Option<u64> {
    let (before, _) = body.split_once(" bytes of shared memory")?;
    let count = before.rsplit(' ').next()?;
    count.parse().ok()
}

fn sbuf_figures(draft: &mut Draft, body: &str) {
    let m = &mut draft.msg;
    set(
        &mut m.per_bank_request_bytes,
        count_after(body, SBUF_ACCESSED),
    );
    set(&mut m.bank_bytes, count_after(body, SBUF_PARTITION));
}

/// A figure of an SBUF failure on a line of its own.
pub fn block_line(draft: &mut Draft, body: &str) -> bool {
    if draft.msg.memory_space.as_deref() != Some("sbuf")
        || !(body.starts_with(SBUF_ACCESSED) || body.starts_with(SBUF_PARTITION))
    {
        return false;
    }
    sbuf_figures(draft, body);
    true
}

/// Whether `next` is another configuration of the kernel `first` failed for: a kernel's
/// scoped memory over the same capacity, needing another size, or each failing test of a
/// suite printing its own line (pytest's `FAILED test_op[…] - OutOfResources: …`). The
/// first is the request; the others are its later tries. The same size again outside a
/// test summary is the same failure printed twice (the log's line, then the exception's).
pub fn is_another_config(first: &Draft, next: &Draft) -> bool {
    let (a, b) = (&first.msg, &next.msg);
    let another = a.requested_bytes != b.requested_bytes || (first.test_case && next.test_case);
    a.kind == OomKind::ScopedMemory
        && b.kind == OomKind::ScopedMemory
        && a.memory_space == b.memory_space
        && a.capacity_bytes.is_some()
        && a.capacity_bytes == b.capacity_bytes
        && a.requested_bytes.is_some()
        && b.requested_bytes.is_some()
        && another
}

/// Whether `body` is a line of pytest's short test summary (`FAILED path::test[…] - …`,
/// after a CI runner's timestamp maybe): one test's failure.
pub fn is_test_case(body: &str) -> bool {
    after(body, "FAILED ")
        .and_then(|rest| rest.split_once(" - "))
        .is_some_and(|(test, _)| test.contains("::"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ptxas_shared_data_in_hexadecimal() {
        let d = headline("INTERNAL: ptxas exited with non-zero error code 65280, output: ptxas error   : Entry function 'input_concatenate_reduce_subtract_fusion' uses too much shared data (0xc180 bytes, 0xc000 max)").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(49_536));
        assert_eq!(d.msg.capacity_bytes, Some(49_152));
        assert_eq!(d.msg.memory_space.as_deref(), Some("shared"));
        // The system's share counts against the limit.
        let d = headline("ptxas error : Entry function 'kernel' uses too much shared data (0x4000 bytes + 0x10 bytes system, 0x4000 max)").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(16_400), Some(16_384))
        );
        let d = headline("OutOfResources: shared memory, Required: 147456, Hardware limit: 101376")
            .unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(147_456), Some(101_376))
        );
    }

    #[test]
    fn reads_iree_shared_memory_failures() {
        let d = headline("<stdin>:1727:11: error: 'func.func' op uses 1114112 bytes of shared memory; exceeded the limit of 166912 bytes").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(1114112));
        assert_eq!(d.msg.capacity_bytes, Some(166912));
        assert_eq!(d.msg.memory_space.as_deref(), Some("shared"));
        let d = headline("error: 'func.func' op uses -46137344 bytes of shared memory; exceeded the limit of 65536 bytes").unwrap();
        assert_eq!(d.msg.requested_bytes, None);
        assert_eq!(d.msg.capacity_bytes, Some(65536));
        let d = headline("native_executable.c:133: INTERNAL; CUDA driver error: Requested shared memory size of 819200 larger than allowed size of 166912; while invoking native function hal.executable.create").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(819200));
        assert_eq!(d.msg.capacity_bytes, Some(166912));
    }

    #[test]
    fn reads_scoped_memory_failures() {
        let d = headline("RESOURCE_EXHAUSTED: Scoped allocation with size 31.07M and limit 16.00M exceeded scoped vmem limit by 15.07M. It should not be possible to run out of scoped vmem").unwrap();
        let m = d.msg;
        assert_eq!(m.memory_space.as_deref(), Some("vmem"));
        assert_eq!(m.capacity_bytes, Some(16 << 20));
        assert!(m.requested_bytes.is_some() && m.exceeded_by_bytes.is_some());
        let d = headline("out of resource: shared memory, Required: 65536, Hardware limit: 49152. Reducing block sizes or `num_stages` may help.").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(65536), Some(49152))
        );
        let d = headline("out of resource: shared memoryRequired: 110592Hardware limit: 101376")
            .unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(110_592), Some(101_376))
        );
        let d = headline("[GCA035]  Instruction: I-21-0 with opcode: TensorTensor couldn't be allocated in SB Memory Location Accessed: res.48_i0: 888 Bytes per Partition and total of: 113664 Bytes in SB Total Accessed Bytes per partition by instruction: 198024 Total SB Partition Size: 196608").unwrap();
        assert_eq!(d.msg.memory_space.as_deref(), Some("sbuf"));
        assert_eq!(
            (d.msg.per_bank_request_bytes, d.msg.bank_bytes),
            (Some(198_024), Some(196_608))
        );
        let d = headline("RESOURCE_EXHAUSTED: Shared memory size limit exceeded: requested 4194304, available: 101376").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.capacity_bytes),
            (Some(4_194_304), Some(101_376))
        );
    }
}
