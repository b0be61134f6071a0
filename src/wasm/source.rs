//! The page's byte sources: a dropped file read in blocks, or bytes in memory, each
//! reporting progress.

use super::*;
use crate::source::View;

/// A `Blob` (a dropped `File`) read with synchronous slices; only valid in a worker.
/// Slices are whole aligned blocks, and the last few are kept: each `FileReaderSync`
/// call costs far more than a `pread`, so the engine's small reads (a field key after
/// skipping a line) must not each become one. Memory stays flat whatever the file's
/// size: [`CACHED_BLOCKS`] blocks of about [`BLOCK`], and those a walk still shows.
///
/// Each slice is copied once into the engine's memory, and the walk reads it there in
/// place ([`ByteSource::view`]): a second copy of every byte into the walk's window cost
/// about a tenth of the page's scan.
pub(super) struct BlobSource {
    blob: Blob,
    reader: FileReaderSync,
    len: u64,
    pub(super) reporter: Rc<Reporter>,
    /// Blocks held, most recently used last. A walk's view shares its block, so a
    /// block dropped from here lives on until the view moves on.
    blocks: RefCell<Vec<Block>>,
    /// A dropped block's buffer that nothing shows any more, kept to read the next
    /// slice into: no allocation, and none of its bytes zeroed again.
    spare: RefCell<Option<Vec<u8>>>,
    /// Where the last slice read from the blob began and ended.
    last_start: Cell<u64>,
    last_end: Cell<u64>,
    /// Given each slice's `ArrayBuffer` once copied (`options.discard`): the worker
    /// transfers it into a closed `MessagePort`, which frees it at once (see
    /// `www/worker.js`).
    discard: Option<js_sys::Function>,
    /// Whether whole blocks come from the slices another worker reads ahead
    /// ([`take_slice`]): only while the engine runs under `WebAssembly.promising`.
    pub(super) read_ahead: Cell<bool>,
}

#[wasm_bindgen]
extern "C" {
    /// The slice `[start, end)` of the file being analyzed, read ahead by the page's
    /// reader worker (`www/reader.js`), as a `Uint8Array`; `null` when it has none to
    /// give. Its buffer goes to `discard` once copied, which hands it back to the
    /// reader. The worker imports it as a `WebAssembly.Suspending` function, so the
    /// engine waits for a slice still on its way without blocking the worker's event
    /// loop, which is what delivers it: reading the file then overlaps the scan.
    #[wasm_bindgen(js_name = oomlensTakeSlice)]
    fn take_slice(start: f64, end: f64) -> JsValue;
}

/// Bytes of the file from `start` on, in the engine's memory.
struct Block {
    start: u64,
    bytes: Rc<Vec<u8>>,
}

impl Block {
    fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    fn holds(&self, offset: u64) -> bool {
        offset >= self.start && offset < self.end()
    }
}

/// Size of one slice read from the blob when reading on through the file. Each
/// `FileReaderSync` call costs about 0.6 ms plus 1.5 ms per MiB in Chromium: large
/// slices approach its best throughput.
const BLOCK: u64 = 16 << 20;
/// Size of the slice read for a small read after a jump (the next line's header after
/// skipping a long line), and the step of a larger one: a whole block there would read
/// what is skipped.
const SMALL_BLOCK: u64 = 64 << 10;
/// How far past the last block a read must land to be a jump.
const FAR: u64 = 2 << 20;
/// Blocks kept: a window straddles at most two, plus one for a jump back.
const CACHED_BLOCKS: usize = 3;
/// Room left in a block's buffer for the bytes carried over from the block before
/// (see [`BlobSource::view`]): a walk's window, at most `READ_CHUNK`.
const CARRIED: usize = crate::capture::READ_CHUNK;

impl BlobSource {
    /// Reads `[start, end)` of the blob and copies it into `into` after its first
    /// `keep` bytes (left for the caller to fill); `into` is then exactly `keep` plus the
    /// slice's bytes long.
    fn read_slice(&self, start: u64, end: u64, into: &mut Vec<u8>, keep: usize) -> io::Result<()> {
        let bytes = match self.read_ahead_slice(start, end) {
            Some(bytes) => bytes,
            None => js_sys::Uint8Array::new(self.read_here(start, end)?.as_ref()),
        };
        let n = bytes.length() as usize;
        // A reused buffer already holds initialized bytes: resizing it within them
        // zeroes nothing.
        into.resize(keep + n, 0);
        bytes.copy_to(&mut into[keep..]);
        if let Some(discard) = &self.discard {
            let _ = discard.call1(&JsValue::NULL, &bytes.buffer());
        }
        self.reporter.read(end, n as u64);
        self.last_start.set(start);
        self.last_end.set(end);
        Ok(())
    }

