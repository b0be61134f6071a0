// The oomlens page. It loads captures (drop, file/folder pickers, the sample, `?url=`,
// postMessage), hands them to the engine's worker, and renders the report model the
// worker returns. It computes no figure: every number shown is a field of the report
// (src/report/model.rs); this file only lays them out, with their labels.
//
// Strings from a capture are untrusted: they go into the page only as text nodes or
// attribute values (dom.js), after `clean()` for control and bidi characters.

import { Analyzer, AbortError } from './analyze.js';
import { h, s, fill, text } from './dom.js';
import { clean, mib, gib, size, duration, percent, shortSource, thousands } from './format.js';
import { programChart, runtimeChart, barsChart } from './charts.js';

const $ = (id) => document.getElementById(id);
const analyzer = new Analyzer();
const SUFFIX = '.xplane.pb';
const TABS = ['diagnosis', 'plan', 'runtime', 'modules'];

const state = {
  files: [], // [{host, name, blob}]
  hostIndex: 0,
  module: null, // label chosen by the user; null: the engine's choice
  tab: 'diagnosis',
  errorText: '',
  result: null, // {report, markdown, ms, memoryBytes, version}
  sort: { key: null, dir: 1 },
  replyTo: null, // {source, origin} of a postMessage that sent the capture
  allocator: null, // the allocator drawn in the runtime chart
  notice: null, // a message to show with the next report
  mounts: {}, // panel → [render(width)] for charts, run when the panel is shown
};

// ---------------------------------------------------------------- labels and words

const LABEL_TITLES = {
  measured: 'measured: from runtime events (allocator, executions)',
  read: 'read: from the compiled plan in the capture',
  estimated: 'estimated: derived by oomlens',
};

function label(kind) {
  const k = kind === 'measured' || kind === 'read' || kind === 'estimated' ? kind : 'estimated';
  return h('span', { class: `label ${k}`, title: LABEL_TITLES[k] }, k);
}

const TITLES = {
  plan_exceeds_capacity: 'The step does not fit',
  role_forward: 'Mostly forward activations, kept for backward',
  role_backward: 'Mostly backward: gradients and their temporaries',
  role_workspace: 'Library workspace',
  no_donation: 'No donated parameters',
  xla_remat: 'XLA already rematerialized',
  scan_stack: 'Scan stack',
  debug_callback: 'Host callbacks in the step',
  large_replicated: 'One buffer takes over half the pool',
  tpu_padding: 'Layout padding',
  host_offload: 'Host offload',
  growth_per_execution: 'Memory grows every execution: a leak',
  other_live_arrays: 'Other live arrays take space',
  allocator_retry: 'The allocator waited for memory',
  mem_fraction_set: 'A memory fraction was set',
  no_allocator_events: 'No allocator events',
  no_plan_in_capture: 'No compiled plan in the capture',
};

const ROLE_WORDS = {
  forward: 'forward, kept for backward',
  backward: 'backward',
  workspace: 'library workspace',
  other: 'other',
};

const PHASES = {
  open: 'Opening',
  download: 'Downloading',
  index: 'Indexing the planes',
  plan: 'Reading the compiled plans',
  'host plane': 'Scanning allocator and execution events',
  'waiting for the second worker': 'Waiting for the second worker',
  'device planes': 'Matching kernels to launches',
  'runtime summary': 'Summarizing the runtime',
  diagnosis: 'Diagnosing',
  done: 'Rendering',
};

const VERDICT_CLASS = { does_not_fit: 'bad', ran_out: 'bad', leak: 'warn', fits: 'good' };

// ---------------------------------------------------------------- URL hash state

function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { host: p.get('host'), module: p.get('module'), tab: p.get('tab') };
}

function writeHash() {
  const p = new URLSearchParams();
  const f = state.files[state.hostIndex];
  if (f && state.files.length > 1) p.set('host', f.host);
  if (state.module) p.set('module', state.module);
  if (state.tab !== 'diagnosis') p.set('tab', state.tab);
  const hash = p.toString();
  const url = `${location.pathname}${location.search}${hash ? `#${hash}` : ''}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
}

window.addEventListener('hashchange', () => {
  const want = readHash();
  if (want.tab && TABS.includes(want.tab) && want.tab !== state.tab) showTab(want.tab, false);
  if (!state.files.length) return;
  let rerun = false;
  if (want.host) {
    const i = state.files.findIndex((f) => f.host === want.host);
    if (i >= 0 && i !== state.hostIndex) {
      state.hostIndex = i;
      state.module = null;
      rerun = true;
    }
  }
  if ((want.module || null) !== state.module) {
    state.module = want.module || null;
    rerun = true;
  }
  if (rerun) run();
});

// ---------------------------------------------------------------- status, progress

function status(kind, message) {
  const el = $('status');
  if (!message) return fill(el);
  fill(el, h('p', { class: kind }, message));
}

let progressFrame = 0;
let progressInfo = null;
let runStarted = 0;

function showProgress(name, info) {
  progressInfo = info;
  if (progressFrame) return;
  progressFrame = requestAnimationFrame(() => {
    progressFrame = 0;
    const p = progressInfo;
    $('progress').hidden = false;
    text($('progress-file'), clean(name, 120));
    const bar = $('progress-bar');
    if (p.total > 0) {
      bar.max = p.total;
      bar.value = Math.min(p.done, p.total);
    } else {
      bar.removeAttribute('value');
    }
    const secs = (performance.now() - runStarted) / 1000;
    const mbs = secs > 0.05 ? ` · ${(p.read / 1e6 / secs).toFixed(0)} MB/s` : '';
    const of = p.total > 0 ? `${(p.done / 1e6).toFixed(1)} of ${(p.total / 1e6).toFixed(1)} MB` : `${(p.done / 1e6).toFixed(1)} MB`;
    text($('progress-text'), `${PHASES[p.phase] || p.phase}… ${of}${mbs}`);
  });
}

