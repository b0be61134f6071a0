//! `oomlens._native`: the engine for Python. Every analysis runs with the interpreter
//! released (`Python::detach`), so threads analyze captures in parallel; reports come
//! back as the engine's own JSON text (what `oomlens PATH --format json` prints, byte
//! for byte), with the text, Markdown and HTML renderings on demand. The Python package
//! (`python/oomlens/`) wraps this module; users import `oomlens`, not this.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Mutex;

use oomlens::diff::model::DiffReport;
use oomlens::diff::{DiffOptions, Run};
use oomlens::report::model::{HostSummary, InputKind};
use oomlens::report::{diff_json, diff_markdown, diff_text, html, json, markdown, present, text};
use oomlens::source::ByteSource;
use oomlens::{Error, Options, Report};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The name a capture given as bytes has in the report, as the page names one.
const BYTES_NAME: &str = "capture.xplane.pb";

/// An analysis: the engine's report, rendered on demand.
#[pyclass(frozen, module = "oomlens._native")]
struct Analysis {
    report: Report,
}

#[pymethods]
impl Analysis {
    /// The JSON report (schema oomlens/1), exactly as `oomlens PATH --format json`
    /// prints it.
    fn json(&self, py: Python<'_>) -> String {
        py.detach(|| json::render(&self.report))
    }

    /// The text report, as `oomlens PATH` prints it, listing `top` live buffers.
    #[pyo3(signature = (top = present::limits::LIVE_BUFFERS))]
    fn text(&self, py: Python<'_>, top: usize) -> String {
        py.detach(|| text::render(&self.report, top))
    }

    /// The Markdown report (`--format markdown`).
    #[pyo3(signature = (top = present::limits::LIVE_BUFFERS))]
    fn markdown(&self, py: Python<'_>, top: usize) -> String {
        py.detach(|| markdown::render(&self.report, top))
    }

    /// The verdict, the module and the first `lines` diagnosis lines, as the text
    /// report writes them: what `oomlens.jax` shows under a traceback.
    #[pyo3(signature = (lines = 3))]
    fn brief(&self, py: Python<'_>, lines: usize) -> String {
        py.detach(|| text::brief(&self.report, lines))
    }

    /// One row per host, as JSON text: the rows of the cross-host summary
    /// (`hosts_summary[]` of `oomlens FOLDER --format json`, docs/hosts.md). For a report
    /// on one host, the row that host has in a folder before the rows are compared
    /// (`ran_out_first` false, `skew` empty): what `oomlens.fleet` writes per host file.
    fn host_rows(&self, py: Python<'_>) -> String {
        py.detach(|| {
            let rows = if self.report.hosts_summary.is_empty() {
                self.report.hosts.iter().filter_map(row_of).collect()
            } else {
                self.report.hosts_summary.clone()
            };
            serde_json::to_string(&rows).unwrap_or_else(|_| "[]".into())
        })
    }

    /// Each host's profile start (ns since the Unix epoch, from the plane `Task
    /// Environment`), or `None`: what puts the `ran_out_at_ns` of several hosts on one
    /// clock (docs/hosts.md). Not in the JSON report.
    fn profile_starts(&self) -> Vec<Option<u64>> {
        self.report
            .hosts
            .iter()
            .map(|h| h.profile_start_ns)
            .collect()
    }

    /// The HTML report: a whole document (`--format html`), or, with `fragment`, the
    /// element a notebook shows.
    #[pyo3(signature = (top = present::limits::LIVE_BUFFERS, fragment = false))]
    fn html(&self, py: Python<'_>, top: usize, fragment: bool) -> String {
        py.detach(|| {
            if fragment {
                html::fragment(&self.report, top)
            } else {
                html::render(&self.report, top)
            }
        })
    }
}

/// A host's summary row, made by the engine's own rules (`hosts::summarize`, which is
/// crate-private): the report of two copies of the host gets the rows of a folder, and
/// the first row, compared only with its copy, is taken with its marks undone.
fn row_of(host: &oomlens::HostReport) -> Option<HostSummary> {
    let mut row = oomlens::report(vec![host.clone(), host.clone()])
        .hosts_summary
        .into_iter()
        .next()?;
    row.ran_out_first = false;
    row.skew.clear();
    Some(row)
}

/// A comparison of two runs (`oomlens diff BEFORE AFTER`), rendered on demand.
#[pyclass(frozen, module = "oomlens._native")]
struct Comparison {
    diff: DiffReport,
}

#[pymethods]
impl Comparison {
    /// The JSON comparison (schema oomlens-diff/1), as `oomlens diff … --format json`
    /// prints it.
    fn json(&self, py: Python<'_>) -> String {
        py.detach(|| diff_json::render(&self.diff))
    }

