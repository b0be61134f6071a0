// The page's shared state: what is loaded and shown, the engine's workers, and the
// small pieces of chrome every part of the page writes to (the status line, the
// progress bar, the URL hash, the `data-state` marks tests and embedders wait on).

import { Analyzer, Comparer, HostPool } from './analyze.js';
import { h, fill, text } from './dom.js';
import { clean } from './format.js';

export const $ = (id) => document.getElementById(id);
export const analyzer = new Analyzer();
export const comparer = new Comparer();
export const pool = new HostPool();
export const SUFFIX = '.xplane.pb';
export const TABS = ['diagnosis', 'plan', 'runtime', 'modules'];

export const state = {
  files: [], // [{host, name, blob}]
  inputs: null, // [{name, blob}]: inputs joined by the engine (error text, logs, dump files, profiles, captures); [] with pasted text alone
  hostIndex: 0,
  module: null, // label chosen by the user; null: the engine's choice
  tab: 'diagnosis',
  errorText: '',
  result: null, // {report, view, markdown, ms, memoryBytes, version}
  replyTo: null, // {source, origin} of a postMessage that sent the capture
  allocator: null, // the allocator the user picked for the runtime chart (null: the default); kept while the same files are re-analyzed
  notice: null, // a message to show with the next report
  mounts: {}, // panel → [render(width)] for charts, run when the panel is shown
  pair: null, // {before: {host, name, blob}, after: {…}}: two runs compared
  compareModule: null, // the module asked for when comparing (embedders), else the engine's choice
  compared: null, // {diff, view, markdown, ms, workers, version} of the pair
  summary: null, // {hosts_summary, view, markdown, ms, workers, version} of a folder's hosts
  showing: 'host', // 'summary' (a folder's hosts) or 'host' (one host's report)
};

export function hostOf(name) {
  return name.endsWith(SUFFIX) ? name.slice(0, -SUFFIX.length) : name;
}

// ---------------------------------------------------------------- URL hash

export function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  return { host: p.get('host'), module: p.get('module'), tab: p.get('tab') };
}

export function writeHash() {
  const p = new URLSearchParams();
  const f = state.files[state.hostIndex];
  if (f && state.files.length > 1 && state.showing === 'host') p.set('host', f.host);
  if (state.module) p.set('module', state.module);
  if (state.tab !== 'diagnosis') p.set('tab', state.tab);
  const hash = p.toString();
  const url = `${location.pathname}${location.search}${hash ? `#${hash}` : ''}`;
  if (url !== `${location.pathname}${location.search}${location.hash}`) history.replaceState(null, '', url);
}

// ---------------------------------------------------------------- status, progress, marks

export function status(kind, message) {
  const el = $('status');
  if (!message) return fill(el);
  fill(el, h('p', { class: kind }, message));
}

export const PHASES = {
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

let progressFrame = 0;
let progressInfo = null;
let runStarted = 0;

/** Starts the clock the progress line's MB/s is measured on. */
export function startClock() {
  runStarted = performance.now();
}

export function showProgress(name, info) {
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

export function hideProgress() {
  if (progressFrame) cancelAnimationFrame(progressFrame);
  progressFrame = 0;
  $('progress').hidden = true;
}

let finished = 0;

/** `data-state` on <html> (running, done, error) and `data-runs`, for tests and embedders. */
export function mark(phase) {
  const root = document.documentElement;
  root.dataset.state = phase;
  if (phase !== 'running') root.dataset.runs = String(++finished);
}

/** Answers the embedder that sent the capture, if one did. */
export function reply(message) {
  const to = state.replyTo;
  if (!to || !to.source) return;
  try {
    to.source.postMessage(message, to.origin && to.origin !== 'null' ? to.origin : '*');
  } catch {
    // the embedder went away
  }
}

/** `analyzed in 840 ms` / `in 2.10 s`: how long the engine took. */
export function took(ms) {
  return ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
