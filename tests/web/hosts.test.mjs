// A folder of several host files in the page (issue 14 §4, docs/hosts.md): the hosts
// are analyzed on a pool of workers, only each host's summary row is kept, and the
// engine's cross-host summary comes first — the rows `oomlens DIR --format json` writes
// in hosts_summary[], laid out as the CLI prints them. The host picker opens one host's
// full report (analyzed again, on demand); a damaged host file is a row with its error.
//
//   npm run build && npm test

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';

import { FIXTURES, RESULTS, cli, cliJson, expectedFacts, openPage, pageFacts, pageSuite, runsSoFar, skipReason, waitForRun } from './helpers.mjs';

const skip = skipReason();
if (skip) console.log(`# SKIP: ${skip}`);

/** Every committed capture at the top of a fixture folder (tests/fixtures/<name>/<name>.xplane.pb). */
function fixtureCaptures() {
  const out = [];
  for (const dir of readdirSync(FIXTURES, { withFileTypes: true })) {
    if (!dir.isDirectory()) continue;
    for (const name of readdirSync(join(FIXTURES, dir.name))) {
      if (name.endsWith('.xplane.pb')) out.push(join(FIXTURES, dir.name, name));
    }
  }
  return out.sort();
}

/**
 * A run folder of host files made from the real fixtures: `host-NN.xplane.pb` each (two
 * of them the same capture, as the hosts of a pod are), one cut short (read in part),
 * one empty (not read).
 */
function makeRunFolder() {
  const dir = mkdtempSync(join(RESULTS, 'hosts-'));
  const run = join(dir, 'logdir', 'plugins', 'profile', '2026_01_01_00_00_00');
  mkdirSync(run, { recursive: true });
  const sources = fixtureCaptures();
  const files = [];
  sources.forEach((src, i) => {
    const name = `host-${String(i).padStart(2, '0')}.xplane.pb`;
    copyFileSync(src, join(run, name));
    files.push({ name, src });
  });
  const again = sources[0];
  copyFileSync(again, join(run, `host-${sources.length}.xplane.pb`));
  const whole = readFileSync(sources[sources.length - 1]);
  writeFileSync(join(run, 'host-cut.xplane.pb'), whole.subarray(0, Math.floor(whole.length * 0.6)));
  writeFileSync(join(run, 'host-empty.xplane.pb'), Buffer.alloc(0));
  return { dir, run, logdir: join(dir, 'logdir') };
}

