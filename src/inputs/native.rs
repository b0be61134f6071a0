//! Gathering inputs from paths on disk: files and folders, read through bounded
//! readers (not in the page, which is handed bytes).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{
    base_name, classify, dump_place, host_of, is_dump_name, natural_cmp, Capture, Gathered,
    Gatherer, Kind, HEAD_BYTES,
};
use crate::error::Error;
use crate::evidence::device_profile::MAX_PROFILE_BYTES;
use crate::evidence::dump::{self, DumpFile, MAX_PROTO_BYTES, MAX_TEXT_BYTES};
use crate::evidence::message;
use crate::input;

/// Text files of a folder that are not logs (source, data, documents): never searched
/// for an error message, which they may quote.
const NOT_LOGS: [&str; 14] = [
    ".py", ".json", ".md", ".rs", ".yaml", ".yml", ".toml", ".csv", ".html", ".js", ".c", ".cc",
    ".h", ".ipynb",
];

fn is_log_candidate(name: &str) -> bool {
    let lower = base_name(name).to_ascii_lowercase();
    !NOT_LOGS.iter().any(|ext| lower.ends_with(ext))
}

/// Entries of a folder looked at: a run folder holds a few files; a folder with more
/// is not one, and its first entries by name are enough to tell.
const MAX_DIR_ENTRIES: usize = 4096;
/// Text files of one folder searched for an error message.
const MAX_TEXT_FILES: usize = 32;

/// One input as the command line gives it.
#[derive(Debug, Clone)]
pub struct Input {
    /// A file or folder; `-` is standard input (text).
    pub path: PathBuf,
    /// Given as the error text (`--error-text`): read as text whatever it holds.
    pub text: bool,
}

impl Input {
    /// A path as given: what it is, told from its content.
    pub fn path(path: impl Into<PathBuf>) -> Self {
        Input {
            path: path.into(),
            text: false,
        }
    }
}

fn open_error(path: &Path, e: std::io::Error) -> Error {
    Error::Open {
        path: path.to_owned(),
        message: e.to_string(),
    }
}

fn name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

fn head(path: &Path) -> Result<(Vec<u8>, u64), Error> {
    let file = File::open(path).map_err(|e| open_error(path, e))?;
    let len = file.metadata().map_err(|e| open_error(path, e))?.len();
    let mut head = Vec::with_capacity(HEAD_BYTES.min(len as usize));
    file.take(HEAD_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| open_error(path, e))?;
    Ok((head, len))
}

/// A whole file up to `cap` bytes; `None` when it is larger.
fn whole(path: &Path, cap: u64) -> Result<Option<Vec<u8>>, Error> {
    let file = File::open(path).map_err(|e| open_error(path, e))?;
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| open_error(path, e))?;
    Ok((bytes.len() as u64 <= cap).then_some(bytes))
}

fn parse_file(path: &Path) -> Result<Result<message::OomMessage, message::NoOomMessage>, Error> {
    let file = File::open(path).map_err(|e| open_error(path, e))?;
    message::parse_reader(std::io::BufReader::new(file)).map_err(|e| open_error(path, e))
}

/// Gathers the inputs given (files, folders, `-`), and text pasted beside them.
pub fn gather(inputs: &[Input], pasted: Option<&str>) -> Result<Gathered<PathBuf>, Error> {
    let mut walk = Walk::default();
    for input in inputs {
        if input.path.as_os_str() == "-" {
            let parsed =
                message::parse_reader(std::io::stdin().lock()).map_err(|e| Error::Open {
                    path: "-".into(),
                    message: e.to_string(),
                })?;
            walk.g.message("-", 0, parsed, true);
        } else if input.text {
            let len = std::fs::metadata(&input.path)
                .map_err(|e| open_error(&input.path, e))?
                .len();
            let parsed = parse_file(&input.path)?;
            walk.g.message(&name(&input.path), len, parsed, true);
        } else {
            let meta = std::fs::metadata(&input.path).map_err(|e| open_error(&input.path, e))?;
            if meta.is_dir() {
                walk.dir(&input.path)?;
            } else {
                walk.file(&input.path, true)?;
            }
        }
    }
    if let Some(text) = pasted {
        walk.g
            .message("pasted text", text.len() as u64, message::parse(text), true);
    }
    walk.finish()
}

#[derive(Default)]
struct Walk {
    g: Gatherer,
    captures: Vec<Capture<PathBuf>>,
    dump_files: Vec<PathBuf>,
}

impl Walk {
    fn add_capture(&mut self, host: String, path: &Path, bytes: u64) {
        if self.captures.iter().any(|c| c.at == path) {
            return;
        }
        self.g.capture(&name(path), bytes);
        self.captures.push(Capture {
            host,
            file: name(path),
            at: path.to_owned(),
        });
    }

    /// One file; `explicit` when the user named it (then what cannot be read is an
    /// error), else found in a folder (then it is left out with a note, or quietly
    /// when it is not evidence at all).
    fn file(&mut self, path: &Path, explicit: bool) -> Result<(), Error> {
        let file_name = name(path);
        let (head, len) = head(path)?;
        match classify(&file_name, &head) {
            // The trace viewer's copy the profiler writes beside each capture.
            Kind::Capture if !explicit && super::is_trace_json(&file_name, &head) => {}
            Kind::Capture => self.add_capture(host_of(&file_name), path, len),
            Kind::DumpFile if explicit => self.dump_files.push(path.to_owned()),
            Kind::DumpFile => {}
            Kind::DeviceProfile => match whole(path, MAX_PROFILE_BYTES)? {
                Some(bytes) => self.g.profile(&file_name, &bytes, explicit)?,
                None if explicit => {
                    return Err(Error::Profile(
                        crate::evidence::device_profile::ProfileError::TooLarge {
                            file: file_name,
                            reason: format!("it is over {} MiB", MAX_PROFILE_BYTES >> 20),
                        },
                    ))
                }
                None => {}
            },
            Kind::Text if explicit || is_log_candidate(&file_name) => {
                let parsed = parse_file(path)?;
                self.g.message(&file_name, len, parsed, explicit);
            }
            Kind::Text => {}
            Kind::Empty if explicit => return Err(Error::EmptyInput(file_name)),
            Kind::Unknown(why) if explicit => {
                return Err(Error::UnknownInput {
                    path: path.display().to_string(),
                    why: why.into(),
                })
            }
            Kind::Empty | Kind::Unknown(_) => {}
        }
        Ok(())
    }

