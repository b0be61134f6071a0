//! The terminal report: the [`View`] laid out in plain text, one section after another.
//! Section headings carry the label of every figure in the section; strings from the
//! capture pass through [`clean`] so that they cannot break a line.

use std::fmt::Write;

use super::clean;
use super::model::Report;
use super::view::{self, words, Card, PlanView, RuntimeView, Table, View};

/// The report as plain text, listing at most `top` live buffers.
pub fn render(report: &Report, top: usize) -> String {
    let mut out = String::new();
    if !report.hosts_summary.is_empty() {
        out.push_str(&render_summary(&report.hosts_summary));
    }
    for (i, host) in report.hosts.iter().enumerate() {
        if i > 0 || !report.hosts_summary.is_empty() {
            out.push_str("\n\n");
        }
        render_host(&mut out, &view::host(host, top));
    }
    out
}

/// Writes a line (a `String` cannot fail to take one).
macro_rules! line {
    ($out:expr) => { $out.push('\n') };
    ($out:expr, $($arg:tt)*) => {{ let _ = writeln!($out, $($arg)*); }};
}

/// The report in brief, for the end of a traceback (the Python package's
/// `oomlens.jax`): each host's first line, verdict and module, then its first `lines`
/// diagnosis lines, as the full report writes them.
pub fn brief(report: &Report, lines: usize) -> String {
    let mut out = String::new();
    for host in &report.hosts {
        let v = view::host(host, 0);
        render_head(&mut out, &v);
        for card in v.diagnosis.iter().take(lines) {
            render_card(&mut out, card);
        }
    }
    out
}

fn render_host(out: &mut String, v: &View) {
    render_head(out, v);
    if let Some(plan) = &v.plan {
        render_plan(out, plan);
    }
    if let Some(live) = &v.live {
        render_live(out, live);
    }
    if let Some(modules) = &v.modules {
        render_modules(out, modules);
    }
    render_rest(out, v);
}

/// The report's first line, the verdict and the module.
fn render_head(out: &mut String, v: &View) {
    line!(
        out,
        "{} — {} ({}, {})",
        words::TOOL,
        clean(&v.file, 200),
        clean(&v.host, 80),
        v.size
    );
    if !v.headline.text.is_empty() {
        line!(
            out,
            "{}: {}{}",
            words::VERDICT,
            clean(&v.headline.text, 400),
            v.headline.labels
        );
    }
    match &v.module.label {
        Some(label) => {
            line!(
                out,
                "{}: {}  — {}",
                words::MODULE,
                clean(label, 200),
                v.module.reason
            );
            if let Some(n) = v.module.executions {
                line!(out, "{}: {n} (measured)", words::EXECUTIONS);
            }
        }
        None => line!(
            out,
            "{}: {} — {}",
            words::MODULE,
            words::NO_MODULE,
            v.module.reason
        ),
    }
}

/// Runtime, the pasted error, notes, diagnosis and the check command.
fn render_rest(out: &mut String, v: &View) {
    if let Some(rt) = &v.runtime {
        render_runtime(out, rt);
    }
    render_error_and_notes(out, v);
    line!(out, "\n{}:", words::DIAGNOSIS);
    if let Some(nothing) = v.nothing_stands_out {
        line!(out, "  {nothing}");
    }
    for card in &v.diagnosis {
        render_card(out, card);
    }
    if let Some(check) = v.check {
        line!(out, "\n{}: {check}", words::CHECK);
    }
}

fn render_plan(out: &mut String, p: &PlanView) {
    line!(out, "\n{}:", words::PLAN);
    for row in &p.rows {
        if row.note.is_empty() {
            line!(out, "  {:<16} {:>12}", row.name, row.value);
        } else {
            line!(out, "  {:<16} {:>12}  ({})", row.name, row.value, row.note);
        }
    }
    line!(out, "  {}: {}", words::AT_HEAP_PEAK, p.roles_sentence);
    line!(out, "  {}", p.padding);
    if let Some(host) = &p.host_memory {
        line!(out, "  {}: {host}", words::HOST_MEMORY);
    }
    for stack in &p.scan_stacks {
        line!(out, "  {} {}", words::SCAN_STACK, clean(stack, 200));
    }
    for callback in &p.host_callbacks {
        line!(out, "  {} {}", words::HOST_CALLBACK, clean(callback, 200));
    }
    if let Some(note) = &p.note {
        line!(out, "  {}: {}", words::NOTE, clean(note, 400));
    }
}

fn render_live(out: &mut String, t: &Table) {
    line!(out, "\n{}:", t.title);
    line!(
        out,
        "  {:>12}  {:<26} {:<12} {:<10} {:<22} instruction / op_name",
        "bytes",
        "shape",
        "category",
        "role",
        "source"
    );
    for r in &t.rows {
        let cell = |i: usize| r.get(i).map(|c| c.text.as_str()).unwrap_or("");
        line!(
            out,
            "  {:>12}  {:<26} {:<12} {:<10} {:<22} {}  {}",
            cell(0),
            clean(cell(1), 26),
            cell(2),
            cell(3),
            clean(cell(4), 22),
            clean(cell(5), 60),
            clean(cell(6), 100)
        );
    }
    if let Some(more) = &t.more {
        line!(out, "  {more}");
    }
}

