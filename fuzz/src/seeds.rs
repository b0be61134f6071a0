//! Writes seed corpora for the fuzz targets from real captures, at run time (the
//! captures are third-party data and are not copied into the repository):
//!
//!     cargo run --release --bin seeds -- ../../shared/captures corpus
//!
//! `capture` and `analyze` get each capture trimmed to a few lines and events per
//! plane (with its smallest module plans), single planes, and prefixes of those;
//! `hlo` gets the modules' HloProto bytes.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use oomlens::proto::xplane::{XEvent, XPlane, XSpace, XStat};
use prost::Message;

const LINES_KEPT: usize = 6;
const EVENTS_KEPT: usize = 12;
const MODULES_KEPT: usize = 2;
const HLO_SEED_MAX: usize = 96 << 10;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let captures = PathBuf::from(args.get(1).map(String::as_str).unwrap_or("../../shared/captures"));
    let out = PathBuf::from(args.get(2).map(String::as_str).unwrap_or("corpus"));
    for target in ["capture", "analyze", "hlo"] {
        std::fs::create_dir_all(out.join(target)).expect("corpus dir");
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&captures)
        .expect("captures dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".xplane.pb"))
        .collect();
    files.sort();
    let mut hlo_seeds: Vec<Vec<u8>> = Vec::new();
    for path in &files {
        let stem = path.file_name().unwrap().to_string_lossy().replace(".xplane.pb", "");
        let bytes = std::fs::read(path).expect("capture");
        let space = XSpace::decode(&bytes[..]).expect("decodes");
        collect_hlo(&space, &mut hlo_seeds);
        let trimmed = trim(&space);
        let whole = trimmed.encode_to_vec();
        write(&out, &format!("{stem}_trimmed"), &whole);
        for (i, cut) in [whole.len() / 4, whole.len() / 2, whole.len() * 3 / 4].iter().enumerate() {
            write(&out, &format!("{stem}_prefix{i}"), &whole[..*cut]);
        }
        for (i, plane) in trimmed.planes.iter().enumerate() {
            let one = XSpace {
                planes: vec![plane.clone()],
                ..Default::default()
            };
            write(&out, &format!("{stem}_plane{i}"), &one.encode_to_vec());
        }
    }
    hlo_seeds.sort_by_key(|h| h.len());
    hlo_seeds.dedup();
    let mut n = 0;
    for (i, h) in hlo_seeds.iter().enumerate() {
        if h.len() <= HLO_SEED_MAX {
            std::fs::write(out.join("hlo").join(format!("module{i:03}")), h).expect("write");
            n += 1;
        }
    }
    eprintln!("{} captures, {} hlo seeds", files.len(), n);
}

fn write(out: &Path, name: &str, bytes: &[u8]) {
    for target in ["capture", "analyze"] {
        std::fs::write(out.join(target).join(name), bytes).expect("write");
    }
}

fn hlo_stat_id(plane: &XPlane) -> Option<i64> {
    plane
        .stat_metadata
        .values()
        .find(|m| m.name == "Hlo Proto")
        .map(|m| m.id)
}

fn hlo_bytes(stat: &XStat) -> Option<&[u8]> {
    match &stat.value {
        Some(oomlens::proto::xplane::x_stat::Value::BytesValue(b)) => Some(b),
        _ => None,
    }
}

fn collect_hlo(space: &XSpace, out: &mut Vec<Vec<u8>>) {
    for plane in &space.planes {
        let Some(id) = hlo_stat_id(plane) else { continue };
        for meta in plane.event_metadata.values() {
            for stat in meta.stats.iter().filter(|s| s.metadata_id == id) {
                if let Some(b) = hlo_bytes(stat) {
                    out.push(b.to_vec());
                }
            }
        }
    }
}

fn note_stat(stat: &XStat, ids: &mut HashSet<i64>) {
    ids.insert(stat.metadata_id);
    if let Some(oomlens::proto::xplane::x_stat::Value::RefValue(r)) = stat.value {
        ids.insert(r as i64);
    }
}

/// Keeps a few lines and events per plane (allocator and launch events first), the
/// smallest module plans, and the metadata those refer to.
fn trim(space: &XSpace) -> XSpace {
    let mut out = space.clone();
    for plane in &mut out.planes {
        let hlo_id = hlo_stat_id(plane);
        if let Some(hlo_id) = hlo_id {
            let mut modules: Vec<(usize, i64)> = plane
                .event_metadata
                .values()
                .filter_map(|m| {
                    let s = m.stats.iter().find(|s| s.metadata_id == hlo_id)?;
                    Some((hlo_bytes(s)?.len(), m.id))
                })
                .collect();
            modules.sort();
            let keep: HashSet<i64> = modules.iter().take(MODULES_KEPT).map(|m| m.1).collect();
            plane.event_metadata.retain(|id, _| keep.contains(id));
        }
        let interesting = |e: &XEvent, plane: &XPlane| {
            plane
                .event_metadata
                .get(&e.metadata_id)
                .map(|m| m.name.contains("Memory") || m.name.contains("Execute"))
                .unwrap_or(false)
        };
        let names = plane.clone();
        plane.lines.truncate(LINES_KEPT);
        for line in &mut plane.lines {
            let (mut first, rest): (Vec<XEvent>, Vec<XEvent>) =
                line.events.drain(..).partition(|e| interesting(e, &names));
            first.truncate(EVENTS_KEPT);
            first.extend(rest.into_iter().take(EVENTS_KEPT));
            first.sort_by_key(|e| match e.data {
                Some(oomlens::proto::xplane::x_event::Data::OffsetPs(o)) => o,
                _ => 0,
            });
            line.events = first;
        }
        let mut used_events: HashSet<i64> = HashSet::new();
        let mut used_stats: HashSet<i64> = HashSet::new();
        for line in &plane.lines {
            for e in &line.events {
                used_events.insert(e.metadata_id);
                for s in &e.stats {
                    note_stat(s, &mut used_stats);
                }
            }
        }
        if hlo_id.is_none() {
            plane.event_metadata.retain(|id, _| used_events.contains(id));
        }
        for m in plane.event_metadata.values() {
            for s in &m.stats {
                note_stat(s, &mut used_stats);
            }
        }
        for s in &plane.stats {
            note_stat(s, &mut used_stats);
        }
        plane.stat_metadata.retain(|id, _| used_stats.contains(id));
    }
    out
}
