//! The page's byte sources: a dropped file read in blocks, or bytes in memory, each
//! reporting progress.

use super::*;

/// A `Blob` (a dropped `File`) read with synchronous slices; only valid in a worker.
/// Slices are whole aligned blocks, and the last few are kept: each `FileReaderSync`
/// call costs far more than a `pread`, so the engine's small reads (a field key after
/// skipping a line) must not each become one. Memory stays flat whatever the file's
/// size: at most [`CACHED_BLOCKS`] × [`BLOCK`].
pub(super) struct BlobSource {
    blob: Blob,
    reader: FileReaderSync,
    len: u64,
    pub(super) reporter: Rc<Reporter>,
    /// (start offset, its bytes), most recently used last.
    blocks: RefCell<Vec<(u64, Vec<u8>)>>,
    /// Where the last slice read from the blob ended.
    last_end: Cell<u64>,
    /// Given each slice's `ArrayBuffer` once copied (`options.discard`): the worker
    /// transfers it into a closed `MessagePort`, which frees it at once (see
    /// `www/worker.js`).
    discard: Option<js_sys::Function>,
}

/// Size of one slice read from the blob when reading on through the file. Each
/// `FileReaderSync` call costs about 0.6 ms plus 1.5 ms per MiB in Chromium: large
/// slices approach its best throughput.
const BLOCK: u64 = 16 << 20;
/// Size of the slice read for a small read far from the last one (the next line's
/// header after skipping a long line): a whole block there would read what is skipped.
const SMALL_BLOCK: u64 = 64 << 10;
/// How far past the last block a small read must land to be read as a small block.
const FAR: u64 = 2 << 20;
/// Blocks kept: a window straddles at most two, plus one for a jump back.
const CACHED_BLOCKS: usize = 3;

impl BlobSource {
    fn read_slice(&self, start: u64, end: u64) -> io::Result<Vec<u8>> {
        let slice = self
            .blob
            .slice_with_f64_and_f64(start as f64, end as f64)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let array = self
            .reader
            .read_as_array_buffer(&slice)
            .map_err(|e| io::Error::other(format!("{e:?}")))?;
        let bytes = js_sys::Uint8Array::new(&array).to_vec();
        if let Some(discard) = &self.discard {
            let _ = discard.call1(&JsValue::NULL, &array);
        }
        self.reporter.read(end, bytes.len() as u64);
        self.last_end.set(end);
        Ok(bytes)
    }

    /// Copies from a cached block holding `offset` (reading one if none does) into
    /// `buf`; returns how many bytes it copied.
    fn copy_from_block(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut blocks = self.blocks.borrow_mut();
        let holds = |(start, bytes): &(u64, Vec<u8>)| {
            offset >= *start && offset < *start + bytes.len() as u64
        };
        let at = match blocks.iter().position(holds) {
            Some(i) => {
                let hit = blocks.remove(i);
                blocks.push(hit);
                blocks.len() - 1
            }
            None => {
                let far = offset > self.last_end.get().saturating_add(FAR);
                let size = if far && (buf.len() as u64) < SMALL_BLOCK {
                    SMALL_BLOCK
                } else {
                    BLOCK
                };
                let start = offset - offset % size;
                let end = (start + size).min(self.len);
                if blocks.len() >= CACHED_BLOCKS {
                    blocks.remove(0);
                }
                blocks.push((start, self.read_slice(start, end)?));
                blocks.len() - 1
            }
        };
        let (start, block) = &blocks[at];
        let from = (offset - start) as usize;
        let n = buf.len().min(block.len().saturating_sub(from));
        buf[..n].copy_from_slice(&block[from..from + n]);
        Ok(n)
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
        last_end: Cell::new(0),
        discard,
    })
}
