// Inputs other than a capture, as the engine reads them: the out-of-memory message
// (its figures, the TensorCore/SparseCore split, the allocations it lists) and device
// memory profiles.

import { h } from '../dom.js';
import { clean } from '../format.js';
import { splitBar, listingChart } from '../bars.js';
import { label, dl, viewTable, mount } from './common.js';

/**
 * The error message as the engine reads it (the view's `error`): its figures, the
 * TensorCore/SparseCore split as a bar, the allocator and remat lines, the allocations
 * it lists as bars with their layout padding shaded (lengths from the report's
 * `error.allocations[]`), and what it points to.
 */
export function errorMessage(e, model) {
  const parts = [h('h3', null, clean(e.title, 300)), dl(e.rows, 400)];
  if (e.split) {
    const tc = model.tensorcore_bytes || 0;
    const sc = model.sparsecore_bytes || 0;
    const box = h('div', { class: 'chart-box', id: 'error-split' });
    mount('diagnosis', box, (width) => splitBar({ parts: [{ bytes: tc, cls: 'tensorcore', words: `TensorCore` }, { bytes: sc, cls: 'sparsecore', words: `SparseCore` }], sentence: e.split, width }));
    parts.push(h('p', { class: 'mono', id: 'error-split-text' }, h('span', { class: 'swatch tensorcore' }), h('span', { class: 'swatch sparsecore' }), clean(e.split, 400), label('read')), box);
  }
  if (e.allocator) parts.push(h('p', { class: 'mono', id: 'error-allocator' }, clean(e.allocator, 600)));
  if (e.remat) parts.push(h('p', { class: 'note', id: 'error-remat' }, clean(e.remat, 600)));
  const t = e.allocations;
  if (t) {
    const allocations = model.allocations || [];
    const items = t.rows.map((cells, i) => {
      const a = allocations[i] || {};
      const named = cells.find((c, j) => !t.columns[j].numeric && c.text && c.text !== '—' && t.columns[j].name !== 'type');
      return { label: named ? named.text : `allocation ${i + 1}`, bytes: a.size_bytes || 0, unpadded: a.unpadded_bytes != null ? a.unpadded_bytes : null, shown: cells[0] ? cells[0].text : '' };
    });
    const box = h('div', { class: 'chart-box', id: 'error-listing' });
    mount('diagnosis', box, (width) => listingChart({ name: t.title, items, width }));
    parts.push(
      h('h3', null, t.title.replace(/ \(read\)$/, ''), label('read')),
      h('ul', { class: 'legend' }, h('li', null, h('span', { class: 'swatch listing-data' }), 'data (unpadded)'), h('li', null, h('span', { class: 'swatch listing-padding' }), 'layout padding')),
      box,
      viewTable(t, { id: 'error-allocations', titled: false }),
    );
  }
  if (e.matched) parts.push(h('p', { class: 'note', id: 'error-matched' }, clean(e.matched, 600)));
  if (e.reading) parts.push(h('p', { class: 'text', id: 'error-reading' }, clean(e.reading, 2000)));
  return parts;
}


/** Device memory profiles (the view's `profiles`): one line each, the latest by Python line, the growth between the first and the last. */
export function profilesSection(pv) {
  const wrap = h('div', { id: 'profiles' });
  const parts = [h('h2', null, pv.title.replace(/ \(measured\)$/, ''), label('measured')), h('ul', { class: 'lines', id: 'profile-lines' }, pv.rows.map((line) => h('li', { class: 'mono' }, clean(line, 400))))];
  if (pv.devices) parts.push(h('p', { class: 'mono', id: 'profile-devices' }, clean(pv.devices, 600)));
  if (pv.growth) parts.push(viewTable(pv.growth, { id: 'profile-growth', heading: 'h3' }));
  if (pv.groups) parts.push(viewTable(pv.groups, { id: 'profile-groups', heading: 'h3' }));
  wrap.append(...parts.flat().filter(Boolean));
  return wrap;
}
