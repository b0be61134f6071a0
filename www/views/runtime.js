// The runtime tab: what the allocators and executions measured — bytes in use over
// time with the executions and AllocatorRetry waits, what was live at the last
// execution and who allocated it, host events in between, every execution listed —
// the buffers live during the selected module's last execution as stacked bands, and
// device memory profiles when they were given.

import { h, fill, text } from '../dom.js';
import { clean, size } from '../format.js';
import { $, state } from '../state.js';
import { runtimeChart, bandsChart } from '../timeline.js';
import { barsChart } from '../bars.js';
import { label, viewTable, mount, scroller, token } from './common.js';
import { profilesSection } from './inputs.js';

const capitalize = (s) => s.charAt(0).toUpperCase() + s.slice(1);

export function renderRuntime(r, v) {
  const root = $('runtime-content');
  const rv = v.runtime;
  const rt = r && r.runtime;
  const profiles = v.profiles ? profilesSection(v.profiles) : null;
  if (!rv) {
    fill(root, profiles || h('p', { class: 'empty' }, 'No runtime section: the capture has no allocator or execution events (see the diagnosis).'));
    return;
  }
  const selected = v.module.label;
  const parts = [
    h('h2', null, 'Runtime', label('measured')),
    h(
      'ul',
      { class: 'lines', id: 'runtime-lines' },
      rv.allocators.map((a) => h('li', { class: 'mono' }, clean(a, 300))),
      rv.device_memory ? h('li', null, rv.device_memory) : null,
      h('li', null, rv.counts),
    ),
  ];
  if (rv.retry) {
    parts.push(
      h('p', { class: 'note', id: 'retry-note' }, `AllocatorRetry: ${rv.retry}`, label('measured')),
      rv.waits.length ? h('ul', { class: 'lines' }, rv.waits.map((w) => h('li', { class: 'text' }, clean(w, 300)))) : null,
    );
  }
  if (rv.in_use_at_starts) {
    parts.push(
      h('h3', null, 'In use at each execution start of ', h('span', { class: 'mono' }, clean(selected || '', 200)), label('measured')),
      h('p', { class: 'mono', id: 'in-use' }, rv.in_use_at_starts),
    );
  }
  if (rv.growth) parts.push(h('p', { id: 'growth' }, 'Growth per execution: ', h('strong', null, rv.growth), label('measured')));

  // The engine lists pools in natural order, devices first: the CLI and the page agree.
  const withEvents = ((rt && rt.allocators) || []).filter((a) => a.timeline && a.timeline.length);
  if (withEvents.length) {
    const pick = h('select', { id: 'allocator-select' }, withEvents.map((a) => h('option', { value: a.name }, clean(a.name, 120))));
    pick.value = withEvents.some((a) => a.name === state.allocator) ? state.allocator : defaultAllocator(withEvents, r.error);
    const box = h('div', { class: 'chart-box', id: 'runtime-chart' });
    const readout = h('p', { class: 'chart-readout', id: 'runtime-readout', 'aria-live': 'polite' }, 'Point at the chart, or focus it and use the arrow keys.');
    const range = h('span', { class: 'muted', id: 'runtime-range' });
    const chart = () => box.querySelector('svg.timeline');
    const button = (id, words, title, act) => {
      const b = h('button', { type: 'button', id, title }, words);
      b.addEventListener('click', () => chart() && act(chart()));
      return b;
    };
    const reset = button('zoom-reset', 'Reset zoom', 'Show the whole capture (key 0)', (c) => c.reset());
    const draw = (width) => {
      const a = withEvents.find((x) => x.name === pick.value) || withEvents[0];
      return runtimeChart({
        timeline: a.timeline,
        capacity: a.capacity_bytes,
        executions: rt.executions || [],
        waits: (rt.retry && rt.retry.waits) || [],
        selected,
        width,
        onCursor: (i, unit) => fill(readout, `${clean(a.name, 80)} at ${unit.at(a.timeline[i][0] / 1000)}: `, h('strong', null, size(a.timeline[i][1])), ' in use'),
        onView: (t0, t1, unit, zoomed) => {
          text(range, `showing ${unit.at(t0)} – ${unit.at(t1)}${zoomed ? '' : ', the whole capture'}`);
          reset.disabled = !zoomed;
        },
      });
    };
    mount('runtime', box, draw);
    const bands = rt.execution_bands ? bandsSection(rt.execution_bands, () => pick.value) : null;
    pick.addEventListener('change', () => {
      state.allocator = pick.value;
      box.dataset.width = '';
      if (bands) bands.box.dataset.width = '';
      for (const d of state.mounts.runtime || []) d();
    });
    parts.push(
      h('h3', null, 'Bytes in use over time', label('measured')),
      withEvents.length > 1 ? h('div', { class: 'alloc-pick' }, h('label', { for: 'allocator-select' }, 'Allocator'), pick) : h('p', { class: 'mono' }, clean(withEvents[0].name, 120)),
      h('p', { class: 'muted' }, `Above the chart, each execution is a band from its start to its end, to scale (blue: the selected module; red: launched no kernel; grey: other modules). ${rv.retry ? 'Orange bands: AllocatorRetry waits (the allocator had no free memory and waited). ' : ''}Dashed: the allocator capacity. The wheel zooms, a drag pans.`),
      h(
        'div',
        { class: 'zoom', role: 'group', 'aria-label': 'Zoom the timeline' },
        button('zoom-in', 'Zoom in', 'Zoom in (key +)', (c) => c.zoom(0.5)),
        button('zoom-out', 'Zoom out', 'Zoom out (key −)', (c) => c.zoom(2)),
        reset,
        range,
      ),
      readout,
      box,
      bands ? bands.parts : null,
    );
  }
  const groups = rv.live_groups || [];
  if (groups.length) {
    const box = h('div', { class: 'chart-box' });
    mount('runtime', box, (width) => barsChart({ name: 'Live at the start of the last execution, by who allocated it', items: groups.map((g) => ({ label: g.origin, bytes: g.bytes, shown: g.shown })), width, labelWidth: Math.min(420, Math.round(width * 0.5)) }));
    parts.push(
      h('h3', null, capitalize(rv.live_groups_title || 'live at the start of the last execution, by who allocated it'), label('measured')),
      box,
      scroller(
        h(
          'table',
          { class: 'data', id: 'live-groups' },
          h('thead', null, h('tr', null, h('th', { class: 'num', scope: 'col' }, 'bytes'), h('th', { class: 'num', scope: 'col' }, 'arrays'), h('th', { scope: 'col' }, 'allocated by'))),
          h(
            'tbody',
            null,
            groups.map((g) => h('tr', null, h('td', { class: 'num' }, g.shown), h('td', { class: 'num', title: g.count == null ? 'not seen one by one: allocated before the capture, or reserved by the runtime' : null }, g.count == null ? '—' : String(g.count)), h('td', { class: 'nowrap' }, token(clean(g.origin, 300), null, { class: 'wide' }), g.inputs ? h('span', { class: 'muted' }, ` (${clean(g.inputs, 200)})`) : null))),
          ),
        ),
      ),
      rv.live_groups_more ? h('p', { class: 'muted more' }, rv.live_groups_more) : null,
    );
  }
  const events = rv.host_events || [];
  if (events.length) {
    parts.push(
      h('h3', null, 'Host events between the last two executions', label('measured')),
      scroller(
        h(
          'table',
          { class: 'data', id: 'host-events' },
          h('thead', null, h('tr', null, h('th', { class: 'num', scope: 'col' }, 'count'), h('th', { class: 'num', scope: 'col' }, 'total time'), h('th', { scope: 'col' }, 'event'))),
          h('tbody', null, events.map((e) => h('tr', null, h('td', { class: 'num' }, `${e.count}×`), h('td', { class: 'num' }, e.total), h('td', null, token(clean(e.name, 200)))))),
        ),
      ),
    );
  }
  if (rv.executions) {
    // Run ids come unsigned from the engine, as the CLI's HTML prints them.
    parts.push(h('details', { id: 'executions' }, h('summary', null, rv.executions.title), viewTable(rv.executions, { id: 'executions-table', titled: false })));
  }
  if (profiles) parts.push(profiles);
  fill(root, parts);
}

