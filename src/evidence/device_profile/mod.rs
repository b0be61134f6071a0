//! A JAX device memory profile: the gzip'd pprof that
//! `jax.profiler.save_device_memory_profile(path)` writes, listing every live device
//! buffer and loaded executable with the Python stack that created it.
//!
//! [`read`] sums one profile by device and by the innermost frame of the user's own
//! code ([`frames`] holds the rule); [`growth`] says which frames gained bytes between
//! profiles taken at two points of a run, which is how a leak across steps shows.
//! `docs/device-memory-profiles.md` describes the format as we rely on it.
//!
//! Everything here reads untrusted bytes: nothing may panic, index unchecked or
//! allocate in proportion to a length it has not bounded.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

mod budget;
mod frames;
mod growth;
mod inflate;
mod stacks;
mod tally;

use prost::Message;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::proto::pprof::Profile;

pub use growth::growth;

/// The most pprof bytes read from one profile, after gzip: real device memory profiles
/// are kilobytes to a few megabytes, so more is a gzip bomb or the wrong file.
pub const MAX_PROFILE_BYTES: u64 = 512 << 20;

/// The most memory decoding one profile may take (see `budget.rs`): the pprof bytes
/// alone do not bound it, because small records decode to larger structs.
pub const MAX_DECODED_BYTES: u64 = 1 << 30;

/// The `kind` of a live array's device buffer.
pub const KIND_BUFFER: &str = "buffer";
/// The `kind` of a loaded executable's generated code.
pub const KIND_EXECUTABLE: &str = "executable";
/// The `kind` of a sample without a `kind` label (JAX always writes one).
pub const KIND_UNKNOWN: &str = "unknown";

/// The frame of a sample whose Python stack is empty (JAX records none when Python
/// tracebacks are turned off).
pub const NO_STACK: &str = "(no Python stack)";

/// One device memory profile, summed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceProfile {
    /// The profile's file name, as given to the reader.
    pub file: String,
    /// The device the profile's buffers lie on (its label, e.g. `cpu:0`, `cuda:0`) when
    /// there is one; `"N devices"` when there are several; `"no device buffers"` when
    /// the profile holds no buffer.
    pub device: String,
    /// Bytes of every sample (the profile's `space/bytes` values summed): buffers,
    /// executables and samples of any other kind.
    pub total_bytes: u64,
    /// Bytes of live arrays' device buffers (samples of kind `buffer`).
    pub buffer_bytes: u64,
    /// Number of device buffers (each counted once, however many arrays share it).
    pub buffer_count: u64,
    /// Bytes of loaded executables' generated code (samples of kind `executable`);
    /// JAX reports 0 for each on the CPU backend.
    pub executable_bytes: u64,
    /// Number of loaded executables.
    pub executable_count: u64,
    /// Number of pprof samples: JAX writes one per distinct (Python stack, buffer size,
    /// device), with the number of buffers that share them as its count.
    pub samples: u64,
    /// Stack frames passed over as library code (JAX, jaxlib, NumPy, the standard
    /// library, other installed packages) on the way from each sample's innermost frame
    /// to the frame it is grouped by, summed over samples.
    pub frames_skipped_as_library: u64,
    /// Bytes per device, from the samples' `device` label (JAX labels buffers, not
    /// executables), in device order (`cpu:2` before `cpu:10`).
    pub devices: Vec<DeviceBytes>,
    /// Bytes by the frame that made them and by kind, largest first. The groups'
    /// bytes add up to `total_bytes`.
    pub groups: Vec<ProfileGroup>,
}

/// Bytes on one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceBytes {
    /// The device's label as JAX writes it (`cpu:0`, `cuda:1`, `TPU_0(...)`).
    pub device: String,
    /// Bytes of the buffers on this device.
    pub bytes: u64,
    /// Number of buffers on this device.
    pub count: u64,
}

/// Bytes attributed to one stack frame, of one kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProfileGroup {
    /// `file.py:LINE function`: the innermost frame of the user's own code in the
    /// stacks that made these bytes (see `user_code`), or `(no Python stack)`.
    pub frame: String,
    /// `buffer` (a live array's device buffer), `executable` (a loaded executable's
    /// code), or the label JAX wrote for another kind (`unknown` when none).
    pub kind: String,
    /// Bytes made at this frame and of this kind, still live when the profile was taken.
    pub bytes: u64,
    /// Number of buffers (or executables) behind `bytes`.
    pub count: u64,
    /// Number of devices these buffers lie on (0 for executables).
    pub devices: u64,
    /// True when `frame` is the program's own code; false when every frame of the stack
    /// was library code and `frame` is the innermost frame of an installed package
    /// other than JAX and NumPy, or else the innermost frame.
    pub user_code: bool,
    /// The frame's file with its directories, as Python recorded it.
    pub path: String,
    /// The frame's line number.
    pub line: i64,
    /// The frame's function (`<module>` for top-level code).
    pub function: String,
}

