// Two runs compared: the comparison's view (src/report/diff_view.rs) laid out as
// `oomlens diff` prints it — both runs' memory along program order on one chart, the
// heap by role, the plan, buffer and runtime tables, the diagnosis lines resolved, new
// and remaining, and the estimated against the measured savings.

import { h, fill, text } from '../dom.js';
import { clean, size } from '../format.js';
import { $, state, took } from '../state.js';
import { compareChart } from '../charts.js';
import { roleBarsChart } from '../bars.js';
import { label, viewTable, mount, roleClass } from './common.js';

const FIT_CLASS = { now_fits: 'good', still_fits: 'good', still_does_not_fit: 'bad', no_longer_fits: 'bad' };
const STATUS_WORDS = { resolved: 'Resolved', gone: 'No longer reported, but the peak did not drop', new: 'New', remaining: 'Remaining' };

function sideBox(side) {
  return [
    h('p', { class: 'side-name' }, side.side === 'before' ? 'Before' : 'After'),
    // The run's name: its file, or with its run folder when both files share a name.
    h('p', { class: 'mono file', title: side.name !== side.file ? clean(side.file, 300) : null }, clean(side.name, 300)),
    side.module ? h('p', null, h('span', { class: 'muted' }, 'module '), h('span', { class: 'mono' }, clean(side.module, 200))) : null,
    h('p', { class: 'side-headline' }, clean(side.headline, 400)),
  ];
}

/** Each line no longer reported: its estimated saving beside what the peak did (the view's words). */
function savingsSection(v) {
  if (!v.savings.length) return [];
  return [
    h('h2', null, 'Estimated and measured savings'),
    h(
      'ul',
      { class: 'savings', id: 'compare-savings' },
      v.savings.map((sv) =>
        h(
          'li',
          { 'data-id': sv.id },
          h('p', { class: 'text' }, clean(sv.text, 600)),
          h('p', { class: 'figures' }, h('span', { class: 'k' }, 'estimated '), h('strong', { class: 'estimated-saving' }, sv.estimated), label('estimated'), ' · ', h('span', { class: 'k' }, 'saved '), h('strong', { class: 'actual-saving' }, sv.actual), label('read')),
        ),
      ),
    ),
  ];
}

/** The diagnosis lines: resolved (their bytes went away), no longer reported, new, remaining. */
function linesSection(v) {
  const parts = [h('h2', null, 'Diagnosis lines')];
  if (v.diagnosis_not_compared) parts.push(h('p', { class: 'muted', id: 'compare-lines-not-compared' }, v.diagnosis_not_compared));
  else if (!v.diagnosis.length) parts.push(h('p', { class: 'muted' }, 'No diagnosis line in either run.'));
  for (const st of ['resolved', 'gone', 'new', 'remaining']) {
    const lines = v.diagnosis.filter((l) => l.status === st);
    if (!lines.length) continue;
    parts.push(
      h('h3', null, STATUS_WORDS[st]),
      h('ul', { class: `lines status-${st}`, id: `compare-${st}` }, lines.map((l) => h('li', { 'data-id': l.id, 'data-status': st }, h('span', { class: 'title' }, l.title)))),
    );
  }
  return parts;
}

