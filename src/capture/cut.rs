//! Where a capture stops being readable: a file cut short (a truncated copy) or bytes
//! that turn corrupt, at the top level or inside one plane, and how each part of a cut
//! plane is named in the report. The format: docs/xplane.md.

use crate::error::Error;
use crate::source::ByteSource;
use crate::wire::fields::XSPACE_PLANES_TAG;

/// A plane the file ends inside (a truncated capture). It is read up to the end of
/// the file: its fields that are whole, and of a line the file ends in, the events
/// before the cut; a table entry (event or stat metadata, a plane stat) the file ends
/// in is left out. Encoders write a plane's fields in number order (id, name, lines,
/// event metadata, stat metadata, stats), so what follows the part it was cut in is
/// missing too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlaneCut {
    /// Where the plane says it ends: past the end of the file.
    pub declared_end: u64,
    /// The part of the plane the file ends in.
    pub part: CutPart,
    /// Lines of the plane that are whole before the cut.
    pub whole_lines: u64,
}

/// The part of a plane a cut falls in: the field the file ends inside, or, when it
/// ends between two fields, the part the last whole field belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CutPart {
    /// Its id and name.
    Header,
    /// Its lines (the timelines).
    Lines,
    /// Its event metadata: the names of its events.
    EventMetadata,
    /// Its stat metadata: the names of its stats.
    StatMetadata,
    /// Its plane stats.
    Stats,
}

/// Where a plane stopped decoding: set once, by the first reader that meets corrupt
/// bytes inside it. The plane is then read up to that point only and the report says
/// so, instead of the whole analysis failing on one damaged plane.
#[derive(Debug, Clone, Default)]
pub struct Damage(std::sync::Arc<std::sync::OnceLock<(u64, String)>>);

impl Damage {
    pub fn record(&self, e: &Error) {
        let at = match e {
            Error::Corrupt { offset, .. } | Error::Read { offset, .. } => *offset,
            _ => 0,
        };
        let what = match e {
            Error::Corrupt { what, .. } => (*what).to_owned(),
            Error::Read { message, .. } => format!("a read failed: {message}"),
            other => other.to_string(),
        };
        let _ = self.0.set((at, what));
    }

    /// (byte offset, what is wrong), if the plane is damaged.
    pub fn get(&self) -> Option<&(u64, String)> {
        self.0.get()
    }
}

/// Where and why the top level of a capture could not be read to its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Where the unreadable part starts.
    pub offset: u64,
    /// The file's size.
    pub file_bytes: u64,
    /// For a plane that runs past the end of the file: where it says it ends.
    pub declared_end: Option<u64>,
    pub what: &'static str,
    /// Where that plane's message starts, when its key and length are whole.
    pub payload: Option<u64>,
    /// The plane read up to the end of the file (its place in
    /// [`CaptureIndex::planes`]), when it was indexed.
    pub plane: Option<usize>,
    /// The file ends inside the key or length of a field (a truncated copy), rather
    /// than at bytes that are not a field at all.
    pub ends_in_field: bool,
}

impl CutPart {
    /// The part as the report names it.
    pub fn words(self) -> &'static str {
        match self {
            CutPart::Header => "header (its id and name)",
            CutPart::Lines => "lines",
            CutPart::EventMetadata => "event metadata (the names of its events)",
            CutPart::StatMetadata => "stat metadata (the names of its stats)",
            CutPart::Stats => "plane stats",
        }
    }
}

impl PlaneCut {
    /// What of the plane is read, in words (after "of <plane>").
    pub(super) fn read(&self) -> String {
        let lines = match self.whole_lines {
            1 => "its 1 line".to_owned(),
            n => format!("its {n} lines"),
        };
        match self.part {
            CutPart::Header => "only what of its header (id, name) is whole".into(),
            CutPart::Lines => format!(
                "{} whole lines and the events of line {} before the cut",
                self.whole_lines,
                self.whole_lines.saturating_add(1)
            ),
            CutPart::EventMetadata => format!("{lines} and the whole event metadata entries"),
            CutPart::StatMetadata => {
                format!("{lines}, its event metadata and the whole stat metadata entries")
            }
            CutPart::Stats => format!("{lines}, its tables and the whole plane stats"),
        }
    }

