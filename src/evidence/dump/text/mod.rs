//! The files of a text dump (XLA's default, without `--xla_dump_hlo_as_proto`), one
//! parser each.

pub mod assignment;
pub mod attrs;
pub mod hlo;
pub mod live_range;
pub mod replay;
pub mod shape;
pub mod usage_report;
