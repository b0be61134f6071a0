//! The report as one self-contained HTML file: the [`View`] laid out with the text
//! report's sections, titles and figures, inline CSS, and inline SVG charts (memory
//! along program order, the heap's split by role). No script: the file reads the same
//! in a browser, an e-mail client or a notebook (`fragment` is what a notebook shows).
//!
//! Every string, from the capture or not, goes through [`esc`]: control and
//! bidirectional characters become `\u{…}` as in every other renderer, then `& < > " '`
//! become entities, so that nothing in a capture can become markup. The document also
//! carries a Content-Security-Policy that allows no script, no request and no frame.
//! Chart geometry (pixels from bytes) is the only arithmetic here; every figure and
//! word comes from the view.

use std::fmt::Write;

use super::model::{Label, Report, Verdict};
use super::view::{self, words, Card, FixView, PlanView, RuntimeView, Table, View};
use chart::{memory_chart, role_bar};
use style::STYLE;

mod chart;
mod style;

/// The longest run of characters shown from one string (a name, a source path, a
/// sentence); a longer one is cut with `…`.
const LONG: usize = 4000;
/// The longest table cell shown; the whole of it (up to [`LONG`]) is its tooltip.
const CELL: usize = 300;

/// The report as a whole HTML document, one `<article>` per host.
pub fn render(report: &Report, top: usize) -> String {
    let title = match report.hosts.as_slice() {
        [one] => format!("{} — {}", words::TOOL, esc(&one.file, 200)),
        many => format!("{} — {} hosts", words::TOOL, many.len()),
    };
    let mut out = String::with_capacity(64 * 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        out,
        "<meta name=\"generator\" content=\"{}\">",
        esc(&report.tool, 200)
    );
    let _ = writeln!(out, "<title>{title}</title>");
    let _ = writeln!(out, "<style>{STYLE}</style>");
    out.push_str("</head>\n<body>\n");
    body(&mut out, report, top);
    out.push_str("</body>\n</html>\n");
    out
}

/// The report as an HTML fragment, its style inside: what a notebook cell shows
/// (`_repr_html_`). Every CSS rule is scoped to the fragment's `.oomlens` element.
pub fn fragment(report: &Report, top: usize) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let _ = writeln!(out, "<style>{STYLE}</style>");
    body(&mut out, report, top);
    // One element holding everything, so a notebook places it as one block.
    format!("<div class=\"oomlens-report\">\n{out}</div>\n")
}

fn body(out: &mut String, report: &Report, top: usize) {
    out.push_str("<div class=\"oomlens\">\n");
    for h in &report.hosts {
        render_host(out, &view::host(h, top));
    }
    let _ = writeln!(
        out,
        "<p class=\"tool muted\">{}</p>\n</div>",
        esc(&report.tool, 200)
    );
}

/// Escapes text for HTML content and quoted attribute values (see the module's doc).
pub fn esc(s: &str, max: usize) -> String {
    let s = super::clean(s, max);
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn label(l: Label) -> String {
    format!(
        "<span class=\"label l-{0}\">{0}</span>",
        esc(l.as_str(), 20)
    )
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::DoesNotFit | Verdict::Leak | Verdict::RanOut => "bad",
        Verdict::Fits => "good",
        Verdict::PlanOnly | Verdict::RuntimeOnly | Verdict::Empty | Verdict::Warning => "info",
    }
}

