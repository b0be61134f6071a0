//! The terminal report: the [`View`] laid out in plain text, one section after another.
//! Section headings carry the label of every figure in the section; strings from the
//! capture pass through [`clean`] so that they cannot break a line.

use std::fmt::Write;

use super::clean;
use super::model::Report;
use super::view::{
    self, words, Card, Cell, ErrorView, PlanView, ProfilesView, RuntimeView, Table, View,
};

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
    if !v.inputs.is_empty() {
        let inputs: Vec<String> = v.inputs.iter().map(|i| clean(i, 300)).collect();
        line!(out, "inputs: {}", inputs.join(" · "));
    }
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
    if let Some(note) = &v.headline.note {
        line!(out, "  {}", clean(note, 600));
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
    if let Some(source) = p.source {
        line!(out, "  from {source}");
    }
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
    const COLUMNS: [Col; 7] = [
        Col::right("", 12),
        Col::cut("  ", 26, 26),
        Col::left(" ", 12),
        Col::left(" ", 10),
        Col::cut(" ", 22, 22),
        Col::cut(" ", 0, 60),
        Col::cut("  ", 0, 100),
    ];
    line!(out, "\n{}:", t.title);
    let header = ["bytes", "shape", "category", "role", "source"];
    write_row(
        out,
        "  ",
        &COLUMNS,
        header.into_iter().chain(["instruction / op_name"]),
        true,
    );
    for r in &t.rows {
        write_row(out, "  ", &COLUMNS, cells(r, COLUMNS.len()), false);
    }
    if let Some(more) = &t.more {
        line!(out, "  {more}");
    }
}

fn render_modules(out: &mut String, t: &Table) {
    // With the plan's source, when the table has it, in parentheses after the module.
    const COLUMNS: [Col; 6] = [
        Col::right("", 12),
        Col::right("  ", 12),
        Col::right("  ", 12),
        Col::right("  ", 5),
        Col::cut("  ", 0, 120),
        Col::left("  ", 0),
    ];
    line!(out, "\n{}:", t.title);
    let sources = t.columns.len() > 5;
    let columns = if sources { &COLUMNS[..] } else { &COLUMNS[..5] };
    let header = ["peak", "temp", "params", "runs", "module", "(plan)"];
    write_row(out, "  ", columns, header, false);
    for r in &t.rows {
        let source = if sources {
            format!("({})", cell(r, 5))
        } else {
            String::new()
        };
        let row = cells(r, 5).chain([source.as_str()]);
        write_row(out, "  ", columns, row, false);
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
    if let Some(title) = rt
        .live_groups_title
        .as_ref()
        .filter(|_| !rt.live_groups.is_empty())
    {
        line!(out, "  {title}:");
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
        render_error(out, e);
    }
    if let Some(p) = &v.profiles {
        render_profiles(out, p);
    }
    if !v.notes.is_empty() {
        line!(out, "\n{}:", words::NOTES);
        for n in &v.notes {
            line!(out, "  - {}", clean(&n.text, 600));
        }
    }
}

fn render_error(out: &mut String, e: &ErrorView) {
    line!(out, "\n{}:", clean(&e.title, 300));
    for row in &e.rows {
        if row.note.is_empty() {
            line!(out, "  {:<18} {:>12}", row.name, clean(&row.value, 300));
        } else {
            line!(
                out,
                "  {:<18} {:>12}  ({})",
                row.name,
                clean(&row.value, 300),
                row.note
            );
        }
    }
    for extra in [&e.split, &e.allocator, &e.remat].into_iter().flatten() {
        line!(out, "  {}", clean(extra, 400));
    }
    if let Some(matched) = &e.matched {
        line!(out, "  matches {}", clean(matched, 300));
    }
    if let Some(t) = &e.allocations {
        render_table(out, t, &[12, 12, 7, 34, 10, 24]);
    }
    if !e.reading.is_empty() {
        line!(out, "  reading: {}", clean(&e.reading, 800));
    }
}

fn render_profiles(out: &mut String, p: &ProfilesView) {
    line!(out, "\n{}:", p.title);
    for r in &p.rows {
        line!(out, "  {}", clean(r, 300));
    }
    if let Some(d) = &p.devices {
        line!(out, "  {}", clean(d, 600));
    }
    for t in [&p.groups, &p.growth].into_iter().flatten() {
        render_table(out, t, &[12, 6, 11, 8]);
    }
}

/// A table with its columns at the given widths (numeric ones right-aligned); the last
/// column takes the rest of the line.
fn render_table(out: &mut String, t: &Table, widths: &[usize]) {
    line!(out, "  {}:", clean(&t.title, 300));
    let columns: Vec<Col> = (t.columns.iter().enumerate())
        .map(|(i, c)| match widths.get(i) {
            Some(&w) if c.numeric => Col {
                max: Some(w),
                ..Col::right(" ", w)
            },
            Some(&w) => Col::cut(" ", w, w),
            None => Col::cut(" ", 0, 160),
        })
        .collect();
    write_row(out, "   ", &columns, t.columns.iter().map(|c| c.name), true);
    for r in &t.rows {
        write_row(
            out,
            "   ",
            &columns,
            r.iter().map(|c| c.text.as_str()),
            true,
        );
    }
    if let Some(more) = &t.more {
        line!(out, "    {more}");
    }
}

/// One column of a plain-text table: the gap before it, its width (0: as wide as its
/// text), its side, and how many characters of a cell it shows (`None`: figures and
/// words the report writes itself, shown whole).
#[derive(Clone, Copy)]
pub(super) struct Col {
    gap: &'static str,
    width: usize,
    right: bool,
    max: Option<usize>,
}

impl Col {
    /// A column of figures, aligned right.
    pub(super) const fn right(gap: &'static str, width: usize) -> Col {
        Col {
            gap,
            width,
            right: true,
            max: None,
        }
    }

    /// A column of words the report writes, aligned left.
    pub(super) const fn left(gap: &'static str, width: usize) -> Col {
        Col {
            gap,
            width,
            right: false,
            max: None,
        }
    }

    /// A column of text from the capture, aligned left and cut to `max` characters.
    pub(super) const fn cut(gap: &'static str, width: usize, max: usize) -> Col {
        Col {
            gap,
            width,
            right: false,
            max: Some(max),
        }
    }
}

/// The text of a table row's cell `i` (empty past the row's end).
pub(super) fn cell(row: &[Cell], i: usize) -> &str {
    row.get(i).map_or("", |c| c.text.as_str())
}

/// The texts of a table row's first `n` cells (empty past the row's end).
pub(super) fn cells(row: &[Cell], n: usize) -> impl Iterator<Item = &str> {
    (0..n).map(move |i| cell(row, i))
}

/// Writes one row of a plain-text table: `lead`, then each column's cell (empty past
/// the texts given); `trim` drops the spaces the last cells leave.
pub(super) fn write_row<'a>(
    out: &mut String,
    lead: &str,
    columns: &[Col],
    texts: impl IntoIterator<Item = &'a str>,
    trim: bool,
) {
    let mut line = String::from(lead);
    let mut texts = texts.into_iter();
    for col in columns {
        let text = texts.next().unwrap_or("");
        let text = match col.max {
            Some(max) => std::borrow::Cow::Owned(clean(text, max)),
            None => std::borrow::Cow::Borrowed(text),
        };
        let w = col.width;
        line.push_str(col.gap);
        let _ = if col.right {
            write!(line, "{text:>w$}")
        } else {
            write!(line, "{text:<w$}")
        };
    }
    line!(out, "{}", if trim { line.trim_end() } else { &line });
}

