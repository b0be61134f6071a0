//! The engine's browser API (wasm-bindgen), used by the web worker in `www/`. It runs
//! the same analysis as the CLI; a dropped `File` is read in slices through
//! `FileReaderSync`, so a multi-gigabyte capture never becomes one `ArrayBuffer`.

use std::cell::{Cell, RefCell};
use std::io;
use std::rc::Rc;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, FileReaderSync};

use crate::analysis::{prepare, Prepared};
use crate::runtime::{self, HostParts, Scan, SecondPart};
use crate::source::ByteSource;
use crate::{analyze, report, Error, Options};

mod compare;
mod source;

use source::{blob_source, BlobSource, BytesSource};

/// Progress reports to the page: `progress(phase, done, total, read)` — the pass's
/// position in the file, its size, and the bytes read so far in all — at most every
/// [`PROGRESS_EVERY_MS`] while reading, and at every phase change.
struct Reporter {
    callback: js_sys::Function,
    phase: RefCell<String>,
    /// End offset of the last read in this phase: how far the pass has got.
    position: Cell<u64>,
    /// Bytes read in all, for the page's MB/s.
    read: Cell<u64>,
    last_ms: Cell<f64>,
    total: u64,
}

const PROGRESS_EVERY_MS: f64 = 50.0;

impl Reporter {
    fn new(callback: js_sys::Function, total: u64) -> Self {
        Self {
            callback,
            phase: RefCell::new("open".into()),
            position: Cell::new(0),
            read: Cell::new(0),
            last_ms: Cell::new(0.0),
            total,
        }
    }

    fn emit(&self) {
        let args = js_sys::Array::of4(
            &JsValue::from_str(&self.phase.borrow()),
            &JsValue::from_f64(self.position.get().min(self.total) as f64),
            &JsValue::from_f64(self.total as f64),
            &JsValue::from_f64(self.read.get() as f64),
        );
        let _ = self.callback.apply(&JsValue::NULL, &args);
    }

    fn phase(&self, phase: &str) {
        *self.phase.borrow_mut() = phase.to_owned();
        // A comparison's phases are prefixed with the run: `before: done`.
        let done = phase == "done" || phase.ends_with(": done");
        self.position.set(if done { self.total } else { 0 });
        self.last_ms.set(js_sys::Date::now());
        self.emit();
    }

