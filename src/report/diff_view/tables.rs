//! The comparison's tables, laid out: the plan's figures and roles side by side, the
//! buffers that changed, the program-order series, and the runtime figures.

use super::{ProgramOrder, RoleBar, RoleBars, Series};
use crate::diff::model::{signed_delta, BufferChange, Change, Diff, Figures, RuntimeDelta};
use crate::report::model::{Label, Plan, Role};
use crate::report::present::{self, percent_change};
use crate::report::view::{column, role_shares, roles_sentence, Cell, Column, Table};
use crate::units::{signed_size, size, thousands};

fn figures_row(name: &str, before: u64, after: u64) -> Vec<Cell> {
    vec![
        Cell::new(name),
        Cell::bytes(before),
        Cell::bytes(after),
        Cell::delta(signed_delta(before, after)),
        Cell::new(percent_change(before, after)),
    ]
}

fn change_columns(first: &'static str) -> Vec<Column> {
    vec![
        column(first, false),
        column("before", true),
        column("after", true),
        column("change", true),
        column("%", true),
    ]
}

pub(super) fn plan(b: &Plan, a: &Plan) -> Table {
    let rows = vec![
        figures_row("parameters", b.argument_bytes, a.argument_bytes),
        figures_row("donated", b.donated_bytes, a.donated_bytes),
        figures_row("outputs", b.output_bytes, a.output_bytes),
        figures_row("aliased", b.alias_bytes, a.alias_bytes),
        figures_row("temporary block", b.temp_bytes, a.temp_bytes),
        figures_row("needs", b.total_bytes, a.total_bytes),
        figures_row("heap peak", b.heap_peak_bytes, a.heap_peak_bytes),
        figures_row("peak", b.peak_bytes, a.peak_bytes),
    ];
    Table {
        title: "Plan (read)".into(),
        label: Label::Read,
        columns: change_columns(""),
        rows,
        more: None,
        marks: Vec::new(),
    }
}

pub(super) fn roles(b: &Plan, a: &Plan) -> Table {
    let share = |p: &Plan, role: Role| {
        let bytes = p.roles_at_peak.get(role);
        let heap = p.roles_at_peak.total().max(1);
        format!(
            "{} ({:.1}%)",
            size(bytes),
            100.0 * bytes as f64 / heap as f64
        )
    };
    let rows = [Role::Forward, Role::Backward, Role::Workspace, Role::Other]
        .into_iter()
        .map(|role| {
            let (x, y) = (b.roles_at_peak.get(role), a.roles_at_peak.get(role));
            vec![
                Cell::new(present::role_words(role)),
                Cell::new(share(b, role)),
                Cell::new(share(a, role)),
                Cell::delta(signed_delta(x, y)),
                Cell::new(percent_change(x, y)),
            ]
        })
        .collect();
    Table {
        title: "At the heap peak, by role (read)".into(),
        label: Label::Read,
        columns: change_columns("role"),
        rows,
        more: None,
        marks: Vec::new(),
    }
}

fn role_bar(p: &Plan, side: &'static str) -> RoleBar {
    let roles = role_shares(p);
    RoleBar {
        side,
        bytes: p.roles_at_peak.total(),
        shown: size(p.roles_at_peak.total()),
        sentence: roles_sentence(&roles),
        roles,
    }
}

pub(super) fn role_bars(b: &Plan, a: &Plan) -> RoleBars {
    RoleBars {
        title: "At the heap peak, by role (read)".into(),
        before: role_bar(b, "before"),
        after: role_bar(a, "after"),
    }
}

fn series(p: &Plan, side: &'static str, module: &Option<String>) -> Series {
    let peak_index =
        (!p.timeline.is_empty()).then(|| p.timeline_peak_index.min(p.timeline.len() - 1));
    let peak = peak_index.map(|i| p.timeline[i].bytes).unwrap_or(0);
    Series {
        side,
        module: module.clone().unwrap_or_else(|| "none".into()),
        points: p.timeline.clone(),
        peak_index,
        peak: format!("peak {}", size(peak)),
    }
}

pub(super) fn program_order(d: &Diff, b: &Plan, a: &Plan) -> Option<ProgramOrder> {
    if b.timeline.is_empty() && a.timeline.is_empty() {
        return None;
    }
    let before = series(b, "before", &d.before.module);
    let after = series(a, "after", &d.after.module);
    let words = |s: &Series| match s.peak_index {
        Some(i) => format!(
            "{}: {} at point {} of {}",
            s.side,
            s.peak,
            thousands((i + 1) as u64),
            thousands(s.points.len() as u64)
        ),
        None => format!("{}: no heap-simulator trace", s.side),
    };
    let pool = d
        .headline
        .pool_bytes
        .zip(d.headline.pool_label)
        .map(|(bytes, label)| format!("pool {} ({})", present::size(bytes), label.as_str()));
    Some(ProgramOrder {
        title: "Memory along program order (read)".into(),
        sentence: format!("{}; {}", words(&before), words(&after)),
        before,
        after,
        pool_bytes: d.headline.pool_bytes,
        pool,
    })
}

