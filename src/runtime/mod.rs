//! Runtime analysis: the allocator timeline, every launch of every module, and — for
//! the selected module — bytes in use at each launch, growth across launches, what is
//! live at the last launch and who allocated it, and what the host did in between.

pub mod coverage;
mod device;
mod host;
mod launches;
mod live;
mod merge;
pub mod names;
mod parallel;
mod parts;
mod records;
pub mod scan;
mod stats;
mod summary;
mod window;

pub use launches::{
    dropped_launch_labels, execution_label, execution_labels, unfinished_call, LaunchModule,
    ModuleKey,
};
pub use parallel::{scan_host_share, split_from, SharePart, PARALLEL_FROM_BYTES};
pub use parts::{
    decode_host_part, decode_host_work, encode_host_part, encode_host_work, host_split,
    merge_host_parts, plane_split, scan_host_lines, HostSplit,
};
pub use scan::{device_share_from, scan_devices, scan_host, scan_host_sharing};
pub(crate) use summary::execution_ordinals;
pub use summary::{in_use_at_launch, pool_capacity, summarize, xprof_capacity_note, SelectedPlan};

pub const HOST_PLANE: &str = "/host:CPU";
/// Device planes: `/device:GPU:0`, `/device:TPU:3`, …
pub const DEVICE_PLANE_PREFIX: &str = "/device:";