    /// A folder: its captures (as a log dir, a run folder, or a folder holding one),
    /// its XLA dump (the folder itself, or a folder in it), and its files.
    fn dir(&mut self, dir: &Path) -> Result<(), Error> {
        let before = self.g.inputs.len();
        match input::resolve(dir) {
            Ok(files) => {
                for f in files {
                    let bytes = std::fs::metadata(&f.path).map(|m| m.len()).unwrap_or(0);
                    self.add_capture(f.host, &f.path, bytes);
                }
            }
            Err(Error::NoCaptureInDir(_)) => {}
            Err(e) => return Err(e),
        }
        let (files, dirs) = entries(dir);
        if files.iter().any(|f| is_dump_name(&name(f))) {
            self.dump_dir(dir, true)?;
        }
        let mut log_dir_seen = !self.captures.is_empty();
        for sub in &dirs {
            if is_dump_dir(sub) {
                self.dump_dir(sub, false)?;
            } else if !log_dir_seen && sub.join("plugins").join("profile").is_dir() {
                if let Ok(found) = input::resolve(sub) {
                    for f in found {
                        let bytes = std::fs::metadata(&f.path).map(|m| m.len()).unwrap_or(0);
                        self.add_capture(f.host, &f.path, bytes);
                    }
                    log_dir_seen = true;
                }
            }
        }
        let mut texts = 0;
        let mut profiles: Vec<&PathBuf> = Vec::new();
        for f in &files {
            let n = name(f);
            if n.ends_with(super::CAPTURE_SUFFIX) || is_dump_name(&n) {
                continue;
            }
            let Ok((head, _)) = head(f) else {
                continue;
            };
            match classify(&n, &head) {
                Kind::DeviceProfile => profiles.push(f),
                Kind::Text if texts < MAX_TEXT_FILES && is_log_candidate(&n) => {
                    texts += 1;
                    self.file(f, false)?;
                }
                Kind::Capture => self.file(f, false)?,
                _ => {}
            }
        }
        profiles.sort_by(|a, b| natural_cmp(&name(a), &name(b)));
        for p in profiles {
            self.file(p, false)?;
        }
        if self.g.inputs.len() == before {
            // A profiler log dir without captures says so, as it always has.
            if dir.join("plugins").join("profile").is_dir() {
                return Err(Error::NoCaptureInDir(dir.to_owned()));
            }
            return Err(Error::NothingInDir(dir.to_owned()));
        }
        Ok(())
    }

    /// A dump folder; `own` when it is the folder given (its errors are errors).
    fn dump_dir(&mut self, dir: &Path, own: bool) -> Result<(), Error> {
        let (files, _) = entries(dir);
        let bytes = files
            .iter()
            .filter(|f| is_dump_name(&name(f)))
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .fold(0, u64::saturating_add);
        let place = format!("{}/", name(dir));
        self.g.dump(&place, bytes, dump::read_dir(dir), own)
    }

    fn finish(mut self) -> Result<Gathered<PathBuf>, Error> {
        if !self.dump_files.is_empty() {
            let mut loaded: Vec<(String, Vec<u8>)> = Vec::new();
            for path in &self.dump_files {
                let n = name(path);
                let cap = if n.ends_with(".pb") {
                    MAX_PROTO_BYTES
                } else {
                    MAX_TEXT_BYTES
                };
                match whole(path, cap)? {
                    Some(bytes) => loaded.push((n, bytes)),
                    None => {
                        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
                        return Err(dump::DumpError::TooLarge {
                            file: n,
                            bytes: size,
                            cap,
                        }
                        .into());
                    }
                }
            }
            let files: Vec<DumpFile<'_>> = loaded
                .iter()
                .map(|(name, bytes)| DumpFile { name, bytes })
                .collect();
            let bytes = loaded.iter().map(|(_, b)| b.len() as u64).sum();
            let place = dump_place(loaded.iter().map(|(n, _)| n.as_str()));
            self.g.dump(&place, bytes, dump::read(&files), true)?;
        }
        Ok(Gathered {
            captures: self.captures,
            joined: self.g.finish()?,
        })
    }
}

/// The files and folders of a folder, by name (at most [`MAX_DIR_ENTRIES`]).
fn entries(dir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Ok(read) = std::fs::read_dir(dir) else {
        return (Vec::new(), Vec::new());
    };
    let mut all: Vec<PathBuf> = read
        .flatten()
        .take(MAX_DIR_ENTRIES)
        .map(|e| e.path())
        .collect();
    all.sort();
    all.into_iter().partition(|p| !p.is_dir())
}

/// Whether a folder holds XLA dump files (by name).
fn is_dump_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|read| {
        read.flatten()
            .take(MAX_DIR_ENTRIES)
            .any(|e| is_dump_name(&e.file_name().to_string_lossy()))
    })
}
