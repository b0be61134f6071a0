//! Small readers shared by the format families: the text after a key, a size after a key,
//! `name="value"` attributes, and strings kept to a bounded length.

use super::units;

/// Longest string kept in a field: XLA labels and JAX op names can run to kilobytes, and
/// a hostile paste could be longer.
pub const MAX_FIELD: usize = 4096;

/// The text after the first `key` in `line`.
pub fn after<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let at = line.find(key)?;
    line.get(at + key.len()..)
}

/// The size right after `key` (an exact count beside it wins).
pub fn size_after(line: &str, key: &str) -> Option<u64> {
    units::size_exact_prefix(after(line, key)?, false).map(|(bytes, _)| bytes)
}

/// The size or bare byte count right after `key`.
pub fn count_after(line: &str, key: &str) -> Option<u64> {
    units::size_exact_prefix(after(line, key)?, true).map(|(bytes, _)| bytes)
}

/// The value of a field line `Key: value` whose key is at the start of `body`.
pub fn field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    body.strip_prefix(key).map(str::trim)
}

/// The quoted value of `name="…"` in `line`, honouring backslash escapes, as printed (a
/// value cut by the end of the line is kept up to there).
pub fn quoted_attr(line: &str, name: &str) -> Option<String> {
    let mut search = 0;
    while let Some(found) = line.get(search..)?.find(name) {
        let at = search + found;
        let boundary = line
            .get(..at)
            .and_then(|b| b.chars().next_back())
            .is_none_or(|c| c == ' ' || c == '\t' || c == ':');
        let value = line.get(at + name.len()..)?.strip_prefix("=\"");
        if let (true, Some(value)) = (boundary, value) {
            return Some(bounded(until_closing_quote(value)));
        }
        search = at + name.len();
    }
    None
}

/// `value` up to its closing, unescaped `"`.
fn until_closing_quote(value: &str) -> &str {
    let mut escaped = false;
    for (i, c) in value.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return value.get(..i).unwrap_or(value),
            _ => escaped = false,
        }
    }
    value
}

/// The digits of `name=123` in `line`.
pub fn number_attr(line: &str, name: &str) -> Option<u64> {
    let key = format!("{name}=");
    let rest = after(line, &key)?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    units::integer(rest.get(..digits)?)
}

/// `text`, cut to at most `MAX_FIELD` bytes on a character boundary.
pub fn bounded(text: &str) -> String {
    let mut end = text.len().min(MAX_FIELD);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.get(..end).unwrap_or("").to_string()
}

/// The first whitespace-free word of `text`, bounded.
pub fn word(text: &str) -> Option<String> {
    let word = text.split_whitespace().next()?;
    Some(bounded(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_operator_attributes() {
        let line = r#"Operator: op_type="FloorMod" op_name="a/b[x=\"1\"]" source_file="/m.py" source_line=1059"#;
        assert_eq!(quoted_attr(line, "op_type").as_deref(), Some("FloorMod"));
        assert_eq!(
            quoted_attr(line, "op_name").as_deref(),
            Some(r#"a/b[x=\"1\"]"#)
        );
        assert_eq!(quoted_attr(line, "source_file").as_deref(), Some("/m.py"));
        assert_eq!(number_attr(line, "source_line"), Some(1059));
        assert_eq!(quoted_attr(r#"deduplicated_name="x""#, "name"), None);
        assert_eq!(
            quoted_attr(r#"op_name="cut off"#, "op_name").as_deref(),
            Some("cut off")
        );
    }

    #[test]
    fn bounds_strings_on_character_boundaries() {
        let long = "é".repeat(MAX_FIELD);
        let kept = bounded(&long);
        assert!(kept.len() <= MAX_FIELD && kept.chars().all(|c| c == 'é'));
    }

    #[test]
    fn sizes_after_keys() {
        assert_eq!(
            size_after("Used 9.08G of 7.48G hbm.", "Used "),
            Some(9_749_575_762)
        );
        assert_eq!(
            count_after("Limit:        9955036364", "Limit:"),
            Some(9_955_036_364)
        );
        assert_eq!(size_after("program  unknown size", "program"), None);
    }
}
