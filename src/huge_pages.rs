//! The command's allocator natively on Linux: the system allocator for everything but
//! large buffers, which are mapped on their own and backed by transparent huge pages.
//!
//! A scan of a large capture fills buffers of tens of megabytes (a host part's
//! allocator history grows to 256K records, about 18 MiB per thread). Touched 4 KiB at
//! a time, each page costs a fault and its bookkeeping: on a 0.5 GB capture that was
//! about 13,000 faults and a tenth of the scan's processor time. A 2 MiB huge page
//! takes one fault for 512 of them. Kernels set to `madvise` (Debian's and most
//! distributions' default) give huge pages only to mappings asked for with
//! `madvise(MADV_HUGEPAGE)`; where they are off, the advice changes nothing.
//!
//! The advice must cover a whole mapping: advising part of the system allocator's
//! own mapping splits it, and its growth in place (`mremap`) then fails and falls back
//! to copying. So buffers of at least [`MAPPED_FROM_BYTES`] get mappings of their own,
//! sized in whole huge pages (which recent kernels place on a huge-page boundary),
//! grown with `mremap` and given back with `munmap`. Which path a buffer took follows
//! from its layout alone, so freeing and growing always take the same one.

use std::alloc::{GlobalAlloc, Layout, System};

/// The size of a transparent huge page on x86-64 and most 64-bit Arm kernels; a
/// mapping sized in these is valid whatever the kernel's huge page size.
const HUGE_PAGE: usize = 2 << 20;

/// Buffers from this size on are mapped on their own; below it the system allocator,
/// whose reuse of freed memory is worth more than huge pages.
const MAPPED_FROM_BYTES: usize = 4 << 20;

/// The system allocator, large buffers mapped on huge pages (see the module).
pub struct HugePagesForLarge;

/// Whether a buffer of `layout` is one of ours: large, and aligned no more strictly
/// than a page (every mapping starts on one).
fn mapped(layout: Layout) -> bool {
    layout.size() >= MAPPED_FROM_BYTES && layout.align() <= 4096
}

/// `size` rounded up to whole huge pages (`None` if that overflows).
fn mapping_len(size: usize) -> Option<usize> {
    size.checked_next_multiple_of(HUGE_PAGE)
}

