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
}

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
    // Natively the host plane is shared between two threads without an index of its
    // lines (see `runtime::scan_host`): nothing is walked ahead.
    let mut prepared = prepare(src, host, file, None, progress)?;
    progress("host plane", 0, src.len());
    let scan = prepared.scan_host(src)?;
    let share_from = runtime::device_share_from();
    prepared.finish_joined(src, scan, options, joined, share_from, progress)
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

    /// Pass one over the host planes ([`runtime::scan_host`]). A host plane whose
    /// tables were read from its end is confirmed by this walk; one that is not (the
    /// walk met its tables elsewhere, or damage) is opened again by walking its lines
    /// and the scan is done again, so that nothing read with a wrong guess remains.
    pub fn scan_host(&mut self, src: &dyn ByteSource) -> Result<runtime::scan::RuntimeScan, Error> {
        let scan = runtime::scan_host(src, &self.planes)?;
        if self.confirm_tables(src)? {
            return runtime::scan_host(src, &self.planes);
        }
        Ok(scan)
    }

    /// After a walk of the host planes (one scanner's, or the second of two sharing a
    /// plane): confirms the tables read from their ends, and opens again by walking the
    /// planes whose tables the walk did not meet where they were taken to be. True if
    /// any was opened again: a scan done with them must be done again.
    pub fn confirm_tables(&mut self, src: &dyn ByteSource) -> Result<bool, Error> {
        let mut again = false;
        for plane in &mut self.planes {
            if !plane.confirm_tables() {
                *plane = plane.reopen(src)?;
                again = true;
            }
        }
        Ok(again)
    }

    /// The rest of the pipeline, given pass one over the host planes (from
    /// [`Prepared::scan_host`], or its parts merged): device planes, the runtime
    /// summary, module selection and diagnosis.
    pub fn finish(
        self,
        src: &dyn ByteSource,
        scan: runtime::scan::RuntimeScan,
        options: &Options,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        let share_from = runtime::device_share_from();
        self.finish_sharing(src, scan, options, share_from, progress)
    }

    /// [`Prepared::finish`], with device planes of at least `share_from` bytes shared
    /// by two threads where that cannot change the result (see
    /// [`runtime::scan_devices`]).
    pub fn finish_sharing(
        self,
        src: &dyn ByteSource,
        scan: runtime::scan::RuntimeScan,
        options: &Options,
        share_from: Option<u64>,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        self.finish_joined(src, scan, options, &Joined::default(), share_from, progress)
    }

    /// [`Prepared::finish_sharing`], with evidence joined to the report (see [`join`]).
    pub fn finish_joined(
        self,
        src: &dyn ByteSource,
        scan: runtime::scan::RuntimeScan,
        options: &Options,
        joined: &Joined,
        share_from: Option<u64>,
        progress: Progress<'_>,
    ) -> Result<HostReport, Error> {
        let Prepared {
            capture,
            report,
            planes,
            device_planes,
            slots,
        } = self;
        let total = src.len();
        progress("device planes", 0, total);
        let scan = runtime::scan_devices(src, &device_planes, scan, share_from)?;
        assemble::report(
            src, &capture, report, &planes, &slots, scan, options, joined, progress,
        )
    }
}

/// Indexes the capture and reads its plans. Host planes of at least `split_from`
/// bytes have their lines indexed now, for the page, which hands half of them to a
/// second worker; the others have their tables read from their end (their lines are
/// walked once, by [`Prepared::scan_host`], natively by two threads sharing a large
/// plane without an index).
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

    progress("plan", 0, total);
    let entries = plan::find_modules(&planes);
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

/// `jit_f` from `jit_f(12)`.
fn label_name(label: &str) -> &str {
    label.rsplit_once('(').map(|(n, _)| n).unwrap_or(label)
}
