//! What the user gave, told apart by content, and gathered into what the analysis
//! joins: profiler captures (analyzed one host at a time), the out-of-memory message,
//! an XLA dump's plans, device memory profiles.
//!
//! [`classify`] decides from a file's first bytes (and its name only where the content
//! cannot say): a capture is an XSpace protobuf whose first plane is named `/…`; a
//! device memory profile is gzip, or a pprof protobuf whose sample types come first; a
//! dump file is named `module_NNNN.…`; text is UTF-8-ish (no NUL, few control bytes).
//! It runs anywhere, the page included; [`gather_bytes`] gathers files handed in as
//! bytes. Natively, [`gather`] also walks folders: a capture's log dir or run folder, an
//! XLA dump folder or the folder above it, and a run folder that holds several kinds.
//! `docs/inputs.md` says how inputs are classified and joined.

use crate::analysis::join::{Joined, Message};
use crate::error::Error;
use crate::evidence::device_profile::{self, DeviceProfile};
use crate::evidence::dump::{self, Dump, DumpFile};
use crate::evidence::message::{self, OomMessage};
use crate::report::model::{InputFile, InputKind, Note};

/// Bytes of a file [`classify`] looks at.
pub const HEAD_BYTES: usize = 64 * 1024;

/// What an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A profiler capture (`*.xplane.pb`).
    Capture,
    /// A JAX device memory profile (gzip'd or raw pprof).
    DeviceProfile,
    /// A file of an XLA dump (`module_NNNN.…`).
    DumpFile,
    /// Text: a log or a pasted error.
    Text,
    /// No bytes at all.
    Empty,
    /// None of those; why, in words.
    Unknown(&'static str),
}

const CAPTURE_SUFFIX: &str = ".xplane.pb";

/// What a file is, from its name and its first bytes (up to [`HEAD_BYTES`]). A file
/// named `*.xplane.pb` is taken for a capture whatever it holds, so that the capture
/// reader says what is wrong with it; every other name is decided by content.
pub fn classify(name: &str, head: &[u8]) -> Kind {
    let base = base_name(name);
    if base.ends_with(CAPTURE_SUFFIX) {
        return Kind::Capture;
    }
    if head.is_empty() {
        return Kind::Empty;
    }
    if is_dump_name(base) {
        return Kind::DumpFile;
    }
    // A trace viewer's `.json` or `.json.gz` (what people mistake for the capture): the
    // capture reader says what it is and which file to pass instead.
    if is_trace_json(base, head) {
        return Kind::Capture;
    }
    if head.starts_with(&[0x1f, 0x8b]) {
        return Kind::DeviceProfile;
    }
    if looks_like_xspace(head) {
        return Kind::Capture;
    }
    if looks_like_pprof(head) {
        return Kind::DeviceProfile;
    }
    if looks_like_text(head) {
        return Kind::Text;
    }
    if base.ends_with(".prof") {
        // Let the profile reader say what is wrong with it.
        return Kind::DeviceProfile;
    }
    Kind::Unknown("binary data that is neither a profiler capture, a device memory profile, an XLA dump file nor text")
}

/// A trace viewer file beside the capture: `*.json.gz`, or `*.json` holding JSON.
fn is_trace_json(base: &str, head: &[u8]) -> bool {
    if base.ends_with(".json.gz") {
        return true;
    }
    let first = head.iter().find(|b| !b.is_ascii_whitespace());
    base.ends_with(".json") && matches!(first, Some(b'{') | Some(b'['))
}

/// The last part of a name that may carry folders.
fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

/// `module_0010.jit_step.…`: XLA names every dump file so.
pub fn is_dump_name(base: &str) -> bool {
    base.strip_prefix("module_")
        .and_then(|r| r.split_once('.'))
        .is_some_and(|(digits, rest)| {
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && !rest.is_empty()
        })
}

