//! The stats the runtime scan reads, resolved once per plane: stat metadata ids by
//! name ([`StatIds`]), the dense table that decodes an allocator event's stats in one
//! lookup each ([`MemoryStat`]), and small sets of ids told apart in one step
//! ([`StatSet`]), so that a walk over an event's stats decodes only the values asked for.

// Fx hashing: these maps are keyed by small integers and looked up per event.
use rustc_hash::FxHashMap as HashMap;

use super::records::RuntimeScan;
use crate::capture::{Event, Plane, StatRef};

/// Stat metadata ids of the stats we read, resolved once per plane.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct StatIds {
    pub(super) allocator_name: Option<u64>,
    pub(super) bytes_reserved: Option<u64>,
    pub(super) bytes_allocated: Option<u64>,
    pub(super) bytes_available: Option<u64>,
    pub(super) fragmentation: Option<u64>,
    pub(super) peak_bytes_in_use: Option<u64>,
    pub(super) requested_bytes: Option<u64>,
    pub(super) allocation_bytes: Option<u64>,
    pub(super) addr: Option<u64>,
    pub(super) index_on_host: Option<u64>,
    pub(super) device_ordinal: Option<u64>,
    pub(super) run_id: Option<u64>,
    pub(super) producer_id: Option<u64>,
    pub(super) producer_type: Option<u64>,
    pub(super) consumer_id: Option<u64>,
    pub(super) consumer_type: Option<u64>,
    pub(super) module_name: Option<u64>,
    pub(super) hlo_module: Option<u64>,
    pub(super) program_id: Option<u64>,
    pub(super) shape: Option<u64>,
}

/// What a stat of an allocator event is, by stat metadata id: a dense table, so that
/// decoding an allocator event costs one lookup per stat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemoryStat {
    Ignored,
    BytesAllocated,
    BytesReserved,
    BytesAvailable,
    Fragmentation,
    PeakBytesInUse,
    Addr,
    AllocationBytes,
    RequestedBytes,
    AllocatorName,
    Device,
}

impl MemoryStat {
    /// How many kinds there are (a slot each when an event's stats are decoded).
    pub(super) const COUNT: usize = 11;
}

// `Device` is the last kind: every kind has a slot.
const _: () = assert!(MemoryStat::Device as usize + 1 == MemoryStat::COUNT);

/// Stat metadata ids at or above this are looked up by comparison instead.
const DENSE_STAT_IDS: u64 = 1 << 16;

pub(super) fn memory_stat_table(ids: &StatIds) -> Vec<MemoryStat> {
    let mut table = Vec::new();
    for (id, what) in ids.memory_stats() {
        if let Some(i) = id.filter(|&i| i < DENSE_STAT_IDS) {
            let i = i as usize;
            if table.len() <= i {
                table.resize(i + 1, MemoryStat::Ignored);
            }
            // The first name wins, as in the lookup by comparison.
            if table[i] == MemoryStat::Ignored {
                table[i] = what;
            }
        }
    }
    table
}

impl StatIds {
    /// The stats an allocator event carries, by id.
    fn memory_stats(&self) -> [(Option<u64>, MemoryStat); 11] {
        [
            (self.bytes_allocated, MemoryStat::BytesAllocated),
            (self.bytes_reserved, MemoryStat::BytesReserved),
            (self.bytes_available, MemoryStat::BytesAvailable),
            (self.fragmentation, MemoryStat::Fragmentation),
            (self.peak_bytes_in_use, MemoryStat::PeakBytesInUse),
            (self.addr, MemoryStat::Addr),
            (self.allocation_bytes, MemoryStat::AllocationBytes),
            (self.requested_bytes, MemoryStat::RequestedBytes),
            (self.allocator_name, MemoryStat::AllocatorName),
            (self.index_on_host, MemoryStat::Device),
            (self.device_ordinal, MemoryStat::Device),
        ]
    }

