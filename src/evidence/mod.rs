//! Evidence about a program's memory from outside the profiler capture. Today: the
//! compiled plans an XLA dump directory holds ([`dump`]), read into the same
//! [`ModuleReport`](crate::report::model::ModuleReport)s a capture gives.

pub mod dump;
