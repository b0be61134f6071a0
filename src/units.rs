//! Sizes as people read them, by one rule in every report (text, Markdown, HTML, the
//! page): the 1024-based unit in which the figure has 1 to 4 integer digits, with two
//! decimals below 100 and one from 100 up (`512 B`, `62.50 KiB`, `47.30 MiB`,
//! `497.3 MiB`, `256.0 GiB`). The exact bytes travel beside it in the JSON (and the
//! page's hover), so the rounding never hides a figure. docs/units.md says why.

const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `47.30 MiB`, `497.3 MiB`, `256.0 GiB`, `512 B`: a size by the rule above. A non-zero
/// size never reads as zero (below 1 KiB it is given in bytes).
pub fn size(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64;
    let mut unit = 0;
    // Step up while the value, as it will be printed, would reach 1024: 1023.96 MiB
    // prints as `1.00 GiB`, never `1024.0 MiB`.
    while unit + 1 < UNITS.len() && rounded(value) >= 1024.0 {
        value /= 1024.0;
        unit += 1;
    }
    if (value * 100.0).round() < 10_000.0 {
        format!("{value:.2} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The value as `size` prints it: two decimals while they read below 100, else one.
fn rounded(value: f64) -> f64 {
    let two = (value * 100.0).round() / 100.0;
    if two < 100.0 {
        two
    } else {
        (value * 10.0).round() / 10.0
    }
}

/// `+1.00 MiB`, `−14.27 MiB`, `0 B`: a change of size (after − before).
pub fn signed_size(delta: i64) -> String {
    match delta.signum() {
        1 => format!("+{}", size(delta.unsigned_abs())),
        -1 => format!("−{}", size(delta.unsigned_abs())),
        _ => size(0),
    }
}

/// `1,234,567`: a count (of events, arrays, bytes written out in full).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_from_bytes_to_exabytes() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1), "1 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1024), "1.00 KiB");
        assert_eq!(size(64_000), "62.50 KiB");
        assert_eq!(size(49_597_235), "47.30 MiB");
        assert_eq!(size(135_790_592), "129.5 MiB");
        assert_eq!(size(3_664_773_120), "3.41 GiB");
        assert_eq!(size(20_480 << 20), "20.00 GiB");
        assert_eq!(size(274_888_392_704), "256.0 GiB");
        assert_eq!(size(1_374_521_760_000), "1.25 TiB");
        assert_eq!(size(4_000_637_620_985_759_007), "3.47 EiB");
        assert_eq!(size(u64::MAX), "16.00 EiB");
    }

    #[test]
    fn never_more_than_four_integer_digits() {
        // Just under a unit boundary: printed rounded, it would read 1024.0 MiB.
        assert_eq!(size((1 << 30) - 1), "1.00 GiB");
        assert_eq!(size(1023 << 20), "1023.0 MiB");
        assert_eq!(size((100 << 20) - 1), "100.0 MiB");
        for shift in 10..63 {
            for bytes in [
                (1u64 << shift) - 1,
                1 << shift,
                (1 << shift) + 1,
                3 << (shift - 2),
            ] {
                let shown = size(bytes);
                let integer = shown.split(['.', ' ']).next().unwrap();
                assert!((1..=4).contains(&integer.len()), "{bytes}: {shown}");
                assert_ne!(integer, "0", "{bytes}: {shown}");
            }
        }
    }

    #[test]
    fn signed_and_counts() {
        assert_eq!(signed_size(-14_958_592), "−14.27 MiB");
        assert_eq!(signed_size(1 << 20), "+1.00 MiB");
        assert_eq!(signed_size(0), "0 B");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
