// The runtime timeline, in Chromium, on real captures: devices listed in natural order
// and the one that ran out (else device 0) shown first; the wheel, a drag, the buttons
// and the keys zoom and pan; executions and AllocatorRetry waits drawn to scale in
// lanes above the memory (never over it); every time on the chart and in its hovers in
// the axis's unit; run ids shown unsigned, as the runtime gave them; the buffers live
// during the selected execution drawn as stacked bands, each telling its bytes, shape,
// op and who allocated it when pointed at.
//
//   npm run build && npm test

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { FIXTURES, RESULTS, SHARED, cli, cliJson, dropUrl, labelOverlaps, openPage, pageSuite, runsSoFar, skipReason, waitForRun, writeScenarios } from './helpers.mjs';
import { size } from '../../www/format.js';

const TPU = join(SHARED, 'xprof_tpu_inference_2_clean.xplane.pb');
const CONV = join(SHARED, 'tracelens_jax08_conv_tw003.xplane.pb');
const MULTI = join(SHARED, 'xprof_tf_gpu_multi_worker_2020.xplane.pb');
const ATTENTION = join(SHARED, 'tracelens_jax08_attention_tw003.xplane.pb');
const REACTANT = join(FIXTURES, 'reactant/cyclops_2025_02_05_11_05_24.xplane.pb');
const ERRORS = join(FIXTURES, 'errors');
const absent = (...paths) => paths.filter((p) => !existsSync(p)).map((p) => `${p} is absent`)[0] || false;

const skip = skipReason();
if (skip) console.log(`# SKIP: ${skip}`);

