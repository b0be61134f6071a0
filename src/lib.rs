//! oomlens: why a JAX/XLA program ran out of accelerator memory, from its profiler
//! capture (`*.xplane.pb`), the error message, an XLA dump or device memory profiles —
//! alone or joined ([`analyze_inputs`], [`analyze_input_bytes`]; see [`inputs`]).
//!
//! Data flows one way: bytes ([`source`]) → capture index ([`capture`]) → plan analysis
//! ([`plan`]) and runtime analysis ([`runtime`]) → [`diagnosis`] → report model
//! ([`report::model`]) → renderers ([`report`]). The CLI (`main.rs`) and the page
//! (`wasm.rs`, `www/`) only render the model.

#![warn(missing_docs)]

// The public API: analyze (a capture, or whatever evidence the user has), compare,
// render.
pub mod analysis;
#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
pub mod diff;
pub mod error;
pub mod inputs;
pub mod report;
pub mod source;
#[cfg(target_arch = "wasm32")]
pub mod wasm;

// The engine's stages, public only so that the tests, fuzz targets and benchmarks can
// reach the readers they check (the wire, the capture index, plans, the runtime scan's
// parts, other evidence). Not part of the API: hidden from the docs, free to change.
#[doc(hidden)]
pub mod capture;
#[doc(hidden)]
pub mod evidence;
#[doc(hidden)]
pub mod plan;
#[doc(hidden)]
pub mod proto;
#[doc(hidden)]
pub mod runtime;
#[doc(hidden)]
pub mod wire;

pub(crate) mod diagnosis;
pub(crate) mod free;
pub(crate) mod hosts;
#[cfg(target_os = "linux")]
#[doc(hidden)]
pub mod huge_pages;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod input;
pub(crate) mod selection;
pub mod units;

/// The real captures the unit tests run on (the integration tests' list).
#[cfg(test)]
#[path = "../tests/support/real_captures.rs"]
pub(crate) mod real_captures;

pub use analysis::{analyze, Options};
pub use error::Error;
pub use report::model::{HostReport, Report};
pub use runtime::Scan;

/// `oomlens <version>`, recorded in every report.
pub fn tool_name() -> String {
    format!("oomlens {}", env!("CARGO_PKG_VERSION"))
}

/// Wraps host reports into the top-level report; several hosts get their summary rows
/// (see [`hosts`]).
pub fn report(hosts: Vec<HostReport>) -> Report {
    let hosts_summary = if hosts.len() > 1 {
        let mut rows: Vec<_> = hosts.iter().map(hosts::summarize).collect();
        let starts: Vec<_> = hosts.iter().map(|h| h.profile_start_ns).collect();
        hosts::compare(&mut rows, &starts);
        rows
    } else {
        Vec::new()
    };
    Report {
        schema: report::model::SCHEMA.into(),
        tool: tool_name(),
        hosts,
        hosts_summary,
    }
}

/// Analyzes a capture held in memory. `file` names it in the report
/// (`host0.xplane.pb`); the host is that name without `.xplane.pb`, as for a file.
pub fn analyze_bytes(bytes: &[u8], file: &str, options: &Options) -> Result<Report, Error> {
    let host = file.strip_suffix(".xplane.pb").unwrap_or(file);
    let host_report = analyze(&bytes, host, file, options, &mut |_, _, _| {})?;
    Ok(report(vec![host_report]))
}

/// Analyzes every host file under `path` (a file or a capture directory).
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_path(path: &std::path::Path, options: &Options) -> Result<Report, Error> {
    analyze_path_with_progress(path, options, &mut |_, _, _| {})
}

