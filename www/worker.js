// The oomlens engine's web worker. It owns the WebAssembly engine, reads the capture
// it is given (a File or Blob) in slices through FileReaderSync — never as one
// ArrayBuffer — and posts progress, the finished report model and its view. The page only
// renders.
//
// For a large capture it starts a second copy of itself (the page's second core): that
// one scans the second half of the host plane while this one scans the first, and
// hands its part back as bytes. Without it (no nested workers, or it fails) this
// worker scans the whole plane itself: the report is the same either way.
//
// Protocol (one analysis at a time; to cancel, the page terminates the worker, and
// with it the second one):
//   in:  {id, blob, options}            options: {module, error_text, host, file_name,
//                                                 parallel_from_bytes}
//   out: {id, type: 'progress', phase, done, total, read}
//        {id, type: 'result', report, view, markdown, ms, phases, memoryBytes, version, workers,
//         readAhead}
//        (view: one per host, the report laid out as the CLI shows it; phases: [name, ms] in order;
//         readAhead: {slices, bytes, largest, runs} read ahead by the reader worker, or null
//         where this worker read the file alone: see slices.js; by default from 64 MiB on;
//         options.read_ahead: false turns it off, true forces it)
//        {id, type: 'error', message, kind}
// Comparing two runs (analyze.js's Comparer: each run in its own worker where the
// machine has the cores, then one of them compares the two reports):
//   in:  {id, type: 'analyze-run', blob, run, options}   run: 'before' or 'after';
//                                                          options: {module, file_name, host}
//   out: {id, type: 'progress', …}                        phase prefixed: 'after: plan'
//        {id, type: 'result', report, ms, version}        report: the engine's JSON text
//   in:  {id, type: 'analyze-files-run', files, run, options}
//                                                          a run made of inputs other than a
//                                                          capture alone (a pasted error: files
//                                                          [], options.error_text); out as above
//   in:  {id, type: 'compare-reports', before, after, options}
//                                                          options: {module, top, module_choice,
//                                                                    before_run, after_run}
//   out: {id, type: 'result', diff, view, markdown, version}   (diff: oomlens-diff/1)
//        {id, type: 'result', again: {before, after, module_choice}}
//                                                          analyze those runs again about
//                                                          the modules named, then compare
// A folder of several hosts (analyze.js's HostPool: a pool of these workers, one host
// each at a time; only each host's summary row comes back, its report is dropped here):
//   in:  {id, type: 'host-row', blob, options}            options: {host, file_name,
//                                                          module, error_text}
//   out: {id, type: 'progress', …}
//        {id, type: 'result', row: {row, profile_start_ns}, ms, version}
//                                                          a capture the engine cannot
//                                                          read is a failed row, not an error
//   in:  {id, type: 'compare-hosts', rows}                 rows: the host-row answers, in host order
//   out: {id, type: 'result', hosts_summary, view, markdown, version}
// Inputs other than captures, alone or together (the error message pasted or in a
// .txt/.log, XLA dump files, device memory profiles, with captures or not): read whole
// here and joined by the engine (analyzeFiles), which tells them apart by content:
//   in:  {id, type: 'analyze-files', files, options}     files: [{name, blob}];
//                                                          options: {module, error_text}
//   out: {id, type: 'result', report, view, markdown, ms, phases, memoryBytes, version, workers}
// Between the two workers (the first sends the work once it has indexed the file):
//   out: {type: 'ready'}                     the second worker's engine has loaded
//   in:  {type: 'second-part', blob, work}   work: the split and the host plane's metadata
//   out: {type: 'second-part', bytes}        the encoded part, or null if it failed

import init, { Analysis, analyzeFiles, analyzeFilesRun, analyzeHost, analyzeRun, compareHosts, compareReports, parallelFromBytes, scanHostPart, version } from './oomlens.js';
import { SliceStream, initEngine, readAheadScan } from './slices.js';

const ready = initEngine(init);

// Each slice the engine reads from the file is a new ArrayBuffer, and V8 frees those
// only in tasks that do not run while this worker is busy in the engine: the tab would
// grow with the file. Transferred into a closed MessagePort once copied, a slice's
// memory is released at once (measured: +54 MiB over a 4 GB read, against +1.3 GB).
const sink = new MessageChannel();
sink.port2.close();
const free = (buffer) => sink.port1.postMessage(null, [buffer]);
/** The slices read ahead for the running analysis (slices.js), whose buffers go back to its reader. */
let stream = null;
const discard = (buffer) => {
  if (!(stream && stream.recycle(buffer))) free(buffer);
};
// Below this size the engine reads the whole capture in a few blocks while it indexes
// it: a reader worker would only cost its start.
const READ_AHEAD_FROM_BYTES = 64 * 1024 * 1024;
// How long to wait for the second worker's engine to load before going on alone.
const SECOND_WORKER_WAIT_MS = 5000;
// A second worker says when its engine has loaded.
if (self.name === 'oomlens-engine-2') {
  ready.then(
    () => self.postMessage({ type: 'ready' }),
    () => self.close(),
  );
}

