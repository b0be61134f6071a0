// The oomlens page. It loads captures (drop, file/folder pickers, the sample, `?url=`,
// postMessage), hands them to the engine's worker, and renders the view the worker
// returns with the report (src/report/view.rs): every title, word and figure shown as
// text is the view's, as the CLI prints it. The report model's numbers only draw the
// charts; this file computes no figure and words no finding.
//
// Strings from a capture are untrusted: they go into the page only as text nodes or
// attribute values (dom.js), after `clean()` for control and bidi characters.

import { Analyzer, AbortError, Comparer, HostPool } from './analyze.js';
import { h, s, fill, text } from './dom.js';
import { clean, mib, duration } from './format.js';
import { programChart, runtimeChart, barsChart, compareChart, roleBarsChart, listingChart, splitBar } from './charts.js';

const $ = (id) => document.getElementById(id);
const analyzer = new Analyzer();
const comparer = new Comparer();
const pool = new HostPool();
const SUFFIX = '.xplane.pb';
const TABS = ['diagnosis', 'plan', 'runtime', 'modules'];

const state = {
  files: [], // [{host, name, blob}]
  inputs: null, // [{name, blob}]: inputs joined by the engine (error text, logs, dump files, profiles, captures); [] with pasted text alone
  hostIndex: 0,
  module: null, // label chosen by the user; null: the engine's choice
  tab: 'diagnosis',
  errorText: '',
  result: null, // {report, view, markdown, ms, memoryBytes, version}
  replyTo: null, // {source, origin} of a postMessage that sent the capture
  allocator: null, // the allocator drawn in the runtime chart
  notice: null, // a message to show with the next report
  mounts: {}, // panel → [render(width)] for charts, run when the panel is shown
  pair: null, // {before: {host, name, blob}, after: {…}}: two runs compared
  compared: null, // {diff, view, markdown, ms, workers, version} of the pair
  summary: null, // {hosts_summary, view, markdown, ms, workers, version} of a folder's hosts
  showing: 'host', // 'summary' (a folder's hosts) or 'host' (one host's report)
};

// ---------------------------------------------------------------- labels and words

// What each label means, from the view (its tooltip).
let labelMeanings = {};

function label(kind) {
  const k = kind === 'measured' || kind === 'read' || kind === 'estimated' ? kind : 'estimated';
  return h('span', { class: `label ${k}`, title: labelMeanings[k] || null }, k);
}

const PHASES = {
  open: 'Opening',
  download: 'Downloading',
  index: 'Indexing the planes',
  plan: 'Reading the compiled plans',
  'host plane': 'Scanning allocator and execution events',
  'waiting for the second worker': 'Waiting for the second worker',
  'device planes': 'Matching kernels to launches',
  'runtime summary': 'Summarizing the runtime',
  hosts: 'Analyzing the host files',
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
  if (f && state.files.length > 1 && state.showing === 'host') p.set('host', f.host);
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
  if (state.files.length > 1 && !want.host) {
    if (state.showing === 'host') showSummary();
    return;
  }
  let rerun = state.files.length > 1 && state.showing !== 'host';
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
  if (rerun) {
    state.showing = 'host';
    run();
  }
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
    const hosts = p.hosts ? ` — ${p.hosts.finished} of ${p.hosts.total} hosts done, ${p.hosts.workers} worker${p.hosts.workers > 1 ? 's' : ''}` : '';
    text($('progress-text'), `${PHASES[p.phase] || p.phase}${hosts}… ${of}${mbs}`);
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
    status('error', 'Nothing oomlens reads there. Drop the *.xplane.pb file that jax.profiler.trace(...) wrote (or the capture folder that holds plugins/profile/<run>/), the error message or log (.txt, .log), an XLA dump folder, or device memory profiles (.prof).');
    return;
  }
  files.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  state.files = files;
  state.inputs = null;
  const want = readHash();
  const i = want.host ? files.findIndex((f) => f.host === want.host) : -1;
  state.hostIndex = i >= 0 ? i : 0;
  state.module = module !== undefined ? module || null : fromLink ? want.module || null : null;
  if (!fromLink) state.replyTo = null;
  state.summary = null;
  renderHostPicker();
  if (files.length > 1) {
    // Several hosts of one run: the cross-host summary first; a host's report on demand.
    state.showing = 'summary';
    runFolder();
    return;
  }
  state.showing = 'host';
  run();
}

/**
 * Analyzes a folder's host files on the pool of workers (analyze.js's HostPool): only
 * each host's summary row is kept, and the engine compares them (src/hosts.rs).
 */