    fn read(&self, end: u64, n: u64) {
        self.read.set(self.read.get() + n);
        self.position.set(self.position.get().max(end));
        let now = js_sys::Date::now();
        if now - self.last_ms.get() >= PROGRESS_EVERY_MS {
            self.last_ms.set(now);
            self.emit();
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsOptions {
    module: Option<String>,
    error_text: Option<String>,
    host: Option<String>,
    file_name: Option<String>,
    /// Host planes at least this large are scanned by two workers (default 32 MiB).
    parallel_from_bytes: Option<u64>,
    /// Whether a second worker is ready to scan part of the host plane: only then are
    /// the host plane's lines indexed before the scan.
    #[serde(default)]
    second_worker: bool,
}

impl JsOptions {
    fn from_js(options: JsValue) -> Result<Self, JsValue> {
        if options.is_undefined() || options.is_null() {
            return Ok(Self::default());
        }
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| JsValue::from_str(&format!("bad options: {e}")))
    }

    /// (host, file) names for the report.
    fn names(&self) -> (String, String) {
        let file = self
            .file_name
            .clone()
            .unwrap_or_else(|| "capture.xplane.pb".into());
        let host = self
            .host
            .clone()
            .unwrap_or_else(|| file.trim_end_matches(".xplane.pb").to_owned());
        (host, file)
    }

    /// A worker has one thread: its second scanner, if any, is another worker, driven
    /// part by part ([`Analysis::scan_first_part`]).
    fn analysis(&self) -> Options {
        Options {
            module: self.module.clone(),
            error_text: self.error_text.clone(),
            scan: Scan::OneThread,
        }
    }

    fn parallel_from_bytes(&self) -> u64 {
        self.parallel_from_bytes
            .unwrap_or(runtime::PARALLEL_FROM_BYTES)
    }
}

/// An engine error as a JavaScript `Error` with a `kind` (see [`Error::kind`]).
fn js_error(e: Error) -> JsValue {
    let err = js_sys::Error::new(&e.to_string());
    let _ = js_sys::Reflect::set(
        &err,
        &JsValue::from_str("kind"),
        &JsValue::from_str(e.kind()),
    );
    JsValue::from(err)
}

fn js_report(report: crate::Report) -> Result<JsValue, JsValue> {
    let value = crate::report::json::to_value(&report);
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    match serde::Serialize::serialize(&value, &serializer) {
        Ok(js) => Ok(js),
        // A figure above 2^53 (a capture with absurd sizes) has no exact JavaScript
        // number: go through JSON text, as the CLI's JSON readers do, rather than fail.
        Err(_) => js_sys::JSON::parse(&value.to_string()),
    }
}

fn run(src: &dyn ByteSource, options: JsValue, reporter: &Reporter) -> Result<JsValue, JsValue> {
    let options = JsOptions::from_js(options)?;
    let (host, file) = options.names();
    let mut on_progress = |phase: &str, _done: u64, _total: u64| reporter.phase(phase);
    let host_report =
        analyze(src, &host, &file, &options.analysis(), &mut on_progress).map_err(js_error)?;
    js_report(report(vec![host_report]))
}

/// Analyzes a `File`/`Blob` (in a worker), all in this worker. `options`:
/// `{module, error_text, host, file_name}`. `progress(phase, done, total, read)` is
/// called as the analysis goes: `phase` is `index`, `plan`, `host plane`,
/// `device planes`, `runtime summary`, `diagnosis` or `done`; `done` how far that pass
/// is through the file's `total` bytes; `read` the bytes read so far over all passes.
#[wasm_bindgen(js_name = analyzeBlob)]
pub fn analyze_blob(
    blob: Blob,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    let src = blob_source(blob, progress, &options)?;
    let reporter = Rc::clone(&src.reporter);
    run(&src, options, &reporter)
}

/// Analyzes bytes already in memory (a fetched `?url=` capture, a posted buffer).
#[wasm_bindgen(js_name = analyzeBytes)]
pub fn analyze_bytes(
    bytes: Vec<u8>,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    let reporter = Rc::new(Reporter::new(progress, bytes.len() as u64));
    let src = BytesSource {
        bytes,
        reporter: Rc::clone(&reporter),
    };
    run(&src, options, &reporter)
}

/// One analysis of a `File`/`Blob` in steps, so that a second worker can scan half of
/// a large host plane meanwhile (the browser gives a page no threads it could share
/// memory between without special headers; two workers are the second core):
///
/// ```js
/// const a = new Analysis(blob, options, progress);     // index and plans
/// const split = a.scanFirstPart((work) => other.postMessage({blob, work}));
/// const report = a.finish(split ? await secondPart : undefined);
/// ```
///
/// where the other worker answers with `scanHostPart(blob, work)`. With one worker,
/// `scanReadAhead` may come before `finish` (see `www/slices.js`).
#[wasm_bindgen]
pub struct Analysis {
    src: BlobSource,
    options: JsOptions,
    prepared: Option<Prepared>,
    /// The host plane in two parts, once the first is scanned.
    host_parts: Option<HostParts>,
    /// The host's report (or why there is none), once scanned with slices read ahead
    /// ([`Analysis::scan_read_ahead`]).
    scanned: Option<Result<crate::HostReport, JsValue>>,
    /// The finished report as Markdown, for "Copy as Markdown".
    markdown: String,
    /// The finished report laid out for reading (see `report::view`).
    view: JsValue,
}

#[wasm_bindgen]
impl Analysis {
    /// Indexes the capture and reads its plans.
    #[wasm_bindgen(constructor)]
    pub fn new(
        blob: Blob,
        options: JsValue,
        progress: js_sys::Function,
    ) -> Result<Analysis, JsValue> {
        let src = blob_source(blob, progress, &options)?;
        let options = JsOptions::from_js(options)?;
        let (host, file) = options.names();
        let reporter = Rc::clone(&src.reporter);
        let mut on_progress = |phase: &str, _done: u64, _total: u64| reporter.phase(phase);
        // A plane split with a second worker needs its line positions up front.
        let split_from = options.second_worker.then(|| options.parallel_from_bytes());
        let prepared =
            prepare(&src, &host, &file, split_from, &mut on_progress).map_err(js_error)?;
        Ok(Analysis {
            src,
            options,
            prepared: Some(prepared),
            host_parts: None,
            scanned: None,
            markdown: String::new(),
            view: JsValue::NULL,
        })
    }

    /// Scans the first part of the host plane when it is large enough for two workers,
    /// and returns whether it did. Before scanning, `send_work` is called with the
    /// second part's work (bytes for `scanHostPart` in the other worker).
    #[wasm_bindgen(js_name = scanFirstPart)]
    pub fn scan_first_part(&mut self, send_work: &js_sys::Function) -> Result<bool, JsValue> {
        let Some(prepared) = &self.prepared else {
            return Ok(false);
        };
        let planes = prepared.planes();
        let Some(mut parts) = HostParts::plan(planes, self.options.parallel_from_bytes()) else {
            return Ok(false);
        };
        let work = parts.work(planes).map_err(|e| JsValue::from_str(&e))?;
        send_work.call1(&JsValue::NULL, &js_sys::Uint8Array::from(work.as_slice()))?;
        self.src.reporter.phase("host plane");
        parts.scan_first(&self.src, planes).map_err(js_error)?;
        self.host_parts = Some(parts);
        Ok(true)
    }

    /// Scans the rest of the capture with whole blocks read ahead by the page's reader
    /// worker (`oomlensTakeSlice`), keeping the host's report for
    /// [`Analysis::finish`]. The worker calls this export only through
    /// `WebAssembly.promising` (JSPI), so that the engine can wait for a block on its
    /// way; it returns nothing, as a promising export's raw result is all the page sees.
    #[wasm_bindgen(js_name = scanReadAhead)]
    pub fn scan_read_ahead(&mut self) {
        self.src.read_ahead.set(true);
        let scanned = self.scan_rest(None);
        self.src.read_ahead.set(false);
        self.scanned = Some(scanned);
    }

    /// Finishes the analysis and returns the report. `second` is the other worker's
    /// part (from `scanHostPart`) after `scanFirstPart` returned true; when it is
    /// missing or is not this plane's, the rest of the plane is scanned here.
    pub fn finish(&mut self, second: Option<Vec<u8>>) -> Result<JsValue, JsValue> {
        let host_report = match self.scanned.take() {
            Some(scanned) => scanned?,
            None => self.scan_rest(second.as_deref())?,
        };
        let report = report(vec![host_report]);
        self.markdown = crate::report::markdown::render(&report, MARKDOWN_TOP);
        self.view = js_views(&report)?;
        js_report(report)
    }

    /// The host's report: the host plane's scan (the rest of it after
    /// `scanFirstPart`, with `second` the other worker's part), the device planes, the
    /// runtime and the diagnosis.
    fn scan_rest(&mut self, second: Option<&[u8]>) -> Result<crate::HostReport, JsValue> {
        let prepared = self
            .prepared
            .take()
            .ok_or_else(|| JsValue::from_str("this analysis has finished already"))?;
        let reporter = Rc::clone(&self.src.reporter);
        let mut on_progress = |phase: &str, _done: u64, _total: u64| reporter.phase(phase);
        let mut host_parts = self.host_parts.take();
        if let (Some(parts), Some(answer)) = (host_parts.as_mut(), second) {
            // An answer for another split is left out: its lines are scanned here.
            parts.receive(answer);
        }
        let options = self.options.analysis();
        prepared
            .finish(&self.src, host_parts, &options, &mut on_progress)
            .map_err(js_error)
    }

    /// The finished report as Markdown (empty before [`Analysis::finish`]).
    pub fn markdown(&self) -> String {
        self.markdown.clone()
    }

    /// The finished report laid out for reading, one view per host (null before
    /// [`Analysis::finish`]): the page shows these words and figures, so that it says
    /// what the CLI says.
    pub fn view(&self) -> JsValue {
        self.view.clone()
    }
}

/// The views of a report's hosts, as JavaScript values.
fn js_views(report: &crate::Report) -> Result<JsValue, JsValue> {
    let views: Vec<crate::report::view::View> = report
        .hosts
        .iter()
        .map(|h| crate::report::view::host(h, MARKDOWN_TOP))
        .collect();
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    match serde::Serialize::serialize(&views, &serializer) {
        Ok(js) => Ok(js),
        // A byte count above 2^53 (the chart geometry of a capture with absurd sizes):
        // through JSON text, as for the report.
        Err(_) => {
            let text =
                serde_json::to_string(&views).map_err(|e| JsValue::from_str(&e.to_string()))?;
            js_sys::JSON::parse(&text)
        }
    }
}

/// Live buffers listed in the page's Markdown export.
const MARKDOWN_TOP: usize = 20;

/// The second part of a large host plane's scan, for [`Analysis::finish`] in another
/// worker: `work` is what [`Analysis::scan_first_part`] sent; `options` may hold
/// `discard` (see `Analysis`'s options). Returns the encoded part.
#[wasm_bindgen(js_name = scanHostPart)]
pub fn scan_host_part(blob: Blob, work: Vec<u8>, options: JsValue) -> Result<Vec<u8>, JsValue> {
    let part = SecondPart::from_work(&work)
        .ok_or_else(|| JsValue::from_str("not a host scan part's work"))?;
    let src = blob_source(blob, js_sys::Function::new_no_args(""), &options)?;
    if !part.fits(&src) {
        return Err(JsValue::from_str("the work is for another file"));
    }
    part.scan(&src).map_err(|e| JsValue::from_str(&e))
}

/// Analyzes several inputs together, handed in as bytes: `files` is an array of
/// `{name, bytes}` (`bytes` a `Uint8Array`) — captures, logs or error messages, XLA
/// dump files (`module_NNNN.…`), device memory profiles — told apart by content (see
/// `inputs`); `options`: `{module, error_text}`, `error_text` being text pasted beside
/// them (or alone, with `files` empty). Returns `{report, view, markdown}`: the report
/// model (as `analyzeBytes`), the views the page shows (as `Analysis.view()`), and the
/// report as Markdown. Errors carry a `kind` (`no_oom_message`, `unknown_input`, …).
/// Every file is held in memory: a large capture is better read with `Analysis`.
#[wasm_bindgen(js_name = analyzeFiles)]
pub fn analyze_files(files: js_sys::Array, options: JsValue) -> Result<JsValue, JsValue> {
    let options = JsOptions::from_js(options)?;
    let mut owned: Vec<(String, Vec<u8>)> = Vec::with_capacity(files.length() as usize);
    for file in files.iter() {
        let name = js_sys::Reflect::get(&file, &JsValue::from_str("name"))?
            .as_string()
            .unwrap_or_default();
        let bytes = js_sys::Reflect::get(&file, &JsValue::from_str("bytes"))?;
        let bytes = js_sys::Uint8Array::new(&bytes).to_vec();
        owned.push((name, bytes));
    }
    let borrowed: Vec<(&str, &[u8])> = owned
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let report = crate::analyze_input_bytes(&borrowed, &options.analysis()).map_err(js_error)?;
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &JsValue::from_str("view"), &js_views(&report)?)?;
    js_sys::Reflect::set(
        &out,
        &JsValue::from_str("markdown"),
        &JsValue::from_str(&crate::report::markdown::render(&report, MARKDOWN_TOP)),
    )?;
    js_sys::Reflect::set(&out, &JsValue::from_str("report"), &js_report(report)?)?;
    Ok(out.into())
}

/// What an input is, from its name and first bytes (see `inputs::classify`):
/// `capture`, `device_profile`, `dump_file`, `text`, `empty` or `unknown`, so that the
/// page can say what it was given before analyzing it.
#[wasm_bindgen(js_name = classifyInput)]
pub fn classify_input(name: &str, head: &[u8]) -> String {
    match crate::inputs::classify(name, head) {
        crate::inputs::Kind::Capture => "capture",
        crate::inputs::Kind::DeviceProfile => "device_profile",
        crate::inputs::Kind::DumpFile => "dump_file",
        crate::inputs::Kind::Text => "text",
        crate::inputs::Kind::Empty => "empty",
        crate::inputs::Kind::Unknown(_) => "unknown",
    }
    .into()
}

/// A host's summary row as [`analyze_host`] returns it and [`compare_hosts`] takes it:
/// the row, and the host's profile start (ns since the epoch) as a decimal string,
/// since those figures pass JavaScript's exact integers.
#[derive(serde::Serialize, Deserialize)]
struct JsHostRow {
    row: crate::report::model::HostSummary,
    profile_start_ns: Option<String>,
}

/// Serializes `value` for JavaScript; a figure above 2^53 goes through JSON text.
fn to_js<T: serde::Serialize>(value: &T) -> Result<JsValue, JsValue> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    match value.serialize(&serializer) {
        Ok(js) => Ok(js),
        Err(_) => serde_json::to_string(value)
            .map_err(|e| JsValue::from_str(&e.to_string()))
            .and_then(|text| js_sys::JSON::parse(&text)),
    }
}

