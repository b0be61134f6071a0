// Reading the capture ahead of the engine, in another worker (www/reader.js).
//
// Reading a File in a worker costs the browser about as much as the engine's scan of
// it (BENCHMARKS.md, "Where the worker's time goes"), and the engine pulls its bytes
// synchronously from inside one call into WebAssembly: done in one worker, the two take
// turns. Here a reader worker reads block k+1 while the engine scans block k. The
// engine waits for a block still on its way through JS Promise Integration: its import
// `oomlensTakeSlice` is a `WebAssembly.Suspending` function, and the scan is entered
// through `WebAssembly.promising`, so that waiting lets this worker's event loop run
// and receive the block. Where the browser has no JSPI, the engine reads the file
// itself as before; the report is the same either way.

/** The engine's block: `BLOCK` in src/wasm/source.rs. */
const BLOCK = 16 * 1024 * 1024;
/** Blocks the reader may read beyond those the engine has taken. */
const AHEAD = 4;
/** The prefix of the engine's import that takes a block read ahead (wasm-bindgen adds a hash). */
const TAKE_IMPORT = '__wbg_oomlensTakeSlice_';

const jspi = typeof WebAssembly.Suspending === 'function' && typeof WebAssembly.promising === 'function';
let suspendingImport = false;

/** Makes the engine's take-a-block import suspending, in an imports object about to be instantiated. */
function suspending(imports) {
  for (const group of Object.values(imports || {})) {
    for (const name of Object.keys(group)) {
      if (name.startsWith(TAKE_IMPORT) && !(group[name] instanceof WebAssembly.Suspending)) {
        group[name] = new WebAssembly.Suspending(group[name]);
        suspendingImport = true;
      }
    }
  }
  return imports;
}

/**
 * Runs wasm-bindgen's `init()` so that the engine's take-a-block import is suspending
 * (wasm-bindgen builds the imports object itself and offers no hook, so its calls to
 * `WebAssembly.instantiate*` are wrapped while it runs). Resolves to the exports.
 */
export async function initEngine(init) {
  if (!jspi) return init();
  const { instantiate, instantiateStreaming } = WebAssembly;
  WebAssembly.instantiate = (source, imports) => instantiate.call(WebAssembly, source, suspending(imports));
  if (instantiateStreaming) {
    WebAssembly.instantiateStreaming = (source, imports) => instantiateStreaming.call(WebAssembly, source, suspending(imports));
  }
  try {
    return await init();
  } finally {
    WebAssembly.instantiate = instantiate;
    if (instantiateStreaming) WebAssembly.instantiateStreaming = instantiateStreaming;
  }
}

/**
 * The scan entered so that the engine may wait for a block (`WebAssembly.promising`
 * over the raw export of `Analysis.scanReadAhead`), or null where this browser or this
 * build cannot: the caller then lets `finish` scan as before.
 */
export function readAheadScan(wasm) {
  const scan = wasm && wasm.analysis_scanReadAhead;
  if (!jspi || !suspendingImport || typeof scan !== 'function') return null;
  const promising = WebAssembly.promising(scan);
  return (analysis) => promising(analysis.__wbg_ptr);
}

/**
 * Blocks of `blob` read ahead by a reader worker, handed to the engine in the order it
 * asks for them. Each block's buffer goes back to the reader once the engine has copied
 * it (the engine gives it to the worker's `discard`, which calls `recycle`), and so
 * does a block nobody will take. While it is in use, the engine's import
 * `oomlensTakeSlice(start, end)` is `take`.
 */
export class SliceStream {
  /** `discard(buffer)` frees a buffer at once (used when the stream closes). */
  constructor(blob, discard) {
    this.blob = blob;
    this.discard = discard;
    this.run = 0;
    /** Where this run of blocks began, and how many of its blocks the engine took or passed. */
    this.runStart = 0;
    this.used = 0;
    /** Whether the reader was told to read this run ahead (the engine took a second block). */
    this.readingOn = false;
    /** Blocks of this run received and not yet taken: start → {buffer, length}. */
    this.arrived = new Map();
    /** The engine's request waiting for its block: {start, resolve}. */
    this.waiting = null;
    /** Buffers handed to the engine, to go back to the reader once copied. */
    this.lent = new WeakSet();
    this.broken = false;
    this.stats = { slices: 0, bytes: 0, largest: 0, runs: 0, waitMs: 0 };
    this.worker = new Worker(new URL('./reader.js', import.meta.url), { type: 'module', name: 'oomlens-reader' });
    this.worker.onmessage = (event) => this.receive(event.data || {});
    this.worker.onerror = (event) => {
      event.preventDefault();
      this.broken = true;
      this.answer(null);
    };
    self.oomlensTakeSlice = (start, end) => this.take(start, end);
  }

