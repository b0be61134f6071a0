//! The presentation layer: the words, titles, units and sentences every renderer
//! shares (text, Markdown, JSON strings, and the page through the engine), so that the
//! CLI and the page say the same thing the same way.

use super::model::{Category, DiagnosisId, Label, LiveOrigin, Role};

/// How many entries each list shows; the rest are counted.
pub mod limits {
    /// Modules in the module table.
    pub const MODULES: usize = 12;
    /// Allocators in the runtime section (the device pools lead).
    pub const ALLOCATORS: usize = 4;
    /// Groups of arrays live at the last execution.
    pub const LIVE_GROUPS: usize = 8;
    /// Host events between the last two executions.
    pub const HOST_EVENTS: usize = 8;
    /// `AllocatorRetry` waits listed, the longest first.
    pub const WAITS: usize = 3;
    /// In-use figures shown at each end of a long list of execution starts.
    pub const IN_USE_EDGE: usize = 3;
    /// Live buffers at the peak, unless the reader asks for another number.
    pub const LIVE_BUFFERS: usize = 10;
    /// Executions the page lists (the latest), of those the report keeps.
    pub const EXECUTIONS: usize = 1000;
}

/// What a label says about where a figure comes from (the page's label tooltips).
pub fn label_meaning(label: Label) -> &'static str {
    match label {
        Label::Measured => "measured: from runtime events (allocator, executions)",
        Label::Read => "read: from the compiled plan in the capture",
        Label::Estimated => "estimated: derived by oomlens",
    }
}

/// The title every renderer gives a diagnosis line.
pub fn title(id: DiagnosisId) -> &'static str {
    match id {
        DiagnosisId::PlanExceedsCapacity => "The step does not fit",
        DiagnosisId::RoleForward => "Mostly forward activations, kept for backward",
        DiagnosisId::RoleBackward => "Mostly backward: gradients and their temporaries",
        DiagnosisId::RoleWorkspace => "Library workspace",
        DiagnosisId::NoDonation => "No donated parameters",
        DiagnosisId::XlaRemat => "XLA already rematerialized",
        DiagnosisId::ScanStack => "Scan stack",
        DiagnosisId::DebugCallback => "Host callbacks in the step",
        DiagnosisId::LargeReplicated => "One buffer takes over half the pool",
        DiagnosisId::TpuPadding => "Layout padding",
        DiagnosisId::HostOffload => "Host offload",
        DiagnosisId::GrowthPerExecution => "Memory grows every execution: a leak",
        DiagnosisId::OtherLiveArrays => "Other live arrays take space",
        DiagnosisId::AllocatorRetry => "The allocator waited for memory",
        DiagnosisId::MemFractionSet => "A memory fraction was set",
        DiagnosisId::NoAllocatorEvents => "No allocator events",
        DiagnosisId::NoPlanInCapture => "No compiled plan in the capture",
    }
}

/// What a role means, in the words every renderer uses.
pub fn role_words(role: Role) -> &'static str {
    match role {
        Role::Forward => "forward, kept for backward",
        Role::Backward => "backward",
        Role::Workspace => "library workspace",
        Role::Other => "other",
    }
}

/// The role's one-word name, as tables and the JSON write it.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Forward => "forward",
        Role::Backward => "backward",
        Role::Workspace => "workspace",
        Role::Other => "other",
    }
}

/// The role as the one-line split of the heap names it (`forward-kept 89.4% · …`).
pub fn role_short(role: Role) -> &'static str {
    match role {
        Role::Forward => "forward-kept",
        other => role_name(other),
    }
}

/// How a buffer's allocation lives, as tables and the JSON write it.
pub fn category(category: Category) -> &'static str {
    match category {
        Category::Parameter => "parameter",
        Category::Output => "output",
        Category::ThreadLocal => "thread-local",
        Category::Constant => "constant",
        Category::Temporary => "temporary",
    }
}

/// `file.py:123` from a full `path/to/file.py:123`: source lines are shown by file
/// name everywhere; the full path is kept for a tooltip or a copy.
pub fn short_source(source: &str) -> &str {
    match source.rsplit_once('/') {
        Some((_, tail)) => tail,
        None => source,
    }
}

/// `1.25 s`, `3.400 ms`, `120.0 µs`, `80 ns`: a time span or a time since the capture
/// started, in the unit that suits it.
pub fn duration(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{} ns", ns.round())
    }
}

/// `1–9`, `1, 3, 5–7`: execution numbers, compressed; past eight runs, the first six
/// and the last.
pub fn ranges(numbers: &mut [usize]) -> String {
    numbers.sort_unstable();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}–{}", numbers[i], numbers[j])
        } else if j == i + 1 {
            format!("{}, {}", numbers[i], numbers[j])
        } else {
            numbers[i].to_string()
        });
        i = j + 1;
    }
    if parts.len() > 8 {
        let last = parts.last().cloned().unwrap_or_default();
        parts.truncate(6);
        parts.push(format!("… {last} ({} executions)", numbers.len()));
    }
    parts.join(", ")
}

/// `execution 3` or `executions 1–4`.
pub fn executions(numbers: &[usize]) -> String {
    match numbers {
        [one] => format!("execution {one}"),
        _ => format!("executions {}", ranges(&mut numbers.to_vec())),
    }
}

/// The sentence for who allocated a live group.
pub fn live_origin(origin: &LiveOrigin) -> String {
    match origin {
        LiveOrigin::Outputs {
            module,
            executions: numbers,
        } => {
            format!("output of {module} {}", executions(numbers))
        }
        LiveOrigin::Transfer { event, frame } => match frame {
            Some(frame) => format!("host-to-device transfer ({event} in {frame})"),
            None => format!("host-to-device transfer ({event})"),
        },
        LiveOrigin::BeforeCapture {
            history_from_ps: None,
        } => "allocated before the capture started".into(),
        LiveOrigin::BeforeCapture {
            history_from_ps: Some(t),
        } => format!(
            "allocated before {:.3} s (older allocator events are not kept)",
            *t as f64 / 1e12
        ),
        LiveOrigin::Other => "allocated outside any launch or transfer".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execution_numbers_are_compressed() {
        assert_eq!(ranges(&mut [3, 1, 2, 5, 7, 8]), "1–3, 5, 7, 8");
        let mut many: Vec<usize> = (1..=40).step_by(2).collect();
        let text = ranges(&mut many);
        assert!(text.ends_with("… 39 (20 executions)"), "{text}");
        assert_eq!(executions(&[4]), "execution 4");
    }

    #[test]
    fn durations_take_the_unit_that_suits_them() {
        assert_eq!(duration(1.25e9), "1.25 s");
        assert_eq!(duration(3.4e6), "3.400 ms");
        assert_eq!(duration(120e3), "120.0 µs");
        assert_eq!(duration(80.4), "80 ns");
        assert_eq!(duration(0.0), "0 ns");
    }
}
