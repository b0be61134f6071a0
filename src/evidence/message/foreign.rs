//! Out-of-memory messages of allocators beside XLA's that JAX users meet in the same
//! environments, read as one-line messages (`kind: short`):
//!
//! - PyTorch's caching allocator on CUDA or ROCm: `CUDA out of memory. Tried to allocate
//!   20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 3.12 MiB free;
//!   …)`, newer `HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total
//!   capacity of 15.24 GiB of which 15.09 GiB is free. …`;
//! - Tenstorrent's DRAM allocator (tt-xla, the PJRT plugin JAX runs on Tenstorrent
//!   devices with): `Out of Memory: Not enough space to allocate N B DRAM buffer across K
//!   banks, where each bank needs to store Y B, but bank size is Z B (allocated: A B,
//!   free: F B, largest free block: L B)`.

use super::fields::{after, count_after, size_after};
use super::model::OomKind;
use super::scan::{set, Draft};
use super::short::leading_u32;

/// Phrases of these messages (the scan's triggers include them).
pub const TRIGGERS: [&str; 2] = [
    "out of memory. Tried to allocate",
    "Not enough space to allocate",
];

/// One of these messages, or `None` when `body` is not one.
pub fn headline(body: &str) -> Option<Draft> {
    if body.contains("out of memory. Tried to allocate") {
        Some(caching_allocator(body))
    } else if body.contains("Not enough space to allocate") && body.contains(" banks") {
        Some(dram_banks(body))
    } else {
        None
    }
}

fn caching_allocator(body: &str) -> Draft {
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.requested_bytes = size_after(body, "Tried to allocate ");
    m.device_ordinal = after(body, "(GPU ")
        .or_else(|| after(body, ". GPU "))
        .and_then(leading_u32);
    // Newer: `GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free.`
    m.capacity_bytes = size_after(body, "total capacity of ");
    m.free_bytes = after(body, "total capacity of ").and_then(|r| size_after(r, "of which "));
    // `Process 1234 has 14.50 GiB memory in use.`, `Including non-PyTorch memory, this
    // process has 7.58 GiB memory in use.`
    m.process_used_bytes = after(body, "Process ")
        .and_then(|r| size_after(r, " has "))
        .or_else(|| size_after(body, "this process has "));
    // `Of the allocated memory 6.50 GiB is allocated by PyTorch, and 95.12 MiB is
    // reserved by PyTorch but unallocated.`
    m.pytorch_allocated_bytes = size_after(body, "Of the allocated memory ");
    m.pytorch_reserved_unallocated_bytes = size_after(body, "is allocated by PyTorch, and ");
    // Older: `(GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 3.12 MiB free;`
    if let Some(fields) = after(body, "(GPU ") {
        for field in fields.split(';').map(str::trim) {
            let figure = || super::units::size_prefix(field, false).map(|s| s.0);
            if field.ends_with("total capacity") {
                set(&mut m.capacity_bytes, figure());
            } else if field.ends_with("already allocated") {
                set(&mut m.used_bytes, figure());
            } else if field.ends_with(" free") {
                set(&mut m.free_bytes, figure());
            }
        }
    }
    draft
}

fn dram_banks(body: &str) -> Draft {
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.requested_bytes = count_after(body, "Not enough space to allocate ");
    let banks = after(body, " across ").and_then(|r| {
        let n = leading_u64(r)?;
        r.get(n.to_string().len()..)?
            .starts_with(" banks")
            .then_some(n)
    });
    let bank =
        count_after(body, "bank size is only ").or_else(|| count_after(body, "bank size is "));
    // The device's DRAM: its banks together, as the message states them.
    m.capacity_bytes = banks.zip(bank).and_then(|(n, b)| n.checked_mul(b));
    m.per_bank_request_bytes = count_after(body, "each bank needs to store ");
    m.bank_bytes = bank;
    m.used_bytes = count_after(body, "(allocated: ");
    m.free_bytes = count_after(body, "free: ");
    m.reservable_bytes = count_after(body, "largest free block: ");
    draft
}

fn leading_u64(text: &str) -> Option<u64> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    text.get(..digits)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pytorchs_caching_allocator() {
        let d = headline("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch").unwrap();
        let m = &d.msg;
        assert_eq!(m.requested_bytes, Some(16 << 30));
        assert_eq!(m.capacity_bytes, Some(16_363_825_398));
        assert_eq!(m.free_bytes, Some(16_202_764_124));
        assert_eq!(m.device_ordinal, Some(0));
        let d = headline("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 3.12 MiB free; 6.60 GiB reserved in total by PyTorch)").unwrap();
        let m = &d.msg;
        assert_eq!(m.requested_bytes, Some(20 << 20));
        assert_eq!(m.used_bytes, Some(6_979_321_856));
        assert_eq!(m.free_bytes, Some(3_271_557));
        assert_eq!(m.capacity_bytes, Some(8_364_448_809));
    }

    #[test]
    fn reads_dram_banks() {
        let d = headline("TT_FATAL: Out of Memory: Not enough space to allocate 44493176832 B DRAM buffer across 8 banks, where each bank needs to store 5561647104 B, but bank size is 4273390016 B (allocated: 2263928320 B, free: 2009461696 B, largest free block: 2002774720 B)").unwrap();
        let m = &d.msg;
        assert_eq!(m.requested_bytes, Some(44_493_176_832));
        assert_eq!(m.capacity_bytes, Some(8 * 4_273_390_016));
        assert_eq!(m.used_bytes, Some(2_263_928_320));
        assert_eq!(m.free_bytes, Some(2_009_461_696));
        assert_eq!(m.reservable_bytes, Some(2_002_774_720));
        assert!(headline("an unrelated line").is_none());
    }
}
