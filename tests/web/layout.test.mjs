// The page laid out for reading, in Chromium at 1280 and at 800 px: tables keep every
// name, shape and source whole (cut with an ellipsis, the full text on hover and
// focus), scroll sideways inside their box with a shade on the side that hides
// columns, and right-align numbers in tabular figures; no two labels of a chart meet.
// And the page's modules: each one the build ships, none of them a monolith.
//
//   npm run build && npm test

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { hostileCapture } from './captures.mjs';
import { DIST, FIXTURES, RESULTS, ROOT, SHARED, dropUrl, labelOverlaps, openPage, pageSuite, runsSoFar, skipReason, tableProblems, waitForRun } from './helpers.mjs';

const WWW = join(ROOT, 'www');
const TABS = ['diagnosis', 'plan', 'runtime', 'modules'];
const WIDTHS = [1280, 800];

/** The page's modules, from app.js and worker.js along their static imports (the engine's own, oomlens.js, comes from pkg/). */
function pageModules() {
  const seen = new Set();
  const visit = (path) => {
    if (seen.has(path) || !existsSync(join(WWW, path))) return;
    seen.add(path);
    const source = readFileSync(join(WWW, path), 'utf8');
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
    for (const m of source.matchAll(/^import\s[^;]*?from\s+'(\.{1,2}\/[^']+)';/gms)) {
      const parts = `${dir}${m[1]}`.split('/');
      const out = [];
      for (const p of parts) {
        if (p === '..') out.pop();
        else if (p !== '.') out.push(p);
      }
      visit(out.join('/'));
    }
  };
  visit('app.js');
  visit('worker.js');
  return [...seen].sort();
}

const skip = skipReason();
if (skip) console.log(`# SKIP: ${skip}`);

