// The page's side of the size benchmark (BENCHMARKS.md): opens the built site in
// headless Chromium, gives it each capture through the file input (a disk-backed
// File: the page never holds the file in memory), and reports the time from the drop
// to the finished report (fastest of OOMLENS_BENCH_RUNS runs, 3), the engine's memory
// and the browser's peak resident memory. In the same browser it also times a worker
// that only reads the file, two ways: in 16 MiB slices with FileReaderSync, each slice
// released as the engine's worker releases it (how the page reads where the browser has
// no JSPI), and as a byte stream into one reused buffer (how its reader worker reads):
// the browser's `cat`, and the page's time as a ratio of each.
//
//   npm run build && node scripts/bench-page.mjs bench-out/scaled2_1GB.xplane.pb ...
//
// OOMLENS_BENCH_BASELINE=DIR also times another build of the site (a copy of an
// earlier dist/) in the same browser, its runs interleaved with this build's and the
// read's (the machine's speed drifts: only runs of one sitting compare), and prints its
// row first.
//
//   cp -r dist /tmp/dist-old   # before the change; then rebuild
//   OOMLENS_BENCH_BASELINE=/tmp/dist-old node scripts/bench-page.mjs FILE...
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RESULTS, hiddenFile, launch, openPage, runsSoFar, startServer, waitForRun } from '../tests/web/helpers.mjs';
import { serve } from './serve.mjs';

// The browser's `cat`: a worker of the page's origin (served from test-results/) that
// reads a File in the slices the page's worker reads, and does nothing with them.
const CAT_WORKER = `
const SLICE = 16 * 1024 * 1024;
const sink = new MessageChannel();
sink.port2.close();
self.onmessage = async (event) => {
  const { file, mode } = event.data;
  const started = performance.now();
  let check = 0;
  if (mode === 'stream') {
    // As the page's reader worker reads (www/reader.js): a byte stream into one reused buffer.
    const reader = file.stream().getReader({ mode: 'byob' });
    let buffer = new ArrayBuffer(SLICE);
    for (;;) {
      const { value, done } = await reader.read(new Uint8Array(buffer));
      if (done) break;
      check ^= value[0];
      buffer = value.buffer;
    }
  } else {
    const reader = new FileReaderSync();
    for (let at = 0; at < file.size; at += SLICE) {
      const buffer = reader.readAsArrayBuffer(file.slice(at, at + SLICE));
      check ^= new Uint8Array(buffer)[0];
      sink.port1.postMessage(null, [buffer]);
    }
  }
  self.postMessage({ ms: performance.now() - started, check });
};
`;

/** Reads `file` in the page (through a file input of its own) in a worker that only
 * reads, in 16 MiB slices with FileReaderSync (`mode` 'slices') or as a byte stream into
 * a reused buffer ('stream'): seconds. */
async function catSeconds(page, file, mode) {
  await hiddenFile(page, 'bench-cat', file);
  const ms = await page.evaluate(
    (mode) =>
      new Promise((resolve, reject) => {
        const worker = new Worker('__results__/bench-cat-worker.js');
        worker.onmessage = (e) => {
          worker.terminate();
          resolve(e.data.ms);
        };
        worker.onerror = (e) => reject(new Error(e.message || 'the cat worker failed'));
        worker.postMessage({ file: document.getElementById('bench-cat').files[0], mode });
      }),
    mode,
  );
  return ms / 1000;
}

/** Resident memory of Chromium's processes, in bytes: all of them summed, and the
 * renderers (where the page and its worker run: the tab). */
function browserRss() {
  try {
    const out = execFileSync('ps', ['-C', 'chromium', '-o', 'rss=,args='], { encoding: 'utf8' });
    let all = 0;
    let renderer = 0;
    for (const line of out.split('\n')) {
      const kib = Number(line.trim().split(/\s+/)[0]);
      if (!kib) continue;
      all += kib * 1024;
      if (line.includes('--type=renderer')) renderer += kib * 1024;
    }
    return { all, renderer };
  } catch {
    return { all: 0, renderer: 0 };
  }
}