/// A varint at the start of `bytes`: its value and length.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// An XSpace: field 1 (planes) first, an XPlane whose `id` (field 1, optional) is
/// followed by its `name` (field 2), which starts with `/` (`/host:CPU`, `/device:GPU:0`).
fn looks_like_xspace(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(&[0x0a]) else {
        return false;
    };
    let Some((_, n)) = varint(rest) else {
        return false;
    };
    let mut plane = rest.get(n..).unwrap_or(&[]);
    if let Some(after) = plane.strip_prefix(&[0x08]) {
        let Some((_, n)) = varint(after) else {
            return false;
        };
        plane = after.get(n..).unwrap_or(&[]);
    }
    let Some(after) = plane.strip_prefix(&[0x12]) else {
        return false;
    };
    let Some((len, n)) = varint(after) else {
        return false;
    };
    len > 1 && after.get(n) == Some(&b'/')
}

/// A pprof `Profile` as JAX writes it: field 1 (`sample_type`) first, a `ValueType` of
/// two varints (type and unit, indices into the string table).
fn looks_like_pprof(head: &[u8]) -> bool {
    let Some(rest) = head.strip_prefix(&[0x0a]) else {
        return false;
    };
    let Some((len, n)) = varint(rest) else {
        return false;
    };
    let Some(value_type) = rest.get(n..n.saturating_add(len as usize)) else {
        return false;
    };
    let mut fields = value_type;
    let mut seen = 0;
    while !fields.is_empty() {
        let Some((&tag, after)) = fields.split_first() else {
            break;
        };
        if tag != 0x08 && tag != 0x10 {
            return false;
        }
        let Some((_, n)) = varint(after) else {
            return false;
        };
        fields = after.get(n..).unwrap_or(&[]);
        seen += 1;
    }
    seen == 2
}

/// UTF-8 (a character cut at the end allowed), or nearly: no NUL byte, control bytes
/// other than tab, line ends, form feed and escape under 1%, invalid sequences under 1%.
fn looks_like_text(head: &[u8]) -> bool {
    if head.contains(&0) {
        return false;
    }
    let controls = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
        .count();
    if controls * 100 > head.len() {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(e) if e.error_len().is_none() => true,
        Err(_) => {
            let invalid = String::from_utf8_lossy(head)
                .chars()
                .filter(|&c| c == char::REPLACEMENT_CHARACTER)
                .count();
            invalid * 100 <= head.len()
        }
    }
}

/// A capture to analyze: its host name (the file name without `.xplane.pb`), file name
/// and where its bytes are.
#[derive(Debug, Clone)]
pub struct Capture<T> {
    /// The host's name.
    pub host: String,
    /// The file's name.
    pub file: String,
    /// Where its bytes are (a path, or the bytes).
    pub at: T,
}

/// Everything gathered from the inputs.
#[derive(Debug)]
pub struct Gathered<T> {
    /// The captures, one per host.
    pub captures: Vec<Capture<T>>,
    /// The other evidence, joined to every capture's report.
    pub joined: Joined,
}

/// Gathers evidence as it is read; [`Gatherer::finish`] decides what to use.
#[derive(Default)]
struct Gatherer {
    /// Messages found in inputs given explicitly, in order.
    messages: Vec<Message>,
    /// Messages found in text files of folders: (rank, name, message).
    found: Vec<(u8, Message)>,
    /// Text given explicitly that held no message.
    no_message: Vec<String>,
    dumps: Vec<Dump>,
    profiles: Vec<DeviceProfile>,
    inputs: Vec<InputFile>,
    notes: Vec<Note>,
    captures: usize,
}

impl Gatherer {
    fn message(
        &mut self,
        file: &str,
        bytes: u64,
        parsed: Result<OomMessage, message::NoOomMessage>,
        explicit: bool,
    ) {
        match parsed {
            Ok(message) => {
                let m = Message {
                    message,
                    file: file.to_owned(),
                };
                if explicit {
                    self.messages.push(m);
                } else {
                    self.found.push((text_rank(file), m));
                }
                self.inputs.push(InputFile {
                    file: file.to_owned(),
                    kind: InputKind::ErrorText,
                    bytes,
                });
            }
            Err(_) if explicit => self.no_message.push(file.to_owned()),
            Err(_) => {}
        }
    }

