//! The `oomlens` command: analyze a capture and print the report.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use oomlens::report::{diff_json, diff_markdown, diff_text, json, markdown, text};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Markdown,
    Json,
}

/// Explains why a JAX/XLA program ran out of accelerator memory, from whatever you
/// have: a profiler capture (*.xplane.pb written by jax.profiler.trace), the error
/// message or the whole log around it, an XLA dump (XLA_FLAGS=--xla_dump_to=DIR),
/// device memory profiles (jax.profiler.save_device_memory_profile) — alone or together.
#[derive(Debug, Parser)]
#[command(
    name = "oomlens",
    version,
    about,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    report: ReportArgs,
}

/// `oomlens PATH…`: the report on one run (or on the evidence given).
#[derive(Debug, Args)]
struct ReportArgs {
    /// What you have, joined into one report: a .xplane.pb file or a capture directory
    /// (the log dir, plugins/profile, or a run folder); a log or error message (any text
    /// file); an XLA dump folder, the folder above it, or its module_NNNN.… files; device
    /// memory profiles (*.prof, in the order given); or a folder holding several of them.
    /// Optional with --error-text.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Report on this module (a label like jit_step(12), or a name like jit_step).
    #[arg(long)]
    module: Option<String>,
    /// How many live buffers to list.
    #[arg(long, default_value_t = oomlens::report::present::limits::LIVE_BUFFERS)]
    top: usize,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Also write the JSON report to FILE; with -, standard output gets the JSON alone.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The out-of-memory error text you got (the whole log is fine), from FILE (or - for
    /// standard input); alone, or with the other inputs.
    #[arg(long, value_name = "FILE")]
    error_text: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compares two runs (before and after a fix): the change of the peak, whether it
    /// now fits, the buffers that grew, shrank, appeared or went away, the diagnosis
    /// lines resolved, and each resolved line's estimated saving beside the measured one.
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
struct DiffArgs {
    /// The run before the change: what `oomlens PATH` reads (a .xplane.pb file or a capture directory).
    before: PathBuf,
    /// The run after the change.
    after: PathBuf,
    /// Compare this module (a name like jit_step, or a label like jit_step(12): the
    /// other run's module of that name is taken, as program ids change between runs).
    #[arg(long)]
    module: Option<String>,
    /// How many changed buffers to list.
    #[arg(long, default_value_t = oomlens::report::present::limits::LIVE_BUFFERS)]
    top: usize,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

/// Prints `oomlens: <message>` as exactly one line (names from the file, such as
/// module names, are escaped so that they cannot break it) and exits with status 2.
fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!(
        "oomlens: {}",
        oomlens::report::clean(&message.to_string(), 4000)
    );
    ExitCode::from(2)
}

/// Two threads where they pay (the library's default), unless `OOMLENS_THREADS=1` keeps
/// the scan on one thread, for comparisons and benchmarks. The report is the same.
fn scan_strategy() -> oomlens::runtime::Scan {
    match std::env::var("OOMLENS_THREADS") {
        Ok(v) if v.trim() == "1" => oomlens::runtime::Scan::OneThread,
        _ => oomlens::runtime::Scan::default(),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Diff(args)) => diff(args),
        None => report(cli.report),
    }
}

/// `oomlens diff BEFORE AFTER`.
fn diff(args: DiffArgs) -> ExitCode {
    let options = oomlens::diff::DiffOptions {
        module: args.module.clone(),
        scan: scan_strategy(),
    };
    let started = std::time::Instant::now();
    let result = oomlens::diff::compare_paths(&args.before, &args.after, &options);
    if std::env::var_os("OOMLENS_TIMING").is_some() {
        eprintln!(
            "oomlens: diff total: {:.3} s",
            started.elapsed().as_secs_f64()
        );
    }
    let diff = match result {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let body = match args.format {
        Format::Text => diff_text::render(&diff, args.top),
        Format::Markdown => diff_markdown::render(&diff, args.top),
        Format::Json => diff_json::render(&diff),
    };
    // A closed pipe (`| head`) is not an error.
    let _ = std::io::stdout().lock().write_all(body.as_bytes());
    ExitCode::SUCCESS
}

/// `oomlens PATH… [--error-text FILE|-]`.
fn report(cli: ReportArgs) -> ExitCode {
    let mut inputs: Vec<oomlens::inputs::Input> =
        cli.paths.iter().map(oomlens::inputs::Input::path).collect();
    if let Some(text) = &cli.error_text {
        inputs.push(oomlens::inputs::Input {
            path: text.clone(),
            text: true,
        });
    }
    // No input at all: one line, as for every unusable input, with the usage in it.
    if inputs.is_empty() {
        return fail(format!(
            "{} (usage: oomlens <PATH>... [--error-text FILE|-])",
            oomlens::Error::NoInput
        ));
    }
    let options = oomlens::Options {
        module: cli.module.clone(),
        scan: scan_strategy(),
        ..Default::default()
    };
    // OOMLENS_TIMING=1 prints how long each phase took, for benchmarks.
    let timing = std::env::var_os("OOMLENS_TIMING").is_some();
    let started = std::time::Instant::now();
    let mut last: Option<(String, std::time::Instant)> = None;
    let mut on_phase = |phase: &str, _done: u64, _total: u64| {
        if !timing {
            return;
        }
        let now = std::time::Instant::now();
        if let Some((name, at)) = last.take() {
            eprintln!("oomlens: {name}: {:.3} s", (now - at).as_secs_f64());
        }
        last = Some((phase.to_owned(), now));
    };
    let result = oomlens::analyze_inputs_with_progress(&inputs, &options, &mut on_phase);
    if timing {
        eprintln!("oomlens: total: {:.3} s", started.elapsed().as_secs_f64());
    }
    let report = match result {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    // `--json -` puts the JSON alone on standard output, so that it parses; `--json
    // FILE` writes it there and keeps the chosen format on standard output.
    let json_to_stdout = cli.json.as_ref().is_some_and(|t| t.as_os_str() == "-");
    let body = match cli.format {
        _ if json_to_stdout => json::render(&report),
        Format::Text => text::render(&report, cli.top),
        Format::Markdown => markdown::render(&report, cli.top),
        Format::Json => json::render(&report),
    };
    if let Some(target) = cli.json.as_ref().filter(|_| !json_to_stdout) {
        if let Err(e) = std::fs::write(target, json::render(&report)) {
            return fail(format!(
                "cannot write the JSON report to {}: {e}",
                target.display()
            ));
        }
    }
    // A closed pipe (`| head`) is not an error.
    let _ = std::io::stdout().lock().write_all(body.as_bytes());
    ExitCode::SUCCESS
}