/// One host of a folder of several (in a worker of the page's pool): the capture
/// analyzed, reduced to its summary row, and its report dropped, so that the page's
/// memory does not grow with the number of hosts (`docs/hosts.md`). `options` as for
/// [`analyze_blob`] (`host`, `file_name`, `module`, `error_text`, `discard`). Returns
/// `{row, profile_start_ns}` for [`compare_hosts`]: a capture the engine cannot read
/// is a `failed` row with its one-line error (this does not throw for it), exactly
/// the row `oomlens FOLDER --format json` writes in `hosts_summary[]`.
#[wasm_bindgen(js_name = analyzeHost)]
pub fn analyze_host(
    blob: Blob,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    let src = blob_source(blob, progress, &options)?;
    let reporter = Rc::clone(&src.reporter);
    let opts = JsOptions::from_js(options)?;
    let (host, file) = opts.names();
    let mut on_progress = |phase: &str, _done: u64, _total: u64| reporter.phase(phase);
    let (row, start) = crate::hosts::analyze_host(
        &src,
        &host,
        &file,
        &opts.analysis(),
        &mut on_progress,
        &mut |_| {},
    );
    to_js(&JsHostRow {
        row,
        profile_start_ns: start.map(|s| s.to_string()),
    })
}

/// What [`compare_hosts`] returns.
#[derive(serde::Serialize)]
struct JsHostsSummary {
    /// The rows compared, in the order given: `hosts_summary[]` of
    /// `oomlens FOLDER --format json`.
    hosts_summary: Vec<crate::report::model::HostSummary>,
    /// The summary laid out for reading (`report::view::hosts`): what the CLI prints.
    view: crate::report::view::HostsView,
    /// The summary as Markdown (`oomlens FOLDER --format markdown`).
    markdown: String,
}

