// The runtime timeline (hand-drawn SVG): bytes in use over time for one allocator
// (measured), its capacity, and above the plot two lanes — the module executions and
// the AllocatorRetry waits — drawn to scale (at least 2 px wide, so a short one shows)
// in their own lanes, so that none covers the memory drawn below. The wheel zooms
// around the pointer, a drag pans, and `zoom`/`reset` do it from buttons and keys.
// Beside it, the buffers live during the selected execution as stacked bands
// (`bandsChart`), zoomed and panned the same way (`panZoom`).

import { s } from './dom.js';
import { clean, size, tick } from './format.js';
import { frame, byteTicks, yAxis, timeAxis, keyboardCursor, svgPoint } from './charts.js';

const LANE = 10; // a lane's height
const LANE_GAP = 6;
const MIN_BAND = 2; // px: the narrowest band drawn, so that a sub-pixel execution shows
let clips = 0; // clip-path ids, one per chart on the page

/**
 * Bytes in use over time for one allocator (measured), with its capacity, the module
 * executions and the AllocatorRetry waits.
 * @param {{timeline: [number, number][], capacity:number, executions: object[], waits?: object[],
 *          selected?: string, width:number, plotHeight?:number,
 *          onCursor?:(i:number, unit:{at:(t:number)=>string})=>void,
 *          onView?:(t0:number, t1:number, unit:{at:(t:number)=>string}, zoomed:boolean)=>void}} o
 * @returns {SVGSVGElement & {zoom:(factor:number)=>void, reset:()=>void}}
 */