function hideProgress() {
  if (progressFrame) cancelAnimationFrame(progressFrame);
  progressFrame = 0;
  $('progress').hidden = true;
}

// ---------------------------------------------------------------- loading

function hostOf(name) {
  return name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name;
}

/** Starts analyzing a new set of host files (one capture, or a run folder's hosts). */
function load(files, { fromLink = false, module } = {}) {
  if (!files.length) {
    status('error', 'No *.xplane.pb file there. Drop the file that jax.profiler.trace(...) wrote, or the capture folder that holds plugins/profile/<run>/.');
    return;
  }
  files.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  state.files = files;
  const want = readHash();
  const i = want.host ? files.findIndex((f) => f.host === want.host) : -1;
  state.hostIndex = i >= 0 ? i : 0;
  state.module = module !== undefined ? module || null : fromLink ? want.module || null : null;
  if (!fromLink) state.replyTo = null;
  renderHostPicker();
  run();
}

let finished = 0;

/** `data-state` on <html> (running, done, error) and `data-runs`, for tests and embedders. */
function mark(phase) {
  const root = document.documentElement;
  root.dataset.state = phase;
  if (phase !== 'running') root.dataset.runs = String(++finished);
}

async function run() {
  const f = state.files[state.hostIndex];
  if (!f) return;
  mark('running');
  status(null);
  runStarted = performance.now();
  showProgress(f.name, { phase: 'open', done: 0, total: f.blob.size, read: 0 });
  for (const id of ['copy-md', 'download-json']) $(id).disabled = true;
  const options = { module: state.module, error_text: state.errorText, host: f.host, file_name: f.name };
  try {
    const result = await analyzer.run(f.blob, options, { onProgress: (p) => showProgress(f.name, p) });
    hideProgress();
    state.result = result;
    render();
    if (state.notice) status('notice', state.notice);
    state.notice = null;
    mark('done');
    reply({ oomlens: 'analyzed', verdict: result.report.headline ? result.report.headline.verdict : '', text: result.report.headline ? result.report.headline.text : '' });
  } catch (e) {
    if (e instanceof AbortError) return;
    hideProgress();
    if (e.kind === 'unknown_module' && state.module) {
      state.module = null;
      state.notice = `${clean(e.message, 400)} — showing the default module instead.`;
      await run();
      return;
    }
    // The report on screen is for another file (or module): do not leave it under the error.
    state.result = null;
    $('report').hidden = true;
    $('drop').classList.remove('compact');
    text($('drop-title'), 'Drop a capture here');
    status('error', `${clean(f.name, 200)}: ${clean(e.message, 2000)}`);
    mark('error');
    reply({ oomlens: 'error', message: e.message, kind: e.kind });
  }
}

function reply(message) {
  const to = state.replyTo;
  if (!to || !to.source) return;
  try {
    to.source.postMessage(message, to.origin && to.origin !== 'null' ? to.origin : '*');
  } catch {
    // the embedder went away
  }
}

/** The host files in a list of {path, file}: the newest run's, as the CLI picks. */
function capturesIn(entries) {
  const captures = entries.filter((e) => e.file.name.endsWith(SUFFIX));
  if (!captures.length) return entries.length === 1 ? entries : [];
  const dir = (p) => p.slice(0, p.lastIndexOf('/') + 1);
  const dirs = [...new Set(captures.map((e) => dir(e.path)))].sort();
  const newest = dirs[dirs.length - 1];
  return captures.filter((e) => dir(e.path) === newest);
}

function asHostFiles(entries) {
  return capturesIn(entries).map((e) => ({ host: hostOf(e.file.name), name: e.file.name, blob: e.file }));
}

function readAllEntries(reader) {
  return new Promise((resolve, reject) => {
    const all = [];
    const next = () =>
      reader.readEntries((batch) => {
        if (!batch.length) resolve(all);
        else {
          all.push(...batch);
          next();
        }
      }, reject);
    next();
  });
}

async function walk(entry, out, depth = 0) {
  if (depth > 12 || out.length > 10000) return;
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    out.push({ path: entry.fullPath || file.name, file });
  } else if (entry.isDirectory) {
    for (const child of await readAllEntries(entry.createReader())) await walk(child, out, depth + 1);
  }
}

async function fromDataTransfer(dt) {
  const items = dt.items ? [...dt.items].filter((i) => i.kind === 'file') : [];
  const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  if (entries.length && entries.every(Boolean)) {
    const out = [];
    for (const e of entries) await walk(e, out);
    return out;
  }
  return [...dt.files].map((file) => ({ path: file.name, file }));
}

