//! The pipeline for one host file: capture index → plans and runtime → module
//! selection → diagnosis → [`HostReport`]. Renderers only read what this returns.

mod assemble;
pub mod join;

use crate::capture::{CaptureIndex, Plane, PlaneRef};
use crate::diagnosis;
use crate::error::Error;
use crate::plan::{self, METADATA_PLANE};
use crate::report::model::{HostReport, ModuleReport, Note};
use crate::runtime;
use crate::source::ByteSource;
use join::Joined;

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A module to report on, by label (`jit_step(12)`) or name (`jit_step`).
    pub module: Option<String>,
    /// The text of the out-of-memory error the user got, if pasted.
    pub error_text: Option<String>,
    /// How the runtime scan divides its work between threads (two natively, from the
    /// sizes where that pays; see [`runtime::Scan`]). The report is the same whatever
    /// it says.
    pub scan: runtime::Scan,
}

/// The plane that holds the profile's own stats (`docs/xplane.md#event-time`).
const TASK_ENVIRONMENT: &str = "Task Environment";

/// Progress callback: (phase, bytes done, bytes total).
pub type Progress<'a> = &'a mut dyn FnMut(&str, u64, u64);

/// Analyzes one capture file.
pub fn analyze(
    src: &dyn ByteSource,
    host: &str,
    file: &str,
    options: &Options,
    progress: Progress<'_>,
) -> Result<HostReport, Error> {
    analyze_joined(src, host, file, options, &Joined::default(), progress)
}

/// [`analyze`], with evidence given beside the capture (an error message, an XLA dump,
/// device memory profiles) joined to its report (see [`join`]).
pub fn analyze_joined(
    src: &dyn ByteSource,
    host: &str,
    file: &str,
    options: &Options,
    joined: &Joined,
    progress: Progress<'_>,
) -> Result<HostReport, Error> {
    // Natively two threads share a large host plane without an index of its lines
    // (see `runtime::Scan`): nothing is walked ahead.
    let prepared = prepare(src, host, file, None, progress)?;
    prepared.finish_joined(src, None, options, joined, progress)
}

/// A capture indexed and its plans read: everything before the runtime scan. It
/// borrows nothing, so a caller that scans the host plane in parts elsewhere (the
/// page's second worker) can keep it between steps.
pub struct Prepared {
    capture: CaptureIndex,
    report: HostReport,
    /// Plan and host planes, metadata only.
    planes: Vec<Plane>,
    /// Opened one at a time by the device scan.
    device_planes: Vec<PlaneRef>,
    /// What became of each plane of the capture, in order.
    slots: Vec<Slot>,
}

/// A plane of the capture, as [`Prepared`] holds it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    /// Opened by the device scan, which counts its lines.
    Device,
    /// `planes[i]`.
    Read(usize),
    Unreadable,
}

impl Prepared {
    /// The planes whose metadata has been read (all but the device planes).
    pub fn planes(&self) -> &[Plane] {
        &self.planes
    }

    /// The rest of the pipeline: the runtime scan (host planes, with the guess of
    /// tables read from a plane's end confirmed or the plane read again, then device
    /// planes, with the threads `options.scan` allows), the runtime summary, module
    /// selection and diagnosis. `host_parts`: the host plane scanned in two parts
    /// already (the page's two workers, see [`runtime::HostParts`]); they are merged
    /// and the scan goes on from there.
    pub fn finish(
        self,
        src: &dyn ByteSource,
        host_parts: Option<runtime::HostParts>,
        options: &Options,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        self.finish_joined(src, host_parts, options, &Joined::default(), progress)
    }

    /// [`Prepared::finish`], with evidence joined to the report (see [`join`]).
    pub fn finish_joined(
        self,
        src: &dyn ByteSource,
        host_parts: Option<runtime::HostParts>,
        options: &Options,
        joined: &Joined,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        let Prepared {
            capture,
            report,
            mut planes,
            device_planes,
            slots,
        } = self;
        let scan = match host_parts {
            None => {
                runtime::scan_capture(src, &mut planes, &device_planes, options.scan, progress)?
            }
            Some(parts) => {
                parts.finish(src, &mut planes, &device_planes, options.scan, progress)?
            }
        };
        assemble::report(
            src, &capture, report, &planes, &slots, scan, options, joined, progress,
        )
    }
}

