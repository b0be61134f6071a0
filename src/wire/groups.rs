//! A varint's 7-bit groups packed into one number, for up to eight bytes read as one
//! word: by shifts on any CPU, or by one BMI2 `pext` where the CPU runs it fast.
//!
//! Every multi-byte number the scan decodes (event times, allocator stats) goes through
//! here, several million times per capture. `pext` is one instruction; the shifts are
//! a dozen. Which one runs is settled once per process, before the first walk over a
//! capture ([`learn_cpu`]), from the CPU itself, so one binary runs everywhere. What it
//! saves is measured in BENCHMARKS.md ("thirteenth session").

/// The 7-bit groups of the eight varint bytes in `word` (their high bits ignored),
/// packed into one number.
#[inline(always)]
pub(super) fn pack_groups(word: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if x86::pext_is_fast() {
        // SAFETY: `pext` is known fast only on a CPU that has BMI2.
        #[allow(unsafe_code)]
        return unsafe { x86::by_pext(word) };
    }
    by_shifts(word)
}

/// Learns whether this CPU runs `pext` fast, the first time only. Until then, and on
/// other CPUs, varints are packed by shifts: the answer is the same either way.
#[inline]
pub(super) fn learn_cpu() {
    #[cfg(target_arch = "x86_64")]
    x86::find_out_once();
}

/// Pairs, then quads, then the two halves. Each step moves the upper half of every
/// lane down by the gap below it: one mask a step (the lower half is what the upper
/// leaves), so that the walk's loops keep fewer constants at hand.
#[inline(always)]
fn by_shifts(word: u64) -> u64 {
    let x = word & GROUPS;
    let upper = x & 0x7f00_7f00_7f00_7f00;
    let x = (x ^ upper) | (upper >> 1);
    let upper = x & 0x3fff_0000_3fff_0000;
    let x = (x ^ upper) | (upper >> 2);
    let upper = x & 0x0fff_ffff_0000_0000;
    (x ^ upper) | (upper >> 4)
}

/// The low seven bits of each byte.
const GROUPS: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// `pext` on x86-64, and whether this CPU runs it fast.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::sync::atomic::{AtomicU8, Ordering};

    use super::GROUPS;

    /// What is known of this CPU's `pext`: nothing yet, that it is fast, or that it is
    /// missing or run in microcode.
    static PEXT: AtomicU8 = AtomicU8::new(UNKNOWN);
    const UNKNOWN: u8 = 0;
    const FAST: u8 = 1;
    const SLOW: u8 = 2;

    /// Whether this CPU is known to run `pext` fast.
    #[inline(always)]
    pub(super) fn pext_is_fast() -> bool {
        PEXT.load(Ordering::Relaxed) == FAST
    }

    /// Asks the CPU, the first time only.
    #[inline]
    pub(super) fn find_out_once() {
        if PEXT.load(Ordering::Relaxed) == UNKNOWN {
            find_out();
        }
    }

    /// [`super::by_shifts`] in one instruction: `pext` gathers the bits `GROUPS`
    /// selects into the low bits, in order.
    ///
    /// # Safety
    /// The CPU must have BMI2.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(super) unsafe fn by_pext(word: u64) -> u64 {
        let packed: u64;
        // Inline assembly rather than the intrinsic: the intrinsic inlines only into
        // code compiled for BMI2, and the binary is compiled for any x86-64.
        // SAFETY: the caller has checked BMI2; the instruction touches registers only.
        unsafe {
            core::arch::asm!(
                "pext {packed}, {word}, {groups}",
                packed = lateout(reg) packed,
                word = in(reg) word,
                groups = in(reg) GROUPS,
                options(pure, nomem, nostack, preserves_flags),
            );
        }
        packed
    }

    /// Finds out whether this CPU runs `pext` fast (threads that race here store the
    /// same answer).
    #[cold]
    #[inline(never)]
    fn find_out() {
        PEXT.store(if has_fast_pext() { FAST } else { SLOW }, Ordering::Relaxed);
    }

    /// BMI2, on any CPU but AMD's Zen 1 and Zen 2 (families 0x17 and 0x18, Hygon's
    /// included), which run `pext` in microcode at up to hundreds of cycles. From Zen 3
    /// (family 0x19) on, as on Intel's CPUs since Haswell, it is a plain instruction of
    /// a few cycles.
    pub(super) fn has_fast_pext() -> bool {
        if !std::is_x86_feature_detected!("bmi2") {
            return false;
        }
        let vendor = core::arch::x86_64::__cpuid(0);
        let vendor = [vendor.ebx, vendor.edx, vendor.ecx].map(u32::to_le_bytes);
        let amd =
            vendor == [*b"Auth", *b"enti", *b"cAMD"] || vendor == [*b"Hygo", *b"nGen", *b"uine"];
        let signature = core::arch::x86_64::__cpuid(1).eax;
        // The family as the manuals define it: the base, plus the extended family when
        // the base is 0xf.
        let base = (signature >> 8) & 0xf;
        let family = if base == 0xf {
            base.wrapping_add((signature >> 20) & 0xff)
        } else {
            base
        };
        !(amd && family < 0x19)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way gives what the varint's groups, put together one by one, give.
    #[test]
    fn every_way_of_packing_gives_the_groups_in_order() {
        let by_groups = |word: u64| {
            (0..8).fold(0u64, |packed, i| {
                packed | ((word >> (8 * i)) & 0x7f) << (7 * i)
            })
        };
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut words: Vec<u64> = vec![0, u64::MAX, GROUPS, !GROUPS, 0x8080_8080_8080_8080];
        words.extend((0..10_000).map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }));
        #[cfg(target_arch = "x86_64")]
        let pext = std::is_x86_feature_detected!("bmi2");
        learn_cpu();
        for &w in &words {
            assert_eq!(by_shifts(w), by_groups(w), "{w:#x}");
            assert_eq!(pack_groups(w), by_groups(w), "{w:#x}");
            #[cfg(target_arch = "x86_64")]
            if pext {
                // SAFETY: BMI2 was just detected.
                #[allow(unsafe_code)]
                let packed = unsafe { x86::by_pext(w) };
                assert_eq!(packed, by_groups(w), "{w:#x}");
            }
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(x86::pext_is_fast(), x86::has_fast_pext());
    }
}
