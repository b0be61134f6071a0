// The diagnosis tab: one card per diagnosis line (the evidence, the cause, the fixes
// each with its saving and cost, the check on the user's side), the notes, and the
// error message box (views/inputs.js).

import { h, fill } from '../dom.js';
import { clean } from '../format.js';
import { $, state } from '../state.js';
import { label, dl } from './common.js';
import { errorMessage } from './inputs.js';

/** One fix: what to do, then its saving, its cost and whether the step then fits. */
function fixItem(f) {
  const parts = [
    f.saving != null && ['saves ', h('strong', null, clean(f.saving, 100)), ' ', label('estimated')],
    f.cost != null && ['cost: ', h('span', { class: 'text' }, clean(f.cost, 1000))],
    f.then != null && [h('span', { class: f.fits ? 'fits-yes' : 'fits-no' }, f.then), ' ', label('estimated')],
  ].filter(Boolean);
  const tail = parts.flatMap((p, i) => (i ? ['; ', p] : [p]));
  return h('li', null, h('span', { class: 'text' }, clean(f.text, 4000)), tail.length ? h('span', { class: 'tail' }, tail) : null);
}

export function renderDiagnosis(v) {
  // The title once, the evidence, why (when it adds to the evidence), then the fixes as
  // a list: the id is the card's data attribute only.
  const cards = (v.diagnosis || []).map((d) => {
    const fixes = d.fixes || [];
    return h(
      'article',
      { class: 'card', 'data-id': d.id },
      h('h3', null, h('span', { class: 'title' }, d.title), label(d.label)),
      h('p', { class: 'text' }, clean(d.text, 4000)),
      (d.items || []).length ? h('ul', { class: 'items' }, d.items.map((it) => h('li', { class: 'text' }, clean(it, 400)))) : null,
      d.cause != null ? dl([{ name: 'Cause', value: d.cause }], 4000) : null,
      fixes.length ? [h('h4', { class: 'fixes-title' }, fixes.length > 1 ? 'Fixes' : 'Fix'), h('ol', { class: 'fixes' }, fixes.map(fixItem))] : null,
      d.check != null ? h('div', { class: 'check' }, h('span', { class: 'muted' }, 'Check on your side'), h('pre', { class: 'snippet' }, h('code', null, clean(d.check, 1000)))) : null,
    );
  });
  fill(
    $('diagnosis-cards'),
    cards.length ? cards : null,
    v.nothing_stands_out ? h('p', { class: 'empty sentence', id: 'nothing-stands-out' }, v.nothing_stands_out) : null,
  );
  // A card that shows the same check already says it: the line under the cards is for
  // when none does.
  const carded = (v.diagnosis || []).some((d) => d.check != null && d.check === v.check);
  fill($('check'), v.check && !carded ? ['Check on your side: ', h('code', null, v.check)] : []);
  const notes = v.notes || [];
  fill($('notes'), notes.length ? [h('h2', null, 'Notes'), h('ul', { class: 'notes' }, notes.map((n) => h('li', { 'data-id': n.id }, h('span', { class: 'text' }, clean(n.text, 3000)))))] : []);
  // The message as the engine reads it comes after the verdict and the causes; the box
  // to paste or change it stays folded at the end of the tab.
  const e = v.error;
  // The message alone is the report: the box it was pasted in stays folded (with a
  // capture, the box stays as the user left it, to change the error again).
  if (e && !v.plan && !v.runtime && !v.modules) $('error-box').open = false;
  $('error-box-title').textContent = e ? 'Change the pasted error' : 'Paste the out-of-memory error you got';
  if (e) fill($('error-result'), errorMessage(e, (state.result.report || {}).error || {}));
  else fill($('error-result'));
}

