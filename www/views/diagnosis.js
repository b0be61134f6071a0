// The diagnosis tab: one card per diagnosis line (cause, fix, saving, cost, the check
// on the user's side), the notes, and the error message box (views/inputs.js).

import { h, fill } from '../dom.js';
import { clean } from '../format.js';
import { $, state } from '../state.js';
import { label, dl } from './common.js';
import { errorMessage } from './inputs.js';

export function renderDiagnosis(v) {
  const cards = (v.diagnosis || []).map((d) => {
    const rows = [
      { name: 'Cause', value: d.cause },
      d.fix != null && { name: 'Fix', value: d.fix },
      d.saving != null && {
        name: 'Saving',
        value: d.saving,
        extra: [label('estimated'), d.then != null ? [' — ', h('span', { class: d.fits ? 'fits-yes' : 'fits-no' }, d.then), label('estimated')] : null],
      },
      d.saving == null && d.then != null && { name: 'Then', value: '', extra: [h('span', { class: d.fits ? 'fits-yes' : 'fits-no' }, d.then), label('estimated')] },
      d.cost != null && { name: 'Cost', value: d.cost },
    ];
    return h(
      'article',
      { class: 'card', 'data-id': d.id },
      h('h3', null, h('span', { class: 'title' }, d.title), label(d.label)),
      h('p', { class: 'text' }, clean(d.text, 4000)),
      (d.items || []).length ? h('ul', { class: 'items' }, d.items.map((it) => h('li', { class: 'text' }, clean(it, 400)))) : null,
      h('p', { class: 'id' }, clean(d.id, 80)),
      dl(rows, 4000),
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