async function loadUrl(url) {
  let target;
  try {
    target = new URL(url, location.href);
  } catch {
    status('error', 'The url parameter is not a valid URL.');
    return;
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    status('error', 'The url parameter must be an http(s) URL.');
    return;
  }
  const name = decodeURIComponent(target.pathname.split('/').pop() || 'capture.xplane.pb');
  runStarted = performance.now();
  showProgress(name, { phase: 'download', done: 0, total: 0, read: 0 });
  try {
    const response = await fetch(target.href, { credentials: 'same-origin', referrerPolicy: 'no-referrer' });
    if (!response.ok) throw new Error(`the server answered ${response.status} ${response.statusText}`);
    const total = Number(response.headers.get('content-length')) || 0;
    const chunks = [];
    let done = 0;
    if (response.body && response.body.getReader) {
      const reader = response.body.getReader();
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) break;
        chunks.push(value);
        done += value.byteLength;
        showProgress(name, { phase: 'download', done, total, read: done });
      }
    } else {
      chunks.push(new Uint8Array(await response.arrayBuffer()));
    }
    const blob = new Blob(chunks);
    load([{ host: hostOf(name), name, blob }], { fromLink: true });
  } catch (e) {
    hideProgress();
    mark('error');
    status('error', `Could not fetch ${clean(target.href, 300)}: ${clean(e.message || String(e), 300)}. The capture's server must be this page's origin, or allow it by CORS and be listed in the page's Content-Security-Policy connect-src (see the README, "The web page, and embedding oomlens").`);
  }
}

async function loadSample() {
  runStarted = performance.now();
  showProgress('sample.xplane.pb', { phase: 'download', done: 0, total: 0, read: 0 });
  try {
    const response = await fetch('sample.xplane.pb');
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    const blob = await response.blob();
    load([{ host: 'sample', name: 'sample.xplane.pb', blob }]);
  } catch (e) {
    hideProgress();
    mark('error');
    status('error', `The sample capture could not be loaded: ${clean(e.message || String(e), 300)}`);
  }
}

// ---------------------------------------------------------------- rendering

function current() {
  const r = state.result && state.result.report;
  if (!r) return {};
  const module = r.selected_module ? (r.modules || []).find((m) => m.label === r.selected_module) : null;
  return { r, module };
}

function capacityOf(r) {
  return r.capacity_bytes || 0;
}

function render() {
  const { r, module } = current();
  if (!r) return;
  $('drop').classList.add('compact');
  text($('drop-title'), 'Drop another capture anywhere on this page');
  $('report').hidden = false;
  renderHeadline(r);
  text($('module-name'), module ? clean(module.label, 200) : 'none');
  text($('module-reason'), r.selection_reason ? `— ${clean(r.selection_reason, 300)}` : '');
  $('change-module').hidden = !(r.modules && r.modules.length > 1);
  text($('file-name'), clean(r.file, 200));
  text($('file-size'), `${thousands(r.file_bytes || 0)} bytes`);
  const res = state.result;
  text($('engine-info'), `analyzed in ${res.ms < 1000 ? `${res.ms.toFixed(0)} ms` : `${(res.ms / 1000).toFixed(2)} s`} by ${res.version}${res.workers > 1 ? ` on ${res.workers} workers` : ''}`);
  $('engine-info').dataset.workers = String(res.workers || 1);
  $('engine-info').dataset.memory = String(res.memoryBytes || 0);
  $('engine-info').dataset.phases = JSON.stringify(res.phases || []);
  $('engine-info').title = (res.phases || []).map(([name, ms]) => `${name}: ${(ms / 1000).toFixed(2)} s`).join(', ');
  text($('version'), res.version);
  for (const id of ['copy-md', 'download-json']) $(id).disabled = false;
  state.mounts = {};
  renderDiagnosis(r);
  renderPlan(r, module);
  renderRuntime(r);
  renderModules(r);
  showTab(state.tab, false);
  writeHash();
  document.title = `${clean(r.headline ? r.headline.text : r.file, 120)} — oomlens`;
}

function renderHeadline(r) {
  const hl = r.headline || { verdict: '', text: '', figures: [] };
  const box = $('headline');
  box.className = `headline ${VERDICT_CLASS[hl.verdict] || ''}`;
  box.dataset.verdict = hl.verdict || '';
  text($('headline-text'), clean(hl.text || 'No verdict', 400));
  fill(
    $('headline-figures'),
    (hl.figures || []).map((f) => h('li', { 'data-name': f.name }, `${f.name.replace(/_/g, ' ')} `, h('strong', null, f.shown), label(f.label))),
  );
}

function renderHostPicker() {
  const picker = $('host-picker');
  picker.hidden = state.files.length < 2;
  const select = $('host-select');
  fill(select, state.files.map((f, i) => h('option', { value: i }, clean(f.host, 120))));
  select.value = String(state.hostIndex);
}

function dl(rows) {
  return h(
    'dl',
    null,
    rows.filter(Boolean).map(([k, ...v]) => [h('dt', null, k), h('dd', null, ...v)]),
  );
}

