// Shared setup for the browser tests: the CLI (the reference the page must equal), the
// static server for dist/, Chromium through playwright-core, and the page's own
// formatting rules mirrored for comparisons.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

import { serve } from '../../scripts/serve.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// OOMLENS_DIST: another build of the site to test (default: dist/ of this checkout).
export const DIST = process.env.OOMLENS_DIST ? resolve(process.env.OOMLENS_DIST) : join(ROOT, 'dist');
export const RESULTS = join(ROOT, 'test-results');
export const FIXTURES = join(ROOT, 'tests/fixtures');
export const SHARED = resolve(ROOT, '../shared/captures');
export const CLI = join(ROOT, 'target/release/oomlens');
export const CHROMIUM = process.env.OOMLENS_CHROMIUM || '/usr/bin/chromium';

export function skipReason() {
  if (!existsSync(join(DIST, 'index.html')) || !existsSync(join(DIST, 'oomlens_bg.wasm'))) return 'dist/ is not built: run npm run build first';
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (set OOMLENS_CHROMIUM)`;
  return null;
}

let cliChecked = false;
/**
 * Brings target/release/oomlens up to date (cargo build --release, a no-op when it is),
 * so the reference JSON comes from the same sources as the page's engine.
 */
export function ensureCli() {
  if (cliChecked) return;
  const r = spawnSync('cargo', ['build', '--release', '--quiet'], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, CARGO_BUILD_JOBS: process.env.CARGO_BUILD_JOBS || '1' } });
  if (r.status !== 0 && !existsSync(CLI)) throw new Error('cargo build --release failed and there is no target/release/oomlens');
  if (r.status !== 0) console.log('# cargo build --release failed: using the existing target/release/oomlens');
  cliChecked = true;
}

/** The CLI's output for a capture (`env`: variables added to its environment). */
export function cli(file, args = [], env = {}) {
  ensureCli();
  const r = spawnSync(CLI, [file, ...args], { encoding: 'utf8', maxBuffer: 1 << 30, env: { ...process.env, ...env } });
  if (r.status !== 0) return { error: r.stderr.trim(), status: r.status };
  return { stdout: r.stdout };
}

export function cliJson(file, args = [], env = {}) {
  const r = cli(file, [...args, '--format', 'json'], env);
  return r.error ? r : JSON.parse(r.stdout);
}

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.xplane.pb')) out.push(p);
  }
  return out;
}

/**
 * Writes the scenario captures of tests/support (plan too big, leak, no donation, …)
 * into test-results/scenarios with `cargo test --release --test write_scenarios`.
 */
export function writeScenarios() {
  const dir = join(RESULTS, 'scenarios');
  const r = spawnSync('cargo', ['test', '--release', '--test', 'write_scenarios', '--quiet'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, OOMLENS_WRITE_SCENARIOS: dir, CARGO_BUILD_JOBS: process.env.CARGO_BUILD_JOBS || '1' },
  });
  if (r.status !== 0) {
    console.log(`# SKIP: the scenario captures could not be written (cargo test --test write_scenarios): ${(r.stderr || String(r.error)).trim().split('\n').pop()}`);
    return [];
  }
  return existsSync(dir) ? walk(dir, []).sort().map((p) => ({ path: p, url: `__results__/scenarios/${basename(p)}`, name: basename(p) })) : [];
}

/** Every committed capture (tests/fixtures), scenario capture and shared capture, with its URL on the test server. */
export function allCaptures() {
  const list = [];
  mkdirSync(RESULTS, { recursive: true });
  list.push(...writeScenarios());
  if (existsSync(FIXTURES)) {
    for (const p of walk(FIXTURES, []).sort()) list.push({ path: p, url: `__fixtures__/${relative(FIXTURES, p).split('\\').join('/')}`, name: basename(p) });
  }
  if (!list.length) console.log('# SKIP: no committed capture under tests/fixtures/**/*.xplane.pb yet');
  if (existsSync(SHARED)) {
    for (const p of walk(SHARED, []).sort()) list.push({ path: p, url: `__shared__/${basename(p)}`, name: basename(p) });
  } else {
    console.log('# SKIP: ../shared/captures is absent; the shared-capture page checks did not run');
  }
  return list;
}

export async function startServer() {
  // dist/ again under a deep path, to check that every URL in the site is relative.
  const mounts = { '/__results__/': RESULTS, '/deep/sub/path/': DIST };
  if (existsSync(FIXTURES)) mounts['/__fixtures__/'] = FIXTURES;
  if (existsSync(SHARED)) mounts['/__shared__/'] = SHARED;
  return serve({ root: DIST, mounts });
}

