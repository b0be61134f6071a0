//! How well oomlens reads a corpus of annotated out-of-memory messages
//! (`tests/fixtures/errors/ANNOTATING.md`): the share of the figures the messages state
//! that the parser extracts, and the share of messages whose triage (verdict and lead
//! cause) is right. Shared by `tests/corpus_score.rs` and `examples/corpus_score.rs`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use oomlens::evidence::message;
use serde_json::Value;

/// The cause categories of ANNOTATING.md, for a diagnosis id: `None` for lines that
/// are evidence, not a cause (XLA's remat gave up, the allocator waited, …).
pub fn cause_of(id: &str) -> Option<&'static str> {
    Some(match id {
        "plan_exceeds_capacity"
        | "aggregate_too_big"
        | "role_forward"
        | "role_backward"
        | "role_workspace"
        | "scan_stack"
        | "no_donation"
        | "arguments_dominate" => "program_too_big",
        "dominant_buffer" | "large_replicated" | "debug_callback" | "impossible_size" => {
            "one_huge_buffer"
        }
        "held_elsewhere" | "other_live_arrays" | "growth_per_execution" | "mem_fraction_set" => {
            "held_elsewhere"
        }
        "fragmentation" => "fragmentation",
        "sparsecore_dominates" => "sparsecore",
        "tpu_padding" => "padding",
        "scoped_memory" => "kernel_scoped_memory",
        "too_little_to_tell" => "undetermined",
        _ => return None,
    })
}

/// Fields of an expectation that are not figures the message states.
const NOT_FIGURES: [&str; 6] = [
    "triage",
    "triage_second",
    "unmapped",
    "kind",
    "truncated",
    "advisory",
];

/// One message of the corpus, scored.
#[derive(Debug, Clone)]
pub struct Scored {
    pub name: String,
    /// Figures the message states (the annotation's, `unmapped` included).
    pub stated: usize,
    /// Of those, the ones the parser extracted with the annotated value.
    pub read: usize,
    /// `path: expected …, got …` for each figure missed.
    pub missed: Vec<String>,
    /// The annotated verdict and cause.
    pub want: (String, String),
    /// A second annotator's verdict and cause, from the message alone and blind to the
    /// first (`triage_second`), where one was asked.
    pub second: Option<(String, String)>,
    /// oomlens's verdict and the cause of its first cause line.
    pub got: (String, String),
    /// Whether the annotated cause follows from the message's own figures (`basis:
    /// message`) rather than from what the thread around it found (`thread`).
    pub message_decides: bool,
    /// The source URL the corpus README gives for the file, if found.
    pub source: Option<String>,
}

impl Scored {
    pub fn triage_right(&self) -> bool {
        self.want == self.got
    }
    /// Whether the two annotators agree (verdict and cause), where there are two.
    pub fn annotators_agree(&self) -> Option<bool> {
        self.second.as_ref().map(|s| s == &self.want)
    }
}

/// A whole corpus, scored.
#[derive(Debug, Default)]
pub struct Score {
    pub messages: Vec<Scored>,
}

impl Score {
    pub fn stated(&self) -> usize {
        self.messages.iter().map(|m| m.stated).sum()
    }
    pub fn read(&self) -> usize {
        self.messages.iter().map(|m| m.read).sum()
    }
    /// The share of stated figures read, in percent.
    pub fn figures_pct(&self) -> f64 {
        100.0 * self.read() as f64 / self.stated().max(1) as f64
    }
    pub fn triage_right(&self) -> usize {
        self.messages.iter().filter(|m| m.triage_right()).count()
    }
    /// The share of messages triaged right, in percent.
    pub fn triage_pct(&self) -> f64 {
        100.0 * self.triage_right() as f64 / self.messages.len().max(1) as f64
    }
    /// Of the messages a second annotator triaged: how many; on how many the two agree;
    /// how many of those oomlens triages as both do; how many oomlens triages as the
    /// first, the second, either does.
    pub fn second_opinion(&self) -> SecondOpinion {
        let seconded: Vec<&Scored> = self
            .messages
            .iter()
            .filter(|m| m.second.is_some())
            .collect();
        let agreed = seconded
            .iter()
            .filter(|m| m.annotators_agree() == Some(true));
        SecondOpinion {
            seconded: seconded.len(),
            agreed: agreed.clone().count(),
            right_where_agreed: agreed.filter(|m| m.triage_right()).count(),
            right_by_first: seconded.iter().filter(|m| m.triage_right()).count(),
            right_by_either: seconded
                .iter()
                .filter(|m| m.triage_right() || m.second.as_ref() == Some(&m.got))
                .count(),
            right_by_second: seconded
                .iter()
                .filter(|m| m.second.as_ref() == Some(&m.got))
                .count(),
        }
    }

    /// Of the messages whose cause their own figures decide: how many, and how many
    /// triaged right.
    pub fn decided_by_message(&self) -> (usize, usize) {
        let decided = self.messages.iter().filter(|m| m.message_decides);
        let right = decided.clone().filter(|m| m.triage_right()).count();
        (decided.count(), right)
    }
}

