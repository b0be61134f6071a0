//! Out-of-memory messages of allocators beside XLA's that JAX users meet in the same
//! environments, read as one-line messages (`kind: short`):
//!
//! - PyTorch's caching allocator on CUDA or ROCm: `CUDA out of memory. Tried to allocate
//!   20.00 MiB (GPU 0; 7.79 GiB total capacity; 6.50 GiB already allocated; 3.12 MiB free;
//!   …)`, newer `HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total
//!   capacity of 15.24 GiB of which 15.09 GiB is free. …`;
//! - PyTorch on Apple's GPU (`MPS backend out of memory (MPS allocated: …, max allowed:
//!   …). Tried to allocate N on shared pool.`) and its host allocator
//!   (`DefaultCPUAllocator: not enough memory: you tried to allocate N bytes.`);
//! - Tenstorrent's DRAM allocator (tt-xla, the PJRT plugin JAX runs on Tenstorrent
//!   devices with): `Out of Memory: Not enough space to allocate N B DRAM buffer across K
//!   banks, where each bank needs to store Y B, but bank size is Z B (allocated: A B,
//!   free: F B, largest free block: L B)`.

use super::draft::{set, Draft};
use super::fields::{after, count_after, size_after};
use super::model::OomKind;
use super::short::leading_u32;

/// Phrases of these messages (the scan's triggers include them).
pub const TRIGGERS: [&str; 5] = [
    "out of memory. Tried to allocate",
    "Not enough space to allocate",
    MPS,
    CPU_ALLOCATOR,
    DIRECTML,
];

/// Whether a line ends where one of these messages goes on on the next line, as posted
/// (`OutOfMemoryError: CUDA out of memory.` / `Tried to allocate 1.02 GiB. GPU 0 …`,
/// `DefaultCPUAllocator:` / `not enough memory: you tried to allocate N bytes.`).
pub fn goes_on(body: &str) -> bool {
    let body = body.trim_end();
    [
        "CUDA out of memory.",
        "HIP out of memory.",
        "XPU out of memory.",
    ]
    .iter()
    .any(|end| body.ends_with(end))
        || body.ends_with("DefaultCPUAllocator:")
}

/// PyTorch on Apple's GPU: `MPS backend out of memory (MPS allocated: 17.70 GB, other
/// allocations: 405.62 MB, max allowed: 18.13 GB). Tried to allocate 256 bytes on shared
/// pool.`
const MPS: &str = "MPS backend out of memory";
/// PyTorch's host allocator: `DefaultCPUAllocator: not enough memory: you tried to
/// allocate 1073741824 bytes.`
const CPU_ALLOCATOR: &str = "DefaultCPUAllocator: not enough memory";
/// PyTorch on DirectML (AMD and Intel GPUs on Windows): `Could not allocate tensor with
/// 52428800 bytes. There is not enough GPU video memory available!`
const DIRECTML: &str = "not enough GPU video memory available";

/// One of these messages, or `None` when `body` is not one.
pub fn headline(body: &str) -> Option<Draft> {
    if body.contains(MPS) {
        let mut draft = Draft::new(OomKind::Short, true);
        let m = &mut draft.msg;
        m.pytorch_allocated_bytes = size_after(body, "MPS allocated: ");
        m.capacity_bytes = size_after(body, "max allowed: ");
        m.requested_bytes = size_after(body, "Tried to allocate ");
        Some(draft)
    } else if body.contains(CPU_ALLOCATOR) {
        let mut draft = Draft::new(OomKind::Short, true);
        draft.msg.memory_space = Some("host".into());
        draft.msg.requested_bytes = size_after(body, "tried to allocate ");
        Some(draft)
    } else if body.contains(DIRECTML) {
        let mut draft = Draft::new(OomKind::Short, true);
        draft.msg.requested_bytes = size_after(body, "allocate tensor with ");
        Some(draft)
    } else if body.contains("out of memory. Tried to allocate") {
        Some(caching_allocator(body))
    } else if body.contains("Not enough space to allocate") && body.contains(" banks") {
        Some(dram_banks(body))
    } else {
        None
    }
}

/// The `Process N has X memory in use` lines PyTorch prints beside this process's own
/// line, summed: other processes on the device.
fn other_processes(body: &str) -> Option<u64> {
    body.match_indices("Process ")
        .filter_map(|(at, _)| {
            let rest = body.get(at..)?.strip_prefix("Process ")?;
            let pid_end = rest.find(|c: char| !c.is_ascii_digit())?;
            let tail = rest.get(pid_end..)?;
            (pid_end > 0 && tail.starts_with(" has ")).then(|| size_after(tail, " has "))?
        })
        .reduce(u64::saturating_add)
}

