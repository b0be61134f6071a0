// Hand-drawn SVG charts. They plot the report model's own series (the plan's program-
// order timeline, an allocator's bytes in use over time, buffer sizes) and compute no
// figure of the report: scales and ticks are layout only. Every chart is keyboard
// operable (arrow keys move a cursor, Home/End jump) and reports its cursor through
// `onCursor`, which the page shows in a live text line.

import { s } from './dom.js';
import { clean, duration, tick } from './format.js';

const UNITS = [
  [1073741824, 'GiB'],
  [1048576, 'MiB'],
  [1024, 'KiB'],
  [1, 'B'],
];

/** Tick labels in one unit, chosen from the step, with as many decimals as the step needs. */
function byteLabel(step) {
  const [unit, name] = UNITS.find(([u]) => step >= u) || UNITS[3];
  const decimals = Math.max(0, Math.min(3, -Math.floor(Math.log10(step / unit) + 1e-9)));
  return (v) => (v === 0 ? '0' : `${(v / unit).toFixed(decimals)} ${name}`);
}

function timeLabel(step) {
  const [unit, name] = [
    [1e9, 's'],
    [1e6, 'ms'],
    [1e3, 'µs'],
    [1, 'ns'],
  ].find(([u]) => step >= u) || [1, 'ns'];
  const decimals = Math.max(0, Math.min(3, -Math.floor(Math.log10(step / unit) + 1e-9)));
  return (t) => `${(t / unit).toFixed(decimals)} ${name}`;
}

/** A label cut to `n` characters after escaping, so it fits where it is drawn. */
function fit(label, n) {
  const c = clean(label, 100000);
  return c.length > n ? `${c.slice(0, n - 1)}…` : c;
}

const MIB = 1048576;

/** A step of 1, 2 or 5 × 10^k (in `unit`s) that gives about `count` ticks up to `max`. */
function niceStep(max, count, unit) {
  const raw = max / unit / count;
  if (!(raw > 0)) return unit;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return m * mag * unit;
}

function byteTicks(max) {
  const unit = max >= 4 * 1073741824 ? 1073741824 : max >= 4 * MIB ? MIB : max >= 4096 ? 1024 : 1;
  const step = niceStep(max, 4, unit);
  const ticks = [];
  for (let v = 0; v <= max * 1.0001 && ticks.length < 12; v += step) ticks.push(v);
  ticks.label = byteLabel(step);
  return ticks;
}

function svgPoint(svg, event) {
  const r = svg.getBoundingClientRect();
  const vb = svg.viewBox.baseVal;
  return { x: ((event.clientX - r.left) / (r.width || 1)) * vb.width, y: ((event.clientY - r.top) / (r.height || 1)) * vb.height };
}