    fn profile(&mut self, file: &str, bytes: &[u8], explicit: bool) -> Result<(), Error> {
        match device_profile::read(file, bytes) {
            Ok(p) => {
                self.profiles.push(p);
                self.inputs.push(InputFile {
                    file: file.to_owned(),
                    kind: InputKind::DeviceProfile,
                    bytes: bytes.len() as u64,
                });
                Ok(())
            }
            Err(e) if explicit => Err(e.into()),
            Err(e) => {
                self.notes.push(Note {
                    id: "profile_unreadable".into(),
                    text: format!("{e}; it is left out"),
                });
                Ok(())
            }
        }
    }

    fn dump(
        &mut self,
        place: &str,
        bytes: u64,
        read: Result<Dump, dump::DumpError>,
        explicit: bool,
    ) -> Result<(), Error> {
        match read {
            Ok(d) => {
                self.inputs.push(InputFile {
                    file: place.to_owned(),
                    kind: InputKind::XlaDump,
                    bytes,
                });
                self.dumps.push(d);
                Ok(())
            }
            Err(e) if explicit => Err(e.into()),
            Err(e) => {
                self.notes.push(Note {
                    id: "dump_unreadable".into(),
                    text: format!("{e}; it is left out"),
                });
                Ok(())
            }
        }
    }

    fn capture(&mut self, file: &str, bytes: u64) {
        self.captures += 1;
        self.inputs.push(InputFile {
            file: file.to_owned(),
            kind: InputKind::Capture,
            bytes,
        });
    }

    /// The evidence to join: the first message given explicitly (else the best found
    /// in a folder), the dumps merged, the profiles in order; an error when nothing is
    /// usable.
    fn finish(mut self) -> Result<Joined, Error> {
        let mut others: Vec<Message> = Vec::new();
        let message = if self.messages.is_empty() {
            self.found
                .sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.file.cmp(&b.1.file)));
            let mut found = self.found.into_iter().map(|(_, m)| m);
            let first = found.next();
            others.extend(found);
            first
        } else {
            let mut given = self.messages.into_iter();
            let first = given.next();
            others.extend(given);
            first
        };
        if let Some(m) = &message {
            for other in &others {
                self.notes.push(Note {
                    id: "other_oom_message".into(),
                    text: format!(
                        "{} also holds an out-of-memory message; the one in {} is reported",
                        other.file, m.file
                    ),
                });
            }
        }
        // Only the message used is an input of the report.
        let used = message.as_ref().map(|m| m.file.as_str());
        self.inputs
            .retain(|i| i.kind != InputKind::ErrorText || Some(i.file.as_str()) == used);
        let dump = merge_dumps(self.dumps, &mut self.notes);
        let usable =
            self.captures > 0 || message.is_some() || dump.is_some() || !self.profiles.is_empty();
        if !usable {
            return Err(if self.no_message.is_empty() {
                Error::NoInput
            } else {
                Error::NoOomMessage
            });
        }
        for file in &self.no_message {
            self.notes.push(Note {
                id: "no_oom_message".into(),
                text: format!("{file}: {}", message::NoOomMessage),
            });
        }
        // Captures alone are reported as they always were, without a list of inputs.
        if self.inputs.iter().all(|i| i.kind == InputKind::Capture) && self.notes.is_empty() {
            self.inputs.clear();
        }
        Ok(Joined {
            message,
            dump,
            profiles: self.profiles,
            inputs: self.inputs,
            notes: self.notes,
        })
    }
}

