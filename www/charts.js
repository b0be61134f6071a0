// Hand-drawn SVG charts, and what all of them share: the frame, the byte and time
// axes, label placement, the keyboard and pointer cursor. Here the two program-order
// charts (one run's plan, and two runs compared), drawn on one shared frame;
// bars.js and timeline.js draw the others. They plot the report model's own series
// and compute no figure of the report: scales, ticks and label positions are layout
// only. Every chart is keyboard operable (arrow keys move a cursor, Home/End jump) and
// reports its cursor through `onCursor`, which the page shows in a live line.

import { s } from './dom.js';
import { clean, tick } from './format.js';

const MIB = 1048576;
const BYTE_UNITS = [
  [1073741824, 'GiB'],
  [MIB, 'MiB'],
  [1024, 'KiB'],
  [1, 'B'],
];
const TIME_UNITS = [
  [1e9, 's'],
  [1e6, 'ms'],
  [1e3, 'µs'],
  [1, 'ns'],
];

/** Decimals that tell ticks `step` apart in `unit`s. */
const decimalsFor = (step, unit) => Math.max(0, Math.min(3, -Math.floor(Math.log10(step / unit) + 1e-9)));

/** Tick labels in one unit, chosen from the step, with as many decimals as the step needs. */
function byteLabel(step) {
  const [unit, name] = BYTE_UNITS.find(([u]) => step >= u) || BYTE_UNITS[3];
  const decimals = decimalsFor(step, unit);
  return (v) => (v === 0 ? '0' : `${(v / unit).toFixed(decimals)} ${name}`);
}

/**
 * The unit of a time axis whose ticks are `step` ns apart: `tick(t)` labels a tick;
 * `at(t)` and `span(d)` word a time and a duration in the same unit (two decimals finer
 * than the ticks: what the pointer reads is finer than the axis), for hovers and readouts.
 */
export function timeUnit(step) {
  const [unit, name] = TIME_UNITS.find(([u]) => step >= u) || TIME_UNITS[3];
  const decimals = decimalsFor(step, unit);
  const fine = Math.min(decimals + 2, 4);
  const span = (d) => {
    const v = d / unit;
    // A duration below the axis's resolution keeps three significant digits, still in its unit.
    const digits = v !== 0 && Math.abs(v) < 10 ** -fine ? Math.ceil(-Math.log10(Math.abs(v))) + 2 : fine;
    return `${v.toFixed(Math.min(digits, 20))} ${name}`;
  };
  return { name, tick: (t) => `${(t / unit).toFixed(decimals)} ${name}`, at: (t) => `${(t / unit).toFixed(fine)} ${name}`, span };
}

/** A label cut to `n` characters after escaping, so it fits where it is drawn. */
export function fit(label, n) {
  const c = clean(label, 100000);
  return c.length > n ? `${c.slice(0, n - 1)}…` : c;
}

/** A step of 1, 2 or 5 × 10^k (in `unit`s) that gives about `count` ticks up to `max`. */
export function niceStep(max, count, unit) {
  const raw = max / unit / count;
  if (!(raw > 0)) return unit;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return m * mag * unit;
}

export function byteTicks(max) {
  const unit = max >= 4 * 1073741824 ? 1073741824 : max >= 4 * MIB ? MIB : max >= 4096 ? 1024 : 1;
  const step = niceStep(max, 4, unit);
  const ticks = [];
  for (let v = 0; v <= max * 1.0001 && ticks.length < 12; v += step) ticks.push(v);
  ticks.label = byteLabel(step);
  return ticks;
}

export function svgPoint(svg, event) {
  const r = svg.getBoundingClientRect();
  const vb = svg.viewBox.baseVal;
  return { x: ((event.clientX - r.left) / (r.width || 1)) * vb.width, y: ((event.clientY - r.top) / (r.height || 1)) * vb.height };
}

/** Arrow-key cursor over `n` positions; `jump` maps extra keys to positions. */
export function keyboardCursor(svg, n, get, set, jump = {}) {
  svg.addEventListener('keydown', (e) => {
    if (n === 0) return;
    const cur = get();
    const page = Math.max(1, Math.round(n / 20));
    let next = null;
    if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = cur < 0 ? 0 : cur + 1;
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = cur < 0 ? 0 : cur - 1;
    else if (e.key === 'PageDown') next = cur + page;
    else if (e.key === 'PageUp') next = cur - page;
    else if (e.key === 'Home') next = 0;
    else if (e.key === 'End') next = n - 1;
    else if (jump[e.key] != null) next = jump[e.key];
    if (next == null) return;
    e.preventDefault();
    set(Math.max(0, Math.min(n - 1, next)));
  });
}

