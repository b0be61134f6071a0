//! Allocator events on the host plane (`MemoryAllocation`, `MemoryDeallocation`): their
//! stats decoded in one pass through the plane's dense table, their allocator found
//! (by name, by interned name, or on TPU by device index), the allocator's counts and
//! peak streamed over every event, and the event kept in the capped history.

// Fx hashing: these maps are keyed by small integers and looked up per event.
use rustc_hash::FxHashMap as HashMap;

use super::records::{AllocationRecord, AllocatorState, Origin, RuntimeScan};
use super::stats::{MemoryStat, StatIds};
use crate::capture::{Event, Plane, StatRef};

/// What an allocator event's stats say (0 for what it leaves out).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct MemoryStats<'a> {
    /// `bytes_reserved`: the runtime's own reservation (XProf's "stack"; large on TPU).
    reserved: u64,
    /// `bytes_allocated`: in use after the event.
    allocated: u64,
    /// `bytes_available`: free in the pool.
    available: u64,
    /// `peak_bytes_in_use`: the allocator's own lifetime peak.
    peak_lifetime: u64,
    fragmentation: f64,
    addr: u64,
    /// `allocation_bytes` (the chunk).
    size: u64,
    requested: u64,
    /// `allocator_name`, a string or an interned reference.
    allocator: Option<StatRef<'a>>,
    /// `index_on_host` or `device_ordinal`: the allocator of a TPU.
    device: Option<u64>,
}

impl<'a> MemoryStats<'a> {
    /// Decodes an allocator event's stats, one table lookup each. Each stat's value
    /// goes to its role's slot (the last of a repeated stat wins), and the slots are
    /// read once at the end: a branch on the role per stat, which the order of stats
    /// makes hard to predict, cost more than the decoding.
    #[inline]
    pub(super) fn read(event: &Event<'a>, ids: &StatIds, table: &[MemoryStat]) -> Self {
        let mut slots: [Option<StatRef<'a>>; MemoryStat::COUNT] = [None; MemoryStat::COUNT];
        event.for_each_stat(|id, v| {
            if let Some(slot) = slots.get_mut(ids.memory_stat(table, id) as usize) {
                *slot = Some(v);
            }
        });
        let value = |what: MemoryStat| slots.get(what as usize).copied().flatten();
        let number = |what: MemoryStat| value(what).and_then(|v| v.as_u64()).unwrap_or(0);
        MemoryStats {
            reserved: number(MemoryStat::BytesReserved),
            allocated: number(MemoryStat::BytesAllocated),
            available: number(MemoryStat::BytesAvailable),
            peak_lifetime: number(MemoryStat::PeakBytesInUse),
            fragmentation: value(MemoryStat::Fragmentation)
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0),
            addr: number(MemoryStat::Addr),
            size: number(MemoryStat::AllocationBytes),
            requested: number(MemoryStat::RequestedBytes),
            allocator: value(MemoryStat::AllocatorName),
            device: value(MemoryStat::Device).and_then(|v| v.as_u64()),
        }
    }
}

/// The host visitor's allocators, found once per name, interned name or device.
#[derive(Debug, Default)]
pub(super) struct Allocators {
    /// The allocator the last interned name was found for: events of one allocator
    /// come in runs.
    last_ref: Option<(u64, u16)>,
    /// The allocator the last device index was found for (TPU: one device's events
    /// come in runs too).
    last_device: Option<(u64, u16)>,
    by_ref: HashMap<u64, u16>,
    /// By the bytes of a name given inline (TensorFlow's events), so that the name is
    /// not decoded again for each event.
    by_bytes: HashMap<Box<[u8]>, u16>,
    by_name: HashMap<String, u16>,
    by_index: HashMap<u64, u16>,
}