/// A card: `[label] Title`, the evidence, what it is made of, why, then the fix (`fix:
/// …`, its saving and cost on the next line) or the fixes, one numbered line each.
fn render_card(out: &mut String, d: &Card) {
    line!(out, "  [{}] {}", d.label.as_str(), d.title);
    line!(out, "      {}", clean(&d.text, 800));
    for item in &d.items {
        line!(out, "        - {}", clean(item, 400));
    }
    if let Some(cause) = &d.cause {
        line!(out, "      {}: {}", words::CAUSE, clean(cause, 800));
    }
    match d.fixes.as_slice() {
        [] => {}
        [fix] => {
            line!(out, "      {}: {}", words::FIX, clean(&fix.text, 800));
            let tail = fix.tail();
            if !tail.is_empty() {
                line!(out, "      {tail}");
            }
        }
        fixes => {
            line!(out, "      {}:", words::FIXES);
            for (i, fix) in fixes.iter().enumerate() {
                let tail = fix.tail();
                let tail = if tail.is_empty() {
                    tail
                } else {
                    format!(" — {tail}")
                };
                line!(out, "        {}. {}{tail}", i + 1, clean(&fix.text, 800));
            }
        }
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
    let texts: Vec<Vec<String>> = (v.table.rows.iter())
        .map(|r| r.iter().map(|c| clean(&c.text, 60)).collect())
        .collect();
    // Each column as wide as its widest text, two spaces apart.
    let columns: Vec<Col> = (v.table.columns.iter().enumerate())
        .map(|(i, c)| {
            let width = (texts.iter().filter_map(|r| r.get(i)))
                .map(|t| t.chars().count())
                .chain([c.name.chars().count()])
                .max()
                .unwrap_or(0);
            let gap = if i == 0 { "" } else { "  " };
            let col = if c.numeric { Col::right } else { Col::left };
            col(gap, width)
        })
        .collect();
    let names = v.table.columns.iter().map(|c| c.name);
    write_row(&mut out, "  ", &columns, names, true);
    for r in &texts {
        write_row(&mut out, "  ", &columns, r.iter().map(String::as_str), true);
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