export function runtimeChart(o) {
  const { timeline, capacity, executions, selected, width } = o;
  const waits = o.waits || [];
  const lanes = waits.length ? 2 : 1;
  const lanesBottom = 4 + lanes * (LANE + LANE_GAP) - LANE_GAP;
  const m = { left: 72, right: 18, top: lanesBottom + 18, bottom: 38 };
  const plotH = o.plotHeight || 154;
  const height = m.top + plotH + m.bottom;
  const plotW = width - m.left - m.right;
  const pts = timeline.map(([ps, bytes]) => [ps / 1000, bytes]);
  const n = pts.length;

  // The whole capture's span: every point, execution and wait.
  let T0 = n ? pts[0][0] : 0;
  let T1 = n ? pts[n - 1][0] : 1;
  for (const e of [...executions, ...waits]) {
    T0 = Math.min(T0, e.start_ns);
    T1 = Math.max(T1, e.start_ns + (e.duration_ns || 0));
  }
  if (!(T1 > T0)) T1 = T0 + 1;
  // The visible span, which `view` (below) moves; x and timeAt read it.
  const view = { t0: T0, t1: T1 };
  const x = (t) => m.left + ((t - view.t0) / (view.t1 - view.t0)) * plotW;

  const maxBytes = pts.reduce((a, p) => Math.max(a, p[1]), 0);
  const capOnScale = capacity > 0 && capacity <= maxBytes * 2.5;
  const yMax = Math.max(1, maxBytes, capOnScale ? capacity : 0) * 1.08;
  const y = (b) => m.top + plotH - (b / yMax) * plotH;

  const svg = frame(width, height, `Bytes in use over time: ${n} points, ${executions.length} executions and ${waits.length} AllocatorRetry waits in lanes above. The wheel zooms, a drag pans; keys: arrows read points, + and − zoom, 0 resets.`);
  svg.classList.add('timeline');
  const clipId = `timeline-clip-${++clips}`;
  svg.append(s('defs', null, s('clipPath', { id: clipId }, s('rect', { x: m.left, y: 0, width: plotW, height }))));

  // What does not move when zooming: the byte axis, the lanes' names, the capacity.
  yAxis(svg, m, plotW, y, byteTicks(yMax));
  const laneY = (k) => 4 + k * (LANE + LANE_GAP);
  svg.append(s('text', { x: m.left - 6, y: laneY(0) + LANE - 1, 'text-anchor': 'end' }, 'executions'));
  if (waits.length) svg.append(s('text', { x: m.left - 6, y: laneY(1) + LANE - 1, 'text-anchor': 'end' }, 'waits'));
  svg.append(s('text', { x: m.left + plotW / 2, y: height - 4, 'text-anchor': 'middle' }, 'time since the capture started →'));
  if (capacity > 0) {
    if (capOnScale) {
      const yy = y(capacity);
      svg.append(s('line', { class: 'capacity', x1: m.left, x2: m.left + plotW, y1: yy, y2: yy }));
      svg.append(s('text', { class: 'capacity-label float', x: m.left + plotW - 4, y: yy - 5, 'text-anchor': 'end' }, `capacity ${tick(capacity)}`));
    } else {
      svg.append(s('text', { class: 'capacity-label float', x: m.left + plotW - 4, y: m.top - 5, 'text-anchor': 'end' }, `capacity ${tick(capacity)} is above the scale`));
    }
  }
  const axis = s('g', { class: 'time-axis' });
  const plot = s('g', { 'clip-path': `url(#${clipId})` });
  const cursorLine = s('line', { class: 'cursor', y1: m.top, y2: m.top + plotH, visibility: 'hidden' });
  const cursorDot = s('circle', { class: 'cursor-dot', r: 3.5, visibility: 'hidden' });
  svg.append(axis, plot, cursorLine, cursorDot);

  /** A band in a lane, from `start` for `dur` ns, at least MIN_BAND wide. */
  const band = (k, start, dur, cls, title) => {
    const bx = x(start);
    const w = Math.max(MIN_BAND, x(start + dur) - bx);
    return s('rect', { class: cls, x: bx.toFixed(1), y: laneY(k), width: w.toFixed(1), height: LANE }, s('title', null, title));
  };
  const visible = (start, dur) => start + dur >= view.t0 && start <= view.t1;

  let unit = null;
  let cur = -1;
  const draw = () => {
    axis.replaceChildren();
    plot.replaceChildren();
    const { t0, t1 } = view;
    unit = timeAxis(axis, m, plotW, plotH, t0, t1);
    for (const e of executions) {
      const dur = e.duration_ns || 0;
      if (!visible(e.start_ns, dur)) continue;
      const cls = ['exec'];
      if (selected && e.module === selected) cls.push('selected');
      if (e.launched_kernels === false) cls.push('nokernel');
      const title = `${clean(e.module || 'unknown module', 200)} at ${unit.at(e.start_ns)} for ${unit.span(dur)}${e.launched_kernels === false ? ': launched no kernel' : ''}`;
      plot.append(band(0, e.start_ns, dur, cls.join(' '), title));
    }
    for (const w of waits) {
      const dur = w.duration_ns || 0;
      if (!visible(w.start_ns, dur)) continue;
      const title = `AllocatorRetry: waited ${unit.span(dur)} for memory at ${unit.at(w.start_ns)}${w.execution ? ` in ${clean(w.execution, 200)}` : ''}`;
      plot.append(band(1, w.start_ns, dur, 'retry', title));
    }
    if (n > 0) {
      let d = `M${x(pts[0][0]).toFixed(1)},${y(0)}`;
      for (const [t, b] of pts) d += `H${x(t).toFixed(1)}V${y(b).toFixed(1)}`;
      d += `H${Math.max(m.left + plotW, x(pts[n - 1][0])).toFixed(1)}`;
      plot.append(s('path', { class: 'area', d: `${d}V${y(0)}Z` }), s('path', { class: 'line', d }));
    }
    svg.dataset.t0 = String(t0);
    svg.dataset.t1 = String(t1);
    svg.dataset.unit = unit.name;
    if (cur >= 0) showCursor(cur);
    if (o.onView) o.onView(t0, t1, unit, t1 - t0 < T1 - T0);
  };

  function showCursor(i) {
    const cx = x(pts[i][0]);
    const on = cx >= m.left - 0.5 && cx <= m.left + plotW + 0.5 ? 'visible' : 'hidden';
    cursorLine.setAttribute('x1', cx);
    cursorLine.setAttribute('x2', cx);
    cursorLine.setAttribute('visibility', on);
    cursorDot.setAttribute('cx', cx);
    cursorDot.setAttribute('cy', y(pts[i][1]));
    cursorDot.setAttribute('visibility', on);
  }
  const setCursor = (i) => {
    cur = i;
    const t = pts[i][0];
    // The keyboard may walk the cursor off the visible span: the span follows it.
    if (t < view.t0 || t > view.t1) pz.show(t - (view.t1 - view.t0) / 2, view.t1 - view.t0);
    showCursor(i);
    if (o.onCursor) o.onCursor(i, unit);
  };
  /** The last point at or before time `t`. */
  const pointAt = (t) => {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (pts[mid][0] <= t) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };

  const pz = panZoom(svg, {
    m,
    plotW,
    T0,
    T1,
    view,
    draw,
    hover: (p) => {
      if (n > 0) setCursor(pointAt(pz.timeAt(p.x)));
    },
    anchor: () => (cur >= 0 ? pts[cur][0] : undefined),
  });
  if (n > 0) keyboardCursor(svg, n, () => cur, setCursor);

  svg.zoom = (factor) => pz.zoom(factor, cur >= 0 ? pts[cur][0] : undefined);
  svg.reset = pz.reset;
  draw();
  return svg;
}

