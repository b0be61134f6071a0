//! Reading a dump directory (native only). Only the files a plan is read from are
//! opened (never the object code or LLVM IR beside them), one module at a time, each
//! under its size cap; the text files only when the module's proto gave no plan.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::collect::{Collector, MAX_MODULES};
use super::names::{self, ModuleFiles, ModuleKey, TextSet};
use super::{Dump, DumpError, DumpFile, MAX_FILES, MAX_PROTO_BYTES, MAX_TEXT_BYTES};

/// The modules of the dump in `path`: a `--xla_dump_to` directory, or one dump file.
pub fn read_dir(path: &Path) -> Result<Dump, DumpError> {
    let mut collector = Collector::default();
    let grouping = names::group(entries(path, &mut collector)?);
    collector.grouping(&grouping);
    for (key, module) in grouping.modules.iter().take(MAX_MODULES) {
        read_module(&mut collector, key, module);
    }
    collector.finish(&path.display().to_string(), grouping.dump_files)
}

/// The files of the folder by name (not opened), or the one file `path` is.
fn entries(path: &Path, collector: &mut Collector) -> Result<Vec<(String, PathBuf)>, DumpError> {
    let unreadable = |e: std::io::Error| DumpError::Unreadable {
        path: path.to_owned(),
        message: e.to_string(),
    };
    if std::fs::metadata(path).map_err(unreadable)?.is_file() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        return Ok(vec![(name.unwrap_or_default(), path.to_owned())]);
    }
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(path).map_err(unreadable)?.flatten() {
        if entries.len() >= MAX_FILES {
            let text =
                format!("the folder holds over {MAX_FILES} files; the first {MAX_FILES} are read");
            collector.note("dump_files_capped", text);
            break;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        entries.push((name, entry.path()));
    }
    Ok(entries)
}

/// One module: its proto if it gives the plan, else its text files.
fn read_module(collector: &mut Collector, key: &ModuleKey, module: &ModuleFiles<PathBuf>) {
    let proto = module
        .proto
        .as_deref()
        .and_then(|p| load(collector, p, MAX_PROTO_BYTES));
    if let Some((name, bytes)) = &proto {
        if collector.proto(key, DumpFile { name, bytes }) {
            return;
        }
    }
    let t = &module.text;
    let loaded = [
        &t.assignment,
        &t.values,
        &t.live_range,
        &t.hlo,
        &t.usage_report,
    ]
    .map(|p| {
        p.as_deref()
            .and_then(|p| load(collector, p, MAX_TEXT_BYTES))
    });
    let file = |i: usize| {
        loaded
            .get(i)
            .and_then(Option::as_ref)
            .map(|(name, bytes)| DumpFile { name, bytes })
    };
    let text = TextSet {
        assignment: file(0),
        values: file(1),
        live_range: file(2),
        hlo: file(3),
        usage_report: file(4),
    };
    if !collector.text(key, &text) && module.proto.is_none() && t.assignment.is_none() {
        collector.missing(key);
    }
}

/// A file's name and bytes, or `None` with a note when it is unreadable or over `cap`.
fn load(collector: &mut Collector, path: &Path, cap: u64) -> Option<(String, Vec<u8>)> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let read = || -> std::io::Result<(u64, Vec<u8>)> {
        let file = File::open(path)?;
        let size = file.metadata()?.len();
        let mut bytes = Vec::new();
        if size <= cap {
            // Bounded even if the file grows while it is read.
            file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
        }
        Ok((size, bytes))
    };
    match read() {
        Ok((size, bytes)) if size > cap || bytes.len() as u64 > cap => {
            collector.too_large(&name, size.max(bytes.len() as u64), cap);
            None
        }
        Ok((_, bytes)) => Some((name, bytes)),
        Err(e) => {
            collector.unreadable(path, &e.to_string());
            None
        }
    }
}
