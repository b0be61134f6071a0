//! `oomlens._native`: the engine for Python. Every analysis runs with the interpreter
//! released (`Python::detach`), so threads analyze captures in parallel; reports come
//! back as the engine's own JSON text (what `oomlens PATH --format json` prints, byte
//! for byte), with the text, Markdown and HTML renderings on demand. The Python package
//! (`python/oomlens/`) wraps this module; users import `oomlens`, not this.

use std::ffi::OsString;
use std::path::PathBuf;

use oomlens::diff::model::DiffReport;
use oomlens::diff::{DiffOptions, Run};
use oomlens::report::{diff_json, diff_markdown, diff_text, html, json, markdown, present, text};
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