/**
 * The browser tests' shared set-up, called inside a `describe`: before its tests, the
 * static server for dist/ and a fresh Chromium (`setup` first, if given); after them,
 * both closed (`teardown` last). Returns `env`: `origin` and `browser` (once started),
 * `open(path, options)` (a page of the site, see `openPage`) and `clean(log)` (asserts
 * that the page fetched nothing from elsewhere, logged no error and opened no dialog).
 */
export function pageSuite({ setup, teardown, launchOptions } = {}) {
  const env = { server: null, origin: null, browser: null };
  before(async () => {
    mkdirSync(RESULTS, { recursive: true });
    if (setup) await setup();
    const s = await startServer();
    env.server = s.server;
    env.origin = s.url.replace(/\/$/, '');
    env.browser = await launch(launchOptions);
  });
  after(async () => {
    if (env.browser) await env.browser.close();
    if (env.server) env.server.close();
    if (teardown) await teardown();
  });
  env.open = (path = '', options = {}) => openPage(env.browser.context, `${env.origin}/${path}`, options);
  env.clean = (log) => {
    assert.deepEqual(foreignRequests(log, env.origin), [], 'requests outside the page origin');
    assert.deepEqual(log.errors, [], 'console errors');
    assert.deepEqual(log.dialogs, [], 'dialogs');
  };
  return env;
}

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'];

/** A fresh Chromium profile; returns {context, close}. */
export async function launch(options = {}) {
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'oomlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    ...options,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the page and records what it does: every request URL (page and workers),
 * console errors and uncaught exceptions, dialogs (an alert would be an injection).
 */
export async function openPage(context, url, { waitReady = true } = {}) {
  const page = await context.newPage();
  const log = { requests: [], errors: [], dialogs: [] };
  page.on('request', (r) => log.requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error') log.errors.push(m.text());
  });
  page.on('pageerror', (e) => log.errors.push(String(e)));
  page.on('dialog', async (d) => {
    log.dialogs.push(d.message());
    await d.dismiss();
  });
  page.on('worker', (w) => log.requests.push(w.url()));
  await page.goto(url);
  if (waitReady) await page.waitForFunction(() => document.documentElement.dataset.ready === 'true');
  return { page, log };
}

/** Requests outside the page's origin (blob: and data: URLs are the page's own). */
export function foreignRequests(log, origin) {
  return log.requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));
}

/** Waits for the next analysis after `runs` finished ones; returns 'done' or 'error'. */
export async function waitForRun(page, runs, timeout = 120000) {
  await page.waitForFunction((n) => Number(document.documentElement.dataset.runs || 0) > n && document.documentElement.dataset.state !== 'running', runs, { timeout });
  return page.evaluate(() => document.documentElement.dataset.state);
}

/** Gives `file` to a hidden file input of the page's own (`id`, made once), outside the
 * app's: a File a test or bench then reads itself (`document.getElementById(id).files[0]`). */
export async function hiddenFile(page, id, file) {
  await page.evaluate((id) => {
    if (document.getElementById(id)) return;
    const input = document.createElement('input');
    input.type = 'file';
    input.id = id;
    input.hidden = true;
    document.body.append(input);
  }, id);
  await page.setInputFiles(`#${id}`, file);
}

export const runsSoFar = (page) => page.evaluate(() => Number(document.documentElement.dataset.runs || 0));

