//! What the report says about the capture itself: a truncated or corrupt tail,
//! damaged planes, planes not indexed, and the profiler's own messages.

use super::{CaptureIndex, Cut, MAX_PLANES};
use crate::report::model::Note;

impl CaptureIndex {
    /// What the report should say about the capture itself: a truncated or corrupt
    /// tail, damaged planes (as far as they have been read: call this after the
    /// analysis), planes not indexed, and what the profiler reported (dropped events).
    pub fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if let Some(cut) = &self.cut {
            notes.push(Note {
                id: "capture_truncated".into(),
                text: self.truncation(cut),
            });
        }
        notes.extend(self.damage_note());
        if self.planes_dropped > 0 {
            notes.push(Note {
                id: "planes_not_read".into(),
                text: format!(
                    "the capture has {} more planes than the {MAX_PLANES} read; they were ignored",
                    self.planes_dropped
                ),
            });
        }
        notes.extend(self.profiler_notes());
        notes
    }

    /// Where the file ends or turns corrupt: what was read before it, and what is
    /// missing.
    fn truncation(&self, cut: &Cut) -> String {
        let mut names: Vec<String> = self
            .planes
            .iter()
            .map(|p| p.name.chars().take(40).collect::<String>())
            .filter(|n| !n.is_empty())
            .take(6)
            .collect();
        if self.planes.len() > 6 {
            names.push("…".into());
        }
        // Planes a report needs, and, for a cut plane, the one that dates the capture.
        let absent = |wanted: &[&'static str]| -> Vec<&'static str> {
            wanted
                .iter()
                .copied()
                .filter(|m| !self.planes.iter().any(|p| p.name == *m))
                .collect()
        };
        let missing = match absent(&["/host:metadata", "/host:CPU"]) {
            a if a.is_empty() => String::new(),
            a => format!(", and none is {}", a.join(" or ")),
        };
        let cut_plane = cut
            .plane
            .and_then(|i| Some((i, self.planes.get(i)?)))
            .and_then(|(i, p)| Some((i, p, p.cut?)));
        match (cut_plane, cut.declared_end) {
            (Some((i, p, pc)), _) => {
                let (subject, name) = if p.name.is_empty() {
                    (format!("its plane at byte {} (its name is cut)", p.offset), "it".to_owned())
                } else {
                    let name: String = p.name.chars().take(60).collect();
                    (format!("its plane {name} (from byte {})", p.offset), name)
                };
                let mut before: Vec<String> = self
                    .planes
                    .iter()
                    .take(i.min(3))
                    .map(|p| p.name.chars().take(40).collect())
                    .collect();
                if i > 3 {
                    before.push("…".into());
                }
                let before = match i {
                    0 => "no plane before it".to_owned(),
                    1 => format!("the plane before it ({})", before.join(", ")),
                    n => format!("the {n} planes before it ({})", before.join(", ")),
                };
                let after = match absent(&["/host:metadata", "/host:CPU", "Task Environment"]) {
                    a if a.is_empty() => String::new(),
                    a => format!(" (none of the planes read is {})", a.join(" or ")),
                };
                format!(
                    "the capture is truncated: the file has {} bytes, but {subject} runs to byte {}, so the file ends in that plane's {}. \
                     Read: {before}, and of {name} {}. Missing: {}, and every plane after it{after}. Copy the file again, or capture again",
                    cut.file_bytes,
                    pc.declared_end,
                    pc.part.words(),
                    pc.read(),
                    pc.missing(),
                )
            }
            (None, Some(end)) => format!(
                "the capture is truncated (the file has {} bytes; its plane at byte {} runs to byte {}): only the first {} planes were read and the rest is missing{missing}; \
                 copy the file again, or capture again. Planes read: {}",
                cut.file_bytes,
                cut.offset,
                end,
                self.planes.len(),
                names.join(", ")
            ),
            (None, None) if cut.ends_in_field => format!(
                "the capture is truncated: the file has {} bytes and ends at byte {} inside the key or length of its next field: only the first {} planes were read and the rest is missing{missing}; \
                 copy the file again, or capture again. Planes read: {}",
                cut.file_bytes,
                cut.offset,
                self.planes.len(),
                names.join(", ")
            ),
            (None, None) => format!(
                "the capture is corrupt from byte {} of {} ({}): only the first {} planes were read and the rest is missing{missing}; \
                 copy the file again, or capture again. Planes read: {}",
                cut.offset,
                cut.file_bytes,
                cut.what,
                self.planes.len(),
                names.join(", ")
            ),
        }
    }

    /// The planes found damaged part way (as far as they have been read).
    fn damage_note(&self) -> Option<Note> {
        let damaged: Vec<String> = self
            .planes
            .iter()
            .filter_map(|p| {
                let (at, what) = p.damage.get()?;
                let name = if p.name.is_empty() {
                    format!("at byte {}", p.offset)
                } else {
                    p.name.chars().take(40).collect()
                };
                Some(format!("{name} from byte {at} ({what})"))
            })
            .collect();
        if damaged.is_empty() {
            return None;
        }
        let mut listed: Vec<String> = damaged.iter().take(6).cloned().collect();
        if damaged.len() > 6 {
            listed.push(format!("and {} more", damaged.len().saturating_sub(6)));
        }
        Some(Note {
            id: "plane_damaged".into(),
            text: format!(
                "{} damaged: what follows the damage in {} was not read, so figures from {} \
                 cover only the part before it; copy the file again, or capture again. Damaged: {}",
                if damaged.len() == 1 {
                    "a plane of the capture is"
                } else {
                    "planes of the capture are"
                },
                if damaged.len() == 1 { "it" } else { "each" },
                if damaged.len() == 1 { "it" } else { "them" },
                listed.join("; ")
            ),
        })
    }

    /// What the profiler itself reported: dropped events, and its other messages.
    fn profiler_notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        let messages: Vec<&String> = self.errors.iter().chain(&self.warnings).collect();
        let dropped: Vec<&str> = messages
            .iter()
            .filter(|m| mentions_dropped_events(m))
            .map(|m| m.as_str())
            .collect();
        if !dropped.is_empty() {
            notes.push(Note {
                id: "profiler_dropped_events".into(),
                text: format!(
                    "the profiler hit its event limit and dropped events (it reported: {}); runtime counts and timelines miss what happened after the limit. Profile a shorter window (fewer steps) to stay under it",
                    quote_all(&dropped)
                ),
            });
        }
        let other: Vec<&str> = messages
            .iter()
            .filter(|m| !mentions_dropped_events(m))
            .map(|m| m.as_str())
            .collect();
        if !other.is_empty() {
            notes.push(Note {
                id: "profiler_messages".into(),
                text: format!("the profiler reported: {}", quote_all(&other)),
            });
        }
        notes
    }
}

fn mentions_dropped_events(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("dropped") || (m.contains("event") && (m.contains("limit") || m.contains("max")))
}

fn quote_all(messages: &[&str]) -> String {
    let mut parts: Vec<String> = messages
        .iter()
        .take(4)
        .map(|m| {
            let short: String = m.chars().take(300).collect();
            format!("\"{}\"", short.trim())
        })
        .collect();
    if messages.len() > 4 {
        parts.push(format!("and {} more", messages.len().saturating_sub(4)));
    }
    parts.join("; ")
}