describe('a folder of hosts in the page', { skip: skip || false }, () => {
  let folder;
  let want;

  const env = pageSuite({
    setup: async () => {
      folder = makeRunFolder();
      want = cliJson(folder.run);
    },
    teardown: async () => {
      if (folder) rmSync(folder.dir, { recursive: true, force: true });
    },
  });
  const clean = env.clean;

  test('the CLI reads the folder: a damaged host is a row, the others are reported', () => {
    assert.ok(!want.error, want.error);
    const byHost = Object.fromEntries(want.hosts_summary.map((r) => [r.host, r]));
    assert.equal(byHost['host-empty'].status, 'failed');
    assert.ok(byHost['host-empty'].error, 'the empty host has its one-line error');
    assert.notEqual(byHost['host-cut'].status, 'analyzed', 'the cut host is read in part, or not at all');
  });

  test('a picked folder: the summary first, equal to the CLI\'s hosts_summary; the picker opens a host', async () => {
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    let runs = await runsSoFar(page);
    await page.setInputFiles('#folder-input', folder.logdir);
    assert.equal(await waitForRun(page, runs), 'done');
    assert.equal(await page.isVisible('#hosts'), true, 'the summary is shown');
    assert.equal(await page.isVisible('#report'), false, 'no host report before one is picked');

    // The rows are the engine's, exactly those of `oomlens DIR --format json`.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#hosts-download-json')]);
    const saved = JSON.parse(readFileSync(await download.path(), 'utf8'));
    assert.deepEqual(saved.hosts_summary, want.hosts_summary, 'hosts_summary: the page == the CLI');

    // Laid out as the CLI prints it: the title, the hosts in order, the lines below.
    const text = cli(folder.run).stdout;
    const shown = await page.evaluate(() => ({
      title: document.getElementById('hosts-title').textContent,
      first: document.getElementById('hosts-first').textContent,
      hosts: [...document.querySelectorAll('#hosts-table tbody tr')].map((tr) => tr.dataset.host),
      columns: [...document.querySelectorAll('#hosts-table thead th')].map((th) => th.textContent),
      cells: [...document.querySelectorAll('#hosts-table tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent)),
      skew: [...document.querySelectorAll('#hosts-skew li')].map((li) => li.textContent),
      failed: [...document.querySelectorAll('#hosts-failed li')].map((li) => li.textContent),
      note: (document.getElementById('hosts-note') || {}).textContent || null,
      workers: Number(document.getElementById('hosts-info').dataset.workers),
      cores: navigator.hardwareConcurrency || 1,
    }));
    assert.equal(`oomlens — ${shown.title}`, text.split('\n')[0], 'the title line');
    assert.deepEqual(shown.hosts, want.hosts_summary.map((r) => r.host), 'one row per host file, in host order');
    for (const [i, r] of want.hosts_summary.entries()) {
      // Each row as the text report prints it (columns separated by two spaces or more).
      const line = text.split('\n').find((l) => l.trim().startsWith(`${r.host}${r.ran_out_first ? ' (first)' : ''} `));
      assert.ok(line, `${r.host}: a row in the CLI's text`);
      assert.deepEqual(line.trim().split(/ {2,}/), shown.cells[i].map((c) => c.trim()), `${r.host}: the CLI's cells`);
    }
    const listed = (heading) => {
      const lines = text.split('\n');
      const at = lines.indexOf(heading);
      if (at < 0) return [];
      const out = [];
      for (let i = at + 1; i < lines.length && lines[i].startsWith('  - '); i++) out.push(lines[i].slice(4));
      return out;
    };
    assert.deepEqual(shown.skew, listed('Differ from the rest:'), 'the hosts that differ from the rest');
    assert.deepEqual(shown.failed, listed('Could not be read:'), 'the hosts that could not be read, with their one-line errors');
    const empty = want.hosts_summary.find((r) => r.host === 'host-empty');
    assert.ok(shown.failed.some((l) => l.includes(empty.error)), 'the damaged host shows its error');
    assert.ok(text.includes(`note: ${shown.note}`), 'the note on the hosts not read');
    const first = want.hosts_summary.find((r) => r.ran_out_first);
    if (first) assert.match(shown.first, new RegExp(`^${first.host} ran out first`));
    else assert.equal(shown.first, '');
    assert.equal(shown.workers, Math.max(1, Math.min(shown.cores, 16, want.hosts_summary.length)), 'a pool sized by navigator.hardwareConcurrency');
    assert.equal(await page.$eval('#hosts-table tr[data-host="host-empty"]', (tr) => tr.querySelector('button')), null, 'a host not read cannot be opened');
    await page.screenshot({ path: join(RESULTS, 'hosts-summary.png'), fullPage: true });

    // The picker: a host's name opens its full report, analyzed again.
    const host = want.hosts_summary.find((r) => r.status === 'analyzed' && r.host !== 'host-00');
    runs = await runsSoFar(page);
    await page.click(`#hosts-table button[data-host="${host.host}"]`);
    assert.equal(await waitForRun(page, runs), 'done');
    const file = join(folder.run, `${host.host}.xplane.pb`);
    const facts = await pageFacts(page);
    assert.equal(facts.file, `${host.host}.xplane.pb`);
    assert.equal(facts.headline, expectedFacts(cliJson(file)).headline, 'the host\'s report is the CLI\'s (--host)');
    assert.equal(facts.headline, expectedFacts(cliJson(folder.run, ['--host', host.host])).headline);
    assert.equal(await page.isVisible('#hosts'), false);
    assert.match(await page.evaluate(() => location.hash), new RegExp(`host=${host.host}`));
    assert.equal(await page.$eval('#host-select', (s) => s.options[s.selectedIndex].textContent), host.host);

    // Another host from the report's picker.
    runs = await runsSoFar(page);
    await page.selectOption('#host-select', { label: 'host-00' });
    assert.equal(await waitForRun(page, runs), 'done');
    assert.equal((await pageFacts(page)).headline, expectedFacts(cliJson(join(folder.run, 'host-00.xplane.pb'))).headline);

    // Back to the summary, kept: no analysis again.
    runs = await runsSoFar(page);
    await page.click('#show-hosts');
    assert.equal(await page.isVisible('#hosts'), true);
    assert.equal(await page.isVisible('#report'), false);
    assert.equal(await runsSoFar(page), runs);
    assert.doesNotMatch(await page.evaluate(() => location.hash), /host=/);

    // The damaged host from the picker: its error, over the summary.
    runs = await runsSoFar(page);
    await page.click(`#hosts-table button[data-host="${host.host}"]`);
    assert.equal(await waitForRun(page, runs), 'done');
    runs = await runsSoFar(page);
    await page.selectOption('#host-select', { label: 'host-empty' });
    assert.equal(await waitForRun(page, runs), 'error');
    assert.ok((await pageFacts(page)).status.includes(empty.error), 'the empty host\'s error');
    assert.equal(await page.isVisible('#hosts'), true, 'the summary stays');
    clean(log);
    await page.close();
  });

  test('a pod-sized folder: 160 hosts dropped at once, one summary row each, as the CLI', async () => {
    const pod = mkdtempSync(join(RESULTS, 'pod-'));
    const src = readFileSync(join(FIXTURES, 'leak_steps', 'leak_steps.xplane.pb'));
    const names = [];
    for (let i = 0; i < 160; i++) {
      const name = `worker-${String(i).padStart(3, '0')}.xplane.pb`;
      writeFileSync(join(pod, name), src);
      names.push(name);
    }
    const cliRows = cliJson(pod).hosts_summary;
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    const runs = await runsSoFar(page);
    // Dropped as loose files (not a folder): several host files of one run.
    await page.evaluate(async (names) => {
      const bytes = await (await fetch('__fixtures__/leak_steps/leak_steps.xplane.pb')).arrayBuffer();
      const dt = new DataTransfer();
      for (const name of names) dt.items.add(new File([bytes], name));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, names);
    assert.equal(await waitForRun(page, runs), 'done');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#hosts-download-json')]);
    const saved = JSON.parse(readFileSync(await download.path(), 'utf8'));
    assert.equal(saved.hosts_summary.length, 160);
    assert.deepEqual(saved.hosts_summary, cliRows, 'hosts_summary: the page == the CLI');
    assert.equal(await page.$$eval('#hosts-table tbody tr', (trs) => trs.length), 160);
    rmSync(pod, { recursive: true, force: true });
    clean(log);
    await page.close();
  });

  test('the npm API: analyzeHosts gives the CLI\'s hosts_summary, on as many workers as asked', async () => {
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    const names = readdirSync(folder.run).sort();
    const payload = names.map((name) => ({ name, bytes: [...readFileSync(join(folder.run, name))] }));
    const got = await page.evaluate(async (files) => {
      const { analyzeHosts, HostPool } = await import('./analyze.js');
      const hosts = files.map((f) => new File([new Uint8Array(f.bytes)], f.name));
      const seen = [];
      const rows = await analyzeHosts(hosts, { jobs: 3, onHost: ({ index }) => seen.push(index) });
      const pool = new HostPool();
      const one = await pool.run(hosts, { jobs: 1 });
      pool.terminate();
      return { rows, seen: seen.sort((a, b) => a - b), one: one.hosts_summary, oneWorkers: one.workers };
    }, payload);
    assert.deepEqual(got.rows, want.hosts_summary, 'on three workers');
    assert.deepEqual(got.one, want.hosts_summary, 'on one worker');
    assert.equal(got.oneWorkers, 1);
    assert.deepEqual(got.seen, names.map((_, i) => i), 'every host reported as it is done');
    assert.equal(basename(folder.run), '2026_01_01_00_00_00');
    clean(log);
    await page.close();
  });
});
