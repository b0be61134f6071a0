#!/usr/bin/env node
// Takes the README's screenshots from the built page (dist/) in headless Chromium:
// the report of a real out-of-memory failure ("Try a sample": tests/fixtures/
// oom_top_scores, its capture and the error it raised) and a comparison of two runs
// (tests/fixtures/pairs/checkpoint, before and after jax.checkpoint).
//
//   npm run build && node scripts/screenshots.mjs      writes docs/screenshots/*.png
//
// OOMLENS_DIST and OOMLENS_CHROMIUM as for the browser tests (tests/web/helpers.mjs).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import { DIST, ROOT, launch, openPage, runsSoFar, skipReason, startServer, waitForRun } from '../tests/web/helpers.mjs';

const OUT = join(ROOT, 'docs', 'screenshots');
const VIEWPORT = { width: 1200, height: 820 };

const skip = skipReason();
if (skip) {
  console.error(`screenshots: ${skip}`);
  process.exit(1);
}
mkdirSync(OUT, { recursive: true });
const { server, url } = await startServer();
const browser = await launch({ viewport: VIEWPORT });
try {
  const origin = url.replace(/\/$/, '');

  // 1. A real out-of-memory failure: the sample.
  const oom = await openPage(browser.context, `${origin}/`);
  let runs = await runsSoFar(oom.page);
  await oom.page.click('#try-sample');
  if ((await waitForRun(oom.page, runs)) !== 'done') throw new Error('the sample did not analyze');
  await oom.page.screenshot({ path: join(OUT, 'oom-report.png') });
  await oom.page.close();

  // 2. Two runs compared: the checkpoint pair dropped together.
  const cmp = await openPage(browser.context, `${origin}/`);
  runs = await runsSoFar(cmp.page);
  await cmp.page.evaluate(async () => {
    const dt = new DataTransfer();
    for (const side of ['before', 'after']) {
      const name = `checkpoint_${side}.xplane.pb`;
      const blob = await (await fetch(`__fixtures__/pairs/checkpoint/${side}/${name}`)).blob();
      dt.items.add(new File([blob], name));
    }
    document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  if ((await waitForRun(cmp.page, runs)) !== 'done') throw new Error('the pair did not compare');
  await cmp.page.screenshot({ path: join(OUT, 'comparison.png') });
  await cmp.page.close();
  console.log(`screenshots of ${DIST} in ${OUT}: oom-report.png, comparison.png`);
} finally {
  await browser.close();
  server.close();
}
