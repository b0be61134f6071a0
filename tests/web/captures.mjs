// Captures the browser tests make for themselves: a tiny protobuf writer (field
// numbers from proto/xplane.proto and proto/hlo.proto), a hostile capture whose names
// carry markup, quotes, control and bidirectional characters and a 100 KB string, and
// a large capture made by repeating a real capture's planes.

import { openSync, readSync, writeSync, closeSync, fstatSync } from 'node:fs';

// ---------------------------------------------------------------- wire format

function varint(n) {
  let v = BigInt.asUintN(64, BigInt(n));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

const key = (field, type) => varint((field << 3) | type);

/** A message from [field, kind, value] triples; kind: 'v' varint, 's' string, 'b' bytes/message, 'd' double. */
export function msg(...fields) {
  const parts = [];
  for (const [field, kind, value] of fields) {
    if (value == null) continue;
    if (kind === 'v') parts.push(key(field, 0), varint(value));
    else if (kind === 'd') {
      const b = Buffer.alloc(8);
      b.writeDoubleLE(value);
      parts.push(key(field, 1), b);
    } else {
      const b = kind === 's' ? Buffer.from(value, 'utf8') : value;
      parts.push(key(field, 2), varint(b.length), b);
    }
  }
  return Buffer.concat(parts);
}

const packed = (field, values) => [field, 'b', Buffer.concat(values.map(varint))];

// ---------------------------------------------------------------- xplane

const stat = (metadataId, kind, value) => {
  const field = { u: 3, i: 4, s: 5, b: 6, r: 7 }[kind];
  return msg([1, 'v', metadataId], [field, kind === 's' ? 's' : kind === 'b' ? 'b' : 'v', value]);
};

function plane({ id, name, lines = [], events = {}, stats = {} }) {
  const fields = [[1, 'v', id], [2, 's', name]];
  for (const l of lines) fields.push([3, 'b', l]);
  for (const [mid, m] of Object.entries(events)) fields.push([4, 'b', msg([1, 'v', Number(mid)], [2, 'b', m])]);
  for (const [sid, sname] of Object.entries(stats)) fields.push([5, 'b', msg([1, 'v', Number(sid)], [2, 'b', msg([1, 'v', Number(sid)], [2, 's', sname])])]);
  return msg(...fields);
}

const eventMeta = (id, name, statList = []) => msg([1, 'v', id], [2, 's', name], ...statList.map((st) => [5, 'b', st]));
const xevent = (metadataId, offsetPs, durationPs, statList = []) => msg([1, 'v', metadataId], [2, 'v', offsetPs], [3, 'v', durationPs], ...statList.map((st) => [4, 'b', st]));
const xline = (id, name, events) => msg([1, 'v', id], [2, 's', name], [3, 'v', 1000], ...events.map((e) => [4, 'b', e]));

// ---------------------------------------------------------------- hlo

const F32 = 11;
const shape = (dims) => msg([2, 'v', F32], packed(3, dims), [5, 'b', msg(packed(1, dims.map((_, i) => dims.length - 1 - i)))]);
const instruction = ({ id, name, opcode, dims, opName, sourceFile, sourceLine, parameter }) =>
  msg(
    [1, 's', name],
    [2, 's', opcode],
    [3, 'b', shape(dims)],
    [7, 'b', msg([1, 's', opcode], [2, 's', opName || ''], [3, 's', sourceFile || ''], [4, 'v', sourceLine || 0])],
    [9, 'v', parameter || 0],
    [35, 'v', id],
  );

export const HOSTILE = {
  img: '<img src=x onerror=alert(1)>',
  script: '<script>alert("xss")</script>',
  quotes: `"'\`><svg onload=alert(2)>`,
  controls: 'bell\u0007nul\u0000esc\u001b[31mline\nbreak',
  rtl: 'abc\u202edcba\u2066x\u2069\u200f',
  long: 'A'.repeat(100 * 1024),
};

/** A capture with a plan and runtime events whose every name is hostile. */
export function hostileCapture() {
  const h = HOSTILE;
  const moduleName = `jit_${h.img}${h.quotes}${h.rtl}`;
  const mib = 1048576;
  const instrs = [
    { id: 1, name: `p0${h.script}`, opcode: 'parameter', dims: [1024, 1024], opName: `x${h.img}`, parameter: 0 },
    { id: 2, name: `dot${h.controls}`, opcode: 'dot', dims: [1024, 1024], opName: `jit(step)/jvp(${h.img})/dot_general${h.long}`, sourceFile: `/src/${h.quotes}.py`, sourceLine: 7 },
    { id: 3, name: `tanh${h.rtl}`, opcode: 'tanh', dims: [1024, 1024], opName: `jit(step)/transpose(jvp(${h.script}))/tanh`, sourceFile: `${h.long}.py`, sourceLine: 9 },
    { id: 4, name: `out${h.img}`, opcode: 'add', dims: [1024, 1024], opName: h.controls },
  ];
  const computation = msg([1, 's', `main${h.img}`], ...instrs.map((i) => [2, 'b', instruction(i)]), [5, 'v', 1], [6, 'v', 4]);
  const module = msg([1, 's', moduleName], [2, 's', `main${h.img}`], [3, 'b', computation], [5, 'v', 42], [6, 'v', 1]);
  const buffer = (id, size, instructionId) => msg([1, 'v', id], [2, 'v', size], [3, 'b', msg([4, 'v', instructionId])]);
  const assigned = (bufferId, offset, size) => msg([1, 'v', bufferId], [2, 'v', offset], [3, 'v', size]);
  const allocations = [
    msg([1, 'v', 0], [2, 'v', 4 * mib], [5, 'v', 1], [6, 'v', 0], [9, 'b', assigned(0, 0, 4 * mib)]),
    msg([1, 'v', 1], [2, 'v', 8 * mib], [9, 'b', assigned(1, 0, 4 * mib)], [9, 'b', assigned(2, 4 * mib, 4 * mib)]),
    msg([1, 'v', 2], [2, 'v', 4 * mib], [7, 'v', 1], [9, 'b', assigned(3, 0, 4 * mib)]),
  ];
  const ev = (kind, bufferId, name) => msg([1, 'v', kind], [2, 'v', bufferId], [3, 's', `main${h.img}`], [4, 's', name]);
  const trace = msg([1, 'b', ev(0, 1, instrs[1].name)], [1, 'b', ev(0, 2, instrs[2].name)], [1, 'b', ev(1, 1, instrs[2].name)], [1, 'b', ev(1, 2, instrs[3].name)], [3, 'v', 1]);
  const assignment = msg(
    [1, 'b', buffer(0, 4 * mib, 1)],
    [1, 'b', buffer(1, 4 * mib, 2)],
    [1, 'b', buffer(2, 4 * mib, 3)],
    [1, 'b', buffer(3, 4 * mib, 4)],
    ...allocations.map((a) => [3, 'b', a]),
    [4, 'b', trace],
  );
  const hlo = msg([1, 'b', module], [3, 'b', assignment]);
  const metadata = plane({
    id: 1,
    name: '/host:metadata',
    stats: { 1: 'Hlo Proto', 2: 'program_id' },
    events: { 42: eventMeta(42, moduleName, [stat(1, 'b', hlo), stat(2, 'u', 42)]) },
  });

  // The host plane: two launches of the module, allocations inside them from an
  // allocator with a hostile name, Python events with hostile names in between.
  const S = { 1: 'allocator_name', 2: 'bytes_allocated', 3: 'bytes_available', 4: 'allocation_bytes', 5: 'addr', 6: 'requested_bytes', 7: 'bytes_reserved' };
  const E = { 10: `PjRtStreamExecutorLoadedExecutable::Execute (${moduleName})`, 11: 'MemoryAllocation', 12: 'MemoryDeallocation', 13: `$${h.img} append${h.rtl}`, 14: `$${h.long}`, 15: 'AllocatorRetry::AllocateRaw' };
  const allocator = `GPU_0_bfc${h.script}`;
  const memory = (id, t, inUse, addr, size) => xevent(id, t, 10, [stat(1, 's', allocator), stat(2, 'u', inUse), stat(3, 'u', 64 * mib - inUse), stat(4, 'u', size), stat(5, 'u', addr), stat(6, 'u', size), stat(7, 'u', 0)]);
  const us = 1_000_000; // ps
  const events = [
    memory(11, 1 * us, 4 * mib, 0x1000, 4 * mib),
    xevent(13, 2 * us, 1 * us),
    xevent(10, 10 * us, 20 * us),
    memory(11, 11 * us, 8 * mib, 0x2000, 4 * mib),
    xevent(13, 40 * us, 2 * us),
    xevent(14, 45 * us, 2 * us),
    xevent(10, 50 * us, 20 * us),
    memory(11, 51 * us, 12 * mib, 0x3000, 4 * mib),
    xevent(15, 52 * us, 5 * us),
    memory(12, 80 * us, 8 * mib, 0x2000, 4 * mib),
  ];
  const host = plane({
    id: 2,
    name: '/host:CPU',
    stats: S,
    events: Object.fromEntries(Object.entries(E).map(([id, name]) => [id, eventMeta(Number(id), name)])),
    lines: [xline(1, `python${h.img}`, events)],
  });
  return msg([1, 'b', metadata], [1, 'b', host], [4, 's', `host${h.img}`]);
}

// ---------------------------------------------------------------- a large capture

function readVarint(buf, pos) {
  let v = 0n;
  let shift = 0n;
  for (;;) {
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
  }
}

/** The fields of one message: [{field, type, start, end}] (start..end spans the whole field). */
function fields(buf, from = 0, to = buf.length) {
  const out = [];
  let pos = from;
  while (pos < to) {
    const start = pos;
    let k;
    [k, pos] = readVarint(buf, pos);
    const field = Number(k >> 3n);
    const type = Number(k & 7n);
    let payload = pos;
    if (type === 0) [, pos] = readVarint(buf, pos);
    else if (type === 1) pos += 8;
    else if (type === 5) pos += 4;
    else if (type === 2) {
      let n;
      [n, payload] = readVarint(buf, pos);
      pos = payload + Number(n);
    } else throw new Error(`wire type ${type} at ${start}`);
    out.push({ field, type, start, payload, end: pos });
  }
  return out;
}

/**
 * Writes a capture of at least `minBytes` to `out`: `source` (a real capture) with the
 * lines of its `/host:CPU` plane repeated, as a long capture of the same program
 * would be. Every other plane is kept once. Returns the size written.
 */
export function writeLargeCapture(source, out, minBytes) {
  const fd = openSync(source, 'r');
  const size = fstatSync(fd).size;
  const buf = Buffer.alloc(size);
  readSync(fd, buf, 0, size, 0);
  closeSync(fd);
  const top = fields(buf);
  const host = top.find((f) => {
    if (f.field !== 1 || f.type !== 2) return false;
    const name = fields(buf, f.payload, f.end).find((x) => x.field === 2 && x.type === 2);
    return name && buf.toString('utf8', name.payload, name.end) === '/host:CPU';
  });
  if (!host) throw new Error(`${source} has no /host:CPU plane`);
  const parts = fields(buf, host.payload, host.end);
  const lines = parts.filter((x) => x.field === 3);
  const rest = parts.filter((x) => x.field !== 3);
  const linesBytes = lines.reduce((a, x) => a + (x.end - x.start), 0);
  const restBytes = rest.reduce((a, x) => a + (x.end - x.start), 0);
  const outside = size - (host.end - host.start);
  const copies = Math.max(1, Math.ceil((minBytes - outside - restBytes) / Math.max(1, linesBytes)));
  const planeLen = restBytes + copies * linesBytes;
  const w = openSync(out, 'w');
  let written = 0;
  const put = (b) => {
    writeSync(w, b);
    written += b.length;
  };
  for (const f of top) {
    if (f !== host) {
      put(buf.subarray(f.start, f.end));
      continue;
    }
    put(Buffer.concat([varint((1 << 3) | 2), varint(planeLen)]));
    for (const x of rest) put(buf.subarray(x.start, x.end));
    const block = Buffer.concat(lines.map((x) => buf.subarray(x.start, x.end)));
    for (let i = 0; i < copies; i++) put(block);
  }
  closeSync(w);
  return written;
}
