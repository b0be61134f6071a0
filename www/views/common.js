// What the views share: the measured/read/estimated label, the view's tables and
// definition lists, and charts mounted into a panel (drawn at the panel's width when it
// is shown). Strings from a capture go in as text only, after `clean()`.

import { h, fill } from '../dom.js';
import { clean } from '../format.js';
import { state } from '../state.js';
import { settleLabels } from '../charts.js';

// What each label means, from the view (its tooltip).
let labelMeanings = {};

/** Takes the labels' meanings from a view (`view.labels`). */
export function setLabelMeanings(labels) {
  labelMeanings = Object.fromEntries((labels || []).map((l) => [l.label, l.meaning]));
}

export function label(kind) {
  const k = kind === 'measured' || kind === 'read' || kind === 'estimated' ? kind : 'estimated';
  return h('span', { class: `label ${k}`, title: labelMeanings[k] || null }, k);
}

/** A definition list of the view's rows ({name, value, note}); `extra` adds nodes to a row's value. */
export function dl(rows, max = 2000) {
  return h(
    'dl',
    null,
    rows.filter(Boolean).map((r) => [h('dt', null, r.name), h('dd', null, h('span', { class: 'text' }, clean(r.value, max)), r.note ? h('span', { class: 'muted' }, ` (${clean(r.note, 400)})`) : null, r.extra || null)]),
  );
}

/**
 * A capture's token in a table — a name, shape, source or op name — kept on one line:
 * CSS cuts it with an ellipsis where its column is too narrow, and `fitTokens` then
 * gives it the full text as its tooltip and makes it focusable (CSS shows `data-full`
 * on focus). `full` is the engine's whole text when the view shortened it. A button
 * (`tag`) keeps its own tooltip (`title`) while it shows whole.
 */
export function token(shown, full, { tag = 'span', title = null, ...attrs } = {}) {
  const cls = `mono cut${attrs.class ? ` ${attrs.class}` : ''}`;
  return h(tag, { ...attrs, class: cls, title, 'data-title': title, 'data-full': full != null ? full : shown }, shown);
}

/** Prose in a table cell: it wraps between words, never inside one. */
export function words(sentence) {
  return sentence.split(/( +)/).map((w) => (w.trim() ? h('span', { class: 'word' }, w) : w));
}

/**
 * Tokens that do not show whole (cut by CSS, or shortened by the engine) get their full
 * text on hover and focus; the others lose both. All sizes are read before any
 * attribute is written, so a table is laid out once.
 */
function fitTokens(root) {
  const tokens = [...root.querySelectorAll('.cut')];
  const cut = tokens.map((el) => el.scrollWidth > el.clientWidth + 1 || el.dataset.full !== el.textContent);
  tokens.forEach((el, i) => {
    const own = el.dataset.title;
    if (cut[i]) el.setAttribute('title', own ? `${el.dataset.full} — ${own}` : el.dataset.full);
    else if (own) el.setAttribute('title', own);
    else el.removeAttribute('title');
    if (el.tagName === 'BUTTON') return; // focusable already
    if (cut[i]) el.setAttribute('tabindex', '0');
    else el.removeAttribute('tabindex');
  });
}

/**
 * A table in a box that scrolls sideways inside the page: `data-more` on the box says
 * on which sides columns are hidden, and CSS shades those edges. Tokens are fitted and
 * the shades set whenever the table is laid out (shown, resized, scrolled).
 */
export function scroller(table) {
  const scroll = h('div', { class: 'table-scroll' }, table);
  const wrap = h('div', { class: 'table-wrap' }, scroll);
  const shade = () => {
    const left = scroll.scrollLeft > 1;
    const right = scroll.scrollLeft + scroll.clientWidth < scroll.scrollWidth - 1;
    wrap.dataset.more = [left ? 'left' : '', right ? 'right' : ''].join(' ').trim();
    // A box that scrolls is reachable from the keyboard (arrow keys scroll it).
    if (left || right) scroll.setAttribute('tabindex', '0');
    else scroll.removeAttribute('tabindex');
  };
  scroll.addEventListener('scroll', shade, { passive: true });
  const observer = new ResizeObserver(() => {
    if (!scroll.clientWidth) return; // hidden: nothing is laid out
    fitTokens(table);
    shade();
  });
  observer.observe(table);
  observer.observe(scroll);
  return wrap;
}

/**
 * A table of the view ({title, label, columns, rows of {text, full}, more, marks}):
 * numbers right-aligned in tabular figures, every other cell a token (`token`).
 * `cell(c, col, i, j)` may give a cell's content instead.
 */
export function viewTable(t, { id, cell, rowAttrs, heading = 'h3', titled = true } = {}) {
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
        return h('td', { class: col.numeric ? 'num' : null }, content != null ? content : col.numeric ? c.text : token(clean(c.text, 200), c.full != null ? clean(c.full, 600) : null));
      }),
    );
  });
  return [
    titled ? h(heading, null, t.title) : null,
    scroller(
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

/**
 * Draws a chart into `container` at its width when `panel` is shown (and again when the
 * width changes); its floating labels are then placed, measured where they are drawn.
 */
export function mount(panel, container, draw) {
  (state.mounts[panel] = state.mounts[panel] || []).push(() => {
    const width = Math.max(320, Math.floor(container.clientWidth || 900));
    if (container.dataset.width === String(width)) return;
    container.dataset.width = String(width);
    fill(container, draw(width));
    for (const svg of container.querySelectorAll('svg.chart')) settleLabels(svg);
  });
}

export const ROLES = ['forward', 'backward', 'workspace', 'other'];
export const roleClass = (role) => `role-${ROLES.includes(role) ? role : 'other'}`;