fn render_host(out: &mut String, v: &View) {
    out.push_str("<article class=\"host\">\n<header>\n");
    line!(
        out,
        "<h1>{} — <span class=\"mono\">{}</span> <span class=\"muted\">({}, {})</span></h1>",
        words::TOOL,
        esc(&v.file, LONG),
        esc(&v.host, LONG),
        esc(&v.size, 100)
    );
    if !v.headline.text.is_empty() {
        line!(
            out,
            "<p class=\"verdict {}\"><span class=\"name\">{}:</span> <strong>{}</strong><span class=\"muted\">{}</span></p>",
            verdict_class(v.headline.verdict),
            words::VERDICT,
            esc(&v.headline.text, LONG),
            esc(&v.headline.labels, 400)
        );
    }
    if let Some(note) = &v.headline.note {
        line!(out, "<p class=\"muted\">{}</p>", esc(note, LONG));
    }
    if !v.headline.figures.is_empty() {
        out.push_str("<ul class=\"figures\">\n");
        for f in &v.headline.figures {
            line!(
                out,
                "<li><span class=\"muted\">{}</span> <strong>{}</strong> {}</li>",
                esc(&f.name, 200),
                esc(&f.shown, 100),
                label(f.label)
            );
        }
        out.push_str("</ul>\n");
    }
    match &v.module.label {
        Some(module) => {
            line!(
                out,
                "<p class=\"module\">{}: <code>{}</code> — {}</p>",
                words::MODULE,
                esc(module, LONG),
                esc(&v.module.reason, LONG)
            );
            if let Some(n) = v.module.executions {
                line!(
                    out,
                    "<p class=\"module\">{}: {n} {}</p>",
                    words::EXECUTIONS,
                    label(Label::Measured)
                );
            }
        }
        None => line!(
            out,
            "<p class=\"module\">{}: {} — {}</p>",
            words::MODULE,
            words::NO_MODULE,
            esc(&v.module.reason, LONG)
        ),
    }
    out.push_str("</header>\n");
    render_diagnosis(out, v);
    render_error(out, v);
    if let Some(plan) = &v.plan {
        render_plan(out, plan);
    }
    for table in [&v.live, &v.modules].into_iter().flatten() {
        out.push_str("<section>\n");
        line!(out, "<h2>{}</h2>", esc(&table.title, 400));
        render_table(out, table);
        out.push_str("</section>\n");
    }
    if let Some(rt) = &v.runtime {
        render_runtime(out, rt);
    }
    if !v.notes.is_empty() {
        line!(out, "<section>\n<h2>{}</h2>\n<ul>", words::NOTES);
        for n in &v.notes {
            line!(out, "<li>{}</li>", esc(&n.text, LONG));
        }
        out.push_str("</ul>\n</section>\n");
    }
    if let Some(check) = v.check {
        line!(
            out,
            "<p class=\"check\">{}: <code>{}</code></p>",
            words::CHECK,
            esc(check, 400)
        );
    }
    out.push_str("<footer>\n<ul class=\"legend\">\n");
    for l in &v.labels {
        line!(out, "<li>{} {}</li>", label(l.label), esc(l.meaning, 400));
    }
    out.push_str("</ul>\n</footer>\n</article>\n");
}

fn render_diagnosis(out: &mut String, v: &View) {
    line!(
        out,
        "<section class=\"diagnosis\">\n<h2>{}</h2>",
        words::DIAGNOSIS
    );
    if let Some(nothing) = v.nothing_stands_out {
        line!(out, "<p>{}</p>", esc(nothing, 400));
    }
    for card in &v.diagnosis {
        render_card(out, card);
    }
    out.push_str("</section>\n");
}

/// A card: the title once (the id only as a data attribute), the evidence, what it is
/// made of, why, and the fixes as a numbered list, each with its saving and cost.
fn render_card(out: &mut String, d: &Card) {
    line!(
        out,
        "<div class=\"card\" data-id=\"{}\">\n<h3>{} {}</h3>",
        d.id.as_str(),
        label(d.label),
        esc(d.title, 400)
    );
    line!(out, "<p>{}</p>", esc(&d.text, LONG));
    if !d.items.is_empty() {
        out.push_str("<ul class=\"items\">\n");
        for item in &d.items {
            line!(out, "<li>{}</li>", esc(item, LONG));
        }
        out.push_str("</ul>\n");
    }
    if let Some(cause) = &d.cause {
        line!(
            out,
            "<p><strong>{}:</strong> {}</p>",
            words::CAUSE,
            esc(cause, LONG)
        );
    }
    if !d.fixes.is_empty() {
        let name = if d.fixes.len() == 1 {
            words::FIX
        } else {
            words::FIXES
        };
        line!(
            out,
            "<p class=\"fixes-title\"><strong>{name}:</strong></p>\n<ol class=\"fixes\">"
        );
        for fix in &d.fixes {
            render_fix(out, fix);
        }
        out.push_str("</ol>\n");
    }
    out.push_str("</div>\n");
}

