//! Builds `XSpace` captures with the crate's prost types, emitting the event names,
//! stat names and value types XLA's profiler emits. Every name below is one that
//! docs/xplane.md and docs/runtime-events.md describe, with the XLA source files they
//! were read from.
//!
//! Conventions kept from the real writer (`xla/tsl/profiler/utils/xplane_builder.cc`;
//! docs/xplane.md#interning-is-per-plane, #stat-values, #event-time):
//! - stat metadata ids are interned per plane, from 1;
//! - a non-numeric TraceMe argument becomes a `ref_value` naming a stat metadata
//!   entry whose *name* is the string (e.g. `allocator_name` → entry `GPU_0_bfc`);
//! - whole-valued numbers arrive as `int64_value`, fractional ones as `double_value`;
//! - an event's time is `line.timestamp_ns × 1000 + offset_ps`; events of a line are
//!   saved in time order, an enclosing event before the events it encloses.

use std::collections::HashMap;

use oomlens::proto::xplane::{
    x_event, x_stat, XEvent, XEventMetadata, XLine, XPlane, XSpace, XStat, XStatMetadata,
};
use prost::Message;

/// A stat value with the wire type XLA would use for it.
#[derive(Debug, Clone)]
pub enum Val {
    I64(i64),
    U64(u64),
    F64(f64),
    /// An inline `str_value` (TF-era captures; TraceMe's own strings are refs).
    Str(String),
    /// An interned string: `ref_value` → stat metadata named by the string.
    Ref(String),
    Bytes(Vec<u8>),
}

pub fn r(s: &str) -> Val {
    Val::Ref(s.to_owned())
}

/// Picoseconds per unit, for readable timelines.
pub const NS: i64 = 1_000;
pub const US: i64 = 1_000_000;
pub const MS: i64 = 1_000_000_000;
pub const S: i64 = 1_000_000_000_000;

pub struct PlaneBuilder {
    plane: XPlane,
    stat_ids: HashMap<String, i64>,
    event_ids: HashMap<String, i64>,
    next_event_id: i64,
    lines: Vec<(XLine, Vec<(i64, XEvent)>)>,
}

impl PlaneBuilder {
    pub fn new(id: i64, name: &str) -> Self {
        Self {
            plane: XPlane {
                id,
                name: name.to_owned(),
                ..Default::default()
            },
            stat_ids: HashMap::new(),
            event_ids: HashMap::new(),
            next_event_id: 1,
            lines: Vec::new(),
        }
    }

    /// The stat metadata id of `name` (a stat name or an interned string value).
    pub fn stat_id(&mut self, name: &str) -> i64 {
        if let Some(&id) = self.stat_ids.get(name) {
            return id;
        }
        let id = self.stat_ids.len() as i64 + 1;
        self.stat_ids.insert(name.to_owned(), id);
        self.plane.stat_metadata.insert(
            id,
            XStatMetadata {
                id,
                name: name.to_owned(),
                description: String::new(),
            },
        );
        id
    }

    pub fn stat(&mut self, name: &str, value: &Val) -> XStat {
        let metadata_id = self.stat_id(name);
        let value = match value {
            Val::I64(v) => x_stat::Value::Int64Value(*v),
            Val::U64(v) => x_stat::Value::Uint64Value(*v),
            Val::F64(v) => x_stat::Value::DoubleValue(*v),
            Val::Str(s) => x_stat::Value::StrValue(s.clone()),
            Val::Bytes(b) => x_stat::Value::BytesValue(b.clone()),
            Val::Ref(s) => x_stat::Value::RefValue(self.stat_id(s) as u64),
        };
        XStat {
            metadata_id,
            value: Some(value),
        }
    }

    fn stats(&mut self, stats: &[(&str, Val)]) -> Vec<XStat> {
        stats.iter().map(|(n, v)| self.stat(n, v)).collect()
    }

