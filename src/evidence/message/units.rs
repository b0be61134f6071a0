//! Byte sizes as XLA, TensorFlow and the TPU runtime print them.
//!
//! XLA's `HumanReadableNumBytes` prints `17.60G`, `512.0K`, `3.47E` (no `iB`), the BFC
//! allocator and XLA's GPU buffer assignment print `3.41GiB`, `512.0KiB`, and exact counts
//! appear as `3664773120 bytes`, `(268435456B)`, `(rounded to 3664773120)` or with
//! thousands separators (`6,532,939,776 bytes`). Every unit is 1024-based, whatever its
//! spelling: that is what the printers divide by.
//!
//! The conversion is exact decimal arithmetic (no `f64`), rounded to the nearest byte,
//! so `17.60G` is 18897856102 on every platform.

/// The most significant digits kept from a printed number; more cannot change a byte
/// count that fits in 64 bits once scaled.
const MAX_DIGITS: u32 = 19;

/// A size at the start of `text` (after spaces): the bytes and how many bytes of `text`
/// it spans. `unitless` says whether a bare number counts (as bytes).
pub fn size_prefix(text: &str, unitless: bool) -> Option<(u64, usize)> {
    let start = text.len() - text.trim_start().len();
    let rest = text.get(start..)?;
    let (mantissa, frac_digits, number_len) =
        decimal_comma_prefix(rest).or_else(|| number_prefix(rest))?;
    let after = rest.get(number_len..)?;
    let (shift, unit_len) = match unit_prefix(after).or_else(|| point_then_unit(after)) {
        Some(unit) => unit,
        None if unitless => (0, 0),
        None => return None,
    };
    let bytes = scale(mantissa, frac_digits, shift)?;
    Some((bytes, start + number_len + unit_len))
}

/// A size at the start of `text`, then an exact count printed right after it when there
/// is one (`3.41GiB (rounded to 3664773120)`, `256.00MiB (268435456B)`,
/// `529.00M (     554,696,704 bytes)`): the exact count wins.
pub fn size_exact_prefix(text: &str, unitless: bool) -> Option<(u64, usize)> {
    let (bytes, len) = size_prefix(text, unitless)?;
    let rest = text.get(len..).unwrap_or("");
    match exact_in_parens(rest) {
        Some((exact, extra)) => Some((exact, len + extra)),
        None => Some((bytes, len)),
    }
}

/// `(rounded to N)`, `(N bytes)`, `(NB)` at the start of `text` (after spaces).
fn exact_in_parens(text: &str) -> Option<(u64, usize)> {
    let start = text.len() - text.trim_start().len();
    let inner = text.get(start..)?.strip_prefix('(')?;
    let close = inner.find(')')?;
    let body = inner.get(..close)?.trim();
    let body = body.strip_prefix("rounded to").unwrap_or(body).trim();
    let digits = body
        .strip_suffix("bytes")
        .or_else(|| body.strip_suffix("Bytes"))
        .or_else(|| body.strip_suffix('B'))
        .unwrap_or(body)
        .trim();
    let exact = integer(digits)?;
    Some((exact, start + 1 + close + 1))
}

/// An integer with optional `,` thousands separators and nothing else.
pub fn integer(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit() || b == b',') {
        return None;
    }
    let mut value: u64 = 0;
    for b in text.bytes().filter(|b| b.is_ascii_digit()) {
        value = value.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(value)
}

