//! oomlens: why a JAX/XLA program ran out of accelerator memory, from its profiler
//! capture (`*.xplane.pb`).
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
