//! Synthetic captures for the scenario tests: an XSpace builder that writes what XLA's
//! profiler writes, an HloProto builder, a one-GPU JAX program simulator, and the
//! scenarios of docs/diagnosis.md#the-scenarios-the-tests-build built with them.
#![allow(dead_code)]

pub mod capture_builder;
pub mod gpu_sim;
pub mod hlo_builder;
pub mod launch_layouts;
pub mod other_backends;
pub mod scenarios;