async function runFolder() {
  const files = state.files;
  leaveCompare();
  analyzer.cancel();
  mark('running');
  status(null);
  $('report').hidden = true;
  $('hosts').hidden = true;
  runStarted = performance.now();
  const name = `${files.length} host files`;
  const bytes = files.reduce((a, f) => a + f.blob.size, 0);
  showProgress(name, { phase: 'hosts', done: 0, total: bytes, read: 0 });
  try {
    const result = await pool.run(files, { error_text: state.errorText }, { onProgress: (p) => showProgress(name, { phase: 'hosts', done: p.done, total: p.bytes, read: p.done, hosts: p }) });
    hideProgress();
    state.summary = result;
    showSummary();
    mark('done');
    reply({ oomlens: 'analyzed', hosts: result.hosts_summary.length, text: result.view.title });
  } catch (e) {
    if (e instanceof AbortError) return;
    hideProgress();
    $('drop').classList.remove('compact');
    status('error', `${name}: ${clean(e.message || String(e), 2000)}`);
    mark('error');
    reply({ oomlens: 'error', message: e.message, kind: e.kind });
  }
}

/** Shows the folder's cross-host summary (analyzing the hosts again if it is stale). */
function showSummary() {
  state.showing = 'summary';
  if (!state.summary) {
    runFolder();
    return;
  }
  analyzer.cancel();
  hideProgress();
  renderSummary();
}

let finished = 0;

/** `data-state` on <html> (running, done, error) and `data-runs`, for tests and embedders. */
function mark(phase) {
  const root = document.documentElement;
  root.dataset.state = phase;
  if (phase !== 'running') root.dataset.runs = String(++finished);
}

/** What a set of joined inputs is called on the page. */
function inputsName(inputs) {
  if (!inputs.length) return 'the pasted error';
  return inputs.length === 1 ? inputs[0].name : `${inputs[0].name} and ${inputs.length - 1} more`;
}