    /// Reads `[start, end)` in this worker, with `FileReaderSync`.
    fn read_here(&self, start: u64, end: u64) -> io::Result<js_sys::ArrayBuffer> {
        let slice = self
            .blob
            .slice_with_f64_and_f64(start as f64, end as f64)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        self.reader
            .read_as_array_buffer(&slice)
            .map_err(|e| io::Error::other(format!("{e:?}")))?
            .dyn_into()
            .map_err(|_| io::Error::other("FileReaderSync gave no ArrayBuffer"))
    }

    /// The whole block `[start, end)` as read ahead by the reader worker, when the
    /// engine runs with one and it has that block (a small block far on is read here:
    /// the reader reads whole blocks in order).
    fn read_ahead_slice(&self, start: u64, end: u64) -> Option<js_sys::Uint8Array> {
        let whole = end - start == BLOCK || (end == self.len && end > start);
        if !self.read_ahead.get() || !whole {
            return None;
        }
        let bytes: js_sys::Uint8Array = take_slice(start as f64, end as f64).dyn_into().ok()?;
        (bytes.length() as u64 == end - start).then_some(bytes)
    }

    /// A buffer to read a slice into: the spare one, or a new one with room for a
    /// block and the bytes carried over into it.
    fn buffer(&self) -> Vec<u8> {
        self.spare
            .borrow_mut()
            .take()
            .unwrap_or_else(|| Vec::with_capacity(BLOCK as usize + CARRIED))
    }

    /// Holds `block` as the most recently used, dropping the least recently used one
    /// beyond [`CACHED_BLOCKS`]; returns its index.
    fn keep(blocks: &mut Vec<Block>, spare: &RefCell<Option<Vec<u8>>>, block: Block) -> usize {
        if blocks.len() >= CACHED_BLOCKS {
            let dropped = blocks.remove(0);
            // Its buffer is reused unless a view still shows it.
            if let Ok(bytes) = Rc::try_unwrap(dropped.bytes) {
                *spare.borrow_mut() = Some(bytes);
            }
        }
        blocks.push(block);
        blocks.len() - 1
    }

    /// The index of a held block holding `offset`, made the most recently used, reading
    /// one if none does (see [`BlobSource::span_at`]) for a read of `len` bytes there.
    fn block_at(&self, offset: u64, len: u64) -> io::Result<usize> {
        let mut blocks = self.blocks.borrow_mut();
        if let Some(i) = blocks.iter().position(|b| b.holds(offset)) {
            let hit = blocks.remove(i);
            blocks.push(hit);
            return Ok(blocks.len() - 1);
        }
        let (start, end) = self.span_at(offset, len);
        let mut bytes = self.buffer();
        self.read_slice(start, end, &mut bytes, 0)?;
        let block = Block {
            start,
            bytes: Rc::new(bytes),
        };
        Ok(Self::keep(&mut blocks, &self.spare, block))
    }

    /// The slice to read for a read of `len` bytes at `offset`: a whole aligned block
    /// when the engine reads on through the file. After a jump (far past the last slice,
    /// or back before it: a plane's tables read from its end, an event looked up again
    /// while the runtime is summarized) only what the read needs, in
    /// [`SMALL_BLOCK`] steps: a whole block there would mostly be bytes nobody reads,
    /// and with a reader worker, restart its read ahead for nothing. A walk that goes
    /// on from there reads on in whole blocks.
    fn span_at(&self, offset: u64, len: u64) -> (u64, u64) {
        let far = offset > self.last_end.get().saturating_add(FAR);
        let back = offset < self.last_start.get();
        if far || back {
            let start = offset - offset % SMALL_BLOCK;
            let want = (offset + len.max(1)).div_ceil(SMALL_BLOCK) * SMALL_BLOCK - start;
            return (start, (start + want.min(BLOCK)).min(self.len));
        }
        let start = offset - offset % BLOCK;
        (start, (start + BLOCK).min(self.len))
    }