/**
 * The buffers live during the selected module's last execution in the pool picked
 * above, as stacked bands (`bandsChart`): pointing at a band, or walking to it with the
 * arrow keys, shows its bytes, shape, op, who allocated it and when, in the axis's unit.
 */
function bandsSection(eb, picked) {
  const box = h('div', { class: 'chart-box', id: 'bands-chart' });
  const readout = h('p', { class: 'chart-readout', id: 'bands-readout', 'aria-live': 'polite' }, 'Point at a band, or focus the chart and use the arrow keys.');
  const note = h('p', { class: 'muted', id: 'bands-note' });
  const range = h('span', { class: 'muted', id: 'bands-range' });
  const reset = h('button', { type: 'button', id: 'bands-zoom-reset', title: 'Show the whole execution (key 0)' }, 'Reset zoom');
  reset.addEventListener('click', () => {
    const svg = box.querySelector('svg.bands');
    if (svg) svg.reset();
  });
  mount('runtime', box, (width) => {
    const device = eb.devices.find((d) => d.allocator === picked());
    if (!device) {
      text(note, `No buffer of ${clean(picked() || '', 120)} was live during ${clean(eb.execution, 200)}.`);
      text(readout, '');
      return h('p', { class: 'empty' }, 'No bands for this pool.');
    }
    const held = device.smaller_count ? `${device.smaller_count} smaller buffers, the runtime's reservation` : "the runtime's reservation, memory from before the events kept";
    text(note, `${device.bands.length} buffers of ${clean(device.allocator, 120)} live during ${clean(eb.execution, 200)} (dashed lines: its start and end), each a band from its allocation to its free, stacked in allocation order. Blue: allocated before it (arguments, state); orange: allocated and freed in it; green: allocated in it and still live at its end. Grey, on top, is what no band holds (${held}), so the top edge is the bytes in use. The wheel zooms, a drag pans.`);
    return bandsChart({
      device,
      window: eb,
      width,
      onBand: (band, unit, words) => fill(readout, band ? h('span', { class: 'mono' }, words) : ''),
      onView: (t0, t1, unit, zoomed) => {
        text(range, `showing ${unit.at(t0)} – ${unit.at(t1)}${zoomed ? '' : ', the execution and a tenth of its length either side'}`);
        reset.disabled = !zoomed;
      },
    });
  });
  const parts = [
    h('h3', null, 'Buffers live during the execution', label('measured')),
    note,
    h('div', { class: 'zoom', role: 'group', 'aria-label': 'Zoom the bands' }, reset, range),
    readout,
    box,
  ];
  return { box, parts };
}

/** The device an allocator's name numbers (`GPU_3_bfc`, `TPU:3`: 3). */
const deviceNumber = (name) => {
  const m = /\d+/.exec(name);
  return m ? Number(m[0]) : null;
};

/**
 * The allocator the timeline opens on: the device the error message says ran out (its
 * allocator by name, else its device ordinal), else device 0, else the first.
 */
function defaultAllocator(allocators, error) {
  const devices = allocators.filter((a) => a.kind !== 'host');
  const named = error && error.allocator && devices.find((a) => a.name === error.allocator.name);
  const ordinal = error && error.device_ordinal != null ? error.device_ordinal : 0;
  const chosen = named || devices.find((a) => deviceNumber(a.name) === ordinal) || devices.find((a) => deviceNumber(a.name) === 0) || allocators[0];
  return chosen.name;
}
