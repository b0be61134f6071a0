// The modules tab: the largest modules of the capture; choosing one re-runs the
// analysis for it.

import { h, fill } from '../dom.js';
import { clean } from '../format.js';
import { $, state } from '../state.js';
import { run } from '../run.js';
import { viewTable, token } from './common.js';

export function renderModules(r, v) {
  const root = $('modules-content');
  const t = v.modules;
  if (!t) {
    fill(root, h('p', { class: 'empty' }, 'No other module to choose: the capture has one module plan or none.'));
    return;
  }
  const pickModule = (labelText) => {
    if (labelText === v.module.label) return;
    state.module = labelText;
    run();
  };
  const table = viewTable(t, {
    id: 'module-table',
    titled: false,
    cell: (c, col, i) => {
      if (col.name !== 'module') return null;
      const isCurrent = (t.marks || [])[i] === 'selected';
      const pick = token(clean(c.text, 120), null, { tag: 'button', type: 'button', class: 'link', 'data-label': c.text, 'aria-current': isCurrent ? 'true' : null, title: isCurrent ? 'the module this report is about' : 'switch the report to this module' });
      pick.addEventListener('click', () => pickModule(c.text));
      return pick;
    },
  });
  const parts = [h('h2', null, t.title), h('p', { class: 'muted' }, 'Choose a module to switch the whole report to it.'), table];
  // The table lists the largest modules; every module with a plan can be chosen here.
  const all = (r && r.modules) || [];
  if (t.more && all.length) {
    const select = h('select', { id: 'module-select' }, h('option', { value: '' }, '—'), all.map((m) => h('option', { value: m.label }, clean(m.label, 120))));
    select.addEventListener('change', () => select.value && pickModule(select.value));
    parts.push(h('div', { class: 'alloc-pick' }, h('label', { for: 'module-select' }, 'Any module'), select));
  }
  fill(root, parts);
}
