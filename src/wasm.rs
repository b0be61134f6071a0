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

/// A `Blob` (a dropped `File`) read with synchronous slices; only valid in a worker.
/// Slices are whole aligned blocks, and the last few are kept: each `FileReaderSync`
/// call costs far more than a `pread`, so the engine's small reads (a field key after
/// skipping a line) must not each become one. Memory stays flat whatever the file's
/// size: at most [`CACHED_BLOCKS`] × [`BLOCK`].
struct BlobSource {
    blob: Blob,
    reader: FileReaderSync,
    len: u64,
    reporter: Rc<Reporter>,
    /// (start offset, its bytes), most recently used last.
    blocks: RefCell<Vec<(u64, Vec<u8>)>>,
    /// Where the last slice read from the blob ended.
    last_end: Cell<u64>,
    /// Given each slice's `ArrayBuffer` once copied (`options.discard`): the worker
    /// transfers it into a closed `MessagePort`, which frees it at once (see
    /// `www/worker.js`).
    discard: Option<js_sys::Function>,
}

/// Size of one slice read from the blob when reading on through the file. Each
/// `FileReaderSync` call costs about 0.6 ms plus 1.5 ms per MiB in Chromium: large
/// slices approach its best throughput.
const BLOCK: u64 = 16 << 20;
/// Size of the slice read for a small read far from the last one (the next line's
/// header after skipping a long line): a whole block there would read what is skipped.
const SMALL_BLOCK: u64 = 64 << 10;
/// How far past the last block a small read must land to be read as a small block.
const FAR: u64 = 2 << 20;
/// Blocks kept: a window straddles at most two, plus one for a jump back.
const CACHED_BLOCKS: usize = 3;

impl BlobSource {
    fn read_slice(&self, start: u64, end: u64) -> io::Result<Vec<u8>> {
        let slice = self
            .blob
            .slice_with_f64_and_f64(start as f64, end as f64)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let array = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let bytes = js_sys::Uint8Array::new(&array).to_vec();
        if let Some(discard) = &self.discard {
            let _ = discard.call1(&JsValue::NULL, &array);
        }
        self.reporter.read(end, bytes.len() as u64);
        self.last_end.set(end);
        Ok(bytes)
    }

    /// Copies from a cached block holding `offset` (reading one if none does) into
    /// `buf`; returns how many bytes it copied.
    fn copy_from_block(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut blocks = self.blocks.borrow_mut();
        let holds = |(start, bytes): &(u64, Vec<u8>)| {
            offset >= *start && offset < *start + bytes.len() as u64
        };
        let at = match blocks.iter().position(holds) {
            Some(i) => {
                let hit = blocks.remove(i);
                blocks.push(hit);
                blocks.len() - 1
            }
            None => {
                let far = offset > self.last_end.get().saturating_add(FAR);
                let size = if far && (buf.len() as u64) < SMALL_BLOCK {
                    SMALL_BLOCK
                } else {
                    BLOCK
                };
                let start = offset - offset % size;
                let end = (start + size).min(self.len);
                if blocks.len() >= CACHED_BLOCKS {
                    blocks.remove(0);
                }
                blocks.push((start, self.read_slice(start, end)?));
                blocks.len() - 1
            }
        };
        let (start, block) = &blocks[at];
        let from = (offset - start) as usize;
        let n = buf.len().min(block.len().saturating_sub(from));
        buf[..n].copy_from_slice(&block[from..from + n]);
        Ok(n)
    }
}

impl ByteSource for BlobSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.len);
        let mut done = 0usize;
        let mut at = offset;
        while at < end {
            let want = (end - at) as usize;
            let n = self.copy_from_block(at, &mut buf[done..done + want])?;
            if n == 0 {
                break;
            }
            done += n;
            at += n as u64;
        }
        Ok(done)
    }
}

/// Bytes already in memory, with the same progress reports.
struct BytesSource {
    bytes: Vec<u8>,
    reporter: Rc<Reporter>,
}