/** Drops a file (fetched from the test server) on the page, as a drag and drop does. */
export async function dropUrl(page, url, name) {
  const runs = await runsSoFar(page);
  await page.evaluate(
    async ({ url, name }) => {
      const blob = await (await fetch(url)).blob();
      const dt = new DataTransfer();
      dt.items.add(new File([blob], name));
      document.body.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { url, name },
  );
  return waitForRun(page, runs);
}

/** What the page shows, for comparing with the CLI (its JSON and text report) and the view. */
export async function pageFacts(page) {
  return page.evaluate(() => {
    const cells = (selector) => [...document.querySelectorAll(selector)].map((tr) => [...tr.cells].map((td) => td.textContent));
    return {
      headline: document.getElementById('headline-text').textContent,
      verdict: document.getElementById('headline').dataset.verdict,
      figures: [...document.querySelectorAll('#headline-figures li')].map((li) => ({ name: li.querySelector('.k').textContent, shown: li.querySelector('strong').textContent, label: li.querySelector('.label').textContent })),
      module: document.getElementById('module-name').textContent,
      file: document.getElementById('file-name').textContent,
      modules: [...document.querySelectorAll('#module-table tbody tr button')].map((b) => b.textContent),
      moduleRows: cells('#module-table tbody tr'),
      moduleColumns: [...document.querySelectorAll('#module-table thead th')].map((th) => th.textContent),
      planRows: cells('#plan-rows tr').map(([name, value, note]) => ({ name, value, note })),
      liveRows: cells('#live-table tbody tr'),
      diagnosis: [...document.querySelectorAll('#diagnosis-cards .card')].map((c) => c.dataset.id),
      cards: [...document.querySelectorAll('#diagnosis-cards .card')].map((c) => ({ id: c.dataset.id, title: c.querySelector('h3 .title').textContent, label: c.querySelector('h3 .label').textContent })),
      status: document.getElementById('status').textContent,
    };
  });
}

/** The view the engine gives for a capture on the test server, from the page's own wrapper (analyze.js). */
export async function viewOf(page, url, name) {
  return page.evaluate(
    async ({ url, name }) => {
      const { Analyzer } = await import('./analyze.js');
      const analyzer = new Analyzer();
      try {
        const bytes = await (await fetch(url)).arrayBuffer();
        return (await analyzer.run(bytes, { file_name: name })).view;
      } finally {
        analyzer.terminate();
      }
    },
    { url, name },
  );
}

/**
 * What the CLI's text report shows (`oomlens FILE`, one host): the verdict line, the
 * diagnosis cards (`[label] Title`: the id is not shown), the plan rows and the module
 * table's rows.
 */
/** The page's cards as the text report shows them: title and label (no id). */
export function shownCards(cards) {
  return cards.map(({ title, label }) => ({ title, label }));
}

export function textFacts(stdout) {
  const lines = stdout.split('\n');
  const verdict = lines.find((l) => l.startsWith('verdict: '));
  const cards = [];
  for (const l of lines) {
    const m = /^  \[(measured|read|estimated)\] (.*)$/.exec(l);
    if (m) cards.push({ title: m[2], label: m[1] });
  }
  const planRows = [];
  let i = lines.indexOf('Plan (read):');
  if (i >= 0) {
    // `  {name:<16} {value:>12}  ({note})`
    for (i++; i < lines.length && !lines[i].startsWith('  at the heap peak:'); i++) {
      const m = /^\s*(.+?)(?:  \((.*)\))?$/.exec(lines[i].slice(19));
      planRows.push({ name: lines[i].slice(2, 18).trim(), value: m[1], note: m[2] ?? '' });
    }
  }
  const moduleRows = [];
  let moduleMore = null;
  let j = lines.findIndex((l) => /^Modules \(.*\), largest peak first:$/.test(l));
  if (j >= 0) {
    // `  {peak:>12}  {temp:>12}  {params:>12}  {runs:>5}  {label}`, after the column names.
    const figure = '(\\S+(?: (?:[KMGTP]i)?B)?)';
    const row = new RegExp(`^\\s*${figure}\\s+${figure}\\s+${figure}\\s+(\\d+)  (.*)$`);
    for (j += 2; j < lines.length && lines[j].startsWith('  '); j++) {
      if (lines[j].startsWith('  … ')) {
        moduleMore = lines[j].trim();
        break;
      }
      moduleRows.push(row.exec(lines[j]).slice(1));
    }
  }
  return { verdict: verdict ? verdict.slice('verdict: '.length) : null, cards, planRows, moduleRows, moduleMore };
}

// The page's display rules (www/format.js), for comparing with the raw JSON.
const DANGEROUS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu;
export function clean(s, max = 300) {
  const chars = Array.from(s ?? '');
  const cut = chars.length > max;
  return (cut ? chars.slice(0, max) : chars).join('').replace(DANGEROUS, (c) => `\\u{${c.codePointAt(0).toString(16)}}`) + (cut ? '…' : '');
}

/** What the page must show for a CLI report (its JSON). */
export function expectedFacts(json) {
  return {
    headline: clean(json.headline.text, 400),
    verdict: json.headline.verdict,
    module: json.selected_module ? clean(json.selected_module, 200) : '',
    diagnosis: json.diagnosis.map((d) => d.id),
  };
}

/** The module table's cells as the page shows them: the view's text, capture strings cut as the CLI cuts them. */
export function expectedModuleRows(view) {
  if (!view.modules) return [];
  return view.modules.rows.map((cells) => cells.map((c, j) => (view.modules.columns[j].numeric ? c.text : clean(c.text, 120))));
}

// ---------------------------------------------------------------- layout checks

/**
 * What is wrong with the layout of the tables shown under `root` (a selector): a cell
 * whose content is wider than the cell, a word (a run of non-space characters) broken
 * over two lines, a cut token without its full text on hover and focus, a number not
 * right-aligned in tabular figures, a table wider than its box without a shade on the
 * side that hides columns. Returns [] when all is well, and what it checked.
 */
export async function tableProblems(page, root) {
  return page.evaluate((root) => {
    const problems = [];
    const counts = { tables: 0, cells: 0, words: 0, cut: 0, numbers: 0, scrolling: 0 };
    // Shown: laid out and not folded away in a closed <details>.
    const shown = (el) => (el.checkVisibility ? el.checkVisibility() : el.getClientRects().length > 0);
    const say = (what, el) => problems.push(`${what}: ${(el.closest('table') || {}).id || '?'} "${el.textContent.slice(0, 80)}"`);
    for (const table of document.querySelectorAll(`${root} table.data`)) {
      if (!shown(table)) continue;
      counts.tables++;
      for (const cell of table.querySelectorAll('td, th')) {
        if (!shown(cell)) continue;
        counts.cells++;
        if (cell.scrollWidth > cell.clientWidth + 1) say(`content ${cell.scrollWidth}px wider than its cell ${cell.clientWidth}px`, cell);
        // Every word in one piece: all of its boxes on one line.
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) {
          const node = walker.currentNode;
          for (const m of node.nodeValue.matchAll(/\S+/g)) {
            const range = document.createRange();
            range.setStart(node, m.index);
            range.setEnd(node, m.index + m[0].length);
            const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
            counts.words++;
            if (tops.size > 1) say(`"${m[0].slice(0, 60)}" broken over ${tops.size} lines`, cell);
          }
        }
        if (cell.classList.contains('num')) {
          counts.numbers++;
          const style = getComputedStyle(cell);
          if (style.textAlign !== 'right') say(`number aligned ${style.textAlign}`, cell);
          if (!style.fontVariantNumeric.includes('tabular-nums')) say(`number in ${style.fontVariantNumeric} figures`, cell);
        }
      }
      for (const token of table.querySelectorAll('.cut')) {
        if (!shown(token) || token.scrollWidth <= token.clientWidth + 1) continue;
        counts.cut++;
        if (!(token.getAttribute('title') || '').startsWith(token.dataset.full)) say('a cut token without its full text as its title', token);
        if (token.tabIndex < 0) say('a cut token that cannot be focused', token);
      }
      const scroll = table.parentElement;
      if (scroll.scrollWidth > scroll.clientWidth + 1) {
        counts.scrolling++;
        const wrap = scroll.closest('.table-wrap');
        const atStart = scroll.scrollLeft < 1;
        const atEnd = scroll.scrollLeft + scroll.clientWidth >= scroll.scrollWidth - 1;
        const shade = (side) => getComputedStyle(wrap, side === 'left' ? '::before' : '::after').opacity === '1';
        if (!atEnd && !shade('right')) say('columns hidden on the right without a shade there', table);
        if (!atStart && !shade('left')) say('columns hidden on the left without a shade there', table);
        if (atStart && shade('left')) say('a shade on the left with nothing hidden there', table);
      }
    }
    return { problems, counts };
  }, root);
}

/**
 * Pairs of labels that meet, in every chart shown under `root` (a selector): two
 * `<text>` of one chart whose boxes on screen intersect (by more than half a pixel).
 */
export async function labelOverlaps(page, root) {
  return page.evaluate((root) => {
    const overlaps = [];
    let charts = 0;
    let labels = 0;
    for (const svg of document.querySelectorAll(`${root} svg.chart`)) {
      if (!svg.getClientRects().length) continue;
      charts++;
      const boxes = [...svg.querySelectorAll('text')]
        .filter((t) => t.getAttribute('visibility') !== 'hidden' && t.textContent.trim())
        .map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }))
        .filter((b) => b.r.width > 0);
      labels += boxes.length;
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const a = boxes[i].r;
          const b = boxes[j].r;
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > 0.5 && h > 0.5) overlaps.push(`"${boxes[i].text}" meets "${boxes[j].text}"`);
        }
      }
    }
    return { overlaps, charts, labels };
  }, root);
}
