// Formatting for the charts only (axis ticks, cursor readouts: numbers drawn along a
// series, which the report does not word), and untrusted capture strings made safe to
// show (src/report/mod.rs `clean`). Every figure the report states comes formatted in
// the view (src/report/view.rs); nothing here words a finding.

const MIB = 1048576;
const GIB = 1073741824;

function thousands(n) {
  const digits = String(Math.round(n));
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ',';
    out += digits[i];
  }
  return out;
}

/** `3,495 MiB`, or `12.5 MiB` / `0.020 MiB` below 100 MiB, as `units::mib`: a chart cursor's bytes. */
export function mib(bytes) {
  const v = bytes / MIB;
  if (v >= 100) return `${thousands(v)} MiB`;
  if (v >= 1) return `${v.toFixed(1)} MiB`;
  if (bytes === 0) return '0 MiB';
  return `${v.toFixed(3)} MiB`;
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
