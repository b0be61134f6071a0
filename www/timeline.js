// The runtime timeline (hand-drawn SVG): bytes in use over time for one allocator
// (measured), its capacity, and above the plot two lanes — the module executions and
// the AllocatorRetry waits — drawn to scale (at least 2 px wide, so a short one shows)
// in their own lanes, so that none covers the memory drawn below. The wheel zooms
// around the pointer, a drag pans, and `zoom`/`reset` do it from buttons and keys.

import { s } from './dom.js';
import { clean, tick } from './format.js';
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
  // The narrowest span zoom reaches: 1 µs, or a hundred-thousandth of a long capture
  // (a sub-millisecond execution of a minute-long capture still spans the plot).
  const minSpan = Math.min(T1 - T0, Math.max(1000, (T1 - T0) / 1e5));
  let t0 = T0;
  let t1 = T1;
  const x = (t) => m.left + ((t - t0) / (t1 - t0)) * plotW;
  const timeAt = (px) => t0 + ((px - m.left) / (plotW || 1)) * (t1 - t0);

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
  const visible = (start, dur) => start + dur >= t0 && start <= t1;

  let unit = null;
  let cur = -1;
  const draw = () => {
    axis.replaceChildren();
    plot.replaceChildren();
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

  /** Shows the visible span `[a, a + span]`, kept inside the capture. */
  const show = (a, span) => {
    span = Math.min(T1 - T0, Math.max(minSpan, span));
    a = Math.min(T1 - span, Math.max(T0, a));
    t0 = a;
    t1 = a + span;
    draw();
  };
  /** Zooms by `factor` (< 1: in) keeping time `at` where it is on screen. */
  const zoom = (factor, at = (t0 + t1) / 2) => {
    const span = Math.min(T1 - T0, Math.max(minSpan, (t1 - t0) * factor));
    show(at - ((at - t0) / (t1 - t0)) * span, span);
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
    if (t < t0 || t > t1) show(t - (t1 - t0) / 2, t1 - t0);
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

  // Pointer: a drag pans; otherwise the cursor follows the pointer.
  let drag = null;
  svg.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    drag = { x: svgPoint(svg, e).x, t0, span: t1 - t0, id: e.pointerId };
    svg.setPointerCapture(e.pointerId);
    svg.classList.add('panning');
  });
  svg.addEventListener('pointermove', (e) => {
    const p = svgPoint(svg, e);
    if (drag) {
      show(drag.t0 - ((p.x - drag.x) / plotW) * drag.span, drag.span);
      return;
    }
    if (n > 0 && p.x >= m.left && p.x <= m.left + plotW) setCursor(pointAt(timeAt(p.x)));
  });
  const endDrag = () => {
    drag = null;
    svg.classList.remove('panning');
  };
  svg.addEventListener('pointerup', endDrag);
  svg.addEventListener('pointercancel', endDrag);
  // Wheel: up zooms in, down out, around the pointer; sideways (or with Shift) pans.
  svg.addEventListener(
    'wheel',
    (e) => {
      const p = svgPoint(svg, e);
      if (p.x < m.left || p.x > m.left + plotW) return;
      e.preventDefault();
      const sideways = e.shiftKey ? e.deltaY : e.deltaX;
      if (Math.abs(sideways) > Math.abs(e.shiftKey ? 0 : e.deltaY)) {
        show(t0 + (sideways / plotW) * (t1 - t0), t1 - t0);
        return;
      }
      zoom(Math.exp(Math.max(-1, Math.min(1, e.deltaY / 300))), timeAt(p.x));
    },
    { passive: false },
  );
  svg.addEventListener('keydown', (e) => {
    const at = cur >= 0 ? pts[cur][0] : undefined;
    if (e.key === '+' || e.key === '=') zoom(0.5, at);
    else if (e.key === '-' || e.key === '_') zoom(2, at);
    else if (e.key === '0') show(T0, T1 - T0);
    else return;
    e.preventDefault();
  });
  if (n > 0) keyboardCursor(svg, n, () => cur, setCursor);

  svg.zoom = (factor) => zoom(factor, cur >= 0 ? pts[cur][0] : undefined);
  svg.reset = () => show(T0, T1 - T0);
  draw();
  return svg;
}
