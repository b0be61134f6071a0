// The report of one host (or of joined inputs): its summary — the verdict and its
// figures, the module, file and engine lines — and the tabs that hold the other views.
//
// Everything shown as text comes from the view (`state.result.view`, src/report/view.rs):
// titles, row names, figures as the CLI prints them, list sizes, sentences. The report
// model (`state.result.report`) is read only for the charts' geometry (timelines, byte
// counts), the module picker's labels and the JSON download.

import { h, fill, text } from '../dom.js';
import { clean } from '../format.js';
import { $, state, writeHash, took, TABS } from '../state.js';
import { label, setLabelMeanings } from './common.js';
import { renderDiagnosis } from './diagnosis.js';
import { renderPlan } from './plan.js';
import { renderRuntime } from './runtime.js';
import { renderModules } from './modules.js';

const VERDICT_CLASS = { does_not_fit: 'bad', ran_out: 'bad', leak: 'warn', fits: 'good' };

function current() {
  const res = state.result;
  if (!res || !res.view) return {};
  const r = res.report;
  const v = res.view;
  const module = r && r.selected_module ? (r.modules || []).find((m) => m.label === r.selected_module) : null;
  return { r, v, module };
}

export function render() {
  const { r, v, module } = current();
  if (!v) return;
  setLabelMeanings(v.labels);
  $('drop').classList.add('compact');
  text($('drop-title'), 'Drop another capture anywhere on this page');
  $('report').hidden = false;
  // The landing page's paste box folds away: the report starts near the top.
  $('paste').open = false;
  renderHeadline(v.headline);
  // A report about no module (the message alone) has no module line.
  $('module-line').hidden = v.module.label == null;
  text($('module-name'), v.module.label != null ? clean(v.module.label, 200) : '');
  text($('module-reason'), v.module.reason ? `— ${clean(v.module.reason, 300)}` : '');
  fill($('module-runs'), v.module.executions != null ? [`executions in the capture: ${v.module.executions}`, label('measured')] : []);
  $('change-module').hidden = !v.modules;
  text($('file-name'), clean(v.file, 200));
  text($('file-size'), v.size);
  const inputs = v.inputs || [];
  fill($('inputs-line'), inputs.length ? ['inputs: ', inputs.map((line, i) => [i ? ' · ' : '', h('span', { class: 'text' }, clean(line, 300))])] : []);
  $('inputs-line').hidden = !inputs.length;
  const res = state.result;
  text($('engine-info'), `analyzed in ${took(res.ms)} by ${res.version}${res.workers > 1 ? ` on ${res.workers} workers` : ''}`);
  $('engine-info').dataset.workers = String(res.workers || 1);
  $('engine-info').dataset.memory = String(res.memoryBytes || 0);
  $('engine-info').dataset.phases = JSON.stringify(res.phases || []);
  $('engine-info').dataset.readAhead = JSON.stringify(res.readAhead || null);
  $('engine-info').title = (res.phases || []).map(([name, ms]) => `${name}: ${(ms / 1000).toFixed(2)} s`).join(', ');
  text($('version'), res.version);
  for (const id of ['copy-md', 'download-json']) $(id).disabled = false;
  state.mounts = {};
  renderDiagnosis(v);
  renderPlan(r, v, module);
  renderRuntime(r, v);
  renderModules(r, v);
  showOnlyTabsWithContent(v);
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
  $('headline-note').hidden = !hl.note;
  text($('headline-note'), hl.note ? clean(hl.note, 600) : '');
}


/**
 * Without a capture or a dump (the message alone, or with profiles), the plan, runtime
 * and modules tabs would be empty: they are hidden, and one line says why. With only
 * the diagnosis left, there are no tabs.
 */
function showOnlyTabsWithContent(v) {
  const noCapture = !v.plan && !v.runtime && !v.modules;
  const hidden = { plan: noCapture, runtime: noCapture && !v.profiles, modules: noCapture };
  for (const t of TABS) $(`tab-${t}`).hidden = !!hidden[t];
  const gone = TABS.filter((t) => hidden[t]);
  $('tabs').hidden = gone.length === TABS.length - 1;
  const names = gone.map((t) => ({ plan: 'compiled plan', runtime: 'runtime events', modules: 'module list' })[t]);
  const list = names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}` : names[0];
  $('tabs-why').hidden = !gone.length;
  text($('tabs-why'), gone.length ? `No ${list} here: they come from a profiler capture (or an XLA dump, for the plan). Drop one, with the error or alone, to see them.` : '');
}

/** The tabs shown, in order. */
export function shownTabs() {
  return TABS.filter((t) => !$(`tab-${t}`).hidden);
}

/** Shows one tab of the report (drawing its charts at their width), and keeps it in the URL. */
export function showTab(tab, focus) {
  if (!TABS.includes(tab) || $(`tab-${tab}`).hidden) tab = 'diagnosis';
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

