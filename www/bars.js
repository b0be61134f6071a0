// Bar charts (hand-drawn SVG): the buffers live at the peak and the live groups, the
// heap by role (one run, or two runs on one scale), an error message's allocations
// with their padding shaded, and the TensorCore/SparseCore split. Lengths come from the
// report model, the words beside them from the view.

import { s } from './dom.js';
import { clean, tick } from './format.js';
import { frame, fit, keyboardCursor } from './charts.js';

/**
 * Horizontal bars, one per item, largest first as given; `shown` is the figure written
 * beside a bar (the view's), `bytes` its length.
 * @param {{items: {label:string, bytes:number, shown?:string, cls?:string}[], width:number,
 *          labelWidth?:number, onFocus?:(i:number)=>void, name:string}} o
 */
export function barsChart(o) {
  const { items, width } = o;
  const row = 22;
  const labelWidth = o.labelWidth || Math.min(300, Math.round(width * 0.36));
  const valueWidth = 84;
  const m = { top: 4, bottom: 4 };
  const height = m.top + m.bottom + row * items.length;
  const plotW = Math.max(40, width - labelWidth - valueWidth - 12);
  const max = items.reduce((a, it) => Math.max(a, it.bytes), 0) || 1;
  const svg = frame(width, height, `${o.name}: ${items.length} bars. Use the arrow keys to go through them.`);
  const rects = [];
  const chars = Math.max(8, Math.floor((labelWidth - 12) / 6.4));
  items.forEach((it, i) => {
    const yy = m.top + i * row;
    const w = Math.max(1.5, (it.bytes / max) * plotW);
    const g = s('g', { class: 'bar-row' });
    g.append(s('text', { class: 'bar-label', x: labelWidth - 8, y: yy + 15, 'text-anchor': 'end' }, fit(it.label, chars)));
    const rect = s('rect', { class: `bar ${it.cls || 'origin'}`, x: labelWidth, y: yy + 3, width: w.toFixed(1), height: row - 6, rx: 2 }, s('title', null, clean(it.label, 400)));
    g.append(rect);
    g.append(s('text', { x: labelWidth + w + 6, y: yy + 15 }, it.shown != null ? it.shown : tick(it.bytes)));
    svg.append(g);
    rects.push(rect);
    if (o.onFocus) {
      rect.addEventListener('pointerenter', () => select(i));
      g.addEventListener('click', () => select(i));
    }
  });
  let cur = -1;
  const select = (i) => {
    if (cur >= 0 && rects[cur]) rects[cur].classList.remove('active');
    cur = i;
    rects[i].classList.add('active');
    if (o.onFocus) o.onFocus(i);
  };
  if (o.onFocus) keyboardCursor(svg, items.length, () => cur, select);
  svg.select = select;
  return svg;
}

/**
 * The heap at its peak by role in two runs: one stacked bar per run, on one scale (the
 * larger heap spans the width), each labelled with its total (the view's figures).
 * @param {{bars: {side:string, bytes:number, shown:string, sentence:string,
 *          roles: {role:string, words:string, bytes:number, shown:string}[]}[], width:number,
 *          roleClass:(role:string)=>string}} o
 */
export function roleBarsChart(o) {
  const { bars, width } = o;
  const labelWidth = 60;
  const valueWidth = 84;
  const row = 30;
  const height = row * bars.length + 4;
  const plotW = Math.max(40, width - labelWidth - valueWidth - 12);
  const max = bars.reduce((a, b) => Math.max(a, b.bytes), 0) || 1;
  const svg = frame(width, height, `At the heap peak, by role: ${bars.map((b) => `${b.side} ${b.shown}, ${b.sentence}`).join('; ')}`);
  bars.forEach((b, i) => {
    const yy = 2 + i * row;
    svg.append(s('text', { class: 'bar-label', x: labelWidth - 8, y: yy + 18, 'text-anchor': 'end' }, b.side));
    let x = labelWidth;
    for (const r of b.roles) {
      const w = (r.bytes / max) * plotW;
      if (w > 0) svg.append(s('rect', { class: o.roleClass(r.role), x: x.toFixed(1), y: yy + 4, width: w.toFixed(1), height: row - 8 }, s('title', null, `${b.side}, ${r.words}: ${r.shown}`)));
      x += w;
    }
    svg.append(s('text', { x: x + 6, y: yy + 18 }, b.shown));
  });
  return svg;
}

