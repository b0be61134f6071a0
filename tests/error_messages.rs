//! The out-of-memory message parser on real messages (`tests/fixtures/errors/`, each with
//! the figures a reader transcribed into `.expected.json`), and on the ways a message
//! reaches us: quoted, coloured, wrapped, cut, buried in a long log.

use std::path::Path;

use oomlens::evidence::message::{parse, NoOomMessage, OomKind, OomMessage};
use serde_json::Value;

#[path = "support/corpus_score.rs"]
mod corpus_score;

/// Every `*.txt` of the corpus, its text and its expectation.
fn corpus() -> Vec<(String, String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/errors");
    corpus_score::corpus(&dir)
        .into_iter()
        .map(|(name, txt, expected)| {
            let text = std::fs::read_to_string(&txt).expect("message text");
            (name, text, expected)
        })
        .collect()
}

/// The fields of `expected` must equal those of `actual`; lists must have the same length
/// and their items are compared the same way (fields absent from the expectation are not
/// checked). Returns the first difference as `path: expected …, got …`.
fn first_difference(path: &str, expected: &Value, actual: &Value) -> Option<String> {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => want.iter().find_map(|(key, w)| {
            let here = format!("{path}.{key}");
            match got.get(key) {
                Some(g) => first_difference(&here, w, g),
                None => Some(format!("{here}: expected {w}, field missing")),
            }
        }),
        (Value::Array(want), Value::Array(got)) if want.len() != got.len() => Some(format!(
            "{path}: expected {} items, got {}: {actual}",
            want.len(),
            got.len()
        )),
        (Value::Array(want), Value::Array(got)) => want
            .iter()
            .zip(got)
            .enumerate()
            .find_map(|(i, (w, g))| first_difference(&format!("{path}[{i}]"), w, g)),
        (w, g) if w == g => None,
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => None,
        (w, g) => Some(format!("{path}: expected {w}, got {g}")),
    }
}