// SAFETY: small buffers are the system allocator's own. A large one is a private
// anonymous mapping of at least its size, page aligned (enough for `mapped` layouts),
// owned by the buffer alone until `dealloc` unmaps it or `realloc` moves it; `mapped`
// depends only on the layout, which the caller passes unchanged to `dealloc` and
// `realloc`, so a buffer is always freed the way it was made.
unsafe impl GlobalAlloc for HugePagesForLarge {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            map(layout.size())
        } else {
            System.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if mapped(layout) {
            // Anonymous mappings are zeroed by the kernel.
            map(layout.size())
        } else {
            System.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if mapped(layout) {
            unmap(ptr, layout.size());
        } else {
            System.dealloc(ptr, layout);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return std::ptr::null_mut();
        };
        match (mapped(layout), mapped(new_layout)) {
            (false, false) => System.realloc(ptr, layout, new_size),
            (true, true) => remap(ptr, layout.size(), new_size),
            // Across the threshold: a new buffer of the other kind, the bytes copied.
            _ => {
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}

/// A new mapping of at least `size` bytes advised to use huge pages; null on failure.
fn map(size: usize) -> *mut u8 {
    let Some(len) = mapping_len(size) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a fresh private anonymous mapping touches no existing memory.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // Advice that fails (huge pages off, an old kernel) leaves small pages: ignored.
    // SAFETY: the range is the mapping just made.
    unsafe { libc::madvise(ptr, len, libc::MADV_HUGEPAGE) };
    ptr.cast()
}

/// Unmaps the buffer made by [`map`] (or [`remap`]) for `size` bytes.
///
/// # Safety
/// `ptr` must be such a buffer, not used afterwards.
unsafe fn unmap(ptr: *mut u8, size: usize) {
    if let Some(len) = mapping_len(size) {
        libc::munmap(ptr.cast(), len);
    }
}

/// Grows or shrinks the buffer made for `old` bytes to `new` bytes, moving it if it
/// must (the advice moves with the mapping); null on failure, the old buffer intact.
///
/// # Safety
/// `ptr` must be a buffer made by [`map`] (or [`remap`]) for `old` bytes.
unsafe fn remap(ptr: *mut u8, old: usize, new: usize) -> *mut u8 {
    let (Some(old_len), Some(new_len)) = (mapping_len(old), mapping_len(new)) else {
        return std::ptr::null_mut();
    };
    if old_len == new_len {
        return ptr;
    }
    let moved = libc::mremap(ptr.cast(), old_len, new_len, libc::MREMAP_MAYMOVE);
    if moved == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    moved.cast()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer filled through the allocator, with a byte pattern of its own.
    fn filled(len: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(len, 8).unwrap();
        // SAFETY: a non-zero layout; the buffer is written only within `len`.
        let ptr = unsafe { HugePagesForLarge.alloc(layout) };
        assert!(!ptr.is_null());
        for i in pattern_at(len) {
            // SAFETY: inside the buffer.
            unsafe { ptr.add(i).write(i as u8 ^ 0x5a) };
        }
        (ptr, layout)
    }

    /// Where [`filled`] writes in a buffer of `len`: a byte in each page, and the last.
    fn pattern_at(len: usize) -> impl Iterator<Item = usize> {
        (0..len).step_by(4096).chain([len - 1])
    }

    /// Whether the first `kept` bytes of a buffer [`filled`] for `len` still hold it.
    fn holds_pattern(ptr: *const u8, len: usize, kept: usize) -> bool {
        pattern_at(len)
            .filter(|&i| i < kept)
            // SAFETY: inside the buffer, each byte written by `filled`.
            .all(|i| unsafe { ptr.add(i).read() } == i as u8 ^ 0x5a)
    }

    /// Buffers small and large, grown and shrunk within their kind and across the
    /// threshold both ways, keep their bytes; each is freed the way it was made.
    #[test]
    fn buffers_keep_their_bytes_whatever_path_they_take() {
        let small = 64 << 10;
        let large = MAPPED_FROM_BYTES + 12345;
        let larger = 3 * MAPPED_FROM_BYTES + 1;
        for (from, to) in [
            (small, 2 * small),
            (small, large),
            (large, larger),
            (larger, large),
            (large, small),
            (large, large + 1),
        ] {
            let (ptr, layout) = filled(from);
            assert_eq!(ptr as usize % 4096 == 0, mapped(layout), "{from}");
            // SAFETY: `ptr` was made for `layout` by this allocator.
            let moved = unsafe { HugePagesForLarge.realloc(ptr, layout, to) };
            assert!(!moved.is_null(), "{from} → {to}");
            assert!(holds_pattern(moved, from, from.min(to)), "{from} → {to}");
            // SAFETY: `moved` is the buffer for `to` bytes of the same alignment.
            unsafe { HugePagesForLarge.dealloc(moved, Layout::from_size_align(to, 8).unwrap()) };
        }
    }

    /// A zeroed large buffer reads as zeros throughout.
    #[test]
    fn a_zeroed_large_buffer_is_zero() {
        let layout = Layout::from_size_align(MAPPED_FROM_BYTES + 1, 8).unwrap();
        // SAFETY: a non-zero layout, read within its size, then freed with it.
        unsafe {
            let ptr = HugePagesForLarge.alloc_zeroed(layout);
            assert!(!ptr.is_null());
            let bytes = std::slice::from_raw_parts(ptr, layout.size());
            assert!(bytes.iter().all(|&b| b == 0));
            HugePagesForLarge.dealloc(ptr, layout);
        }
    }

    /// Alignments stricter than a page, which a mapping cannot promise beyond its
    /// start, are the system allocator's.
    #[test]
    fn only_large_page_aligned_layouts_are_mapped() {
        let at = |size, align| mapped(Layout::from_size_align(size, align).unwrap());
        assert!(at(MAPPED_FROM_BYTES, 4096));
        assert!(!at(MAPPED_FROM_BYTES - 1, 8));
        assert!(!at(MAPPED_FROM_BYTES, 8192));
        assert_eq!(mapping_len(1), Some(HUGE_PAGE));
        assert_eq!(mapping_len(usize::MAX), None);
    }
}