/**
 * The allocations an out-of-memory message lists, as bars (the engine's view gives the
 * words, the report's figures the lengths): each bar is the allocation's size, its data
 * (the unpadded bytes) solid and the layout padding shaded.
 * @param {{name: string, items: {label: string, bytes: number, unpadded: number|null, shown: string}[], width: number, onFocus?: (i: number) => void}} o
 */
export function listingChart(o) {
  const { items, width } = o;
  const row = 24;
  const labelWidth = o.labelWidth || Math.min(320, Math.round(width * 0.38));
  const valueWidth = 96;
  const m = { top: 4, bottom: 4 };
  const height = m.top + m.bottom + row * items.length;
  const plotW = Math.max(40, width - labelWidth - valueWidth - 12);
  const max = items.reduce((a, it) => Math.max(a, it.bytes), 0) || 1;
  const svg = frame(width, height, `${o.name}: ${items.length} bars, padding shaded. Use the arrow keys to go through them.`);
  const rects = [];
  const chars = Math.max(8, Math.floor((labelWidth - 12) / 6.4));
  items.forEach((it, i) => {
    const yy = m.top + i * row;
    const w = Math.max(1.5, (it.bytes / max) * plotW);
    const data = it.unpadded != null && it.unpadded >= 0 && it.unpadded < it.bytes ? Math.max(0.5, (it.unpadded / max) * plotW) : w;
    const g = s('g', { class: 'bar-row' });
    g.append(s('text', { class: 'bar-label', x: labelWidth - 8, y: yy + 16, 'text-anchor': 'end' }, fit(it.label, chars)));
    const rect = s('rect', { class: 'bar listing-data', x: labelWidth, y: yy + 3, width: data.toFixed(1), height: row - 6, rx: 2 }, s('title', null, `${clean(it.label, 400)}: ${it.shown}`));
    g.append(rect);
    if (data < w) g.append(s('rect', { class: 'listing-padding', x: (labelWidth + data).toFixed(1), y: yy + 3, width: (w - data).toFixed(1), height: row - 6 }, s('title', null, `${clean(it.label, 400)}: padding`)));
    g.append(s('text', { x: labelWidth + w + 6, y: yy + 16 }, it.shown));
    svg.append(g);
    rects.push(rect);
    if (o.onFocus) {
      rect.addEventListener('pointerenter', () => select(i));
      g.addEventListener('click', () => select(i));
    }
  });
  let cur = -1;
  const select = (i) => {
    if (cur >= 0 && rects[cur]) rects[cur].classList.remove('active');
    cur = i;
    rects[i].classList.add('active');
    if (o.onFocus) o.onFocus(i);
  };
  if (o.onFocus) keyboardCursor(svg, items.length, () => cur, select);
  return svg;
}

/**
 * One stacked bar of parts (the TensorCore and SparseCore split of a TPU message): each
 * part's share of the width, its words in the tooltip.
 * @param {{parts: {bytes: number, cls: string, words: string}[], sentence: string, width: number}} o
 */
export function splitBar(o) {
  const { parts, width } = o;
  const total = parts.reduce((a, p) => a + Math.max(0, p.bytes), 0);
  const svg = s('svg', { class: 'chart', viewBox: `0 0 ${width} 26`, width, height: 26, role: 'img', 'aria-label': clean(o.sentence, 400) });
  let x = 0;
  for (const p of parts) {
    const w = total > 0 ? (Math.max(0, p.bytes) / total) * width : 0;
    if (w > 0) svg.append(s('rect', { class: p.cls, x: x.toFixed(1), y: 3, width: w.toFixed(1), height: 20 }, s('title', null, clean(p.words, 200))));
    x += w;
  }
  return svg;
}

/** The heap at its peak by role: a stacked bar, from the view's shares. */
export function roleBar(roles, sentence, width, roleClass) {
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