impl ByteSource for BytesSource {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = ByteSource::read_at(self.bytes.as_slice(), offset, buf)?;
        self.reporter.read(offset + n as u64, n as u64);
        Ok(n)
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

/// `discard`: `options.discard`, if it is a function.
fn blob_source(
    blob: Blob,
    progress: js_sys::Function,
    options: &JsValue,
) -> Result<BlobSource, JsValue> {
    let discard = js_sys::Reflect::get(options, &JsValue::from_str("discard"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let reader = FileReaderSync::new()?;
    let len = blob.size() as u64;
    Ok(BlobSource {
        blob,
        reader,
        len,
        reporter: Rc::new(Reporter::new(progress, len)),
        blocks: RefCell::new(Vec::with_capacity(CACHED_BLOCKS)),
        last_end: Cell::new(0),
        discard,
    })
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
/// where the other worker answers with `scanHostPart(blob, work)`.
#[wasm_bindgen]
pub struct Analysis {
    src: BlobSource,
    options: JsOptions,
    prepared: Option<Prepared>,
    /// The host plane in two parts, once the first is scanned.
    host_parts: Option<HostParts>,
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

    /// Finishes the analysis and returns the report. `second` is the other worker's
    /// part (from `scanHostPart`) after `scanFirstPart` returned true; when it is
    /// missing or is not this plane's, the rest of the plane is scanned here.
    pub fn finish(&mut self, second: Option<Vec<u8>>) -> Result<JsValue, JsValue> {
        let prepared = self
            .prepared
            .take()
            .ok_or_else(|| JsValue::from_str("this analysis has finished already"))?;
        let reporter = Rc::clone(&self.src.reporter);
        let mut on_progress = |phase: &str, _done: u64, _total: u64| reporter.phase(phase);
        let mut host_parts = self.host_parts.take();
        if let (Some(parts), Some(answer)) = (host_parts.as_mut(), second.as_deref()) {
            // An answer for another split is left out: its lines are scanned here.
            parts.receive(answer);
        }
        let options = self.options.analysis();
        let host_report = prepared
            .finish(&self.src, host_parts, &options, &mut on_progress)
            .map_err(js_error)?;
        let report = report(vec![host_report]);
        self.markdown = crate::report::markdown::render(&report, MARKDOWN_TOP);
        self.view = js_views(&report)?;
        js_report(report)
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

/// Options of [`compare_blobs`] and [`compare_bytes`].
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsCompareOptions {
    /// The module to compare, by name or label (`jit_step(12)`: the other run's module
    /// of that name is taken, as program ids change between runs).
    module: Option<String>,
    /// File names for the two reports (`before.xplane.pb`, `after.xplane.pb` when absent).
    before_file_name: Option<String>,
    after_file_name: Option<String>,
    /// How many changed buffers the view and the Markdown list (default 20).
    top: Option<usize>,
    /// Each run's folder name, when the page knows it (a dropped folder's path): it tells
    /// the runs apart when their files share a name.
    before_run: Option<String>,
    after_run: Option<String>,
}

/// What [`compare_blobs`] and [`compare_bytes`] return.
#[derive(serde::Serialize)]
struct Compared {
    /// The comparison, exactly as `oomlens diff --format json` writes it.
    diff: serde_json::Value,
    /// The comparison laid out for reading (see `report::diff_view`).
    view: crate::report::diff_view::DiffReportView,
    /// The comparison as Markdown, for "Copy as Markdown".
    markdown: String,
}

/// Both runs analyzed and compared, as the CLI's `oomlens diff` does.
fn compare_sources(
    sources: [(&dyn ByteSource, &Reporter); 2],
    options: JsValue,
) -> Result<JsValue, JsValue> {
    use crate::diff::{compare_runs, DiffOptions, Run};
    let options: JsCompareOptions = if options.is_undefined() || options.is_null() {
        JsCompareOptions::default()
    } else {
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| JsValue::from_str(&format!("bad options: {e}")))?
    };
    let files = [
        options
            .before_file_name
            .clone()
            .unwrap_or_else(|| "before.xplane.pb".into()),
        options
            .after_file_name
            .clone()
            .unwrap_or_else(|| "after.xplane.pb".into()),
    ];
    let mut analyze_run = |run: Run, module: Option<&str>| {
        let i = usize::from(run == Run::After);
        let (src, reporter) = sources[i];
        let file = &files[i];
        let host = file.trim_end_matches(".xplane.pb");
        let mut on_progress = |phase: &str, _done: u64, _total: u64| {
            reporter.phase(&format!("{}: {phase}", run.name()))
        };
        let analysis = Options {
            module: module.map(str::to_owned),
            error_text: None,
            scan: Scan::OneThread,
        };
        analyze(src, host, file, &analysis, &mut on_progress).map(|h| report(vec![h]))
    };
    let diff_options = DiffOptions {
        module: options.module.clone(),
        scan: Scan::OneThread,
        runs: [options.before_run.clone(), options.after_run.clone()],
    };
    let diff = compare_runs(&mut analyze_run, &diff_options).map_err(js_error)?;
    js_compared(&diff, options.top.unwrap_or(MARKDOWN_TOP))
}

/// `{diff, view, markdown}` of a comparison, as JavaScript values.
fn js_compared(diff: &crate::diff::model::DiffReport, top: usize) -> Result<JsValue, JsValue> {
    let compared = Compared {
        diff: crate::report::diff_json::to_value(diff),
        view: crate::report::diff_view::report(diff, top),
        markdown: crate::report::diff_markdown::render(diff, top),
    };
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    match serde::Serialize::serialize(&compared, &serializer) {
        Ok(js) => Ok(js),
        // A figure above 2^53 has no exact JavaScript number: go through JSON text.
        Err(_) => serde_json::to_string(&compared)
            .map_err(|e| JsValue::from_str(&e.to_string()))
            .and_then(|text| js_sys::JSON::parse(&text)),
    }
}

/// One run of a comparison analyzed in its own worker, so that the page analyzes both
/// runs at once: `run` is `before` or `after`; `options`: `{module, file_name, host,
/// discard}`. A `module` label this run does not have is taken by its name, as
/// `oomlens diff` does; errors name the run. `progress` as for [`analyze_blob`], with
/// `phase` prefixed by the run (`after: plan`). Returns the report as JSON text (the
/// engine's own form, exact for every figure), for [`compare_reports`].
#[wasm_bindgen(js_name = analyzeRun)]
pub fn analyze_run_blob(
    blob: Blob,
    run: &str,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<String, JsValue> {
    use crate::diff::Run;
    let which = match run {
        "before" => Run::Before,
        "after" => Run::After,
        other => {
            return Err(JsValue::from_str(&format!(
                "run must be before or after, not {other:?}"
            )))
        }
    };
    let src = blob_source(blob, progress, &options)?;
    let reporter = Rc::clone(&src.reporter);
    let opts = JsOptions::from_js(options)?;
    let file = opts
        .file_name
        .clone()
        .unwrap_or_else(|| format!("{}.xplane.pb", which.name()));
    let host = opts
        .host
        .clone()
        .unwrap_or_else(|| file.trim_end_matches(".xplane.pb").to_owned());
    let mut analyze_one = |run: Run, module: Option<&str>| {
        let mut on_progress = |phase: &str, _done: u64, _total: u64| {
            reporter.phase(&format!("{}: {phase}", run.name()))
        };
        let analysis = Options {
            module: module.map(str::to_owned),
            error_text: None,
            scan: Scan::OneThread,
        };
        analyze(&src, &host, &file, &analysis, &mut on_progress).map(|h| report(vec![h]))
    };
    let report = crate::diff::analyze_run(&mut analyze_one, which, opts.module.as_deref())
        .map_err(js_error)?;
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// One run of a comparison made of inputs other than a capture alone — the error message
/// pasted (`options.error_text`) or in a file, logs, XLA dump files, device memory
/// profiles, captures beside them — joined as [`analyze_files`] joins them. `files`:
/// `[{name, bytes}]`; `run`: `before` or `after`; `options`: `{module, error_text}`.
/// Returns the report as JSON text, for [`compare_reports`], as [`analyze_run_blob`].
#[wasm_bindgen(js_name = analyzeFilesRun)]
pub fn analyze_files_run(
    files: js_sys::Array,
    run: &str,
    options: JsValue,
) -> Result<String, JsValue> {
    use crate::diff::Run;
    let which = match run {
        "before" => Run::Before,
        "after" => Run::After,
        other => {
            return Err(JsValue::from_str(&format!(
                "run must be before or after, not {other:?}"
            )))
        }
    };
    let opts = JsOptions::from_js(options)?;
    let mut owned: Vec<(String, Vec<u8>)> = Vec::with_capacity(files.length() as usize);
    for file in files.iter() {
        let name = js_sys::Reflect::get(&file, &JsValue::from_str("name"))?
            .as_string()
            .unwrap_or_default();
        let bytes = js_sys::Reflect::get(&file, &JsValue::from_str("bytes"))?;
        owned.push((name, js_sys::Uint8Array::new(&bytes).to_vec()));
    }
    let borrowed: Vec<(&str, &[u8])> = owned
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let base = opts.analysis();
    let mut analyze_one = |_run: Run, module: Option<&str>| {
        let analysis = Options {
            module: module.map(str::to_owned),
            ..base.clone()
        };
        crate::analyze_input_bytes(&borrowed, &analysis)
    };
    let report = crate::diff::analyze_run(&mut analyze_one, which, opts.module.as_deref())
        .map_err(js_error)?;
    serde_json::to_string(&report).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Options of [`compare_reports`].
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsReportsOptions {
    module: Option<String>,
    top: Option<usize>,
    /// Set on the second call, after the first answered `again`: how the modules were
    /// chosen then.
    module_choice: Option<crate::diff::model::ModuleChoice>,
    /// Each run's folder name, when the page knows it (see [`JsCompareOptions`]).
    before_run: Option<String>,
    after_run: Option<String>,
}

/// Compares two runs' reports from [`analyze_run_blob`] (JSON text), as `oomlens diff`
/// does. Returns `{diff, view, markdown}` (as [`compare_blobs`]), or `{again: {before,
/// after, module_choice}}` when a run's report is not about the module compared: analyze
/// that run again with `module` set to the label given (null: keep its report), then call
/// this again with both reports and `module_choice` in `options`.
#[wasm_bindgen(js_name = compareReports)]
pub fn compare_reports(before: &str, after: &str, options: JsValue) -> Result<JsValue, JsValue> {
    use crate::diff::{first_step, second_step, DiffOptions, Step};
    let options: JsReportsOptions = if options.is_undefined() || options.is_null() {
        JsReportsOptions::default()
    } else {
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| JsValue::from_str(&format!("bad options: {e}")))?
    };
    let parse = |text: &str| {
        serde_json::from_str::<crate::Report>(text)
            .map_err(|e| JsValue::from_str(&format!("not a report from analyzeRun: {e}")))
    };
    let (before, after) = (parse(before)?, parse(after)?);
    let diff_options = DiffOptions {
        module: options.module.clone(),
        scan: Scan::OneThread,
        runs: [options.before_run.clone(), options.after_run.clone()],
    };
    let top = options.top.unwrap_or(MARKDOWN_TOP);
    if let Some(choice) = options.module_choice {
        let diff = second_step(&before, &after, &diff_options, choice).map_err(js_error)?;
        return js_compared(&diff, top);
    }
    match first_step(&before, &after, &diff_options).map_err(js_error)? {
        Step::Done(diff) => js_compared(&diff, top),
        Step::Again {
            before,
            after,
            choice,
        } => {
            #[derive(serde::Serialize)]
            struct Again {
                before: Option<String>,
                after: Option<String>,
                module_choice: crate::diff::model::ModuleChoice,
            }
            #[derive(serde::Serialize)]
            struct Answer {
                again: Again,
            }
            let answer = Answer {
                again: Again {
                    before,
                    after,
                    module_choice: choice,
                },
            };
            serde::Serialize::serialize(&answer, &serde_wasm_bindgen::Serializer::json_compatible())
                .map_err(|e| JsValue::from_str(&e.to_string()))
        }
    }
}

/// Compares two runs (in a worker): `before` and `after` are `File`s/`Blob`s of one
/// capture each, read in slices as [`analyze_blob`] reads one. `options`:
/// `{module, before_file_name, after_file_name, top, discard}`. `progress(phase, done,
/// total, read)` as for [`analyze_blob`], with `phase` prefixed by the run
/// (`before: plan`, `after: done`). Returns `{diff, view, markdown}`: the comparison as
/// `oomlens diff --format json` writes it (schema `oomlens-diff/1`), laid out for
/// reading (the words and figures the CLI shows), and as Markdown. Errors are
/// `Error`s with a `kind`, as [`analyze_blob`]'s.
#[wasm_bindgen(js_name = compareBlobs)]
pub fn compare_blobs(
    before: Blob,
    after: Blob,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    let b = blob_source(before, progress.clone(), &options)?;
    let a = blob_source(after, progress, &options)?;
    let (rb, ra) = (Rc::clone(&b.reporter), Rc::clone(&a.reporter));
    compare_sources([(&b, &rb), (&a, &ra)], options)
}

/// [`compare_blobs`] for captures already in memory (fetched, or posted as buffers).
#[wasm_bindgen(js_name = compareBytes)]
pub fn compare_bytes(
    before: Vec<u8>,
    after: Vec<u8>,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    let rb = Rc::new(Reporter::new(progress.clone(), before.len() as u64));
    let ra = Rc::new(Reporter::new(progress, after.len() as u64));
    let b = BytesSource {
        bytes: before,
        reporter: Rc::clone(&rb),
    };
    let a = BytesSource {
        bytes: after,
        reporter: Rc::clone(&ra),
    };
    compare_sources([(&b, &rb), (&a, &ra)], options)
}