    /// The event metadata id for an event name (one XEventMetadata per name).
    pub fn event_id(&mut self, name: &str) -> i64 {
        if let Some(&id) = self.event_ids.get(name) {
            return id;
        }
        let id = self.next_event_id;
        self.next_event_id += 1;
        self.event_ids.insert(name.to_owned(), id);
        self.plane.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: name.to_owned(),
                ..Default::default()
            },
        );
        id
    }

    /// Stats shared by every event of a type (`XEventMetadata.stats`).
    pub fn event_metadata_stats(&mut self, name: &str, stats: &[(&str, Val)]) {
        let id = self.event_id(name);
        let stats = self.stats(stats);
        if let Some(m) = self.plane.event_metadata.get_mut(&id) {
            m.stats.extend(stats);
        }
    }

    /// An event metadata entry with an explicit id (the `/host:metadata` plane keys
    /// modules by program id; TPU fingerprints exceed 2^63 and wrap to negative).
    pub fn metadata_entry(
        &mut self,
        id: i64,
        name: &str,
        display_name: &str,
        stats: &[(&str, Val)],
    ) {
        let stats = self.stats(stats);
        self.plane.event_metadata.insert(
            id,
            XEventMetadata {
                id,
                name: name.to_owned(),
                display_name: display_name.to_owned(),
                stats,
                ..Default::default()
            },
        );
    }

    pub fn plane_stat(&mut self, name: &str, value: Val) {
        let s = self.stat(name, &value);
        self.plane.stats.push(s);
    }

    /// Adds a line; returns its handle.
    pub fn line(&mut self, id: i64, name: &str, timestamp_ns: i64) -> usize {
        self.lines.push((
            XLine {
                id,
                display_id: id,
                name: name.to_owned(),
                timestamp_ns,
                ..Default::default()
            },
            Vec::new(),
        ));
        self.lines.len() - 1
    }

    /// An event at `start_ps` (capture clock) lasting `duration_ps` (0 = instant).
    pub fn event(
        &mut self,
        line: usize,
        name: &str,
        start_ps: i64,
        duration_ps: i64,
        stats: &[(&str, Val)],
    ) {
        let metadata_id = self.event_id(name);
        let stats = self.stats(stats);
        let base = self.lines[line].0.timestamp_ns * 1000;
        let event = XEvent {
            metadata_id,
            duration_ps,
            stats,
            data: Some(x_event::Data::OffsetPs(start_ps - base)),
        };
        let seq = self.lines[line].1.len() as i64;
        self.lines[line].1.push((seq, event));
    }

    pub fn build(mut self) -> XPlane {
        for (mut line, mut events) in std::mem::take(&mut self.lines) {
            // Time order; an enclosing event before what it encloses; else insertion order.
            events.sort_by_key(|(seq, e)| {
                let offset = match e.data {
                    Some(x_event::Data::OffsetPs(o)) => o,
                    _ => 0,
                };
                (offset, std::cmp::Reverse(e.duration_ps), *seq)
            });
            let end = events
                .iter()
                .map(|(_, e)| match e.data {
                    Some(x_event::Data::OffsetPs(o)) => o + e.duration_ps,
                    _ => 0,
                })
                .max()
                .unwrap_or(0);
            line.duration_ps = end;
            line.events = events.into_iter().map(|(_, e)| e).collect();
            self.plane.lines.push(line);
        }
        // Saved files sort lines by name (post_process_single_host_xplane.cc;
        // docs/runtime-events.md#planes).
        self.plane.lines.sort_by(|a, b| a.name.cmp(&b.name));
        self.plane
    }
}

pub fn space(planes: Vec<XPlane>, hostname: &str) -> Vec<u8> {
    XSpace {
        planes,
        hostnames: vec![hostname.to_owned()],
        ..Default::default()
    }
    .encode_to_vec()
}

/// XLA's BFC allocator as its `MemoryAllocation` / `MemoryDeallocation` events show it
/// (`xla/tsl/framework/bfc_allocator.cc`, docs/runtime-events.md#allocator-events): sizes
/// rounded up to 256 bytes, `bytes_available` = limit − reserved − in use,
/// `peak_bytes_in_use` over the allocator's lifetime.
#[derive(Debug, Clone)]
pub struct Bfc {
    /// The memory id: `allocator_name` (GPU, a ref) or `index_on_host` (TPU).
    pub id: AllocatorId,
    pub limit: u64,
    /// `bytes_reserved`: the runtime's own reservation (XProf's "stack"; TPU programs).
    pub reserved: u64,
    pub in_use: u64,
    pub peak: u64,
    next_addr: u64,
    /// addr → (allocation bytes, requested bytes)
    pub live: HashMap<u64, (u64, u64)>,
}

#[derive(Debug, Clone)]
pub enum AllocatorId {
    Name(String),
    IndexOnHost(i64),
}

#[derive(Debug, Clone, Copy)]
pub struct Allocated {
    pub addr: u64,
    pub bytes: u64,
}

impl Bfc {
    pub fn gpu(ordinal: u32, limit: u64) -> Self {
        Self::new(AllocatorId::Name(format!("GPU_{ordinal}_bfc")), limit)
    }

    pub fn new(id: AllocatorId, limit: u64) -> Self {
        Self {
            id,
            limit,
            reserved: 0,
            in_use: 0,
            peak: 0,
            next_addr: 0x7f00_0000_0000,
            live: HashMap::new(),
        }
    }

