//! The `oomlens` command line, as a function of its arguments: the `oomlens` binary
//! (`main.rs`) and the Python package's `oomlens` console script both call [`run`], so
//! the two are the same program. Native only.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::{diff_json, diff_markdown, diff_text, html, json, markdown, text};

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Markdown,
    Json,
    /// One self-contained HTML file: inline CSS and SVG charts, no script.
    Html,
}

/// The formats of `oomlens diff` (the comparison has no HTML rendering).
#[derive(Debug, Clone, Copy, ValueEnum)]
enum DiffFormat {
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
    /// (the log dir, plugins/profile, or a run folder of one host or many); a log or
    /// error message (any text file); an XLA dump folder, the folder above it, or its
    /// module_NNNN.… files; device memory profiles (*.prof, in the order given); or a
    /// folder holding several of them. Optional with --error-text.
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Report on this module (a label like jit_step(12), or a name like jit_step).
    #[arg(long)]
    module: Option<String>,
    /// How many live buffers to list.
    #[arg(long, default_value_t = crate::report::present::limits::LIVE_BUFFERS)]
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
    #[arg(long, default_value_t = crate::report::present::limits::LIVE_BUFFERS)]
    top: usize,
    /// Output format on standard output.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
}

/// Prints `oomlens: <message>` as exactly one line (names from the file, such as
/// module names, are escaped so that they cannot break it); the exit status is 2.
fn fail(message: impl std::fmt::Display) -> u8 {
    eprintln!(
        "oomlens: {}",
        crate::report::clean(&message.to_string(), 4000)
    );
    2
}

/// Runs the command line on `args` (the program name first, as `std::env::args_os`
/// gives them): writes the report to standard output, or one line to standard error,
/// and returns the exit status (0; 2 for unusable input or arguments).
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // What `Cli::parse` would do, without ending the process: help and the version
        // go to standard output with status 0, usage errors to standard error with 2.
        Err(e) => {
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    match cli.command {
        Some(Command::Diff(args)) => diff(args),
        None => report(cli.report),
    }
}

/// Writes `body` to standard output; a closed pipe (`| head`) is not an error.
fn print(body: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(body.as_bytes());
    let _ = out.flush();
    0
}

