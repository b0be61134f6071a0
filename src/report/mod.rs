//! The report model and its renderers. Renderers compute nothing: they lay out what
//! the analysis put in the model.

/// Writes a line to a renderer's `String` (which cannot fail to take one); the
/// renderers' files bring `std::fmt::Write` into scope.
macro_rules! line {
    ($out:expr) => { $out.push('\n') };
    ($out:expr, $($arg:tt)*) => {{ let _ = writeln!($out, $($arg)*); }};
}

pub mod diff_json;
pub mod diff_markdown;
pub mod diff_text;
pub mod diff_view;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod present;
mod sorted_json;
pub mod text;
pub mod view;

/// Makes an untrusted string from a capture safe to print on one line: control and
/// bidirectional-override characters become `\u{…}` escapes, and it is cut to `max` chars.
pub fn clean(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 8));
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        let dangerous = c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if dangerous {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

pub use present::short_source;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_escapes_controls_and_bidi() {
        assert_eq!(clean("a\nb\u{202e}c", 100), "a\\u{a}b\\u{202e}c");
        assert_eq!(clean("abcdef", 3), "abc…");
    }
}