fn caching_allocator(body: &str) -> Draft {
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.requested_bytes = size_after(body, "Tried to allocate ");
    m.device_ordinal = after(body, "(GPU ")
        .or_else(|| after(body, ". GPU "))
        .and_then(leading_u32);
    // Newer: `GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free.` Some
    // releases misspelt it `total capacty of`.
    let capacity_clause =
        after(body, "total capacity of ").or_else(|| after(body, "total capacty of "));
    m.capacity_bytes = capacity_clause
        .and_then(|r| super::units::size_exact_prefix(r, false))
        .map(|(bytes, _)| bytes);
    m.free_bytes = capacity_clause.and_then(|r| size_after(r, "of which "));
    // `Including non-PyTorch memory, this process has 7.58 GiB memory in use.`; else
    // `Process 1234 has 14.50 GiB memory in use.`, which PyTorch prints for each process
    // on the device (others too: a 48 MiB one beside this one's 11.53 GiB).
    let this_process = size_after(body, "this process has ");
    m.process_used_bytes =
        this_process.or_else(|| after(body, "Process ").and_then(|r| size_after(r, " has ")));
    // Beside this process's own line, each `Process N has …` line is another process's.
    if this_process.is_some() {
        m.other_processes_bytes = other_processes(body);
    }
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
                // What PyTorch's tensors hold, as the newer `… is allocated by PyTorch`.
                set(&mut m.pytorch_allocated_bytes, figure());
            } else if field.ends_with(" free") {
                set(&mut m.free_bytes, figure());
            } else if field.contains(" reserved in total by PyTorch") {
                set(&mut m.pytorch_reserved_bytes, figure());
            }
        }
    }
    draft
}

fn dram_banks(body: &str) -> Draft {
    let mut draft = Draft::new(OomKind::Short, true);
    let m = &mut draft.msg;
    m.requested_bytes = count_after(body, "Not enough space to allocate ");
    // A core's L1 (its SRAM, where an op's circular buffers and L1-sharded tensors live)
    // rather than the device's DRAM.
    if body.contains(" B L1 buffer") {
        m.memory_space = Some("l1".into());
    }
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
    draft.banks = banks;
    draft.template = template_slots(body);
    // The values may have been joined onto the message's line (it was left open).
    if let Some((last, _)) = body.rmatch_indices("{}").next() {
        let tail: Vec<&str> = body
            .get(last + 2..)
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let slots = draft.template.len();
        let fits = |window: &[&str]| {
            window
                .iter()
                .zip(&draft.template)
                .all(|(value, slot)| *slot == Slot::Other || value.parse::<u64>().is_ok())
        };
        if let Some(start) = (0..tail.len().saturating_sub(slots) + 1)
            .find(|&k| tail.get(k..k + slots).is_some_and(fits))
        {
            for value in tail.iter().skip(start).take(slots) {
                template_value(&mut draft, value);
            }
        }
    }
    draft
}

/// What a `{}` of an unformatted message stands for (tt-metal has thrown its message with
/// the placeholders left in, the values printed one per line after it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Request,
    Banks,
    PerBank,
    BankSize,
    Used,
    Free,
    Largest,
    Other,
}

/// The slots of the `{}` placeholders in `body`, in order, by the words before each.
fn template_slots(body: &str) -> Vec<Slot> {
    const WORDS: [(&str, Slot); 8] = [
        ("allocate ", Slot::Request),
        (" across ", Slot::Banks),
        ("store ", Slot::PerBank),
        ("bank size is only ", Slot::BankSize),
        ("bank size is ", Slot::BankSize),
        ("(allocated: ", Slot::Used),
        ("largest free block: ", Slot::Largest),
        ("free: ", Slot::Free),
    ];
    body.match_indices("{}")
        .take(16)
        .map(|(at, _)| {
            let before = body.get(..at).unwrap_or("");
            WORDS
                .iter()
                .find(|(w, _)| before.ends_with(w))
                .map_or(Slot::Other, |&(_, slot)| slot)
        })
        .collect()
}

