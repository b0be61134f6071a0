//! The plan section: its figures, the memory chart, the role split, the live buffers
//! and the modules table.

use super::*;

pub(super) fn plan(p: &Plan, capacity: Option<u64>, source: Option<PlanFrom>) -> PlanView {
    let rows = vec![
        row(
            "parameters",
            size(p.argument_bytes),
            format!(
                "{} arrays, {} donated = {}",
                p.parameter_count,
                p.donated_parameter_count,
                size(p.donated_bytes)
            ),
        ),
        row(
            "outputs",
            size(p.output_bytes),
            format!("{} not aliased to a parameter", size(p.non_aliased_output_bytes)),
        ),
        row("temporary block", size(p.temp_bytes), ""),
        row("aliased", size(p.alias_bytes), ""),
        row(
            "needs",
            size(p.total_bytes),
            "parameters + outputs + temporary − aliased",
        ),
        row(
            "heap peak",
            size(p.heap_peak_bytes),
            "temporary buffers at their peak",
        ),
        row(
            "peak",
            size(p.peak_bytes),
            format!(
                "heap peak + memory held for the whole program, as XProf's Memory Viewer; {} with fragmentation",
                size(p.allocation_bytes)
            ),
        ),
    ];
    let roles = role_shares(p);
    let roles_sentence = roles_sentence(&roles);
    let host = p.host_bytes();
    PlanView {
        rows,
        roles,
        roles_sentence,
        padding: format!(
            "padding {} · rematerialized instructions {}",
            size(p.padding_bytes),
            p.remat_instructions
        ),
        host_memory: (host > 0).then(|| {
            format!(
                "parameters {}, outputs {}, temporary {}",
                size(p.host_argument_bytes),
                size(p.host_output_bytes),
                size(p.host_temp_bytes)
            )
        }),
        scan_stacks: p
            .scan_stacks
            .iter()
            .map(|s| {
                let at = if s.source.is_empty() {
                    String::new()
                } else {
                    format!(" at {}", present::short_source(&s.source))
                };
                format!(
                    "{} ×{} via {} = {} ({}){at}",
                    s.shape,
                    s.count,
                    s.while_instruction,
                    size(s.bytes),
                    present::role_words(s.role)
                )
            })
            .collect(),
        host_callbacks: p.host_callbacks.clone(),
        note: p.replay_note.clone(),
        chart: memory_chart(p, capacity),
        source: match source {
            Some(PlanFrom::DumpProto) => Some("the XLA dump's HloProto (exact, as a capture's)"),
            Some(PlanFrom::DumpText) => {
                Some("the XLA dump's text files (totals exact, the peak rebuilt)")
            }
            Some(PlanFrom::Capture) | None => None,
        },
    }
}