impl Allocators {
    /// The allocator an event's stats name (added to `scan` when new).
    #[inline]
    pub(super) fn of(
        &mut self,
        scan: &mut RuntimeScan,
        plane: &Plane,
        stats: &MemoryStats<'_>,
    ) -> u16 {
        let named = stats.allocator.and_then(|v| match v {
            StatRef::Ref(r) => Some(match self.last_ref {
                Some((last, i)) if last == r => i,
                _ => {
                    let i = self.of_ref(scan, plane, r);
                    self.last_ref = Some((r, i));
                    i
                }
            }),
            StatRef::Str(s) => Some(match self.by_bytes.get(s) {
                Some(&i) => i,
                None => {
                    let i = self.named(scan, &String::from_utf8_lossy(s));
                    self.by_bytes.insert(s.into(), i);
                    i
                }
            }),
            _ => None,
        });
        named.unwrap_or_else(|| self.of_device(scan, stats.device))
    }

    /// The allocator an interned name names.
    fn of_ref(&mut self, scan: &mut RuntimeScan, plane: &Plane, r: u64) -> u16 {
        if let Some(&i) = self.by_ref.get(&r) {
            return i;
        }
        let name = plane.stat_name(r).unwrap_or("?").to_owned();
        let i = self.named(scan, &name);
        self.by_ref.insert(r, i);
        i
    }

    /// TPU: the allocator is the device's, found by `index_on_host` (or TF's
    /// `device_ordinal`) and named as the device is (`TPU:0`); XProf's memory id is the
    /// bare number (see `docs/runtime-events.md`).
    fn of_device(&mut self, scan: &mut RuntimeScan, device: Option<u64>) -> u16 {
        let key = device.unwrap_or(u64::MAX);
        if let Some((last, i)) = self.last_device {
            if last == key {
                return i;
            }
        }
        if let Some(&i) = self.by_index.get(&key) {
            self.last_device = Some((key, i));
            return i;
        }
        let name = match device {
            Some(d) => format!("TPU:{d}"),
            None => "TPU:?".to_owned(),
        };
        let i = self.named(scan, &name);
        self.by_index.insert(key, i);
        self.last_device = Some((key, i));
        i
    }

    /// The allocator named `name`; past `u16::MAX` allocators, the last one.
    fn named(&mut self, scan: &mut RuntimeScan, name: &str) -> u16 {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = scan.allocators.len().min(u16::MAX as usize) as u16;
        if (i as usize) == scan.allocators.len() {
            scan.allocators.push(AllocatorState {
                name: name.to_owned(),
                ..Default::default()
            });
        }
        self.by_name.insert(name.to_owned(), i);
        i
    }
}

impl AllocatorState {
    /// Counts an event of this allocator, in use `in_use` after it at `time`, and
    /// keeps the peak.
    #[inline]
    fn count(&mut self, is_allocation: bool, in_use: u64, time: i64, stats: &MemoryStats<'_>) {
        if is_allocation {
            self.allocations += 1;
        } else {
            self.deallocations += 1;
        }
        self.lifetime_peak = stats.peak_lifetime;
        // XProf's rule: `>=`, so a later tie wins.
        if in_use >= self.peak_in_use {
            self.peak_in_use = in_use;
            self.peak_time_ps = time;
            self.capacity = in_use.saturating_add(stats.available);
            self.fragmentation_at_peak = stats.fragmentation;
        }
    }
}

impl RuntimeScan {
    /// An allocator event of `allocator` at `time`, made inside `origin` (its field at
    /// `event_at` in the file): counted, and kept in the history unless older than the
    /// history kept.
    #[inline]
    pub(super) fn allocator_event(
        &mut self,
        allocator: u16,
        stats: &MemoryStats<'_>,
        is_allocation: bool,
        time: i64,
        origin: Origin,
        event_at: u64,
    ) {
        let in_use = stats.reserved.saturating_add(stats.allocated);
        if let Some(state) = self.allocators.get_mut(allocator as usize) {
            state.count(is_allocation, in_use, time, stats);
        }
        self.keep_record(AllocationRecord {
            time_ps: time,
            in_use,
            reserved: stats.reserved,
            addr: stats.addr,
            // The chunk, else what was asked for.
            size: if stats.size == 0 {
                stats.requested
            } else {
                stats.size
            },
            requested: stats.requested,
            allocator,
            is_allocation,
            origin,
            event_at,
        });
    }
}