async function run() {
  const inputs = state.inputs;
  const f = inputs ? { name: inputsName(inputs), blob: { size: inputs.reduce((a, x) => a + x.blob.size, 0) } } : state.files[state.hostIndex];
  if (!f) return;
  leaveCompare();
  pool.cancel();
  state.showing = 'host';
  $('hosts').hidden = true;
  mark('running');
  status(null);
  runStarted = performance.now();
  showProgress(f.name, { phase: 'open', done: 0, total: f.blob.size, read: 0 });
  for (const id of ['copy-md', 'download-json']) $(id).disabled = true;
  const options = { module: state.module, error_text: state.errorText, host: f.host, file_name: f.name };
  try {
    const hooks = { onProgress: (p) => showProgress(f.name, p) };
    const result = inputs ? await analyzer.runInputs(inputs, { module: state.module, error_text: state.errorText }, hooks) : await analyzer.run(f.blob, options, hooks);
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
    if (state.files.length > 1 && state.summary) {
      // One host of a folder: back to the summary, with the host's error.
      renderSummary();
      status('error', `${clean(f.name, 200)}: ${clean(e.message, 2000)}`);
      mark('error');
      reply({ oomlens: 'error', message: e.message, kind: e.kind });
      return;
    }
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

/**
 * Inputs other than captures, joined by the engine (which tells them apart by content):
 * pasted text alone (`[]`), or files — error messages and logs, XLA dump files, device
 * memory profiles, and the captures beside them.
 */
function loadInputs(list) {
  state.files = [];
  state.inputs = list;
  state.hostIndex = 0;
  state.module = null;
  state.summary = null;
  state.replyTo = null;
  state.showing = 'host';
  renderHostPicker();
  run();
}

// What a file found in a dropped or picked folder may be, by its name (the engine then
// reads it by content): an XLA dump file, a device memory profile, a log or error text.
const DUMP_FILE = /^module_\d+\../;
const PROFILE_FILE = /\.(prof|pprof)$|\.pb\.gz$/i;
const TEXT_FILE = /\.(txt|log|err|out)$/i;

function isExtraInput(name) {
  return DUMP_FILE.test(name) || PROFILE_FILE.test(name) || TEXT_FILE.test(name);
}

/**
 * Routes what was dropped or picked (`[{path, file}]`): captures alone are analyzed as
 * captures (one, a folder's hosts, or two loose ones compared); with anything else — a
 * file not named `*.xplane.pb` given on its own, a folder's error text, log, XLA dump
 * files or device memory profiles — everything is joined by the engine, as the CLI
 * joins the paths it is given.
 */
function route(entries) {
  const isLoose = (e) => !e.path.replace(/^\//, '').includes('/');
  const loose = entries.filter(isLoose);
  const inFolders = entries.filter((e) => !isLoose(e));
  const captures = [...loose.filter((e) => e.file.name.endsWith(SUFFIX)), ...capturesIn(inFolders)];
  const extras = [...loose.filter((e) => !e.file.name.endsWith(SUFFIX)), ...inFolders.filter((e) => isExtraInput(e.file.name))];
  if (!extras.length) {
    if (captures.length === 2 && loose.length === 2) {
      const [before, after] = guessOrder(...captures.map((x) => ({ host: hostOf(x.file.name), name: x.file.name, blob: x.file })));
      state.replyTo = null;
      state.compareModule = null;
      startCompare(before, after);
      return;
    }
    load(captures.map((e) => ({ host: hostOf(e.file.name), name: e.file.name, blob: e.file })));
    return;
  }
  // In name order, numbers by value (step2 before step10), as the CLI walks a folder:
  // profiles' growth goes from the first to the last.
  const byName = (a, b) => a.file.name.localeCompare(b.file.name, 'en', { numeric: true });
  loadInputs([...captures, ...extras.sort(byName)].map((e) => ({ name: e.file.name, blob: e.file })));
}

/** The host files in a list of {path, file}: the newest run's, as the CLI picks. */
function capturesIn(entries) {
  const captures = entries.filter((e) => e.file.name.endsWith(SUFFIX));
  if (!captures.length) return [];
  const dir = (p) => p.slice(0, p.lastIndexOf('/') + 1);
  const dirs = [...new Set(captures.map((e) => dir(e.path)))].sort();
  const newest = dirs[dirs.length - 1];
  return captures.filter((e) => dir(e.path) === newest);
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
//
// Everything shown as text comes from the view (`state.result.view`, src/report/view.rs):
// titles, row names, figures as the CLI prints them, list sizes, sentences. The report
// model (`state.result.report`) is read only for the charts' geometry (timelines, byte
// counts), the module picker's labels and the JSON download.

function current() {
  const res = state.result;
  if (!res || !res.view) return {};
  const r = res.report;
  const v = res.view;
  const module = r && r.selected_module ? (r.modules || []).find((m) => m.label === r.selected_module) : null;
  return { r, v, module };
}

function render() {
  const { r, v, module } = current();
  if (!v) return;
  labelMeanings = Object.fromEntries((v.labels || []).map((l) => [l.label, l.meaning]));
  $('drop').classList.add('compact');
  text($('drop-title'), 'Drop another capture anywhere on this page');
  $('report').hidden = false;
  renderHeadline(v.headline);
  text($('module-name'), v.module.label != null ? clean(v.module.label, 200) : 'none');
  text($('module-reason'), v.module.reason ? `— ${clean(v.module.reason, 300)}` : '');
  fill($('module-runs'), v.module.executions != null ? [`executions in the capture: ${v.module.executions}`, label('measured')] : []);
  $('change-module').hidden = !v.modules;
  text($('file-name'), clean(v.file, 200));
  text($('file-size'), v.size);
  const inputs = v.inputs || [];
  fill($('inputs-line'), inputs.length ? ['inputs: ', inputs.map((line, i) => [i ? ' · ' : '', h('span', { class: 'text' }, clean(line, 300))])] : []);
  $('inputs-line').hidden = !inputs.length;
  const res = state.result;
  text($('engine-info'), `analyzed in ${res.ms < 1000 ? `${res.ms.toFixed(0)} ms` : `${(res.ms / 1000).toFixed(2)} s`} by ${res.version}${res.workers > 1 ? ` on ${res.workers} workers` : ''}`);
  $('engine-info').dataset.workers = String(res.workers || 1);
  $('engine-info').dataset.memory = String(res.memoryBytes || 0);
  $('engine-info').dataset.phases = JSON.stringify(res.phases || []);
  $('engine-info').title = (res.phases || []).map(([name, ms]) => `${name}: ${(ms / 1000).toFixed(2)} s`).join(', ');
  text($('version'), res.version);
  for (const id of ['copy-md', 'download-json']) $(id).disabled = false;
  state.mounts = {};
  renderDiagnosis(v);
  renderPlan(r, v, module);
  renderRuntime(r, v);
  renderModules(r, v);
  showTab(state.tab, false);
  writeHash();
  document.title = `${clean(v.headline.text || v.file, 120)} — oomlens`;
}

function renderHeadline(hl) {
  const box = $('headline');
  box.className = `headline ${VERDICT_CLASS[hl.verdict] || ''}`;
  box.dataset.verdict = hl.verdict || '';
  text($('headline-text'), clean(hl.text || 'No verdict', 400));
  fill(
    $('headline-figures'),
    (hl.figures || []).map((f) => h('li', { 'data-name': f.name }, h('span', { class: 'k' }, f.name), ' ', h('strong', null, f.shown), label(f.label))),
  );
}

function renderHostPicker() {
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
function renderSummary() {
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
  text($('hosts-info'), `analyzed in ${res.ms < 1000 ? `${res.ms.toFixed(0)} ms` : `${(res.ms / 1000).toFixed(2)} s`} by ${res.version} on ${res.workers} worker${res.workers > 1 ? 's' : ''}`);
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
      if (r.status === 'failed' || i2 < 0) return h('span', { class: 'mono', title: r.error ? clean(r.error, 600) : null }, clean(c.text, 200));
      const button = h('button', { type: 'button', class: 'link mono host-open', 'data-host': r.host, title: 'open this host\'s full report' }, clean(c.text, 200));
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

/** A definition list of the view's rows ({name, value, note}); `extra` adds nodes to a row's value. */
function dl(rows, max = 2000) {
  return h(
    'dl',
    null,
    rows.filter(Boolean).map((r) => [h('dt', null, r.name), h('dd', null, h('span', { class: 'text' }, clean(r.value, max)), r.note ? h('span', { class: 'muted' }, ` (${clean(r.note, 400)})`) : null, r.extra || null)]),
  );
}

function renderDiagnosis(v) {
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
  const e = v.error;
  // Without a plan (the message alone, or with profiles), the message is the report: first.
  const panel = $('panel-diagnosis');
  if (e && !v.plan) panel.prepend($('error-box'));
  else panel.append($('error-box'));
  if (e) {
    $('error-box').open = true;
    fill($('error-result'), errorMessage(e, (state.result.report || {}).error || {}));
  } else {
    fill($('error-result'));
  }
}

/**
 * The error message as the engine reads it (the view's `error`): its figures, the
 * TensorCore/SparseCore split as a bar, the allocator and remat lines, the allocations
 * it lists as bars with their layout padding shaded (lengths from the report's
 * `error.allocations[]`), and what it points to.
 */
function errorMessage(e, model) {
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

/** A table of the view ({title, label, columns, rows of {text, full}, more, marks}). */
function viewTable(t, { id, cell, rowAttrs, heading = 'h3', titled = true } = {}) {
  const marks = t.marks || [];
  const rows = t.rows.map((cells, i) => {
    const mark = marks[i] || null;
    const attrs = { class: mark === 'no_kernel' ? 'hi' : mark === 'selected' ? 'current' : null, ...(rowAttrs ? rowAttrs(i) : {}) };
    return h(
      'tr',
      attrs,
      cells.map((c, j) => {
        const col = t.columns[j] || { name: '', numeric: false };
        const content = cell ? cell(c, col, i, j) : null;
        return h('td', { class: col.numeric ? 'num' : null }, content != null ? content : col.numeric ? c.text : h('span', { class: 'mono', title: c.full != null ? clean(c.full, 600) : null }, clean(c.text, 200)));
      }),
    );
  });
  return [
    titled ? h(heading, null, t.title) : null,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data', id },
        h('thead', null, h('tr', null, t.columns.map((c) => h('th', { class: c.numeric ? 'num' : null, scope: 'col' }, c.name)))),
        h('tbody', null, rows),
      ),
    ),
    t.more ? h('p', { class: 'muted more' }, clean(t.more, 200)) : null,
  ];
}

function mount(panel, container, draw) {
  (state.mounts[panel] = state.mounts[panel] || []).push(() => {
    const width = Math.max(320, Math.floor(container.clientWidth || 900));
    if (container.dataset.width === String(width)) return;
    container.dataset.width = String(width);
    fill(container, draw(width));
  });
}

const ROLES = ['forward', 'backward', 'workspace', 'other'];
const roleClass = (role) => `role-${ROLES.includes(role) ? role : 'other'}`;

/** The heap at its peak by role: a stacked bar, from the view's shares. */
function roleBar(roles, sentence, width) {
  const total = roles.reduce((a, r) => a + r.bytes, 0);
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${width} 22`, width, height: 22, role: 'img', 'aria-label': sentence });
  let x = 0;
  for (const r of roles) {
    const w = total > 0 ? (r.bytes / total) * width : 0;
    if (w > 0) svg.append(s('rect', { class: roleClass(r.role), x: x.toFixed(1), y: 2, width: w.toFixed(1), height: 18 }, s('title', null, `${r.words}: ${r.shown}`)));
    x += w;
  }
  return svg;
}

function renderPlan(r, v, module) {
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
          onCursor: (i) => fill(readout, `point ${i + 1} of ${timeline.length}: `, h('strong', null, mib(timeline[i].bytes)), ' in use after ', h('span', { class: 'mono' }, clean(timeline[i].instruction, 160) || '—'), i === plan.timeline_peak_index ? ' (the peak)' : ''),
        })
      : h('p', { class: 'empty' }, 'No heap-simulator trace for this module: no program-order timeline.'),
  );

  const parts = [
    h('h2', null, 'Plan of ', h('span', { class: 'mono' }, clean(v.module.label, 200)), label('read')),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'data plan-rows', id: 'plan-rows' },
        h('tbody', null, p.rows.map((row) => h('tr', null, h('th', { scope: 'row' }, row.name), h('td', { class: 'num' }, row.value), h('td', { class: 'muted' }, row.note)))),
      ),
    ),
    p.source ? h('p', { class: 'muted', id: 'plan-source' }, `plan read from ${clean(p.source, 200)}`) : null,
    h('p', { class: 'muted', id: 'plan-padding' }, p.padding),
    p.host_memory ? h('p', { class: 'note', id: 'host-memory' }, `host memory (S(5), not device memory): ${clean(p.host_memory, 400)}`) : null,
    p.note ? h('p', { class: 'note' }, clean(p.note, 600)) : null,
    h('h3', null, 'At the heap peak, by role', label('read')),
    (() => {
      const box = h('div', { class: 'chart-box' });
      mount('plan', box, (width) => roleBar(p.roles, p.roles_sentence, width));
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
    const widths = [null, 60, 20, 20, 40, 60, 80];
    const table = viewTable(t, {
      id: 'live-table',
      titled: false,
      rowAttrs: (i) => ({ tabindex: 0, 'data-index': i }),
      cell: (c, col, i, j) => {
        if (col.numeric) return null;
        const shown = h('span', { class: 'mono', title: c.full != null ? clean(c.full, 600) : c.text.length > (widths[j] || 200) ? clean(c.text, 600) : null }, clean(c.text, widths[j] || 200));
        return col.name === 'role' && buffers[i] ? [h('span', { class: `swatch ${roleClass(buffers[i].role)}` }), shown] : shown;
      },
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

function renderRuntime(r, v) {
  const root = $('runtime-content');
  const rv = v.runtime;
  const rt = r && r.runtime;
  const profiles = v.profiles ? profilesSection(v.profiles) : null;
  if (!rv) {
    fill(root, profiles || h('p', { class: 'empty' }, 'No runtime section: the capture has no allocator or execution events (see the diagnosis).'));
    return;
  }
  const selected = v.module.label;
  const parts = [
    h('h2', null, 'Runtime', label('measured')),
    h(
      'ul',
      { class: 'lines', id: 'runtime-lines' },
      rv.allocators.map((a) => h('li', { class: 'mono' }, clean(a, 300))),
      rv.device_memory ? h('li', null, rv.device_memory) : null,
      h('li', null, rv.counts),
    ),
  ];
  if (rv.retry) {
    parts.push(
      h('p', { class: 'note', id: 'retry-note' }, `AllocatorRetry: ${rv.retry}`, label('measured')),
      rv.waits.length ? h('ul', { class: 'lines' }, rv.waits.map((w) => h('li', { class: 'text' }, clean(w, 300)))) : null,
    );
  }
  if (rv.in_use_at_starts) {
    parts.push(
      h('h3', null, 'In use at each execution start of ', h('span', { class: 'mono' }, clean(selected || '', 200)), label('measured')),
      h('p', { class: 'mono', id: 'in-use' }, rv.in_use_at_starts),
    );
  }
  if (rv.growth) parts.push(h('p', { id: 'growth' }, 'Growth per execution: ', h('strong', null, rv.growth), label('measured')));

  const withEvents = ((rt && rt.allocators) || []).filter((a) => a.timeline && a.timeline.length);
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
      h('p', { class: 'muted' }, `Vertical lines and bands: executions, from start to end (blue: the selected module; red: launched no kernel; grey: other modules). ${rv.retry ? 'Orange bands: AllocatorRetry waits (the allocator had no free memory and waited). ' : ''}Dashed: the allocator capacity.`),
      readout,
      box,
    );
  }
  const groups = rv.live_groups || [];
  if (groups.length) {
    const box = h('div', { class: 'chart-box' });
    mount('runtime', box, (width) => barsChart({ name: 'Live at the start of the last execution, by who allocated it', items: groups.map((g) => ({ label: g.origin, bytes: g.bytes, shown: g.shown })), width, labelWidth: Math.min(420, Math.round(width * 0.5)) }));
    parts.push(
      h('h3', null, 'Live at the start of the last execution, by who allocated it', label('measured')),
      box,
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'data', id: 'live-groups' },
          h('thead', null, h('tr', null, h('th', { class: 'num', scope: 'col' }, 'bytes'), h('th', { class: 'num', scope: 'col' }, 'arrays'), h('th', { scope: 'col' }, 'allocated by'))),
          h(
            'tbody',
            null,
            groups.map((g) => h('tr', null, h('td', { class: 'num' }, g.shown), h('td', { class: 'num' }, String(g.count)), h('td', null, h('span', { class: 'text' }, clean(g.origin, 300)), g.inputs ? h('span', { class: 'muted' }, ` (${clean(g.inputs, 200)})`) : null))),
          ),
        ),
      ),
      rv.live_groups_more ? h('p', { class: 'muted more' }, rv.live_groups_more) : null,
    );
  }
  const events = rv.host_events || [];
  if (events.length) {
    parts.push(
      h('h3', null, 'Host events between the last two executions', label('measured')),
      h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'data', id: 'host-events' },
          h('thead', null, h('tr', null, h('th', { class: 'num', scope: 'col' }, 'count'), h('th', { class: 'num', scope: 'col' }, 'total time'), h('th', { scope: 'col' }, 'event'))),
          h('tbody', null, events.map((e) => h('tr', null, h('td', { class: 'num' }, `${e.count}×`), h('td', { class: 'num' }, e.total), h('td', null, h('span', { class: 'mono' }, clean(e.name, 200)))))),
        ),
      ),
    );
  }
  if (rv.executions) parts.push(h('details', { id: 'executions' }, h('summary', null, rv.executions.title), viewTable(rv.executions, { titled: false })));
  if (profiles) parts.push(profiles);
  fill(root, parts);
}

/** Device memory profiles (the view's `profiles`): one line each, the latest by Python line, the growth between the first and the last. */
function profilesSection(pv) {
  const wrap = h('div', { id: 'profiles' });
  const parts = [h('h2', null, pv.title.replace(/ \(measured\)$/, ''), label('measured')), h('ul', { class: 'lines', id: 'profile-lines' }, pv.rows.map((line) => h('li', { class: 'mono' }, clean(line, 400))))];
  if (pv.devices) parts.push(h('p', { class: 'mono', id: 'profile-devices' }, clean(pv.devices, 600)));
  if (pv.growth) parts.push(viewTable(pv.growth, { id: 'profile-growth', heading: 'h3' }));
  if (pv.groups) parts.push(viewTable(pv.groups, { id: 'profile-groups', heading: 'h3' }));
  wrap.append(...parts.flat().filter(Boolean));
  return wrap;
}

function renderModules(r, v) {
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
      const pick = h('button', { type: 'button', class: 'link mono', 'data-label': c.text, 'aria-current': isCurrent ? 'true' : null, title: isCurrent ? 'the module this report is about' : 'switch the report to this module' }, clean(c.text, 120));
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

// ---------------------------------------------------------------- comparing two runs
//
// The engine analyzes both runs (each in its own worker where the machine has the
// cores) and compares them; the page lays out the comparison's view
// (src/report/diff_view.rs) as `oomlens diff` prints it, and draws its series.

const FIT_CLASS = { now_fits: 'good', still_fits: 'good', still_does_not_fit: 'bad', no_longer_fits: 'bad' };
const STATUS_WORDS = { resolved: 'Resolved', new: 'New', remaining: 'Remaining' };

function leaveCompare() {
  comparer.cancel();
  state.pair = null;
  state.compared = null;
  $('compare').hidden = true;
}

/** Which of two files dropped together is the run before the change: its name says so, else the older file. */
function guessOrder(a, b) {
  const said = (f, re) => re.test(f.name);
  if (said(a, /after|fix|new/i) && !said(b, /after|fix|new/i)) return [b, a];
  if (said(b, /before|base|old/i) && !said(a, /before|base|old/i)) return [b, a];
  if (said(a, /before|base|old/i) || said(b, /after|fix|new/i)) return [a, b];
  const ta = a.blob.lastModified || 0;
  const tb = b.blob.lastModified || 0;
  return tb < ta ? [b, a] : [a, b];
}

/** Starts comparing two runs, a host file each ({host, name, blob}). */
function startCompare(before, after) {
  analyzer.cancel();
  state.pair = { before, after };
  runCompare();
}

async function runCompare() {
  const pair = state.pair;
  if (!pair) return;
  mark('running');
  status(null);
  runStarted = performance.now();
  const title = `${pair.before.name} → ${pair.after.name}`;
  const latest = {
    before: { phase: 'open', done: 0, total: pair.before.blob.size, read: 0 },
    after: { phase: 'open', done: 0, total: pair.after.blob.size, read: 0 },
  };
  const combined = () => {
    const words = (run) => {
      const p = latest[run];
      const phase = p.phase.startsWith(`${run}: `) ? p.phase.slice(run.length + 2) : p.phase;
      return `${run}: ${PHASES[phase] || phase}`;
    };
    return { phase: `${words('before')} · ${words('after')}`, done: latest.before.done + latest.after.done, total: latest.before.total + latest.after.total, read: latest.before.read + latest.after.read };
  };
  showProgress(title, combined());
  for (const id of ['compare-copy-md', 'compare-download-json']) $(id).disabled = true;
  try {
    const result = await comparer.run(pair.before.blob, pair.after.blob, { before_file_name: pair.before.name, after_file_name: pair.after.name, module: state.compareModule || undefined, top: 20 }, {
      onProgress: (p) => {
        latest[p.run] = p;
        showProgress(title, combined());
      },
    });
    if (state.pair !== pair) return;
    hideProgress();
    state.compared = result;
    renderCompare();
    mark('done');
    const host = result.view.hosts[0];
    reply({ oomlens: 'compared', text: host ? host.headline : '', fit: result.diff.headline ? result.diff.headline.fit : '' });
  } catch (e) {
    if (e instanceof AbortError) return;
    hideProgress();
    state.compared = null;
    $('compare').hidden = true;
    status('error', `${clean(title, 300)}: ${clean(e.message, 2000)}`);
    mark('error');
    reply({ oomlens: 'error', message: e.message, kind: e.kind });
  }
}

function sideBox(side) {
  return [
    h('p', { class: 'side-name' }, side.side === 'before' ? 'Before' : 'After'),
    h('p', { class: 'mono file' }, clean(side.file, 200)),
    h('p', null, h('span', { class: 'muted' }, 'module '), h('span', { class: 'mono' }, clean(side.module || 'none', 200))),
    h('p', { class: 'side-headline' }, clean(side.headline, 400)),
  ];
}

function renderCompare() {
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
  text($('compare-module'), clean(v.module, 300));
  text($('compare-module-reason'), v.module_reason ? `— ${v.module_reason}` : '');
  text($('compare-info'), `compared in ${res.ms < 1000 ? `${res.ms.toFixed(0)} ms` : `${(res.ms / 1000).toFixed(2)} s`} by ${res.version}${res.workers > 1 ? `, both runs at once on ${res.workers} workers` : ''}`);
  $('compare-info').dataset.workers = String(res.workers || 1);
  for (const id of ['compare-copy-md', 'compare-download-json']) $(id).disabled = false;
  state.mounts = {};

  const parts = [];
  const po = v.program_order;
  if (po) {
    const chartBox = h('div', { class: 'chart-box', id: 'compare-chart' });
    const readout = h('p', { class: 'chart-readout', 'aria-live': 'polite' }, 'Point at the chart, or focus it and use the arrow keys: both runs at the same place in their programs.');
    const at = (series, i) => (i >= 0 ? [h('strong', null, mib(series.points[i].bytes)), ' after ', h('span', { class: 'mono' }, clean(series.points[i].instruction, 120) || '—')] : 'no trace');
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
  const rb = v.role_bars;
  if (rb) {
    const barBox = h('div', { class: 'chart-box', id: 'compare-role-bars' });
    mount('compare', barBox, (width) => roleBarsChart({ bars: [rb.before, rb.after], width, roleClass }));
    parts.push(
      h('h2', null, rb.title.replace(/ \(read\)$/, ''), label('read')),
      barBox,
      h('ul', { class: 'legend', id: 'compare-roles-legend' }, rb.before.roles.map((r) => h('li', { 'data-role': r.role }, h('span', { class: `swatch ${roleClass(r.role)}` }), r.words))),
      h('p', { class: 'mono', id: 'compare-role-sentences' }, `before: ${rb.before.sentence}`, h('br'), `after: ${rb.after.sentence}`),
    );
  }
  if (v.roles) parts.push(viewTable(v.roles, { id: 'compare-roles', heading: 'h3' }));
  if (v.plan) parts.push(viewTable(v.plan, { id: 'compare-plan', heading: 'h2' }));
  if (v.buffers) {
    const widths = [null, null, null, 20, 60, 20, 80, 60, 200];
    parts.push(
      viewTable(v.buffers, {
        id: 'compare-buffers',
        heading: 'h2',
        cell: (c, col, i, j) => (col.numeric ? null : h('span', { class: 'mono', title: c.full != null ? clean(c.full, 600) : c.text.length > (widths[j] || 200) ? clean(c.text, 600) : null }, clean(c.text, widths[j] || 200))),
      }),
    );
  }
  if (v.sum) parts.push(h('p', { class: 'note', id: 'compare-sum' }, h('span', { class: 'text' }, clean(v.sum, 600)), label('read')));
  if (v.heap_sum) parts.push(h('p', { class: 'muted', id: 'compare-heap-sum' }, clean(v.heap_sum, 400)));
  if (v.scan_stacks.length) parts.push(h('h3', null, 'Scan stacks', label('read')), h('ul', { id: 'compare-scan-stacks' }, v.scan_stacks.map((st) => h('li', { class: 'mono' }, clean(st, 300)))));
  if (v.runtime) parts.push(viewTable(v.runtime, { id: 'compare-runtime', heading: 'h2' }));
  if (v.in_use_at_starts.length) parts.push(h('ul', { class: 'lines', id: 'compare-in-use' }, v.in_use_at_starts.map((l) => h('li', { class: 'mono' }, clean(l, 600)))));

  parts.push(h('h2', null, 'Diagnosis lines'));
  if (v.diagnosis_not_compared) parts.push(h('p', { class: 'muted', id: 'compare-lines-not-compared' }, v.diagnosis_not_compared));
  else if (!v.diagnosis.length) parts.push(h('p', { class: 'muted' }, 'No diagnosis line in either run.'));
  for (const st of ['resolved', 'new', 'remaining']) {
    const lines = v.diagnosis.filter((l) => l.status === st);
    if (!lines.length) continue;
    parts.push(
      h('h3', null, STATUS_WORDS[st]),
      h('ul', { class: `lines status-${st}`, id: `compare-${st}` }, lines.map((l) => h('li', { 'data-id': l.id, 'data-status': st }, h('span', { class: 'title' }, l.title), ' ', h('span', { class: 'id' }, `(${l.id})`)))),
    );
  }
  if (v.savings.length) {
    parts.push(
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
    );
  }
  const notes = [...(v.notes || []).map((n) => ({ id: n.id, text: n.text })), ...(res.view.hosts_only || []).map((t) => ({ id: 'hosts_only', text: t }))];
  if (notes.length) parts.push(h('h2', null, 'Notes'), h('ul', { class: 'notes', id: 'compare-notes' }, notes.map((n) => h('li', { 'data-id': n.id }, h('span', { class: 'text' }, clean(n.text, 3000))))));
  fill($('compare-content'), parts);
  for (const draw of state.mounts.compare || []) draw();
  document.title = `${clean(v.headline, 120)} — oomlens`;
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
    for (const draw of state.mounts[$('compare').hidden ? state.tab : 'compare'] || []) draw();
  }, 150);
});

// ---------------------------------------------------------------- controls

$('open-file').addEventListener('click', () => $('file-input').click());
$('open-folder').addEventListener('click', () => $('folder-input').click());
$('file-input').addEventListener('change', (e) => {
  const files = [...e.target.files].map((file) => ({ path: file.name, file }));
  e.target.value = '';
  if (files.length) route(files);
});
$('folder-input').addEventListener('change', (e) => {
  const files = [...e.target.files].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
  e.target.value = '';
  if (files.length) route(files);
});
$('paste-go').addEventListener('click', () => {
  const pasted = $('paste-text').value.slice(0, 1 << 20);
  if (!pasted.trim()) {
    status('error', 'Paste the error message (or the log around it) first.');
    return;
  }
  state.errorText = pasted;
  $('error-text').value = pasted;
  loadInputs([]);
});
$('try-sample').addEventListener('click', loadSample);
$('cancel').addEventListener('click', () => {
  analyzer.cancel();
  comparer.cancel();
  pool.cancel();
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
$('show-hosts').addEventListener('click', () => showSummary());
$('hosts-copy-md').addEventListener('click', () => copyMarkdown(state.summary && state.summary.markdown, 'The summary of the hosts is on the clipboard as Markdown.'));
$('hosts-download-json').addEventListener('click', () => {
  const res = state.summary;
  if (!res) return;
  download({ tool: res.version, hosts_summary: res.hosts_summary }, 'hosts.oomlens-summary.json');
});
$('error-apply').addEventListener('click', () => {
  state.errorText = $('error-text').value.slice(0, 1 << 20);
  // A folder's rows carry the pasted error as evidence: its summary is made again when next shown.
  state.summary = null;
  if (state.files.length || state.inputs) run();
});
$('error-clear').addEventListener('click', () => {
  $('error-text').value = '';
  if (state.errorText) {
    state.errorText = '';
    state.summary = null;
    if (state.files.length || (state.inputs && state.inputs.length)) run();
  }
});
async function copyMarkdown(md, done) {
  if (!md) return;
  try {
    await navigator.clipboard.writeText(md);
    status('notice', done);
  } catch {
    const area = h('textarea', { class: 'sr-only', readonly: true });
    area.value = md;
    document.body.append(area);
    area.select();
    const ok = document.execCommand && document.execCommand('copy');
    area.remove();
    status(ok ? 'notice' : 'error', ok ? done : 'The clipboard is not available here.');
  }
}

function download(value, name) {
  const blob = new Blob([`${JSON.stringify(value, null, 2)}\n`], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
}

$('copy-md').addEventListener('click', () => copyMarkdown(state.result && state.result.markdown, 'The report is on the clipboard as Markdown.'));
$('compare-with').addEventListener('click', () => $('compare-input').click());
$('compare-input').addEventListener('change', (e) => {
  state.compareModule = null;
  const file = e.target.files[0];
  e.target.value = '';
  const current = state.files[state.hostIndex];
  if (!file || !current) return;
  startCompare(current, { host: hostOf(file.name), name: file.name, blob: file });
});
$('swap').addEventListener('click', () => {
  const pair = state.pair;
  if (!pair) return;
  startCompare(pair.after, pair.before);
});
for (const run of ['before', 'after']) {
  $(`show-${run}`).addEventListener('click', () => {
    const pair = state.pair;
    if (pair) load([pair[run]]);
  });
}
$('compare-copy-md').addEventListener('click', () => copyMarkdown(state.compared && state.compared.markdown, 'The comparison is on the clipboard as Markdown.'));
$('compare-download-json').addEventListener('click', () => {
  const d = state.compared && state.compared.diff;
  if (!d) return;
  const v = state.compared.view.hosts[0];
  const name = v ? `${v.before.host}-vs-${v.after.host}` : 'comparison';
  download(d, `${name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100)}.oomlens-diff.json`);
});
$('download-json').addEventListener('click', () => {
  const r = state.result && state.result.report;
  if (!r) return;
  download(r, `${(r.host || 'report').replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100)}.oomlens.json`);
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
    // Two captures dropped together (not a folder's hosts) are two runs to compare.
    route(await fromDataTransfer(e.dataTransfer));
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
  if ('before' in body || 'after' in body) {
    // Two runs to compare: {before: {buffer, title}, after: {buffer, title}, module}.
    const side = (x, fallback) => {
      const data = x && typeof x === 'object' && !(x instanceof Blob) && !(x instanceof ArrayBuffer) && !ArrayBuffer.isView(x) ? x.buffer : x;
      if (!(data instanceof ArrayBuffer || ArrayBuffer.isView(data) || data instanceof Blob)) return null;
      const title = x && typeof x.title === 'string' && x.title ? x.title.slice(0, 300) : fallback;
      return { host: hostOf(title), name: title, blob: data instanceof Blob ? data : new Blob([data]) };
    };
    const before = side(body.before, 'before.xplane.pb');
    const after = side(body.after, 'after.xplane.pb');
    if (!before || !after) {
      answer({ oomlens: 'error', message: 'expected {oomlens: {before: {buffer: ArrayBuffer, title}, after: {buffer: ArrayBuffer, title}}}' });
      return;
    }
    state.replyTo = { source: e.source, origin: e.origin };
    state.compareModule = typeof body.module === 'string' && body.module ? body.module.slice(0, 1000) : null;
    answer({ oomlens: 'received', before: { title: before.name, bytes: before.blob.size }, after: { title: after.name, bytes: after.blob.size } });
    startCompare(before, after);
    return;
  }
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