/// The leading decimal number: its digits as an integer, the count of digits after the
/// point, and its length in bytes. `6,532,939,776` reads as one number.
fn number_prefix(text: &str) -> Option<(u128, u32, usize)> {
    let bytes = text.as_bytes();
    let mut mantissa: u128 = 0;
    let (mut kept, mut frac, mut len, mut seen_point, mut any) = (0u32, 0u32, 0usize, false, false);
    // Digits since the start or the last `,`: a thousands group leads with 1 to 3.
    let (mut group, mut grouped) = (0usize, false);
    while let Some(&b) = bytes.get(len) {
        match b {
            b'0'..=b'9' => {
                any = true;
                group += 1;
                if kept < MAX_DIGITS {
                    mantissa = mantissa * 10 + u128::from(b - b'0');
                    kept += u32::from(mantissa > 0);
                    frac += u32::from(seen_point);
                } else if !seen_point {
                    return None; // an integer part too long for any real size
                }
            }
            b'.' if !seen_point && bytes.get(len + 1).is_some_and(u8::is_ascii_digit) => {
                seen_point = true
            }
            b',' if !seen_point
                && (group == 3 || (!grouped && (1..=3).contains(&group)))
                && thousands_group(bytes.get(len + 1..)) =>
            {
                grouped = true;
                group = 0;
            }
            _ => break,
        }
        len += 1;
    }
    any.then_some((mantissa, frac, len))
}

/// A number with a decimal comma, as a German or French locale prints it (`635,29M`),
/// in the form of [`number_prefix`]. Read only right before a unit, since `1,2` alone may
/// be a list, and only with one or two digits after the comma: three are a thousands
/// group.
fn decimal_comma_prefix(text: &str) -> Option<(u128, u32, usize)> {
    let bytes = text.as_bytes();
    let whole = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if whole == 0 || whole > MAX_DIGITS as usize || bytes.get(whole) != Some(&b',') {
        return None;
    }
    let tail = bytes.get(whole + 1..)?;
    let frac = tail.iter().take_while(|b| b.is_ascii_digit()).count();
    if !(1..=2).contains(&frac) {
        return None;
    }
    let len = whole + 1 + frac;
    unit_prefix(text.get(len..)?)?;
    let digits = bytes[..whole].iter().chain(&tail[..frac]);
    let mantissa = digits.fold(0u128, |m, &d| m * 10 + u128::from(d - b'0'));
    Some((mantissa, frac as u32, len))
}

/// Whether a `,` is followed by exactly three digits (a thousands separator, not a list).
fn thousands_group(rest: Option<&[u8]>) -> bool {
    let rest = rest.unwrap_or(&[]);
    rest.len() >= 3
        && rest.iter().take(3).all(u8::is_ascii_digit)
        && !rest.get(3).is_some_and(u8::is_ascii_digit)
}

/// NumPy prints three significant digits and keeps the point when none is left after
/// it (`Unable to allocate 306. GiB`): a point, a space and a unit word of two letters or
/// more, so that a sentence's end (`… 306. Then`) stays a sentence's end.
fn point_then_unit(text: &str) -> Option<(u32, usize)> {
    let (shift, len) = unit_prefix(text.strip_prefix('.')?)?;
    (len > 2).then_some((shift, len + 1))
}

/// The unit at the start of `text`: its power of two and its length. A full word
/// (`bytes`, `GiB`, `MB`) may follow one space; a single letter (`G`, `K`) must be glued
/// to the number, so `5 Exceeded` is not read as exabytes.
fn unit_prefix(text: &str) -> Option<(u32, usize)> {
    let glued = unit_word(text, true);
    if glued.is_some() {
        return glued;
    }
    let rest = text.strip_prefix(' ')?;
    unit_word(rest, false).map(|(shift, len)| (shift, len + 1))
}

fn unit_word(text: &str, glued: bool) -> Option<(u32, usize)> {
    const WORDS: [(&str, u32); 4] = [("bytes", 0), ("byte", 0), ("Bytes", 0), ("B", 0)];
    for (word, shift) in WORDS {
        if text.starts_with(word) && word_ends(text, word.len()) && (glued || word.len() > 1) {
            return Some((shift, word.len()));
        }
    }
    let letter = text.bytes().next()?;
    let shift = match letter.to_ascii_uppercase() {
        b'K' => 10,
        b'M' => 20,
        b'G' => 30,
        b'T' => 40,
        b'P' => 50,
        b'E' => 60,
        _ => return None,
    };
    for suffix in ["iB", "B", ""] {
        let len = 1 + suffix.len();
        let matches = text.get(1..len) == Some(suffix) && word_ends(text, len);
        if matches && (glued || !suffix.is_empty()) {
            return Some((shift, len));
        }
    }
    None
}

