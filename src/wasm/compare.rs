//! Comparing two runs in the page, as `oomlens diff` does.

use super::*;

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
