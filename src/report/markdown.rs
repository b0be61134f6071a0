//! Markdown for bug reports: the [`View`] with the same sections as the text report.
//! Strings from the capture are escaped so that they render as text, never as markup
//! or HTML.

use std::fmt::Write;

use super::clean;
use super::model::Report;
use super::view::{
    self, words, Card, ErrorView, FixView, PlanView, ProfilesView, RuntimeView, Table, View,
};

/// Escapes Markdown and HTML metacharacters in untrusted text.
pub fn escape(s: &str, max: usize) -> String {
    let s = clean(s, max);
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '|' | '`' | '*' | '_' | '[' | ']' | '\\' | '#' | '(' | ')' | '!' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The report in Markdown, listing at most `top` live buffers.
pub fn render(report: &Report, top: usize) -> String {
    let mut out = String::new();
    if !report.hosts_summary.is_empty() {
        out.push_str(&render_summary(&report.hosts_summary));
    }
    for h in &report.hosts {
        render_host(&mut out, &view::host(h, top));
    }
    out
}

fn render_host(out: &mut String, v: &View) {
    line!(
        out,
        "## oomlens: {} ({})\n",
        escape(&v.file, 200),
        escape(&v.host, 80)
    );
    if !v.headline.text.is_empty() {
        line!(
            out,
            "**{}**{}\n",
            escape(&v.headline.text, 400),
            v.headline.labels
        );
    }
    if let Some(note) = &v.headline.note {
        line!(out, "{}\n", escape(note, 600));
    }
    match &v.module.label {
        Some(label) => line!(
            out,
            "**Module** `{}` — {}{}\n",
            clean(label, 200).replace('`', "'"),
            escape(&v.module.reason, 400),
            v.module
                .executions
                .map(|n| format!("; executions: {n} (measured)"))
                .unwrap_or_default()
        ),
        None => line!(
            out,
            "**Module**: none — {}\n",
            escape(&v.module.reason, 400)
        ),
    }
    if !v.inputs.is_empty() {
        let inputs: Vec<String> = v.inputs.iter().map(|i| escape(i, 300)).collect();
        line!(out, "**Inputs**: {}\n", inputs.join(" · "));
    }
    if let Some(plan) = &v.plan {
        render_plan(out, plan);
    }
    for table in [&v.live, &v.modules].into_iter().flatten() {
        render_table(out, table);
    }
    if let Some(rt) = &v.runtime {
        render_runtime(out, rt);
    }
    render_error_and_notes(out, v);
    line!(out, "### Diagnosis\n");
    if let Some(nothing) = v.nothing_stands_out {
        line!(out, "{nothing}\n");
    }
    for card in &v.diagnosis {
        render_card(out, card);
    }
    if let Some(check) = v.check {
        line!(out, "\nCheck on your side: `{check}`");
    }
    out.push('\n');
}

fn render_plan(out: &mut String, p: &PlanView) {
    if let Some(source) = p.source {
        line!(out, "Plan from {source}:\n");
    }
    line!(out, "| plan (read) | bytes | |\n|---|---:|---|");
    for row in &p.rows {
        line!(
            out,
            "| {} | {} | {} |",
            row.name,
            row.value,
            escape(&row.note, 300)
        );
    }
    line!(out);
    line!(
        out,
        "At the heap peak: {}; {}.",
        p.roles_sentence,
        p.padding
    );
    if let Some(host) = &p.host_memory {
        line!(out, "Host memory (S(5), not device memory): {host}.");
    }
    for stack in &p.scan_stacks {
        line!(out, "- scan stack {}", escape(stack, 200));
    }
    for callback in &p.host_callbacks {
        line!(out, "- host callback {}", escape(callback, 200));
    }
    if let Some(note) = &p.note {
        line!(out, "\n> {}", escape(note, 400));
    }
    line!(out);
}

fn render_table(out: &mut String, t: &Table) {
    table(out, &t.title, t, 200);
}

/// Writes a table: its `title` as given, its columns and rows (each cell escaped), and
/// the count of rows left out (cut to `more_max` characters).
pub(super) fn table(out: &mut String, title: &str, t: &Table, more_max: usize) {
    line!(out, "{title}:\n");
    let names: Vec<&str> = t.columns.iter().map(|c| c.name).collect();
    let aligns: Vec<&str> = t
        .columns
        .iter()
        .map(|c| if c.numeric { "---:" } else { "---" })
        .collect();
    line!(out, "| {} |\n|{}|", names.join(" | "), aligns.join("|"));
    for row in &t.rows {
        let cells: Vec<String> = row.iter().map(|c| escape(&c.text, 160)).collect();
        line!(out, "| {} |", cells.join(" | "));
    }
    if let Some(more) = &t.more {
        line!(out, "\n{}", escape(more, more_max));
    }
    line!(out);
}

fn render_runtime(out: &mut String, rt: &RuntimeView) {
    line!(out, "Runtime (measured):\n");
    for a in &rt.allocators {
        line!(out, "- {}", escape(a, 200));
    }
    if let Some(d) = &rt.device_memory {
        line!(out, "- {d}");
    }
    line!(out, "- {}", rt.counts);
    if let Some(starts) = &rt.in_use_at_starts {
        line!(out, "- in use at each execution start: {starts}");
    }
    if let Some(growth) = &rt.growth {
        line!(out, "- growth per execution: {growth}");
    }
    if let Some(retry) = &rt.retry {
        line!(out, "- AllocatorRetry: {retry}");
        for w in &rt.waits {
            line!(out, "  - {}", escape(w, 300));
        }
    }
    if let Some(title) = rt
        .live_groups_title
        .as_ref()
        .filter(|_| !rt.live_groups.is_empty())
    {
        line!(out, "- {}:", escape(title, 400));
        for g in &rt.live_groups {
            let inputs = g
                .inputs
                .as_ref()
                .map(|i| format!(" \\({}\\)", escape(i, 200)))
                .unwrap_or_default();
            line!(out, "  - {} — {}{inputs}", g.shown, escape(&g.origin, 160));
        }
        if let Some(more) = &rt.live_groups_more {
            line!(out, "  - {}", escape(more, 200));
        }
    }
    if !rt.host_events.is_empty() {
        line!(out, "- host events between the last two executions:");
        for e in &rt.host_events {
            line!(out, "  - {}× {} {}", e.count, e.total, escape(&e.name, 120));
        }
    }
    line!(out);
}

fn render_error_and_notes(out: &mut String, v: &View) {
    if let Some(e) = &v.error {
        render_error(out, e);
    }
    if let Some(p) = &v.profiles {
        render_profiles(out, p);
    }
    for n in &v.notes {
        line!(out, "> {}\n", escape(&n.text, 600));
    }
}

fn render_error(out: &mut String, e: &ErrorView) {
    line!(out, "{}:\n", escape(&e.title, 300));
    for row in &e.rows {
        if row.note.is_empty() {
            line!(out, "- {} {}", row.name, escape(&row.value, 300));
        } else {
            line!(
                out,
                "- {} {} \\({}\\)",
                row.name,
                escape(&row.value, 300),
                escape(&row.note, 200)
            );
        }
    }
    for extra in [&e.split, &e.allocator, &e.remat].into_iter().flatten() {
        line!(out, "- {}", escape(extra, 400));
    }
    if let Some(matched) = &e.matched {
        line!(out, "- matches {}", escape(matched, 300));
    }
    line!(out);
    if let Some(t) = &e.allocations {
        render_table(out, t);
    }
    if !e.reading.is_empty() {
        line!(out, "Reading: {}\n", escape(&e.reading, 800));
    }
}

fn render_profiles(out: &mut String, p: &ProfilesView) {
    line!(out, "{}:\n", p.title);
    for r in &p.rows {
        line!(out, "- {}", escape(r, 300));
    }
    if let Some(d) = &p.devices {
        line!(out, "- {}", escape(d, 600));
    }
    line!(out);
    for t in [&p.groups, &p.growth].into_iter().flatten() {
        render_table(out, t);
    }
}

/// A card as a list item: **Title** (label), the evidence, then under it what it is made
/// of, why, and the fix, or the fixes as a numbered list.
fn render_card(out: &mut String, d: &Card) {
    line!(
        out,
        "- **{}** ({}): {}",
        escape(d.title, 200),
        d.label.as_str(),
        escape(&d.text, 800)
    );
    for item in &d.items {
        line!(out, "  - {}", escape(item, 400));
    }
    if let Some(cause) = &d.cause {
        line!(out, "  - *{}:* {}", words::CAUSE, escape(cause, 800));
    }
    match d.fixes.as_slice() {
        [] => {}
        [fix] => line!(out, "  - *{}:* {}", words::FIX, fix_line(fix)),
        fixes => {
            line!(out, "  - *{}:*", words::FIXES);
            for (i, fix) in fixes.iter().enumerate() {
                line!(out, "    {}. {}", i + 1, fix_line(fix));
            }
        }
    }
}

/// `text — saves ~X (estimated); cost: …; then fits`.
fn fix_line(f: &FixView) -> String {
    let mut tail = Vec::new();
    if let Some(s) = &f.saving {
        tail.push(format!("{} {s} (estimated)", words::SAVES));
    }
    if let Some(c) = &f.cost {
        tail.push(format!("{}: {}", words::COST, escape(c, 400)));
    }
    if let Some(then) = f.then {
        tail.push(then.to_owned());
    }
    let text = escape(&f.text, 800);
    if tail.is_empty() {
        text
    } else {
        format!("{text} — {}", tail.join("; "))
    }
}

/// The cross-host summary of a folder ([`view::hosts`]), as the text report lays it out.
pub fn render_summary(rows: &[super::model::HostSummary]) -> String {
    let v = view::hosts(rows);
    let mut out = String::new();
    line!(out, "## oomlens: {}\n", escape(&v.title, 200));
    render_table(&mut out, &v.table);
    if let Some(first) = &v.first_out {
        line!(out, "{}\n", escape(first, 400));
    }
    if !v.skew.is_empty() {
        line!(out, "Differ from the rest:\n");
        for s in &v.skew {
            line!(out, "- {}", escape(s, 400));
        }
        line!(out);
    }
    if !v.failed.is_empty() {
        line!(out, "Could not be read:\n");
        for f in &v.failed {
            line!(out, "- {}", escape(f, 1000));
        }
        line!(out);
    }
    if let Some(note) = &v.failed_note {
        line!(out, "*{}*\n", escape(note, 400));
    }
    line!(out, "{}\n", escape(v.detail, 200));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_html_and_markdown() {
        assert_eq!(escape("<script>|x", 100), "&lt;script&gt;\\|x");
    }
}
