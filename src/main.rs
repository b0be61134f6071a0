//! The `oomlens` command: analyze a capture and print the report. The command line
//! itself is [`oomlens::cli`], which the Python package's `oomlens` script runs too.

use std::process::ExitCode;

/// Large scan buffers on huge pages (see the module).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: oomlens::huge_pages::HugePagesForLarge = oomlens::huge_pages::HugePagesForLarge;

fn main() -> ExitCode {
    ExitCode::from(oomlens::cli::run(std::env::args_os()))
}
