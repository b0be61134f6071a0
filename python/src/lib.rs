//! `oomlens._native`: the engine for Python. Every analysis runs with the interpreter
//! released (`Python::detach`), so threads analyze captures in parallel; reports come
//! back as the engine's own JSON text (what `oomlens PATH --format json` prints, byte
//! for byte), with the text, Markdown and HTML renderings on demand. The Python package
//! (`python/oomlens/`) wraps this module; users import `oomlens`, not this.

use std::ffi::OsString;
use std::path::PathBuf;

use oomlens::report::{html, json, markdown, present, text};
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

/// Raises `oomlens.OomlensError(message, kind)`: the message as the CLI prints it after
/// `oomlens: ` (one line, names from the file escaped), and the engine's kind.
fn error(py: Python<'_>, e: &Error) -> PyErr {
    let message = oomlens::report::clean(&e.to_string(), 4000);
    let raised = py
        .import("oomlens._error")
        .and_then(|m| m.getattr("OomlensError"))
        .and_then(|class| class.call1((message, e.kind())));
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

/// Analyzes a capture: `source` is a path (a `.xplane.pb` file or a capture folder, as
/// the CLI takes it) or the bytes of one capture file, named `name` in the report.
#[pyfunction]
#[pyo3(signature = (source, module = None, error_text = None, name = None))]
fn analyze(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    module: Option<String>,
    error_text: Option<String>,
    name: Option<String>,
) -> PyResult<Analysis> {
    let options = Options { module, error_text };
    if let Ok(bytes) = source.cast::<PyBytes>() {
        // Borrowed, not copied: a `bytes` object cannot change, and `source` keeps it
        // alive while the engine reads it without the interpreter.
        let data: &[u8] = bytes.as_bytes();
        let name = name.unwrap_or_else(|| BYTES_NAME.to_owned());
        return run(py, || oomlens::analyze_bytes(data, &name, &options));
    }
    let path: PathBuf = source.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "analyze() takes a path (str or os.PathLike) or the capture's bytes, not {}",
            source.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    run(py, || oomlens::analyze_path(&path, &options))
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
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    // `oomlens 0.1.0`, as every report's `tool` says.
    m.add("TOOL", oomlens::tool_name())?;
    m.add("SCHEMA", oomlens::report::model::SCHEMA)?;
    m.add("DEFAULT_TOP", present::limits::LIVE_BUFFERS)?;
    Ok(())
}
