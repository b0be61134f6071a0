//! `oomlens diff` in the terminal: the [`DiffView`] laid out in plain text, one section
//! after another, as `text.rs` lays out a report. Strings from the captures pass
//! through [`clean`] so that they cannot break a line.

use std::fmt::Write;

use super::clean;
use super::diff_view::{self, DiffView};
use super::text::{cells, write_row, Col};
use super::view::Table;
use crate::diff::model::DiffReport;

/// The comparison as plain text, listing at most `top` rows of each table.
pub fn render(diff: &DiffReport, top: usize) -> String {
    let view = diff_view::report(diff, top);
    let mut out = String::new();
    for (i, host) in view.hosts.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        render_host(&mut out, host);
    }
    if !view.hosts_only.is_empty() {
        line!(out);
        for h in &view.hosts_only {
            line!(out, "{}", clean(h, 2000));
        }
    }
    out
}

fn render_host(out: &mut String, v: &DiffView) {
    if v.host.is_empty() {
        line!(out, "oomlens diff — {}", clean(&v.title, 400));
    } else {
        line!(
            out,
            "oomlens diff — {} ({})",
            clean(&v.title, 400),
            clean(&v.host, 80)
        );
    }
    line!(out, "change: {}{}", clean(&v.headline, 400), v.labels);
    if !v.module.is_empty() {
        line!(
            out,
            "module: {}  — {}",
            clean(&v.module, 400),
            v.module_reason
        );
    }
    for s in [&v.before, &v.after] {
        line!(
            out,
            "{:<7} {}",
            format!("{}:", s.side),
            clean(&s.headline, 400)
        );
    }
    if !v.savings.is_empty() {
        line!(out, "\nEstimated vs measured:");
        for s in &v.savings {
            let subject = s
                .subject
                .as_deref()
                .map(|x| format!(" {}", clean(x, 200)))
                .unwrap_or_default();
            line!(out, "  {}{subject}: {}", s.title, s.text);
        }
    }
    line!(out, "\nDiagnosis:");
    if let Some(n) = v.diagnosis_not_compared {
        line!(out, "  {n}");
    }
    for l in &v.diagnosis {
        line!(out, "  {:<10} {}", l.status, l.title);
    }
    if v.diagnosis.iter().any(|l| l.status == "gone") {
        line!(
            out,
            "  (gone: no longer reported, but nothing shows that its bytes went away: neither the plan's peak nor the pool's peak in use dropped)"
        );
    }
    for table in [&v.plan, &v.roles].into_iter().flatten() {
        render_figures(out, table);
    }
    if let Some(buffers) = &v.buffers {
        render_buffers(out, buffers);
    }
    if let Some(sum) = &v.sum {
        line!(out, "  sum: {sum}");
        if let Some(heap) = &v.heap_sum {
            line!(out, "       {heap}");
        }
    }
    if !v.scan_stacks.is_empty() {
        line!(out, "\nScan stacks (read):");
        for s in &v.scan_stacks {
            line!(out, "  {}", clean(s, 300));
        }
    }
    if let Some(rt) = &v.runtime {
        render_figures(out, rt);
        for s in &v.in_use_at_starts {
            line!(out, "  in use at each start, {s}");
        }
    }
    if !v.notes.is_empty() {
        line!(out, "\nNotes:");
        for n in &v.notes {
            line!(out, "  - {}", clean(&n.text, 600));
        }
    }
}

/// A table of figures: name, before, after, change, %.
fn render_figures(out: &mut String, t: &Table) {
    const COLUMNS: [Col; 5] = [
        Col::left("", 28),
        Col::right(" ", 16),
        Col::right(" ", 16),
        Col::right(" ", 12),
        Col::right(" ", 10),
    ];
    line!(out, "\n{}:", clean(&t.title, 200));
    let header = ["", "before", "after", "change", "%"];
    write_row(out, "  ", &COLUMNS, header, false);
    for r in &t.rows {
        write_row(out, "  ", &COLUMNS, cells(r, COLUMNS.len()), false);
    }
}

fn render_buffers(out: &mut String, t: &Table) {
    const COLUMNS: [Col; 9] = [
        Col::right("", 11),
        Col::right(" ", 12),
        Col::right(" ", 12),
        Col::left("  ", 9),
        Col::cut("  ", 26, 60),
        Col::left(" ", 9),
        Col::cut(" ", 22, 22),
        Col::cut(" ", 0, 60),
        Col::cut("  ", 0, 100),
    ];
    line!(out, "\n{}:", t.title);
    if t.rows.is_empty() {
        if let Some(more) = &t.more {
            line!(out, "  {more}");
        }
        return;
    }
    let header = ["change", "before", "after", "", "shape", "role", "source"];
    let header = header.into_iter().chain(["instruction / op_name"]);
    write_row(out, "  ", &COLUMNS, header, true);
    for r in &t.rows {
        write_row(out, "  ", &COLUMNS, cells(r, COLUMNS.len()), false);
    }
    if let Some(more) = &t.more {
        line!(out, "  {more}");
    }
}
