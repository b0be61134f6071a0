//! `oomlens diff --format markdown`, for bug reports and pull requests: the
//! [`DiffView`] with the same sections as the text. Strings from the captures are
//! escaped so that they render as text, never as markup or HTML.

use std::fmt::Write;

use super::clean;
use super::diff_view::{self, DiffView};
use super::markdown::{self, escape};
use super::view::Table;
use crate::diff::model::DiffReport;

/// The comparison in Markdown, listing at most `top` rows of each table.
pub fn render(diff: &DiffReport, top: usize) -> String {
    let view = diff_view::report(diff, top);
    let mut out = String::new();
    for host in &view.hosts {
        render_host(&mut out, host);
    }
    for h in &view.hosts_only {
        line!(out, "> {}\n", escape(h, 2000));
    }
    out
}

fn code(s: &str) -> String {
    clean(s, 400).replace('`', "'")
}

fn render_host(out: &mut String, v: &DiffView) {
    if v.host.is_empty() {
        line!(out, "## oomlens diff: {}\n", escape(&v.title, 400));
    } else {
        line!(
            out,
            "## oomlens diff: {} ({})\n",
            escape(&v.title, 400),
            escape(&v.host, 80)
        );
    }
    line!(out, "**{}**{}\n", escape(&v.headline, 400), v.labels);
    if !v.module.is_empty() {
        line!(
            out,
            "**Module** `{}` — {}\n",
            code(&v.module),
            v.module_reason
        );
    }
    for s in [&v.before, &v.after] {
        line!(out, "- {}: {}", s.side, escape(&s.headline, 400));
    }
    line!(out);
    if !v.savings.is_empty() {
        line!(out, "### Estimated vs measured\n");
        for s in &v.savings {
            let subject = s
                .subject
                .as_deref()
                .map(|x| format!(" {}", escape(x, 200)))
                .unwrap_or_default();
            line!(
                out,
                "- **{}**{subject}: {}",
                escape(s.title, 200),
                escape(&s.text, 600)
            );
        }
        line!(out);
    }
    line!(out, "### Diagnosis\n");
    if let Some(n) = v.diagnosis_not_compared {
        line!(out, "{n}\n");
    }
    for l in &v.diagnosis {
        line!(out, "- {}: **{}**", l.status, escape(l.title, 200));
    }
    if v.diagnosis.iter().any(|l| l.status == "gone") {
        line!(
            out,
            "\n_gone: no longer reported, but nothing shows that its bytes went away: neither the plan's peak nor the pool's peak in use dropped._"
        );
    }
    line!(out);
    for table in [&v.plan, &v.roles].into_iter().flatten() {
        render_table(out, table);
    }
    if let Some(buffers) = &v.buffers {
        render_table(out, buffers);
    }
    if let Some(sum) = &v.sum {
        let _ = write!(out, "Sum: {}", escape(sum, 600));
        if let Some(heap) = &v.heap_sum {
            let _ = write!(out, "; {}", escape(heap, 400));
        }
        line!(out, ".\n");
    }
    if !v.scan_stacks.is_empty() {
        line!(out, "Scan stacks (read):\n");
        for s in &v.scan_stacks {
            line!(out, "- {}", escape(s, 300));
        }
        line!(out);
    }
    if let Some(rt) = &v.runtime {
        render_table(out, rt);
        for s in &v.in_use_at_starts {
            line!(out, "- in use at each start, {s}");
        }
        if !v.in_use_at_starts.is_empty() {
            line!(out);
        }
    }
    if !v.notes.is_empty() {
        line!(out);
        for n in &v.notes {
            line!(out, "> {}\n", escape(&n.text, 600));
        }
    }
    out.push('\n');
}

fn render_table(out: &mut String, t: &Table) {
    let title = escape(&t.title, 200);
    if t.rows.is_empty() {
        line!(out, "{title}:\n");
        if let Some(more) = &t.more {
            line!(out, "{}\n", escape(more, 400));
        }
        return;
    }
    markdown::table(out, &title, t, 400);
}