    /// What stat `id` is to an allocator event: by the dense table, or (for ids past
    /// it) by comparison.
    #[inline]
    pub(super) fn memory_stat(&self, table: &[MemoryStat], id: u64) -> MemoryStat {
        if id < DENSE_STAT_IDS {
            return table
                .get(id as usize)
                .copied()
                .unwrap_or(MemoryStat::Ignored);
        }
        self.memory_stat_past_table(id)
    }

    /// [`StatIds::memory_stat`] for an id past the table. Out of line: inlined, the
    /// ids it compares with were loaded on every allocator event.
    #[cold]
    #[inline(never)]
    fn memory_stat_past_table(&self, id: u64) -> MemoryStat {
        self.memory_stats()
            .into_iter()
            .find(|(i, _)| *i == Some(id))
            .map_or(MemoryStat::Ignored, |(_, what)| what)
    }

    pub(super) fn resolve(plane: &Plane) -> Self {
        let mut ids = StatIds::default();
        for (&id, name) in &plane.stat_names {
            let slot = match name.as_str() {
                "allocator_name" => &mut ids.allocator_name,
                "bytes_reserved" => &mut ids.bytes_reserved,
                "bytes_allocated" => &mut ids.bytes_allocated,
                "bytes_available" => &mut ids.bytes_available,
                "fragmentation" => &mut ids.fragmentation,
                "peak_bytes_in_use" => &mut ids.peak_bytes_in_use,
                "requested_bytes" => &mut ids.requested_bytes,
                "allocation_bytes" => &mut ids.allocation_bytes,
                "addr" => &mut ids.addr,
                "index_on_host" => &mut ids.index_on_host,
                "device_ordinal" => &mut ids.device_ordinal,
                "run_id" => &mut ids.run_id,
                "_p" => &mut ids.producer_id,
                "_pt" => &mut ids.producer_type,
                "_c" => &mut ids.consumer_id,
                "_ct" => &mut ids.consumer_type,
                "module_name" => &mut ids.module_name,
                "hlo_module" => &mut ids.hlo_module,
                "program_id" => &mut ids.program_id,
                "shape" => &mut ids.shape,
                _ => continue,
            };
            // Interned values can share a name with a stat; the lowest id is the stat
            // in practice, but either works for lookups by id.
            if slot.is_none() {
                *slot = Some(id);
            }
        }
        ids
    }
}

/// A few stat ids, told apart from the rest in one step for ids below 128 (nearly
/// all: encoders number stat metadata from 1), so that a walk over an event's stats
/// decodes only the values asked for.
#[derive(Debug, Clone, Copy)]
pub(super) struct StatSet<const N: usize> {
    /// For each id below 128, one past its place in `ids` (the first, as a search
    /// from the start finds it), 0 for an id not in the set: one load tells both
    /// (a 128-bit mask took a dozen instructions to test).
    place_of_low: [u8; 128],
    ids: [Option<u64>; N],
}

impl<const N: usize> StatSet<N> {
    pub(super) fn new(ids: [Option<u64>; N]) -> Self {
        let mut place_of_low = [0u8; 128];
        for (place, id) in ids.iter().enumerate().rev() {
            if let Some(slot) = id.and_then(|id| place_of_low.get_mut(usize::try_from(id).ok()?)) {
                *slot = u8::try_from(place.saturating_add(1)).unwrap_or(u8::MAX);
            }
        }
        StatSet { place_of_low, ids }
    }

    #[inline(always)]
    pub(super) fn contains(&self, id: u64) -> bool {
        match self.place_of_low.get(id as usize) {
            Some(&one_past) if id < 128 => one_past != 0,
            _ => self.contains_large(id),
        }
    }

    /// [`StatSet::contains`] for ids past 127, out of line: inlined, every id of the
    /// set was loaded on each read.
    #[cold]
    #[inline(never)]
    fn contains_large(&self, id: u64) -> bool {
        self.ids.contains(&Some(id))
    }