fn render_modules(out: &mut String, t: &Table) {
    line!(out, "\n{}:", t.title);
    line!(
        out,
        "  {:>12}  {:>12}  {:>12}  {:>5}  module",
        "peak",
        "temp",
        "params",
        "runs"
    );
    for r in &t.rows {
        let cell = |i: usize| r.get(i).map(|c| c.text.as_str()).unwrap_or("");
        line!(
            out,
            "  {:>12}  {:>12}  {:>12}  {:>5}  {}",
            cell(0),
            cell(1),
            cell(2),
            cell(3),
            clean(cell(4), 120)
        );
    }
    if let Some(more) = &t.more {
        line!(out, "  {more}");
    }
}

fn render_runtime(out: &mut String, rt: &RuntimeView) {
    line!(out, "\n{}:", words::RUNTIME);
    for a in &rt.allocators {
        line!(out, "  {}", clean(a, 200));
    }
    if let Some(d) = &rt.device_memory {
        line!(out, "  {d}");
    }
    line!(out, "  {}", rt.counts);
    if let Some(starts) = &rt.in_use_at_starts {
        line!(out, "  {}: {starts}", words::IN_USE_AT_STARTS);
    }
    if let Some(growth) = &rt.growth {
        line!(out, "  {}: {growth}", words::GROWTH);
    }
    if let Some(retry) = &rt.retry {
        line!(out, "  {}: {retry}", words::RETRY);
        for w in &rt.waits {
            line!(out, "    {}", clean(w, 300));
        }
    }
    if !rt.live_groups.is_empty() {
        line!(out, "  {}:", words::LIVE_GROUPS);
        for g in &rt.live_groups {
            let inputs = g
                .inputs
                .as_ref()
                .map(|i| format!(" ({i})"))
                .unwrap_or_default();
            line!(
                out,
                "    {:>12}  {}{inputs}",
                g.shown,
                clean(&g.origin, 160)
            );
        }
        if let Some(more) = &rt.live_groups_more {
            line!(out, "    {more}");
        }
    }
    if !rt.host_events.is_empty() {
        line!(out, "  {}:", words::HOST_EVENTS);
        for e in &rt.host_events {
            line!(
                out,
                "    {:>6}×  {:>13}  {}",
                e.count,
                e.total,
                clean(&e.name, 120)
            );
        }
    }
}

fn render_error_and_notes(out: &mut String, v: &View) {
    if let Some(e) = &v.error {
        line!(out, "\n{}:", clean(&e.title, 200));
        for row in &e.rows {
            line!(out, "  {} {}", row.name, clean(&row.value, 300));
        }
        if !e.reading.is_empty() {
            line!(out, "  {}", clean(&e.reading, 800));
        }
    }
    if !v.notes.is_empty() {
        line!(out, "\n{}:", words::NOTES);
        for n in &v.notes {
            line!(out, "  - {}", clean(&n.text, 600));
        }
    }
}

fn render_card(out: &mut String, d: &Card) {
    line!(
        out,
        "  [{}] {} ({})",
        d.label.as_str(),
        d.title,
        d.id.as_str()
    );
    line!(out, "      {}", clean(&d.text, 800));
    for item in &d.items {
        line!(out, "        - {}", clean(item, 400));
    }
    if let Some(fix) = &d.fix {
        line!(out, "      {}: {}", words::FIX, clean(fix, 800));
    }
    let mut tail = Vec::new();
    if let Some(s) = &d.saving {
        tail.push(format!("{} {s} (estimated)", words::SAVES));
    }
    if let Some(c) = &d.cost {
        tail.push(format!("{}: {c}", words::COST));
    }
    if let Some(then) = d.then {
        tail.push(then.to_owned());
    }
    if !tail.is_empty() {
        line!(out, "      {}", tail.join("; "));
    }
}

/// The cross-host summary of a folder ([`view::hosts`]): the title, one row per host,
/// which host ran out first, the hosts that differ from the rest, those that could not
/// be read, and how to see one host's report.
pub fn render_summary(rows: &[super::model::HostSummary]) -> String {
    let v = view::hosts(rows);
    let mut out = String::new();
    line!(out, "oomlens — {}", v.title);
    line!(out, "\n{}:", v.table.title);
    let cells: Vec<Vec<String>> = v
        .table
        .rows
        .iter()
        .map(|r| r.iter().map(|c| clean(&c.text, 60)).collect())
        .collect();
    let widths: Vec<usize> = v
        .table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .filter_map(|r| r.get(i))
                .map(|t| t.chars().count())
                .chain([c.name.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let row = |out: &mut String, texts: &mut dyn Iterator<Item = &str>| {
        let mut s = String::from(" ");
        for ((text, col), &w) in texts.zip(&v.table.columns).zip(&widths) {
            let pad = w.saturating_sub(text.chars().count());
            s.push(' ');
            if col.numeric {
                s.push_str(&" ".repeat(pad));
                s.push_str(text);
            } else {
                s.push_str(text);
                s.push_str(&" ".repeat(pad));
            }
            s.push(' ');
        }
        line!(out, "{}", s.trim_end());
    };
    row(&mut out, &mut v.table.columns.iter().map(|c| c.name));
    for r in &cells {
        row(&mut out, &mut r.iter().map(String::as_str));
    }
    if let Some(first) = &v.first_out {
        line!(out, "\n{}", clean(first, 400));
    }
    if !v.skew.is_empty() {
        line!(out, "\nDiffer from the rest:");
        for s in &v.skew {
            line!(out, "  - {}", clean(s, 400));
        }
    }
    if !v.failed.is_empty() {
        line!(out, "\nCould not be read:");
        for f in &v.failed {
            line!(out, "  - {}", clean(f, 1000));
        }
    }
    if let Some(note) = &v.failed_note {
        line!(out, "\nnote: {note}");
    }
    line!(out, "\n{}", v.detail);
    out
}