/// The cross-host summary of a folder: `rows` are [`analyze_host`]'s answers, one per
/// host file in host order. Marks the host that ran out first and the hosts that
/// differ from the rest, as `oomlens FOLDER` does, and returns `{hosts_summary, view,
/// markdown}`.
#[wasm_bindgen(js_name = compareHosts)]
pub fn compare_hosts(rows: JsValue) -> Result<JsValue, JsValue> {
    let rows: Vec<JsHostRow> = serde_wasm_bindgen::from_value(rows)
        .map_err(|e| JsValue::from_str(&format!("not rows from analyzeHost: {e}")))?;
    let rows = crate::hosts::summary(
        rows.into_iter()
            .map(|r| {
                let start = r.profile_start_ns.and_then(|s| s.parse().ok());
                (r.row, start)
            })
            .collect(),
    );
    to_js(&JsHostsSummary {
        view: crate::report::view::hosts(&rows),
        markdown: crate::report::markdown::render_summary(&rows),
        hosts_summary: rows,
    })
}

/// Host planes at least this large are worth a second worker (the engine's default
/// for the `parallel_from_bytes` option).
#[wasm_bindgen(js_name = parallelFromBytes)]
pub fn parallel_from_bytes() -> f64 {
    runtime::PARALLEL_FROM_BYTES as f64
}

/// The engine's version, for the page footer.
#[wasm_bindgen]
pub fn version() -> String {
    crate::tool_name()
}
