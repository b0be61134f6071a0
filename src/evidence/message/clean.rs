//! What surrounds a pasted message, removed line by line: Windows line ends, terminal
//! colours (and the `[2m[36m` left when a forum drops the escape byte), `> ` quoting
//! (nested), Markdown bold and backticks, and log prefixes (glog/absl `E0123
//! 12:34:56.789 123 file.cc:456] `, TensorFlow `2024-01-01 12:34:56.789: W
//! tensorflow/…/file.cc:12] `, Ray's `(MeshHostWorker pid=489) `).
//!
//! Lines are never joined here; the scanner decides that (see `joins_without_space`).

/// Longest physical line handled as one: a longer one (a whole log without line breaks)
/// is cut into pieces of this size, so memory stays bounded and matching stays linear.
pub const MAX_LINE: usize = 64 * 1024;

/// How far into a line a log prefix may reach.
const PREFIX_SEARCH: usize = 400;
/// The most whitespace-separated fields a log prefix holds before its `file.cc:N]`
/// (glog's `I0312 16:17:33.380804 12345 file.cc:405]` has four, TensorFlow's
/// `2025-03-12 16:17:33.380804: I tensorflow/….cc:405]` four, with room for a host and
/// a process name before them).
const MAX_PREFIX_FIELDS: usize = 10;

/// Calls `f` on every physical line of `text`: split at `\n`, at `\r\n`, and at a lone
/// `\r` (progress bars), longer ones cut at `MAX_LINE` on a character boundary. A log
/// pasted as an escaped string (see [`is_escaped_log`]) is split at its `\n` escapes too.
pub fn for_each_line(text: &str, mut f: impl FnMut(&str)) {
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        for piece in line.split('\r') {
            if is_escaped_log(piece) {
                piece
                    .split(ESCAPED_NEWLINE)
                    .for_each(|p| cut_long(p, &mut f));
            } else {
                cut_long(piece, &mut f);
            }
        }
    }
}

/// The two characters `\` `n`: a line break as a string's repr prints it.
const ESCAPED_NEWLINE: &str = "\\n";

/// Whether `piece` is several log lines printed as one escaped string (a Python
/// exception's repr in a logger's line: `…by allocator GPU_0_bfc\n\t [[{{node …}}]]\nHint:
/// …`): an escaped line break followed by a tab or another one. A Windows path holds
/// `\n` too (`C:\new`), all but never followed by those.
fn is_escaped_log(piece: &str) -> bool {
    piece.match_indices(ESCAPED_NEWLINE).any(|(at, _)| {
        let next = piece.get(at + ESCAPED_NEWLINE.len()..).unwrap_or("");
        next.starts_with('\t') || next.starts_with("\\t") || next.starts_with(ESCAPED_NEWLINE)
    })
}

/// Calls `f` on `piece`, cut at `MAX_LINE` on character boundaries.
fn cut_long(piece: &str, f: &mut impl FnMut(&str)) {
    let mut rest = piece;
    while rest.len() > MAX_LINE {
        let mut cut = MAX_LINE;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (head, tail) = rest.split_at(cut);
        f(head);
        rest = tail;
    }
    f(rest);
}

/// A cleaned physical line.
pub struct Cleaned<'a> {
    /// The line without colours, quoting, emphasis and log prefix, trimmed.
    pub body: &'a str,
    /// Whether the line started with a log prefix (a log record of its own).
    pub logged: bool,
    /// Whether the text (after quoting and prefix) started with whitespace.
    pub indented: bool,
    /// Whether the line ended with whitespace (a word ended there, even if wrapped).
    pub spaced_end: bool,
}

/// Cleans `raw` into `buf` and returns the line's body within it.
pub fn clean<'b>(raw: &str, buf: &'b mut String) -> Cleaned<'b> {
    buf.clear();
    strip_decorations(raw, buf);
    let unquoted = strip_quoting(buf);
    let mut rest = buf.get(unquoted..).unwrap_or("");
    let mut logged = false;
    // A worker prefix may wrap a log record and the other way round: peel both.
    for _ in 0..3 {
        let log = log_prefix_len(rest)
            .max(level_prefix_len(rest))
            .max(neuron_prefix_len(rest));
        let ray = if log == 0 { ray_prefix_len(rest) } else { 0 };
        if log + ray == 0 {
            break;
        }
        logged |= log > 0;
        rest = rest.get(log + ray..).unwrap_or("");
    }
    Cleaned {
        body: rest.trim(),
        logged,
        indented: rest.starts_with([' ', '\t']),
        spaced_end: rest.ends_with([' ', '\t']),
    }
}