    /// What of the plane is missing, in words.
    pub(super) fn missing(&self) -> &'static str {
        match self.part {
            CutPart::Header => "everything after its header (its lines, event and stat metadata, and stats)",
            CutPart::Lines => "the rest of its lines and its event and stat metadata (without which its events have no names)",
            CutPart::EventMetadata => "the rest of its event metadata (event names, or on /host:metadata the modules' plans), its stat metadata and stats",
            CutPart::StatMetadata => "the rest of its stat metadata (stat names) and its stats",
            CutPart::Stats => "the rest of its plane stats",
        }
    }
}

/// Why the top level stopped at `at`: a plane that runs past the end of the file (a
/// truncated copy) or bytes that are not a field at all (corruption).
pub(super) fn classify_cut(src: &dyn ByteSource, at: u64, file_bytes: u64) -> Cut {
    let mut head = [0u8; 11];
    let n = src.read_at(at, &mut head).unwrap_or(0);
    let head = head.get(..n).unwrap_or_default();
    // A plane's key: does its length point past the file?
    let plane = match head.split_first() {
        Some((&XSPACE_PLANES_TAG, rest)) => plane_end(rest).and_then(|(used, len)| {
            let payload = at.checked_add(1)?.checked_add(used)?;
            Some((payload, payload.checked_add(len)?))
        }),
        _ => None,
    }
    .filter(|&(_, end)| end > file_bytes);
    let reaches_end = at.checked_add(n as u64) == Some(file_bytes);
    let ends_in_field = plane.is_none() && reaches_end && field_cut_short(head);
    Cut {
        offset: at,
        file_bytes,
        declared_end: plane.map(|(_, end)| end),
        what: if plane.is_some() {
            "a plane runs past the end of the file"
        } else if ends_in_field {
            "the file ends inside a field's key or length"
        } else {
            "bytes that are not a protobuf field"
        },
        payload: plane.map(|(payload, _)| payload),
        plane: None,
        ends_in_field,
    }
}

/// Whether `head`, the last bytes of a file (at most 11), start a field the end of
/// the file cuts short: in its key, a varint or length, or its bytes.
fn field_cut_short(head: &[u8]) -> bool {
    let Some((key_len, key)) = plane_end(head) else {
        // The key itself is cut: every byte carries the continuation bit.
        return !head.is_empty() && head.iter().all(|&b| b >= 0x80);
    };
    let rest = head
        .get(usize::try_from(key_len).unwrap_or(usize::MAX)..)
        .unwrap_or_default();
    match key & 7 {
        0 => plane_end(rest).is_none() && rest.iter().all(|&b| b >= 0x80),
        2 => match plane_end(rest) {
            // The length is whole: are its bytes all there?
            Some((used, len)) => used.saturating_add(len) > rest.len() as u64,
            None => rest.iter().all(|&b| b >= 0x80),
        },
        1 => rest.len() < 8,
        5 => rest.len() < 4,
        _ => false,
    }
}

/// Decodes a length varint: (bytes used, length).
fn plane_end(bytes: &[u8]) -> Option<(u64, u64)> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(10).enumerate() {
        let shift = u32::try_from(i).ok()?.checked_mul(7)?;
        value |= u64::from(b & 0x7f).checked_shl(shift)?;
        if b < 0x80 {
            return Some((u64::try_from(i).ok()?.checked_add(1)?, value));
        }
    }
    None
}

pub(super) fn first_field_error(cut: Cut, e: Error) -> Error {
    match (cut.declared_end, e) {
        (Some(end), _) => Error::Truncated {
            file_bytes: cut.file_bytes,
            needed: end,
        },
        (None, Error::Corrupt { offset, what }) => Error::NotACapture(format!(
            "it does not decode as an XSpace protobuf: at byte {offset}, {what}"
        )),
        (None, other) => other,
    }
}