fn render_fix(out: &mut String, f: &FixView) {
    let mut tail = Vec::new();
    if let Some(s) = &f.saving {
        tail.push(format!(
            "{} <strong>{}</strong> {}",
            words::SAVES,
            esc(s, 100),
            label(Label::Estimated)
        ));
    }
    if let Some(c) = &f.cost {
        tail.push(format!("{}: {}", words::COST, esc(c, LONG)));
    }
    if let Some(then) = f.then {
        let class = if f.fits == Some(true) { "good" } else { "bad" };
        tail.push(format!("<span class=\"{class}\">{}</span>", esc(then, 100)));
    }
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!("<br><span class=\"tail\">{}</span>", tail.join("; "))
    };
    line!(out, "<li>{}{tail}</li>", esc(&f.text, LONG));
}

fn render_error(out: &mut String, v: &View) {
    let Some(e) = &v.error else { return };
    line!(out, "<section>\n<h2>{}</h2>", esc(&e.title, 400));
    if !e.rows.is_empty() {
        out.push_str("<table class=\"rows\">\n");
        for row in &e.rows {
            line!(
                out,
                "<tr><th scope=\"row\">{}</th><td>{}</td></tr>",
                esc(&row.name, 200),
                esc(&row.value, LONG)
            );
        }
        out.push_str("</table>\n");
    }
    if !e.reading.is_empty() {
        line!(out, "<p>{}</p>", esc(&e.reading, LONG));
    }
    out.push_str("</section>\n");
}

fn render_plan(out: &mut String, p: &PlanView) {
    line!(out, "<section>\n<h2>{}</h2>", words::PLAN);
    out.push_str("<table class=\"rows\">\n");
    for row in &p.rows {
        line!(
            out,
            "<tr><th scope=\"row\">{}</th><td class=\"num\">{}</td><td class=\"muted\">{}</td></tr>",
            esc(&row.name, 200),
            esc(&row.value, 100),
            esc(&row.note, LONG)
        );
    }
    out.push_str("</table>\n");
    if let Some(chart) = &p.chart {
        memory_chart(out, chart);
    }
    line!(
        out,
        "<p>{}: {}</p>",
        words::AT_HEAP_PEAK,
        esc(&p.roles_sentence, 400)
    );
    role_bar(out, &p.roles, &p.roles_sentence);
    line!(out, "<p>{}</p>", esc(&p.padding, 400));
    if let Some(host) = &p.host_memory {
        line!(out, "<p>{}: {}</p>", words::HOST_MEMORY, esc(host, 400));
    }
    if !p.scan_stacks.is_empty() || !p.host_callbacks.is_empty() {
        out.push_str("<ul>\n");
        for stack in &p.scan_stacks {
            line!(out, "<li>{} {}</li>", words::SCAN_STACK, esc(stack, LONG));
        }
        for callback in &p.host_callbacks {
            line!(
                out,
                "<li>{} {}</li>",
                words::HOST_CALLBACK,
                esc(callback, LONG)
            );
        }
        out.push_str("</ul>\n");
    }
    if let Some(note) = &p.note {
        line!(
            out,
            "<p class=\"muted\">{}: {}</p>",
            words::NOTE,
            esc(note, LONG)
        );
    }
    out.push_str("</section>\n");
}

