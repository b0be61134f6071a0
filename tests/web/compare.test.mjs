// Comparing two runs on the page, end to end in Chromium, on the recorded pairs
// (tests/fixtures/pairs/<pair>/{before,after}): two files dropped together, "Compare
// with…" on a report, the iframe message {oomlens: {before, after}} and the npm
// compare() must give exactly what `oomlens diff BEFORE AFTER --format json` gives, and
// the page must show the engine's comparison view (src/report/diff_view.rs) as it is.
//
//   npm run build && npm test

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { hostileCapture, HOSTILE } from './captures.mjs';
import { FIXTURES, RESULTS, clean as shown, cli, pageSuite, runsSoFar, skipReason, waitForRun } from './helpers.mjs';

const PAIRS_DIR = join(FIXTURES, 'pairs');
const PAIRS = existsSync(PAIRS_DIR) ? readdirSync(PAIRS_DIR).sort() : [];

/** The pair's two captures: {before: {path, url, name}, after: {…}}. */
function pair(name) {
  const side = (run) => {
    const dir = join(PAIRS_DIR, name, run);
    const file = readdirSync(dir).find((f) => f.endsWith('.xplane.pb'));
    return { path: join(dir, file), url: `__fixtures__/pairs/${name}/${run}/${file}`, name: file };
  };
  return { before: side('before'), after: side('after') };
}

/** `oomlens diff BEFORE AFTER --format json`: the reference. */
function cliDiff(before, after, args = []) {
  const r = cli('diff', [before, after, ...args, '--format', 'json']);
  assert.ok(!r.error, r.error);
  return JSON.parse(r.stdout);
}

const skip = skipReason() || (!PAIRS.length && 'no recorded pairs under tests/fixtures/pairs');
if (skip) console.log(`# SKIP: ${skip}`);

