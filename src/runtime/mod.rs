//! Runtime analysis: the allocator timeline, every launch of every module, and — for
//! the selected module — bytes in use at each launch, growth across launches, what is
//! live at the last launch and who allocated it, and what the host did in between.
//!
//! The pipeline calls it twice. First the scan (`scan_capture`, one entry point, with
//! the threads the [`Scan`] strategy in `Options` allows; or, in the page, the host
//! plane in two [`HostParts`] from two workers, then the rest of the scan): it
//! reads each plane once and keeps compact records, never more than fixed caps. Then
//! the summary of what it kept, for the selected module. By file:
//!
//! - the scan: `scan.rs` (the entry point: host planes, tables confirmed, device
//!   planes), `host.rs` and `allocations.rs` (the host plane's events), `device.rs`
//!   (kernels and TPU module runs), `stats.rs` (the stats read, resolved per plane),
//!   `names.rs` (event types by name);
//! - what it keeps: `records.rs` (the record store and its capped histories),
//!   `launches.rs` (launch events merged into launches, and their labels),
//!   `window.rs` (line marks, and pass two between the last two launches);
//! - two scanners: `parallel.rs` (the strategy; two threads sharing a plane or a run
//!   of planes), `parallel/segments.rs` (a plane cut into segments as the threads
//!   go), `parallel/deferred.rs` (TPU planes shared by line), `parts.rs` (the page's
//!   two workers), `merge.rs` (a part absorbed into another);
//! - the report's runtime section: `summary.rs`, `live.rs` (live arrays by origin),
//!   `bands.rs` (each buffer live during the selected launch), `coverage.rs` (what the
//!   trace does not cover).
//!
//! Which events and stats each XLA version writes is described in
//! `docs/runtime-events.md`.

mod allocations;
mod bands;
pub(crate) mod coverage;
mod device;
mod host;
mod labels;
mod launches;
mod live;
mod merge;
mod names;
mod parallel;
mod parts;
mod records;
pub(crate) mod scan;
mod stats;
mod summary;
mod window;

pub(crate) use labels::LaunchLabels;
pub(crate) use launches::{
    dropped_launch_labels, execution_labels, unfinished_call, LaunchModule, ModuleKey,
};
pub use parallel::{Scan, DEVICE_PARALLEL_FROM_BYTES, PARALLEL_FROM_BYTES};
pub use parts::{HostParts, SecondPart};
pub(crate) use scan::scan_capture;
pub(crate) use summary::{
    in_use_at_launches, pool_capacity, summarize, xprof_capacity_note, SelectedPlan,
};

/// The host plane: allocator events, launches, transfers, the Python tracer's frames.
pub const HOST_PLANE: &str = "/host:CPU";
/// Device planes: `/device:GPU:0`, `/device:TPU:3`, …
pub const DEVICE_PLANE_PREFIX: &str = "/device:";