/// A run of this many `*` or more is not Markdown's emphasis but a drawing: the BFC
/// allocator's picture of its pool (`*****_`), which must reach its reader whole.
const STAR_DRAWING: usize = 4;

/// Copies `raw` into `out` without escape sequences, control characters, colour
/// remnants, `**` and backticks. Every removed run is ASCII, so the kept slices stay on
/// character boundaries.
fn strip_decorations(raw: &str, out: &mut String) {
    let bytes = raw.as_bytes();
    let (mut kept_from, mut i) = (0, 0);
    while let Some(&b) = bytes.get(i) {
        let stars = if b == b'*' {
            bytes
                .get(i..)
                .unwrap_or(&[])
                .iter()
                .take_while(|&&c| c == b'*')
                .count()
        } else {
            0
        };
        if stars >= STAR_DRAWING {
            i += stars;
            continue;
        }
        let skip = match b {
            0x1b => escape_len(bytes.get(i..).unwrap_or(&[])),
            b'[' => colour_remnant_len(bytes.get(i..).unwrap_or(&[])),
            b'*' if bytes.get(i + 1) == Some(&b'*') => 2,
            b'`' => 1,
            0..=8 | 0x0b..=0x1f | 0x7f => 1,
            _ => 0,
        };
        if skip == 0 {
            i += 1;
            continue;
        }
        out.push_str(raw.get(kept_from..i).unwrap_or(""));
        i += skip;
        kept_from = i;
    }
    out.push_str(raw.get(kept_from..).unwrap_or(""));
}

/// The length of an ANSI escape sequence starting at `ESC`.
fn escape_len(bytes: &[u8]) -> usize {
    if bytes.get(1) != Some(&b'[') {
        return 1;
    }
    let mut len = 2;
    while let Some(&b) = bytes.get(len) {
        len += 1;
        if (0x40..=0x7e).contains(&b) {
            break;
        }
    }
    len
}

/// The length of a colour code whose escape byte was lost (`[0m`, `[2m`, `[1;31m`).
fn colour_remnant_len(bytes: &[u8]) -> usize {
    let mut len = 1;
    let mut digits = 0;
    while let Some(&b) = bytes.get(len) {
        match b {
            b'0'..=b'9' if digits < 3 => digits += 1,
            b';' if digits > 0 => digits = 0,
            b'm' if digits > 0 => return len + 1,
            _ => return 0,
        }
        len += 1;
    }
    0
}

/// The length of the Markdown quote markers (`> `, `> > `, `>>`) at the line's start.
fn strip_quoting(line: &str) -> usize {
    let mut pos = 0;
    loop {
        let rest = line.get(pos..).unwrap_or("");
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        let after = rest.get(spaces..).unwrap_or("");
        if spaces > 3 || !after.starts_with('>') {
            return pos;
        }
        pos += spaces + 1;
        if line.get(pos..).is_some_and(|r| r.starts_with(' ')) {
            pos += 1;
        }
    }
}

/// The length of a log record's prefix ending in `file:line] `: glog and absl lines start
/// with a level letter and digits (`E1111 07:35:00.27 1401 error_handling.py:81]`),
/// TensorFlow's with a date (`2021-03-15 17:16:57.31: I tensorflow/…/bfc_allocator.cc:982]`),
/// sometimes behind a job number (`[1] `).
fn log_prefix_len(line: &str) -> usize {
    let job = job_number_len(line);
    let head = line.get(job..).unwrap_or("");
    let mut first = head.bytes();
    // Python's logging, as vLLM and others print it: `ERROR 06-03 07:41:11 [core.py:1184]`.
    const LEVELS: [&str; 6] = [
        "DEBUG ",
        "INFO ",
        "WARNING ",
        "WARN ",
        "ERROR ",
        "CRITICAL ",
    ];
    let starts_like_log = matches!(
        (first.next(), first.next()),
        (Some(b'0'..=b'9'), _) | (Some(b'I' | b'W' | b'E' | b'F'), Some(b'0'..=b'9' | b' '))
    ) || LEVELS.iter().any(|l| head.starts_with(l));
    if !starts_like_log {
        return 0;
    }
    let window = head.get(..head.len().min(PREFIX_SEARCH)).unwrap_or(head);
    for (at, _) in window.match_indices(']') {
        let prefix = window.get(..at).unwrap_or("");
        // A prefix is a few fields (date, time, thread, level, file); a message before
        // the `file.cc:N]` is a line that quotes a log record after its own text (`7.
        // RESOURCE_EXHAUSTED: OOM when allocating … 2025-03-12 16:17:33: I …cc:405]`).
        if prefix.split_whitespace().count() > MAX_PREFIX_FIELDS {
            break;
        }
        if ends_with_file_line(prefix) {
            let end = at + 1;
            let space = usize::from(head.get(end..).is_some_and(|r| r.starts_with(' ')));
            return job + end + space;
        }
    }
    0
}

