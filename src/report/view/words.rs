//! The words around the view's figures that every renderer writes the same way:
//! section titles and the names of lines. The text report writes them as they are;
//! the HTML report uses them as headings and row names.

/// `oomlens — <file> (<host>, <size>)`, the report's first line.
pub const TOOL: &str = "oomlens";
/// `verdict: …`, before the headline.
pub const VERDICT: &str = "verdict";
/// `module: …`, the module the report is about.
pub const MODULE: &str = "module";
/// `module: none — <reason>`.
pub const NO_MODULE: &str = "none";
/// `executions in the capture: 3 (measured)`.
pub const EXECUTIONS: &str = "executions in the capture";
/// The plan section's title.
pub const PLAN: &str = "Plan (read)";
/// Before the plan's role split: `at the heap peak: forward-kept 89.4% · …`.
pub const AT_HEAP_PEAK: &str = "at the heap peak";
/// Before the plan's figures in host memory (memory space 5).
pub const HOST_MEMORY: &str = "host memory (S(5), not device memory)";
/// Before each scan stack line of the plan.
pub const SCAN_STACK: &str = "scan stack";
/// Before each host callback of the plan.
pub const HOST_CALLBACK: &str = "host callback";
/// Before the plan's note (why the heap replay differs).
pub const NOTE: &str = "note";
/// The runtime section's title.
pub const RUNTIME: &str = "Runtime (measured)";
/// Before the bytes in use at each start of the selected module.
pub const IN_USE_AT_STARTS: &str = "in use at each execution start";
/// Before the growth per execution.
pub const GROWTH: &str = "growth per execution";
/// Before the `AllocatorRetry` waits.
pub const RETRY: &str = "AllocatorRetry";
/// Before the host events between the last two executions.
pub const HOST_EVENTS: &str = "host events between the last two executions";
/// The notes section's title.
pub const NOTES: &str = "Notes";
/// The diagnosis section's title.
pub const DIAGNOSIS: &str = "Diagnosis";
/// Before why a diagnosis line happens.
pub const CAUSE: &str = "cause";
/// Before a diagnosis line's only fix.
pub const FIX: &str = "fix";
/// Before a diagnosis line's fixes, when it has several (ranked: those with a
/// saving first, largest first).
pub const FIXES: &str = "fixes";
/// `saves ~50.0 MiB (estimated)`.
pub const SAVES: &str = "saves";
/// Before a diagnosis line's cost.
pub const COST: &str = "cost";
/// Before a diagnosis line's check.
pub const CHECK: &str = "Check on your side";