describe('oomlens page: laid out for reading', { skip: skip || false }, () => {
  const env = pageSuite({
    setup: async () => {
      writeFileSync(join(RESULTS, 'hostile.xplane.pb'), hostileCapture());
    },
  });
  const clean = env.clean;

  /** Checks every tab's tables and charts at each width; returns what the checks counted. */
  async function checkTabs(page, name) {
    const seen = { cut: 0, scrolling: 0, words: 0, labels: 0 };
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const tab of TABS) {
        await page.click(`#tab-${tab}`);
        // What is folded away (the list of executions) is checked unfolded.
        await page.$$eval(`#panel-${tab} details`, (ds) => ds.forEach((d) => (d.open = true)));
        // Charts are drawn again at the new width once the resize settles (150 ms).
        await page.waitForTimeout(250);
        const tables = await tableProblems(page, `#panel-${tab}`);
        assert.deepEqual(tables.problems, [], `${name} at ${width} px, ${tab}: tables`);
        const labels = await labelOverlaps(page, `#panel-${tab}`);
        assert.deepEqual(labels.overlaps, [], `${name} at ${width} px, ${tab}: chart labels`);
        seen.cut += tables.counts.cut;
        seen.scrolling += tables.counts.scrolling;
        seen.words += tables.counts.words;
        seen.labels += labels.labels;
        if (width === 800) await page.screenshot({ path: join(RESULTS, `layout-800-${name}-${tab}.png`), fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return seen;
  }

  test('the page is split into modules that the build ships, none over 600 lines', () => {
    const modules = pageModules();
    for (const view of ['summary', 'diagnosis', 'plan', 'runtime', 'modules', 'compare', 'hosts', 'inputs']) assert.ok(modules.includes(`views/${view}.js`), `views/${view}.js is part of the page`);
    for (const m of modules) {
      const source = readFileSync(join(WWW, m), 'utf8');
      assert.ok(source.split('\n').length <= 600, `www/${m}: ${source.split('\n').length} lines`);
      assert.ok(existsSync(join(DIST, m)), `dist/${m}: the build copies it`);
      assert.equal(readFileSync(join(DIST, m), 'utf8'), source, `dist/${m} is www/${m} (run npm run build)`);
    }
    // The policy still allows nothing but the page's own files.
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(readFileSync(join(DIST, 'index.html'), 'utf8'))[1];
    assert.match(csp, /script-src 'self' 'wasm-unsafe-eval';/);
    assert.doesNotMatch(csp, /unsafe-inline|https?:/);
  });

  const singles = [
    { name: 'hostile.xplane.pb', url: '__results__/hostile.xplane.pb', path: join(RESULTS, 'hostile.xplane.pb') },
    { name: 'xprof_tpu_inference_2_clean.xplane.pb', url: '__shared__/xprof_tpu_inference_2_clean.xplane.pb', path: join(SHARED, 'xprof_tpu_inference_2_clean.xplane.pb') },
    { name: 'tracelens_jax08_conv_tw003.xplane.pb', url: '__shared__/tracelens_jax08_conv_tw003.xplane.pb', path: join(SHARED, 'tracelens_jax08_conv_tw003.xplane.pb') },
    { name: 'xprof_tf_gpu_multi_worker_2020.xplane.pb', url: '__shared__/xprof_tf_gpu_multi_worker_2020.xplane.pb', path: join(SHARED, 'xprof_tf_gpu_multi_worker_2020.xplane.pb') },
    { name: 'scan_layers.xplane.pb', url: '__fixtures__/scan_layers/scan_layers.xplane.pb', path: join(FIXTURES, 'scan_layers/scan_layers.xplane.pb') },
    { name: 'oom_top_scores.xplane.pb', url: '__fixtures__/oom_top_scores/oom_top_scores.xplane.pb', path: join(FIXTURES, 'oom_top_scores/oom_top_scores.xplane.pb') },
  ];
  for (const c of singles) {
    const absent = !c.name.startsWith('hostile') && !existsSync(c.path) && `${c.path} is absent`;
    test(`${c.name}: whole words, cut tokens with their full text, sideways scrolling with a shade, labels apart`, { skip: absent || false }, async () => {
      const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
      assert.equal(await dropUrl(page, c.url, c.name), 'done');
      const seen = await checkTabs(page, c.name.replace(/\.xplane\.pb$/, ''));
      assert.ok(seen.labels > 0, `charts were checked: ${JSON.stringify(seen)}`);
      clean(log);
      await page.close();
    });
  }

  const tpu = join(SHARED, 'xprof_tpu_inference_2_clean.xplane.pb');
  test('at 800 px a long tuple shape is cut, shows whole on focus, and the table scrolls under a shade that follows', { skip: !existsSync(tpu) && `${tpu} is absent` }, async () => {
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    await page.setViewportSize({ width: 800, height: 900 });
    assert.equal(await dropUrl(page, '__shared__/xprof_tpu_inference_2_clean.xplane.pb', 'xprof_tpu_inference_2_clean.xplane.pb'), 'done');
    await page.click('#tab-plan');
    // The buffer whose shape is a tuple of four f32[5,1024,1024,256]: wider than its column.
    await page.waitForSelector('#live-table td .cut[tabindex="0"]');
    const token = await page.evaluateHandle(() => [...document.querySelectorAll('#live-table td .cut')].find((el) => el.textContent.startsWith('(') && el.scrollWidth > el.clientWidth + 1));
    const cut = await token.evaluate((el) => ({ full: el.dataset.full, title: el.title, tabIndex: el.tabIndex, height: el.getBoundingClientRect().height, line: parseFloat(getComputedStyle(el).lineHeight) }));
    assert.match(cut.full, /^\(f32\[/, 'a tuple shape, wider than its column');
    assert.equal(cut.title, cut.full, 'its full text on hover');
    assert.equal(cut.tabIndex, 0, 'focusable');
    assert.ok(cut.height <= cut.line * 1.2, `on one line (${cut.height}px for a ${cut.line}px line)`);
    await token.focus();
    const popup = await token.evaluate((el) => getComputedStyle(el, '::after').content);
    assert.equal(popup, JSON.stringify(cut.full), 'its full text under it on focus');
    await token.evaluate((el) => el.blur());

    // Columns hidden on the right: a shade there, none on the left; scrolled to the end, the other way round.
    const shades = () =>
      page.$eval('#live-table', (table) => {
        const wrap = table.closest('.table-wrap');
        const on = (side) => getComputedStyle(wrap, side).opacity === '1';
        return { more: wrap.dataset.more, left: on('::before'), right: on('::after'), focusable: table.parentElement.tabIndex === 0 };
      });
    assert.deepEqual(await shades(), { more: 'right', left: false, right: true, focusable: true });
    await page.$eval('#live-table', (table) => {
      table.parentElement.scrollLeft = table.parentElement.scrollWidth;
    });
    await page.waitForFunction(() => document.getElementById('live-table').closest('.table-wrap').dataset.more === 'left');
    assert.deepEqual(await shades(), { more: 'left', left: true, right: false, focusable: true });
    assert.deepEqual((await tableProblems(page, '#panel-plan')).problems, []);
    await page.screenshot({ path: join(RESULTS, 'layout-800-scrolled-plan.png'), fullPage: false });
    clean(log);
    await page.close();
  });

  const PAIRS_DIR = join(FIXTURES, 'pairs');
  const pairs = existsSync(PAIRS_DIR) ? readdirSync(PAIRS_DIR).sort() : [];
  test('comparisons: the tables read at 800 px, and the two peaks\' labels never print on each other', { skip: !pairs.length && 'no recorded pairs under tests/fixtures/pairs' }, async () => {
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    for (const pair of pairs) {
      const files = ['before', 'after'].map((side) => {
        const name = readdirSync(join(PAIRS_DIR, pair, side)).find((f) => f.endsWith('.xplane.pb'));
        return { name, url: `__fixtures__/pairs/${pair}/${side}/${name}` };
      });
      await page.setViewportSize({ width: 1280, height: 900 });
      const runs = await runsSoFar(page);
      await page.evaluate(async (files) => {
        const dt = new DataTransfer();
        for (const f of files) dt.items.add(new File([await (await fetch(f.url)).blob()], f.name));
        document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, files);
      assert.equal(await waitForRun(page, runs), 'done', pair);
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        await page.waitForTimeout(250);
        const tables = await tableProblems(page, '#compare');
        assert.deepEqual(tables.problems, [], `${pair} at ${width} px: tables`);
        assert.ok(tables.counts.tables >= 2 && tables.counts.numbers > 0, `${pair}: the comparison's tables were checked`);
        const labels = await labelOverlaps(page, '#compare');
        assert.deepEqual(labels.overlaps, [], `${pair} at ${width} px: chart labels`);
        // Both peaks are still labelled, apart or merged into one label.
        const peaks = await page.$$eval('#compare-chart text.peak-label', (ts) => ts.map((t) => t.textContent).join(' · '));
        assert.match(peaks, /before: .*after: /, `${pair} at ${width} px: both peaks labelled`);
        if (width === 800) await page.screenshot({ path: join(RESULTS, `layout-800-compare-${pair}.png`), fullPage: true });
      }
    }
    clean(log);
    await page.close();
  });
});
