//! Evidence read from files other than the profiler capture: what the user can record
//! next to it, each file type in its own module.
//!
//! - [`device_profile`]: a JAX device memory profile (the gzip'd pprof that
//!   `jax.profiler.save_device_memory_profile` writes): which Python lines hold the
//!   live device buffers, and what grew between two profiles.

pub mod device_profile;