describe('oomlens page: comparing two runs', { skip: skip || false }, () => {
  const env = pageSuite({
    setup: async () => {
      writeFileSync(join(RESULTS, 'hostile.xplane.pb'), hostileCapture());
    },
  });

  const open = env.open;

  const clean = env.clean;

  /** Drops files (fetched from the test server) on the page together, as a drag and drop does. */
  async function dropFiles(page, files) {
    const runs = await runsSoFar(page);
    await page.evaluate(async (files) => {
      const dt = new DataTransfer();
      for (const f of files) dt.items.add(new File([await (await fetch(f.url)).blob()], f.name, { lastModified: f.lastModified || Date.now() }));
      document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files);
    return waitForRun(page, runs);
  }

  /** The comparison as the page's Download JSON gives it. */
  async function downloaded(page) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#compare-download-json')]);
    return JSON.parse(readFileSync(await download.path(), 'utf8'));
  }

  /** The engine's comparison (diff, view) of two files, through the page's own wrapper. */
  async function engine(page, p, options = {}) {
    return page.evaluate(
      async ({ p, options }) => {
        const { Comparer } = await import('./analyze.js');
        const comparer = new Comparer();
        try {
          const [b, a] = await Promise.all([p.before.url, p.after.url].map(async (u) => (await fetch(u)).arrayBuffer()));
          return await comparer.run(b, a, { before_file_name: p.before.name, after_file_name: p.after.name, ...options });
        } finally {
          comparer.terminate();
        }
      },
      { p, options },
    );
  }

  /** What the comparison shows. */
  async function shownFacts(page) {
    return page.evaluate(() => {
      const $ = (id) => document.getElementById(id);
      const cells = (selector) => [...document.querySelectorAll(selector)].map((tr) => [...tr.cells].map((td) => td.textContent));
      const list = (id) => [...document.querySelectorAll(`#${id} li`)].map((li) => li.dataset.id);
      return {
        visible: !$('compare').hidden,
        reportHidden: $('report').hidden,
        headline: $('compare-headline').textContent,
        fit: $('compare-headline-box').dataset.fit,
        before: $('compare-before').textContent,
        after: $('compare-after').textContent,
        module: $('compare-module').textContent,
        plan: cells('#compare-plan tbody tr'),
        roles: cells('#compare-roles tbody tr'),
        buffers: cells('#compare-buffers tbody tr'),
        bufferColumns: [...document.querySelectorAll('#compare-buffers thead th')].map((th) => th.textContent),
        more: (document.querySelector('#compare-buffers')?.closest('.table-wrap')?.nextElementSibling || {}).textContent || null,
        sum: $('compare-sum') ? $('compare-sum').querySelector('.text').textContent : null,
        lineTexts: [...document.querySelectorAll('#compare-resolved li, #compare-new li, #compare-remaining li')].map((li) => ({ id: li.dataset.id, text: li.textContent })),
        resolved: list('compare-resolved'),
        new: list('compare-new'),
        remaining: list('compare-remaining'),
        savings: [...document.querySelectorAll('#compare-savings li')].map((li) => ({ id: li.dataset.id, text: li.querySelector('.text').textContent, estimated: li.querySelector('.estimated-saving').textContent, actual: li.querySelector('.actual-saving').textContent })),
        chartLines: [...document.querySelectorAll('#compare-chart path.line')].map((p) => p.getAttribute('class')),
        chartSentence: $('compare-chart-sentence') ? $('compare-chart-sentence').textContent : null,
        roleBars: document.querySelectorAll('#compare-role-bars rect').length,
        workers: $('compare-info').dataset.workers,
        status: $('status').textContent,
      };
    });
  }

  /** The page shows the engine's view: every figure and word of it, capture strings cleaned. */
  function assertShowsView(facts, view, diff) {
    const v = view.hosts[0];
    assert.equal(facts.visible, true);
    assert.equal(facts.reportHidden, true);
    assert.equal(facts.headline, diff.headline.text);
    assert.equal(facts.headline, v.headline);
    assert.equal(facts.fit, diff.headline.fit);
    assert.ok(facts.before.includes(shown(v.before.file, 200)) && facts.after.includes(shown(v.after.file, 200)));
    assert.equal(facts.module, shown(v.module, 300));
    const text = (t) => t.rows.map((r) => r.map((c) => c.text));
    assert.deepEqual(facts.plan, text(v.plan), 'plan table');
    assert.deepEqual(facts.roles, text(v.roles), 'roles table');
    if (v.buffers) {
      assert.deepEqual(facts.bufferColumns, v.buffers.columns.map((c) => c.name));
      // Every cell whole (CSS cuts what its column cannot hold, with the full text on hover).
      assert.deepEqual(facts.buffers, v.buffers.rows.map((r, i) => r.map((c, j) => (v.buffers.columns[j].numeric ? c.text : shown(c.text, 200)))), 'buffer table');
    }
    assert.equal(facts.sum, v.sum);
    // The diagnosis lines, as the CLI's JSON has them.
    assert.deepEqual(facts.resolved, diff.diagnosis.resolved);
    // A line is named by its title; its id is only the data attribute.
    for (const l of facts.lineTexts) assert.ok(!l.text.includes(l.id), `${l.id} shown in "${l.text}"`);
    assert.deepEqual(facts.new, diff.diagnosis.new);
    assert.deepEqual(facts.remaining, diff.diagnosis.remaining);
    assert.deepEqual(facts.savings.map((s) => s.id), diff.predicted_vs_actual.map((p) => p.id));
    assert.deepEqual(facts.savings, v.savings.map((s) => ({ id: s.id, text: s.text, estimated: s.estimated, actual: s.actual })));
    // Memory along program order: both runs on one chart; the role bars side by side.
    assert.deepEqual(facts.chartLines, ['line before', 'line after']);
    assert.equal(facts.chartSentence, v.program_order.sentence);
    assert.ok(facts.roleBars >= 2, 'a role bar for each run');
  }

  test('two files dropped together are compared as the CLI compares them; Swap exchanges the runs', async () => {
    const p = pair('checkpoint');
    const { page, log } = await open();
    // Dropped in the wrong order: the names say which run is before.
    assert.equal(await dropFiles(page, [p.after, p.before]), 'done');
    const want = cliDiff(p.before.path, p.after.path);
    const saved = await downloaded(page);
    assert.deepEqual(saved, want, 'Download JSON == oomlens diff --format json');
    const { view, diff } = await engine(page, p);
    assert.deepEqual(diff, want);
    assertShowsView(await shownFacts(page), view, want);
    assert.ok(want.diagnosis.resolved.includes('role_forward'), 'the checkpoint resolves the forward activations');
    assert.ok(want.predicted_vs_actual.length > 0);
    await page.screenshot({ path: join(RESULTS, 'compare.png'), fullPage: true });
    // Swap: the after run becomes the before run.
    const runs = await runsSoFar(page);
    await page.click('#swap');
    assert.equal(await waitForRun(page, runs), 'done');
    const swapped = cliDiff(p.after.path, p.before.path);
    assert.deepEqual(await downloaded(page), swapped);
    assert.equal((await shownFacts(page)).headline, swapped.headline.text);
    // Copy as Markdown: what `oomlens diff --format markdown` prints.
    await env.browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.origin });
    await page.click('#compare-copy-md');
    await page.waitForFunction(() => document.getElementById('status').textContent.includes('clipboard'));
    const md = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(md, cli('diff', [p.after.path, p.before.path, '--format', 'markdown', '--top', '20']).stdout);
    // Back to one run's report.
    const again = await runsSoFar(page);
    await page.click('#show-before');
    assert.equal(await waitForRun(page, again), 'done');
    assert.equal(await page.isVisible('#report'), true);
    assert.equal(await page.isVisible('#compare'), false);
    clean(log);
    await page.close();
  });

  test('"Compare with…" on a report compares its capture (before) with the one picked (after)', async () => {
    const p = pair('donation');
    const { page, log } = await open();
    let runs = await runsSoFar(page);
    await page.setInputFiles('#file-input', p.before.path);
    assert.equal(await waitForRun(page, runs), 'done');
    assert.equal(await page.isVisible('#compare-with'), true);
    runs = await runsSoFar(page);
    await page.setInputFiles('#compare-input', p.after.path);
    assert.equal(await waitForRun(page, runs), 'done');
    const want = cliDiff(p.before.path, p.after.path);
    assert.deepEqual(await downloaded(page), want);
    const { view } = await engine(page, p);
    assertShowsView(await shownFacts(page), view, want);
    assert.ok(want.diagnosis.resolved.includes('no_donation'));
    clean(log);
    await page.close();
  });

  test('two run folders whose captures share a name: each side is named by its folder, as `oomlens diff` names it', async () => {
    const p = pair('checkpoint');
    // As the issue met it: run_a/vm.xplane.pb and run_b/vm.xplane.pb, picked as one folder.
    const dir = join(RESULTS, 'same-name');
    rmSync(dir, { recursive: true, force: true });
    for (const [run, side] of [['run_a', 'before'], ['run_b', 'after']]) {
      mkdirSync(join(dir, run), { recursive: true });
      copyFileSync(p[side].path, join(dir, run, 'vm.xplane.pb'));
    }
    // The before run is the older one, as a re-run after a fix is.
    utimesSync(join(dir, 'run_a', 'vm.xplane.pb'), new Date(1000000), new Date(1000000));
    const want = JSON.parse(cli('diff', [join(dir, 'run_a', 'vm.xplane.pb'), join(dir, 'run_b', 'vm.xplane.pb'), '--format', 'json']).stdout);
    assert.equal(want.before.run, 'run_a');
    const text = cli('diff', [join(dir, 'run_a', 'vm.xplane.pb'), join(dir, 'run_b', 'vm.xplane.pb')]).stdout;
    assert.match(text, /^oomlens diff — run_a\/vm\.xplane\.pb → run_b\/vm\.xplane\.pb/);
    const { page, log } = await open();
    const runs = await runsSoFar(page);
    await page.setInputFiles('#folder-input', dir);
    assert.equal(await waitForRun(page, runs), 'done');
    const facts = await shownFacts(page);
    assert.equal(facts.visible, true, 'two run folders are compared');
    assert.match(facts.before, /run_a\/vm\.xplane\.pb/);
    assert.match(facts.after, /run_b\/vm\.xplane\.pb/);
    const saved = await downloaded(page);
    assert.deepEqual([saved.before.run, saved.after.run], ['run_a', 'run_b']);
    assert.deepEqual(saved.diagnosis, want.diagnosis);
    assert.equal(saved.headline.text, want.headline.text);
    clean(log);
    await page.close();
  });

  test('a line is resolved only if its bytes went away: never green when the peak did not drop', async () => {
    // leak_steps → attention_train: the role_backward line is gone while the peak grew.
    const before = { url: '__fixtures__/leak_steps/leak_steps.xplane.pb', name: 'leak_steps.xplane.pb', path: join(FIXTURES, 'leak_steps', 'leak_steps.xplane.pb'), lastModified: 1000 };
    const after = { url: '__fixtures__/attention_train/attention_train.xplane.pb', name: 'attention_train.xplane.pb', path: join(FIXTURES, 'attention_train', 'attention_train.xplane.pb'), lastModified: 2000 };
    const want = cliDiff(before.path, after.path);
    assert.ok(want.headline.peak_after_bytes > want.headline.peak_before_bytes, 'the peak grew');
    assert.deepEqual(want.diagnosis.resolved, []);
    assert.ok(want.diagnosis.gone.includes('role_backward'));
    const { page, log } = await open();
    assert.equal(await dropFiles(page, [before, after]), 'done');
    assert.deepEqual(await downloaded(page), want, 'Download JSON == oomlens diff --format json');
    const shown = await page.evaluate(() => {
      const color = (sel) => {
        const el = document.querySelector(sel);
        return el ? getComputedStyle(el).color : null;
      };
      const probe = document.createElement('span');
      probe.style.color = 'var(--good)';
      document.body.append(probe);
      const good = getComputedStyle(probe).color;
      probe.remove();
      return {
        resolved: document.querySelectorAll('#compare-resolved li').length,
        gone: [...document.querySelectorAll('#compare-gone li')].map((li) => li.dataset.id),
        goneHeading: (document.querySelector('#compare-gone')?.previousElementSibling || {}).textContent,
        goneColor: color('#compare-gone li .title'),
        good,
      };
    });
    assert.equal(shown.resolved, 0);
    assert.deepEqual(shown.gone, want.diagnosis.gone);
    assert.match(shown.goneHeading, /No longer reported, but the peak did not drop/);
    assert.notEqual(shown.goneColor, shown.good, 'a line gone without its bytes is not shown green');
    await page.screenshot({ path: join(RESULTS, 'compare-gone.png'), fullPage: true });
    clean(log);
    await page.close();
  });

  test('the estimated-vs-measured block comes right after the headline, and the role breakdown appears once', async () => {
    const p = pair('checkpoint');
    const { page, log } = await open();
    assert.equal(await dropFiles(page, [p.before, p.after]), 'done');
    const layout = await page.evaluate(() => {
      const content = document.getElementById('compare-content');
      const first = content.firstElementChild;
      const headings = [...content.querySelectorAll('h2, h3')].map((h) => h.textContent);
      const top = (el) => el.getBoundingClientRect().top + window.scrollY;
      const savings = document.getElementById('compare-savings');
      const chart = document.getElementById('compare-chart');
      const roleText = [...content.querySelectorAll('*')].filter((el) => el.children.length === 0 && /^(before|after): forward/.test(el.textContent)).length;
      return {
        first: first && first.textContent,
        savingsTop: savings ? top(savings) : null,
        chartTop: chart ? top(chart) : null,
        roleHeadings: headings.filter((t) => t.startsWith('At the heap peak, by role')).length,
        roleTables: content.querySelectorAll('#compare-roles').length,
        roleSentences: roleText + document.querySelectorAll('#compare-role-sentences').length,
      };
    });
    assert.equal(layout.first, 'Estimated and measured savings', 'the savings first under the headline');
    assert.ok(layout.savingsTop < layout.chartTop, 'before the charts and tables');
    assert.ok(layout.savingsTop < 900, `near the top (${layout.savingsTop}px)`);
    assert.equal(layout.roleHeadings, 1, 'one heading for the heap by role');
    assert.equal(layout.roleTables, 1, 'its figures once');
    assert.equal(layout.roleSentences, 0, 'not again in words');
    clean(log);
    await page.close();
  });

  test('the iframe protocol: {oomlens: {before, after}} is compared, and the headline answered', async () => {
    const p = pair('scan_remat');
    writeFileSync(
      join(RESULTS, 'embed-compare.html'),
      `<!doctype html><meta charset="utf-8"><title>embed</title><link rel="icon" href="../favicon.svg">
<iframe id="f" src="../index.html" width="1200" height="700"></iframe>
<script>
window.log = [];
const frame = document.getElementById('f');
window.addEventListener('message', async (e) => {
  if (e.source !== frame.contentWindow) return;
  window.log.push(e.data);
  if (e.data && e.data.oomlens === 'ready') {
    const [a, b] = await Promise.all(['../${p.before.url}', '../${p.after.url}'].map(async (u) => (await fetch(u)).arrayBuffer()));
    frame.contentWindow.postMessage({ oomlens: { before: { buffer: a, title: '${p.before.name}' }, after: { buffer: b, title: '${p.after.name}' } } }, '*', [a, b]);
  }
});
</script>`,
    );
    const { page, log } = await open('__results__/embed-compare.html', { waitReady: false });
    await page.waitForFunction(() => window.log.some((m) => m && (m.oomlens === 'compared' || m.oomlens === 'error')), null, { timeout: 120000 });
    const messages = await page.evaluate(() => window.log);
    const want = cliDiff(p.before.path, p.after.path);
    assert.deepEqual(messages[0], { oomlens: 'ready' });
    assert.deepEqual(messages[1], { oomlens: 'received', before: { title: p.before.name, bytes: readFileSync(p.before.path).length }, after: { title: p.after.name, bytes: readFileSync(p.after.path).length } });
    assert.deepEqual(messages[2], { oomlens: 'compared', text: want.headline.text, fit: want.headline.fit });
    const frame = page.frames().find((f) => f.url().endsWith('/index.html'));
    const facts = await shownFacts(frame);
    assert.equal(facts.headline, want.headline.text);
    assert.deepEqual(facts.resolved, want.diagnosis.resolved);
    clean(log);
    await page.close();
  });

  test('the npm compare(a, b) resolves to the CLI\'s comparison on every recorded pair, in two workers or one', async () => {
    const { page, log } = await open();
    for (const name of PAIRS) {
      const p = pair(name);
      const got = await page.evaluate(async (p) => {
        const { compare, Comparer, AnalysisError } = await import('./analyze.js');
        const [b, a] = await Promise.all([p.before.url, p.after.url].map(async (u) => new Uint8Array(await (await fetch(u)).arrayBuffer())));
        const runs = new Set();
        const diff = await compare(b, a, { before_file_name: p.before.name, after_file_name: p.after.name, onProgress: (x) => runs.add(x.run) });
        const comparer = new Comparer();
        const two = await comparer.run(b, a, { before_file_name: p.before.name, after_file_name: p.after.name, parallel: true });
        const one = await comparer.run(b, a, { before_file_name: p.before.name, after_file_name: p.after.name, parallel: false });
        comparer.terminate();
        let error = null;
        try {
          await compare(b, new Blob(['{"not": "a capture"}']));
        } catch (e) {
          error = { isAnalysisError: e instanceof AnalysisError, kind: e.kind };
        }
        return { diff, runs: [...runs].sort(), two: two.diff, twoWorkers: two.workers, one: one.diff, oneWorkers: one.workers, error };
      }, p);
      const want = cliDiff(p.before.path, p.after.path);
      assert.deepEqual(got.diff, want, `${name}: compare() == oomlens diff --format json`);
      assert.deepEqual(got.two, want, `${name}: two workers`);
      assert.deepEqual(got.one, want, `${name}: one worker`);
      assert.equal(got.twoWorkers, 2);
      assert.equal(got.oneWorkers, 1);
      assert.deepEqual(got.runs, ['after', 'before']);
      assert.deepEqual(got.error, { isAnalysisError: true, kind: 'not_a_capture' });
    }
    clean(log);
    await page.close();
  });

  test('a module asked by label is compared as oomlens diff --module compares it', async () => {
    const p = pair('batch_half');
    const first = cliDiff(p.before.path, p.after.path);
    const label = first.before.module;
    const want = cliDiff(p.before.path, p.after.path, ['--module', label]);
    const { page, log } = await open();
    const { diff } = await engine(page, p, { module: label });
    assert.deepEqual(diff, want);
    clean(log);
    await page.close();
  });

  test('runs whose reports are about modules of different names: the one compared is analyzed again, as the CLI does', async () => {
    // Each report picks its own module; the comparison takes the largest module whose
    // name both runs have, and analyzes the run that was not about it again.
    const side = (name) => ({ path: join(FIXTURES, name, `${name}.xplane.pb`), url: `__fixtures__/${name}/${name}.xplane.pb`, name: `${name}.xplane.pb` });
    const p = { before: side('debug_print_8dev'), after: side('oom_first_call') };
    const want = cliDiff(p.before.path, p.after.path);
    assert.equal(want.module_choice, 'largest_common');
    const { page, log } = await open();
    for (const parallel of [true, false]) assert.deepEqual((await engine(page, p, { parallel })).diff, want, `parallel: ${parallel}`);
    clean(log);
    await page.close();
  });

  test('hostile strings from the captures stay text in the comparison', async () => {
    const { page, log } = await open();
    await page.evaluate(() => {
      window.__injected = 0;
      window.alert = () => {
        window.__injected++;
      };
    });
    const state = await dropFiles(page, [
      { url: '__results__/hostile.xplane.pb', name: 'hostile_before.xplane.pb' },
      { url: '__results__/hostile.xplane.pb', name: 'hostile_after.xplane.pb' },
    ]);
    assert.equal(state, 'done', await page.evaluate(() => document.getElementById('status').textContent));
    const dom = await page.evaluate(() => {
      const all = [...document.querySelectorAll('*')];
      return {
        imgs: document.querySelectorAll('img').length,
        handlers: all.flatMap((el) => [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `${el.tagName} ${a.name}`)),
        iframes: document.querySelectorAll('iframe, object, embed, foreignObject').length,
        body: document.body.textContent,
        injected: window.__injected,
        module: document.getElementById('compare-module').textContent,
      };
    });
    assert.equal(dom.imgs, 0);
    assert.deepEqual(dom.handlers, []);
    assert.equal(dom.iframes, 0);
    assert.equal(dom.injected, 0);
    assert.ok(dom.module.includes(HOSTILE.img), 'markup shows as text');
    for (const c of ['\u202e', '\u2066', '\u200f', '\u0007', '\u0000', '\u001b']) assert.ok(!dom.body.includes(c), `no raw U+${c.codePointAt(0).toString(16)}`);
    clean(log);
    await page.close();
  });
});
