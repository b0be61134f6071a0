//! The device memory profile reader on arbitrary bytes (raw pprof, or gzip when they
//! start with its magic): it must return a profile or an error, never panic, and what
//! it returns must hold together: groups add up to the total, and the growth from a
//! profile to itself is nothing.
//!
//! Seeds: the recorded profiles, raw as well as gzip'd (the fuzzer mutates raw pprof
//! far better than a deflate stream):
//!
//!     mkdir -p corpus/device_profile
//!     for f in ../tests/fixtures/profiles_*/*.prof; do
//!         seed="corpus/device_profile/$(basename "$(dirname "$f")")_$(basename "$f" .prof)"
//!         cp "$f" "$seed.prof"; gunzip -c "$f" > "$seed.pb"
//!     done
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::evidence::device_profile;

fuzz_target!(|data: &[u8]| {
    let Ok(profile) = device_profile::read("fuzz.prof", data) else {
        return;
    };
    let grouped: u64 = profile.groups.iter().map(|g| g.bytes).sum();
    assert_eq!(grouped, profile.total_bytes);
    assert!(device_profile::growth(&[profile.clone(), profile]).is_empty());
});