/** Arrow-key cursor over `n` positions; `jump` maps extra keys to positions. */
function keyboardCursor(svg, n, get, set, jump = {}) {
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

function frame(width, height, label) {
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

function yAxis(svg, m, plotW, y, ticks) {
  for (const v of ticks) {
    const yy = y(v);
    svg.append(s('line', { class: 'grid', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
    svg.append(s('text', { x: m.left - 6, y: yy + 4, 'text-anchor': 'end' }, ticks.label(v)));
  }
}

/**
 * Memory along program order: the plan's heap timeline (bytes incl. memory held for
 * the whole program), the peak marked, the capacity line when it is on the scale.
 * @param {{points: {bytes:number, instruction:string}[], peakIndex:number, capacity?:number,
 *          width:number, height?:number, onCursor?:(i:number)=>void}} o
 */
export function programChart(o) {
  const { points, peakIndex, capacity, width } = o;
  const height = o.height || 250;
  const m = { left: 72, right: 18, top: 22, bottom: 34 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const n = points.length;
  const maxBytes = points.reduce((a, p) => Math.max(a, p.bytes), 0);
  const capOnScale = capacity > 0 && capacity <= maxBytes * 2.5;
  const yMax = Math.max(1, maxBytes, capOnScale ? capacity : 0) * 1.08;
  const x = (i) => m.left + (n > 1 ? (i / (n - 1)) * plotW : plotW / 2);
  const y = (b) => m.top + plotH - (b / yMax) * plotH;
  const svg = frame(width, height, `Memory along program order: ${n} points, peak at point ${peakIndex + 1}. Use the arrow keys to read points, P for the peak.`);
  yAxis(svg, m, plotW, y, byteTicks(yMax));
  svg.append(s('line', { class: 'axis', x1: m.left, x2: m.left + plotW, y1: m.top + plotH, y2: m.top + plotH }));
  svg.append(s('text', { x: m.left + plotW / 2, y: height - 6, 'text-anchor': 'middle' }, 'program order (heap-simulator events) →'));
  if (n > 0) {
    let d = '';
    points.forEach((p, i) => {
      d += `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.bytes).toFixed(1)}`;
    });
    const area = `${d}L${x(n - 1).toFixed(1)},${y(0)}L${x(0).toFixed(1)},${y(0)}Z`;
    svg.append(s('path', { class: 'area', d: area }));
    svg.append(s('path', { class: 'line', d }));
  }
  if (capacity > 0) {
    if (capOnScale) {
      const yy = y(capacity);
      svg.append(s('line', { class: 'capacity', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
      svg.append(s('text', { class: 'capacity-label', x: m.left + plotW - 4, y: yy - 5, 'text-anchor': 'end' }, `capacity ${tick(capacity)} (measured)`));
    } else {
      svg.append(s('text', { class: 'capacity-label', x: m.left + plotW - 4, y: m.top - 8, 'text-anchor': 'end' }, `capacity ${tick(capacity)} (measured) is above the scale`));
    }
  }
  if (n > 0 && peakIndex >= 0 && peakIndex < n) {
    const px = x(peakIndex);
    const py = y(points[peakIndex].bytes);
    svg.append(s('circle', { class: 'peak', cx: px, cy: py, r: 4.5 }));
    const anchor = px > m.left + plotW * 0.8 ? 'end' : px < m.left + plotW * 0.2 ? 'start' : 'middle';
    svg.append(s('text', { class: 'peak-label', x: px, y: Math.max(12, py - 9), 'text-anchor': anchor }, `peak ${tick(points[peakIndex].bytes)}`));
  }
  attachCursor(svg, n, m, plotH, x, (i) => y(points[i].bytes), o.onCursor, (px) => Math.round(((px - m.left) / (plotW || 1)) * (n - 1)), { p: peakIndex, P: peakIndex });
  return svg;
}

function attachCursor(svg, n, m, plotH, x, yOf, onCursor, fromX, jump) {
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
}

/**
 * Bytes in use over time for one allocator (measured), with its capacity and the
 * module executions as markers.
 * @param {{timeline: [number, number][], capacity:number, executions: object[], selected?: string,
 *          width:number, height?:number, onCursor?:(i:number)=>void}} o
 */
export function runtimeChart(o) {
  const { timeline, capacity, executions, selected, width } = o;
  const waits = o.waits || [];
  const height = o.height || 210;
  const m = { left: 72, right: 18, top: 22, bottom: 34 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const pts = timeline.map(([ps, bytes]) => [ps / 1000, bytes]);
  const n = pts.length;
  let t0 = n ? pts[0][0] : 0;
  let t1 = n ? pts[n - 1][0] : 1;
  for (const e of [...executions, ...waits]) {
    t0 = Math.min(t0, e.start_ns);
    t1 = Math.max(t1, e.start_ns + (e.duration_ns || 0));
  }
  if (!(t1 > t0)) t1 = t0 + 1;
  const maxBytes = pts.reduce((a, p) => Math.max(a, p[1]), 0);
  const capOnScale = capacity > 0 && capacity <= maxBytes * 2.5;
  const yMax = Math.max(1, maxBytes, capOnScale ? capacity : 0) * 1.08;
  const x = (t) => m.left + ((t - t0) / (t1 - t0)) * plotW;
  const y = (b) => m.top + plotH - (b / yMax) * plotH;
  const svg = frame(width, height, `Bytes in use over time: ${n} points, ${executions.length} executions and ${waits.length} AllocatorRetry waits marked. Use the arrow keys to read points.`);
  yAxis(svg, m, plotW, y, byteTicks(yMax));
  svg.append(s('line', { class: 'axis', x1: m.left, x2: m.left + plotW, y1: m.top + plotH, y2: m.top + plotH }));
  const tStep = niceStep(t1 - t0, 6, 1);
  const tLabel = timeLabel(tStep);
  for (let k = Math.ceil(t0 / tStep) * tStep, c = 0; k <= t1 && c < 12; k += tStep, c++) {
    svg.append(s('line', { class: 'axis', x1: x(k), x2: x(k), y1: m.top + plotH, y2: m.top + plotH + 4 }));
    svg.append(s('text', { x: x(k), y: m.top + plotH + 15, 'text-anchor': 'middle' }, tLabel(k)));
  }
  svg.append(s('text', { x: m.left + plotW / 2, y: height - 4, 'text-anchor': 'middle' }, 'time since the capture started →'));
  for (const e of executions) {
    const cls = ['exec'];
    if (selected && e.module === selected) cls.push('selected');
    if (e.launched_kernels === false) cls.push('nokernel');
    const ex = x(e.start_ns);
    const title = `${clean(e.module || 'unknown module', 200)} at ${duration(e.start_ns)} for ${duration(e.duration_ns || 0)}${e.launched_kernels === false ? ': launched no kernel' : ''}`;
    const w = x(e.start_ns + (e.duration_ns || 0)) - ex;
    if (w >= 2) svg.append(s('rect', { class: `span ${cls.slice(1).join(' ')}`, x: ex.toFixed(1), y: m.top, width: w.toFixed(1), height: plotH }, s('title', null, title)));
    svg.append(s('line', { class: cls.join(' '), x1: ex, x2: ex, y1: m.top, y2: m.top + plotH }, s('title', null, title)));
  }
  // AllocatorRetry waits: the allocator had no free memory and waited for some.
  for (const w of waits) {
    const wx = x(w.start_ns);
    const ww = Math.max(2, x(w.start_ns + (w.duration_ns || 0)) - wx);
    const title = `AllocatorRetry: waited ${duration(w.duration_ns || 0)} for memory at ${duration(w.start_ns)}${w.execution ? ` in ${clean(w.execution, 200)}` : ''}`;
    svg.append(s('rect', { class: 'retry', x: wx.toFixed(1), y: m.top, width: ww.toFixed(1), height: plotH }, s('title', null, title)));
    svg.append(s('line', { class: 'retry-edge', x1: wx, x2: wx, y1: m.top, y2: m.top + plotH }, s('title', null, title)));
  }
  if (n > 0) {
    let d = `M${x(pts[0][0]).toFixed(1)},${y(0)}`;
    for (const [t, b] of pts) d += `H${x(t).toFixed(1)}V${y(b).toFixed(1)}`;
    d += `H${(m.left + plotW).toFixed(1)}`;
    svg.append(s('path', { class: 'area', d: `${d}V${y(0)}Z` }));
    svg.append(s('path', { class: 'line', d }));
  }
  if (capacity > 0) {
    if (capOnScale) {
      const yy = y(capacity);
      svg.append(s('line', { class: 'capacity', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
      svg.append(s('text', { class: 'capacity-label', x: m.left + plotW - 4, y: yy - 5, 'text-anchor': 'end' }, `capacity ${tick(capacity)}`));
    } else {
      svg.append(s('text', { class: 'capacity-label', x: m.left + plotW - 4, y: m.top - 8, 'text-anchor': 'end' }, `capacity ${tick(capacity)} is above the scale`));
    }
  }
  const times = pts.map((p) => p[0]);
  attachCursor(svg, n, m, plotH, (i) => x(pts[i][0]), (i) => y(pts[i][1]), o.onCursor, (px) => {
    const t = t0 + ((px - m.left) / (plotW || 1)) * (t1 - t0);
    let lo = 0;
    let hi = times.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (times[mid] <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  });
  return svg;
}

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
 * Memory along program order of two runs on one chart (the comparison's view): each
 * run's heap timeline spans the width (their points differ in number), before dashed,
 * after solid, each peak marked, the pool's line when it is on the scale.
 * @param {{before: {points: {bytes:number, instruction:string}[], peakIndex:number|null, peak:string},
 *          after: {points: {bytes:number, instruction:string}[], peakIndex:number|null, peak:string},
 *          pool?: number, poolText?: string, sentence: string, width:number, height?:number,
 *          onCursor?:(f:number, ib:number, ia:number)=>void}} o
 */
export function compareChart(o) {
  const { before, after, pool, width } = o;
  const height = o.height || 260;
  const m = { left: 72, right: 18, top: 24, bottom: 34 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const maxBytes = [...before.points, ...after.points].reduce((a, p) => Math.max(a, p.bytes), 0);
  const poolOnScale = pool > 0 && pool <= maxBytes * 2.5;
  const yMax = Math.max(1, maxBytes, poolOnScale ? pool : 0) * 1.08;
  const y = (b) => m.top + plotH - (b / yMax) * plotH;
  const xOf = (n) => (i) => m.left + (n > 1 ? (i / (n - 1)) * plotW : plotW / 2);
  const n = Math.max(before.points.length, after.points.length);
  const svg = frame(width, height, `Memory along program order, before and after: ${o.sentence}. Use the arrow keys to read both runs at the same place in their programs.`);
  yAxis(svg, m, plotW, y, byteTicks(yMax));
  svg.append(s('line', { class: 'axis', x1: m.left, x2: m.left + plotW, y1: m.top + plotH, y2: m.top + plotH }));
  svg.append(s('text', { x: m.left + plotW / 2, y: height - 6, 'text-anchor': 'middle' }, 'program order, each run from its start to its end →'));
  for (const [series, cls] of [
    [before, 'before'],
    [after, 'after'],
  ]) {
    const pts = series.points;
    if (!pts.length) continue;
    const x = xOf(pts.length);
    let d = '';
    pts.forEach((p, i) => {
      d += `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.bytes).toFixed(1)}`;
    });
    if (cls === 'after') svg.append(s('path', { class: 'area', d: `${d}L${x(pts.length - 1).toFixed(1)},${y(0)}L${x(0).toFixed(1)},${y(0)}Z` }));
    svg.append(s('path', { class: `line ${cls}`, d }, s('title', null, `${cls}: ${series.peak}`)));
  }
  if (pool > 0) {
    if (poolOnScale) {
      const yy = y(pool);
      svg.append(s('line', { class: 'capacity', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
      svg.append(s('text', { class: 'capacity-label', x: m.left + plotW - 4, y: yy - 5, 'text-anchor': 'end' }, o.poolText || ''));
    } else {
      svg.append(s('text', { class: 'capacity-label', x: m.left + plotW - 4, y: m.top - 8, 'text-anchor': 'end' }, `${o.poolText || ''} is above the scale`));
    }
  }
  for (const [series, cls] of [
    [before, 'before'],
    [after, 'after'],
  ]) {
    const i = series.peakIndex;
    if (i == null || i < 0 || i >= series.points.length) continue;
    const px = xOf(series.points.length)(i);
    const py = y(series.points[i].bytes);
    svg.append(s('circle', { class: `peak ${cls}`, cx: px, cy: py, r: 4.5 }));
    const anchor = px > m.left + plotW * 0.8 ? 'end' : px < m.left + plotW * 0.2 ? 'start' : 'middle';
    svg.append(s('text', { class: `peak-label ${cls}`, x: px, y: Math.max(12, py - 9), 'text-anchor': anchor }, `${cls}: ${series.peak}`));
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
