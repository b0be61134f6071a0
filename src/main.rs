//! The `oomlens` command: analyze a capture and print the report. The command line
//! itself is [`oomlens::cli`], which the Python package's `oomlens` script runs too.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(oomlens::cli::run(std::env::args_os()))
}
