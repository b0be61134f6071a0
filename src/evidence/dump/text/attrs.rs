//! The small pieces of HLO text syntax the dump's files share: quoted strings,
//! `{key=value key="value"}` blocks, and bracket matching that skips quoted text.

/// A `"…"` string at the start of `s` (escapes undone) and what follows it.
pub fn quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, body.get(i.saturating_add(1)..)?)),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            _ => out.push(c),
        }
    }
    None
}

/// The text inside the bracket `s` starts with (`{`, `(`), up to its match, skipping
/// quoted strings; and what follows the closing bracket.
pub fn bracketed(s: &str) -> Option<(&str, &str)> {
    let open = s.chars().next()?;
    let close = match open {
        '{' => '}',
        '(' => ')',
        '[' => ']',
        _ => return None,
    };
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if c == '"' {
            in_string = true;
        } else if c == open {
            depth = depth.saturating_add(1);
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                let inside = s.get(open.len_utf8()..i)?;
                return Some((inside, s.get(i.saturating_add(1)..)?));
            }
        }
    }
    None
}

/// `key=value key="quoted value" …` (the inside of `metadata={…}` or of a stack-frame
/// table row) as pairs; stops at the first thing that is not a pair.
pub fn pairs(mut s: &str) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start();
        let Some((key, rest)) = s.split_once('=') else {
            return out;
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return out;
        }
        if rest.starts_with('"') {
            let Some((value, rest)) = quoted(rest) else {
                return out;
            };
            out.push((key, value));
            s = rest;
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            out.push((key, rest.get(..end).unwrap_or("").to_owned()));
            s = rest.get(end..).unwrap_or("");
        }
    }
}

/// The value of `name="…"` in an instruction's attributes, when present.
pub fn quoted_attribute(line: &str, name: &str) -> Option<String> {
    let at = line.find(name)?;
    let rest = line
        .get(at.saturating_add(name.len())..)?
        .strip_prefix('=')?;
    quoted(rest).map(|(value, _)| value)
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::arithmetic_side_effects
)]
mod tests {
    use super::*;

    #[test]
    fn reads_quoted_strings_and_pairs() {
        assert_eq!(quoted(r#""a\"b" rest"#), Some(("a\"b".to_owned(), " rest")));
        assert_eq!(quoted(r#""open"#), None);
        let p = pairs(r#"op_name="jit(f)/jvp()/div" stack_frame_id=6 source_line=12"#);
        assert_eq!(p[0], ("op_name", "jit(f)/jvp()/div".to_owned()));
        assert_eq!(p[1], ("stack_frame_id", "6".to_owned()));
        assert_eq!(p.len(), 3);
        assert!(pairs("no pairs here").is_empty());
    }

    #[test]
    fn matches_brackets_past_quotes() {
        assert_eq!(
            bracketed(r#"{a="}" b={c}} tail"#),
            Some((r#"a="}" b={c}"#, " tail"))
        );
        assert_eq!(
            bracketed("(f32[1], (s32[])) x"),
            Some(("f32[1], (s32[])", " x"))
        );
        assert_eq!(bracketed("{never closed"), None);
        assert_eq!(bracketed("x"), None);
    }

    #[test]
    fn finds_quoted_attributes() {
        let line =
            r#"%cc = s8[4]{0} custom-call(), custom_call_target="xla_python_cpu_callback", x=1"#;
        assert_eq!(
            quoted_attribute(line, "custom_call_target").as_deref(),
            Some("xla_python_cpu_callback")
        );
        assert_eq!(quoted_attribute(line, "absent"), None);
        assert_eq!(
            quoted_attribute("custom_call_target=1", "custom_call_target"),
            None
        );
    }
}