    /// The text comparison, as `oomlens diff BEFORE AFTER` prints it.
    #[pyo3(signature = (top = present::limits::LIVE_BUFFERS))]
    fn text(&self, py: Python<'_>, top: usize) -> String {
        py.detach(|| diff_text::render(&self.diff, top))
    }

    /// The Markdown comparison (`--format markdown`).
    #[pyo3(signature = (top = present::limits::LIVE_BUFFERS))]
    fn markdown(&self, py: Python<'_>, top: usize) -> String {
        py.detach(|| diff_markdown::render(&self.diff, top))
    }
}

/// Raises `oomlens.OomlensError(message, kind)`: the message as the CLI prints it after
/// `oomlens: ` (one line, names from the file escaped), and the engine's kind.
fn error(py: Python<'_>, e: &Error) -> PyErr {
    raise(py, &e.to_string(), e.kind())
}

/// `oomlens.OomlensError(message, kind)`, the message cleaned to one line.
fn raise(py: Python<'_>, message: &str, kind: &str) -> PyErr {
    let message = oomlens::report::clean(message, 4000);
    let raised = py
        .import("oomlens._error")
        .and_then(|m| m.getattr("OomlensError"))
        .and_then(|class| class.call1((message, kind)));
    match raised {
        Ok(instance) => PyErr::from_value(instance),
        Err(failed) => failed,
    }
}

/// Runs `analysis` with the interpreter released.
fn run(
    py: Python<'_>,
    analysis: impl FnOnce() -> Result<Report, Error> + Send,
) -> PyResult<Analysis> {
    match py.detach(analysis) {
        Ok(report) => Ok(Analysis { report }),
        Err(e) => Err(error(py, &e)),
    }
}

/// What a capture argument holds: a path, or the bytes of one capture file.
enum Source<'a> {
    Path(PathBuf),
    Bytes(&'a [u8]),
}

impl Source<'_> {
    /// What `oomlens PATH [--error-text FILE]` reports: the path is read as the CLI
    /// reads it (a capture, a folder of evidence, a dump, a log …), joined to the error
    /// text given as a file (`error_file`) or as text (`options.error_text`).
    fn analyze(
        &self,
        name: &str,
        error_file: Option<&std::path::Path>,
        options: &Options,
    ) -> Result<Report, Error> {
        match self {
            Source::Path(path) => {
                let mut inputs = vec![oomlens::inputs::Input::path(path.clone())];
                if let Some(file) = error_file {
                    inputs.push(oomlens::inputs::Input {
                        path: file.to_owned(),
                        text: true,
                    });
                }
                oomlens::analyze_inputs_with_progress(&inputs, options, &mut |_, _, _| {})
            }
            Source::Bytes(data) => {
                let mut options = options.clone();
                if let Some(file) = error_file {
                    let text = std::fs::read(file).map_err(|e| Error::Open {
                        path: file.to_owned(),
                        message: e.to_string(),
                    })?;
                    options.error_text = Some(String::from_utf8_lossy(&text).into_owned());
                }
                oomlens::analyze_input_bytes(&[(name, data)], &options)
            }
        }
    }
}

/// Reads a capture argument. A `bytes` object is borrowed, not copied: it cannot
/// change, and the caller's reference keeps it alive while the engine reads it without
/// the interpreter.
fn source<'a>(what: &str, arg: &'a Bound<'_, PyAny>) -> PyResult<Source<'a>> {
    if let Ok(bytes) = arg.cast::<PyBytes>() {
        return Ok(Source::Bytes(bytes.as_bytes()));
    }
    arg.extract::<PathBuf>().map(Source::Path).map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} takes a path (str or os.PathLike) or the capture's bytes, not {}",
            arg.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// Analyzes a capture: `source` is a path (a `.xplane.pb` file or a capture folder, as
/// the CLI takes it) or the bytes of one capture file, named `name` in the report.
#[pyfunction]
#[pyo3(signature = (source, module = None, error_text = None, name = None, error_file = None))]
fn analyze(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    module: Option<String>,
    error_text: Option<String>,
    name: Option<String>,
    error_file: Option<PathBuf>,
) -> PyResult<Analysis> {
    let options = Options {
        module,
        error_text,
        ..Options::default()
    };
    let source = self::source("analyze()", source)?;
    let name = name.unwrap_or_else(|| BYTES_NAME.to_owned());
    run(py, || {
        source.analyze(&name, error_file.as_deref(), &options)
    })
}

