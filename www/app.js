// The oomlens page: the app shell. It wires the page's controls, tabs, drag and drop,
// the URL hash and the embedding protocol to the runs of the engine (run.js), which
// render the views (views/*.js) of the report the worker returns (src/report/view.rs):
// every title, word and figure shown as text is the view's, as the CLI prints it. The
// report model's numbers only draw the charts; the page computes no figure and words
// no finding.
//
// Strings from a capture are untrusted: they go into the page only as text nodes or
// attribute values (dom.js), after `clean()` for control and bidi characters.

import { h } from './dom.js';
import { clean } from './format.js';
import { $, analyzer, comparer, pool, state, status, hideProgress, readHash, hostOf, SUFFIX, TABS } from './state.js';
import { inputsName, load, loadInputs, run, showSummary, startCompare } from './run.js';
import { route, fromDataTransfer, loadUrl, loadSample, onMessage } from './load.js';
import { showTab, shownTabs } from './views/summary.js';

// ---------------------------------------------------------------- URL hash

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

// ---------------------------------------------------------------- tabs

for (const t of TABS) {
  const button = $(`tab-${t}`);
  button.addEventListener('click', () => showTab(t, false));
  button.addEventListener('keydown', (e) => {
    const tabs = shownTabs();
    const i = tabs.indexOf(t);
    let next = null;
    if (e.key === 'ArrowRight') next = tabs[(i + 1) % tabs.length];
    else if (e.key === 'ArrowLeft') next = tabs[(i + tabs.length - 1) % tabs.length];
    else if (e.key === 'Home') next = tabs[0];
    else if (e.key === 'End') next = tabs[tabs.length - 1];
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
$('try-sample').addEventListener('click', () => loadSample());
$('try-sample-fits').addEventListener('click', () => loadSample({ fits: true }));
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
// "Compare with…": the report shown is the run before; the run after is a file (a
// capture, a log or an error message) or a pasted error. Any two reports compare.

/** The report shown, as one side of a comparison (null: none). */
function currentSide() {
  if (state.inputs) return { name: inputsName(state.inputs), inputs: state.inputs, errorText: state.errorText };
  const f = state.files[state.hostIndex];
  return f ? { host: f.host, name: f.name, blob: f.blob, run: f.run } : null;
}

function compareCurrentWith(after) {
  state.compareModule = null;
  const before = currentSide();
  if (!before) {
    status('error', 'Nothing to compare with: open a capture or paste an error first; it is the run before.');
    return;
  }
  $('compare-pick').hidden = true;
  $('compare-with').setAttribute('aria-expanded', 'false');
  startCompare(before, after);
}

$('compare-with').addEventListener('click', () => {
  const pick = $('compare-pick');
  pick.hidden = !pick.hidden;
  $('compare-with').setAttribute('aria-expanded', String(!pick.hidden));
  if (!pick.hidden) $('compare-choose').focus();
});
$('compare-pick-close').addEventListener('click', () => {
  $('compare-pick').hidden = true;
  $('compare-with').setAttribute('aria-expanded', 'false');
});
$('compare-choose').addEventListener('click', () => $('compare-input').click());
$('compare-input').addEventListener('change', (e) => {
  const file = e.target.files[0];
  e.target.value = '';
  if (!file) {
    status('notice', 'No file chosen: nothing compared.');
    return;
  }
  const after = file.name.endsWith(SUFFIX) ? { host: hostOf(file.name), name: file.name, blob: file } : { name: file.name, inputs: [{ name: file.name, blob: file }], errorText: '' };
  compareCurrentWith(after);
});
$('compare-paste-go').addEventListener('click', () => {
  const pasted = $('compare-text').value.slice(0, 1 << 20);
  if (!pasted.trim()) {
    status('error', "Paste the other run's error message first.");
    return;
  }
  compareCurrentWith({ name: 'the pasted error', inputs: [], errorText: pasted });
});
$('swap').addEventListener('click', () => {
  const pair = state.pair;
  if (!pair) return;
  startCompare(pair.after, pair.before);
});
for (const side of ['before', 'after']) {
  $(`show-${side}`).addEventListener('click', () => {
    const pair = state.pair;
    if (!pair) return;
    const run = pair[side];
    if (run.inputs) {
      state.errorText = run.errorText || '';
      $('error-text').value = state.errorText;
      loadInputs(run.inputs);
    } else {
      load([run]);
    }
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

window.addEventListener('message', onMessage);

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
