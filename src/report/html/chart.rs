//! The page's two charts as inline SVG: memory along program order (the area under
//! the series, the bytes axis, the capacity line and the peak) and the heap's split by
//! role. Pixels from bytes is the only arithmetic; every word and figure is the view's.

use std::fmt::Write;

use super::esc;
use crate::report::model::Role;
use crate::report::view::{MemoryChart, RoleShare};

// Chart geometry, in the SVG's own units (it scales to the page's width).
const CHART_W: f64 = 720.0;
const CHART_H: f64 = 240.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 18.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 34.0;
const LINE: &str = "#2457c5";
const FILL: &str = "rgba(36,87,197,0.14)";
const GRID: &str = "#e6e8eb";
const INK: &str = "#5c6370";
const CAPACITY: &str = "#b3261e";

fn role_colour(role: Role) -> &'static str {
    match role {
        Role::Forward => "#3b6fd4",
        Role::Backward => "#d9582b",
        Role::Workspace => "#8c5bc7",
        Role::Other => "#8f969e",
    }
}

/// Memory along program order: the area under the series, the bytes axis with its
/// marks, the capacity line and the peak, as the page draws it.
pub(super) fn memory_chart(out: &mut String, c: &MemoryChart) {
    let at = ChartScale::of(c);
    let (plot_w, x, y) = (at.plot_w, |i| at.x(i), |b| at.y(b));
    let summary = esc(&c.summary, 600);
    line!(out, "<figure class=\"chart\">");
    line!(
        out,
        "<svg viewBox=\"0 0 {CHART_W} {CHART_H}\" role=\"img\" aria-label=\"{summary}\" font-size=\"11\" fill=\"{INK}\"><title>{summary}</title>"
    );
    for t in &c.ticks {
        let yy = y(t.bytes);
        line!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"{GRID}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT + plot_w,
            LEFT - 6.0,
            yy + 4.0,
            esc(&t.shown, 40)
        );
    }
    let base = at.base();
    line!(
        out,
        "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{base:.1}\" y2=\"{base:.1}\" stroke=\"{INK}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + plot_w,
        LEFT + plot_w / 2.0,
        CHART_H - 6.0,
        esc(c.axis, 200)
    );
    chart_heap(out, c, &at);
    chart_capacity(out, c, &at);
    if let Some(&b) = c.points.get(c.peak_index) {
        let (px, py) = (x(c.peak_index), y(b));
        let anchor = if px > LEFT + plot_w * 0.8 {
            "end"
        } else if px < LEFT + plot_w * 0.2 {
            "start"
        } else {
            "middle"
        };
        line!(
            out,
            "<circle cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"4.5\" fill=\"{CAPACITY}\"/><text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\" font-weight=\"bold\" fill=\"#1d1f23\">{}</text>",
            (py - 9.0).max(12.0),
            esc(&c.peak, 100)
        );
    }
    out.push_str("</svg>\n");
    let peak_at = if c.peak_instruction.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"muted\">at</span> <code>{}</code>",
            esc(&c.peak_instruction, 400)
        )
    };
    line!(
        out,
        "<figcaption>{} — {}{peak_at}</figcaption>\n</figure>",
        esc(c.title, 200),
        esc(&c.peak, 100)
    );
}

/// Where a memory chart puts its points: the i-th of them along the plot's width, and
/// bytes up its height (the chart's top figure at the top).
struct ChartScale {
    n: usize,
    top: f64,
    plot_w: f64,
    plot_h: f64,
}

impl ChartScale {
    fn of(c: &MemoryChart) -> Self {
        ChartScale {
            n: c.points.len(),
            top: c.top_bytes.max(1) as f64,
            plot_w: CHART_W - LEFT - RIGHT,
            plot_h: CHART_H - TOP - BOTTOM,
        }
    }

    fn x(&self, i: usize) -> f64 {
        if self.n > 1 {
            LEFT + i as f64 / (self.n - 1) as f64 * self.plot_w
        } else {
            LEFT + self.plot_w / 2.0
        }
    }

    fn y(&self, b: u64) -> f64 {
        TOP + self.plot_h - (b as f64 / self.top).min(1.0) * self.plot_h
    }

    /// The plot's base line.
    fn base(&self) -> f64 {
        TOP + self.plot_h
    }
}

/// The heap along program order: the area under it, and its line.
fn chart_heap(out: &mut String, c: &MemoryChart, at: &ChartScale) {
    let n = c.points.len();
    if n == 0 {
        return;
    }
    let base = at.base();
    let mut d = String::with_capacity(n * 14);
    for (i, &b) in c.points.iter().enumerate() {
        let _ = write!(
            d,
            "{}{:.1},{:.1}",
            if i == 0 { 'M' } else { 'L' },
            at.x(i),
            at.y(b)
        );
    }
    line!(
        out,
        "<path d=\"{d}L{:.1},{base:.1}L{:.1},{base:.1}Z\" fill=\"{FILL}\" stroke=\"none\"/>",
        at.x(n - 1),
        at.x(0)
    );
    line!(
        out,
        "<path d=\"{d}\" fill=\"none\" stroke=\"{LINE}\" stroke-width=\"1.5\"/>"
    );
}

/// The device's capacity as a dashed line, or the note saying why there is none.
fn chart_capacity(out: &mut String, c: &MemoryChart, at: &ChartScale) {
    let plot_w = at.plot_w;
    if let Some(cap) = &c.capacity {
        let yy = at.y(cap.bytes);
        line!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"{CAPACITY}\" stroke-dasharray=\"6 4\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{CAPACITY}\">{}</text>",
            LEFT + plot_w,
            LEFT + plot_w - 4.0,
            yy - 5.0,
            esc(&cap.shown, 200)
        );
    } else if let Some(note) = &c.capacity_note {
        line!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"{CAPACITY}\">{}</text>",
            LEFT + plot_w - 4.0,
            TOP - 8.0,
            esc(note, 200)
        );
    }
}

/// The heap at its peak by role: one stacked bar, and its legend.
pub(super) fn role_bar(out: &mut String, roles: &[RoleShare], sentence: &str) {
    let total: f64 = roles.iter().map(|r| r.bytes as f64).sum();
    line!(
        out,
        "<svg class=\"bar\" viewBox=\"0 0 {CHART_W} 22\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"{}\">",
        esc(sentence, 400)
    );
    let mut x = 0.0;
    for r in roles {
        let w = if total > 0.0 {
            r.bytes as f64 / total * CHART_W
        } else {
            0.0
        };
        if w > 0.0 {
            line!(
                out,
                "<rect x=\"{x:.1}\" y=\"2\" width=\"{w:.1}\" height=\"18\" fill=\"{}\"><title>{}: {}</title></rect>",
                role_colour(r.role),
                esc(r.words, 100),
                esc(&r.shown, 100)
            );
        }
        x += w;
    }
    out.push_str("</svg>\n<ul class=\"roles\">\n");
    for r in roles {
        line!(
            out,
            "<li><span class=\"swatch\" style=\"background:{}\"></span>{} {} ({})</li>",
            role_colour(r.role),
            esc(r.words, 100),
            esc(&r.percent, 20),
            esc(&r.shown, 100)
        );
    }
    out.push_str("</ul>\n");
}
