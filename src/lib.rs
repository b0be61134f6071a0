//! oomlens: why a JAX/XLA program ran out of accelerator memory, from its profiler
//! capture (`*.xplane.pb`), the error message, an XLA dump or device memory profiles —
//! alone or joined ([`analyze_inputs`], [`analyze_input_bytes`]; see [`inputs`]).
//!
//! Data flows one way: bytes ([`source`]) → capture index ([`capture`]) → plan analysis
//! ([`plan`]) and runtime analysis ([`runtime`]) → [`diagnosis`] → report model
//! ([`report::model`]) → renderers ([`report`]). The CLI (`main.rs`) and the page
//! (`wasm.rs`, `www/`) only render the model.

pub mod analysis;
pub mod capture;
pub mod diagnosis;
pub mod diff;
pub mod error;
pub mod evidence;
#[cfg(not(target_arch = "wasm32"))]
pub mod input;
pub mod inputs;
pub mod plan;
pub mod proto;
pub mod report;
pub mod runtime;
pub mod selection;
pub mod source;
pub mod units;
#[cfg(target_arch = "wasm32")]
pub mod wasm;
pub mod wire;

pub use analysis::{analyze, Options};
pub use error::Error;
pub use report::model::{HostReport, Report};

/// `oomlens <version>`, recorded in every report.
pub fn tool_name() -> String {
    format!("oomlens {}", env!("CARGO_PKG_VERSION"))
}

/// Wraps host reports into the top-level report.
pub fn report(hosts: Vec<HostReport>) -> Report {
    Report {
        schema: report::model::SCHEMA.into(),
        tool: tool_name(),
        hosts,
    }
}

/// Analyzes every host file under `path` (a file or a capture directory).
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_path(path: &std::path::Path, options: &Options) -> Result<Report, Error> {
    analyze_path_with_progress(path, options, &mut |_, _, _| {})
}

/// [`analyze_path`], reporting each phase as it starts.
#[cfg(not(target_arch = "wasm32"))]
pub fn analyze_path_with_progress(
    path: &std::path::Path,
    options: &Options,
    progress: analysis::Progress<'_>,
) -> Result<Report, Error> {
    let files = input::resolve(path)?;
    let mut hosts = Vec::with_capacity(files.len());
    for f in files {
        let src = source::FileSource::open(&f.path).map_err(|e| Error::Open {
            path: f.path.clone(),
            message: e.to_string(),
        })?;
        let name = f
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        hosts.push(analyze(&src, &f.host, &name, options, &mut *progress)?);
    }
    Ok(report(hosts))
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