/**
 * What the timelines share: the visible span `view` ({t0, t1}, ns) of `[T0, T1]`
 * drawn across the plot `[m.left, m.left + plotW]`, moved by the wheel (zoom around
 * the pointer; sideways, or with Shift, pans), a drag (pans) and the keys + − 0
 * (around `anchor()` when it gives a time); `draw()` after each move. Pointer moves
 * that are not drags go to `hover`.
 */
export function panZoom(svg, { m, plotW, T0, T1, view, draw, hover, anchor }) {
  // The narrowest span zoom reaches: 1 µs, or a hundred-thousandth of a long capture
  // (a sub-millisecond execution of a minute-long capture still spans the plot).
  const minSpan = Math.min(T1 - T0, Math.max(1000, (T1 - T0) / 1e5));
  const timeAt = (px) => view.t0 + ((px - m.left) / (plotW || 1)) * (view.t1 - view.t0);
  /** Shows the visible span `[a, a + span]`, kept inside `[T0, T1]`. */
  const show = (a, span) => {
    span = Math.min(T1 - T0, Math.max(minSpan, span));
    a = Math.min(T1 - span, Math.max(T0, a));
    view.t0 = a;
    view.t1 = a + span;
    draw();
  };
  /** Zooms by `factor` (< 1: in) keeping time `at` where it is on screen. */
  const zoom = (factor, at = (view.t0 + view.t1) / 2) => {
    const span = Math.min(T1 - T0, Math.max(minSpan, (view.t1 - view.t0) * factor));
    show(at - ((at - view.t0) / (view.t1 - view.t0)) * span, span);
  };
  let drag = null;
  svg.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    drag = { x: svgPoint(svg, e).x, t0: view.t0, span: view.t1 - view.t0 };
    svg.setPointerCapture(e.pointerId);
    svg.classList.add('panning');
  });
  svg.addEventListener('pointermove', (e) => {
    const p = svgPoint(svg, e);
    if (drag) {
      show(drag.t0 - ((p.x - drag.x) / plotW) * drag.span, drag.span);
      return;
    }
    if (hover && p.x >= m.left && p.x <= m.left + plotW) hover(p, e);
  });
  const endDrag = () => {
    drag = null;
    svg.classList.remove('panning');
  };
  svg.addEventListener('pointerup', endDrag);
  svg.addEventListener('pointercancel', endDrag);
  svg.addEventListener(
    'wheel',
    (e) => {
      const p = svgPoint(svg, e);
      if (p.x < m.left || p.x > m.left + plotW) return;
      e.preventDefault();
      const sideways = e.shiftKey ? e.deltaY : e.deltaX;
      if (Math.abs(sideways) > Math.abs(e.shiftKey ? 0 : e.deltaY)) {
        show(view.t0 + (sideways / plotW) * (view.t1 - view.t0), view.t1 - view.t0);
        return;
      }
      zoom(Math.exp(Math.max(-1, Math.min(1, e.deltaY / 300))), timeAt(p.x));
    },
    { passive: false },
  );
  svg.addEventListener('keydown', (e) => {
    const at = anchor ? anchor() : undefined;
    if (e.key === '+' || e.key === '=') zoom(0.5, at);
    else if (e.key === '-' || e.key === '_') zoom(2, at);
    else if (e.key === '0') show(T0, T1 - T0);
    else return;
    e.preventDefault();
  });
  return { show, zoom, timeAt, reset: () => show(T0, T1 - T0) };
}

