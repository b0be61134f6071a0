//! Evidence about an out-of-memory failure read from something other than the profiler
//! capture, each kind in its own module:
//!
//! - [`message`]: the error message a user pastes from a log;
//! - [`dump`]: the compiled plans an XLA dump directory holds, read into the same
//!   [`ModuleReport`](crate::report::model::ModuleReport)s a capture gives;
//! - [`device_profile`]: a JAX device memory profile (the gzip'd pprof that
//!   `jax.profiler.save_device_memory_profile` writes): which Python lines hold the
//!   live device buffers, and what grew between two profiles.

pub mod device_profile;
pub mod dump;
pub mod message;