#[test]
fn every_corpus_message_yields_its_expected_figures() {
    let corpus = corpus();
    assert!(
        corpus.len() >= 25,
        "the corpus holds {} messages",
        corpus.len()
    );
    let mut failures = Vec::new();
    for (name, text, expected) in &corpus {
        // The triage is scored by `corpus_score.rs`; figures no field holds yet are
        // listed apart (ANNOTATING.md).
        let mut expected = expected.clone();
        if let Some(fields) = expected.as_object_mut() {
            fields.remove("triage");
            fields.remove("unmapped");
        }
        match parse(text) {
            Ok(msg) => {
                let actual = serde_json::to_value(&msg).unwrap();
                if let Some(diff) = first_difference("", &expected, &actual) {
                    failures.push(format!("{name}: {diff}"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn corpus_message(prefix: &str) -> String {
    let (_, text, _) = corpus()
        .into_iter()
        .find(|(name, _, _)| name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no corpus file {prefix}*"));
    text
}

#[test]
fn text_without_a_message_says_what_to_paste() {
    for text in [
        "",
        "Traceback (most recent call last):\n  File \"train.py\", line 3\nValueError: bad shape\n",
        "I0101 00:00:00.000 1 train.py:10] step 1 loss 0.5 memory ok\nout of memory? no.\n",
        "Shape: f32[4]\nSize: 12\nStats:\nLimit: 4\n",
    ] {
        let err = parse(text).unwrap_err();
        assert_eq!(err, NoOomMessage);
        assert_eq!(
            err.to_string(),
            "no out-of-memory message found: paste the lines from RESOURCE_EXHAUSTED on"
        );
    }
}

#[test]
fn units_are_1024_based_and_exact_counts_win() {
    let short = |text: &str| parse(text).unwrap();
    let used = |s: &str| {
        let t = format!(
            "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used {s} of 1G hbm."
        );
        short(&t).used_bytes
    };
    assert_eq!(used("17.60G"), Some(18_897_856_102));
    assert_eq!(used("3.41GiB"), Some(3_661_459_620));
    assert_eq!(used("512.0KiB"), Some(524_288));
    assert_eq!(used("1.2M"), Some(1_258_291));
    let m = short("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3664773120 bytes.");
    assert_eq!(m.requested_bytes, Some(3_664_773_120));
    let bfc = "Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.41GiB (rounded to 3664773120)requested by op dot";
    assert_eq!(short(bfc).requested_bytes, Some(3_664_773_120));
}

#[test]
fn a_message_wrapped_mid_word_and_mid_number_reads_the_same() {
    let text = corpus_message("07-");
    let whole = parse(&text).unwrap();
    // Wrap the labels mid-word and the first size mid-number, as a narrow terminal would.
    let wrapped = text
        .replace("broadcast(bitcast.26)", "broadcast(bitc\nast.26)")
        .replace("Padded (15.44G)", "Padded (15.4\n4G)");
    assert_ne!(wrapped, text);
    assert_eq!(parse(&wrapped).unwrap(), whole);
}

#[test]
fn quoting_colours_and_line_ends_do_not_change_the_result() {
    for prefix in ["06-", "22-", "28-", "19-"] {
        let text = corpus_message(prefix);
        let plain = parse(&text).unwrap();
        let quoted: String = text.lines().map(|l| format!("> > {l}\n")).collect();
        let coloured: String = text
            .lines()
            .map(|l| format!("\u{1b}[2m\u{1b}[36m(Worker pid=7)\u{1b}[0m {l}\n"))
            .collect();
        let windows = text.replace('\n', "\r\n");
        let fenced = format!("Here it is:\n\n```text\n{text}```\n\nThanks!\n");
        for (how, variant) in [
            ("quoted", quoted),
            ("coloured", coloured),
            ("crlf", windows),
            ("fenced", fenced),
        ] {
            assert_eq!(parse(&variant).unwrap(), plain, "{prefix} {how}");
        }
    }
}

#[test]
fn a_cut_listing_is_marked_truncated() {
    let text = corpus_message("07-");
    assert!(!parse(&text).unwrap().truncated);
    let cut = text.split("  2. Size:").next().unwrap().to_string()
        + "  2. Size: 4.00G\n     Shape: bf16[2048";
    let msg = parse(&cut).unwrap();
    assert!(msg.truncated);
    assert_eq!(msg.allocations.len(), 2);
    let header_only = "Program hbm requirement 1G:\n\n  Largest program allocations in hbm:\n";
    assert!(parse(header_only).unwrap().truncated);
}

#[test]
fn the_last_most_detailed_failure_wins_over_warnings() {
    let text = corpus_message("32-");
    let msg = parse(&text).unwrap();
    assert_eq!((msg.kind, msg.advisory), (OomKind::Short, false));
    let warnings_only = text.replace(
        "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3199993600 bytes.",
        "",
    );
    let msg = parse(&warnings_only).unwrap();
    assert_eq!((msg.kind, msg.advisory), (OomKind::BfcRuntime, true));
    let twice = format!("{}\n{}", corpus_message("09-"), corpus_message("10-"));
    assert_eq!(parse(&twice).unwrap().exceeded_by_bytes, Some(401_520_722)); // 382.92M
}

/// About 100 MB of log lines, then a message: found, with the same figures as alone.
/// (Time is measured by the benchmarks, not here.)
#[test]
fn a_hundred_megabyte_log_parses() {
    let message = corpus_message("22-");
    let noise = "2024-01-01 12:00:00.000000: I external/xla/xla/service/gpu/gpu_compiler.cc:123] step 1234 done, loss 0.4321, 12.3 steps/s, memory ok\n";
    let mut log = String::with_capacity(100 * 1024 * 1024 + message.len());
    while log.len() < 100 * 1024 * 1024 {
        log.push_str(noise);
    }
    log.push_str(&message);
    let alone: OomMessage = parse(&message).unwrap();
    assert_eq!(parse(&log).unwrap(), alone);
}

#[test]
fn the_schema_documents_every_field() {
    let schema = serde_json::to_value(schemars::schema_for!(OomMessage)).unwrap();
    let text = schema.to_string();
    for field in [
        "requested_bytes",
        "allocations",
        "allocator",
        "remat",
        "truncated",
        "padding_expansion",
    ] {
        assert!(text.contains(field), "{field} missing from the schema");
    }
    fn undocumented(v: &Value, out: &mut Vec<String>) {
        if let Some(props) = v.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                if p.get("description").is_none() {
                    out.push(k.clone());
                }
            }
        }
        match v {
            Value::Object(m) => m.values().for_each(|x| undocumented(x, out)),
            Value::Array(a) => a.iter().for_each(|x| undocumented(x, out)),
            _ => {}
        }
    }
    let mut missing = Vec::new();
    undocumented(&schema, &mut missing);
    assert!(
        missing.is_empty(),
        "fields without a doc comment: {missing:?}"
    );
}

/// The fuzz target's invariants (fuzz/fuzz_targets/message.rs) on stable: every prefix of
/// every corpus message (every 5th character boundary) and a few damaged copies parse
/// without panicking, deterministically, into results that keep their bounds.
#[test]
fn prefixes_and_damaged_copies_of_the_corpus_parse() {
    fn check(text: &str) {
        let Ok(msg) = parse(text) else {
            return;
        };
        assert!(msg.allocations.len() <= 512);
        if msg.kind == OomKind::Short {
            assert!(msg.allocations.is_empty() && !msg.truncated);
        }
        assert_eq!(parse(text).as_ref(), Ok(&msg));
        let back: OomMessage = serde_json::from_str(&serde_json::to_string(&msg).unwrap()).unwrap();
        assert_eq!(back, msg);
    }
    for (_, text, _) in corpus() {
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(5).collect();
        for &cut in &cuts {
            check(&text[..cut]);
        }
        check(&text.replace(' ', ""));
        check(&text.replace('\n', " "));
        check(&text.replace(':', "\n"));
        check(&text.replace("=", "(").replace("bytes", "E"));
    }
}