/** One analysis of `file` through the page's file input: {seconds, state, phases}. */
async function pageRun(page, file) {
  const runs = await runsSoFar(page);
  const started = Date.now();
  await page.setInputFiles('#file-input', file);
  const state = await waitForRun(page, runs, 600000);
  const seconds = (Date.now() - started) / 1000;
  const info = await page.evaluate(() => ({ ...document.getElementById('engine-info').dataset }));
  return { seconds, state, phases: JSON.parse(info.phases || '[]'), readAhead: JSON.parse(info.readAhead || 'null') };
}

/** The better of two runs: a finished one, the faster. */
function faster(best, run) {
  if (!best) return run;
  if (run.state !== 'done') return best.state === 'done' ? best : run;
  return best.state !== 'done' || run.seconds < best.seconds ? run : best;
}

const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: node scripts/bench-page.mjs CAPTURE...');
  process.exit(2);
}
mkdirSync(RESULTS, { recursive: true });
writeFileSync(join(RESULTS, 'bench-cat-worker.js'), CAT_WORKER);
const { server, url } = await startServer();
const baselineDir = process.env.OOMLENS_BENCH_BASELINE;
const baselineServer = baselineDir ? await serve({ root: baselineDir }) : null;
const browser = await launch();
try {
  const { page } = await openPage(browser.context, url);
  const builds = [{ name: 'this build', page }];
  if (baselineServer) builds.unshift({ name: `baseline (${baselineDir})`, page: (await openPage(browser.context, baselineServer.url)).page });
  const columns = ['capture', 'size', 'drop → report', 'throughput', 'read alone: slices', 'page ÷ slices', 'read alone: stream', 'page ÷ stream', 'engine memory', 'tab (renderer) peak RSS', 'whole browser peak RSS'];
  if (baselineServer) columns.unshift('build');
  console.log(`| ${columns.join(' | ')} |\n|${columns.map(() => '---|').join('')}`);
  // Each file is analyzed OOMLENS_BENCH_RUNS times (3) by each build in the same
  // browser, and read alone as often, in rounds (each round in the order of the last
  // reversed, so that neither build always follows the read); the fastest run of each
  // is reported, with the largest memory seen over all of them (as the CLI bench does).
  const repeats = Math.max(1, Number(process.env.OOMLENS_BENCH_RUNS || 3));
  for (const file of files) {
    const size = statSync(file).size;
    const best = builds.map(() => null);
    const cat = { slices: Infinity, stream: Infinity };
    const peak = browserRss();
    const sampler = setInterval(() => {
      const now = browserRss();
      peak.all = Math.max(peak.all, now.all);
      peak.renderer = Math.max(peak.renderer, now.renderer);
    }, 100);
    const steps = [...builds.map((_, i) => i), 'slices', 'stream'];
    for (let r = 0; r < repeats; r++) {
      for (const step of r % 2 ? [...steps].reverse() : steps) {
        if (step in cat) cat[step] = Math.min(cat[step], await catSeconds(page, file, step));
        else best[step] = faster(best[step], await pageRun(builds[step].page, file));
      }
    }
    clearInterval(sampler);
    for (const [i, build] of builds.entries()) {
      const run = best[i];
      const memory = Number(await build.page.evaluate(() => document.getElementById('engine-info').dataset.memory || 0));
      console.error(`${build.name}: phases (fastest run): ${run.phases.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(2)} s`).join(', ')}`);
      if (run.readAhead) console.error(`${build.name}: read ahead (fastest run): ${JSON.stringify(run.readAhead)}`);
      const shown = run.state === 'done' ? `${run.seconds.toFixed(2)} s` : run.state;
      const ratio = (read) => (run.state === 'done' ? `${(run.seconds / read).toFixed(2)}×` : '—');
      const row = `| ${basename(file, '.xplane.pb')} | ${(size / 1e9).toFixed(2)} GB | ${shown} | ${(size / 1e6 / run.seconds).toFixed(0)} MB/s | ${cat.slices.toFixed(2)} s | ${ratio(cat.slices)} | ${cat.stream.toFixed(2)} s | ${ratio(cat.stream)} | ${(memory / 1048576).toFixed(1)} MiB | ${(peak.renderer / 1048576).toFixed(0)} MiB | ${(peak.all / 1048576).toFixed(0)} MiB |`;
      console.log(baselineServer ? `| ${build.name} ${row}` : row);
    }
  }
} finally {
  await browser.close();
  server.close();
  if (baselineServer) baselineServer.server.close();
}
