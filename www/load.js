// Where captures come from: a drop or a picker (files and folders, routed to one
// analysis, a folder's hosts, a comparison, or inputs joined by the engine), the
// sample, a `?url=` link, and an embedder's postMessage.

import { clean } from './format.js';
import { $, state, status, showProgress, hideProgress, startClock, mark, hostOf, SUFFIX } from './state.js';
import { load, loadInputs, startCompare, guessOrder } from './run.js';


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
export function route(entries) {
  const isLoose = (e) => !e.path.replace(/^\//, '').includes('/');
  const loose = entries.filter(isLoose);
  const inFolders = entries.filter((e) => !isLoose(e));
  // Two run folders dropped or picked together (or a folder holding just those two), a
  // capture each: two runs to compare, each named by the nearest folder that tells them
  // apart (their files often share a name). A log dir's runs (plugins/profile/<run>/)
  // are not that: its newest run is analyzed, as the CLI does.
  const dirs = inFolders.map((e) => e.path.replace(/^\//, '').split('/').slice(0, -1));
  let common = 0;
  while (dirs.length && dirs.every((d) => d.length > common + 1 && d[common] === dirs[0][common])) common++;
  const top = (e) => e.path.replace(/^\//, '').split('/')[common];
  const tops = [...new Set(inFolders.map(top))];
  const logDir = common >= 2 && dirs[0][common - 2] === 'plugins' && dirs[0][common - 1] === 'profile';
  if (!loose.length && tops.length === 2 && !logDir) {
    const runs = tops.map((t) => capturesIn(inFolders.filter((e) => top(e) === t)));
    const extras = inFolders.filter((e) => isExtraInput(e.file.name));
    if (!extras.length && runs.every((r) => r.length === 1)) {
      const [a, b] = runs.map((r) => r[0]);
      const [ra, rb] = runNames(a.path, b.path);
      const side = (e, run) => ({ host: hostOf(e.file.name), name: e.file.name, blob: e.file, run });
      const [before, after] = guessOrder(side(a, ra), side(b, rb));
      state.replyTo = null;
      state.compareModule = null;
      startCompare(before, after);
      return;
    }
  }
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

/**
 * What tells two runs apart, from their files' paths: the nearest folder above each
 * whose names differ (as `oomlens diff` names them); none when the paths say nothing.
 */
export function runNames(a, b) {
  const folders = (p) => p.replace(/^\//, '').split('/').slice(0, -1).reverse();
  const [x, y] = [folders(a), folders(b)];
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return [x[i], y[i]];
  return [undefined, undefined];
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

export async function fromDataTransfer(dt) {
  const items = dt.items ? [...dt.items].filter((i) => i.kind === 'file') : [];
  const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null));
  if (entries.length && entries.every(Boolean)) {
    const out = [];
    for (const e of entries) await walk(e, out);
    return out;
  }
  return [...dt.files].map((file) => ({ path: file.name, file }));
}

export async function loadUrl(url) {
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
  startClock();
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

/**
 * The samples bundled with the page: a real out-of-memory failure recorded on the CPU
 * (tests/fixtures/oom_top_scores: its capture and the error message it raised), and a
 * training step's capture that fits (`fits`).
 */
export async function loadSample({ fits = false } = {}) {
  const name = fits ? 'sample-fits.xplane.pb' : 'sample.xplane.pb';
  startClock();
  showProgress(name, { phase: 'download', done: 0, total: 0, read: 0 });
  try {
    const get = async (file) => {
      const response = await fetch(file);
      if (!response.ok) throw new Error(`${file}: ${response.status} ${response.statusText}`);
      return response;
    };
    const blob = await (await get(name)).blob();
    // The failure's sample comes with the error it raised, as pasted beside the capture.
    state.errorText = fits ? '' : (await (await get('sample.error.txt')).text()).slice(0, 1 << 20);
    $('error-text').value = state.errorText;
    load([{ host: fits ? 'sample-fits' : 'sample', name, blob }]);
  } catch (e) {
    hideProgress();
    mark('error');
    status('error', `The sample could not be loaded: ${clean(e.message || String(e), 300)}`);
  }
}

// ---------------------------------------------------------------- embedding (postMessage)

/** A message from an embedder: ping, one capture to analyze, or two runs to compare. */
export function onMessage(e) {
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
}