/// A bracketed log level at the start of a line, as Elixir's Logger prints it (EXLA's
/// messages come so): `[info] `, `[warning] `, `[error] `.
fn level_prefix_len(line: &str) -> usize {
    // Behind a time of day when Logger prints one (`14:58:53.921 [info] `).
    let time = time_of_day_len(line);
    let rest = line.get(time..).unwrap_or("");
    const LEVELS: [&str; 8] = [
        "[debug] ",
        "[info] ",
        "[notice] ",
        "[warn] ",
        "[warning] ",
        "[error] ",
        "[critical] ",
        "[alert] ",
    ];
    LEVELS
        .iter()
        .find(|l| rest.starts_with(*l))
        .map_or(0, |l| time + l.len())
}

/// AWS Neuron's runtime log prefix: a date with the month's name, the time, `pid:tid`,
/// the level and `MODULE:function` (`2024-Oct-15 18:01:17.728750  3882:3882  ERROR
/// TDRV:dmem_alloc_internal   `).
fn neuron_prefix_len(line: &str) -> usize {
    let b = line.as_bytes();
    let digits =
        |from: usize, n: usize| (from..from + n).all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let letters = (5..8).all(|i| b.get(i).is_some_and(u8::is_ascii_alphabetic));
    let date = digits(0, 4)
        && b.get(4) == Some(&b'-')
        && letters
        && b.get(8) == Some(&b'-')
        && digits(9, 2)
        && b.get(11) == Some(&b' ');
    if !date {
        return 0;
    }
    let time = time_of_day_len(line.get(12..).unwrap_or(""));
    if time == 0 {
        return 0;
    }
    // Then three fields, each followed by spaces: `pid:tid`, the level, `MODULE:function`.
    let mut at = 12 + time;
    for field in 0..3 {
        let rest = line.get(at..).unwrap_or("");
        let rest_trimmed = rest.trim_start();
        let token = rest_trimmed.split([' ', '\t']).next().unwrap_or("");
        let fits = match field {
            1 => !token.is_empty() && token.bytes().all(|c| c.is_ascii_uppercase()),
            _ => token.contains(':'),
        };
        if !fits {
            return 0;
        }
        at += rest.len() - rest_trimmed.len() + token.len();
    }
    let rest = line.get(at..).unwrap_or("");
    at + rest.len() - rest.trim_start().len()
}

/// `14:58:53.921 ` (or `14:58:53 `) at the start of a line.
fn time_of_day_len(line: &str) -> usize {
    let b = line.as_bytes();
    let digits =
        |from: usize, n: usize| (from..from + n).all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    if !(digits(0, 2)
        && b.get(2) == Some(&b':')
        && digits(3, 2)
        && b.get(5) == Some(&b':')
        && digits(6, 2))
    {
        return 0;
    }
    let mut end = 8;
    if b.get(end) == Some(&b'.') {
        end += 1;
        while b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
    }
    if b.get(end) == Some(&b' ') {
        end + 1
    } else {
        0
    }
}

/// `[12] ` at the start of a line (a shell job or worker number).
fn job_number_len(line: &str) -> usize {
    let Some(rest) = line.strip_prefix('[') else {
        return 0;
    };
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    match rest.get(digits..) {
        Some(after) if digits > 0 && after.starts_with("] ") => digits + 3,
        _ => 0,
    }
}

/// Whether `text` ends with `name.ext:123` (a source location in a log prefix).
fn ends_with_file_line(text: &str) -> bool {
    let digits = text.len() - text.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let Some(before) = text.get(..text.len() - digits) else {
        return false;
    };
    let Some(file) = before.strip_suffix(':') else {
        return false;
    };
    let token = file.rsplit([' ', '\t']).next().unwrap_or("");
    digits > 0 && token.contains('.') && !token.is_empty()
}

