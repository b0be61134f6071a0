// The plan tab: the selected module's plan rows, the heap at its peak by role, memory
// along program order, and the buffers live at the peak (chart, table, detail).

import { h, fill } from '../dom.js';
import { clean, size } from '../format.js';
import { $ } from '../state.js';
import { programChart } from '../charts.js';
import { barsChart, roleBar } from '../bars.js';
import { label, dl, viewTable, mount, roleClass, scroller, token, words } from './common.js';

export function renderPlan(r, v, module) {
  const root = $('plan-content');
  const p = v.plan;
  if (!p) {
    fill(root, h('p', { class: 'empty' }, clean(v.module.reason, 400)));
    return;
  }
  const plan = module ? module.plan : { timeline: [] };
  const chartBox = h('div', { class: 'chart-box' });
  const readout = h('p', { class: 'chart-readout', 'aria-live': 'polite' }, 'Point at the chart, or focus it and use the arrow keys (P: the peak).');
  const timeline = plan.timeline || [];
  mount('plan', chartBox, (width) =>
    timeline.length
      ? programChart({
          points: timeline,
          peakIndex: plan.timeline_peak_index,
          capacity: (r && r.capacity_bytes) || 0,
          width,
          onCursor: (i) => fill(readout, `point ${i + 1} of ${timeline.length}: `, h('strong', null, size(timeline[i].bytes)), ' in use after ', h('span', { class: 'mono' }, clean(timeline[i].instruction, 160) || '—'), i === plan.timeline_peak_index ? ' (the peak)' : ''),
        })
      : h('p', { class: 'empty' }, 'No heap-simulator trace for this module: no program-order timeline.'),
  );

  const parts = [
    h('h2', null, 'Plan of ', h('span', { class: 'mono' }, clean(v.module.label, 200)), label('read')),
    scroller(
      h(
        'table',
        { class: 'data plan-rows', id: 'plan-rows' },
        h('tbody', null, p.rows.map((row) => h('tr', null, h('th', { scope: 'row' }, row.name), h('td', { class: 'num' }, row.value), h('td', { class: 'muted' }, words(row.note || ''))))),
      ),
    ),
    p.source ? h('p', { class: 'muted', id: 'plan-source' }, `plan read from ${clean(p.source, 200)}`) : null,
    h('p', { class: 'muted', id: 'plan-padding' }, p.padding),
    p.host_memory ? h('p', { class: 'note', id: 'host-memory' }, `host memory (S(5), not device memory): ${clean(p.host_memory, 400)}`) : null,
    p.note ? h('p', { class: 'note' }, clean(p.note, 600)) : null,
    h('h3', null, 'At the heap peak, by role', label('read')),
    (() => {
      const box = h('div', { class: 'chart-box' });
      mount('plan', box, (width) => roleBar(p.roles, p.roles_sentence, width, roleClass));
      return box;
    })(),
    h(
      'ul',
      { class: 'legend', id: 'roles' },
      p.roles.map((role) => h('li', { 'data-role': role.role }, h('span', { class: `swatch ${roleClass(role.role)}` }), `${role.words} ${role.percent} (${role.shown})`)),
    ),
    h('h3', null, 'Memory along program order', label('read')),
    readout,
    chartBox,
    p.scan_stacks.length ? [h('h3', null, 'Scan stacks', label('read')), h('ul', { id: 'scan-stacks' }, p.scan_stacks.map((st) => h('li', { class: 'mono' }, clean(st, 300))))] : null,
    p.host_callbacks.length ? [h('h3', null, 'Host callbacks', label('read')), h('ul', { id: 'host-callbacks' }, p.host_callbacks.map((c) => h('li', { class: 'mono' }, clean(c, 300))))] : null,
  ];

  const t = v.live;
  const buffers = v.live_buffers || [];
  if (t) {
    const detail = h('aside', { class: 'detail', 'aria-live': 'polite' }, h('h3', null, 'A buffer at the peak'), h('p', { class: 'muted' }, 'Point at or focus a buffer in the chart or the table to see its shape, sizes, role and source.'));
    const showBuffer = (i) => {
      const b = buffers[i];
      if (!b) return;
      fill(detail, h('h3', null, h('span', { class: 'mono' }, clean(b.name, 200)), label(t.label)), dl(b.rows));
    };
    const barsBox = h('div', { class: 'chart-box' });
    mount('plan', barsBox, (width) =>
      barsChart({
        name: t.title,
        items: buffers.map((b, i) => ({ label: `${b.name} ${b.shape}`, bytes: b.bytes, shown: t.rows[i] ? t.rows[i][0].text : '', cls: roleClass(b.role) })),
        width,
        onFocus: showBuffer,
      }),
    );
    const table = viewTable(t, {
      id: 'live-table',
      titled: false,
      rowAttrs: (i) => ({ tabindex: 0, 'data-index': i }),
      cell: (c, col, i) => (col.name === 'role' && buffers[i] ? h('span', { class: 'nowrap' }, h('span', { class: `swatch ${roleClass(buffers[i].role)}` }), token(clean(c.text, 200))) : null),
    });
    const rows = table[1].querySelectorAll('tbody tr');
    rows.forEach((tr, i) => {
      tr.addEventListener('focus', () => showBuffer(i));
      tr.addEventListener('pointerenter', () => showBuffer(i));
    });
    parts.push(h('h3', null, t.title), h('div', { class: 'split' }, barsBox, detail), table);
  }
  fill(root, parts);
}
