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
    }
}