function renderDiagnosis(r) {
  const cards = (r.diagnosis || []).map((d) => {
    const rows = [
      ['Cause', h('span', { class: 'text' }, clean(d.cause, 2000))],
      d.fix != null && ['Fix', h('span', { class: 'text' }, clean(d.fix, 4000))],
      d.saving_bytes != null && ['Saving', `~${mib(d.saving_bytes)}`, label('estimated')],
      d.cost != null && ['Cost', h('span', { class: 'text' }, clean(d.cost, 1000))],
      d.fits_after != null && ['Then', h('span', { class: d.fits_after ? 'fits-yes' : 'fits-no' }, d.fits_after ? 'fits' : 'still does not fit'), label('estimated')],
      d.check != null && ['Check on your side', h('pre', { class: 'snippet' }, h('code', null, clean(d.check, 1000)))],
    ];
    return h(
      'article',
      { class: 'card', 'data-id': d.id },
      h('h3', null, TITLES[d.id] || clean(d.id.replace(/_/g, ' '), 80), label(d.label)),
      h('p', { class: 'text' }, clean(d.text, 4000)),
      h('p', { class: 'id' }, clean(d.id, 80)),
      dl(rows),
    );
  });
  fill($('diagnosis-cards'), cards.length ? cards : h('p', { class: 'empty' }, 'Nothing stands out: the plan fits and memory does not grow across executions.'));
  const notes = r.notes || [];
  fill($('notes'), notes.length ? [h('h2', null, 'Notes'), h('ul', { class: 'notes' }, notes.map((n) => h('li', { 'data-id': n.id }, h('span', { class: 'text' }, clean(n.text, 3000)))))] : []);
  const e = r.error;
  if (e) {
    $('error-box').open = true;
    fill(
      $('error-result'),
      h('h3', null, `The pasted error: ${clean(e.kind, 80)}`),
      dl([
        e.requested_bytes != null && ['Requested', mib(e.requested_bytes)],
        e.capacity_bytes != null && ['Capacity', gib(e.capacity_bytes)],
        e.used_bytes != null && ['Used', gib(e.used_bytes)],
        e.tensorcore_bytes != null && ['TensorCore', gib(e.tensorcore_bytes)],
        e.sparsecore_bytes != null && ['SparseCore', gib(e.sparsecore_bytes)],
        e.matched != null && ['Matches', h('span', { class: 'text' }, clean(e.matched, 400))],
        e.scenario && ['Reading', h('span', { class: 'text' }, clean(e.scenario, 2000))],
      ]),
      h('p', { class: 'muted' }, 'Figures from the pasted message; the match is against the plan (read).'),
    );
  } else {
    fill($('error-result'));
  }
}

/** A data table: `columns` are [title, numeric?]; each row an array of cell contents. */
function table(columns, rows, attrs = {}) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'data', ...attrs },
      h('thead', null, h('tr', null, columns.map(([title, num]) => h('th', { class: num ? 'num' : null, scope: 'col' }, title)))),
      h('tbody', null, rows.map((cells) => (cells instanceof Node ? cells : h('tr', null, cells.map((c, i) => h('td', { class: columns[i][1] ? 'num' : null }, c)))))),
    ),
  );
}

function stat(k, v, lab) {
  return h('li', null, h('span', { class: 'k' }, k), h('span', { class: 'v' }, v, lab ? label(lab) : null));
}

function mount(panel, container, draw) {
  (state.mounts[panel] = state.mounts[panel] || []).push(() => {
    const width = Math.max(320, Math.floor(container.clientWidth || 900));
    if (container.dataset.width === String(width)) return;
    container.dataset.width = String(width);
    fill(container, draw(width));
  });
}