    /// BFC's `RoundedBytes`: a multiple of 256 (`kMinAllocationSize`).
    pub fn rounded(bytes: u64) -> u64 {
        bytes.max(1).div_ceil(256) * 256
    }

    /// Memory held before the capture started: no events, but counted in use.
    pub fn preexisting(&mut self, bytes: u64) -> u64 {
        let rounded = Self::rounded(bytes);
        let addr = self.next_addr;
        self.next_addr += rounded;
        self.in_use += rounded;
        self.peak = self.peak.max(self.in_use);
        self.live.insert(addr, (rounded, bytes));
        addr
    }

    pub fn fits(&self, requested: u64) -> bool {
        self.reserved + self.in_use + Self::rounded(requested) <= self.limit
    }

    fn fragmentation(&self) -> f64 {
        // Some value in [0, 1]; whole values are written as int64 (see stats()).
        if self.in_use == 0 {
            0.0
        } else {
            0.125
        }
    }

    /// The stats of one event, in the order `bfc_allocator.cc` records them. GPU
    /// events carry `allocator_name` as a ref; TPU (libtpu, observed) carries
    /// `index_on_host` and no `allocator_name`; TPU deallocations lack
    /// `requested_bytes` and `allocation_bytes` (docs/runtime-events.md#allocator-events).
    fn stats(&self, requested: u64, bytes: u64, addr: u64, allocation: bool) -> Vec<(&str, Val)> {
        let mut stats: Vec<(&str, Val)> = Vec::new();
        let tpu = matches!(self.id, AllocatorId::IndexOnHost(_));
        match &self.id {
            AllocatorId::Name(n) => stats.push(("allocator_name", Val::Ref(n.clone()))),
            AllocatorId::IndexOnHost(i) => stats.push(("index_on_host", Val::I64(*i))),
        }
        let fragmentation = self.fragmentation();
        stats.extend([
            ("bytes_reserved", Val::I64(self.reserved as i64)),
            ("bytes_allocated", Val::I64(self.in_use as i64)),
            (
                "bytes_available",
                Val::I64(self.limit.saturating_sub(self.reserved + self.in_use) as i64),
            ),
            (
                "fragmentation",
                if fragmentation == 0.0 {
                    Val::I64(0)
                } else {
                    Val::F64(fragmentation)
                },
            ),
            ("peak_bytes_in_use", Val::I64(self.peak as i64)),
        ]);
        if allocation || !tpu {
            stats.push(("requested_bytes", Val::I64(requested as i64)));
            stats.push(("allocation_bytes", Val::I64(bytes as i64)));
        }
        stats.push(("addr", Val::I64(addr as i64)));
        if allocation || !tpu {
            stats.push(("id", Val::I64(0)));
            stats.push(("data_type", Val::I64(0)));
        }
        stats
    }

    /// Allocates and records `MemoryAllocation` on `line` at `t`. Panics when the
    /// request does not fit: scenarios model a failed request with [`Bfc::fits`].
    pub fn alloc(
        &mut self,
        plane: &mut PlaneBuilder,
        line: usize,
        t: i64,
        requested: u64,
    ) -> Allocated {
        let bytes = Self::rounded(requested);
        assert!(
            self.reserved + self.in_use + bytes <= self.limit,
            "scenario bug: {requested} bytes do not fit ({} in use of {})",
            self.in_use,
            self.limit
        );
        let addr = self.next_addr;
        self.next_addr += bytes;
        self.in_use += bytes;
        self.peak = self.peak.max(self.in_use);
        self.live.insert(addr, (bytes, requested));
        let stats = self.stats(requested, bytes, addr, true);
        plane.event(line, "MemoryAllocation", t, 0, &stats);
        Allocated { addr, bytes }
    }

    /// Frees and records `MemoryDeallocation` (its stats show the state after the free).
    pub fn free(&mut self, plane: &mut PlaneBuilder, line: usize, t: i64, addr: u64) {
        let (bytes, requested) = self.live.remove(&addr).expect("freeing a live buffer");
        self.in_use -= bytes;
        let stats = self.stats(requested, bytes, addr, false);
        plane.event(line, "MemoryDeallocation", t, 0, &stats);
    }

    /// Frees memory without an event (e.g. freed after the capture stopped is never
    /// recorded; used only to keep the model's books).
    pub fn forget(&mut self, addr: u64) {
        if let Some((bytes, _)) = self.live.remove(&addr) {
            self.in_use -= bytes;
        }
    }
}