/// Compares two runs, as `oomlens diff BEFORE AFTER [--module M]` does: each is a path
/// (a capture file or folder) or the bytes of one capture file (named `name` in both
/// reports, so that their hosts match).
#[pyfunction]
#[pyo3(signature = (before, after, module = None, name = None))]
fn diff(
    py: Python<'_>,
    before: &Bound<'_, PyAny>,
    after: &Bound<'_, PyAny>,
    module: Option<String>,
    name: Option<String>,
) -> PyResult<Comparison> {
    let before = source("diff()", before)?;
    let after = source("diff()", after)?;
    let name = name.unwrap_or_else(|| BYTES_NAME.to_owned());
    let options = DiffOptions {
        module,
        ..DiffOptions::default()
    };
    let compared = py.detach(|| {
        oomlens::diff::compare_runs(
            &mut |run, module| {
                let side = match run {
                    Run::Before => &before,
                    Run::After => &after,
                };
                let options = Options {
                    module: module.map(str::to_owned),
                    ..Options::default()
                };
                side.analyze(&name, None, &options)
            },
            &options,
        )
    });
    match compared {
        Ok(diff) => Ok(Comparison { diff }),
        Err(e) => Err(error(py, &e)),
    }
}

/// A capture read through a Python file object (`seek`, `read`: an fsspec file of a
/// remote store, an `io.BytesIO` …) as the engine asks for its bytes, a block at a time:
/// at most [`READER_BLOCKS`] blocks of [`READER_BLOCK`] bytes are held, whatever the
/// file's size, as the page reads a browser `File` (`src/wasm.rs`).
struct ReaderSource {
    reader: Py<PyAny>,
    len: u64,
    blocks: Mutex<Blocks>,
}

/// The blocks a [`ReaderSource`] holds.
#[derive(Default)]
struct Blocks {
    /// `(start, bytes)`, least recently used first.
    held: Vec<(u64, Vec<u8>)>,
    /// Where the last block read ended.
    last_end: u64,
}

/// Size of a block read on through the file.
const READER_BLOCK: u64 = 4 << 20;
/// Size of a block read for a small read far from the last one (the next line's header
/// after skipping a long line): a whole block there would read what is skipped.
const READER_SMALL_BLOCK: u64 = 64 << 10;
/// How far past the last block a small read must land to be read as a small block.
const READER_FAR: u64 = 2 << 20;
/// Blocks kept: a window straddles at most two, plus one for a jump back.
const READER_BLOCKS: usize = 3;

impl ReaderSource {
    /// `[start, end)` from the Python object (`seek(start)`, then `read` until filled or
    /// at its end), with the interpreter held only for those calls.
    fn read_block(&self, start: u64, end: u64) -> std::io::Result<Vec<u8>> {
        let want = usize::try_from(end.saturating_sub(start)).unwrap_or(0);
        Python::attach(|py| {
            let failed = |e: PyErr| std::io::Error::other(e.to_string());
            let reader = self.reader.bind(py);
            reader.call_method1("seek", (start,)).map_err(failed)?;
            let mut out = Vec::with_capacity(want);
            while out.len() < want {
                let got = reader
                    .call_method1("read", (want - out.len(),))
                    .map_err(failed)?;
                let n = if let Ok(b) = got.cast::<PyBytes>() {
                    out.extend_from_slice(b.as_bytes());
                    b.as_bytes().len()
                } else {
                    let b: Vec<u8> = got.extract().map_err(|_| {
                        std::io::Error::other("the reader's read() gave neither bytes nor a buffer")
                    })?;
                    out.extend_from_slice(&b);
                    b.len()
                };
                if n == 0 {
                    break;
                }
            }
            out.truncate(want);
            Ok(out)
        })
    }

    /// Copies from a held block holding `offset` (reading one if none does) into `buf`;
    /// returns how many bytes it copied.
    fn copy_from_block(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let copy = |start: u64, block: &[u8], buf: &mut [u8]| {
            let from = usize::try_from(offset - start)
                .unwrap_or(usize::MAX)
                .min(block.len());
            let n = buf.len().min(block.len() - from);
            buf[..n].copy_from_slice(&block[from..from + n]);
            n
        };
        let last_end = {
            let mut held = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
            let holds = |(start, bytes): &(u64, Vec<u8>)| {
                offset >= *start && offset < *start + bytes.len() as u64
            };
            if let Some(i) = held.held.iter().position(holds) {
                let hit = held.held.remove(i);
                let n = copy(hit.0, &hit.1, buf);
                held.held.push(hit);
                return Ok(n);
            }
            held.last_end
        };
        // Read with the lock released: only the Python call holds the interpreter.
        let far = offset > last_end.saturating_add(READER_FAR);
        let size = if far && (buf.len() as u64) < READER_SMALL_BLOCK {
            READER_SMALL_BLOCK
        } else {
            READER_BLOCK
        };
        let start = offset - offset % size;
        let end = (start + size).min(self.len);
        let block = self.read_block(start, end)?;
        let n = copy(start, &block, buf);
        let mut held = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        if held.held.len() >= READER_BLOCKS {
            held.held.remove(0);
        }
        held.held.push((start, block));
        held.last_end = end;
        Ok(n)
    }
}

