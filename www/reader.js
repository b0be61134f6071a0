// The page's reader: a worker that reads the capture ahead of the engine, so that
// reading the File runs on another core while the engine scans the block before. It is
// started by the engine's worker (www/slices.js, SliceStream), which hands each block
// to the engine through a JSPI suspending import.
//
// It reads with a byte stream into buffers it is given back once the engine has copied
// them (`Blob.stream()` with a BYOB reader): no new ArrayBuffer for each block, whose
// fresh pages cost FileReaderSync as much again as the copy itself (measured in a
// worker at 1 GB: 0.7–0.9 s against 1.5 s; BENCHMARKS.md). It holds at most `ahead`
// buffers, so the tab holds a few blocks whatever the file's size.
//
// Protocol:
//   in:  {type: 'start', blob, start, block, ahead, run}  read [start, …) in blocks of
//                                                        `block` bytes; `run` names this
//                                                        sequence (a new start ends the last).
//                                                        Only its first block until told `on`
//        {type: 'on', run}                               the engine reads on: read ahead
//        {type: 'recycle', buffer}                       a block's buffer, back to read into
//   out: {type: 'slice', run, start, buffer, length}     one block, `length` bytes of
//                                                        `buffer` (transferred)
//        {type: 'failed', run, start}                    the block could not be read: the
//                                                        engine reads it itself and reports why

let run = -1;
/** The file's size, or 0 once it cannot be read. */
let size = 0;
let stream = null;
let next = 0;
let block = 0;
let ahead = 0;
let made = 0;
/** Where reading stops until the engine is seen to read on (the end of a run's first block). */
let until = 0;
let pumping = false;
const pool = [];

/** A free buffer of a block's size, or null when all `ahead` are with the engine. */
function buffer() {
  if (pool.length) return pool.pop();
  if (made >= ahead) return null;
  made += 1;
  return new ArrayBuffer(block);
}

/** Puts a buffer back to read into; one a cancelled read kept (detached) is made anew. */
function reuse(buf) {
  if (buf && buf.byteLength === block) pool.push(buf);
  else made -= 1;
}

/** Fills `buf` from the stream; resolves to the buffer (moved by each read) and its length. */
async function fill(reader, buf) {
  let length = 0;
  while (length < buf.byteLength) {
    const { value, done } = await reader.read(new Uint8Array(buf, length, buf.byteLength - length));
    if (done) {
      // A cancelled read hands no buffer back: the one lent to it is gone.
      buf = value ? value.buffer : null;
      break;
    }
    buf = value.buffer;
    length += value.byteLength;
  }
  return { buf, length };
}

async function pump() {
  if (pumping) return;
  pumping = true;
  try {
    while (next < size && next < until) {
      const buf = buffer();
      if (!buf) break;
      const mine = run;
      const reader = stream;
      const start = next;
      let got;
      try {
        got = await fill(reader, buf);
      } catch {
        if (mine === run) {
          self.postMessage({ type: 'failed', run, start });
          size = 0;
        }
        made -= 1; // that buffer went with the failed stream
        continue;
      }
      if (mine !== run || !got.buf || got.length === 0) {
        reuse(got.buf); // a new start came while this block was read, or the file ended
        if (mine === run) break;
        continue;
      }
      next = start + got.length;
      self.postMessage({ type: 'slice', run, start, buffer: got.buf, length: got.length }, [got.buf]);
    }
  } finally {
    pumping = false;
  }
}

self.onmessage = (event) => {
  const msg = event.data || {};
  if (msg.type === 'start' && msg.blob instanceof Blob) {
    if (stream) stream.cancel().catch(() => {});
    run = msg.run;
    size = msg.blob.size;
    next = msg.start;
    block = msg.block;
    ahead = msg.ahead;
    until = next + block;
    stream = msg.blob.slice(next).stream().getReader({ mode: 'byob' });
  } else if (msg.type === 'on' && msg.run === run) {
    until = Infinity;
  } else if (msg.type === 'recycle' && msg.buffer instanceof ArrayBuffer) {
    reuse(msg.buffer);
  }
  pump();
};