/// Ray's worker prefix `(MeshHostWorker pid=489) `, possibly behind an editor's line
/// number (`71(MeshHostWorker pid=489)` once its colours are gone).
fn ray_prefix_len(line: &str) -> usize {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let Some(rest) = line.get(digits..).and_then(|r| r.strip_prefix('(')) else {
        return 0;
    };
    match rest.find(')') {
        Some(close) if close < 120 && rest.get(..close).is_some_and(|s| s.contains("pid=")) => {
            let end = digits + 1 + close + 1;
            end + usize::from(line.get(end..).is_some_and(|r| r.starts_with(' ')))
        }
        _ => 0,
    }
}

/// Whether a wrapped line continues the previous one without a space: a number or a
/// token of code cut in the middle (`…%fused_comp` + `utation.46`, `Bin (10` + `48576)`,
/// `15.4` + `4G`) by a terminal or a forum. A line starting with a capital or after a
/// space starts a new word, and so does one after a plain word: people wrap prose at
/// word boundaries (`Ran out of memory in` + `memory space vmem`), and a cut English word
/// costs nothing the parser reads, while a glued pair of words hides a whole phrase.
pub fn joins_without_space(prev: &str, next: &str, next_indented: bool) -> bool {
    let tail = prev.chars().next_back();
    let head = next.chars().next();
    let cut = !next_indented
        && tail.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && head.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let last_token = prev.rsplit([' ', '\t']).next().unwrap_or("");
    let code = last_token
        .chars()
        .any(|c| c.is_ascii_digit() || "=%._()[]{}:/,".contains(c));
    // A whole size ends a word (`… trying to allocate 1.95GiB` / `with allocator …`).
    let whole_size = super::units::size_prefix(last_token, false)
        .is_some_and(|(_, len)| len == last_token.len());
    cut && code && !whole_size
}

/// Whether a line a console cut at its width was cut at a space the cut removed, though
/// the console cuts wherever its width ends: a clause ends and a word starts (`…, 0B
/// intermediate tensors,` + `and 16.00GB internal …`), or a word ends and a number
/// starts (`… trying to allocate` + `29.91GiB [executable_name=…]`), which no token
/// glues together. A number cut after its thousands separator (`6,532,` + `939,776
/// bytes`) or its point, and a word cut inside (`OP_RE` + `QUIRES`), go on without one.
pub fn space_at_cut(prev: &str, next: &str) -> bool {
    let (Some(tail), Some(head)) = (prev.chars().next_back(), next.chars().next()) else {
        return false;
    };
    let clause = matches!(tail, ',' | ';') && head.is_alphabetic();
    let word_then_number = tail.is_alphabetic() && head.is_ascii_digit();
    clause || word_then_number
}

