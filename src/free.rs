//! Freeing large values off the critical path. Giving back tens of megabytes (a host
//! part's history once merged, the scan once the report is assembled) costs
//! milliseconds, most of it the kernel unmapping their pages one by one; on the serial
//! stretches between the two-thread phases the other core is idle, so natively a
//! short-lived thread of its own does it while the caller goes on.

/// Values smaller than this are freed in place: starting a thread (tens of
/// microseconds, and its stack mapped and unmapped) would cost more.
#[cfg(not(target_arch = "wasm32"))]
const FREE_LATER_FROM_BYTES: usize = 1 << 20;

/// Frees `value`, which holds about `bytes` on the heap, on a thread of its own
/// natively when it is large; in place when it is small, in WebAssembly (no threads),
/// or when no thread can be started.
pub(crate) fn free_later<T: Send + 'static>(value: T, bytes: usize) {
    #[cfg(not(target_arch = "wasm32"))]
    if bytes >= FREE_LATER_FROM_BYTES {
        // A failed start drops the closure, and `value` with it, here.
        let _ = std::thread::Builder::new()
            .name("oomlens-free".into())
            // Dropping recurses only as deep as the value nests.
            .stack_size(256 << 10)
            .spawn(move || drop(value));
        return;
    }
    let _ = bytes;
    drop(value);
}

/// The bytes `v` holds on the heap (its own buffer, not what its items point to).
pub(crate) fn heap_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity().saturating_mul(std::mem::size_of::<T>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value is dropped, small in place and large by a thread.
    #[test]
    fn a_value_freed_later_is_dropped() {
        let (tx, rx) = std::sync::mpsc::channel();
        struct Tell(std::sync::mpsc::Sender<()>);
        impl Drop for Tell {
            fn drop(&mut self) {
                let _ = self.0.send(());
            }
        }
        for bytes in [0, FREE_LATER_FROM_BYTES] {
            free_later(Tell(tx.clone()), bytes);
            assert!(rx.recv_timeout(std::time::Duration::from_secs(10)).is_ok());
        }
    }
}