  /** The block `[start, end)`: a promise of a Uint8Array of it, or of null (the engine then reads it itself). */
  take(start, end) {
    if (this.broken) return Promise.resolve(null);
    // A block this run has not passed yet and reads without waiting for another block
    // to be taken; anything else starts a new run there.
    const index = (start - this.runStart) / BLOCK;
    const inRun = this.stats.runs > 0 && Number.isInteger(index) && index >= this.used && index < this.used + AHEAD;
    if (!inRun) this.begin(start);
    this.pass(start);
    // A run's reader reads its first block only, until the engine takes a second: a
    // lone block looked up (an event read again while the runtime is summarized) then
    // costs no read ahead.
    if (this.used > 0 && !this.readingOn) {
      this.readingOn = true;
      this.worker.postMessage({ type: 'on', run: this.run });
    }
    if (this.arrived.has(start)) return Promise.resolve(this.hand(start, end));
    const since = performance.now();
    return new Promise((resolve) => {
      this.waiting = { start, end, resolve, since };
    });
  }

  /** Starts a new run of blocks at `start`, giving the last run's back. */
  begin(start) {
    this.run += 1;
    this.stats.runs += 1;
    for (const { buffer } of this.arrived.values()) this.giveBack(buffer);
    this.arrived.clear();
    this.runStart = start;
    this.used = 0;
    this.readingOn = false;
    this.worker.postMessage({ type: 'start', blob: this.blob, start, block: BLOCK, ahead: AHEAD, run: this.run });
  }

  /** Gives back the blocks of this run before `start`, which the engine went past. */
  pass(start) {
    for (const [at, { buffer }] of this.arrived) {
      if (at < start) {
        this.arrived.delete(at);
        this.giveBack(buffer);
      }
    }
    this.used = Math.max(this.used, (start - this.runStart) / BLOCK);
  }

  hand(start, end) {
    const { buffer, length } = this.arrived.get(start);
    this.arrived.delete(start);
    this.used += 1;
    if (length !== end - start) {
      this.giveBack(buffer);
      return null;
    }
    this.lent.add(buffer);
    this.stats.slices += 1;
    this.stats.bytes += length;
    this.stats.largest = Math.max(this.stats.largest, length);
    if (Array.isArray(self.oomlensDebugSlices)) self.oomlensDebugSlices.push({ buffer, length }); // for the browser tests
    return new Uint8Array(buffer, 0, length);
  }

  /** Takes back a buffer the engine has copied; false for one that is not the stream's. */
  recycle(buffer) {
    if (!this.lent.has(buffer)) return false;
    this.lent.delete(buffer);
    this.giveBack(buffer);
    return true;
  }

  giveBack(buffer) {
    this.worker.postMessage({ type: 'recycle', buffer }, [buffer]);
  }

  receive(msg) {
    if (msg.type === 'failed') {
      if (msg.run !== this.run) return;
      this.broken = true;
      this.answer(null);
      return;
    }
    if (msg.run !== this.run || msg.start < this.runStart + this.used * BLOCK) {
      this.giveBack(msg.buffer); // of an earlier run, or passed already
      return;
    }
    this.arrived.set(msg.start, { buffer: msg.buffer, length: msg.length });
    const waiting = this.waiting;
    if (waiting && waiting.start === msg.start) this.answer(this.hand(waiting.start, waiting.end));
  }

  answer(view) {
    const waiting = this.waiting;
    this.waiting = null;
    if (!waiting) return;
    this.stats.waitMs += performance.now() - waiting.since;
    waiting.resolve(view);
  }

  close() {
    this.answer(null);
    for (const { buffer } of this.arrived.values()) this.discard(buffer);
    this.arrived.clear();
    this.worker.terminate();
    if (self.oomlensTakeSlice) delete self.oomlensTakeSlice;
  }
}