/// Whether the unit ends at `len` (not the first letters of a longer word).
fn word_ends(text: &str, len: usize) -> bool {
    !text
        .as_bytes()
        .get(len)
        .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// `mantissa / 10^frac × 2^shift`, rounded half up, when it fits in 64 bits.
fn scale(mantissa: u128, frac: u32, shift: u32) -> Option<u64> {
    let divisor = 10u128.checked_pow(frac)?;
    let numerator = mantissa
        .checked_shl(shift)?
        .checked_mul(2)?
        .checked_add(divisor)?;
    let value = numerator / divisor.checked_mul(2)?;
    u64::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(text: &str) -> Option<u64> {
        size_prefix(text, false).map(|(b, _)| b)
    }

    #[test]
    fn units_are_1024_based_and_rounded_to_the_nearest_byte() {
        assert_eq!(size("17.60G"), Some(18_897_856_102)); // 18897856102.4
        assert_eq!(size("3.41GiB"), Some(3_661_459_620)); // 3661459619.84
        assert_eq!(size("512.0KiB"), Some(524_288));
        assert_eq!(size("1.2M"), Some(1_258_291)); // 1258291.2
        assert_eq!(size("0B"), Some(0));
        // NumPy keeps the point of three significant digits (heldout42/08).
        assert_eq!(size("306. GiB"), Some(328_564_998_144));
        assert_eq!(size("306. Then"), None);
        assert_eq!(size("5.G"), None);
        assert_eq!(size("4.0K"), Some(4096));
        assert_eq!(size("1.25TiB"), Some(1_374_389_534_720));
        assert_eq!(size("3.47E"), Some(4_000_637_620_985_759_007)); // 3.47 × 2^60
        assert_eq!(size("3664773120 bytes"), Some(3_664_773_120));
        assert_eq!(size("16.5 GB"), Some(17_716_740_096));
    }

    #[test]
    fn exact_counts_win() {
        let exact = |t: &str| size_exact_prefix(t, false).map(|(b, _)| b);
        assert_eq!(
            exact("3.41GiB (rounded to 3664773120)requested"),
            Some(3_664_773_120)
        );
        assert_eq!(exact("256.00MiB (268435456B) on device"), Some(268_435_456));
        assert_eq!(exact("529.00M (     554,696,704 bytes)"), Some(554_696_704));
        assert_eq!(
            exact("13.58GiB (14583876403 bytes) by"),
            Some(14_583_876_403)
        );
        assert_eq!(exact("0B (0.00%)"), Some(0));
        assert_eq!(exact("635,29M (666146048 bytes) from"), Some(666_146_048));
    }

    #[test]
    fn reads_a_decimal_comma_only_before_a_unit() {
        assert_eq!(size("635,29M"), Some(666_149_847)); // 635.29 × 2^20 = 666149847.04
        assert_eq!(size("1,5 GiB"), Some(1_610_612_736));
        assert_eq!(size_prefix("1,2]", true).map(|s| s.0), Some(1));
        assert_eq!(size("6,532,939,776 bytes"), Some(6_532_939_776));
        assert_eq!(size("1,234M"), Some(1_293_942_784)); // a thousands group
    }

    #[test]
    fn refuses_what_is_not_a_size() {
        assert_eq!(size("unknown size"), None);
        assert_eq!(size("12"), None);
        assert_eq!(size_prefix("12", true).map(|s| s.0), Some(12));
        assert_eq!(size("5 Exceeded"), None);
        assert_eq!(size("5Gx"), None);
        assert_eq!(size("99999999999999999999999G"), None);
        assert_eq!(size("20000000000E"), None); // overflows 64 bits
        assert_eq!(size(""), None);
        assert_eq!(size("."), None);
    }

    #[test]
    fn thousands_separators_only_in_groups_of_three() {
        assert_eq!(
            size_prefix("6,532,939,776", true).map(|s| s.0),
            Some(6_532_939_776)
        );
        assert_eq!(size_prefix("4096,128", true).map(|s| s.0), Some(4096));
        assert_eq!(integer("1,234"), Some(1234));
        assert_eq!(integer("12a"), None);
    }
}