export function frame(width, height, label) {
  return s('svg', {
    class: 'chart',
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    tabindex: 0,
    'aria-label': label,
    focusable: 'true',
  });
}

/** The byte axis: a grid line and a label per tick. */
export function yAxis(parent, m, plotW, y, ticks) {
  for (const v of ticks) {
    const yy = y(v);
    parent.append(s('line', { class: 'grid', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
    parent.append(s('text', { x: m.left - 6, y: yy + 4, 'text-anchor': 'end' }, ticks.label(v)));
  }
}

/**
 * A time axis under the plot from `t0` to `t1` (ns), one tick per ~90 px so that no two
 * labels touch; returns its unit (`timeUnit`) for the words that go with it. It needs
 * a bottom margin of 38 px, its title at the bottom edge.
 */
export function timeAxis(parent, m, plotW, plotH, t0, t1) {
  const x = (t) => m.left + ((t - t0) / (t1 - t0)) * plotW;
  const step = niceStep(t1 - t0, Math.max(2, Math.floor(plotW / 90)), 1);
  const unit = timeUnit(step);
  const y0 = m.top + plotH;
  parent.append(s('line', { class: 'axis', x1: m.left, x2: m.left + plotW, y1: y0, y2: y0 }));
  for (let k = Math.ceil(t0 / step) * step, c = 0; k <= t1 && c < 24; k += step, c++) {
    parent.append(s('line', { class: 'axis', x1: x(k), x2: x(k), y1: y0, y2: y0 + 4 }));
    // Low enough to clear the byte axis's "0" label beside the first tick.
    parent.append(s('text', { x: x(k), y: y0 + 19, 'text-anchor': 'middle' }, unit.tick(k)));
  }
  return unit;
}

// ---------------------------------------------------------------- labels

const overlap = (a, b) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** A text's box in the chart's units, with a pixel of air around it. */
function boxOf(el) {
  const b = el.getBBox();
  return { x: b.x - 1, y: b.y - 1, w: b.width + 2, h: b.height + 2 };
}

/**
 * Places a chart's floating labels (`text.float`: peaks, capacity lines) so that no two
 * labels meet: each stays where it was drawn if it is free there, else moves up or down
 * by a line at a time; a label with no free place nearby is merged into the label it
 * meets ("before: peak … · after: peak …"). Fixed labels (ticks, axis titles) never
 * move. Needs the chart in the page, laid out: `mount` calls it once the chart is drawn.
 */
export function settleLabels(svg) {
  const height = svg.viewBox.baseVal.height;
  const width = svg.viewBox.baseVal.width;
  const texts = [...svg.querySelectorAll('text')].filter((t) => t.getAttribute('visibility') !== 'hidden');
  const placed = texts.filter((t) => !t.classList.contains('float')).map((el) => ({ el, box: boxOf(el) }));
  const inside = (b) => b.y >= 0 && b.y + b.h <= height && b.x >= 0 && b.x + b.w <= width + 40;
  const place = (el) => {
    const y0 = Number(el.getAttribute('y'));
    const step = el.getBBox().height + 1;
    for (const k of [0, -1, 1, -2, 2, -3, 3]) {
      el.setAttribute('y', (y0 + k * step).toFixed(1));
      const box = boxOf(el);
      if (inside(box) && !placed.some((p) => overlap(p.box, box))) {
        placed.push({ el, box });
        return true;
      }
    }
    el.setAttribute('y', y0);
    return false;
  };
  for (const el of texts.filter((t) => t.classList.contains('float'))) {
    if (place(el)) continue;
    const box = boxOf(el);
    const met = placed.find((p) => p.el.classList.contains('float') && overlap(p.box, box));
    el.remove();
    if (!met) continue; // only fixed labels around it: the chart's sentence says it
    placed.splice(placed.indexOf(met), 1);
    met.el.textContent = `${met.el.textContent} · ${el.textContent}`;
    if (!place(met.el)) met.el.remove();
  }
}

// ---------------------------------------------------------------- program order

/**
 * The frame both program-order charts draw on: a byte axis from 0 to the largest point
 * (or to the capacity line when it is on the scale), the program-order axis, and the
 * capacity (or the pool) line with its label. `xOf(n)` maps the points of a series of
 * `n` points across the whole width.
 */
function programOrderFrame({ width, height, maxBytes, line, lineText, axisText, label }) {
  const m = { left: 72, right: 18, top: 24, bottom: 34 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const lineOnScale = line > 0 && line <= maxBytes * 2.5;
  const yMax = Math.max(1, maxBytes, lineOnScale ? line : 0) * 1.08;
  const y = (b) => m.top + plotH - (b / yMax) * plotH;
  const xOf = (n) => (i) => m.left + (n > 1 ? (i / (n - 1)) * plotW : plotW / 2);
  const svg = frame(width, height, label);
  yAxis(svg, m, plotW, y, byteTicks(yMax));
  svg.append(s('line', { class: 'axis', x1: m.left, x2: m.left + plotW, y1: m.top + plotH, y2: m.top + plotH }));
  svg.append(s('text', { x: m.left + plotW / 2, y: height - 6, 'text-anchor': 'middle' }, axisText));
  if (line > 0) {
    if (lineOnScale) {
      const yy = y(line);
      svg.append(s('line', { class: 'capacity', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
      svg.append(s('text', { class: 'capacity-label float', x: m.left + plotW - 4, y: yy - 5, 'text-anchor': 'end' }, lineText));
    } else {
      svg.append(s('text', { class: 'capacity-label float', x: m.left + plotW - 4, y: m.top - 8, 'text-anchor': 'end' }, `${lineText} is above the scale`));
    }
  }
  return { svg, m, plotW, plotH, y, xOf };
}

/** A series' path (and the area under it) along program order. */
function seriesPath(points, x, y) {
  let d = '';
  points.forEach((p, i) => {
    d += `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.bytes).toFixed(1)}`;
  });
  const area = `${d}L${x(points.length - 1).toFixed(1)},${y(0)}L${x(0).toFixed(1)},${y(0)}Z`;
  return { d, area };
}

/** A peak's dot and its label, anchored by where the peak is (`f`, 0–1 across) so the label stays inside the plot. */
function peakMark(svg, f, px, py, words, cls) {
  svg.append(s('circle', { class: `peak${cls ? ` ${cls}` : ''}`, cx: px, cy: py, r: 4.5 }));
  const anchor = f > 0.8 ? 'end' : f < 0.2 ? 'start' : 'middle';
  svg.append(s('text', { class: `peak-label float${cls ? ` ${cls}` : ''}`, x: px, y: Math.max(12, py - 9), 'text-anchor': anchor }, words));
}

/**
 * Memory along program order: the plan's heap timeline (bytes incl. memory held for
 * the whole program), the peak marked, the capacity line when it is on the scale.
 * @param {{points: {bytes:number, instruction:string}[], peakIndex:number, capacity?:number,
 *          width:number, height?:number, onCursor?:(i:number)=>void}} o
 */
export function programChart(o) {
  const { points, peakIndex, capacity } = o;
  const n = points.length;
  const { svg, m, plotW, plotH, y, xOf } = programOrderFrame({
    width: o.width,
    height: o.height || 250,
    maxBytes: points.reduce((a, p) => Math.max(a, p.bytes), 0),
    line: capacity,
    lineText: `capacity ${tick(capacity)} (measured)`,
    axisText: 'program order (heap-simulator events) →',
    label: `Memory along program order: ${n} points, peak at point ${peakIndex + 1}. Use the arrow keys to read points, P for the peak.`,
  });
  const x = xOf(n);
  if (n > 0) {
    const { d, area } = seriesPath(points, x, y);
    svg.append(s('path', { class: 'area', d: area }));
    svg.append(s('path', { class: 'line', d }));
  }
  if (n > 0 && peakIndex >= 0 && peakIndex < n) peakMark(svg, n > 1 ? peakIndex / (n - 1) : 0.5, x(peakIndex), y(points[peakIndex].bytes), `peak ${tick(points[peakIndex].bytes)}`);
  attachCursor(svg, n, m, plotH, x, (i) => y(points[i].bytes), o.onCursor, (px) => Math.round(((px - m.left) / (plotW || 1)) * (n - 1)), { p: peakIndex, P: peakIndex });
  return svg;
}

export function attachCursor(svg, n, m, plotH, x, yOf, onCursor, fromX, jump) {
  if (!onCursor || n === 0) return;
  const line = s('line', { class: 'cursor', y1: m.top, y2: m.top + plotH, visibility: 'hidden' });
  const dot = s('circle', { class: 'cursor-dot', r: 3.5, visibility: 'hidden' });
  svg.append(line, dot);
  let cur = -1;
  const set = (i) => {
    cur = i;
    const cx = x(i);
    line.setAttribute('x1', cx);
    line.setAttribute('x2', cx);
    line.setAttribute('visibility', 'visible');
    dot.setAttribute('cx', cx);
    dot.setAttribute('cy', yOf(i));
    dot.setAttribute('visibility', 'visible');
    onCursor(i);
  };
  svg.addEventListener('pointermove', (e) => {
    const p = svgPoint(svg, e);
    set(Math.max(0, Math.min(n - 1, fromX(p.x))));
  });
  keyboardCursor(svg, n, () => cur, set, jump);
  return set;
}

/**
 * Memory along program order of two runs on one chart (the comparison's view): each
 * run's heap timeline spans the width (their points differ in number), before dashed,
 * after solid, each peak marked, the pool's line when it is on the scale.
 * @param {{before: {points: {bytes:number, instruction:string}[], peakIndex:number|null, peak:string},
 *          after: {points: {bytes:number, instruction:string}[], peakIndex:number|null, peak:string},
 *          pool?: number, poolText?: string, sentence: string, width:number, height?:number,
 *          onCursor?:(f:number, ib:number, ia:number)=>void}} o
 */
export function compareChart(o) {
  const { before, after, pool } = o;
  const runs = [
    [before, 'before'],
    [after, 'after'],
  ];
  const { svg, m, plotW, plotH, y, xOf } = programOrderFrame({
    width: o.width,
    height: o.height || 260,
    maxBytes: [...before.points, ...after.points].reduce((a, p) => Math.max(a, p.bytes), 0),
    line: pool,
    lineText: o.poolText || '',
    axisText: 'program order, each run from its start to its end →',
    label: `Memory along program order, before and after: ${o.sentence}. Use the arrow keys to read both runs at the same place in their programs.`,
  });
  const n = Math.max(before.points.length, after.points.length);
  for (const [series, cls] of runs) {
    const pts = series.points;
    if (!pts.length) continue;
    const { d, area } = seriesPath(pts, xOf(pts.length), y);
    if (cls === 'after') svg.append(s('path', { class: 'area', d: area }));
    svg.append(s('path', { class: `line ${cls}`, d }, s('title', null, `${cls}: ${series.peak}`)));
  }
  for (const [series, cls] of runs) {
    const i = series.peakIndex;
    const k = series.points.length;
    if (i == null || i < 0 || i >= k) continue;
    peakMark(svg, k > 1 ? i / (k - 1) : 0.5, xOf(k)(i), y(series.points[i].bytes), `${cls}: ${series.peak}`, cls);
  }
  if (o.onCursor && n > 0) {
    const index = (series, f) => (series.points.length ? Math.round(f * (series.points.length - 1)) : -1);
    const line = s('line', { class: 'cursor', y1: m.top, y2: m.top + plotH, visibility: 'hidden' });
    const dots = [before, after].map((_, k) => s('circle', { class: `cursor-dot ${k ? 'after' : 'before'}`, r: 3.5, visibility: 'hidden' }));
    svg.append(line, ...dots);
    let cur = -1;
    const set = (k) => {
      cur = k;
      const f = n > 1 ? k / (n - 1) : 0;
      const cx = m.left + f * plotW;
      line.setAttribute('x1', cx);
      line.setAttribute('x2', cx);
      line.setAttribute('visibility', 'visible');
      const idx = [index(before, f), index(after, f)];
      [before, after].forEach((series, j) => {
        if (idx[j] < 0) return;
        dots[j].setAttribute('cx', xOf(series.points.length)(idx[j]));
        dots[j].setAttribute('cy', y(series.points[idx[j]].bytes));
        dots[j].setAttribute('visibility', 'visible');
      });
      o.onCursor(f, idx[0], idx[1]);
    };
    svg.addEventListener('pointermove', (e) => {
      const p = svgPoint(svg, e);
      set(Math.max(0, Math.min(n - 1, Math.round(((p.x - m.left) / (plotW || 1)) * (n - 1)))));
    });
    keyboardCursor(svg, n, () => cur, set);
  }
  return svg;
}