/// How the bytes made at one frame, of one kind, changed from the first profile to the
/// last.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FrameGrowth {
    /// `file.py:LINE function`, as in [`ProfileGroup::frame`].
    pub frame: String,
    /// The kind of the bytes, as in [`ProfileGroup::kind`].
    pub kind: String,
    /// Bytes in the last profile minus bytes in the first: positive when the frame's
    /// bytes grew. Over all frames these add up to the change of `total_bytes`.
    pub bytes: i64,
    /// Buffers (or executables) in the last profile minus those in the first.
    pub count: i64,
    /// Bytes at this frame in the first profile.
    pub first_bytes: u64,
    /// Bytes at this frame in the last profile.
    pub last_bytes: u64,
    /// True when the frame's bytes rose from every profile to the next: what a leak
    /// across steps looks like when the profiles are taken at successive steps.
    pub rose_every_step: bool,
    /// As in [`ProfileGroup::user_code`].
    pub user_code: bool,
    /// The frame's file with its directories.
    pub path: String,
    /// The frame's line number.
    pub line: i64,
    /// The frame's function.
    pub function: String,
}

/// Why a file could not be read as a device memory profile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    #[error("{file}: this is not a device memory profile ({reason}); pass the file written by jax.profiler.save_device_memory_profile")]
    NotADeviceProfile { file: String, reason: String },

    #[error("{file}: the profile is too large to read ({reason}); device memory profiles are far smaller, so this is not one or it is damaged: pass the file written by jax.profiler.save_device_memory_profile")]
    TooLarge { file: String, reason: String },

    #[error("{file}: the profile is truncated (its gzip data ends early); a file cut short by a full disk or an interrupted copy cannot be read: copy it again, or save the profile again")]
    Truncated { file: String },

    #[error("{file}: the profile is corrupt ({what}); save it again with jax.profiler.save_device_memory_profile")]
    Corrupt { file: String, what: String },
}

impl ProfileError {
    /// A stable short name for the error, for JSON consumers and the page.
    pub fn kind(&self) -> &'static str {
        match self {
            ProfileError::NotADeviceProfile { .. } => "not_a_device_profile",
            ProfileError::TooLarge { .. } => "too_large",
            ProfileError::Truncated { .. } => "truncated",
            ProfileError::Corrupt { .. } => "corrupt",
        }
    }
}

/// What went wrong, before the file name is known to the message.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fault {
    NotAProfile(String),
    TooLarge(String),
    Truncated,
    Corrupt(String),
}

impl Fault {
    fn in_file(self, file: &str) -> ProfileError {
        let file = file.to_owned();
        match self {
            Fault::NotAProfile(reason) => ProfileError::NotADeviceProfile { file, reason },
            Fault::TooLarge(reason) => ProfileError::TooLarge { file, reason },
            Fault::Truncated => ProfileError::Truncated { file },
            Fault::Corrupt(what) => ProfileError::Corrupt { file, what },
        }
    }
}

/// Reads one device memory profile (gzip'd, as JAX writes it, or raw pprof) and sums
/// it by device and by frame. `file` names it in the result and in errors.
pub fn read(file: &str, bytes: &[u8]) -> Result<DeviceProfile, ProfileError> {
    let mut profile = summarize(bytes).map_err(|fault| fault.in_file(file))?;
    profile.file = file.to_owned();
    Ok(profile)
}

fn summarize(bytes: &[u8]) -> Result<DeviceProfile, Fault> {
    let pprof = inflate::pprof_bytes(bytes, MAX_PROFILE_BYTES)?;
    let profile = decode(&pprof)?;
    drop(pprof);
    tally::sum(&profile)
}

/// Decodes the pprof message once the memory it will take is known to be bounded.
fn decode(pprof: &[u8]) -> Result<Profile, Fault> {
    let size = budget::decoded_size(pprof)
        .map_err(|e| Fault::NotAProfile(format!("it is not pprof: {}", e.describe())))?;
    if size > MAX_DECODED_BYTES {
        return Err(Fault::TooLarge(format!(
            "decoding it would take more than {} MiB of memory",
            MAX_DECODED_BYTES >> 20
        )));
    }
    Profile::decode(pprof).map_err(|e| Fault::NotAProfile(format!("it is not pprof: {e}")))
}

#[cfg(test)]
mod tests;
