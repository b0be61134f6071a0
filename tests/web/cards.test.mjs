// The diagnosis cards on the page (issue 38 §5), on a real pasted message and a real
// capture with its error: each card gives its title once, the evidence, then its fixes
// as list items, each with its own saving and cost, as the engine's JSON lists them; no
// visible text shows an internal id (`aggregate_too_big`, `no_allocator_events`): ids
// are data attributes only.
//
//   npm run build && npm test

import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { FIXTURES, RESULTS, cliJson, dropUrl, openPage, pageSuite, runsSoFar, skipReason, waitForRun } from './helpers.mjs';

const MESSAGE = join(FIXTURES, 'errors/13-jax-gpt-compile-e1000-wrapped.txt');
const CAPTURE_ERROR = join(FIXTURES, 'oom_top_scores/error.txt');

const skip = skipReason() || (!existsSync(MESSAGE) && 'no tests/fixtures/errors');
if (skip) console.log(`# SKIP: ${skip}`);

/** What the page shows of each card, and every raw id found in the tab's visible text. */
async function shownCards(page, ids) {
  return page.evaluate((ids) => {
    const panel = document.getElementById('panel-diagnosis');
    const visible = panel.innerText;
    return {
      leaked: ids.filter((id) => visible.includes(id)),
      cards: [...document.querySelectorAll('#diagnosis-cards .card')].map((card) => ({
        id: card.dataset.id,
        title: card.querySelector('h3 .title').textContent,
        text: card.innerText,
        body: [...card.children].filter((el) => el.tagName !== 'H3').map((el) => el.innerText).join('\n'),
        fixes: [...card.querySelectorAll('ol.fixes > li')].map((li) => ({
          text: li.querySelector('.text').textContent,
          tail: (li.querySelector('.tail') || {}).textContent || '',
        })),
        terms: [...card.querySelectorAll('dl dt')].map((dt) => dt.textContent),
      })),
    };
  }, ids);
}

/** Ids that are not plain words: the diagnosis lines' and the notes'. */
function rawIds(json) {
  const hosts = json.hosts || [json];
  const ids = hosts.flatMap((h) => [...(h.diagnosis || []).map((d) => d.id), ...(h.notes || []).map((n) => n.id)]);
  return [...new Set(['aggregate_too_big', 'no_allocator_events', ...ids])].filter((id) => id.includes('_'));
}

function checkCards(shown, json, what) {
  assert.deepEqual(shown.leaked, [], `${what}: no internal id in the visible text`);
  const lines = json.diagnosis;
  assert.deepEqual(shown.cards.map((c) => c.id), lines.map((d) => d.id), `${what}: one card per line, its id a data attribute`);
  const lower = (s) => s.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
  shown.cards.forEach((card, i) => {
    const d = lines[i];
    assert.equal(card.title, d.title, `${what}: ${d.id}'s title`);
    assert.equal(card.text.split(d.title).length - 1, 1, `${what}: ${d.id}'s title once in its card`);
    assert.ok(!lower(card.body).includes(lower(d.title)), `${what}: ${d.id}'s evidence and fixes do not restate its title`);
    assert.ok(card.text.includes(d.text), `${what}: ${d.id}'s evidence`);
    assert.deepEqual(card.fixes.map((f) => f.text), d.fixes.map((f) => f.text), `${what}: ${d.id}'s fixes, each a list item`);
    d.fixes.forEach((f, j) => {
      const tail = card.fixes[j].tail;
      if (f.saving_bytes != null) assert.match(tail, /saves ~/, `${what}: ${d.id} fix ${j + 1} says its saving`);
      else assert.doesNotMatch(tail, /saves/, `${what}: ${d.id} fix ${j + 1} says no saving it lacks`);
      if (f.cost != null) assert.ok(tail.includes(`cost: ${f.cost}`), `${what}: ${d.id} fix ${j + 1} says its cost`);
      assert.doesNotMatch(tail, /see it/);
    });
    assert.ok(card.terms.every((t) => t === 'Cause'), `${what}: ${d.id}: no fix, saving or cost outside the list (${card.terms})`);
  });
}

describe('diagnosis cards on the page', { skip: skip || false }, () => {
  const env = pageSuite();

  test('a pasted message: the aggregate card lists its six fixes, each with its own cost; no id shows', async () => {
    const json = cliJson(MESSAGE);
    assert.equal(json.status, undefined, json.error);
    const aggregate = json.diagnosis.find((d) => d.id === 'aggregate_too_big');
    assert.ok(aggregate && aggregate.fixes.length >= 4, 'the message gives the aggregate line, with its fixes ranked');
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    await page.click('#paste summary');
    await page.fill('#paste-text', readFileSync(MESSAGE, 'utf8'));
    const runs = await runsSoFar(page);
    await page.click('#paste-go');
    assert.equal(await waitForRun(page, runs), 'done');
    checkCards(await shownCards(page, rawIds(json)), json, 'pasted message');
    await page.screenshot({ path: join(RESULTS, 'cards-pasted.png'), fullPage: true });
    env.clean(log);
    await page.close();
  });

  test('a capture and its error: the cards follow the same rules', async () => {
    const json = cliJson(join(FIXTURES, 'oom_top_scores/oom_top_scores.xplane.pb'), ['--error-text', CAPTURE_ERROR]);
    assert.equal(json.status, undefined, json.error);
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    assert.equal(await dropUrl(page, '__fixtures__/oom_top_scores/oom_top_scores.xplane.pb', 'oom_top_scores.xplane.pb'), 'done');
    await page.click('#error-box summary');
    await page.fill('#error-text', readFileSync(CAPTURE_ERROR, 'utf8'));
    const runs = await runsSoFar(page);
    await page.click('#error-apply');
    assert.equal(await waitForRun(page, runs), 'done');
    assert.ok(json.diagnosis.some((d) => d.id === 'no_allocator_events'), 'the CPU capture has the no_allocator_events line');
    checkCards(await shownCards(page, rawIds(json)), json, 'capture and error');
    await page.screenshot({ path: join(RESULTS, 'cards-capture.png'), fullPage: true });
    env.clean(log);
    await page.close();
  });
});
