//! The `oomlens` command: analyze a capture and print the report.

use std::io::{Read, Write};
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

/// Explains why a JAX/XLA program ran out of accelerator memory, from its profiler
/// capture (*.xplane.pb written by jax.profiler.trace).
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

/// `oomlens PATH …`: the report on one run.
#[derive(Debug, Args)]
struct ReportArgs {
    /// A .xplane.pb file, or a capture directory (the log dir, plugins/profile, or a run folder).
    #[arg(required = true)]
    path: Option<PathBuf>,
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
    /// The out-of-memory error text you got, from FILE (or - for standard input).
    #[arg(long, value_name = "FILE")]
    error_text: Option<PathBuf>,
    /// In a folder of several host files: report on this host alone (its file name
    /// without .xplane.pb). Without it, a folder gets the cross-host summary.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// In a folder of several host files: analyze at most N hosts at once (default:
    /// the cores, fewer when memory is short).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
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

/// `oomlens PATH …`.
fn report(cli: ReportArgs) -> ExitCode {
    let Some(path) = cli.path.clone() else {
        return fail("pass a capture file or directory");
    };
    let error_text = match &cli.error_text {
        None => None,
        Some(p) if p.as_os_str() == "-" => {
            let mut s = String::new();
            if let Err(e) = std::io::stdin().take(1 << 20).read_to_string(&mut s) {
                return fail(format!(
                    "cannot read the error text from standard input: {e}"
                ));
            }
            Some(s)
        }
        Some(p) => match std::fs::read(p) {
            Ok(b) => Some(String::from_utf8_lossy(&b[..b.len().min(1 << 20)]).into_owned()),
            Err(e) => {
                return fail(format!(
                    "cannot read the error text from {}: {e}",
                    p.display()
                ))
            }
        },
    };
    let options = oomlens::Options {
        module: cli.module.clone(),
        error_text,
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
    let files = match oomlens::input::resolve(&path) {
        Ok(files) => files,
        Err(e) => return fail(e),
    };
    let files = match &cli.host {
        Some(wanted) => match files.iter().find(|f| &f.host == wanted) {
            Some(f) => vec![f.clone()],
            None => {
                let mut available: Vec<&str> =
                    files.iter().take(20).map(|f| f.host.as_str()).collect();
                if files.len() > 20 {
                    available.push("…");
                }
                return fail(oomlens::Error::UnknownHost {
                    wanted: wanted.clone(),
                    available: available.join(", "),
                });
            }
        },
        None => files,
    };
    if files.len() > 1 {
        return folder(&cli, &files, &options, started, timing);
    }
    let result = oomlens::analyze_file_with_progress(&files[0], &options, &mut on_phase);
    if timing {
        eprintln!("oomlens: total: {:.3} s", started.elapsed().as_secs_f64());
    }
    let report = match result {
        Ok(r) => oomlens::report(vec![r]),
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

/// A folder of several host files: every host analyzed on several threads, each
/// report written out as soon as it is made (the JSON's `hosts[]`, spooled to a
/// temporary folder) and only its summary row kept; standard output gets the
/// cross-host summary (`--host` shows one host's report). A host file that cannot be
/// read is a row with its error; the run still succeeds (exit 0) while any host was
/// read.
fn folder(
    cli: &ReportArgs,
    files: &[oomlens::input::HostFile],
    options: &oomlens::Options,
    started: std::time::Instant,
    timing: bool,
) -> ExitCode {
    let json_dash = cli.json.as_ref().is_some_and(|t| t.as_os_str() == "-");
    let json_to_stdout = json_dash || matches!(cli.format, Format::Json);
    let want_json = json_to_stdout || cli.json.is_some();
    let spool = want_json.then(Spool::new);
    let spool = match spool.transpose() {
        Ok(s) => s,
        Err(e) => {
            return fail(format!(
                "cannot make a temporary folder for the host reports: {e}"
            ))
        }
    };
    let write_error = std::sync::Mutex::new(None::<String>);
    let jobs = oomlens::hosts::jobs_for(files.len(), cli.jobs);
    let rows = oomlens::hosts::analyze_files(files, options, jobs, &|i, analyzed| {
        if let (Some(spool), oomlens::hosts::Analyzed::Report(r)) = (&spool, analyzed) {
            if let Err(e) = spool.put(i, &json::host_fragment(r)) {
                if let Ok(mut w) = write_error.lock() {
                    w.get_or_insert(e.to_string());
                }
            }
        }
    });
    if timing {
        eprintln!(
            "oomlens: {} hosts on {jobs} threads, total: {:.3} s",
            files.len(),
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(e) = write_error.into_inner().ok().flatten() {
        return fail(format!(
            "cannot write a host report to the temporary folder: {e}"
        ));
    }
    if rows
        .iter()
        .all(|r| r.status == oomlens::report::model::HostStatus::Failed)
    {
        let first = rows
            .first()
            .and_then(|r| r.error.clone())
            .unwrap_or_default();
        return fail(oomlens::Error::NoHostReadable {
            hosts: rows.len(),
            first,
        });
    }
    let summary = oomlens::report::model::Report {
        schema: oomlens::report::model::SCHEMA.into(),
        tool: oomlens::tool_name(),
        hosts: Vec::new(),
        hosts_summary: rows,
    };
    let write_json = |out: &mut dyn Write| -> std::io::Result<()> {
        let Some(spool) = &spool else { return Ok(()) };
        let mut kept = (0..files.len()).filter(|&i| spool.has(i));
        json::write_folder(
            &summary,
            &mut |_| kept.next().map(|i| spool.take(i)).transpose(),
            out,
        )
    };
    if let Some(target) = cli.json.as_ref().filter(|_| !json_dash) {
        let written = std::fs::File::create(target).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            write_json(&mut w)?;
            w.flush()
        });
        if let Err(e) = written {
            return fail(format!(
                "cannot write the JSON report to {}: {e}",
                target.display()
            ));
        }
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    // A closed pipe (`| head`) is not an error.
    let _ = if json_to_stdout {
        write_json(&mut out)
    } else {
        let body = match cli.format {
            Format::Markdown => markdown::render_summary(&summary.hosts_summary),
            _ => text::render_summary(&summary.hosts_summary),
        };
        out.write_all(body.as_bytes())
    };
    let _ = out.flush();
    ExitCode::SUCCESS
}

/// A temporary folder holding each host's JSON report until the whole is written;
/// removed when dropped.
struct Spool {
    dir: PathBuf,
}

impl Spool {
    fn new() -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("oomlens-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)?;
        Ok(Spool { dir })
    }

    fn path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("{i:08}.json"))
    }

    fn put(&self, i: usize, text: &str) -> std::io::Result<()> {
        std::fs::write(self.path(i), text)
    }

    fn has(&self, i: usize) -> bool {
        self.path(i).is_file()
    }

    fn take(&self, i: usize) -> std::io::Result<String> {
        std::fs::read_to_string(self.path(i))
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