function roleBar(roles, width) {
  const order = ['forward', 'backward', 'workspace', 'other'];
  const total = order.reduce((a, k) => a + (roles[k] || 0), 0);
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${width} 22`, width, height: 22, role: 'img', 'aria-label': order.map((k) => `${ROLE_WORDS[k]} ${percent(roles[k] || 0, total)}`).join(', ') });
  let x = 0;
  for (const k of order) {
    const w = total > 0 ? ((roles[k] || 0) / total) * width : 0;
    if (w > 0) svg.append(s('rect', { class: `role-${k}`, x: x.toFixed(1), y: 2, width: w.toFixed(1), height: 18 }, s('title', null, `${ROLE_WORDS[k]}: ${mib(roles[k])}`)));
    x += w;
  }
  if (total === 0) svg.append(s('text', { x: 4, y: 15 }, 'no temporary buffers at the heap peak'));
  return svg;
}

function renderPlan(r, module) {
  const root = $('plan-content');
  if (!module) {
    fill(root, h('p', { class: 'empty' }, clean(r.selection_reason || 'No module plan in this capture.', 400)));
    return;
  }
  const p = module.plan;
  const capacity = capacityOf(r);
  const roles = p.roles_at_peak || {};
  const roleTotal = ['forward', 'backward', 'workspace', 'other'].reduce((a, k) => a + (roles[k] || 0), 0);
  const chartBox = h('div', { class: 'chart-box' });
  const readout = h('p', { class: 'chart-readout', 'aria-live': 'polite' }, 'Point at the chart, or focus it and use the arrow keys (P: the peak).');
  const timeline = p.timeline || [];
  mount('plan', chartBox, (width) =>
    timeline.length
      ? programChart({
          points: timeline,
          peakIndex: p.timeline_peak_index,
          capacity,
          width,
          onCursor: (i) => fill(readout, `point ${i + 1} of ${timeline.length}: `, h('strong', null, mib(timeline[i].bytes)), ' in use after ', h('span', { class: 'mono' }, clean(timeline[i].instruction, 160) || '—'), i === p.timeline_peak_index ? ' (the peak)' : ''),
        })
      : h('p', { class: 'empty' }, 'No heap-simulator trace for this module: no program-order timeline.'),
  );

  const live = p.live_at_peak || [];
  const detail = h('aside', { class: 'detail', 'aria-live': 'polite' }, h('h3', null, 'A buffer at the peak'), h('p', { class: 'muted' }, 'Point at or focus a buffer in the chart or the table to see its shape, sizes, role and source.'));
  const showBuffer = (b) =>
    fill(
      detail,
      h('h3', { class: 'mono' }, clean(b.name, 200)),
      dl([
        ['Shape', h('span', { class: 'mono' }, clean(b.shape, 400))],
        ['Size (padded)', `${mib(b.bytes)} (${thousands(b.bytes)} bytes)`],
        ['Unpadded', `${mib(b.unpadded_bytes)} (${thousands(b.unpadded_bytes)} bytes)`],
        ['Category', clean(b.category, 40)],
        ['Role', h('span', { class: 'swatch role-' + (ROLE_WORDS[b.role] ? b.role : 'other') }), ROLE_WORDS[b.role] || clean(b.role, 40)],
        ['Opcode', h('span', { class: 'mono' }, clean(b.opcode, 100))],
        ['Source', h('span', { class: 'mono' }, clean(b.source, 600) || '—')],
        ['op_name', h('span', { class: 'mono' }, clean(b.op_name, 2000) || '—')],
        b.memory_space ? ['Memory space', String(b.memory_space)] : null,
      ]),
      h('p', { class: 'muted' }, 'All read from the plan.'),
    );
  const rows = live.map((b, i) => {
    const tr = h(
      'tr',
      { tabindex: 0, 'data-index': i },
      h('td', { class: 'num' }, mib(b.bytes)),
      h('td', { class: 'nowrap' }, h('span', { class: 'mono' }, clean(b.shape, 60))),
      h('td', null, clean(b.category, 20)),
      h('td', { class: 'nowrap' }, h('span', { class: `swatch role-${ROLE_WORDS[b.role] ? b.role : 'other'}` }), clean(b.role, 20)),
      h('td', { class: 'nowrap' }, h('span', { class: 'mono', title: clean(b.source, 600) }, clean(shortSource(b.source || ''), 40))),
      h('td', null, h('span', { class: 'mono' }, clean(b.name, 60))),
      h('td', null, h('span', { class: 'mono', title: clean(b.op_name, 600) }, clean(b.op_name, 80))),
    );
    tr.addEventListener('focus', () => showBuffer(b));
    tr.addEventListener('pointerenter', () => showBuffer(b));
    return tr;
  });
  const barsBox = h('div', { class: 'chart-box' });
  const shown = live.slice(0, 25);
  mount('plan', barsBox, (width) =>
    shown.length
      ? barsChart({
          name: 'Largest buffers live at the peak',
          items: shown.map((b) => ({ label: `${b.name} ${b.shape}`, bytes: b.bytes, cls: `role-${ROLE_WORDS[b.role] ? b.role : 'other'}` })),
          width,
          onFocus: (i) => showBuffer(shown[i]),
        })
      : h('p', { class: 'empty' }, 'No buffers recorded at the peak.'),
  );
  const hostBytes = (p.host_argument_bytes || 0) + (p.host_output_bytes || 0) + (p.host_temp_bytes || 0);
  fill(
    root,
    h('h2', null, 'Plan of ', h('span', { class: 'mono' }, clean(module.label, 200)), label('read')),
    h(
      'ul',
      { class: 'stats' },
      stat('parameters', mib(p.argument_bytes)),
      stat('arrays / donated', `${p.parameter_count} / ${p.donated_parameter_count} (${mib(p.donated_bytes)})`),
      stat('outputs', mib(p.output_bytes)),
      stat('outputs not aliased', mib(p.non_aliased_output_bytes)),
      stat('temporary block', mib(p.temp_bytes)),
      stat('aliased', mib(p.alias_bytes)),
      stat('needs (param + out + temp − aliased)', gib(p.total_bytes)),
      stat('heap peak', mib(p.heap_peak_bytes)),
      stat('peak (XProf Memory Viewer)', mib(p.peak_bytes)),
      stat('with fragmentation', mib(p.allocation_bytes)),
      stat('padding at the peak', mib(p.padding_bytes)),
      stat('rematerialized instructions', String(p.remat_instructions)),
      p.device_count ? stat('devices', String(p.device_count)) : null,
      capacity ? stat('capacity', gib(capacity), 'measured') : null,
    ),
    hostBytes ? h('p', { class: 'note' }, `Host memory (S(5), not device memory): parameters ${mib(p.host_argument_bytes)}, outputs ${mib(p.host_output_bytes)}, temporary ${mib(p.host_temp_bytes)}.`) : null,
    p.replay_note ? h('p', { class: 'note' }, clean(p.replay_note, 600)) : null,
    h('h3', null, 'At the heap peak, by role', label('read')),
    (() => {
      const box = h('div', { class: 'chart-box' });
      mount('plan', box, (width) => roleBar(roles, width));
      return box;
    })(),
    h(
      'ul',
      { class: 'legend' },
      ['forward', 'backward', 'workspace', 'other'].map((k) => h('li', { 'data-role': k }, h('span', { class: `swatch role-${k}` }), `${ROLE_WORDS[k]} ${percent(roles[k] || 0, roleTotal)} (${mib(roles[k] || 0)})`)),
    ),
    h('h3', null, 'Memory along program order', label('read')),
    readout,
    chartBox,
    (p.scan_stacks || []).length
      ? [h('h3', null, 'Scan stacks', label('read')), h('ul', null, p.scan_stacks.map((st) => h('li', null, h('span', { class: 'mono' }, clean(st.shape, 200)), ` ×${st.count} via `, h('span', { class: 'mono' }, clean(st.while_instruction, 120)), ` = ${mib(st.bytes)} (${ROLE_WORDS[st.role] || clean(st.role, 20)})`)))]
      : null,
    (p.host_callbacks || []).length ? [h('h3', null, 'Host callbacks', label('read')), h('ul', null, p.host_callbacks.map((c) => h('li', { class: 'mono' }, clean(c, 300))))] : null,
    h('h3', null, `Buffers live at the peak (${live.length})`, label('read')),
    h('div', { class: 'split' }, barsBox, detail),
    table([['bytes', 1], ['shape'], ['category'], ['role'], ['source'], ['instruction'], ['op_name']], rows, { id: 'live-table' }),
  );
}

function renderRuntime(r) {
  const root = $('runtime-content');
  const rt = r.runtime;
  if (!rt) {
    fill(root, h('p', { class: 'empty' }, 'No runtime events in this capture (no allocator or execution events): see the diagnosis.'));
    return;
  }
  const selected = r.selected_module;
  const parts = [];
  parts.push(
    h('h2', null, 'Runtime', label('measured')),
    h(
      'ul',
      { class: 'stats' },
      stat('executions', thousands(rt.execution_count)),
      stat('kernels', thousands(rt.kernels)),
      stat('host-to-device transfers', thousands(rt.transfers)),
      rt.device_memory_bytes != null ? stat('device memory', gib(rt.device_memory_bytes)) : null,
      stat('AllocatorRetry waits', thousands(rt.retry.count)),
    ),
  );
  if (rt.retry && rt.retry.count > 0) {
    const waiting = rt.retry.waiting_executions || [];
    parts.push(
      h(
        'p',
        { class: 'note', id: 'retry-note' },
        `AllocatorRetry: the allocator waited for memory ${rt.retry.count} time${rt.retry.count === 1 ? '' : 's'}, longest ${duration(rt.retry.longest_ns)}, total ${duration(rt.retry.total_ns)}${rt.retry.any_execution_started_after ? '' : '; none of the waiting executions started'}`,
        label('measured'),
        waiting.length ? [h('br'), 'Waiting: ', h('span', { class: 'mono' }, waiting.slice(0, 12).map((w) => clean(w, 200)).join(', ')), waiting.length > 12 ? ` and ${waiting.length - 12} more` : ''] : null,
      ),
    );
  }
  const starts = rt.in_use_at_selected_starts || [];
  if (starts.length) {
    const list = starts.length > 12 ? [...starts.slice(0, 5).map(mib), `… ${starts.length - 10} more …`, ...starts.slice(-5).map(mib)] : starts.map(mib);
    parts.push(
      h('h3', null, 'In use at each execution start of ', h('span', { class: 'mono' }, clean(selected || '', 200)), label('measured')),
      h('p', { class: 'mono' }, list.join(' → ')),
    );
    if (rt.growth_per_execution_bytes != null) {
      const g = rt.growth_per_execution_bytes;
      parts.push(
        h(
          'p',
          null,
          'Growth per execution: ',
          h('strong', null, `${g < 0 ? '−' : '+'}${mib(Math.abs(g))}`),
          label('measured'),
          rt.growth_ratio_to_outputs != null ? [` = ${rt.growth_ratio_to_outputs.toFixed(2)}× the non-aliased outputs`, label('estimated')] : null,
        ),
      );
    }
  }
  const allocators = rt.allocators || [];
  parts.push(
    h('h3', null, 'Allocators', label('measured')),
    table(
      [['allocator'], ['capacity', 1], ['peak in use', 1], ['fragmentation at the peak', 1], ['allocations', 1], ['deallocations', 1]],
      allocators.map((a) => [h('span', { class: 'mono' }, clean(a.name, 120)), gib(a.capacity_bytes), gib(a.peak_in_use_bytes), Number(a.fragmentation_at_peak).toFixed(2), thousands(a.allocations), thousands(a.deallocations)]),
      { id: 'allocators' },
    ),
  );
  const withEvents = allocators.filter((a) => a.timeline && a.timeline.length);
  if (withEvents.length) {
    if (!withEvents.some((a) => a.name === state.allocator)) state.allocator = withEvents[0].name;
    const box = h('div', { class: 'chart-box' });
    const readout = h('p', { class: 'chart-readout', 'aria-live': 'polite' }, 'Point at the chart, or focus it and use the arrow keys.');
    const draw = (width) => {
      const a = withEvents.find((x) => x.name === state.allocator) || withEvents[0];
      return runtimeChart({
        timeline: a.timeline,
        capacity: a.capacity_bytes,
        executions: rt.executions || [],
        waits: (rt.retry && rt.retry.waits) || [],
        selected,
        width,
        onCursor: (i) => fill(readout, `${clean(a.name, 80)} at ${duration(a.timeline[i][0] / 1000)}: `, h('strong', null, mib(a.timeline[i][1])), ' in use'),
      });
    };
    mount('runtime', box, draw);
    const pick = h('select', { id: 'allocator-select' }, withEvents.map((a) => h('option', { value: a.name }, clean(a.name, 120))));
    pick.value = state.allocator;
    pick.addEventListener('change', () => {
      state.allocator = pick.value;
      box.dataset.width = '';
      for (const d of state.mounts.runtime || []) d();
    });
    parts.push(
      h('h3', null, 'Bytes in use over time', label('measured')),
      withEvents.length > 1 ? h('div', { class: 'alloc-pick' }, h('label', { for: 'allocator-select' }, 'Allocator'), pick) : h('p', { class: 'mono' }, clean(withEvents[0].name, 120)),
      h('p', { class: 'muted' }, `Vertical lines and bands: executions, from start to end (blue: the selected module; red: launched no kernel; grey: other modules). ${((rt.retry && rt.retry.waits) || []).length ? 'Orange bands: AllocatorRetry waits (the allocator had no free memory and waited). ' : ''}Dashed: the allocator capacity.`),
      readout,
      box,
    );
  }
  const groups = rt.live_at_last_execution || [];
  if (groups.length) {
    const box = h('div', { class: 'chart-box' });
    const shown = groups.slice(0, 20);
    mount('runtime', box, (width) => barsChart({ name: 'Live at the last execution, by origin', items: shown.map((g) => ({ label: g.origin, bytes: g.bytes })), width, labelWidth: Math.min(420, Math.round(width * 0.5)) }));
    parts.push(
      h('h3', null, 'Live at the start of the last execution, by who allocated it', label('measured')),
      box,
      table(
        [['bytes', 1], ['arrays', 1], ['allocated by']],
        groups.map((g) => [mib(g.bytes), thousands(g.count), h('span', { class: 'text' }, clean(g.origin, 300))]),
        { id: 'live-groups' },
      ),
    );
  }
  const events = rt.host_events_between_last_executions || [];
  if (events.length) {
    parts.push(
      h('h3', null, 'Host events between the last two executions', label('measured')),
      table(
        [['count', 1], ['total time', 1], ['event']],
        events.slice(0, 100).map((e) => [`${thousands(e.count)}×`, duration(e.total_ns), h('span', { class: 'mono' }, clean(e.name, 200))]),
      ),
    );
  }
  const execs = rt.executions || [];
  if (execs.length) {
    parts.push(
      h(
        'details',
        null,
        h('summary', null, `Executions (${execs.length}${rt.execution_count > execs.length ? ` listed of ${thousands(rt.execution_count)}` : ''})`),
        table(
          [['module'], ['run id'], ['start', 1], ['duration', 1], ['in use at start', 1], ['launched kernels']],
          execs.map((e) =>
            h(
              'tr',
              { class: e.launched_kernels === false ? 'hi' : e.module === selected ? 'current' : null },
              h('td', null, h('span', { class: 'mono' }, clean(e.module || '—', 120))),
              h('td', null, e.run_id == null ? '—' : String(e.run_id)),
              h('td', { class: 'num' }, duration(e.start_ns)),
              h('td', { class: 'num' }, duration(e.duration_ns)),
              h('td', { class: 'num' }, e.in_use_at_start_bytes == null ? '—' : mib(e.in_use_at_start_bytes)),
              h('td', null, e.launched_kernels == null ? '—' : e.launched_kernels ? 'yes' : 'no'),
            ),
          ),
        ),
      ),
    );
  }
  fill(root, parts);
}

const MODULE_COLUMNS = [
  { key: 'label', title: 'module', get: (m) => m.label, num: false },
  { key: 'executions', title: 'executions', get: (m) => m.executions, num: true, lab: 'measured', fmt: (m) => thousands(m.executions) },
  { key: 'peak', title: 'peak', get: (m) => m.plan.peak_bytes, num: true, lab: 'read', fmt: (m) => mib(m.plan.peak_bytes) },
  { key: 'temp', title: 'temp', get: (m) => m.plan.temp_bytes, num: true, lab: 'read', fmt: (m) => mib(m.plan.temp_bytes) },
  { key: 'parameters', title: 'parameters', get: (m) => m.plan.parameter_bytes, num: true, lab: 'read', fmt: (m) => mib(m.plan.parameter_bytes) },
  { key: 'donated', title: 'donated', get: (m) => m.plan.donated_bytes, num: true, lab: 'read', fmt: (m) => mib(m.plan.donated_bytes) },
];

function renderModules(r) {
  const table = $('module-table');
  const modules = r.modules || [];
  const { key, dir } = state.sort;
  const head = table.tHead.rows[0];
  fill(
    head,
    MODULE_COLUMNS.map((c) => {
      const button = h('button', { type: 'button', 'data-sort': c.key }, c.title);
      button.addEventListener('click', () => {
        state.sort = { key: c.key, dir: state.sort.key === c.key ? -state.sort.dir : c.num ? -1 : 1 };
        renderModules(r);
        table.querySelector(`th button[data-sort="${c.key}"]`).focus();
      });
      return h('th', { scope: 'col', class: c.num ? 'num' : null, 'aria-sort': key === c.key ? (dir > 0 ? 'ascending' : 'descending') : null }, button, c.lab ? label(c.lab) : null);
    }),
  );
  let order = modules.map((m, i) => i);
  const col = MODULE_COLUMNS.find((c) => c.key === key);
  if (col) {
    order.sort((a, b) => {
      const va = col.get(modules[a]);
      const vb = col.get(modules[b]);
      const c = col.num ? va - vb : String(va).localeCompare(String(vb));
      return c * dir || a - b;
    });
  }
  const rows = order.map((i) => {
    const m = modules[i];
    const isCurrent = m.label === r.selected_module;
    const pick = h('button', { type: 'button', class: 'link mono', 'data-label': m.label, 'aria-current': isCurrent ? 'true' : null, title: isCurrent ? 'the module this report is about' : 'switch the report to this module' }, clean(m.label, 200));
    pick.addEventListener('click', () => {
      if (isCurrent) return;
      state.module = m.label;
      run();
    });
    return h('tr', { class: isCurrent ? 'current' : null }, h('td', null, pick), MODULE_COLUMNS.slice(1).map((c) => h('td', { class: 'num' }, c.fmt(m))));
  });
  fill(table.tBodies[0], rows.length ? rows : h('tr', null, h('td', { colspan: MODULE_COLUMNS.length, class: 'empty' }, 'No module plans in this capture.')));
}

// ---------------------------------------------------------------- tabs

function showTab(tab, focus) {
  if (!TABS.includes(tab)) tab = 'diagnosis';
  state.tab = tab;
  for (const t of TABS) {
    const button = $(`tab-${t}`);
    const on = t === tab;
    button.setAttribute('aria-selected', on ? 'true' : 'false');
    button.tabIndex = on ? 0 : -1;
    $(`panel-${t}`).hidden = !on;
  }
  if (focus) $(`tab-${tab}`).focus();
  for (const draw of state.mounts[tab] || []) draw();
  writeHash();
}

for (const t of TABS) {
  const button = $(`tab-${t}`);
  button.addEventListener('click', () => showTab(t, false));
  button.addEventListener('keydown', (e) => {
    const i = TABS.indexOf(t);
    let next = null;
    if (e.key === 'ArrowRight') next = TABS[(i + 1) % TABS.length];
    else if (e.key === 'ArrowLeft') next = TABS[(i + TABS.length - 1) % TABS.length];
    else if (e.key === 'Home') next = TABS[0];
    else if (e.key === 'End') next = TABS[TABS.length - 1];
    if (next) {
      e.preventDefault();
      showTab(next, true);
    }
  });
}

let resizeTimer = 0;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    for (const draw of state.mounts[state.tab] || []) draw();
  }, 150);
});

// ---------------------------------------------------------------- controls

$('open-file').addEventListener('click', () => $('file-input').click());
$('open-folder').addEventListener('click', () => $('folder-input').click());
$('file-input').addEventListener('change', (e) => {
  const files = [...e.target.files].map((file) => ({ path: file.name, file }));
  e.target.value = '';
  if (files.length) load(asHostFiles(files));
});
$('folder-input').addEventListener('change', (e) => {
  const files = [...e.target.files].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
  e.target.value = '';
  if (files.length) load(asHostFiles(files));
});
$('try-sample').addEventListener('click', loadSample);
$('cancel').addEventListener('click', () => {
  analyzer.cancel();
  hideProgress();
  document.documentElement.dataset.state = 'cancelled';
  status('notice', 'Cancelled.');
});
$('host-select').addEventListener('change', (e) => {
  state.hostIndex = Number(e.target.value) || 0;
  state.module = null;
  run();
});
$('change-module').addEventListener('click', () => showTab('modules', true));
$('error-apply').addEventListener('click', () => {
  state.errorText = $('error-text').value.slice(0, 1 << 20);
  if (state.files.length) run();
});
$('error-clear').addEventListener('click', () => {
  $('error-text').value = '';
  if (state.errorText) {
    state.errorText = '';
    if (state.files.length) run();
  }
});
$('copy-md').addEventListener('click', async () => {
  const md = state.result && state.result.markdown;
  if (!md) return;
  try {
    await navigator.clipboard.writeText(md);
    status('notice', 'The report is on the clipboard as Markdown.');
  } catch {
    const area = h('textarea', { class: 'sr-only', readonly: true });
    area.value = md;
    document.body.append(area);
    area.select();
    const ok = document.execCommand && document.execCommand('copy');
    area.remove();
    status(ok ? 'notice' : 'error', ok ? 'The report is on the clipboard as Markdown.' : 'The clipboard is not available here.');
  }
});
$('download-json').addEventListener('click', () => {
  const r = state.result && state.result.report;
  if (!r) return;
  const blob = new Blob([`${JSON.stringify(r, null, 2)}\n`], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${(r.host || 'report').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100)}.oomlens.json`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
});

