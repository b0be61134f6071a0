//! The engine's browser API (wasm-bindgen), used by the web worker in `www/`. It runs
//! the same analysis as the CLI; a dropped `File` is read in slices through
//! `FileReaderSync`, so a multi-gigabyte capture never becomes one `ArrayBuffer`.

use std::io;

use serde::Deserialize;
use wasm_bindgen::prelude::*;
use web_sys::{Blob, FileReaderSync};

use crate::source::ByteSource;
use crate::{analyze, report, Options};

/// A `Blob` (a dropped `File`) read with synchronous slices; only valid in a worker.
struct BlobSource {
    blob: Blob,
    reader: FileReaderSync,
    len: u64,
}

impl ByteSource for BlobSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.len);
        if offset >= end {
            return Ok(0);
        }
        let slice = self
            .blob
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let array = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let view = js_sys::Uint8Array::new(&array);
        let n = view.length() as usize;
        view.copy_to(&mut buf[..n]);
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
}

fn run(
    src: &dyn ByteSource,
    options: JsValue,
    progress: &js_sys::Function,
) -> Result<JsValue, JsValue> {
    let options: JsOptions = if options.is_undefined() || options.is_null() {
        JsOptions::default()
    } else {
        serde_wasm_bindgen::from_value(options)
            .map_err(|e| JsValue::from_str(&format!("bad options: {e}")))?
    };
    let file = options
        .file_name
        .clone()
        .unwrap_or_else(|| "capture.xplane.pb".into());
    let host = options
        .host
        .clone()
        .unwrap_or_else(|| file.trim_end_matches(".xplane.pb").to_owned());
    let opts = Options {
        module: options.module,
        error_text: options.error_text,
    };
    let mut on_progress = |phase: &str, done: u64, total: u64| {
        let _ = progress.call3(
            &JsValue::NULL,
            &JsValue::from_str(phase),
            &JsValue::from_f64(done as f64),
            &JsValue::from_f64(total as f64),
        );
    };
    let host_report = analyze(src, &host, &file, &opts, &mut on_progress).map_err(|e| {
        let err = js_sys::Error::new(&e.to_string());
        let _ = js_sys::Reflect::set(
            &err,
            &JsValue::from_str("kind"),
            &JsValue::from_str(e.kind()),
        );
        JsValue::from(err)
    })?;
    let report = report(vec![host_report]);
    let value = crate::report::json::to_value(&report);
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    serde::Serialize::serialize(&value, &serializer).map_err(|e| JsValue::from_str(&e.to_string()))
}

/// Analyzes a `File`/`Blob` (in a worker). `options`: `{module, error_text, host, file_name}`.
/// `progress(phase, done, total)` is called as the analysis goes.
#[wasm_bindgen(js_name = analyzeBlob)]
pub fn analyze_blob(
    blob: Blob,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    let reader = FileReaderSync::new()?;
    let len = blob.size() as u64;
    let src = BlobSource { blob, reader, len };
    run(&src, options, &progress)
}

/// Analyzes bytes already in memory (a fetched `?url=` capture, a posted buffer).
#[wasm_bindgen(js_name = analyzeBytes)]
pub fn analyze_bytes(
    bytes: Vec<u8>,
    options: JsValue,
    progress: js_sys::Function,
) -> Result<JsValue, JsValue> {
    run(&bytes, options, &progress)
}

/// Renders a report (as returned by the analysis) as Markdown, for "Copy as Markdown".
#[wasm_bindgen(js_name = reportMarkdown)]
pub fn report_markdown(report: JsValue) -> Result<String, JsValue> {
    let value: serde_json::Value =
        serde_wasm_bindgen::from_value(report).map_err(|e| JsValue::from_str(&e.to_string()))?;
    let host: crate::HostReport =
        serde_json::from_value(value).map_err(|e| JsValue::from_str(&e.to_string()))?;
    Ok(crate::report::markdown::render(
        &crate::report(vec![host]),
        20,
    ))
}

/// The engine's version, for the page footer.
#[wasm_bindgen]
pub fn version() -> String {
    crate::tool_name()
}