/// Dumps read from several places, as one: a module given twice keeps its first plan.
fn merge_dumps(dumps: Vec<Dump>, notes: &mut Vec<Note>) -> Option<Dump> {
    let mut dumps = dumps.into_iter();
    let mut merged = dumps.next()?;
    for d in dumps {
        for (m, s) in d.modules.into_iter().zip(d.sources) {
            if merged.modules.iter().any(|x| x.label == m.label) {
                notes.push(Note {
                    id: "dump_module_twice".into(),
                    text: format!(
                        "{} is in two dumps given; the first one's plan is read",
                        m.label
                    ),
                });
                continue;
            }
            merged.modules.push(m);
            merged.sources.push(s);
        }
        merged.notes.extend(d.notes);
    }
    merged.modules.sort_by(|a, b| {
        b.plan
            .peak_bytes
            .cmp(&a.plan.peak_bytes)
            .then_with(|| a.label.cmp(&b.label))
    });
    Some(merged)
}

/// How likely a text file of a folder is the log that holds the error: named like an
/// error or a log first.
fn text_rank(file: &str) -> u8 {
    let lower = base_name(file).to_ascii_lowercase();
    if ["error", "err", "oom", "traceback"]
        .iter()
        .any(|w| lower.contains(w))
    {
        0
    } else if ["log", "stderr", "stdout", "out"]
        .iter()
        .any(|w| lower.contains(w))
    {
        1
    } else {
        2
    }
}

/// `step2.prof` before `step10.prof`: names compared with their digit runs as numbers.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            let boundary =
                i == bytes.len() || bytes[i].is_ascii_digit() != bytes[i - 1].is_ascii_digit();
            if boundary {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let ord = match (x, y) {
            ((true, x), (true, y)) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if ord != std::cmp::Ordering::Equal {
            return ord;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

/// Gathers files handed in as bytes (the page; any caller with the bytes in memory),
/// with text pasted beside them. Every file is used as given: one that cannot be read
/// is an error.
pub fn gather_bytes<'a>(
    files: &[(&'a str, &'a [u8])],
    pasted: Option<&str>,
) -> Result<Gathered<&'a [u8]>, Error> {
    let mut g = Gatherer::default();
    let mut captures = Vec::new();
    let mut dump_files: Vec<DumpFile<'a>> = Vec::new();
    for &(name, bytes) in files {
        let head = bytes.get(..HEAD_BYTES).unwrap_or(bytes);
        match classify(name, head) {
            Kind::Capture => {
                g.capture(name, bytes.len() as u64);
                captures.push(Capture {
                    host: host_of(name),
                    file: base_name(name).to_owned(),
                    at: bytes,
                });
            }
            Kind::DumpFile => dump_files.push(DumpFile { name, bytes }),
            Kind::DeviceProfile => g.profile(base_name(name), bytes, true)?,
            Kind::Text => g.message(name, bytes.len() as u64, message::parse_bytes(bytes), true),
            Kind::Empty => return Err(Error::EmptyInput(name.to_owned())),
            Kind::Unknown(why) => {
                return Err(Error::UnknownInput {
                    path: name.to_owned(),
                    why: why.into(),
                })
            }
        }
    }
    if !dump_files.is_empty() {
        let bytes = dump_files.iter().map(|f| f.bytes.len() as u64).sum();
        let place = dump_place(dump_files.iter().map(|f| f.name));
        g.dump(&place, bytes, dump::read(&dump_files), true)?;
    }
    if let Some(text) = pasted {
        g.message("pasted text", text.len() as u64, message::parse(text), true);
    }
    Ok(Gathered {
        captures,
        joined: g.finish()?,
    })
}

/// `module_0010.jit_train_step (2 files)`: how dump files given one by one are named.
fn dump_place<'n>(names: impl Iterator<Item = &'n str>) -> String {
    let names: Vec<&str> = names.map(base_name).collect();
    match names.as_slice() {
        [one] => (*one).to_owned(),
        [first, ..] => format!("{first} and {} more dump files", names.len() - 1),
        [] => String::new(),
    }
}

/// The host a capture file is for: its name without `.xplane.pb`.
fn host_of(name: &str) -> String {
    let base = base_name(name);
    base.strip_suffix(CAPTURE_SUFFIX).unwrap_or(base).to_owned()
}

#[cfg(not(target_arch = "wasm32"))]
pub use native::{gather, Input};

#[cfg(not(target_arch = "wasm32"))]
mod native;

#[cfg(test)]
mod tests;
