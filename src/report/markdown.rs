//! Markdown for bug reports. Strings from the capture are escaped so that they render
//! as text, never as markup or HTML.

use std::fmt::Write;

use super::model::Report;
use super::{clean, short_source};
use crate::units::{gib, mib};

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

pub fn render(report: &Report, top: usize) -> String {
    let mut out = String::new();
    for h in &report.hosts {
        let _ = writeln!(
            out,
            "## oomlens: {} ({})\n",
            escape(&h.file, 200),
            escape(&h.host, 80)
        );
        if !h.headline.text.is_empty() {
            let _ = writeln!(
                out,
                "**{}**{}\n",
                escape(&h.headline.text, 400),
                super::text::figure_labels(&h.headline)
            );
        }
        let module = h
            .selected_module
            .as_deref()
            .and_then(|s| h.modules.iter().find(|m| m.label == s));
        if let Some(m) = module {
            let p = &m.plan;
            let _ = writeln!(
                out,
                "**Module** `{}` — {}; executions: {} (measured)\n",
                clean(&m.label, 200).replace('`', "'"),
                h.selection_reason,
                m.executions
            );
            let _ = writeln!(out, "| plan (read) | bytes |\n|---|---|");
            let _ = writeln!(
                out,
                "| parameters ({} arrays, {} donated) | {} |",
                p.parameter_count,
                p.donated_parameter_count,
                mib(p.argument_bytes)
            );
            let _ = writeln!(
                out,
                "| outputs (not aliased: {}) | {} |",
                mib(p.non_aliased_output_bytes),
                mib(p.output_bytes)
            );
            let _ = writeln!(out, "| temporary block | {} |", mib(p.temp_bytes));
            let _ = writeln!(out, "| aliased | {} |", mib(p.alias_bytes));
            let _ = writeln!(out, "| needs | {} |", gib(p.total_bytes));
            let _ = writeln!(out, "| heap peak | {} |", mib(p.heap_peak_bytes));
            let _ = writeln!(
                out,
                "| peak (XProf Memory Viewer) | {} |\n",
                mib(p.peak_bytes)
            );
            if !p.live_at_peak.is_empty() {
                let _ = writeln!(out, "Live at the peak (read):\n\n| bytes | shape | category | role | source | instruction | op_name |\n|---:|---|---|---|---|---|---|");
                for b in p.live_at_peak.iter().take(top) {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {:?} | {} | {} | {} | {} |",
                        mib(b.bytes),
                        escape(&b.shape, 60),
                        b.category,
                        super::present::role_words(b.role),
                        escape(short_source(&b.source), 80),
                        escape(&b.name, 80),
                        escape(&b.op_name, 160)
                    );
                }
                out.push('\n');
            }
        }
        if let Some(rt) = &h.runtime {
            let _ = writeln!(out, "Runtime (measured):\n");
            for a in rt.allocators.iter().take(4) {
                let _ = writeln!(
                    out,
                    "- {}: capacity {}, peak in use {}",
                    escape(&a.name, 80),
                    gib(a.capacity_bytes),
                    gib(a.peak_in_use_bytes)
                );
            }
            if let Some(g) = rt.growth_per_execution_bytes {
                let _ = writeln!(out, "- growth per execution: {} bytes", g);
            }
            for g in rt.live_at_last_execution.iter().take(5) {
                let _ = writeln!(
                    out,
                    "- live at last execution: {} — {}",
                    mib(g.bytes),
                    escape(&super::present::live_origin(&g.origin), 160)
                );
            }
            out.push('\n');
        }
        for n in &h.notes {
            let _ = writeln!(out, "> {}\n", escape(&n.text, 600));
        }
        let _ = writeln!(out, "### Diagnosis\n");
        for d in &h.diagnosis {
            let _ = write!(
                out,
                "- **{}** ({}): {}",
                d.id.as_str(),
                d.label.as_str(),
                escape(&d.text, 800)
            );
            if let Some(fix) = &d.fix {
                let _ = write!(out, " — *fix:* {}", escape(fix, 800));
            }
            if let Some(s) = d.saving_bytes {
                let _ = write!(out, " — saves ~{} (estimated)", mib(s));
            }
            if let Some(f) = d.fits_after {
                let _ = write!(
                    out,
                    "{}",
                    if f {
                        ", then fits"
                    } else {
                        ", still does not fit"
                    }
                );
            }
            out.push('\n');
        }
        out.push('\n');
    }
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