    /// Where `id`, one of the set, is in it.
    #[inline(always)]
    fn place(&self, id: u64) -> Option<usize> {
        match self.place_of_low.get(id as usize) {
            Some(&one_past) if id < 128 => usize::from(one_past).checked_sub(1),
            _ => self.place_large(id),
        }
    }

    #[cold]
    #[inline(never)]
    fn place_large(&self, id: u64) -> Option<usize> {
        self.ids.iter().position(|&i| i == Some(id))
    }

    /// The event's value of each stat in the set, in the set's order (the last when
    /// one repeats); the others are not decoded.
    #[inline]
    pub(super) fn read<'a>(&self, event: &Event<'a>) -> [Option<StatRef<'a>>; N] {
        self.read_as(event, Some)
    }

    /// [`StatSet::read`] for a set of numbers: each value as an `i64` (`None` for one
    /// that is not a number), without holding the values themselves.
    #[inline]
    pub(super) fn read_i64(&self, event: &Event<'_>) -> [Option<i64>; N] {
        self.read_as(event, |v| v.as_i64())
    }

    /// Each stat's value in the set as `value_of` gives it (the last when one repeats).
    #[inline(always)]
    fn read_as<'a, T: Copy>(
        &self,
        event: &Event<'a>,
        value_of: impl Fn(StatRef<'a>) -> Option<T>,
    ) -> [Option<T>; N] {
        let mut values = [None; N];
        // Many events the scan reads carry no stats (PjRt's `ExecuteHelper`): the walk
        // over them, out of line, is not called.
        if event.has_no_stats() {
            return values;
        }
        event.for_each_stat_of(
            |id| self.contains(id),
            |id, v| {
                if let Some(value) = self.place(id).and_then(|i| values.get_mut(i)) {
                    *value = value_of(v);
                }
            },
        );
        values
    }
}

impl StatIds {
    /// What names a launch's run id: `run_id`, or a producer or consumer context.
    pub(super) fn run_stats(&self) -> StatSet<5> {
        StatSet::new([
            self.run_id,
            self.producer_id,
            self.producer_type,
            self.consumer_id,
            self.consumer_type,
        ])
    }

    /// What a CPU thunk names.
    pub(super) fn thunk_stats(&self) -> StatSet<3> {
        StatSet::new([self.run_id, self.hlo_module, self.program_id])
    }

    /// What a kernel names.
    pub(super) fn kernel_stats(&self) -> StatSet<2> {
        StatSet::new([self.hlo_module, self.program_id])
    }
}

/// References below this are looked up in a table rather than hashed: references are
/// ids of the plane's stat metadata, numbered from 1.
const DENSE_REFS: usize = 4096;

/// The modules `hlo_module` or `module_name` stats name, interned into one scan's
/// modules: a reference to an interned string resolved once per plane (a GPU's kernels
/// alternate between the modules a step runs, each looked up per kernel), a name given
/// inline (older captures) decoded once per run of events that repeat it.
#[derive(Debug, Default)]
pub(super) struct ModuleStats {
    /// By reference below [`DENSE_REFS`]: one past the module, 0 when not seen yet.
    by_dense_ref: Vec<u32>,
    by_ref: HashMap<u64, u32>,
    last_inline: Option<(Box<[u8]>, u32)>,
}

impl ModuleStats {
    /// The module `value` names, interned into `scan` (a stat of `plane`).
    #[inline]
    pub(super) fn intern(
        &mut self,
        scan: &mut RuntimeScan,
        plane: &Plane,
        value: &StatRef<'_>,
    ) -> Option<u32> {
        match *value {
            StatRef::Ref(r) => {
                let dense = usize::try_from(r).ok().filter(|&i| i < DENSE_REFS);
                let known = match dense {
                    Some(i) => self.by_dense_ref.get(i).and_then(|m| m.checked_sub(1)),
                    None => self.by_ref.get(&r).copied(),
                };
                known.or_else(|| self.learn_ref(scan, plane, r, dense))
            }
            StatRef::Str(s) => match &self.last_inline {
                Some((last, m)) if **last == *s => Some(*m),
                _ => {
                    let m = scan.intern_module(&String::from_utf8_lossy(s));
                    self.last_inline = Some((s.into(), m));
                    Some(m)
                }
            },
            _ => None,
        }
    }

