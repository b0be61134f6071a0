//! Random-access byte sources. A capture is read through [`ByteSource`] so that it never
//! has to sit in memory whole: natively it is a file, in the browser a `File` read in
//! slices by the worker (see `wasm.rs`), in tests a byte slice.

// Input paths never panic: no unwrap, no unchecked indexing (see tests/malformed.rs).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use std::fs::File;
use std::io;
use std::path::Path;

/// Bytes of a source seen where they lie, without a copy: a slice of bytes already in
/// memory, or a window of a memory-mapped file (unmapped when dropped, so that a walk
/// over a large file holds only its current window).
pub enum View<'a> {
    /// Bytes already in memory.
    Borrowed(&'a [u8]),
    /// A window of a memory-mapped file.
    #[cfg(not(target_arch = "wasm32"))]
    Mapped(memmap2::Mmap),
    /// The bytes of a block the page's worker read from a `File`, from `from` on (up to
    /// `to`): the block is shared with the source's cache, so the walk reads the bytes
    /// where they were copied into the engine's memory instead of copying them again.
    #[cfg(target_arch = "wasm32")]
    Shared {
        /// The block, as the source holds it.
        block: std::rc::Rc<Vec<u8>>,
        /// Where the view begins in the block.
        from: usize,
        /// Where it ends (the block's end, or less once clipped).
        to: usize,
    },
}

impl View<'_> {
    /// Shows no more than the first `len` bytes. A source may show more than it was
    /// asked for (a block's bytes up to its end); a reader bound to the end of a message
    /// clips the view there.
    pub fn clip(&mut self, len: usize) {
        match self {
            View::Borrowed(bytes) => *bytes = bytes.get(..len).unwrap_or(bytes),
            // A mapped window is never longer than asked for.
            #[cfg(not(target_arch = "wasm32"))]
            View::Mapped(_) => {}
            #[cfg(target_arch = "wasm32")]
            View::Shared { from, to, .. } => *to = (*to).min(from.saturating_add(len)),
        }
    }
}

impl std::ops::Deref for View<'_> {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            View::Borrowed(bytes) => bytes,
            #[cfg(not(target_arch = "wasm32"))]
            View::Mapped(map) => map,
            #[cfg(target_arch = "wasm32")]
            View::Shared { block, from, to } => block.get(*from..*to).unwrap_or_default(),
        }
    }
}

/// Reads `buf.len()` bytes (or fewer at the end) starting at `offset`.
pub trait ByteSource {
    /// Total size in bytes.
    fn len(&self) -> u64;
    /// Fills `buf` from `offset`; returns how many bytes were read (less than
    /// `buf.len()` only at the end of the source).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// Whether the source holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A second, independent handle on the same bytes that another thread can read,
    /// where the source supports it (a file does); `None` keeps the analysis on one
    /// thread (a browser `File`, which only its worker may read).
    fn share(&self) -> Option<Box<dyn ByteSource + Send + Sync>> {
        None
    }

    /// `[offset, offset + len)` (or less at the end) in place, where the source can show
    /// it without copying; `None` sends the reader to [`ByteSource::read_at`]. The view
    /// may run on past `len` (the rest of a block already in memory; see
    /// [`View::clip`]).
    fn view(&self, _offset: u64, _len: usize) -> Option<View<'_>> {
        None
    }
}

impl ByteSource for [u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|start| self.get(start..))
            .unwrap_or_default();
        let n = buf.len().min(rest.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), rest.get(..n)) {
            to.copy_from_slice(from);
        }
        Ok(n)
    }

    fn view(&self, offset: u64, len: usize) -> Option<View<'_>> {
        let rest = self.get(usize::try_from(offset).ok()?..)?;
        Some(View::Borrowed(rest.get(..len).unwrap_or(rest)))
    }
}

/// A borrowed source is a source (so a `&[u8]` can be passed as `&dyn ByteSource`).
impl<T: ByteSource + ?Sized> ByteSource for &T {
    fn len(&self) -> u64 {
        (**self).len()
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        (**self).read_at(offset, buf)
    }

    fn share(&self) -> Option<Box<dyn ByteSource + Send + Sync>> {
        (**self).share()
    }

    fn view(&self, offset: u64, len: usize) -> Option<View<'_>> {
        (**self).view(offset, len)
    }
}

impl ByteSource for Vec<u8> {
    fn len(&self) -> u64 {
        self.as_slice().len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        ByteSource::read_at(self.as_slice(), offset, buf)
    }

    fn view(&self, offset: u64, len: usize) -> Option<View<'_>> {
        ByteSource::view(self.as_slice(), offset, len)
    }
}

/// Reads shorter than this are copied: mapping a window costs a few system calls and
/// page faults, worth it only when the walk goes on through it.
#[cfg(not(target_arch = "wasm32"))]
const MAP_FROM: usize = 256 << 10;

/// A file on disk, read with positional reads so it can be shared between threads.
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// Opens a file to be read at random offsets.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(Self { file, len })
    }
}

impl ByteSource for FileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn share(&self) -> Option<Box<dyn ByteSource + Send + Sync>> {
        let file = self.file.try_clone().ok()?;
        Some(Box::new(FileSource {
            file,
            len: self.len,
        }))
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn view(&self, offset: u64, len: usize) -> Option<View<'_>> {
        let len = usize::try_from(self.len.checked_sub(offset)?).map_or(len, |rest| rest.min(len));
        if len < MAP_FROM {
            return None;
        }
        // SAFETY: the map is only read, and only while this window is held. What a
        // mapping cannot rule out is another process shrinking the file meanwhile (the
        // read would then fault); profiler captures are written once and then only
        // read, the same bet ripgrep makes. A failed map falls back to copying reads.
        // Not populated up front: a walk that jumps over most of a window (a line it
        // hands to another thread, the events after a checkpoint) maps only the pages
        // it reads, and the kernel maps pages around each fault in batches anyway.
        // Advised sequential: the walk reads forward, and the kernel then neither
        // marks the pages recently used when the window is unmapped (work it would
        // do per page, for pages read once) nor reads ahead timidly on a cold file.
        #[allow(unsafe_code)]
        let map = unsafe {
            memmap2::MmapOptions::new()
                .offset(offset)
                .len(len)
                .map(&self.file)
        };
        map.ok().map(|map| {
            // Advice is a hint: a kernel that ignores it reads the window all the same.
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            View::Mapped(map)
        })
    }

    #[cfg(unix)]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let mut done = 0usize;
        while let Some(rest) = buf.get_mut(done..).filter(|r| !r.is_empty()) {
            match self.file.read_at(rest, offset.saturating_add(done as u64)) {
                Ok(0) => break,
                Ok(n) => done = done.saturating_add(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    #[cfg(windows)]
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use std::os::windows::fs::FileExt;
        let mut done = 0usize;
        while let Some(rest) = buf.get_mut(done..).filter(|r| !r.is_empty()) {
            match self
                .file
                .seek_read(rest, offset.saturating_add(done as u64))
            {
                Ok(0) => break,
                Ok(n) => done = done.saturating_add(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    #[cfg(not(any(unix, windows)))]
    fn read_at(&self, _offset: u64, _buf: &mut [u8]) -> io::Result<usize> {
        let _ = &self.file;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "positional reads are not supported on this platform",
        ))
    }
}