/// How a corpus fares against two annotators (see [`Score::second_opinion`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SecondOpinion {
    pub seconded: usize,
    pub agreed: usize,
    pub right_where_agreed: usize,
    pub right_by_first: usize,
    pub right_by_either: usize,
    pub right_by_second: usize,
}

impl std::ops::AddAssign for SecondOpinion {
    fn add_assign(&mut self, o: SecondOpinion) {
        self.seconded += o.seconded;
        self.agreed += o.agreed;
        self.right_where_agreed += o.right_where_agreed;
        self.right_by_first += o.right_by_first;
        self.right_by_either += o.right_by_either;
        self.right_by_second += o.right_by_second;
    }
}

/// Every `NN-*.txt` of `dir` with its `.expected.json`, sorted.
pub fn corpus(dir: &Path) -> Vec<(String, PathBuf, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|txt| {
            let name = txt.file_stem().unwrap().to_string_lossy().into_owned();
            let json = txt.with_extension("expected.json");
            let text = std::fs::read_to_string(&json)
                .unwrap_or_else(|_| panic!("{name}: no {}", json.display()));
            let expected: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{name}: bad expectation: {e}"));
            (name, txt, expected)
        })
        .collect()
}

/// Scores every message of `dir`.
pub fn score(dir: &Path) -> Score {
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap_or_default();
    let messages = corpus(dir)
        .into_iter()
        .map(|(name, txt, expected)| score_one(&name, &txt, &expected, &readme))
        .collect();
    Score { messages }
}

fn score_one(name: &str, txt: &Path, expected: &Value, readme: &str) -> Scored {
    let bytes = std::fs::read(txt).expect("the message reads");
    let parsed = message::parse_bytes(&bytes)
        .map(|m| serde_json::to_value(m).expect("json"))
        .unwrap_or(Value::Null);
    let mut stated = 0;
    let mut missed = Vec::new();
    if let Value::Object(fields) = expected {
        for (key, want) in fields {
            if NOT_FIGURES.contains(&key.as_str()) {
                continue;
            }
            compare(key, want, &parsed[key], &mut stated, &mut missed);
        }
        if let Some(Value::Array(unmapped)) = fields.get("unmapped") {
            for u in unmapped {
                stated += 1;
                missed.push(format!("unmapped: {}", u["text"]));
            }
        }
    }
    let read = stated - missed.len();
    let triage = &expected["triage"];
    let verdict_and_cause = |t: &Value| {
        (
            t["verdict"].as_str().unwrap_or("?").to_owned(),
            t["cause"].as_str().unwrap_or("?").to_owned(),
        )
    };
    let want = verdict_and_cause(triage);
    let second = expected.get("triage_second").map(verdict_and_cause);
    Scored {
        name: name.to_owned(),
        stated,
        read,
        missed,
        want,
        second,
        got: triage_of(name, &bytes),
        message_decides: triage["basis"].as_str() == Some("message"),
        source: source_in(readme, name),
    }
}

/// Counts each non-null leaf of `want` as a stated figure, and notes those `got` lacks.
fn compare(path: &str, want: &Value, got: &Value, stated: &mut usize, missed: &mut Vec<String>) {
    match want {
        Value::Null => {}
        Value::Object(fields) => {
            for (key, w) in fields {
                compare(&format!("{path}.{key}"), w, &got[key], stated, missed);
            }
        }
        Value::Array(items) => {
            for (i, w) in items.iter().enumerate() {
                let g = got.get(i).unwrap_or(&Value::Null);
                compare(&format!("{path}[{i}]"), w, g, stated, missed);
            }
        }
        _ => {
            *stated += 1;
            let same = match (want, got) {
                (Value::Number(w), Value::Number(g)) => w.as_f64() == g.as_f64(),
                (w, g) => w == g,
            };
            if !same {
                missed.push(format!("{path}: expected {want}, got {got}"));
            }
        }
    }
}

/// The report's verdict and the cause of its first diagnosis line that names one
/// (`undetermined` when none does), from the message alone.
fn triage_of(name: &str, bytes: &[u8]) -> (String, String) {
    let file = format!("{name}.txt");
    let report = match oomlens::analyze_input_bytes(&[(&file, bytes)], &Default::default()) {
        Ok(r) => r,
        Err(e) => return ("error".into(), e.to_string()),
    };
    let host = &report.hosts[0];
    let verdict = host.headline.verdict.as_str().to_owned();
    let cause = host
        .diagnosis
        .iter()
        .find_map(|d| cause_of(d.id.as_str()))
        .unwrap_or("undetermined")
        .to_owned();
    (verdict, cause)
}

/// The first `https://…` URL on the README's table row for `name`.
fn source_in(readme: &str, name: &str) -> Option<String> {
    let row = readme
        .lines()
        .find(|l| l.starts_with('|') && l.contains(name))?;
    let at = row.find("https://")?;
    let url: String = row[at..]
        .chars()
        .take_while(|c| !matches!(c, '>' | ')' | ' ' | '|' | ','))
        .collect();
    Some(url)
}