impl ByteSource for ReaderSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let end = offset.saturating_add(buf.len() as u64).min(self.len);
        let mut done = 0usize;
        let mut at = offset;
        while at < end {
            let want = usize::try_from(end - at).unwrap_or(usize::MAX);
            let n = self.copy_from_block(at, &mut buf[done..done + want])?;
            if n == 0 {
                break;
            }
            done += n;
            at += n as u64;
        }
        Ok(done)
    }
}

/// Analyzes one capture file read through a Python file object (`seek(offset)`,
/// `read(n)`) of `size` bytes, named `name` in the report (`host0.xplane.pb`; the host
/// is that name without `.xplane.pb`): blocks of it are read as the engine asks, at
/// most 12 MiB held, so a remote file is never held whole. `evidence`: other files
/// given beside it as `(name, bytes)` (an error log, device memory profiles, XLA dump
/// files), joined as `oomlens.analyze` joins files given together. The report is the
/// one the same file's bytes give.
#[pyfunction]
#[pyo3(signature = (reader, size, name, module = None, evidence = None))]
fn analyze_reader(
    py: Python<'_>,
    reader: Py<PyAny>,
    size: u64,
    name: String,
    module: Option<String>,
    evidence: Option<Vec<(String, Bound<'_, PyBytes>)>>,
) -> PyResult<Analysis> {
    let options = Options {
        module,
        ..Options::default()
    };
    let evidence = evidence.unwrap_or_default();
    let files: Vec<(&str, &[u8])> = evidence
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_bytes()))
        .collect();
    let src = ReaderSource {
        reader,
        len: size,
        blocks: Mutex::new(Blocks::default()),
    };
    run(py, || {
        let file = name.rsplit(['/', '\\']).next().unwrap_or(&name);
        let host = file.strip_suffix(".xplane.pb").unwrap_or(file);
        let joined = if files.is_empty() {
            oomlens::analysis::join::Joined::default()
        } else {
            // The capture is gathered as an empty stand-in of its name, so that the
            // evidence is joined as it is beside a capture; its size is then set.
            let stand_in = if file.ends_with(".xplane.pb") {
                file.to_owned()
            } else {
                format!("{file}.xplane.pb")
            };
            let mut all = vec![(stand_in.as_str(), &[][..])];
            all.extend(files.iter().copied());
            let mut joined = oomlens::inputs::gather_bytes(&all, None)?.joined;
            for input in &mut joined.inputs {
                if input.kind == InputKind::Capture && input.file == stand_in {
                    input.file = file.to_owned();
                    input.bytes = size;
                }
            }
            joined
        };
        let host_report = oomlens::analysis::analyze_joined(
            &src,
            host,
            file,
            &options,
            &joined,
            &mut |_, _, _| {},
        )?;
        Ok(oomlens::report(vec![host_report]))
    })
}

/// The report on an out-of-memory message alone (`oomlens --error-text FILE` without a
/// capture): the message's figures under `error`, the triage and its fixes. Raises
/// `OomlensError` (kind `no_oom_message`) when the text holds none.
#[pyfunction]
fn from_error(py: Python<'_>, text: String) -> PyResult<Analysis> {
    let options = Options {
        error_text: Some(text),
        ..Options::default()
    };
    run(py, || oomlens::analyze_input_bytes(&[], &options))
}

/// The `oomlens` command line: `argv` as `sys.argv` gives it (the program name first).
/// Writes to the process's standard output and error and returns the exit status, as
/// the `oomlens` binary does.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<OsString>) -> u8 {
    py.detach(|| oomlens::cli::run(argv))
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Analysis>()?;
    m.add_class::<Comparison>()?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_reader, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    m.add_function(wrap_pyfunction!(from_error, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    // `oomlens 0.1.0`, as every report's `tool` says.
    m.add("TOOL", oomlens::tool_name())?;
    m.add("SCHEMA", oomlens::report::model::SCHEMA)?;
    m.add("DIFF_SCHEMA", oomlens::diff::model::SCHEMA)?;
    m.add("DEFAULT_TOP", present::limits::LIVE_BUFFERS)?;
    Ok(())
}
