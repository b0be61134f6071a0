// oomlens in the browser: runs the analysis in a dedicated web worker that owns the
// WebAssembly engine. The capture never leaves the browser and is read in slices.
//
//   import { analyze } from 'oomlens';
//   const report = await analyze(file, { module: 'jit_train_step(12)' });
//
// `Analyzer` keeps one worker for several analyses (the page uses it); starting an
// analysis while another runs cancels the running one (its worker is terminated).

const WORKER_URL = new URL('./worker.js', import.meta.url);

/** An analysis was cancelled by a newer one, by `cancel()` or by an AbortSignal. */
export class AbortError extends Error {
  constructor(message = 'the analysis was cancelled') {
    super(message);
    this.name = 'AbortError';
  }
}

/** The engine refused the capture (not a capture, corrupt, unknown module, …). */
export class AnalysisError extends Error {
  constructor(message, kind) {
    super(message);
    this.name = 'AnalysisError';
    this.kind = kind;
  }
}

function toBlob(input) {
  if (input instanceof Blob) return input;
  if (input instanceof ArrayBuffer) return new Blob([input]);
  if (ArrayBuffer.isView(input)) return new Blob([input]);
  throw new TypeError('analyze() takes a File, a Blob, an ArrayBuffer or a typed array');
}

export class Analyzer {
  /** @param {{workerUrl?: string|URL}} [config] */
  constructor(config = {}) {
    this.workerUrl = config.workerUrl || WORKER_URL;
    this.worker = null;
    this.pending = null;
    this.nextId = 1;
  }

  _spawn() {
    const worker = new Worker(this.workerUrl, { type: 'module', name: 'oomlens-engine' });
    worker.onmessage = (event) => this._receive(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      const p = this.pending;
      if (!p) return;
      this.pending = null;
      this._drop();
      p.reject(new AnalysisError(`the engine's worker failed: ${event.message || 'it could not start'}`, 'engine'));
    };
    return worker;
  }

  _drop() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
  }

  _receive(msg) {
    const p = this.pending;
    if (!msg || !p || msg.id !== p.id) return;
    if (msg.type === 'progress') {
      if (p.onProgress) p.onProgress({ phase: msg.phase, done: msg.done, total: msg.total, read: msg.read });
      return;
    }
    this.pending = null;
    if (p.signal) p.signal.removeEventListener('abort', p.abort);
    if (msg.type === 'result') {
      p.resolve({ report: msg.report, view: Array.isArray(msg.view) ? msg.view[0] || null : msg.view || null, markdown: msg.markdown, ms: msg.ms, phases: msg.phases || [], memoryBytes: msg.memoryBytes, version: msg.version, workers: msg.workers || 1 });
    } else {
      // After a panic the engine's memory may be inconsistent: start afresh next time.
      if (msg.kind === 'panic') this._drop();
      p.reject(new AnalysisError(msg.message, msg.kind));
    }
  }

  /**
   * Analyzes a capture; resolves to `{report, view, markdown, ms, phases, memoryBytes,
   * version, workers}` (`view`: the report laid out as the CLI shows it, every title,
   * word and figure; `workers`: 2 when a second worker scanned half of the host plane).
   * @param {Blob|ArrayBuffer|ArrayBufferView} input
   * @param {{module?: string, error_text?: string, host?: string, file_name?: string,
   *          parallel_from_bytes?: number}} [options] `parallel_from_bytes`: host planes
   *          at least this large are scanned by two workers (default 32 MiB)
   * @param {{onProgress?: Function, signal?: AbortSignal}} [hooks]
   */
  run(input, options = {}, hooks = {}) {
    const blob = toBlob(input);
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    const fileName = options.file_name || (typeof File !== 'undefined' && blob instanceof File ? blob.name : undefined);
    const opts = {};
    for (const k of ['module', 'error_text', 'host']) if (options[k] != null && options[k] !== '') opts[k] = String(options[k]);
    if (Number.isFinite(options.parallel_from_bytes) && options.parallel_from_bytes >= 0) opts.parallel_from_bytes = options.parallel_from_bytes;
    if (fileName) opts.file_name = fileName;
    return new Promise((resolve, reject) => {
      const p = { id, resolve, reject, onProgress: hooks.onProgress, signal: hooks.signal };
      p.abort = () => {
        if (this.pending === p) this.cancel();
      };
      if (hooks.signal) {
        if (hooks.signal.aborted) return reject(new AbortError());
        hooks.signal.addEventListener('abort', p.abort, { once: true });
      }
      this.pending = p;
      this.worker.postMessage({ id, blob, options: opts });
    });
  }

  /** Cancels the running analysis, if any: its worker is terminated. */
  cancel() {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    this._drop();
    if (p.signal) p.signal.removeEventListener('abort', p.abort);
    p.reject(new AbortError());
  }

  /** Stops the worker. */
  terminate() {
    this.cancel();
    this._drop();
  }
}

/**
 * Analyzes one capture (`*.xplane.pb`) in a fresh worker and resolves to the report
 * model (the same object as `oomlens FILE --format json`).
 * @param {Blob|ArrayBuffer|ArrayBufferView} fileOrBytes
 * @param {{module?: string, error_text?: string, host?: string, file_name?: string,
 *          onProgress?: Function, signal?: AbortSignal, workerUrl?: string|URL}} [options]
 * @returns {Promise<object>}
 */
export async function analyze(fileOrBytes, options = {}) {
  const { onProgress, signal, workerUrl, ...engineOptions } = options;
  const analyzer = new Analyzer({ workerUrl });
  try {
    const { report } = await analyzer.run(fileOrBytes, engineOptions, { onProgress, signal });
    return report;
  } finally {
    analyzer.terminate();
  }
}
