//! Diagnosis cards (issue 38 §5) in every renderer: the title once, the evidence, why
//! only when the title and the evidence do not already say it, then the fixes as a list,
//! each with its own saving and cost; ids only in JSON and as data attributes. Checked on
//! the committed error messages and captures and on the scenario captures of `support/`.

mod support;

use std::path::{Path, PathBuf};

use oomlens::report::model::{Diagnosis, DiagnosisId, Report};
use oomlens::report::{html, json, markdown, text};
use oomlens::Options;
use support::scenarios::named;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn message(name: &str) -> Report {
    let path = fixtures().join("errors").join(name);
    oomlens::analyze_inputs(&[path], &Options::default()).expect("the message analyzes")
}

fn captures(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            captures(&path, out);
        } else if path.to_string_lossy().ends_with(".xplane.pb") {
            out.push(path);
        }
    }
}

/// Every committed error message and capture, and the scenario captures, analyzed.
fn every_report() -> Vec<(String, Report)> {
    let mut out = Vec::new();
    let mut errors: Vec<PathBuf> = std::fs::read_dir(fixtures().join("errors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    errors.sort();
    for path in errors {
        let report = oomlens::analyze_inputs(std::slice::from_ref(&path), &Options::default())
            .expect("the message analyzes");
        out.push((path.display().to_string(), report));
    }
    let mut files = Vec::new();
    captures(&fixtures(), &mut files);
    files.sort();
    for path in files {
        let report = oomlens::analyze_path(&path, &Options::default()).expect("the capture");
        out.push((path.display().to_string(), report));
    }
    let scenarios = named();
    for (name, s) in scenarios {
        let file = format!("{name}.xplane.pb");
        let report = oomlens::analyze_bytes(&s.bytes, &file, &Options::default())
            .expect("the scenario analyzes");
        out.push((name.to_owned(), report));
    }
    out
}

fn lines(report: &Report) -> Vec<&Diagnosis> {
    report.hosts.iter().flat_map(|h| &h.diagnosis).collect()
}

/// Letters and digits only, lower case, one space between words.
fn words(s: &str) -> String {
    let spaced: String = s
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                ' '
            }
        })
        .collect();
    spaced.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The ids of diagnosis lines and notes that are not plain words (`no_donation`, not
/// `fragmentation`): what must not show as text.
fn raw_ids(report: &Report) -> Vec<String> {
    let mut ids: Vec<String> = lines(report)
        .iter()
        .map(|d| d.id.as_str().to_owned())
        .collect();
    for h in &report.hosts {
        ids.extend(h.notes.iter().map(|n| n.id.clone()));
    }
    // An id that the capture's own strings hold (an op named `jit(step)/debug_callback`)
    // may show as those strings do.
    let json = json::to_value(report).to_string();
    ids.retain(|id| {
        let as_id = format!("\"id\":\"{id}\"");
        id.contains('_') && json.matches(id.as_str()).count() == json.matches(&as_id).count()
    });
    ids
}

/// Every part of `s` from `start` to the next `end` (or its end), one host after another.
fn sections(s: &str, start: &str, end: &str) -> String {
    let mut out = String::new();
    for part in s.split(start).skip(1) {
        out.push_str(part.split(end).next().unwrap_or(part));
        out.push('\n');
    }
    out
}

/// The HTML's text: tags (and so their attributes) left out.
fn html_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn the_aggregate_lists_each_fix_with_its_own_saving_and_cost() {
    let report = message("13-jax-gpt-compile-e1000-wrapped.txt");
    let value = json::to_value(&report);
    let d = &value["diagnosis"][0];
    assert_eq!(d["id"], "aggregate_too_big");
    let fixes = d["fixes"].as_array().expect("fixes in the JSON");
    assert!(fixes.len() >= 4, "{fixes:?}");
    let texts: Vec<&str> = fixes.iter().map(|f| f["text"].as_str().unwrap()).collect();
    for (i, t) in texts.iter().enumerate() {
        assert!(!t.is_empty());
        assert!(!t.starts_with(&format!("{}. ", i + 1)), "unnumbered: {t}");
        assert!(!texts[..i].contains(t), "each fix its own text: {t}");
    }
    for f in fixes {
        let cost = f["cost"]
            .as_str()
            .expect("each fix of the aggregate has a cost");
        assert!(!cost.contains("see it"), "{cost}");
    }
    // The one-fix fields are the first fix, for readers of one fix per line.
    assert_eq!(d["fix"], fixes[0]["text"]);
    assert_eq!(d["saving_bytes"], fixes[0]["saving_bytes"]);
    assert_eq!(d["cost"], fixes[0]["cost"]);
    assert_eq!(d["fits_after"], fixes[0]["fits_after"]);

    let out = text::render(&report, 10);
    assert!(!out.contains("aggregate_too_big"), "{out}");
    assert!(!out.contains("see it"), "{out}");
    assert_eq!(out.matches("The aggregate is too big").count(), 1, "{out}");
    let numbered: Vec<&str> = out
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            l.split_once(". ")
                .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
        })
        .collect();
    assert_eq!(numbered.len(), texts.len(), "one line per fix:\n{out}");
    for (line, fix) in numbered.iter().zip(&texts) {
        assert!(line.contains(fix), "{line} / {fix}");
        assert!(line.contains("cost: "), "{line}");
    }
}