export function renderCompare() {
  const res = state.compared;
  const v = res && res.view && res.view.hosts[0];
  if (!v) return;
  const d = res.diff;
  $('report').hidden = true;
  $('compare').hidden = false;
  $('drop').classList.add('compact');
  text($('drop-title'), 'Drop another capture anywhere on this page, or two to compare');
  const box = $('compare-headline-box');
  box.className = `headline ${FIT_CLASS[d.headline && d.headline.fit] || ''}`;
  box.dataset.fit = (d.headline && d.headline.fit) || '';
  text($('compare-headline'), clean(v.headline, 400));
  text($('compare-labels'), v.labels ? v.labels.trim() : '');
  fill($('compare-before'), sideBox(v.before));
  fill($('compare-after'), sideBox(v.after));
  $('compare-module-line').hidden = !v.module;
  text($('compare-module'), clean(v.module, 300));
  text($('compare-module-reason'), v.module_reason ? `— ${v.module_reason}` : '');
  text($('compare-info'), `compared in ${took(res.ms)} by ${res.version}${res.workers > 1 ? `, both runs at once on ${res.workers} workers` : ''}`);
  $('compare-info').dataset.workers = String(res.workers || 1);
  for (const id of ['compare-copy-md', 'compare-download-json']) $(id).disabled = false;
  state.mounts = {};

  // Did the fix save what was estimated: right under the headline, then the lines.
  const parts = [...savingsSection(v), ...linesSection(v)];
  const po = v.program_order;
  if (po) {
    const chartBox = h('div', { class: 'chart-box', id: 'compare-chart' });
    const readout = h('p', { class: 'chart-readout', 'aria-live': 'polite' }, 'Point at the chart, or focus it and use the arrow keys: both runs at the same place in their programs.');
    const at = (series, i) => (i >= 0 ? [h('strong', null, size(series.points[i].bytes)), ' after ', h('span', { class: 'mono' }, clean(series.points[i].instruction, 120) || '—')] : 'no trace');
    mount('compare', chartBox, (width) =>
      compareChart({
        before: { points: po.before.points, peakIndex: po.before.peak_index, peak: po.before.peak },
        after: { points: po.after.points, peakIndex: po.after.peak_index, peak: po.after.peak },
        pool: po.pool_bytes || 0,
        poolText: po.pool || '',
        sentence: po.sentence,
        width,
        onCursor: (f, ib, ia) => fill(readout, `${(f * 100).toFixed(0)}% through the programs — before: `, at(po.before, ib), '; after: ', at(po.after, ia)),
      }),
    );
    parts.push(
      h('h2', null, po.title.replace(/ \(read\)$/, ''), label('read')),
      h('p', { class: 'muted', id: 'compare-chart-sentence' }, clean(po.sentence, 600)),
      h('ul', { class: 'legend' }, h('li', null, h('span', { class: 'swatch before' }), 'before (dashed)'), h('li', null, h('span', { class: 'swatch after' }), 'after'), po.pool ? h('li', null, h('span', { class: 'swatch pool' }), po.pool) : null),
      readout,
      chartBox,
    );
  }
  // The heap by role, once: one heading, the two bars, and their figures as a table.
  const rb = v.role_bars;
  if (rb) {
    const barBox = h('div', { class: 'chart-box', id: 'compare-role-bars' });
    mount('compare', barBox, (width) => roleBarsChart({ bars: [rb.before, rb.after], width, roleClass }));
    parts.push(
      h('h2', { id: 'compare-roles-title' }, rb.title.replace(/ \(read\)$/, ''), label('read')),
      barBox,
      h('ul', { class: 'legend', id: 'compare-roles-legend' }, rb.before.roles.map((r) => h('li', { 'data-role': r.role }, h('span', { class: `swatch ${roleClass(r.role)}` }), r.words))),
    );
  }
  if (v.roles) parts.push(viewTable(v.roles, { id: 'compare-roles', heading: 'h2', titled: !rb }));
  if (v.plan) parts.push(viewTable(v.plan, { id: 'compare-plan', heading: 'h2' }));
  if (v.buffers) {
    parts.push(viewTable(v.buffers, { id: 'compare-buffers', heading: 'h2' }));
  }
  if (v.sum) parts.push(h('p', { class: 'note', id: 'compare-sum' }, h('span', { class: 'text' }, clean(v.sum, 600)), label('read')));
  if (v.heap_sum) parts.push(h('p', { class: 'muted', id: 'compare-heap-sum' }, clean(v.heap_sum, 400)));
  if (v.scan_stacks.length) parts.push(h('h3', null, 'Scan stacks', label('read')), h('ul', { id: 'compare-scan-stacks' }, v.scan_stacks.map((st) => h('li', { class: 'mono' }, clean(st, 300)))));
  if (v.runtime) parts.push(viewTable(v.runtime, { id: 'compare-runtime', heading: 'h2' }));
  if (v.in_use_at_starts.length) parts.push(h('ul', { class: 'lines', id: 'compare-in-use' }, v.in_use_at_starts.map((l) => h('li', { class: 'mono' }, clean(l, 600)))));

  const notes = [...(v.notes || []).map((n) => ({ id: n.id, text: n.text })), ...(res.view.hosts_only || []).map((t) => ({ id: 'hosts_only', text: t }))];
  if (notes.length) parts.push(h('h2', null, 'Notes'), h('ul', { class: 'notes', id: 'compare-notes' }, notes.map((n) => h('li', { 'data-id': n.id }, h('span', { class: 'text' }, clean(n.text, 3000))))));
  fill($('compare-content'), parts);
  for (const draw of state.mounts.compare || []) draw();
  document.title = `${clean(v.headline, 120)} — oomlens`;
}
