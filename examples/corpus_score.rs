//! Scores oomlens on a corpus of annotated out-of-memory messages
//! (`tests/fixtures/errors/ANNOTATING.md`): the share of stated figures extracted and
//! the share of messages triaged right, with every miss listed.
//!
//!     cargo run --release --example corpus_score -- tests/fixtures/errors [--quiet]
//!     cargo run --release --example corpus_score -- tests/heldout/errors

#[path = "../tests/support/corpus_score.rs"]
mod corpus_score;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quiet = args.iter().any(|a| a == "--quiet");
    let Some(dir) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: corpus_score DIR [--quiet]");
        std::process::exit(2);
    };
    let score = corpus_score::score(std::path::Path::new(dir));
    for m in &score.messages {
        let triage = if m.triage_right() {
            "ok".to_owned()
        } else {
            format!(
                "WRONG: {} {} (want {} {})",
                m.got.0, m.got.1, m.want.0, m.want.1
            )
        };
        if quiet && m.missed.is_empty() && m.triage_right() {
            continue;
        }
        println!(
            "{}: figures {}/{}; triage {triage}",
            m.name, m.read, m.stated
        );
        for miss in &m.missed {
            println!("    {miss}");
        }
    }
    let (decided, right) = score.decided_by_message();
    println!(
        "{dir}: {} messages; figures {}/{} = {:.1}%; triage {}/{} = {:.1}%; where the message decides: {right}/{decided}",
        score.messages.len(),
        score.read(),
        score.stated(),
        score.figures_pct(),
        score.triage_right(),
        score.messages.len(),
        score.triage_pct()
    );
    let two = score.second_opinion();
    if two.seconded > 0 {
        println!(
            "  a second annotator, blind, on {} of them: the annotators agree on {}; oomlens is right on {}/{} where they agree, with the first on {}, with the second on {}, with either on {}",
            two.seconded,
            two.agreed,
            two.right_where_agreed,
            two.agreed,
            two.right_by_first,
            two.right_by_second,
            two.right_by_either
        );
    }
}