/// [`analyze_path`], reporting each phase as it starts. A folder of several host files
/// is analyzed on several threads ([`hosts::analyze_files`]); a host file that cannot
/// be read is a summary row with its error, and only when none can be read is that an
/// error (the first one's). Every report is kept in memory: the CLI instead writes each
/// one out as it is made.
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_path_with_progress(
    path: &std::path::Path,
    options: &Options,
    progress: analysis::Progress<'_>,
) -> Result<Report, Error> {
    let files = input::resolve(path)?;
    if let [f] = files.as_slice() {
        return Ok(report(vec![analyze_file_with_progress(
            f, options, progress,
        )?]));
    }
    let kept = std::sync::Mutex::new(Vec::new());
    let first_error = std::sync::Mutex::new(None);
    let jobs = hosts::jobs_for(files.len(), None);
    let rows = hosts::analyze_files(&files, options, jobs, &|i, a| match a {
        hosts::Analyzed::Report(r) => {
            if let Ok(mut kept) = kept.lock() {
                kept.push((i, r.clone()));
            }
        }
        hosts::Analyzed::Failed(e) => {
            if let Ok(mut first) = first_error.lock() {
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    *first = Some((i, e.to_string()));
                }
            }
        }
    });
    let mut kept = kept.into_inner().unwrap_or_default();
    if kept.is_empty() {
        let (_, message) = first_error.into_inner().ok().flatten().unwrap_or_default();
        return Err(Error::NoHostReadable {
            hosts: files.len(),
            first: message,
        });
    }
    kept.sort_by_key(|(i, _)| *i);
    Ok(Report {
        schema: report::model::SCHEMA.into(),
        tool: tool_name(),
        hosts: kept.into_iter().map(|(_, r)| r).collect(),
        hosts_summary: rows,
    })
}

/// Analyzes one host file.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn analyze_file_with_progress(
    f: &input::HostFile,
    options: &Options,
    progress: analysis::Progress<'_>,
) -> Result<HostReport, Error> {
    let src = source::FileSource::open(&f.path).map_err(|e| Error::Open {
        path: f.path.clone(),
        message: e.to_string(),
    })?;
    let name = f
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    analyze(&src, &f.host, &name, options, progress)
}

/// Analyzes whatever was given — captures, logs or error messages, XLA dumps (folders
/// or files), device memory profiles, folders holding several of them — joined into
/// one report (see [`inputs`] and [`analysis::join`]). `options.error_text` is text
/// pasted beside them. Each capture host gets its report, with the other evidence
/// joined to it; without a capture, one report is built from the evidence alone.
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_inputs(paths: &[std::path::PathBuf], options: &Options) -> Result<Report, Error> {
    let inputs: Vec<inputs::Input> = paths.iter().map(inputs::Input::path).collect();
    analyze_inputs_with_progress(&inputs, options, &mut |_, _, _| {})
}

/// [`analyze_inputs`] with inputs as the command line gives them (`-` for standard
/// input, text given with `--error-text`), reporting each phase as it starts.
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_inputs_with_progress(
    inputs: &[inputs::Input],
    options: &Options,
    progress: analysis::Progress<'_>,
) -> Result<Report, Error> {
    let gathered = inputs::gather(inputs, options.error_text.as_deref())?;
    let options = Options {
        error_text: None,
        ..options.clone()
    };
    let mut hosts = Vec::with_capacity(gathered.captures.len().max(1));
    for c in &gathered.captures {
        let src = source::FileSource::open(&c.at).map_err(|e| Error::Open {
            path: c.at.clone(),
            message: e.to_string(),
        })?;
        hosts.push(analysis::analyze_joined(
            &src,
            &c.host,
            &c.file,
            &options,
            &gathered.joined,
            &mut *progress,
        )?);
    }
    if hosts.is_empty() {
        hosts.push(analysis::join::without_capture(&gathered.joined, &options)?);
    }
    Ok(report(hosts))
}

/// [`analyze_inputs`] for files handed in as bytes (`(name, bytes)`; the page does
/// this), with `options.error_text` as text pasted beside them. Runs anywhere.
pub fn analyze_input_bytes(files: &[(&str, &[u8])], options: &Options) -> Result<Report, Error> {
    let gathered = inputs::gather_bytes(files, options.error_text.as_deref())?;
    let options = Options {
        error_text: None,
        ..options.clone()
    };
    let mut hosts = Vec::with_capacity(gathered.captures.len().max(1));
    for c in &gathered.captures {
        hosts.push(analysis::analyze_joined(
            &c.at,
            &c.host,
            &c.file,
            &options,
            &gathered.joined,
            &mut |_, _, _| {},
        )?);
    }
    if hosts.is_empty() {
        hosts.push(analysis::join::without_capture(&gathered.joined, &options)?);
    }
    Ok(report(hosts))
}
