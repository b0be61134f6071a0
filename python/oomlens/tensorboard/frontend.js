// The OOM tab's frontend: the ES module TensorBoard loads in the plugin's iframe
// (data/plugin_entry.html?name=oomlens, whose <base> is data/plugin/oomlens/), calling
// render(). It lists the runs under plugins/profile (the plugin's `runs` route) and
// shows the oomlens page (`page/index.html`) on the host file picked, in an iframe of
// its own: `page/index.html?url=../capture/<run>/<host>.xplane.pb`. Everything comes
// from TensorBoard's origin; names from the log directory are set as text only.

const CSS = `
:root { color-scheme: light dark; }
html, body { height: 100%; margin: 0; }
body { display: flex; flex-direction: column; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.oomlens-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 12px; padding: 8px 12px; border-bottom: 1px solid rgba(128, 128, 128, 0.35); }
.oomlens-bar label { font-weight: 600; }
.oomlens-bar select { max-width: 40vw; font: inherit; }
.oomlens-bar button { font: inherit; }
.oomlens-status { flex: 1 1 20em; min-width: 0; overflow-wrap: anywhere; opacity: 0.85; }
.oomlens-status.error { color: #c5221f; opacity: 1; }
.oomlens-page { flex: 1 1 auto; width: 100%; border: 0; min-height: 0; }
`;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

function size(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}

export async function render() {
  document.title = 'OOM — oomlens';
  document.head.append(el('style', {}, CSS));
  const runSelect = el('select', { id: 'oomlens-run', 'aria-label': 'Run' });
  const hostSelect = el('select', { id: 'oomlens-host', 'aria-label': 'Host' });
  const open = el('button', { type: 'button', id: 'oomlens-open' }, 'Open');
  const refresh = el('button', { type: 'button', id: 'oomlens-refresh', title: 'List the runs again' }, 'Refresh');
  const newTab = el('a', { id: 'oomlens-new-tab', target: '_blank', rel: 'noopener noreferrer', hidden: '' }, 'open in a new tab');
  const status = el('span', { id: 'oomlens-status', class: 'oomlens-status', role: 'status', 'aria-live': 'polite' });
  const frame = el('iframe', { id: 'oomlens-page', class: 'oomlens-page', title: 'oomlens report', hidden: '' });
  document.body.append(
    el('div', { class: 'oomlens-bar' }, el('label', { for: 'oomlens-run' }, 'Run'), runSelect, el('label', { for: 'oomlens-host' }, 'Host'), hostSelect, open, refresh, newTab, status),
    frame,
  );

  let listing = { runs: [] };
  const say = (text, error = false) => {
    status.textContent = text;
    status.className = `oomlens-status${error ? ' error' : ''}`;
  };
  const current = () => {
    const run = listing.runs[Number(runSelect.value)];
    return run && run.hosts[Number(hostSelect.value)] ? { run, host: run.hosts[Number(hostSelect.value)] } : null;
  };
  const fillHosts = () => {
    const run = listing.runs[Number(runSelect.value)];
    hostSelect.replaceChildren(...(run ? run.hosts : []).map((h, i) => el('option', { value: String(i) }, `${h.host} (${size(h.bytes)})`)));
    open.disabled = !run;
  };
  const show = () => {
    const pick = current();
    if (!pick) return;
    if (!listing.page) {
      say('This oomlens install has no page files (the wheel was built without dist/): rebuild it after `node scripts/build.mjs`.', true);
      return;
    }
    const src = `page/index.html?url=${encodeURIComponent(`../${pick.host.url}`)}`;
    frame.hidden = false;
    frame.src = src;
    newTab.href = src;
    newTab.hidden = false;
    frame.dataset.run = pick.run.run;
    frame.dataset.host = pick.host.host;
    say(`${pick.run.run} / ${pick.host.file} (${size(pick.host.bytes)}), analyzed in this browser`);
  };
  const load = async () => {
    say('Listing the runs…');
    try {
      const response = await fetch('runs', { credentials: 'same-origin' });
      if (!response.ok) throw new Error(`${response.status} ${(await response.text()).trim()}`);
      listing = await response.json();
    } catch (e) {
      say(`Could not list the runs: ${e.message || e}`, true);
      return;
    }
    const before = runSelect.selectedOptions[0] ? runSelect.selectedOptions[0].textContent : null;
    runSelect.replaceChildren(...listing.runs.map((r, i) => el('option', { value: String(i) }, `${r.run} (${r.hosts.length} host${r.hosts.length === 1 ? '' : 's'})`)));
    const keep = listing.runs.findIndex((r, i) => runSelect.options[i].textContent === before);
    if (keep >= 0) runSelect.value = String(keep);
    fillHosts();
    document.documentElement.dataset.runs = String(listing.runs.length);
    if (!listing.local) say(`The log directory ${listing.logdir || '(none)'} is not a local folder: the OOM tab reads captures from local log directories only.`, true);
    else if (!listing.runs.length) say(`No capture under ${listing.logdir}: jax.profiler.trace(logdir) writes plugins/profile/<run>/<host>.xplane.pb.`);
    else say('Pick a run and a host: the capture is analyzed in this browser, nothing leaves the machine.');
  };

  runSelect.addEventListener('change', fillHosts);
  hostSelect.addEventListener('change', show);
  open.addEventListener('click', show);
  refresh.addEventListener('click', load);
  await load();
  document.documentElement.dataset.ready = 'true';
}
