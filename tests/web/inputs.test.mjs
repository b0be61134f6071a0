// Inputs without a capture in the page (issue 15 §6, docs/inputs.md): the error message
// pasted on the landing page or dropped as a .txt/.log, an XLA dump folder, a pair of
// device memory profiles. Each report must be the CLI's (`oomlens FILE… --format
// json`), laid out as a capture's report is; the message's listing is drawn as bars
// with the layout padding shaded, and the TensorCore/SparseCore split as a bar.
//
//   npm run build && npm test

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';

import { FIXTURES, RESULTS, cli, cliJson, expectedFacts, openPage, pageFacts, pageSuite, runsSoFar, skipReason, waitForRun } from './helpers.mjs';

const skip = skipReason() || (!existsSync(join(FIXTURES, 'errors')) && 'no tests/fixtures/errors');
if (skip) console.log(`# SKIP: ${skip}`);

const ERRORS = join(FIXTURES, 'errors');
/** The first error fixture whose name matches. */
const errorFile = (pattern) => join(ERRORS, readdirSync(ERRORS).find((n) => n.endsWith('.txt') && pattern.test(n)));

describe('inputs without a capture in the page', { skip: skip || false }, () => {
  const env = pageSuite();
  const clean = env.clean;

  /** Drops files from the test server on the page, as one drag and drop. */
  async function drop(page, files) {
    const runs = await runsSoFar(page);
    await page.evaluate(async (files) => {
      const dt = new DataTransfer();
      for (const f of files) dt.items.add(new File([await (await fetch(f.url)).blob()], f.name));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, files);
    return waitForRun(page, runs);
  }

  async function downloaded(page) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-json')]);
    return JSON.parse(readFileSync(await download.path(), 'utf8'));
  }

  /** The report on the page says what the CLI's JSON says, and shows the engine's view of the message. */
  async function assertReport(page, json, what) {
    const facts = await pageFacts(page);
    const want = expectedFacts(json);
    assert.equal(facts.headline, want.headline, `${what}: headline`);
    assert.equal(facts.verdict, want.verdict, `${what}: verdict`);
    assert.equal(facts.module, want.module, `${what}: module`);
    assert.deepEqual(facts.diagnosis, want.diagnosis, `${what}: diagnosis ids`);
    assert.equal(await page.isVisible('#report'), true, `${what}: a report, laid out as a capture's`);
  }

  test('Paste an error on the landing page: the report of `oomlens --error-text`; its listing as bars, padding shaded', async () => {
    const file = errorFile(/padded|program-requirement/);
    const json = cliJson(file);
    assert.equal(json.status, undefined, json.error);
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    await page.click('#paste summary');
    await page.fill('#paste-text', readFileSync(file, 'utf8'));
    const runs = await runsSoFar(page);
    await page.click('#paste-go');
    assert.equal(await waitForRun(page, runs), 'done');
    await assertReport(page, json, 'pasted');
    // The message's figures and listing, as the engine lays them out.
    const shown = await page.evaluate(() => ({
      title: (document.querySelector('#error-result h3') || {}).textContent,
      rows: [...document.querySelectorAll('#error-result dl dt')].map((dt) => dt.textContent),
      bars: document.querySelectorAll('#error-listing svg rect.listing-data').length,
      padding: document.querySelectorAll('#error-listing svg rect.listing-padding').length,
      table: document.querySelectorAll('#error-allocations tbody tr').length,
    }));
    const allocations = json.error.allocations || [];
    assert.ok(allocations.length > 0, 'the fixture lists allocations');
    assert.equal(shown.bars, Math.min(allocations.length, shown.table), 'one bar per allocation listed');
    assert.equal(shown.padding, allocations.slice(0, shown.table).filter((a) => a.unpadded_bytes != null && a.unpadded_bytes < a.size_bytes).length, 'padding shaded where the listing has some');
    assert.match(shown.title, /^The error message/);
    const text = cli(file).stdout;
    for (const name of shown.rows) assert.ok(text.includes(`  ${name} `), `the message's row ${name}, as the CLI prints it`);
    await page.screenshot({ path: join(RESULTS, 'pasted-error.png'), fullPage: true });
    clean(log);
    await page.close();
  });

  /** Pastes a message on the landing page and waits for its report. */
  async function paste(page, message) {
    await page.click('#paste summary');
    await page.fill('#paste-text', message);
    const runs = await runsSoFar(page);
    await page.click('#paste-go');
    assert.equal(await waitForRun(page, runs), 'done');
  }

  test('a pasted error alone: verdict and causes first, the paste box folded, no empty tabs, no "Module none"', async () => {
    // A real public message (tests/fixtures/errors), as a user pastes it.
    const file = errorFile(/padded|program-requirement/);
    const json = cliJson(file);
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    await paste(page, readFileSync(file, 'utf8'));
    await assertReport(page, json, 'pasted');
    const shown = await page.evaluate(() => {
      const $ = (id) => document.getElementById(id);
      const top = (el) => el.getBoundingClientRect().top + window.scrollY;
      const visible = (el) => !!el && el.checkVisibility();
      const card = document.querySelector('#diagnosis-cards .card');
      return {
        pasteOpen: $('paste').open,
        pasteHeight: $('paste').getBoundingClientRect().height,
        headlineTop: top($('headline')),
        cardTop: card ? top(card) : null,
        errorAfterCards: card ? !!(card.compareDocumentPosition($('error-result')) & Node.DOCUMENT_POSITION_FOLLOWING) : false,
        errorShown: visible($('error-result').querySelector('h3')),
        errorBoxOpen: $('error-box').open,
        tabs: ['diagnosis', 'plan', 'runtime', 'modules'].filter((t) => visible($(`tab-${t}`))),
        why: visible($('tabs-why')) ? $('tabs-why').textContent : null,
        moduleLine: visible($('module-line')),
        text: $('report').innerText,
      };
    });
    assert.equal(shown.pasteOpen, false, 'the landing paste box folds away under the report');
    assert.ok(shown.pasteHeight < 40, `the folded paste box is one line (${shown.pasteHeight}px)`);
    assert.ok(shown.headlineTop < 250, `the verdict near the top (${shown.headlineTop}px)`);
    assert.ok(shown.cardTop != null && shown.cardTop < 600, `the first cause within the first screen (${shown.cardTop}px)`);
    assert.ok(shown.errorAfterCards, 'the message as read comes after the causes');
    assert.ok(shown.errorShown, 'the message as read is shown without opening anything');
    assert.equal(shown.errorBoxOpen, false, 'the box to change the error stays folded');
    assert.deepEqual(shown.tabs, [], 'no plan, runtime or modules tab without a capture (nor a lone diagnosis tab)');
    assert.match(shown.why, /^No compiled plan, runtime events or module list here: they come from a profiler capture/);
    assert.equal(shown.moduleLine, false, 'no module line');
    assert.doesNotMatch(shown.text, /Module none|\bnone\b.*module/i);
    await page.screenshot({ path: join(RESULTS, 'pasted-error-top.png') });
    clean(log);
    await page.close();
  });

  test('Compare with… works for two pasted errors and for an error against a capture, or says why not', async () => {
    // Two real recorded CPU failures' messages (tests/fixtures/oom_*/error.txt).
    const first = join(FIXTURES, 'oom_first_call', 'error.txt');
    const second = join(FIXTURES, 'oom_top_scores', 'error.txt');
    const want = JSON.parse(cli('diff', [first, second, '--format', 'json']).stdout);
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    await paste(page, readFileSync(first, 'utf8'));
    assert.equal(await page.isVisible('#compare-pick'), false);
    await page.click('#compare-with');
    assert.equal(await page.isVisible('#compare-pick'), true, 'Compare with… opens its choices');
    await page.fill('#compare-text', readFileSync(second, 'utf8'));
    let runs = await runsSoFar(page);
    await page.click('#compare-paste-go');
    assert.equal(await waitForRun(page, runs), 'done');
    const facts = await page.evaluate(() => ({
      visible: !document.getElementById('compare').hidden,
      headline: document.getElementById('compare-headline').textContent,
      moduleLine: document.getElementById('compare-module-line').checkVisibility(),
      lines: [...document.querySelectorAll('#compare-content li[data-status]')].map((li) => [li.dataset.status, li.dataset.id]),
      resolved: document.querySelectorAll('#compare-resolved li').length,
      sides: [...document.querySelectorAll('.side')].map((s) => s.textContent),
    }));
    assert.equal(facts.visible, true, 'the comparison is shown');
    assert.equal(facts.headline, want.headline.text);
    assert.equal(facts.moduleLine, false, 'no "none → none" module line');
    const d = want.diagnosis;
    assert.equal(d.compared, true);
    assert.deepEqual(facts.lines, [...d.gone.map((id) => ['gone', id]), ...d.new.map((id) => ['new', id]), ...d.remaining.map((id) => ['remaining', id])], 'the lines as `oomlens diff` compares them');
    assert.equal(facts.resolved, 0, 'nothing resolved: no peak says bytes went away');
    assert.ok(facts.sides.every((s) => !/module none/.test(s)));
    await page.screenshot({ path: join(RESULTS, 'compare-two-errors.png'), fullPage: true });

    // An error against a capture: compared, and the page says why the lines are not.
    runs = await runsSoFar(page);
    await page.click('#show-before');
    assert.equal(await waitForRun(page, runs), 'done');
    assert.equal(await page.isVisible('#report'), true, "back to the before run's report");
    runs = await runsSoFar(page);
    await page.click('#compare-with');
    await page.setInputFiles('#compare-input', join(FIXTURES, 'oom_top_scores', 'oom_top_scores.xplane.pb'));
    assert.equal(await waitForRun(page, runs), 'done');
    const why = await page.evaluate(() => ({
      visible: !document.getElementById('compare').hidden,
      notCompared: (document.getElementById('compare-lines-not-compared') || {}).textContent,
      notes: [...document.querySelectorAll('#compare-notes li')].map((li) => li.dataset.id),
    }));
    assert.equal(why.visible, true);
    assert.match(why.notCompared, /not compared/);
    assert.ok(why.notes.includes('no_plan'), `a note says which run has no plan: ${why.notes}`);
    clean(log);
    await page.close();
  });

  test('a .txt drop: exactly the report of `oomlens FILE.txt`; a TPU TensorCore/SparseCore split drawn as a bar', async () => {
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    for (const pattern of [/tc-sc/, /padded/, /gpu-peak-buffers/, /bfc-stats/]) {
      const file = errorFile(pattern);
      const json = cliJson(file);
      assert.equal(await drop(page, [{ url: `__fixtures__/errors/${basename(file)}`, name: basename(file) }]), 'done', basename(file));
      await assertReport(page, json, basename(file));
      assert.deepEqual(await downloaded(page), json, `${basename(file)}: Download JSON == the CLI's JSON`);
      if (json.error.tensorcore_bytes != null) {
        const split = await page.evaluate(() => [...document.querySelectorAll('#error-split svg rect')].map((r) => r.getAttribute('class')));
        assert.deepEqual(split, ['tensorcore', 'sparsecore'], 'the TC/SC split as one bar of two parts');
        await page.screenshot({ path: join(RESULTS, 'tc-sc.png'), fullPage: true });
      }
    }
    // A log without an out-of-memory message: the CLI's one line, for the same text.
    const quiet = 'INFO all good\nstep 1 loss 0.3\n';
    mkdirSync(RESULTS, { recursive: true });
    const none = join(RESULTS, 'train.log');
    writeFileSync(none, quiet);
    const want = cli(none);
    assert.match(want.error ?? '', /no out-of-memory message found/, 'the CLI refuses the log');
    const runs = await runsSoFar(page);
    await page.evaluate((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'train.log'));
      document.body.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, quiet);
    assert.equal(await waitForRun(page, runs), 'error');
    assert.match((await pageFacts(page)).status, /no out-of-memory message found/);
    clean(log);
    await page.close();
  });

  test('an XLA dump folder: the plan read from the dump, as `oomlens` on its files', async () => {
    const dir = join(FIXTURES, 'dump_attention_train', 'xla_dump');
    const names = readdirSync(dir).sort();
    const json = cliJson(join(dir, names[0]), names.slice(1).map((n) => join(dir, n)));
    assert.equal(json.status, undefined, json.error);
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    const runs = await runsSoFar(page);
    await page.setInputFiles('#folder-input', dir);
    assert.equal(await waitForRun(page, runs), 'done');
    await assertReport(page, json, 'dump');
    assert.deepEqual(await downloaded(page), json, 'Download JSON == the CLI on the dump files');
    // The plan tab: the dump's plan, as a capture's.
    await page.click('#tab-plan');
    const facts = await pageFacts(page);
    assert.ok(facts.planRows.length > 0, 'plan rows');
    assert.match(await page.textContent('#plan-source'), /dump/);
    await page.screenshot({ path: join(RESULTS, 'dump-folder.png'), fullPage: true });
    clean(log);
    await page.close();
  });

  test('a pair of device memory profiles: what grew between them, as `oomlens A.prof B.prof`', async () => {
    const dir = join(FIXTURES, 'profiles_leak');
    const profs = readdirSync(dir).filter((n) => n.endsWith('.prof')).sort();
    const pair = [profs[0], profs[profs.length - 1]];
    const json = cliJson(join(dir, pair[0]), [join(dir, pair[1])]);
    assert.equal(json.status, undefined, json.error);
    assert.ok((json.growth || []).length > 0, 'the CLI reports growth');
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    assert.equal(await drop(page, pair.map((name) => ({ url: `__fixtures__/profiles_leak/${name}`, name }))), 'done');
    await assertReport(page, json, 'profiles');
    assert.deepEqual(await downloaded(page), json, 'Download JSON == the CLI on the two profiles');
    await page.click('#tab-runtime');
    const shown = await page.evaluate(() => ({
      lines: [...document.querySelectorAll('#profile-lines li')].map((li) => li.textContent),
      growth: document.querySelectorAll('#profile-growth tbody tr').length,
    }));
    const text = cli(join(dir, pair[0]), [join(dir, pair[1])]).stdout;
    for (const line of shown.lines) assert.ok(text.includes(`  ${line}\n`), `profile line as the CLI prints it: ${line}`);
    assert.equal(shown.lines.length, 2);
    assert.ok(shown.growth > 0, 'the growth table');
    await page.screenshot({ path: join(RESULTS, 'profiles.png'), fullPage: true });
    clean(log);
    await page.close();
  });
});
