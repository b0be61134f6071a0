// A folder's hosts: the host picker above a host's report, and the cross-host summary
// (the engine's view of the rows, src/report/view.rs `hosts`).

import { h, fill, text } from '../dom.js';
import { clean } from '../format.js';
import { $, state, writeHash, took } from '../state.js';
import { run } from '../run.js';
import { viewTable, token } from './common.js';

export function renderHostPicker() {
  const picker = $('host-picker');
  picker.hidden = state.files.length < 2;
  text($('show-hosts'), `← All ${state.files.length} hosts`);
  const select = $('host-select');
  fill(select, state.files.map((f, i) => h('option', { value: i }, clean(f.host, 120))));
  select.value = String(state.hostIndex);
}

const STATUS_CLASS = { failed: 'failed', partial: 'partial' };

/**
 * The cross-host summary (the engine's view of the rows, src/report/view.rs `hosts`):
 * its title, one row per host — the host's name opens its full report — which host
 * ran out first, the hosts that differ from the rest, and those that could not be read.
 */
export function renderSummary() {
  const res = state.summary;
  if (!res) return;
  const v = res.view;
  const rows = res.hosts_summary;
  $('report').hidden = true;
  $('hosts').hidden = false;
  $('drop').classList.add('compact');
  text($('drop-title'), 'Drop another capture anywhere on this page');
  text($('hosts-title'), clean(v.title, 400));
  const first = $('hosts-first');
  text(first, v.first_out ? clean(v.first_out, 400) : '');
  first.hidden = !v.first_out;
  $('hosts').querySelector('.headline').className = `headline ${rows.some((r) => r.ran_out_first || r.oom_evidence.length) ? 'bad' : rows.some((r) => r.status === 'failed') ? 'warn' : 'good'}`;
  text($('hosts-info'), `analyzed in ${took(res.ms)} by ${res.version} on ${res.workers} worker${res.workers > 1 ? 's' : ''}`);
  $('hosts-info').dataset.workers = String(res.workers);
  text($('version'), res.version);
  const open = (i) => {
    state.hostIndex = i;
    state.module = null;
    renderHostPicker();
    run();
  };
  const table = viewTable(v.table, {
    id: 'hosts-table',
    titled: false,
    rowAttrs: (i) => {
      const r = rows[i] || {};
      return { class: [STATUS_CLASS[r.status], r.ran_out_first ? 'hi' : null, r.skew && r.skew.length ? 'skewed' : null].filter(Boolean).join(' ') || null, 'data-host': r.host, 'data-status': r.status };
    },
    cell: (c, col, i, j) => {
      const r = rows[i];
      if (j !== 0 || !r) return null;
      const i2 = state.files.findIndex((f) => f.host === r.host);
      if (r.status === 'failed' || i2 < 0) return token(clean(c.text, 200), null, { title: r.error ? clean(r.error, 600) : null });
      const button = token(clean(c.text, 200), null, { tag: 'button', type: 'button', class: 'link host-open', 'data-host': r.host, title: 'open this host\'s full report' });
      button.addEventListener('click', () => open(i2));
      return button;
    },
  });
  const parts = [h('h2', null, v.table.title), h('p', { class: 'muted' }, 'Pick a host to open its full report (it is analyzed again).'), table];
  if (v.skew.length) parts.push(h('h3', null, 'Differ from the rest'), h('ul', { class: 'lines', id: 'hosts-skew' }, v.skew.map((line) => h('li', { class: 'text' }, clean(line, 400)))));
  if (v.failed.length) parts.push(h('h3', null, 'Could not be read'), h('ul', { class: 'lines', id: 'hosts-failed' }, v.failed.map((line) => h('li', { class: 'text' }, clean(line, 1000)))));
  if (v.failed_note) parts.push(h('p', { class: 'note', id: 'hosts-note' }, clean(v.failed_note, 400)));
  fill($('hosts-content'), parts);
  writeHash();
  document.title = `${clean(v.title, 120)} — oomlens`;
}

