//! Runtime analysis: the allocator timeline, every launch of every module, and — for
//! the selected module — bytes in use at each launch, growth across launches, what is
//! live at the last launch and who allocated it, and what the host did in between.

mod allocations;
pub(crate) mod coverage;
mod device;
mod host;
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

pub(crate) use launches::{
    dropped_launch_labels, execution_labels, unfinished_call, LaunchModule, ModuleKey,
};
pub use parallel::{Scan, DEVICE_PARALLEL_FROM_BYTES, PARALLEL_FROM_BYTES};
pub use parts::{HostParts, SecondPart};
pub(crate) use scan::scan_capture;
pub(crate) use summary::{
    execution_ordinals, in_use_at_launch, pool_capacity, summarize, xprof_capacity_note,
    SelectedPlan,
};

pub const HOST_PLANE: &str = "/host:CPU";
/// Device planes: `/device:GPU:0`, `/device:TPU:3`, …
pub const DEVICE_PLANE_PREFIX: &str = "/device:";