/**
 * Starts the second worker and waits until its engine has loaded (at most
 * `SECOND_WORKER_WAIT_MS`): a nested worker's scripts are loaded through this worker,
 * which cannot serve them once it is busy in the engine. Returns `{worker, part}`,
 * where `part` resolves to the worker's part (or null), or null without a worker.
 */
async function startSecondWorker() {
  let worker;
  try {
    worker = new Worker(new URL(import.meta.url), { type: 'module', name: 'oomlens-engine-2' });
  } catch {
    return null;
  }
  let loaded;
  const ready = new Promise((resolve) => {
    loaded = resolve;
  });
  const part = new Promise((resolve) => {
    worker.onmessage = (event) => {
      const msg = event.data || {};
      if (msg.type === 'ready') loaded(true);
      else resolve(msg.bytes || null);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      loaded(false);
      resolve(null);
    };
  });
  const timeout = new Promise((resolve) => setTimeout(() => resolve(false), SECOND_WORKER_WAIT_MS));
  if (!(await Promise.race([ready, timeout]))) {
    worker.terminate();
    return null;
  }
  return { worker, part };
}

async function secondPart(blob, work) {
  let bytes = null;
  try {
    await ready;
    bytes = scanHostPart(blob, work, { discard });
  } catch {
    bytes = null; // the first worker then scans the whole plane
  }
  self.postMessage({ type: 'second-part', bytes }, bytes ? [bytes.buffer] : []);
}

/** An engine error as the protocol's error message. */
function failure(id, e) {
  const message = e && e.message ? e.message : String(e);
  // A Rust panic surfaces as a RuntimeError; the page then drops this worker.
  const kind = e && e.kind ? e.kind : e instanceof WebAssembly.RuntimeError ? 'panic' : 'analysis';
  return { id, type: 'error', kind, message };
}

/** One run of a comparison, analyzed here; its report goes back as the engine's JSON text. */
function runOfComparison(id, msg) {
  if (!(msg.blob instanceof Blob)) {
    self.postMessage({ id, type: 'error', kind: 'input', message: 'nothing to analyze: expected a File or Blob' });
    return;
  }
  const started = performance.now();
  try {
    const progress = (phase, done, total, read) => self.postMessage({ id, type: 'progress', phase, done, total, read });
    const report = analyzeRun(msg.blob, msg.run, { ...(msg.options || {}), discard }, progress);
    self.postMessage({ id, type: 'result', report, ms: performance.now() - started, version: version() });
  } catch (e) {
    self.postMessage(failure(id, e));
  }
}

/** Reads `[{name, blob}]` whole, for the engine's joined inputs. */
function readFiles(id, list) {
  const reader = new FileReaderSync();
  const total = list.reduce((a, f) => a + (f.blob instanceof Blob ? f.blob.size : 0), 0);
  let read = 0;
  return list.map((f) => {
    if (!(f.blob instanceof Blob)) throw Object.assign(new Error('nothing to analyze: expected a File or Blob'), { kind: 'input' });
    const bytes = new Uint8Array(reader.readAsArrayBuffer(f.blob));
    read += bytes.length;
    self.postMessage({ id, type: 'progress', phase: 'open', done: read, total, read });
    return { name: String(f.name || ''), bytes };
  });
}

/** One run of a comparison made of joined inputs (a pasted error, a log, …), analyzed here. */
function filesRunOfComparison(id, msg) {
  const started = performance.now();
  try {
    const files = readFiles(id, Array.isArray(msg.files) ? msg.files : []);
    const report = analyzeFilesRun(files, msg.run, msg.options || {});
    self.postMessage({ id, type: 'result', report, ms: performance.now() - started, version: version() });
  } catch (e) {
    self.postMessage(failure(id, e));
  }
}

function compareTwo(id, msg) {
  try {
    const out = compareReports(msg.before, msg.after, msg.options || {});
    self.postMessage({ id, type: 'result', ...out, version: version() });
  } catch (e) {
    self.postMessage(failure(id, e));
  }
}

/** One host of a folder, reduced to its summary row here. */
function hostRow(id, msg) {
  if (!(msg.blob instanceof Blob)) {
    self.postMessage({ id, type: 'error', kind: 'input', message: 'nothing to analyze: expected a File or Blob' });
    return;
  }
  const started = performance.now();
  try {
    const progress = (phase, done, total, read) => self.postMessage({ id, type: 'progress', phase, done, total, read });
    const row = analyzeHost(msg.blob, { ...(msg.options || {}), discard }, progress);
    self.postMessage({ id, type: 'result', row, ms: performance.now() - started, version: version() });
  } catch (e) {
    self.postMessage(failure(id, e));
  }
}

function compareRows(id, msg) {
  try {
    const out = compareHosts(msg.rows || []);
    self.postMessage({ id, type: 'result', ...out, version: version() });
  } catch (e) {
    self.postMessage(failure(id, e));
  }
}