/// Indexes the capture and reads its plans. Host planes of at least `split_from`
/// bytes have their lines indexed now, for the page, which hands half of them to a
/// second worker; the others have their tables read from their end (their lines are
/// walked once, by the runtime scan in [`Prepared::finish`], which confirms the guess).
pub fn prepare(
    src: &dyn ByteSource,
    host: &str,
    file: &str,
    split_from: Option<u64>,
    progress: Progress<'_>,
) -> Result<Prepared, Error> {
    let total = src.len();
    progress("index", 0, total);
    let capture = CaptureIndex::scan(src)?;
    let mut report = HostReport {
        host: host.to_owned(),
        file: file.to_owned(),
        file_bytes: total,
        ..Default::default()
    };
    // The plan and host planes' metadata is read once and shared by every stage below;
    // device planes (often many, each with its own kernel names) are opened one at a
    // time by the runtime scan, so memory does not grow with their number.
    let mut planes: Vec<Plane> = Vec::new();
    let mut device_planes: Vec<PlaneRef> = Vec::new();
    let mut slots: Vec<Slot> = Vec::with_capacity(capture.planes.len());
    for p in &capture.planes {
        if p.name.starts_with(runtime::DEVICE_PLANE_PREFIX) {
            device_planes.push(p.clone());
            slots.push(Slot::Device);
            continue;
        }
        let tables_first =
            p.name == runtime::HOST_PLANE && split_from.is_none_or(|from| p.len < from);
        let opened = if tables_first {
            Plane::open_tables_first(src, p)
        } else {
            Plane::open(src, p)
        };
        match opened {
            Ok(plane) => {
                slots.push(Slot::Read(planes.len()));
                planes.push(plane);
            }
            Err(e) => {
                slots.push(Slot::Unreadable);
                report.notes.push(Note {
                    id: "plane_unreadable".into(),
                    text: format!(
                        "plane {} could not be read ({e}); the report leaves it out",
                        p.name
                    ),
                });
            }
        }
    }

    report.profile_start_ns = profile_start(&planes);
    progress("plan", 0, total);
    read_modules(src, &planes, &mut report);
    if capture.find(METADATA_PLANE).next().is_none() || report.modules.is_empty() {
        report.notes.push(Note {
            id: "no_plan_in_capture".into(),
            text: diagnosis::NO_PLAN_TEXT.into(),
        });
    }

    Ok(Prepared {
        capture,
        report,
        planes,
        device_planes,
        slots,
    })
}

/// The profile's absolute start, to compare hosts' times (docs/hosts.md).
fn profile_start(planes: &[Plane]) -> Option<u64> {
    planes
        .iter()
        .find(|p| p.name == TASK_ENVIRONMENT)
        .and_then(|p| match p.plane_stat("profile_start_time")? {
            crate::capture::StatValue::Uint(v) => Some(*v),
            crate::capture::StatValue::Int(v) => u64::try_from(*v).ok(),
            _ => None,
        })
}

/// Each module's compiled plan in the capture, analyzed into the report; a module
/// that cannot be read is noted.
fn read_modules(src: &dyn ByteSource, planes: &[Plane], report: &mut HostReport) {
    let entries = plan::find_modules(planes);
    for entry in &entries {
        match entry.decode(src) {
            Ok(hlo) => {
                let name = hlo
                    .hlo_module
                    .as_ref()
                    .map(|m| m.name.clone())
                    .unwrap_or_default();
                let name = if name.is_empty() {
                    label_name(&entry.label).to_owned()
                } else {
                    name
                };
                report.modules.push(ModuleReport {
                    label: format!("{name}({})", entry.program_id),
                    name,
                    program_id: entry.program_id,
                    executions: 0,
                    plan: plan::analyze(&hlo),
                    plan_source: None,
                });
            }
            Err(why) => report.notes.push(Note {
                id: "module_unreadable".into(),
                text: format!(
                    "module {} could not be read: {why}; the other modules are reported",
                    entry.label
                ),
            }),
        }
    }
}

/// `jit_f` from `jit_f(12)`.
fn label_name(label: &str) -> &str {
    label.rsplit_once('(').map(|(n, _)| n).unwrap_or(label)
}