// ---------------------------------------------------------------- drag and drop

let dragDepth = 0;
window.addEventListener('dragenter', (e) => {
  if (!e.dataTransfer || ![...e.dataTransfer.types].includes('Files')) return;
  e.preventDefault();
  dragDepth++;
  $('drop-overlay').hidden = false;
});
window.addEventListener('dragleave', () => {
  dragDepth = Math.max(0, dragDepth - 1);
  if (!dragDepth) $('drop-overlay').hidden = true;
});
window.addEventListener('dragover', (e) => {
  e.preventDefault();
  if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
});
window.addEventListener('drop', async (e) => {
  e.preventDefault();
  dragDepth = 0;
  $('drop-overlay').hidden = true;
  if (!e.dataTransfer) return;
  try {
    const entries = await fromDataTransfer(e.dataTransfer);
    load(asHostFiles(entries));
  } catch (err) {
    status('error', `The dropped files could not be read: ${clean(err.message || String(err), 300)}`);
  }
});

// ---------------------------------------------------------------- embedding (postMessage)

window.addEventListener('message', (e) => {
  const d = e.data;
  const answer = (msg) => {
    try {
      e.source.postMessage(msg, e.origin && e.origin !== 'null' ? e.origin : '*');
    } catch {
      // no one to answer
    }
  };
  if (d === 'ping' || d === 'PING') return answer('pong');
  if (!d || typeof d !== 'object' || !('oomlens' in d)) return;
  const body = d.oomlens;
  if (body === 'ping') return answer({ oomlens: 'pong' });
  if (!body || typeof body !== 'object') return;
  const data = body.buffer;
  if (!(data instanceof ArrayBuffer || ArrayBuffer.isView(data) || data instanceof Blob)) {
    answer({ oomlens: 'error', message: 'expected {oomlens: {buffer: ArrayBuffer, title}}' });
    return;
  }
  const name = typeof body.title === 'string' && body.title ? body.title.slice(0, 300) : 'capture.xplane.pb';
  const blob = data instanceof Blob ? data : new Blob([data]);
  state.replyTo = { source: e.source, origin: e.origin };
  if (typeof body.error_text === 'string') {
    state.errorText = body.error_text.slice(0, 1 << 20);
    $('error-text').value = state.errorText;
  }
  answer({ oomlens: 'received', title: name, bytes: blob.size });
  load([{ host: hostOf(name), name, blob }], { fromLink: true, module: typeof body.module === 'string' ? body.module : null });
});

// ---------------------------------------------------------------- start

{
  const want = readHash();
  if (want.tab && TABS.includes(want.tab)) state.tab = want.tab;
  const url = new URLSearchParams(location.search).get('url');
  if (url) loadUrl(url);
  const hello = { oomlens: 'ready' };
  if (window.parent && window.parent !== window) window.parent.postMessage(hello, '*');
  if (window.opener) window.opener.postMessage(hello, '*');
  document.documentElement.dataset.ready = 'true';
}
