// Issue 16 §7 on the page: comparing two captures should take at most twice one
// analysis (both runs are analyzed at once in two workers where the machine has the
// cores). Opens the built site in headless Chromium and times, from the page, each
// capture's analysis alone, then the comparison in two workers and in one (fastest of
// OOMLENS_BENCH_RUNS runs, 3). Files are read from the test server as Blobs.
//
//   npm run build && node scripts/bench-compare.mjs BEFORE.xplane.pb AFTER.xplane.pb
import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { RESULTS, launch, openPage, startServer } from '../tests/web/helpers.mjs';

const [before, after] = process.argv.slice(2);
if (!before || !after) {
  console.error('usage: node scripts/bench-compare.mjs BEFORE AFTER');
  process.exit(2);
}
const dir = join(RESULTS, 'bench-compare');
mkdirSync(dir, { recursive: true });
const names = ['before', 'after'].map((run, i) => {
  const name = `${run}-${basename([before, after][i])}`;
  copyFileSync([before, after][i], join(dir, name));
  return name;
});
const { server, url } = await startServer();
const browser = await launch();
try {
  const { page } = await openPage(browser.context, url);
  const repeats = Math.max(1, Number(process.env.OOMLENS_BENCH_RUNS || 3));
  const got = await page.evaluate(
    async ({ names, repeats }) => {
      const { Analyzer, Comparer } = await import('./analyze.js');
      const blobs = await Promise.all(names.map(async (n) => (await fetch(`__results__/bench-compare/${n}`)).blob()));
      const best = async (f) => {
        let t = Infinity;
        for (let r = 0; r < repeats; r++) {
          const s = performance.now();
          await f();
          t = Math.min(t, performance.now() - s);
        }
        return t;
      };
      const analyzer = new Analyzer();
      const one = [];
      for (const [i, b] of blobs.entries()) one.push(await best(() => analyzer.run(b, { file_name: names[i] })));
      analyzer.terminate();
      const comparer = new Comparer();
      const two = await best(() => comparer.run(blobs[0], blobs[1], { parallel: true }));
      const seq = await best(() => comparer.run(blobs[0], blobs[1], { parallel: false }));
      comparer.terminate();
      return { one, two, seq, cores: navigator.hardwareConcurrency };
    },
    { names, repeats },
  );
  const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
  const longest = Math.max(...got.one);
  console.log(`cores: ${got.cores}`);
  console.log(`one analysis: before ${s(got.one[0])}, after ${s(got.one[1])}`);
  console.log(`compare, two workers: ${s(got.two)} (${(got.two / longest).toFixed(2)}× the longer analysis)`);
  console.log(`compare, one worker: ${s(got.seq)} (${(got.seq / longest).toFixed(2)}×)`);
} finally {
  await browser.close();
  server.close();
}