/// Whether `path` is a device memory profile (`jax.profiler.save_device_memory_profile`).
fn is_device_profile(path: &std::path::Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file
        .take(crate::inputs::HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    let name = path.to_string_lossy();
    path.is_file() && crate::inputs::classify(&name, &head) == crate::inputs::Kind::DeviceProfile
}

/// `oomlens diff A.prof B.prof`: two device memory profiles are compared as `oomlens A.prof
/// B.prof` compares them, by what grew from the first to the second.
fn diff_profiles(args: &DiffArgs) -> u8 {
    let inputs = [args.before.clone(), args.after.clone()];
    let options = crate::Options {
        module: args.module.clone(),
        scan: scan_strategy(),
        ..Default::default()
    };
    let mut report = match crate::analyze_inputs(&inputs, &options) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    for host in &mut report.hosts {
        host.notes.insert(
            0,
            crate::report::model::Note {
                id: "profiles_compared".into(),
                text: format!(
                    "{} and {} are device memory profiles: compared by what grew from the first to the second, as `oomlens {} {}` compares them (oomlens diff compares captures and plans)",
                    args.before.display(),
                    args.after.display(),
                    args.before.display(),
                    args.after.display()
                ),
            },
        );
    }
    print(&match args.format {
        DiffFormat::Text => text::render(&report, args.top),
        DiffFormat::Markdown => markdown::render(&report, args.top),
        DiffFormat::Json => json::render(&report),
    })
}

/// `oomlens diff BEFORE AFTER`.
fn diff(args: DiffArgs) -> u8 {
    match (
        is_device_profile(&args.before),
        is_device_profile(&args.after),
    ) {
        (true, true) => return diff_profiles(&args),
        (true, false) | (false, true) => {
            let (profile, other) = if is_device_profile(&args.before) {
                (&args.before, &args.after)
            } else {
                (&args.after, &args.before)
            };
            return fail(format!(
                "{} is a device memory profile and {} is not: oomlens diff compares two captures (or run folders), or two device memory profiles",
                profile.display(),
                other.display()
            ));
        }
        (false, false) => {}
    }
    let options = crate::diff::DiffOptions {
        module: args.module.clone(),
        scan: scan_strategy(),
        ..Default::default()
    };
    let started = std::time::Instant::now();
    let result = crate::diff::compare_paths(&args.before, &args.after, &options);
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
    print(&match args.format {
        DiffFormat::Text => diff_text::render(&diff, args.top),
        DiffFormat::Markdown => diff_markdown::render(&diff, args.top),
        DiffFormat::Json => diff_json::render(&diff),
    })
}

/// `oomlens PATH …`.
fn report(cli: ReportArgs) -> u8 {
    let mut inputs: Vec<crate::inputs::Input> =
        cli.paths.iter().map(crate::inputs::Input::path).collect();
    if let Some(text) = &cli.error_text {
        inputs.push(crate::inputs::Input {
            path: text.clone(),
            text: true,
        });
    }
    // No input at all: one line, as for every unusable input, with the usage in it.
    if inputs.is_empty() {
        return fail(format!(
            "{} (usage: oomlens <PATH>... [--error-text FILE|-])",
            crate::Error::NoInput
        ));
    }
    let options = crate::Options {
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
    // A capture folder of several hosts (or `--host`): the hosts' captures alone,
    // analyzed in parallel with the summary first (docs/hosts.md). Everything else is
    // gathered and joined into one report (docs/inputs.md).
    let host_files = match (cli.paths.as_slice(), &cli.error_text) {
        ([path], None) => crate::input::resolve(path)
            .ok()
            .filter(|files| files.len() > 1 || cli.host.is_some()),
        _ => None,
    };
    let result = match host_files {
        Some(files) => {
            let files = match pick_host(files, cli.host.as_deref()) {
                Ok(files) => files,
                Err(e) => return fail(e),
            };
            if files.len() > 1 {
                return folder(&cli, &files, &options, started, timing);
            }
            crate::analyze_file_with_progress(&files[0], &options, &mut on_phase)
                .map(|r| crate::report(vec![r]))
        }
        None => crate::analyze_inputs_with_progress(&inputs, &options, &mut on_phase),
    };
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
    let rendering = std::time::Instant::now();
    // The JSON of a large report is written on two threads, as the scan runs on two.
    let json_threads = match options.scan {
        crate::runtime::Scan::OneThread => json::Threads::One,
        _ => json::Threads::Two,
    };
    let body = match cli.format {
        _ if json_to_stdout => json::render_on(&report, json_threads),
        Format::Text => text::render(&report, cli.top),
        Format::Markdown => markdown::render(&report, cli.top),
        Format::Json => json::render_on(&report, json_threads),
        Format::Html => html::render(&report, cli.top),
    };
    if timing {
        let took = rendering.elapsed().as_secs_f64();
        eprintln!("oomlens: render: {took:.3} s");
    }
    if let Some(target) = cli.json.as_ref().filter(|_| !json_to_stdout) {
        if let Err(e) = std::fs::write(target, json::render(&report)) {
            return fail(format!(
                "cannot write the JSON report to {}: {e}",
                target.display()
            ));
        }
    }
    print(&body)
}

/// Analyzes the host files on `jobs` threads, each host's JSON report put in `spool`
/// (when JSON is wanted) as it is done: the summary's rows, or why a report could not
/// be spooled.
fn analyze_hosts(
    files: &[crate::input::HostFile],
    options: &crate::Options,
    jobs: usize,
    spool: Option<&Spool>,
) -> Result<Vec<crate::report::model::HostSummary>, String> {
    let write_error = std::sync::Mutex::new(None::<String>);
    let rows = crate::hosts::analyze_files(files, options, jobs, &|i, analyzed| {
        if let (Some(spool), crate::hosts::Analyzed::Report(r)) = (spool, analyzed) {
            if let Err(e) = spool.put(i, &json::host_fragment(r)) {
                if let Ok(mut w) = write_error.lock() {
                    w.get_or_insert(e.to_string());
                }
            }
        }
    });
    match write_error.into_inner().ok().flatten() {
        Some(e) => Err(e),
        None => Ok(rows),
    }
}

/// A folder of several host files: every host analyzed on several threads, each
/// report written out as soon as it is made (the JSON's `hosts[]`, spooled to a
/// temporary folder) and only its summary row kept; standard output gets the
/// cross-host summary (`--host` shows one host's report). A host file that cannot be
/// read is a row with its error; the run still succeeds (exit 0) while any host was
/// read.
fn folder(
    cli: &ReportArgs,
    files: &[crate::input::HostFile],
    options: &crate::Options,
    started: std::time::Instant,
    timing: bool,
) -> u8 {
    if matches!(cli.format, Format::Html) {
        return fail("the HTML report is for one host: pass --host NAME (the folder's summary is text, Markdown or JSON)");
    }
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
    let jobs = crate::hosts::jobs_for(files.len(), cli.jobs);
    let rows = analyze_hosts(files, options, jobs, spool.as_ref());
    if timing {
        eprintln!(
            "oomlens: {} hosts on {jobs} threads, total: {:.3} s",
            files.len(),
            started.elapsed().as_secs_f64()
        );
    }
    let rows = match rows {
        Ok(rows) => rows,
        Err(e) => {
            return fail(format!(
                "cannot write a host report to the temporary folder: {e}"
            ))
        }
    };
    if rows
        .iter()
        .all(|r| r.status == crate::report::model::HostStatus::Failed)
    {
        let first = rows
            .first()
            .and_then(|r| r.error.clone())
            .unwrap_or_default();
        return fail(crate::Error::NoHostReadable {
            hosts: rows.len(),
            first,
        });
    }
    let summary = crate::report::model::Report {
        schema: crate::report::model::SCHEMA.into(),
        tool: crate::tool_name(),
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
    0
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

/// Two threads where they pay (the library's default), unless `OOMLENS_THREADS=1` keeps
/// the scan on one thread, for comparisons and benchmarks. The report is the same. The
/// command line is the one part of the library that reads the environment.
fn scan_strategy() -> crate::runtime::Scan {
    match std::env::var("OOMLENS_THREADS") {
        Ok(v) if v.trim() == "1" => crate::runtime::Scan::OneThread,
        _ => crate::runtime::Scan::default(),
    }
}

/// The host `--host` names, or every host when it names none.
fn pick_host(
    files: Vec<crate::input::HostFile>,
    wanted: Option<&str>,
) -> Result<Vec<crate::input::HostFile>, crate::Error> {
    let Some(wanted) = wanted else {
        return Ok(files);
    };
    if let Some(f) = files.iter().find(|f| f.host == wanted) {
        return Ok(vec![f.clone()]);
    }
    let mut available: Vec<&str> = files.iter().take(20).map(|f| f.host.as_str()).collect();
    if files.len() > 20 {
        available.push("…");
    }
    Err(crate::Error::UnknownHost {
        wanted: wanted.to_owned(),
        available: available.join(", "),
    })
}