    /// Copies from a held block holding `offset` (reading one if none does) into
    /// `buf`; returns how many bytes it copied.
    fn copy_from_block(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let at = self.block_at(offset, buf.len() as u64)?;
        let blocks = self.blocks.borrow();
        let block = &blocks[at];
        let from = (offset - block.start) as usize;
        let n = buf.len().min(block.bytes.len().saturating_sub(from));
        buf[..n].copy_from_slice(&block.bytes[from..from + n]);
        Ok(n)
    }

    /// A new block that begins with the held block `at`'s bytes from `offset` on and
    /// goes on with the slice that follows it in the file: a walk whose window runs
    /// past its block's end then sees it whole, and only the few bytes carried over are
    /// copied again. `None` where the slice that follows is held already (a jump back)
    /// or the carried bytes do not fit.
    fn carry_on(&self, at: usize, offset: u64) -> io::Result<Option<usize>> {
        let mut blocks = self.blocks.borrow_mut();
        let end = blocks[at].end();
        if end >= self.len || blocks.iter().any(|b| b.holds(end)) {
            return Ok(None);
        }
        let carried = (end - offset) as usize;
        if carried > CARRIED {
            return Ok(None);
        }
        let mut bytes = self.buffer();
        self.read_slice(end, (end + BLOCK).min(self.len), &mut bytes, carried)?;
        let from = (offset - blocks[at].start) as usize;
        bytes[..carried].copy_from_slice(&blocks[at].bytes[from..]);
        let block = Block {
            start: offset,
            bytes: Rc::new(bytes),
        };
        Ok(Some(Self::keep(&mut blocks, &self.spare, block)))
    }
}

impl ByteSource for BlobSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let end = (offset + buf.len() as u64).min(self.len);
        let mut done = 0usize;
        let mut at = offset;
        while at < end {
            let want = (end - at) as usize;
            let n = self.copy_from_block(at, &mut buf[done..done + want])?;
            if n == 0 {
                break;
            }
            done += n;
            at += n as u64;
        }
        Ok(done)
    }

    /// The held block's bytes from `offset` to its end, where they run to
    /// `offset + len` at least (or to the end of the file).
    fn view(&self, offset: u64, len: usize) -> Option<View<'_>> {
        if offset >= self.len {
            return None;
        }
        let end = (offset + len as u64).min(self.len);
        // A read that fails here fails again, and is reported, through `read_at`.
        let mut at = self.block_at(offset, len as u64).ok()?;
        if self.blocks.borrow()[at].end() < end {
            at = self.carry_on(at, offset).ok()??;
        }
        let blocks = self.blocks.borrow();
        let block = &blocks[at];
        if block.end() < end {
            return None;
        }
        Some(View::Shared {
            block: Rc::clone(&block.bytes),
            from: (offset - block.start) as usize,
            to: block.bytes.len(),
        })
    }
}

/// Bytes already in memory, with the same progress reports.
pub(super) struct BytesSource {
    pub(super) bytes: Vec<u8>,
    pub(super) reporter: Rc<Reporter>,
}

impl ByteSource for BytesSource {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let n = ByteSource::read_at(self.bytes.as_slice(), offset, buf)?;
        self.reporter.read(offset + n as u64, n as u64);
        Ok(n)
    }
}

/// `discard`: `options.discard`, if it is a function.
pub(super) fn blob_source(
    blob: Blob,
    progress: js_sys::Function,
    options: &JsValue,
) -> Result<BlobSource, JsValue> {
    let discard = js_sys::Reflect::get(options, &JsValue::from_str("discard"))
        .ok()
        .and_then(|f| f.dyn_into::<js_sys::Function>().ok());
    let reader = FileReaderSync::new()?;
    let len = blob.size() as u64;
    Ok(BlobSource {
        blob,
        reader,
        len,
        reporter: Rc::new(Reporter::new(progress, len)),
        blocks: RefCell::new(Vec::with_capacity(CACHED_BLOCKS)),
        spare: RefCell::new(None),
        last_start: Cell::new(0),
        last_end: Cell::new(0),
        discard,
        read_ahead: Cell::new(false),
    })
}
