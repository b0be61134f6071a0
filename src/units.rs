//! Byte figures as people read them: MiB with thousands separators, GiB to two decimals.

const MIB: f64 = (1u64 << 20) as f64;
const GIB: f64 = (1u64 << 30) as f64;

/// `3,495 MiB`, or `12.5 MiB` / `0.02 MiB` below 100 MiB.
pub fn mib(bytes: u64) -> String {
    let v = bytes as f64 / MIB;
    if v >= 100.0 {
        format!("{} MiB", thousands(v.round() as u64))
    } else if v >= 1.0 {
        format!("{v:.1} MiB")
    } else if bytes == 0 {
        "0 MiB".into()
    } else {
        format!("{v:.3} MiB")
    }
}

/// `3.72 GiB`.
pub fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / GIB)
}

/// A size in the unit that reads best, for figures that range from bytes to exabytes
/// (an error message's): `512 B`, `62.5 KiB`, `129.5 MiB`, `41.74 GiB`, `1.25 TiB`,
/// `3.47 EiB`. Every unit is 1024-based.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["TiB", "PiB", "EiB", "ZiB"];
    if bytes < 1 << 10 {
        return format!("{bytes} B");
    }
    if bytes < 1 << 20 {
        return format!("{:.1} KiB", bytes as f64 / 1024.0);
    }
    if bytes < 1 << 30 {
        return format!("{:.1} MiB", bytes as f64 / MIB);
    }
    if bytes < 1 << 40 {
        return gib(bytes);
    }
    let mut value = bytes as f64 / (1u64 << 40) as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

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
    fn formats() {
        assert_eq!(mib(3_664_773_120), "3,495 MiB");
        assert_eq!(gib(3_994_000_000), "3.72 GiB");
        assert_eq!(mib(0), "0 MiB");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(size(512), "512 B");
        assert_eq!(size(64_000), "62.5 KiB");
        assert_eq!(size(135_790_592), "129.5 MiB");
        assert_eq!(size(52_978_421_596), "49.34 GiB");
        assert_eq!(size(1_374_521_760_000), "1.25 TiB");
        assert_eq!(size(4_000_637_620_985_759_007), "3.47 EiB");
    }
}
