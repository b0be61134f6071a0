// Formatting for the charts only (axis ticks, cursor readouts: numbers drawn along a
// series, which the report does not word), and untrusted capture strings made safe to
// show (src/report/mod.rs `clean`). Every figure the report states comes formatted in
// the view (src/report/view.rs); nothing here words a finding.

const MIB = 1048576;
const GIB = 1073741824;
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];

/** The value as `size` prints it: two decimals while they read below 100, else one. */
function rounded(v) {
  const two = Math.round(v * 100) / 100;
  return two < 100 ? two : Math.round(v * 10) / 10;
}

/**
 * A size by the report's one rule (src/units.rs, docs/units.md): the unit in which it
 * has 1 to 4 integer digits, two decimals below 100 and one from 100 up (`47.30 MiB`,
 * `497.3 MiB`, `3.41 GiB`), bytes below 1 KiB: a chart cursor's bytes.
 */
export function size(bytes) {
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  let v = bytes;
  let unit = 0;
  while (unit + 1 < UNITS.length && rounded(v) >= 1024) {
    v /= 1024;
    unit += 1;
  }
  return `${v.toFixed(Math.round(v * 100) < 10000 ? 2 : 1)} ${UNITS[unit]}`;
}

/** A compact axis tick: `512 MiB`, `1.5 GiB`. */
export function tick(bytes) {
  if (bytes >= GIB) return `${+(bytes / GIB).toFixed(2)} GiB`;
  if (bytes >= MIB) return `${+(bytes / MIB).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}

/** `1.25 s`, `3.400 ms`, `120.0 µs` from nanoseconds, as `present::duration`: a chart's times. */
export function duration(ns) {
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)} s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(3)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(1)} µs`;
  return `${Math.round(ns)} ns`;
}

// Control characters, bidirectional overrides and isolates, zero-width no-break space.
const DANGEROUS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/gu;

/**
 * Makes an untrusted string from a capture safe to show on one line: control and
 * bidirectional characters become `\u{…}` escapes, and it is cut to `max` characters.
 * The result is still set only through textContent / setAttribute.
 */
export function clean(s, max = 300) {
  if (typeof s !== 'string') s = s == null ? '' : String(s);
  const chars = Array.from(s.length > max * 4 + 16 ? s.slice(0, max * 4 + 16) : s);
  let cut = chars.length > max;
  const text = (cut ? chars.slice(0, max) : chars).join('');
  return text.replace(DANGEROUS, (c) => `\\u{${c.codePointAt(0).toString(16)}}`) + (cut ? '…' : '');
}
