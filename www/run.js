// Runs of the engine: one capture (or a set of joined inputs), a folder's hosts on a
// pool of workers, or two runs compared. Each run ends in a view's render, or in an
// error on the status line; a newer run cancels the one before it.

import { AbortError } from './analyze.js';
import { text } from './dom.js';
import { clean } from './format.js';
import { $, analyzer, comparer, pool, state, status, showProgress, hideProgress, startClock, mark, reply, readHash, PHASES } from './state.js';
import { render } from './views/summary.js';
import { renderSummary, renderHostPicker } from './views/hosts.js';
import { renderCompare } from './views/compare.js';

/** Starts analyzing a new set of host files (one capture, or a run folder's hosts). */
export function load(files, { fromLink = false, module } = {}) {
  if (!files.length) {
    status('error', 'Nothing oomlens reads there. Drop the *.xplane.pb file that jax.profiler.trace(...) wrote (or the capture folder that holds plugins/profile/<run>/), the error message or log (.txt, .log), an XLA dump folder, or device memory profiles (.prof).');
    return;
  }
  files.sort((a, b) => (a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
  state.files = files;
  state.inputs = null;
  state.allocator = null;
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
 * Inputs other than captures, joined by the engine (which tells them apart by content):
 * pasted text alone (`[]`), or files — error messages and logs, XLA dump files, device
 * memory profiles, and the captures beside them.
 */
export function loadInputs(list) {
  state.files = [];
  state.inputs = list;
  state.allocator = null;
  state.hostIndex = 0;
  state.module = null;
  state.summary = null;
  state.replyTo = null;
  state.showing = 'host';
  renderHostPicker();
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
  startClock();
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
export function showSummary() {
  state.showing = 'summary';
  if (!state.summary) {
    runFolder();
    return;
  }
  analyzer.cancel();
  hideProgress();
  renderSummary();
}

/** What a set of joined inputs is called on the page. */
export function inputsName(inputs) {
  if (!inputs.length) return 'the pasted error';
  return inputs.length === 1 ? inputs[0].name : `${inputs[0].name} and ${inputs.length - 1} more`;
}

/** Analyzes the current host file (or the joined inputs) and renders its report. */
export async function run() {
  const inputs = state.inputs;
  const f = inputs ? { name: inputsName(inputs), blob: { size: inputs.reduce((a, x) => a + x.blob.size, 0) } } : state.files[state.hostIndex];
  if (!f) return;
  leaveCompare();
  pool.cancel();
  state.showing = 'host';
  $('hosts').hidden = true;
  mark('running');
  status(null);
  startClock();
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

// ---------------------------------------------------------------- comparing two runs
//
// The engine analyzes both runs (each in its own worker where the machine has the
// cores) and compares them; views/compare.js lays out the comparison's view.

export function leaveCompare() {
  comparer.cancel();
  state.pair = null;
  state.compared = null;
  $('compare').hidden = true;
}

/** Which of two files dropped together is the run before the change: its name says so, else the older file. */
export function guessOrder(a, b) {
  const said = (f, re) => re.test(f.run ? `${f.run}/${f.name}` : f.name);
  if (said(a, /after|fix|new/i) && !said(b, /after|fix|new/i)) return [b, a];
  if (said(b, /before|base|old/i) && !said(a, /before|base|old/i)) return [b, a];
  if (said(a, /before|base|old/i) || said(b, /after|fix|new/i)) return [a, b];
  const ta = a.blob.lastModified || 0;
  const tb = b.blob.lastModified || 0;
  if (ta === tb) {
    // Run folders named in order (run_a, run_b; step1, step2): the first is before.
    const key = (f) => (f.run ? `${f.run}/${f.name}` : f.name);
    return key(b).localeCompare(key(a), 'en', { numeric: true }) < 0 ? [b, a] : [a, b];
  }
  return tb < ta ? [b, a] : [a, b];
}

/**
 * Starts comparing two runs: each a host file ({host, name, blob}) or inputs joined by
 * the engine ({name, inputs: [{name, blob}], errorText}: a pasted error alone has no
 * inputs); `run` on either names its run folder, when known.
 */
export function startCompare(before, after) {
  analyzer.cancel();
  state.pair = { before, after };
  runCompare();
}

async function runCompare() {
  const pair = state.pair;
  if (!pair) return;
  mark('running');
  status(null);
  startClock();
  const title = `${pair.before.name} → ${pair.after.name}`;
  const sizeOf = (side) => (side.inputs ? side.inputs.reduce((a, x) => a + x.blob.size, 0) : side.blob.size);
  const payload = (side) => (side.inputs ? { files: side.inputs, error_text: side.errorText || '' } : side.blob);
  const latest = {
    before: { phase: 'open', done: 0, total: sizeOf(pair.before), read: 0 },
    after: { phase: 'open', done: 0, total: sizeOf(pair.after), read: 0 },
  };
  const combined = () => {
    const words = (side) => {
      const p = latest[side];
      const phase = p.phase.startsWith(`${side}: `) ? p.phase.slice(side.length + 2) : p.phase;
      return `${side}: ${PHASES[phase] || phase}`;
    };
    return { phase: `${words('before')} · ${words('after')}`, done: latest.before.done + latest.after.done, total: latest.before.total + latest.after.total, read: latest.before.read + latest.after.read };
  };
  showProgress(title, combined());
  for (const id of ['compare-copy-md', 'compare-download-json']) $(id).disabled = true;
  try {
    const options = { before_file_name: pair.before.name, after_file_name: pair.after.name, before_run: pair.before.run, after_run: pair.after.run, module: state.compareModule || undefined, top: 20 };
    const result = await comparer.run(payload(pair.before), payload(pair.after), options, {
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