fn render_table(out: &mut String, t: &Table) {
    out.push_str("<div class=\"wrap\"><table class=\"data\">\n<thead><tr>");
    for c in &t.columns {
        let class = if c.numeric { " class=\"num\"" } else { "" };
        let _ = write!(out, "<th scope=\"col\"{class}>{}</th>", esc(c.name, 100));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, row) in t.rows.iter().enumerate() {
        let mark = match t.marks.get(i).copied().flatten() {
            Some(view::RowMark::Selected) => " class=\"selected\"",
            Some(view::RowMark::NoKernel) => " class=\"no-kernel\"",
            None => "",
        };
        let _ = write!(out, "<tr{mark}>");
        for (j, cell) in row.iter().enumerate() {
            let numeric = t.columns.get(j).is_some_and(|c| c.numeric);
            let class = if numeric { "num" } else { "mono" };
            let full = cell.full.as_deref().unwrap_or(&cell.text);
            let title = if full.chars().count() > CELL || cell.full.is_some() {
                format!(" title=\"{}\"", esc(full, LONG))
            } else {
                String::new()
            };
            let _ = write!(
                out,
                "<td class=\"{class}\"{title}>{}</td>",
                esc(&cell.text, CELL)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    if let Some(more) = &t.more {
        line!(out, "<p class=\"muted\">{}</p>", esc(more, 400));
    }
}

fn render_runtime(out: &mut String, rt: &RuntimeView) {
    line!(out, "<section>\n<h2>{}</h2>\n<ul>", words::RUNTIME);
    for a in &rt.allocators {
        line!(out, "<li>{}</li>", esc(a, LONG));
    }
    if let Some(d) = &rt.device_memory {
        line!(out, "<li>{}</li>", esc(d, 200));
    }
    line!(out, "<li>{}</li>", esc(&rt.counts, 400));
    if let Some(starts) = &rt.in_use_at_starts {
        line!(
            out,
            "<li>{}: {}</li>",
            words::IN_USE_AT_STARTS,
            esc(starts, LONG)
        );
    }
    if let Some(growth) = &rt.growth {
        line!(out, "<li>{}: {}</li>", words::GROWTH, esc(growth, 400));
    }
    if let Some(retry) = &rt.retry {
        let _ = write!(out, "<li>{}: {}", words::RETRY, esc(retry, 400));
        if !rt.waits.is_empty() {
            out.push_str("<ul>");
            for w in &rt.waits {
                let _ = write!(out, "<li>{}</li>", esc(w, LONG));
            }
            out.push_str("</ul>");
        }
        out.push_str("</li>\n");
    }
    if let Some(title) = rt
        .live_groups_title
        .as_ref()
        .filter(|_| !rt.live_groups.is_empty())
    {
        line!(out, "<li>{}:\n<ul>", esc(title, 400));
        for g in &rt.live_groups {
            let inputs = g
                .inputs
                .as_ref()
                .map(|i| format!(" ({})", esc(i, 400)))
                .unwrap_or_default();
            line!(
                out,
                "<li><strong>{}</strong> {}{inputs}</li>",
                esc(&g.shown, 100),
                esc(&g.origin, LONG)
            );
        }
        if let Some(more) = &rt.live_groups_more {
            line!(out, "<li class=\"muted\">{}</li>", esc(more, 400));
        }
        out.push_str("</ul></li>\n");
    }
    if !rt.host_events.is_empty() {
        line!(
            out,
            "<li>{}:\n<table class=\"data\"><tbody>",
            words::HOST_EVENTS
        );
        for e in &rt.host_events {
            line!(
                out,
                "<tr><td class=\"num\">{}×</td><td class=\"num\">{}</td><td class=\"mono\">{}</td></tr>",
                e.count,
                esc(&e.total, 100),
                esc(&e.name, CELL)
            );
        }
        out.push_str("</tbody></table></li>\n");
    }
    out.push_str("</ul>\n");
    if let Some(executions) = &rt.executions {
        line!(
            out,
            "<details>\n<summary>{}</summary>",
            esc(&executions.title, 400)
        );
        render_table(out, executions);
        out.push_str("</details>\n");
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_controls_and_bidi() {
        assert_eq!(
            esc("<img src=x onerror='a'>&\"\u{202e}\n", 100),
            "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;&quot;\\u{202e}\\u{a}"
        );
        assert_eq!(esc("abcdef", 3), "abc…");
    }
}