    /// Interns the module reference `r` names (at `dense` in the table, if below
    /// [`DENSE_REFS`]) and keeps it.
    #[cold]
    fn learn_ref(
        &mut self,
        scan: &mut RuntimeScan,
        plane: &Plane,
        r: u64,
        dense: Option<usize>,
    ) -> Option<u32> {
        let m = scan.intern_module(plane.stat_name(r)?);
        match dense {
            Some(i) => {
                if self.by_dense_ref.len() <= i {
                    self.by_dense_ref.resize(i + 1, 0);
                }
                if let Some(slot) = self.by_dense_ref.get_mut(i) {
                    *slot = m.saturating_add(1);
                }
            }
            None => {
                self.by_ref.insert(r, m);
            }
        }
        Some(m)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A set answers what a search of its ids answers, for ids below 128 (by table)
    /// and past it, repeated ids (the first place) and absent ones.
    #[test]
    fn a_stat_set_finds_what_a_search_of_its_ids_finds() {
        let sets = [
            [Some(3), None, Some(127), Some(3), Some(128)],
            [Some(0), Some(1), Some(200), None, Some(70_000)],
            [None, None, None, None, None],
            [
                Some(64),
                Some(63),
                Some(65),
                Some(u64::from(u32::MAX) + 5),
                Some(5),
            ],
        ];
        for ids in sets {
            let set = StatSet::new(ids);
            for id in (0..300).chain([70_000, u64::from(u32::MAX) + 5, u64::MAX]) {
                let searched = ids.iter().position(|&i| i == Some(id));
                assert_eq!(set.contains(id), searched.is_some(), "{ids:?} {id}");
                if searched.is_some() {
                    assert_eq!(set.place(id), searched, "{ids:?} {id}");
                }
            }
        }
    }

    /// Modules named by reference (in the table and past it, asked first and again), by
    /// an unknown reference, and inline are interned as `intern_module` interns their
    /// names, each name once.
    #[test]
    fn module_stats_intern_each_name_once_however_it_is_given() {
        let mut plane = Plane::default();
        let large = DENSE_REFS as u64 + 7;
        plane.stat_names.insert(3, "jit_a".into());
        plane.stat_names.insert(large, "jit_b".into());
        plane.stat_names.insert(9, "jit_a".into());
        let mut scan = RuntimeScan::default();
        let mut modules = ModuleStats::default();
        let given = [
            StatRef::Ref(3),
            StatRef::Ref(large),
            StatRef::Ref(5),
            StatRef::Str(b"jit_c"),
            StatRef::Ref(9),
            StatRef::Str(b"jit_b"),
            StatRef::Uint(3),
        ];
        let names =
            |scan: &RuntimeScan, m: Option<u32>| m.map(|m| scan.module_names[m as usize].clone());
        for _ in 0..2 {
            let found: Vec<Option<String>> = given
                .iter()
                .map(|v| {
                    let m = modules.intern(&mut scan, &plane, v);
                    names(&scan, m)
                })
                .collect();
            let expected = [
                Some("jit_a"),
                Some("jit_b"),
                None,
                Some("jit_c"),
                Some("jit_a"),
                Some("jit_b"),
                None,
            ];
            assert_eq!(found, expected.map(|n| n.map(String::from)));
        }
        assert_eq!(scan.module_names, ["jit_a", "jit_b", "jit_c"]);
    }
}