describe('oomlens page: the runtime timeline', { skip: skip || false }, () => {
  const env = pageSuite();
  const clean = env.clean;

  /** Opens a capture on the test server at its runtime tab. */
  async function openRuntime(url) {
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    assert.equal(await dropUrl(page, url, url.split('/').pop()), 'done');
    await page.click('#tab-runtime');
    await page.waitForSelector('#runtime-chart svg.timeline');
    // The pointer's wheel and drags reach what is on screen.
    await page.$eval('#runtime-chart', (el) => el.scrollIntoView({ block: 'center' }));
    return { page, log };
  }

  /** The chart's geometry and visible span: the plot's left edge and width (its clip), t0, t1 (ns), the axis unit. */
  const chartState = (page) =>
    page.$eval('#runtime-chart svg.timeline', (svg) => {
      const clip = svg.querySelector('clipPath rect');
      const box = svg.getBoundingClientRect();
      return {
        left: Number(clip.getAttribute('x')),
        plotW: Number(clip.getAttribute('width')),
        t0: Number(svg.dataset.t0),
        t1: Number(svg.dataset.t1),
        unit: svg.dataset.unit,
        screen: { x: box.left, y: box.top, scale: box.width / svg.viewBox.baseVal.width },
        plotTop: Math.min(...[...svg.querySelectorAll('path.area')].map((p) => p.getBBox().y)),
        ticks: [...svg.querySelectorAll('.time-axis text')].map((t) => t.textContent),
      };
    });
  const options = (page) => page.$$eval('#allocator-select option', (os) => os.map((o) => o.value));

  test('devices in natural order; the timeline opens on device 0', { skip: absent(TPU, CONV) }, async () => {
    for (const [file, want] of [
      [TPU, ['TPU:0', 'TPU:1', 'TPU:2', 'TPU:3']],
      [CONV, ['GPU_0_bfc', 'GPU_1_bfc', 'GPU_2_bfc', 'GPU_3_bfc', 'GPU_4_bfc', 'GPU_5_bfc', 'GPU_6_bfc', 'GPU_7_bfc']],
    ]) {
      // The report lists them in that order too, so that the CLI and the page agree.
      const listed = cliJson(file).runtime.allocators.map((a) => a.name);
      assert.deepEqual(listed, want, `${file}: the report's own order`);
      const { page, log } = await openRuntime(`__shared__/${file.split('/').pop()}`);
      assert.deepEqual(await options(page), want, 'natural order');
      assert.equal(await page.$eval('#allocator-select', (s) => s.value), want[0], 'device 0 first');
      clean(log);
      await page.close();
    }
  });

  test('the device the error message says ran out is the one shown, pool devices before the host pool', { skip: absent(MULTI, ERRORS) }, async () => {
    const { page, log } = await openRuntime('__shared__/xprof_tf_gpu_multi_worker_2020.xplane.pb');
    assert.deepEqual(await options(page), ['GPU_1_bfc', 'GPU_4_bfc', 'GPU_6_bfc', 'gpu_host_bfc'], 'devices by number, then the host pool');
    assert.equal(await page.$eval('#allocator-select', (s) => s.value), 'GPU_1_bfc', 'no device 0 here: the first device');
    // A real BFC failure message (tests/fixtures/errors), its allocator renamed to one of
    // this capture's devices: the only edit, so that the message names a device other than the first.
    const file = readdirSync(ERRORS).find((n) => n.startsWith('30-') && n.endsWith('.txt'));
    const message = readFileSync(join(ERRORS, file), 'utf8');
    assert.match(message, /GPU_0_bfc/);
    const runs = await runsSoFar(page);
    await page.click('#tab-diagnosis');
    await page.$eval('#error-box', (d) => (d.open = true));
    await page.fill('#error-text', message.replaceAll('GPU_0_bfc', 'GPU_4_bfc'));
    await page.click('#error-apply');
    assert.equal(await waitForRun(page, runs), 'done');
    await page.click('#tab-runtime');
    assert.equal(await page.$eval('#allocator-select', (s) => s.value), 'GPU_4_bfc', 'the allocator the message names');
    // A device the user picks stays picked when the same capture is analyzed again.
    await page.selectOption('#allocator-select', 'GPU_6_bfc');
    const again = await runsSoFar(page);
    await page.click('#tab-diagnosis');
    await page.click('#error-apply');
    assert.equal(await waitForRun(page, again), 'done');
    assert.equal(await page.$eval('#allocator-select', (s) => s.value), 'GPU_6_bfc');
    clean(log);
    await page.close();
  });

  test('the wheel zooms around the pointer, a drag pans, buttons and keys zoom and reset', { skip: absent(TPU) }, async () => {
    const { page, log } = await openRuntime('__shared__/xprof_tpu_inference_2_clean.xplane.pb');
    const whole = await chartState(page);
    assert.equal(await page.$eval('#zoom-reset', (b) => b.disabled), true, 'nothing to reset yet');
    const json = cliJson(TPU);
    const last = json.runtime.executions.at(-1);
    assert.ok(whole.t0 <= json.runtime.executions[0].start_ns && whole.t1 >= last.start_ns + last.duration_ns, 'the whole capture at first');

    // Wheel up at 30% of the plot: a smaller span, the time under the pointer kept in place.
    const px = whole.left + 0.3 * whole.plotW;
    const at = whole.t0 + 0.3 * (whole.t1 - whole.t0);
    await page.mouse.move(whole.screen.x + px * whole.screen.scale, whole.screen.y + (whole.plotTop + 20) * whole.screen.scale);
    await page.mouse.wheel(0, -300);
    await page.waitForFunction((t1) => Number(document.querySelector('#runtime-chart svg.timeline').dataset.t1) !== t1, whole.t1);
    const zoomed = await chartState(page);
    const span = zoomed.t1 - zoomed.t0;
    assert.ok(Math.abs(span / (whole.t1 - whole.t0) - Math.exp(-1)) < 0.01, `zoomed in: ${span} of ${whole.t1 - whole.t0}`);
    assert.ok(Math.abs(zoomed.t0 + 0.3 * span - at) < span * 0.001, 'the time under the pointer stays under it');
    assert.equal(await page.$eval('#zoom-reset', (b) => b.disabled), false);
    assert.match(await page.textContent('#runtime-range'), /^showing \S+ \S+ – \S+ \S+$/);

    // A drag 100 px to the right shows what was before: the span moves back by 100 px worth.
    await page.mouse.down();
    await page.mouse.move(whole.screen.x + (px + 100) * whole.screen.scale, whole.screen.y + (whole.plotTop + 20) * whole.screen.scale, { steps: 5 });
    await page.mouse.up();
    const panned = await chartState(page);
    assert.ok(Math.abs(panned.t1 - panned.t0 - span) < span * 1e-9, 'a drag keeps the span');
    assert.ok(Math.abs(zoomed.t0 - panned.t0 - (100 / zoomed.plotW) * span) < span * 0.002, `panned by 100 px: ${zoomed.t0 - panned.t0}`);

    // The buttons, then the keys.
    await page.click('#zoom-in');
    assert.ok(Math.abs((await chartState(page)).t1 - (await chartState(page)).t0 - span / 2) < span * 1e-6, 'Zoom in halves the span');
    await page.click('#zoom-out');
    await page.click('#zoom-reset');
    const reset = await chartState(page);
    assert.deepEqual([reset.t0, reset.t1], [whole.t0, whole.t1], 'Reset shows the whole capture');
    await page.focus('#runtime-chart svg.timeline');
    await page.keyboard.press('+');
    await page.keyboard.press('+');
    assert.ok(Math.abs(((await chartState(page)).t1 - (await chartState(page)).t0) / (whole.t1 - whole.t0) - 0.25) < 1e-6, 'the + key zooms in');
    await page.keyboard.press('0');
    assert.deepEqual(Object.values(await page.$eval('#runtime-chart svg.timeline', (s) => ({ t0: Number(s.dataset.t0), t1: Number(s.dataset.t1) }))), [whole.t0, whole.t1], 'the 0 key resets');
    clean(log);
    await page.close();
  });

  /** Every band of the chart against the report: where it starts, its width, its lane. */
  async function checkBands(page, executions, waits) {
    const st = await chartState(page);
    const bands = await page.$$eval('#runtime-chart svg.timeline rect.exec, #runtime-chart svg.timeline rect.retry', (rs) =>
      rs.map((r) => ({ cls: r.getAttribute('class'), x: Number(r.getAttribute('x')), w: Number(r.getAttribute('width')), bottom: r.getBBox().y + r.getBBox().height, title: r.querySelector('title').textContent })),
    );
    const span = st.t1 - st.t0;
    const inView = (e) => e.start_ns + (e.duration_ns || 0) >= st.t0 && e.start_ns <= st.t1;
    const want = [...executions.filter(inView), ...waits.filter(inView)];
    assert.equal(bands.length, want.length, 'one band per execution and wait in view');
    bands.forEach((b, i) => {
      const e = want[i];
      const x = st.left + ((e.start_ns - st.t0) / span) * st.plotW;
      const w = Math.max(2, ((e.duration_ns || 0) / span) * st.plotW);
      assert.ok(Math.abs(b.x - x) < 0.11 && Math.abs(b.w - w) < 0.11, `band ${i} to scale: x ${b.x} for ${x}, width ${b.w} for ${w}`);
      assert.ok(b.bottom < st.plotTop, `band ${i} in its lane, above the memory drawn (${b.bottom} < ${st.plotTop})`);
      // Its hover says when, in the axis's unit.
      const units = [...b.title.matchAll(/(?:at|for|waited) [\d.]+ (s|ms|µs|ns)\b/g)].map((m) => m[1]);
      assert.ok(units.length >= 2 && units.every((u) => u === st.unit), `"${b.title}" in ${st.unit}`);
    });
    assert.ok(st.ticks.length >= 2 && st.ticks.every((t) => t.endsWith(` ${st.unit}`)), `ticks in ${st.unit}: ${st.ticks}`);
    return { st, bands };
  }

  test('executions and waits are bands to scale in lanes above the memory; hovers and the readout in the axis\'s unit', { skip: absent(TPU) }, async () => {
    // 105 executions, 100 of one module back to back (a solid comb across the chart, before).
    const json = cliJson(TPU);
    const executions = json.runtime.executions;
    assert.ok(executions.length >= 100);
    const { page, log } = await openRuntime('__shared__/xprof_tpu_inference_2_clean.xplane.pb');
    const whole = await checkBands(page, executions, json.runtime.retry.waits);
    // Zoomed in around a run of short executions, they come apart, each still to scale.
    const mid = executions[Math.floor(executions.length / 2)];
    const { left, plotW, t0, t1, screen, plotTop } = whole.st;
    const px = left + ((mid.start_ns - t0) / (t1 - t0)) * plotW;
    await page.mouse.move(screen.x + px * screen.scale, screen.y + (plotTop + 20) * screen.scale);
    for (let k = 0; k < 4; k++) {
      const before = (await chartState(page)).t1;
      await page.mouse.wheel(0, -300);
      await page.waitForFunction((t) => Number(document.querySelector('#runtime-chart svg.timeline').dataset.t1) !== t, before);
    }
    const zoomed = await checkBands(page, executions, json.runtime.retry.waits);
    assert.ok(zoomed.st.t1 - zoomed.st.t0 < (t1 - t0) / 50, 'zoomed in over 50×');
    assert.ok(zoomed.bands.length >= 1 && zoomed.bands.length < whole.bands.length / 10, `a few executions in view (${zoomed.bands.length}), each drawn to scale`);
    // The readout under the pointer uses the axis's unit too.
    await page.mouse.move(screen.x + (px + 5) * screen.scale, screen.y + (plotTop + 20) * screen.scale);
    const readout = await page.textContent('#runtime-readout');
    assert.match(readout, new RegExp(` at [\\d.]+ ${zoomed.st.unit}: `), readout);
    await page.screenshot({ path: join(RESULTS, 'timeline-zoomed.png'), fullPage: false });
    clean(log);
    await page.close();
  });

  test('an execution that launched no kernel is a red band in its lane, the memory under it in view', async (t) => {
    const scenario = writeScenarios().find((c) => c.name === 'attention_plan_too_big.xplane.pb');
    if (!scenario) {
      t.skip('the scenario captures could not be written (see the SKIP line above)');
      return;
    }
    const json = cliJson(scenario.path);
    const failed = json.runtime.executions.filter((e) => e.launched_kernels === false);
    assert.ok(failed.length >= 1, 'the scenario has an execution that launched no kernel');
    const { page, log } = await openRuntime(scenario.url);
    const { st, bands } = await checkBands(page, json.runtime.executions, json.runtime.retry.waits);
    const red = bands.filter((b) => b.cls.includes('nokernel'));
    assert.equal(red.length, failed.length);
    for (const b of red) assert.match(b.title, new RegExp(`for [\\d.]+ ${st.unit}: launched no kernel$`));
    await page.screenshot({ path: join(RESULTS, 'timeline-no-kernel.png'), fullPage: false });
    clean(log);
    await page.close();
  });

  /** The bands drawn: their classes, and a point inside the widest step of each (on screen). */
  const drawnBands = (page) =>
    page.$$eval('#bands-chart svg.bands polygon.band', (ps) =>
      ps.map((p) => {
        const xy = p.getAttribute('points').trim().split(/\s+/).map((pair) => pair.split(',').map(Number));
        // The top edge comes first, two points a step; the bottom edge back, in reverse.
        const steps = xy.length / 4;
        let best = { w: -1 };
        for (let k = 0; k < steps; k++) {
          const [[xa, top], [xb]] = [xy[2 * k], xy[2 * k + 1]];
          const bottom = xy[xy.length - 1 - 2 * k][1];
          if (xb - xa > best.w) best = { w: xb - xa, x: (xa + xb) / 2, y: (top + bottom) / 2, h: bottom - top };
        }
        const m = p.ownerSVGElement.getScreenCTM();
        return { index: Number(p.dataset.index), cls: p.getAttribute('class'), w: best.w, h: best.h, sx: m.a * best.x + m.e, sy: m.d * best.y + m.f };
      }),
    );

  for (const [file, url] of [
    [REACTANT, '__fixtures__/reactant/cyclops_2025_02_05_11_05_24.xplane.pb'],
    [ATTENTION, '__shared__/tracelens_jax08_attention_tw003.xplane.pb'],
  ]) {
    test(`the buffers live during the selected execution are bands; pointing at one tells its bytes, shape, op and source (${file.split('/').pop()})`, { skip: absent(file) }, async () => {
      const json = cliJson(file);
      const eb = json.runtime.execution_bands;
      assert.ok(eb && eb.devices.length, 'the report has bands');
      const { page, log } = await openRuntime(url);
      await page.waitForSelector('#bands-chart svg.bands');
      await page.$eval('#bands-chart', (el) => el.scrollIntoView({ block: 'center' }));
      const pool = await page.$eval('#allocator-select', (el) => el.value);
      const device = eb.devices.find((d) => d.allocator === pool);
      assert.ok(device, `bands for the pool shown, ${pool}`);
      const drawn = await drawnBands(page);
      assert.equal(drawn.length, device.bands.length, 'one band per buffer listed');
      for (const d of drawn) assert.match(d.cls, new RegExp(`band-${device.bands[d.index].kind}\\b`));
      // The widest band that is big enough to point at: its words in the readout.
      const target = drawn.filter((d) => d.w > 3 && d.h > 3).sort((a, b) => device.bands[b.index].bytes - device.bands[a.index].bytes)[0];
      assert.ok(target, 'a band large enough to point at');
      const band = device.bands[target.index];
      await page.mouse.move(target.sx, target.sy);
      await page.waitForFunction(() => document.querySelector('#bands-readout').textContent.includes('allocated by'));
      const readout = await page.textContent('#bands-readout');
      const unit = await page.$eval('#bands-chart svg.bands', (svg) => svg.dataset.unit);
      assert.ok(readout.startsWith(size(band.bytes)), `bytes first: ${readout}`);
      assert.ok(readout.includes(band.shape || 'shape not recorded'), `its shape: ${readout}`);
      if (band.op) assert.ok(readout.includes(`op ${band.op}`), `its op: ${readout}`);
      assert.ok(readout.includes(`allocated by ${band.source} at `), `who allocated it: ${readout}`);
      const times = [...readout.matchAll(/ at [\d.]+ (s|ms|µs|ns)\b/g)].map((m) => m[1]);
      assert.ok(times.length >= 1 && times.every((u) => u === unit), `times in the axis's unit ${unit}: ${readout}`);
      // Every band has its words as a tooltip too; the chart draws no label over another.
      const titles = await page.$$eval('#bands-chart polygon.band title', (ts) => ts.map((t) => t.textContent));
      assert.ok(titles.every((t) => t.includes('allocated by')));
      const { overlaps } = await labelOverlaps(page, '#bands-chart');
      assert.deepEqual(overlaps, []);
      // The arrow keys walk the bands in allocation order.
      await page.focus('#bands-chart svg.bands');
      await page.keyboard.press('Home');
      assert.ok((await page.textContent('#bands-readout')).startsWith(size(device.bands[0].bytes)));
      await page.screenshot({ path: join(RESULTS, `bands-${file.split('/').pop()}.png`), fullPage: false });
      clean(log);
      await page.close();
    });
  }

  test('a buffer whose allocation event names its shape and op tells them when pointed at (TPU)', { skip: absent(TPU) }, async () => {
    const psum = 'jit__psum(9646411105960254074)';
    const eb = cliJson(TPU, ['--module', psum]).runtime.execution_bands;
    const { page, log } = await openPage(env.browser.context, `${env.origin}/?url=__shared__/xprof_tpu_inference_2_clean.xplane.pb#module=${encodeURIComponent(psum)}&tab=runtime`, { waitReady: false });
    assert.equal(await waitForRun(page, 0), 'done');
    await page.waitForSelector('#bands-chart svg.bands');
    await page.$eval('#bands-chart', (el) => el.scrollIntoView({ block: 'center' }));
    const pool = await page.$eval('#allocator-select', (el) => el.value);
    assert.equal(pool, 'TPU:0', 'device 0 first');
    const device = eb.devices.find((d) => d.allocator === pool);
    const drawn = await drawnBands(page);
    const target = drawn.find((d) => device.bands[d.index].shape === 'f32[5,1024,1024,256]' && device.bands[d.index].kind === 'kept');
    assert.ok(target && target.w > 3 && target.h > 3, 'the psum output is drawn');
    await page.mouse.move(target.sx, target.sy);
    await page.waitForFunction(() => document.querySelector('#bands-readout').textContent.includes('f32[5,1024,1024,256]'));
    const readout = await page.textContent('#bands-readout');
    assert.ok(readout.startsWith('5.00 GiB f32[5,1024,1024,256], op dummy; allocated by jit__psum(9646411105960254074) execution 3 at '), readout);
    clean(log);
    await page.close();
  });

  test('run ids are shown unsigned, as the runtime gave them', async () => {
    const file = join(FIXTURES, 'attention_train/attention_train.xplane.pb');
    const json = cliJson(file);
    // The report stores run ids signed: this capture's read below zero there.
    const ids = json.runtime.executions.map((e) => e.run_id);
    const { page, log } = await openPage(env.browser.context, `${env.origin}/`);
    assert.equal(await dropUrl(page, '__fixtures__/attention_train/attention_train.xplane.pb', 'attention_train.xplane.pb'), 'done');
    await page.click('#tab-runtime');
    const column = await page.$$eval('#executions-table thead th', (ths) => ths.findIndex((th) => th.textContent === 'run id'));
    const shown = await page.$$eval('#executions-table tbody tr', (trs, j) => trs.map((tr) => tr.cells[j].textContent), column);
    assert.deepEqual(shown, ids.map((id) => (id == null ? '—' : BigInt.asUintN(64, BigInt(id)).toString())));
    assert.ok(shown.length && shown.every((id) => !id.startsWith('-')), `no negative run id: ${shown}`);
    // The engine's view prints them so (the page only renders it), and so does the CLI's HTML.
    const html = cli(file, ['--format', 'html']).stdout;
    for (const id of shown.filter((x) => x !== '—')) assert.ok(html.includes(`>${id}</td>`), `the CLI's HTML prints run id ${id}`);
    assert.doesNotMatch(html, />-\d{6,}<\/td>/, 'no negative run id in the CLI\'s HTML');
    clean(log);
    await page.close();
  });
  test('figures that could be read as one say which is which; lists add up to their total; no trend claimed from a series that goes up and down', { skip: absent(TPU, ATTENTION) }, async () => {
    // Attention: the plan's peak (192 MiB) and the pool's measured peak (432 MiB) are
    // both in the verdict, each labelled, with the note saying why they differ; its
    // selected module's starts go 304 → 288 → 304 MiB: no growth figure.
    const json = cliJson(ATTENTION);
    const { page, log } = await openRuntime('__shared__/tracelens_jax08_attention_tw003.xplane.pb');
    const figures = await page.$$eval('#headline-figures li', (lis) => lis.map((li) => [li.dataset.name, li.querySelector('strong').textContent, li.textContent]));
    const named = Object.fromEntries(figures.map(([n, shown, all]) => [n, { shown, all }]));
    assert.equal(named.peak.shown, json.headline.figures.find((f) => f.name === 'peak').shown);
    assert.equal(named['peak in use'].shown, json.headline.figures.find((f) => f.name === 'peak_in_use').shown);
    assert.match(named['peak in use'].all, /measured/);
    assert.match(named.peak.all, /read/);
    const note = await page.$eval('#headline-note', (p) => (p.hidden ? '' : p.textContent));
    assert.equal(note, json.headline.note);
    assert.match(note, /more at its peak/);
    assert.equal(json.runtime.growth_per_execution_bytes, null);
    assert.doesNotMatch(await page.textContent('#panel-runtime'), /growth per execution: [−+]\d/);
    clean(log);
    await page.close();
    // TPU: what is live at the last start adds up to the bytes in use then, the
    // runtime's reservation a row of its own, with no count of arrays it never had.
    const tpu = cliJson(TPU);
    const second = await openRuntime('__shared__/xprof_tpu_inference_2_clean.xplane.pb');
    const rows = await second.page.$$eval('#live-groups tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    assert.equal(rows.length, tpu.runtime.live_at_last_execution.length);
    const reserved = rows.find((r) => r[2].startsWith('reserved by the runtime'));
    assert.ok(reserved, `a reserved row: ${JSON.stringify(rows)}`);
    assert.equal(reserved[1], '—', 'no array count for memory not seen as arrays');
    assert.ok(rows.every((r) => r[1] !== '0'), 'no "0 arrays"');
    const sum = tpu.runtime.live_at_last_execution.reduce((t, g) => t + g.bytes, 0);
    assert.equal(sum, tpu.runtime.in_use_at_selected_starts.at(-1), 'the groups add up to the bytes in use');
    const title = await second.page.$$eval('#panel-runtime h3', (hs) => hs.map((x) => x.textContent).find((x) => x.startsWith('Live at the start')));
    // The same title as the CLI's text report, which states the total the rows add up to.
    assert.ok(cli(TPU).stdout.includes(`  ${title.charAt(0).toLowerCase()}${title.slice(1).replace(/(measured)$/, '').trim()}:`), title);
    clean(second.log);
    await second.page.close();
  });
});