/** Several inputs joined (or pasted text alone), as `oomlens FILE… --error-text` does. */
function inputs(id, msg, wasm) {
  const started = performance.now();
  try {
    const list = Array.isArray(msg.files) ? msg.files : [];
    const total = list.reduce((a, f) => a + (f.blob instanceof Blob ? f.blob.size : 0), 0);
    const files = readFiles(id, list);
    const read = total;
    const readMs = performance.now() - started;
    self.postMessage({ id, type: 'progress', phase: 'diagnosis', done: total, total, read });
    const out = analyzeFiles(files, msg.options || {});
    const ms = performance.now() - started;
    self.postMessage({ id, type: 'result', report: out.report, view: out.view, markdown: out.markdown, ms, phases: [['open', readMs], ['diagnosis', ms - readMs]], memoryBytes: wasm.memory.buffer.byteLength, version: version(), workers: 1 });
  } catch (e) {
    self.postMessage(failure(id, e));
  }
}

const REQUESTS = { 'analyze-run': runOfComparison, 'analyze-files-run': filesRunOfComparison, 'compare-reports': compareTwo, 'host-row': hostRow, 'compare-hosts': compareRows, 'analyze-files': inputs };

self.onmessage = async (event) => {
  const msg = event.data || {};
  if (msg.type === 'second-part') {
    await secondPart(msg.blob, msg.work);
    return;
  }
  if (Object.hasOwn(REQUESTS, msg.type)) {
    let wasm;
    try {
      wasm = await ready;
    } catch (e) {
      self.postMessage({ id: msg.id, type: 'error', kind: 'engine', message: `the engine did not load: ${e && e.message ? e.message : e}` });
      return;
    }
    REQUESTS[msg.type](msg.id, msg, wasm);
    return;
  }
  const { id, blob, options } = msg;
  let wasm;
  try {
    wasm = await ready;
  } catch (e) {
    self.postMessage({ id, type: 'error', kind: 'engine', message: `the engine did not load: ${e && e.message ? e.message : e}` });
    return;
  }
  if (!(blob instanceof Blob)) {
    self.postMessage({ id, type: 'error', kind: 'input', message: 'nothing to analyze: expected a File or Blob' });
    return;
  }
  const started = performance.now();
  // How long each phase took (for benchmarks and the page's footer).
  const phases = [];
  let phaseStart = started;
  let phaseName = 'open';
  let lastRead = 0;
  const progress = (phase, done, total, read) => {
    lastRead = read;
    if (phase !== phaseName) {
      const now = performance.now();
      phases.push([phaseName, now - phaseStart]);
      phaseName = phase;
      phaseStart = now;
    }
    self.postMessage({ id, type: 'progress', phase, done, total, read });
  };
  const opts = options || {};
  // A second worker pays where there are cores for it beside the browser's own work
  // (reading the file costs the browser process as much CPU as the engine's scan): not
  // on a 2-core machine, where it measured no faster. `parallel_from_bytes` forces it.
  const forced = Number.isFinite(opts.parallel_from_bytes);
  const cores = (self.navigator && self.navigator.hardwareConcurrency) || 1;
  const threshold = forced ? opts.parallel_from_bytes : parallelFromBytes();
  const second = blob.size >= threshold && (forced || cores >= 4) ? await startSecondWorker() : null;
  let analysis = null;
  let readAhead = null;
  try {
    analysis = new Analysis(blob, { ...opts, discard, second_worker: !!second }, progress);
    const send = (work) => second.worker.postMessage({ type: 'second-part', blob, work }, [work.buffer]);
    const split = second ? analysis.scanFirstPart(send) : false;
    if (second && !split) second.worker.terminate();
    let part;
    if (split) {
      progress('waiting for the second worker', blob.size, blob.size, lastRead);
      part = (await second.part) || undefined;
    }
    // One worker scans: with the file read ahead by another where the browser has JSPI
    // and the file is large enough for it to pay (`read_ahead: true` forces it).
    const wanted = opts.read_ahead === true || (opts.read_ahead !== false && blob.size >= READ_AHEAD_FROM_BYTES);
    const scan = !split && wanted ? readAheadScan(wasm) : null;
    if (scan) {
      stream = new SliceStream(blob, free);
      await scan(analysis);
      readAhead = stream.stats;
    }
    const report = analysis.finish(part);
    const markdown = analysis.markdown();
    const view = analysis.view();
    self.postMessage({
      id,
      type: 'result',
      report,
      markdown,
      view,
      ms: performance.now() - started,
      phases,
      memoryBytes: wasm.memory.buffer.byteLength,
      version: version(),
      workers: split && part ? 2 : 1,
      readAhead,
    });
  } catch (e) {
    self.postMessage(failure(id, e));
  } finally {
    if (second) second.worker.terminate();
    if (stream) stream.close();
    stream = null;
    if (analysis) {
      try {
        analysis.free();
      } catch {
        // already freed by a panic
      }
    }
  }
};