/**
 * The buffers live during one execution in one device pool, as PyTorch's memory_viz
 * draws them: each buffer a band from its allocation to its free, stacked in
 * allocation order (a band drops when one below it is freed), what no band holds
 * (smaller buffers, the runtime's reservation) in grey on top, so that the top edge
 * is the bytes in use. The stacking is layout only: the bands, their bytes and times
 * are the report's. Zooms and pans as the timeline does; the arrow keys walk the
 * bands, and pointing at one or walking to it calls `onBand`.
 * @param {{device: object, window: {start_ns:number, end_ns:number}, width:number,
 *          plotHeight?:number, onBand?:(band:object|null, unit:object)=>void}} o
 * @returns {SVGSVGElement & {zoom:(factor:number)=>void, reset:()=>void}}
 */
export function bandsChart(o) {
  const { device, window: w, width } = o;
  const bands = device.bands || [];
  const other = device.other_in_use || [];
  const m = { left: 72, right: 18, top: 14, bottom: 38 };
  const plotH = o.plotHeight || 220;
  const height = m.top + plotH + m.bottom;
  const plotW = width - m.left - m.right;
  // The execution, with a tenth of its length either side: what it inherited and left.
  const pad = Math.max((w.end_ns - w.start_ns) / 10, 500);
  const T0 = w.start_ns - pad;
  const T1 = w.end_ns + pad;
  const clipT = (t) => Math.min(T1, Math.max(T0, t));

  // Where the stack changes: every band's start and end in view, and the rest's points.
  const cuts = new Set([T0, T1]);
  for (const b of bands) {
    cuts.add(clipT(b.start_ns));
    cuts.add(clipT(b.end_ns == null ? T1 : b.end_ns));
  }
  for (const [t] of other) cuts.add(clipT(t));
  const times = [...cuts].sort((a, b) => a - b);
  const segs = times.slice(0, -1).map((a, k) => ({ a, b: times[k + 1] }));
  const liveIn = (band, seg) => band.start_ns <= seg.a && (band.end_ns == null || band.end_ns >= seg.b);
  // The rest at a time: its last point at or before it (its first, before the window).
  const otherAt = (t) => {
    let v = other.length ? other[0][1] : 0;
    for (const [at, bytes] of other) {
      if (at > t) break;
      v = bytes;
    }
    return v;
  };
  // Each band's base in each segment it lives in; the stack's top and the rest above it.
  const shapes = bands.map(() => []);
  const tops = segs.map((seg) => {
    let base = 0;
    bands.forEach((band, i) => {
      if (!liveIn(band, seg)) return;
      shapes[i].push({ a: seg.a, b: seg.b, y0: base, y1: base + band.bytes });
      base += band.bytes;
    });
    return { a: seg.a, b: seg.b, stack: base, total: base + otherAt(seg.a) };
  });
  const yMax = Math.max(1, ...tops.map((t) => t.total)) * 1.08;
  const y = (v) => m.top + plotH - (v / yMax) * plotH;

  const svg = frame(width, height, `Buffers live during the execution: ${bands.length} bands, stacked in allocation order, with what no band holds on top. The wheel zooms, a drag pans; the arrow keys walk the bands, + and − zoom, 0 resets.`);
  svg.classList.add('timeline', 'bands');
  const clipId = `timeline-clip-${++clips}`;
  svg.append(s('defs', null, s('clipPath', { id: clipId }, s('rect', { x: m.left, y: 0, width: plotW, height }))));
  yAxis(svg, m, plotW, y, byteTicks(yMax));
  svg.append(s('text', { x: m.left + plotW / 2, y: height - 4, 'text-anchor': 'middle' }, 'time since the capture started →'));
  const axis = s('g', { class: 'time-axis' });
  const plot = s('g', { 'clip-path': `url(#${clipId})` });
  svg.append(axis, plot);

  const view = { t0: T0, t1: T1 };
  const x = (t) => m.left + ((t - view.t0) / (view.t1 - view.t0)) * plotW;
  /** A step outline: the top edge left to right, then the bottom edge back. */
  const outline = (parts) => {
    const top = parts.map((p) => `${x(p.a).toFixed(1)},${y(p.y1).toFixed(1)} ${x(p.b).toFixed(1)},${y(p.y1).toFixed(1)}`);
    const bottom = [...parts].reverse().map((p) => `${x(p.b).toFixed(1)},${y(p.y0).toFixed(1)} ${x(p.a).toFixed(1)},${y(p.y0).toFixed(1)}`);
    return [...top, ...bottom].join(' ');
  };
  let unit = null;
  let cur = -1;
  const polys = [];
  const describe = (band) => {
    const shape = band.shape ? `${clean(band.shape, 200)}` : 'shape not recorded';
    const freed = band.end_ns == null ? 'still live when the capture ends' : `freed at ${unit.at(band.end_ns)}`;
    const op = band.op ? `, op ${clean(band.op, 200)}` : '';
    const region = band.region ? `, region ${clean(band.region, 80)}` : '';
    return `${size(band.bytes)} ${shape}${band.dtype && !band.shape ? ` (${clean(band.dtype, 20)})` : ''}${op}${region}; allocated by ${clean(band.source, 200)} at ${unit.at(band.start_ns)}, ${freed}`;
  };
  const select = (i) => {
    cur = i;
    polys.forEach((p, k) => p && p.classList.toggle('active', k === i));
    if (o.onBand) o.onBand(i >= 0 ? bands[i] : null, unit, i >= 0 ? describe(bands[i]) : '');
  };
  const draw = () => {
    axis.replaceChildren();
    plot.replaceChildren();
    unit = timeAxis(axis, m, plotW, plotH, view.t0, view.t1);
    bands.forEach((band, i) => {
      const parts = shapes[i].filter((p) => p.b >= view.t0 && p.a <= view.t1);
      if (!parts.length) {
        polys[i] = null;
        return;
      }
      const poly = s('polygon', { class: `band band-${band.kind}${i % 2 ? ' alt' : ''}${i === cur ? ' active' : ''}`, points: outline(parts), 'data-index': i }, s('title', null, describe(band)));
      poly.addEventListener('pointerenter', () => select(i));
      polys[i] = poly;
      plot.append(poly);
    });
    const rest = tops.filter((p) => p.b >= view.t0 && p.a <= view.t1 && p.total > p.stack).map((p) => ({ a: p.a, b: p.b, y0: p.stack, y1: p.total }));
    for (const p of rest) {
      plot.append(s('rect', { class: 'band-rest', x: x(p.a).toFixed(1), y: y(p.y1).toFixed(1), width: Math.max(0, x(p.b) - x(p.a)).toFixed(1), height: Math.max(0, y(p.y0) - y(p.y1)).toFixed(1) }));
    }
    for (const t of [w.start_ns, w.end_ns]) {
      plot.append(s('line', { class: 'window-edge', x1: x(t), x2: x(t), y1: m.top, y2: m.top + plotH }));
    }
    svg.dataset.t0 = String(view.t0);
    svg.dataset.t1 = String(view.t1);
    svg.dataset.unit = unit.name;
    if (o.onView) o.onView(view.t0, view.t1, unit, view.t1 - view.t0 < T1 - T0);
  };
  const pz = panZoom(svg, { m, plotW, T0, T1, view, draw, anchor: () => (cur >= 0 ? Math.max(view.t0, Math.min(view.t1, clipT(bands[cur].start_ns))) : undefined) });
  keyboardCursor(svg, bands.length, () => cur, (i) => {
    const b = bands[i];
    const start = clipT(b.start_ns);
    const end = clipT(b.end_ns == null ? T1 : b.end_ns);
    // The span follows a band walked to off screen.
    if (end < view.t0 || start > view.t1) pz.show((start + end) / 2 - (view.t1 - view.t0) / 2, view.t1 - view.t0);
    select(i);
  });
  svg.zoom = (factor) => pz.zoom(factor);
  svg.reset = pz.reset;
  draw();
  return svg;
}