/// Takes `body` as the value of the draft's next placeholder, when it is a lone value
/// and one is waiting.
pub fn template_value(draft: &mut Draft, body: &str) -> bool {
    if draft.template.is_empty() || body.contains(char::is_whitespace) {
        return false;
    }
    let slot = draft.template.remove(0);
    let value: Option<u64> = body.parse().ok();
    let m = &mut draft.msg;
    match slot {
        Slot::Request => set(&mut m.requested_bytes, value),
        Slot::Banks => set(&mut draft.banks, value),
        Slot::PerBank => set(&mut m.per_bank_request_bytes, value),
        Slot::BankSize => set(&mut m.bank_bytes, value),
        Slot::Used => set(&mut m.used_bytes, value),
        Slot::Free => set(&mut m.free_bytes, value),
        Slot::Largest => set(&mut m.reservable_bytes, value),
        Slot::Other => {}
    }
    let capacity = draft
        .banks
        .zip(m.bank_bytes)
        .and_then(|(n, b)| n.checked_mul(b));
    set(&mut m.capacity_bytes, capacity);
    true
}

fn leading_u64(text: &str) -> Option<u64> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    text.get(..digits)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pytorchs_mps_and_host_allocators() {
        let d = headline("RuntimeError: MPS backend out of memory (MPS allocated: 17.70 GB, other allocations: 405.62 MB, max allowed: 18.13 GB). Tried to allocate 256 bytes on shared pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(256));
        assert_eq!(d.msg.capacity_bytes, Some(19_466_939_269));
        assert!(d.msg.pytorch_allocated_bytes.is_some());
        let d = headline("RuntimeError: [enforce fail at alloc_cpu.cpp:75] . DefaultCPUAllocator: not enough memory: you tried to allocate 1073741824 bytes.").unwrap();
        assert_eq!(
            (d.msg.requested_bytes, d.msg.memory_space.as_deref()),
            (Some(1 << 30), Some("host"))
        );
    }

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
        assert_eq!(m.pytorch_allocated_bytes, Some(6_979_321_856));
        assert_eq!(m.free_bytes, Some(3_271_557));
        assert_eq!(m.capacity_bytes, Some(8_364_448_809));
        assert_eq!(m.pytorch_reserved_bytes, Some(7_086_696_038));
        let d = headline("HIP out of memory. Tried to allocate 72.00 MiB. GPU 0 has a total capacty of 512.00 MiB of which 1.00 MiB is free.").unwrap();
        assert_eq!(d.msg.capacity_bytes, Some(512 << 20));
        assert_eq!(d.msg.free_bytes, Some(1 << 20));
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
        assert_eq!(m.per_bank_request_bytes, Some(5_561_647_104));
        assert_eq!(m.bank_bytes, Some(4_273_390_016));
        assert!(headline("an unrelated line").is_none());
    }

    #[test]
    fn reads_what_pytorch_and_the_process_hold() {
        let d = headline("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 80.00 MiB. GPU 0 has a total capacity of 15.98 GiB of which 84.00 MiB is free. Of the allocated memory 15.44 GiB is allocated by PyTorch, and 263.50 MiB is reserved by PyTorch but unallocated.").unwrap();
        let m = &d.msg;
        assert_eq!(m.pytorch_allocated_bytes, Some(16_578_573_763));
        assert_eq!(m.pytorch_reserved_unallocated_bytes, Some(276_299_776));
        let d = headline("CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 23.64 GiB of which 5.06 MiB is free. Process 4116 has 23.63 GiB memory in use.").unwrap();
        assert_eq!(d.msg.process_used_bytes, Some(25_372_519_301));
        // Another process's line first: this process's own line says what it holds.
        let d = headline("CUDA out of memory. Tried to allocate 136.00 MiB. GPU 0 has a total capacity of 11.95 GiB of which 163.44 MiB is free. Process 24097 has 48.21 MiB memory in use. Including non-PyTorch memory, this process has 11.53 GiB memory in use.").unwrap();
        assert_eq!(d.msg.process_used_bytes, Some(12_380_243_231));
        assert_eq!(d.msg.other_processes_bytes, Some(50_551_849));
    }

    #[test]
    fn directml_and_lines_that_go_on() {
        let d = headline("ERROR proj.weight Could not allocate tensor with 52428800 bytes. There is not enough GPU video memory available!").unwrap();
        assert_eq!(d.msg.requested_bytes, Some(52_428_800));
        assert!(goes_on("OutOfMemoryError: CUDA out of memory. "));
        assert!(goes_on(
            "ERROR [enforce fail at alloc_cpu.cpp:115] data. DefaultCPUAllocator:"
        ));
        assert!(!goes_on(
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB"
        ));
    }
}