fn changed(r: &BufferChange) -> bool {
    r.change != Change::Unchanged
}

pub(super) fn buffers(rows: &[BufferChange], top: usize) -> Option<Table> {
    let changed_rows: Vec<&BufferChange> = rows.iter().filter(|r| changed(r)).collect();
    if changed_rows.is_empty() && rows.is_empty() {
        return None;
    }
    let listed = changed_rows
        .iter()
        .take(top)
        .map(|r| {
            let short = present::short_source(&r.source);
            let shape = match &r.shape_after {
                Some(after) => format!("{} → {after}", r.shape),
                None => r.shape.clone(),
            };
            let instruction = match (&r.instruction_before, &r.instruction_after) {
                (Some(b), Some(a)) if b != a => format!("{b} → {a}"),
                (Some(x), _) | (None, Some(x)) => x.clone(),
                (None, None) => String::new(),
            };
            vec![
                Cell::delta(r.delta_bytes),
                Cell::bytes(r.before_bytes),
                Cell::bytes(r.after_bytes),
                Cell::new(present::change_words(r.change)),
                Cell::new(shape),
                Cell::new(present::role_name(r.role)),
                Cell {
                    text: short.to_owned(),
                    full: (short != r.source).then(|| r.source.clone()),
                },
                Cell::new(instruction),
                Cell::new(r.op_name.clone()),
            ]
        })
        .collect();
    let mut more: Vec<String> = Vec::new();
    if changed_rows.len() > top {
        let rest: i64 = changed_rows
            .iter()
            .skip(top)
            .map(|r| r.delta_bytes)
            .fold(0, i64::saturating_add);
        let n = changed_rows.len() - top;
        more.push(format!(
            "… {n} more changed {}, {}",
            if n == 1 { "buffer" } else { "buffers" },
            signed_size(rest)
        ));
    }
    let unchanged: Vec<&BufferChange> = rows.iter().filter(|r| !changed(r)).collect();
    if !unchanged.is_empty() {
        let bytes = unchanged
            .iter()
            .map(|r| r.after_bytes)
            .fold(0, u64::saturating_add);
        more.push(format!(
            "{} {} unchanged, {}",
            unchanged.len(),
            if unchanged.len() == 1 {
                "buffer"
            } else {
                "buffers"
            },
            size(bytes)
        ));
    }
    Some(Table {
        title: "Buffers live at the peak (read), largest change first".into(),
        label: Label::Read,
        columns: vec![
            column("change", true),
            column("before", true),
            column("after", true),
            column("", false),
            column("shape", false),
            column("role", false),
            column("source", false),
            column("instruction", false),
            column("op_name", false),
        ],
        rows: listed,
        more: (!more.is_empty()).then(|| more.join("; ")),
        marks: Vec::new(),
    })
}

fn runtime_row(name: &str, f: Figures) -> Vec<Cell> {
    figures_row(name, f.before, f.after)
}

pub(super) fn runtime(r: &RuntimeDelta) -> Table {
    let pool = if r.allocator_before == r.allocator_after {
        r.allocator_before.clone()
    } else {
        format!("{} → {}", r.allocator_before, r.allocator_after)
    };
    let mut rows = vec![
        runtime_row("capacity", r.capacity_bytes),
        runtime_row("peak in use", r.peak_in_use_bytes),
    ];
    if let Some(last) = r.in_use_at_last_start_bytes {
        rows.push(runtime_row("in use at the last start", last));
    }
    let growth = |g: Option<i64>| g.map(signed_size).unwrap_or_else(|| "—".into());
    rows.push(vec![
        Cell::new("growth per execution"),
        Cell::new(growth(r.growth_per_execution_before)),
        Cell::new(growth(r.growth_per_execution_after)),
        Cell::new(
            match (r.growth_per_execution_before, r.growth_per_execution_after) {
                (Some(b), Some(a)) => signed_size(a.saturating_sub(b)),
                _ => "—".into(),
            },
        ),
        Cell::new(""),
    ]);
    rows.push(vec![
        Cell::new("AllocatorRetry waits"),
        Cell::new(format!(
            "{} ({:.2} s)",
            r.retry_count.before,
            r.retry_total_ns_before / 1e9
        )),
        Cell::new(format!(
            "{} ({:.2} s)",
            r.retry_count.after,
            r.retry_total_ns_after / 1e9
        )),
        Cell::new(format!("{:+}", r.retry_count.delta)),
        Cell::new(""),
    ]);
    rows.push(vec![
        Cell::new("executions"),
        Cell::new(r.executions.before.to_string()),
        Cell::new(r.executions.after.to_string()),
        Cell::new(format!("{:+}", r.executions.delta)),
        Cell::new(""),
    ]);
    Table {
        title: format!("Runtime (measured), pool {pool}"),
        label: Label::Measured,
        columns: change_columns(""),
        rows,
        more: None,
        marks: Vec::new(),
    }
}