/// A line made only of the BFC allocator's fragmentation picture (`***__x*`).
pub fn is_fragmentation_picture(body: &str) -> bool {
    body.len() >= 16 && body.bytes().all(|b| matches!(b, b'*' | b'_' | b'x'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(raw: &str) -> String {
        let mut buf = String::new();
        clean(raw, &mut buf).body.to_string()
    }

    #[test]
    fn a_drawing_of_stars_is_kept_and_emphasis_is_not() {
        let picture = format!("{}_", "*".repeat(99));
        assert_eq!(body(&format!("W bfc_allocator.cc:491] {picture}")), picture);
        assert!(is_fragmentation_picture(&body(&picture)));
        assert_eq!(body("**Error Message**:"), "Error Message:");
        assert_eq!(body("***bold italic***"), "*bold italic*");
    }

    fn lines(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_line(text, |l| out.push(l.to_owned()));
        out
    }

    #[test]
    fn splits_a_log_printed_as_an_escaped_string() {
        // faceswap#670: a thread's exception logged as its repr.
        let logged = "DEBUG    Error in thread: OOM when allocating tensor by allocator GPU_0_bfc\\n\t [[{{node mul}}]]\\nHint: If you want\\n\\n\t [[{{node recv}}]]";
        assert_eq!(
            lines(logged),
            [
                "DEBUG    Error in thread: OOM when allocating tensor by allocator GPU_0_bfc",
                "\t [[{{node mul}}]]",
                "Hint: If you want",
                "",
                "\t [[{{node recv}}]]"
            ]
        );
        // A Windows path is one line.
        let path = "File \"C:\\new\\models\\net.py\", line 3";
        assert_eq!(lines(path), [path]);
    }

    #[test]
    fn removes_colours_quotes_and_emphasis() {
        assert_eq!(
            body("\u{1b}[1;31mRESOURCE_EXHAUSTED\u{1b}[0m: x"),
            "RESOURCE_EXHAUSTED: x"
        );
        assert_eq!(
            body("71[2m[36m(MeshHostWorker pid=489)[0m Peak buffers:"),
            "Peak buffers:"
        );
        assert_eq!(body("> > Shape: f32[4096,128,3]"), "Shape: f32[4096,128,3]");
        assert_eq!(
            body("** x: RESO**URCE_EXHAUSTED: y**"),
            "x: RESOURCE_EXHAUSTED: y"
        );
        assert_eq!(
            body("`Out of memory allocating 12 bytes.`"),
            "Out of memory allocating 12 bytes."
        );
        assert_eq!(body("f32[4096,128,3]{2,1,0}"), "f32[4096,128,3]{2,1,0}");
    }

    #[test]
    fn strips_log_prefixes() {
        let tf = "2021-03-15 17:16:57.311451: I tensorflow/core/common_runtime/bfc_allocator.cc:982] Bin (256): x";
        assert_eq!(body(tf), "Bin (256): x");
        let glog = "E1111 07:35:00.272763 140408571025152 error_handling.py:81] Closing session";
        assert_eq!(body(glog), "Closing session");
        let absl = "W0000 00:00:1756998431.440298    5182 hlo_rematerialization.cc:3183] Can't";
        assert_eq!(body(absl), "Can't");
        let job = "[1] 2019-06-13 01:17:08.886805: E external/x/local_client.cc:672] Execution";
        assert_eq!(body(job), "Execution");
        let xla = "2020-05-04 09:05:40.720686: E    1578 tensorflow/compiler/xla/xla_client/xla_util.cc:76]   14. Size: 96.00M";
        let mut buf = String::new();
        let c = clean(xla, &mut buf);
        assert_eq!(
            (c.body, c.logged, c.indented),
            ("14. Size: 96.00M", true, true)
        );
        assert_eq!(
            body("Error: Invalid TF_Status: 8"),
            "Error: Invalid TF_Status: 8"
        );
        assert_eq!(body("E: [not a log] line"), "E: [not a log] line");
        let neuron = "2024-Oct-15 18:01:18.343121  3882:3882  ERROR  TDRV:dml_dump                                Wrote nrt memory alloc debug info";
        assert_eq!(body(neuron), "Wrote nrt memory alloc debug info");
    }

    #[test]
    fn splits_every_line_ending_and_cuts_long_lines() {
        let mut lines = Vec::new();
        for_each_line("a\r\nb\rc\nd", |l| lines.push(l.to_string()));
        assert_eq!(lines, ["a", "b", "c", "d"]);
        let long = "é".repeat(MAX_LINE);
        let mut sizes = Vec::new();
        for_each_line(&long, |l| sizes.push(l.len()));
        assert!(sizes.iter().all(|&s| s <= MAX_LINE) && sizes.iter().sum::<usize>() == long.len());
    }

    #[test]
    fn joins_cut_words_only() {
        assert!(joins_without_space(
            "calls=%fused_comp",
            "utation.46",
            false
        ));
        assert!(joins_without_space("Bin (10", "48576): Total", false));
        assert!(!joins_without_space(
            "requested by op Mul",
            "If the cause",
            false
        ));
        assert!(!joins_without_space("Out ", "of memory", false));
        assert!(!joins_without_space(
            "compile permanent error. Ran out of memory in",
            "memory space vmem.",
            false
        ));
        assert!(joins_without_space("Padded (15.4", "4G)", false));
        assert!(joins_without_space("broadcast(bitc", "ast.26)", false));
        assert!(!joins_without_space("memory space", "hbm.", true));
        // A whole size ends its word; a size cut inside goes on.
        assert!(!joins_without_space(
            "Out of memory while trying to allocate 1.95GiB",
            "with allocator GPU_0_bfc on device 0.",
            false
        ));
        assert!(joins_without_space("trying to allocate 1.9", "5GiB", false));
    }
}