/// `forward-kept 89.4% · gradients 3.1% · …`: the role split in one line.
pub(crate) fn roles_sentence(roles: &[RoleShare]) -> String {
    roles
        .iter()
        .map(|r| format!("{} {}", r.short, r.percent))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// How far above the highest figure the bytes axis reaches, so that the peak's mark
/// and label fit under the top.
pub(super) const CHART_HEADROOM: f64 = 1.08;
/// A capacity up to this many times the peak is drawn as a line on the scale; a larger
/// one would flatten the series, so it is only named.
pub(super) const CAPACITY_ON_SCALE: f64 = 2.5;
/// About how many steps the bytes axis has.
pub(super) const CHART_TICKS: f64 = 4.0;

pub(super) fn memory_chart(p: &Plan, capacity: Option<u64>) -> Option<MemoryChart> {
    if p.timeline.is_empty() {
        return None;
    }
    let points: Vec<u64> = p.timeline.iter().map(|t| t.bytes).collect();
    let peak_index = p.timeline_peak_index.min(points.len() - 1);
    let max = points.iter().copied().max().unwrap_or(0);
    let capacity = capacity.filter(|&c| c > 0);
    let on_scale = capacity.filter(|&c| c as f64 <= max as f64 * CAPACITY_ON_SCALE);
    let top = (max.max(on_scale.unwrap_or(0)).max(1) as f64 * CHART_HEADROOM).ceil();
    let peak_bytes = points[peak_index];
    let peak_instruction = p.timeline[peak_index].instruction.clone();
    let at = if peak_instruction.is_empty() {
        String::new()
    } else {
        format!(" ({peak_instruction})")
    };
    Some(MemoryChart {
        title: "Memory along program order (read)",
        summary: format!(
            "Memory along program order: {} points, peak {} at point {}{at}",
            thousands(points.len() as u64),
            size(peak_bytes),
            thousands(peak_index as u64 + 1),
        ),
        points,
        peak_index,
        peak: format!("peak {}", size(peak_bytes)),
        peak_instruction,
        top_bytes: top as u64,
        ticks: byte_ticks(top),
        capacity: on_scale.map(|c| Tick {
            bytes: c,
            shown: format!("capacity {} (measured)", size(c)),
        }),
        capacity_note: capacity
            .filter(|_| on_scale.is_none())
            .map(|c| format!("capacity {} (measured) is above the scale", size(c))),
        axis: "program order (heap-simulator events) →",
    })
}

/// Marks from 0 to `top` in steps of 1, 2 or 5 × 10^k of one unit (GiB, MiB, KiB or
/// bytes, the largest of which `top` holds at least 4), each written in that unit with
/// the decimals the step needs (as the page's charts mark them).
pub(super) fn byte_ticks(top: f64) -> Vec<Tick> {
    const UNITS: [(f64, &str); 4] = [
        (1073741824.0, "GiB"),
        (1048576.0, "MiB"),
        (1024.0, "KiB"),
        (1.0, "B"),
    ];
    let unit = UNITS
        .iter()
        .map(|u| u.0)
        .find(|&u| top >= 4.0 * u)
        .unwrap_or(1.0);
    let raw = top / unit / CHART_TICKS;
    let step = if raw > 0.0 {
        let mag = 10f64.powf(raw.log10().floor());
        let f = raw / mag;
        let m = if f <= 1.0 {
            1.0
        } else if f <= 2.0 {
            2.0
        } else if f <= 5.0 {
            5.0
        } else {
            10.0
        };
        (m * mag * unit).max(1.0)
    } else {
        unit
    };
    let (label_unit, name) = UNITS
        .iter()
        .copied()
        .find(|&(u, _)| step >= u)
        .unwrap_or(UNITS[3]);
    let decimals = (-((step / label_unit).log10() + 1e-9).floor()).clamp(0.0, 3.0) as usize;
    let mut ticks = Vec::new();
    let mut v = 0.0;
    while v <= top * 1.0001 && ticks.len() < 12 {
        ticks.push(Tick {
            bytes: v as u64,
            shown: if v == 0.0 {
                "0".into()
            } else {
                format!("{:.*} {name}", decimals, v / label_unit)
            },
        });
        v += step;
    }
    ticks
}

pub(crate) fn role_shares(p: &Plan) -> Vec<RoleShare> {
    let r = p.roles_at_peak;
    let heap = r.total().max(1);
    [Role::Forward, Role::Backward, Role::Workspace, Role::Other]
        .into_iter()
        .map(|role| {
            let bytes = r.get(role);
            RoleShare {
                role,
                words: present::role_words(role),
                short: present::role_short(role),
                bytes,
                shown: size(bytes),
                percent: format!("{:.1}%", 100.0 * bytes as f64 / heap as f64),
            }
        })
        .collect()
}

pub(crate) fn column(name: &'static str, numeric: bool) -> Column {
    Column { name, numeric }
}

pub(super) fn live(p: &Plan, top: usize) -> Option<Table> {
    if p.live_at_peak.is_empty() || top == 0 {
        return None;
    }
    let rows = p
        .live_at_peak
        .iter()
        .take(top)
        .map(|b| {
            let short = present::short_source(&b.source);
            vec![
                Cell::bytes(b.bytes),
                Cell::new(b.shape.clone()),
                Cell::new(present::category(b.category)),
                Cell::new(present::role_name(b.role)),
                Cell {
                    text: short.to_owned(),
                    full: (short != b.source).then(|| b.source.clone()),
                },
                Cell::new(b.name.clone()),
                Cell::new(b.op_name.clone()),
            ]
        })
        .collect();
    let more = (p.live_at_peak.len() > top).then(|| {
        let rest: u64 = p
            .live_at_peak
            .iter()
            .skip(top)
            .map(|b| b.bytes)
            .fold(0, u64::saturating_add);
        format!(
            "… {} more buffers, {}",
            p.live_at_peak.len() - top,
            size(rest)
        )
    });
    Some(Table {
        title: "Live at the peak (read), largest first".into(),
        label: Label::Read,
        columns: vec![
            column("bytes", true),
            column("shape", false),
            column("category", false),
            column("role", false),
            column("source", false),
            column("instruction", false),
            column("op_name", false),
        ],
        rows,
        more,
        marks: Vec::new(),
    })
}

pub(super) fn modules(modules: &[ModuleReport], selected: Option<&str>) -> Option<Table> {
    if modules.len() < 2 {
        return None;
    }
    let sources = modules.iter().any(|m| m.plan_source.is_some());
    let rows = modules
        .iter()
        .take(limits::MODULES)
        .map(|m| {
            let mut row = vec![
                Cell::bytes(m.plan.peak_bytes),
                Cell::bytes(m.plan.temp_bytes),
                Cell::bytes(m.plan.parameter_bytes),
                Cell::new(m.executions.to_string()),
                Cell::new(m.label.clone()),
            ];
            if sources {
                row.push(Cell::new(plan_from(m.plan_source)));
            }
            row
        })
        .collect();
    let mut columns = vec![
        column("peak", true),
        column("temp", true),
        column("params", true),
        column("runs", true),
        column("module", false),
    ];
    if sources {
        columns.push(column("plan", false));
    }
    Some(Table {
        title: "Modules (read; executions measured), largest peak first".into(),
        label: Label::Read,
        columns,
        rows,
        more: (modules.len() > limits::MODULES)
            .then(|| format!("… and {} more", modules.len() - limits::MODULES)),
        marks: modules
            .iter()
            .take(limits::MODULES)
            .map(|m| (Some(m.label.as_str()) == selected).then_some(RowMark::Selected))
            .collect(),
    })
}

/// Where a module's plan was read, in a word.
pub(super) fn plan_from(source: Option<PlanFrom>) -> &'static str {
    match source {
        Some(PlanFrom::Capture) | None => "capture",
        Some(PlanFrom::DumpProto) => "dump (proto)",
        Some(PlanFrom::DumpText) => "dump (text)",
    }
}
