// The page's engine (a built pkg/ or dist/) run in Node over a capture read the page's
// way: 16 MiB slices through a FileReaderSync stand-in (positional reads), so the
// engine's own time can be measured and profiled without a browser (BENCHMARKS.md, "The
// page"). Prints each run's time, its phases and a digest of the report (the same
// digest from two builds: the same report).
//
//   node scripts/bench-engine-node.mjs pkg bench-out/scaled2_1GB.xplane.pb 3
//   node --cpu-prof scripts/bench-engine-node.mjs pkg FILE 1     # a profile of the wasm
import { createHash } from 'node:crypto';
import { fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dirArg, file, reps = '1'] = process.argv.slice(2);
if (!dirArg || !file) {
  console.error('usage: node scripts/bench-engine-node.mjs PKG_OR_DIST_DIR CAPTURE [RUNS]');
  process.exit(2);
}
const dir = resolve(dirArg);

/** Just what the engine asks of a Blob: its size and slices. */
class FileSlice {
  constructor(fd, start, end) {
    this.fd = fd;
    this.start = start;
    this.end = end;
  }
  get size() {
    return this.end - this.start;
  }
  slice(a, b) {
    return new FileSlice(this.fd, this.start + a, this.start + Math.min(b, this.size));
  }
}
// A new ArrayBuffer per slice, as the browser's FileReaderSync returns.
globalThis.FileReaderSync = class {
  readAsArrayBuffer(blob) {
    const buf = new ArrayBuffer(blob.size);
    let done = 0;
    while (done < blob.size) done += readSync(blob.fd, new Uint8Array(buf, done), 0, blob.size - done, blob.start + done);
    return buf;
  }
};

const engine = await import(pathToFileURL(`${dir}/oomlens.js`).href);
await engine.default({ module_or_path: readFileSync(`${dir}/oomlens_bg.wasm`) });
const fd = openSync(file, 'r');
const blob = new FileSlice(fd, 0, fstatSync(fd).size);
for (let r = 0; r < Number(reps); r++) {
  const phases = [];
  let phaseStart = performance.now();
  let phaseName = 'open';
  const progress = (phase) => {
    if (phase === phaseName) return;
    const now = performance.now();
    phases.push(`${phaseName} ${(now - phaseStart).toFixed(0)}`);
    phaseName = phase;
    phaseStart = now;
  };
  const started = performance.now();
  const analysis = new engine.Analysis(blob, { file_name: basename(file) }, progress);
  const report = analysis.finish(undefined);
  const ms = performance.now() - started;
  analysis.free();
  const digest = createHash('md5').update(JSON.stringify(report)).digest('hex').slice(0, 10);
  console.log(`${basename(dir)}: ${ms.toFixed(0)} ms (${phases.join(', ')} ms), report ${digest}`);
}
