//! Compiled memory plans from an XLA dump directory (`XLA_FLAGS=--xla_dump_to=DIR`).
//! So far: a module's plan rebuilt from its text dump files ([`text`]).
//!
//! Nothing here panics on any input (the lints below); sums saturate.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

pub mod text;
