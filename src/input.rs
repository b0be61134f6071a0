//! Turning what the user passed into capture files: a `.xplane.pb` file, or a capture
//! directory (the log dir, its `plugins/profile`, or one run folder), in which case the
//! newest run's host files are analyzed. Native only.

use std::path::{Path, PathBuf};

use crate::error::Error;

/// One host's capture file.
#[derive(Debug, Clone)]
pub struct HostFile {
    pub host: String,
    pub path: PathBuf,
}

const SUFFIX: &str = ".xplane.pb";

/// The host files to analyze for `path`.
pub fn resolve(path: &Path) -> Result<Vec<HostFile>, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::Open {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    if meta.is_file() {
        return Ok(vec![host_file(path)]);
    }
    // A run folder holds the host files; a log dir holds plugins/profile/<run>/.
    let direct = captures_in(path);
    if !direct.is_empty() {
        return Ok(direct);
    }
    for runs_dir in [path.join("plugins").join("profile"), path.to_owned()] {
        if let Some(run) = newest_run(&runs_dir) {
            let files = captures_in(&run);
            if !files.is_empty() {
                return Ok(files);
            }
        }
    }
    Err(Error::NoCaptureInDir(path.to_owned()))
}

fn host_file(path: &Path) -> HostFile {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let host = name.strip_suffix(SUFFIX).unwrap_or(&name).to_owned();
    HostFile {
        host,
        path: path.to_owned(),
    }
}

fn captures_in(dir: &Path) -> Vec<HostFile> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<HostFile> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.to_string_lossy().ends_with(SUFFIX))
        .map(|p| host_file(&p))
        .collect();
    files.sort_by(|a, b| a.host.cmp(&b.host));
    files
}

/// Run folders are named by date (`2024_01_31_12_00_00`), so the greatest name is newest;
/// only folders that hold captures count.
fn newest_run(dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(dir).ok()?;
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !captures_in(p).is_empty())
        .max_by(|a, b| a.file_name().cmp(&b.file_name()))
}
