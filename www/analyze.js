// oomlens in the browser: runs the analysis in a dedicated web worker that owns the
// WebAssembly engine. The capture never leaves the browser and is read in slices.
//
//   import { analyze, compare } from 'oomlens';
//   const report = await analyze(file, { module: 'jit_train_step(12)' });
//   const diff = await compare(beforeFile, afterFile);   // as `oomlens diff --format json`
//   const rows = await analyzeHosts(hostFiles);          // `hosts_summary` of `oomlens FOLDER --format json`
//
// `Analyzer` keeps one worker for several analyses (the page uses it); starting an
// analysis while another runs cancels the running one (its worker is terminated).
// `Comparer` keeps two: each run of a comparison is analyzed in its own worker where
// the machine has the cores, and the engine compares the two reports. `HostPool`
// analyzes the host files of a multi-host run on a pool of workers and keeps only
// each host's summary row, so that hundreds of hosts fit in a tab.

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
      p.resolve(p.map(msg));
    } else {
      // After a panic the engine's memory may be inconsistent: start afresh next time.
      if (msg.kind === 'panic') this._drop();
      p.reject(new AnalysisError(msg.message, msg.kind));
    }
  }

  /**
   * Analyzes a capture; resolves to `{report, view, markdown, ms, phases, memoryBytes,
   * version, workers, readAhead}` (`view`: the report laid out as the CLI shows it;
   * `workers`: 2 when a second worker scanned half of the host plane; `readAhead`:
   * `{slices, bytes, largest, runs}` when a reader worker read the file ahead, else null).
   * @param {Blob|ArrayBuffer|ArrayBufferView} input
   * @param {{module?: string, error_text?: string, host?: string, file_name?: string,
   *          parallel_from_bytes?: number, read_ahead?: boolean}} [options] see index.d.ts
   * @param {{onProgress?: Function, signal?: AbortSignal}} [hooks]
   */
  run(input, options = {}, hooks = {}) {
    const blob = toBlob(input);
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    const fileName = options.file_name || (typeof File !== 'undefined' && blob instanceof File ? blob.name : undefined);
    const opts = Object.fromEntries(['module', 'error_text', 'host'].filter((k) => options[k] != null && options[k] !== '').map((k) => [k, String(options[k])]));
    if (Number.isFinite(options.parallel_from_bytes) && options.parallel_from_bytes >= 0) opts.parallel_from_bytes = options.parallel_from_bytes;
    if (typeof options.read_ahead === 'boolean') opts.read_ahead = options.read_ahead;
    if (fileName) opts.file_name = fileName;
    const map = (msg) => ({ report: msg.report, view: Array.isArray(msg.view) ? msg.view[0] || null : msg.view || null, markdown: msg.markdown, ms: msg.ms, phases: msg.phases || [], memoryBytes: msg.memoryBytes, version: msg.version, workers: msg.workers || 1, readAhead: msg.readAhead || null });
    return this._request({ id, blob, options: opts }, hooks, map);
  }

  /** Posts a request to the worker; resolves to `map(result message)`. */
  _request(message, hooks, map) {
    return new Promise((resolve, reject) => {
      const p = { id: message.id, resolve, reject, map, onProgress: hooks.onProgress, signal: hooks.signal };
      p.abort = () => {
        if (this.pending === p) this.cancel();
      };
      if (hooks.signal) {
        if (hooks.signal.aborted) return reject(new AbortError());
        hooks.signal.addEventListener('abort', p.abort, { once: true });
      }
      this.pending = p;
      this.worker.postMessage(message);
    });
  }

  /**
   * Analyzes one run of a comparison (`run`: `before` or `after`); resolves to `{report,
   * ms, version}`, `report` the engine's JSON text for `compareReports`. A `module` label
   * this run lacks is taken by its name, as `oomlens diff` does. A run made of inputs
   * other than a capture alone is `{files: [{name, blob}], error_text}` (see `runInputs`).
   * @param {Blob|ArrayBuffer|ArrayBufferView|{files: Array<{name: string, blob: Blob}>, error_text?: string}} input
   * @param {'before'|'after'} run
   * @param {{module?: string, file_name?: string, host?: string}} [options]
   */
  analyzeRun(input, run, options = {}, hooks = {}) {
    const joined = input && Array.isArray(input.files);
    const blob = joined ? null : toBlob(input);
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    const opts = {};
    for (const k of ['module', 'file_name', 'host']) if (options[k] != null && options[k] !== '') opts[k] = String(options[k]);
    if (joined && input.error_text) opts.error_text = String(input.error_text);
    const message = joined ? { id, type: 'analyze-files-run', files: input.files.map((f, i) => ({ name: String(f.name || `input${i}`), blob: toBlob(f.blob) })), run, options: opts } : { id, type: 'analyze-run', blob, run, options: opts };
    return this._request(message, hooks, (msg) => ({ report: msg.report, ms: msg.ms, version: msg.version }));
  }

  /**
   * Compares two reports from `analyzeRun`; resolves to `{diff, view, markdown, version}`,
   * or `{again: {before, after, module_choice}}` (see `Comparer`).
   */
  compareReports(before, after, options = {}, hooks = {}) {
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    return this._request({ id, type: 'compare-reports', before, after, options }, hooks, (msg) => (msg.again ? { again: msg.again } : { diff: msg.diff, view: msg.view, markdown: msg.markdown, version: msg.version }));
  }

  /**
   * Inputs other than a capture, alone or together — the error message (a `.txt` or
   * `.log`, or `error_text` alone with no file), XLA dump files (`module_NNNN.…`), device
   * memory profiles, captures beside them — told apart by content and joined by the
   * engine as `oomlens FILE… --error-text` does. Each file is read whole (a large capture
   * alone is better given to `run`). Resolves as `run` does.
   * @param {Array<File|Blob|{name: string, blob: Blob}>} files
   * @param {{module?: string, error_text?: string}} [options]
   */
  runInputs(files, options = {}, hooks = {}) {
    const list = (files || []).map((f, i) => {
      if (f && !(f instanceof Blob) && f.blob) return { name: String(f.name || `input${i}`), blob: toBlob(f.blob) };
      const blob = toBlob(f);
      return { name: typeof File !== 'undefined' && blob instanceof File ? blob.name : `input${i}`, blob };
    });
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    const opts = {};
    for (const k of ['module', 'error_text']) if (options[k] != null && options[k] !== '') opts[k] = String(options[k]);
    const map = (msg) => ({ report: msg.report, view: Array.isArray(msg.view) ? msg.view[0] || null : msg.view || null, markdown: msg.markdown, ms: msg.ms, phases: msg.phases || [], memoryBytes: msg.memoryBytes, version: msg.version, workers: 1 });
    return this._request({ id, type: 'analyze-files', files: list, options: opts }, hooks, map);
  }

  /**
   * One host of a folder reduced to its summary row (its report is dropped in the
   * worker); resolves to `{row, ms, version}`, `row` the engine's `{row,
   * profile_start_ns}` for `compareHosts`. A capture the engine cannot read resolves
   * to a failed row with its one-line error.
   * @param {Blob|ArrayBuffer|ArrayBufferView} input
   * @param {{host?: string, file_name?: string, module?: string, error_text?: string}} [options]
   */
  hostRow(input, options = {}, hooks = {}) {
    const blob = toBlob(input);
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    const opts = {};
    for (const k of ['module', 'error_text', 'host', 'file_name']) if (options[k] != null && options[k] !== '') opts[k] = String(options[k]);
    return this._request({ id, type: 'host-row', blob, options: opts }, hooks, (msg) => ({ row: msg.row, ms: msg.ms, version: msg.version }));
  }

  /**
   * The cross-host summary of a folder's rows (from `hostRow`, in host order);
   * resolves to `{hosts_summary, view, markdown, version}`.
   */
  compareHosts(rows, hooks = {}) {
    this.cancel();
    if (!this.worker) this.worker = this._spawn();
    const id = this.nextId++;
    return this._request({ id, type: 'compare-hosts', rows }, hooks, (msg) => ({ hosts_summary: msg.hosts_summary, view: msg.view, markdown: msg.markdown, version: msg.version }));
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

/**
 * Explains an out-of-memory failure from whatever there is besides (or instead of) a
 * capture: the error message (`error_text`, or a `.txt`/`.log` file), an XLA dump's
 * files, device memory profiles — and resolves to the report model, the same object as
 * `oomlens FILE… [--error-text FILE] --format json`.
 * @param {Array<File|Blob|{name: string, blob: Blob}>} files may be empty with `error_text`
 * @param {{module?: string, error_text?: string, onProgress?: Function, signal?: AbortSignal, workerUrl?: string|URL}} [options]
 * @returns {Promise<object>}
 */
export async function analyzeInputs(files, options = {}) {
  const { onProgress, signal, workerUrl, ...engineOptions } = options;
  const analyzer = new Analyzer({ workerUrl });
  try {
    const { report } = await analyzer.runInputs(files, engineOptions, { onProgress, signal });
    return report;
  } finally {
    analyzer.terminate();
  }
}

function cores() {
  return (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) || 1;
}

/**
 * Compares two runs: each is analyzed in a worker of its own, both at once, where the
 * machine has the cores (4 or more; `parallel` forces either way), and the engine
 * compares the two reports — the comparison `oomlens diff` makes. Starting a comparison
 * while another runs cancels the running one.
 */
export class Comparer {
  /** @param {{workerUrl?: string|URL}} [config] */
  constructor(config = {}) {
    this.analyzers = [new Analyzer(config), new Analyzer(config)];
    this.token = null;
  }

  /**
   * Each run is a capture (a Blob, ArrayBuffer or typed array), or inputs joined as
   * `runInputs` joins them: `{files: [{name, blob}], error_text}` (a pasted error alone
   * is `{files: [], error_text}`), so that any two reports can be compared.
   * @param {Blob|ArrayBuffer|ArrayBufferView|{files: Array<{name: string, blob: Blob}>, error_text?: string}} before
   * @param {Blob|ArrayBuffer|ArrayBufferView|{files: Array<{name: string, blob: Blob}>, error_text?: string}} after
   * @param {{module?: string, top?: number, parallel?: boolean, before_file_name?: string,
   *          after_file_name?: string, before_run?: string, after_run?: string}} [options]
   *          `before_run`/`after_run`: each run's folder name, which tells the runs apart
   *          when their files share a name
   * @param {{onProgress?: Function, signal?: AbortSignal}} [hooks] `onProgress` gets
   *          `{run, phase, done, total, read}`
   * @returns {Promise<{diff: object, view: object, markdown: string, ms: number, workers: number, version: string}>}
   */
  async run(before, after, options = {}, hooks = {}) {
    this.cancel();
    const token = {};
    this.token = token;
    const started = typeof performance !== 'undefined' ? performance.now() : Date.now();
    const isInputs = (x) => x && typeof x === 'object' && Array.isArray(x.files);
    const blobs = { before: isInputs(before) ? before : toBlob(before), after: isInputs(after) ? after : toBlob(after) };
    const names = {
      before: options.before_file_name || (typeof File !== 'undefined' && blobs.before instanceof File ? blobs.before.name : 'before.xplane.pb'),
      after: options.after_file_name || (typeof File !== 'undefined' && blobs.after instanceof File ? blobs.after.name : 'after.xplane.pb'),
    };
    const parallel = typeof options.parallel === 'boolean' ? options.parallel : cores() >= 4;
    const [first, second] = this.analyzers;
    const worker = { before: first, after: parallel ? second : first };
    const module = options.module != null && options.module !== '' ? String(options.module) : undefined;
    const onAbort = () => this.cancel();
    if (hooks.signal) {
      if (hooks.signal.aborted) throw new AbortError();
      hooks.signal.addEventListener('abort', onAbort, { once: true });
    }
    const check = () => {
      if (this.token !== token) throw new AbortError();
    };
    const analyze = (run, mod) =>
      worker[run].analyzeRun(blobs[run], run, { module: mod, file_name: names[run] }, { onProgress: hooks.onProgress ? (p) => hooks.onProgress({ run, ...p }) : undefined }).then((r) => r.report);
    const both = async (mods) => {
      const runs = ['before', 'after'].filter((run) => mods[run] !== null);
      const out = {};
      if (parallel) {
        const got = await Promise.all(runs.map((run) => analyze(run, mods[run])));
        runs.forEach((run, i) => {
          out[run] = got[i];
        });
      } else {
        for (const run of runs) {
          out[run] = await analyze(run, mods[run]);
          check();
        }
      }
      check();
      return out;
    };
    try {
      const reports = await both({ before: module, after: module });
      const compareOptions = {};
      if (module) compareOptions.module = module;
      if (Number.isInteger(options.top) && options.top >= 0) compareOptions.top = options.top;
      for (const k of ['before_run', 'after_run']) if (typeof options[k] === 'string' && options[k]) compareOptions[k] = options[k].slice(0, 300);
      let result = await first.compareReports(reports.before, reports.after, compareOptions);
      check();
      if (result.again) {
        const { again } = result;
        const redo = await both({ before: again.before, after: again.after });
        Object.assign(reports, redo);
        result = await first.compareReports(reports.before, reports.after, { ...compareOptions, module_choice: again.module_choice });
        check();
      }
      const ms = (typeof performance !== 'undefined' ? performance.now() : Date.now()) - started;
      return { diff: result.diff, view: result.view, markdown: result.markdown, ms, workers: parallel ? 2 : 1, version: result.version };
    } catch (e) {
      // One run failed: the other is of no use now.
      if (this.token === token) this.cancel();
      throw e;
    } finally {
      if (hooks.signal) hooks.signal.removeEventListener('abort', onAbort);
      if (this.token === token) this.token = null;
    }
  }

  /** Cancels the running comparison, if any: its workers are terminated. */
  cancel() {
    this.token = null;
    for (const a of this.analyzers) a.cancel();
  }

  /** Stops the workers. */
  terminate() {
    this.cancel();
    for (const a of this.analyzers) a.terminate();
  }
}

/**
 * Compares two runs (a capture each: `*.xplane.pb`) in fresh workers and resolves to
 * the comparison — the same object as `oomlens diff BEFORE AFTER --format json`
 * (schema `oomlens-diff/1`).
 * @param {Blob|ArrayBuffer|ArrayBufferView} before
 * @param {Blob|ArrayBuffer|ArrayBufferView} after
 * @param {{module?: string, top?: number, parallel?: boolean, before_file_name?: string,
 *          after_file_name?: string, onProgress?: Function, signal?: AbortSignal,
 *          workerUrl?: string|URL}} [options]
 * @returns {Promise<object>}
 */
export async function compare(before, after, options = {}) {
  const { onProgress, signal, workerUrl, ...engineOptions } = options;
  const comparer = new Comparer({ workerUrl });
  try {
    const { diff } = await comparer.run(before, after, engineOptions, { onProgress, signal });
    return diff;
  } finally {
    comparer.terminate();
  }
}

/** At most this many workers analyze a folder's hosts at once. */
const MAX_POOL = 16;
/** What one worker's engine may need for a host (docs/hosts.md: 39–68 MiB up to 4 GB). */
const MIB_PER_HOST = 128;

/**
 * How many workers analyze a folder's hosts: the cores (`navigator.hardwareConcurrency`),
 * or `jobs`, and never more than `MAX_POOL`, the hosts, or what half the device's memory
 * (`navigator.deviceMemory`, where the browser tells it) holds at 128 MiB a worker.
 */
export function poolSize(hosts, jobs) {
  const want = Number.isInteger(jobs) && jobs > 0 ? jobs : cores();
  const memory = typeof navigator !== 'undefined' && navigator.deviceMemory > 0 ? Math.floor((navigator.deviceMemory * 1024) / 2 / MIB_PER_HOST) : MAX_POOL;
  return Math.max(1, Math.min(want, MAX_POOL, memory, hosts));
}

const SUFFIX = '.xplane.pb';

/** `{host, name, blob}` of a File, a Blob or an `{name, blob}`. */
function hostFile(x, i) {
  if (x && !(x instanceof Blob) && x.blob) {
    const name = String(x.name || x.file_name || `host${i}${SUFFIX}`);
    return { host: x.host ? String(x.host) : name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name, name, blob: toBlob(x.blob) };
  }
  const blob = toBlob(x);
  const name = typeof File !== 'undefined' && blob instanceof File ? blob.name : `host${i}${SUFFIX}`;
  return { host: name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name, name, blob };
}

/**
 * The row of a host the engine could not even answer for (its worker crashed): a
 * failed row with the worker's message, in the engine's row format.
 */
function crashedRow(f, e) {
  return {
    row: {
      host: f.host,
      file: f.name,
      file_bytes: f.blob.size,
      status: 'failed',
      error: String((e && e.message) || e).slice(0, 4000),
      error_kind: (e && e.kind) || 'engine',
      verdict: null,
      selected_module: null,
      plan_peak_bytes: null,
      runtime_peak_bytes: null,
      capacity_bytes: null,
      growth_per_execution_bytes: null,
      oom_evidence: [],
      ran_out_at_ns: null,
      ran_out_first: false,
      notes: [],
      skew: [],
    },
    profile_start_ns: null,
  };
}

/**
 * The host files of a multi-host run (one `*.xplane.pb` per host), analyzed on a pool
 * of workers (`poolSize`): each worker takes the next host, the engine reduces its
 * report to the host's summary row and drops the report, so memory depends on the
 * number of workers, not of hosts. The engine then compares the rows — which host ran
 * out first, which differ from the rest — as `oomlens FOLDER` does. A damaged host
 * file is a row with its one-line error. One host's full report is `Analyzer.run` on
 * its file, on demand. Starting a run while another runs cancels the running one.
 */
export class HostPool {
  /** @param {{workerUrl?: string|URL}} [config] */
  constructor(config = {}) {
    this.config = config;
    this.analyzers = [];
    this.token = null;
  }

  /**
   * @param {Array<File|Blob|{name: string, blob: Blob, host?: string}>} files the host
   *        files, in host order (the rows come back in this order)
   * @param {{module?: string, error_text?: string, jobs?: number}} [options]
   * @param {{onProgress?: Function, onHost?: Function, signal?: AbortSignal}} [hooks]
   *        `onProgress({finished, total, done, bytes, workers})` (`done` of `bytes`: the
   *        bytes read of all files); `onHost({index, row})` as each host is done
   * @returns {Promise<{hosts_summary: object[], view: object, markdown: string, ms: number, workers: number, version: string}>}
   */
  async run(files, options = {}, hooks = {}) {
    this.cancel();
    const token = {};
    this.token = token;
    const started = typeof performance !== 'undefined' ? performance.now() : Date.now();
    const hosts = files.map(hostFile);
    const workers = poolSize(hosts.length, options.jobs);
    while (this.analyzers.length < workers) this.analyzers.push(new Analyzer(this.config));
    const engineOptions = {};
    for (const k of ['module', 'error_text']) if (options[k] != null && options[k] !== '') engineOptions[k] = String(options[k]);
    const rows = new Array(hosts.length);
    const bytes = hosts.reduce((a, f) => a + f.blob.size, 0);
    const reading = new Map(); // index → bytes read so far of a host in progress
    let doneBytes = 0;
    let finished = 0;
    let next = 0;
    const check = () => {
      if (this.token !== token) throw new AbortError();
    };
    const progress = () => {
      if (!hooks.onProgress) return;
      let done = doneBytes;
      for (const d of reading.values()) done += d;
      hooks.onProgress({ finished, total: hosts.length, done, bytes, workers });
    };
    const onAbort = () => this.cancel();
    if (hooks.signal) {
      if (hooks.signal.aborted) throw new AbortError();
      hooks.signal.addEventListener('abort', onAbort, { once: true });
    }
    const work = async (analyzer) => {
      while (next < hosts.length) {
        check();
        const i = next++;
        const f = hosts[i];
        reading.set(i, 0);
        let row;
        try {
          const onProgress = (p) => {
            reading.set(i, Math.min(p.done, f.blob.size));
            progress();
          };
          row = (await analyzer.hostRow(f.blob, { ...engineOptions, host: f.host, file_name: f.name }, { onProgress })).row;
        } catch (e) {
          if (e instanceof AbortError || this.token !== token) throw e instanceof AbortError ? e : new AbortError();
          row = crashedRow(f, e);
        }
        check();
        reading.delete(i);
        doneBytes += f.blob.size;
        rows[i] = row;
        finished++;
        progress();
        if (hooks.onHost) hooks.onHost({ index: i, row: row.row });
      }
    };
    try {
      progress();
      await Promise.all(this.analyzers.slice(0, workers).map(work));
      check();
      const summary = await this.analyzers[0].compareHosts(rows);
      check();
      const ms = (typeof performance !== 'undefined' ? performance.now() : Date.now()) - started;
      return { hosts_summary: summary.hosts_summary, view: summary.view, markdown: summary.markdown, ms, workers, version: summary.version };
    } catch (e) {
      if (this.token === token) this.cancel();
      throw e;
    } finally {
      if (hooks.signal) hooks.signal.removeEventListener('abort', onAbort);
      if (this.token === token) {
        this.token = null;
        // The workers' engines hold the memory of the largest host each analyzed.
        this.terminate();
      }
    }
  }

  /** Cancels the running analysis of a folder, if any: its workers are terminated. */
  cancel() {
    this.token = null;
    for (const a of this.analyzers) a.cancel();
  }

  /** Stops the workers. */
  terminate() {
    this.cancel();
    for (const a of this.analyzers) a.terminate();
    this.analyzers = [];
  }
}

/**
 * Analyzes the host files of a multi-host run (one `*.xplane.pb` per host) on a pool of
 * workers and resolves to their summary rows compared — the same array as
 * `hosts_summary` of `oomlens FOLDER --format json` (see docs/hosts.md). A host file
 * that cannot be read is a row with its error; the others are analyzed.
 * @param {Array<File|Blob|{name: string, blob: Blob, host?: string}>} files in host order
 * @param {{module?: string, error_text?: string, jobs?: number, onProgress?: Function,
 *          onHost?: Function, signal?: AbortSignal, workerUrl?: string|URL}} [options]
 * @returns {Promise<object[]>}
 */
export async function analyzeHosts(files, options = {}) {
  const { onProgress, onHost, signal, workerUrl, ...engineOptions } = options;
  const pool = new HostPool({ workerUrl });
  try {
    const { hosts_summary } = await pool.run(files, engineOptions, { onProgress, onHost, signal });
    return hosts_summary;
  } finally {
    pool.terminate();
  }
}