#[test]
fn fixes_with_a_saving_come_first_each_saying_it() {
    // A TPU listing with its temporaries: the batch and the dtype fixes have figures.
    let report = message("06-easydel-166-compile-source-lines.txt");
    let d = lines(&report)
        .into_iter()
        .find(|d| d.id == DiagnosisId::AggregateTooBig)
        .expect("the aggregate line");
    let savings: Vec<Option<u64>> = d.fixes.iter().map(|f| f.saving_bytes).collect();
    assert!(savings[0].is_some(), "{savings:?}");
    let known = savings.iter().take_while(|s| s.is_some()).count();
    assert!(savings[known..].iter().all(Option::is_none), "{savings:?}");
    assert!(
        savings[..known].windows(2).all(|w| w[0] >= w[1]),
        "{savings:?}"
    );
    assert_eq!(d.saving_bytes, savings[0]);
    let out = text::render(&report, 10);
    let with_saving = out
        .lines()
        .filter(|l| l.trim_start().starts_with(char::is_numeric) && l.contains("saves ~"))
        .count();
    assert_eq!(with_saving, known, "{out}");
    let md = markdown::render(&report, 10);
    assert!(md.contains("  - *fixes:*\n    1. "), "{md}");
    let page = html::render(&report, 10);
    let card = page
        .split("<div class=\"card\" data-id=\"aggregate_too_big\">")
        .nth(1)
        .expect("the card, its id as a data attribute");
    let list = card.split("<ol class=\"fixes\">").nth(1).unwrap();
    let list = list.split("</ol>").next().unwrap();
    assert_eq!(list.matches("<li>").count(), d.fixes.len(), "{list}");
}

#[test]
fn no_card_shows_an_id_its_title_twice_or_a_cause_it_already_said() {
    let mut cards = 0;
    for (name, report) in every_report() {
        let ids = raw_ids(&report);
        let out = text::render(&report, 10);
        let md = markdown::render(&report, 10);
        let page = html::render(&report, 10);
        // The cards' sections (the error message's section names its kind, which is not
        // a card's).
        let out_cards = sections(&out, "\nDiagnosis:\n", "\nCheck on your side");
        let md_cards = sections(&md, "### Diagnosis", "\nCheck on your side");
        let page_cards = html_text(&sections(
            &page,
            "<section class=\"diagnosis\">",
            "</section>",
        ));
        for id in &ids {
            assert!(
                !out_cards.contains(id.as_str()),
                "{name}: {id} in the text report"
            );
            let escaped = id.replace('_', "\\_");
            assert!(
                !md_cards.contains(id.as_str()) && !md_cards.contains(&escaped),
                "{name}: {id} in the Markdown report"
            );
            assert!(
                !page_cards.contains(id.as_str()),
                "{name}: {id} in the HTML's text"
            );
        }
        for d in lines(&report) {
            cards += 1;
            let title = words(&d.title);
            assert!(
                !words(&d.text).contains(&title),
                "{name}: {} restates its title: {}",
                d.id,
                d.text
            );
            assert_eq!(
                out.matches(&format!("] {}\n", d.title)).count(),
                lines(&report).iter().filter(|o| o.title == d.title).count(),
                "{name}: the title once per card"
            );
            // A cause shown adds to the title and the evidence.
            let cause = format!("cause: {}", d.cause);
            if out.contains(&cause) {
                let c = words(&d.cause);
                assert!(
                    !words(&d.text).contains(&c) && !title.contains(&c),
                    "{name}"
                );
            }
            if !d.fixes.is_empty() {
                assert_eq!(d.fix.as_deref(), Some(d.fixes[0].text.as_str()), "{name}");
                assert_eq!(d.saving_bytes, d.fixes[0].saving_bytes, "{name}");
            }
            assert!(d.fixes.iter().all(|f| !f.text.starts_with("1. ")), "{name}");
        }
    }
    assert!(cards > 50, "{cards} cards checked");
}
