//! The arrays live at the selected module's last launch, grouped by who allocated
//! them (a module's outputs, a transfer, memory held from before the history kept),
//! with the launch's own arguments matched among them.

use std::collections::HashMap;

use super::labels::LaunchLabels;
use super::records::{Origin, RuntimeScan};
use super::summary::SelectedPlan;
use crate::report::model::{LiveGroup, LiveOrigin};
use crate::report::present;

/// A live allocation at the last launch: bytes, requested bytes, who allocated it.
#[derive(Clone, Copy)]
struct Live {
    size: u64,
    requested: u64,
    origin: Origin,
}

/// The group a live allocation belongs to: a module's outputs (all its launches
/// together), a transfer (by event and the user's frame), or neither.
#[derive(Clone, PartialEq, Eq, Hash)]
enum GroupKey {
    Outputs(String),
    Transfer(u32),
    Outside,
}

/// What a pool held at an instant: its arrays, and what the runtime reserved for itself
/// (on TPU, the running programs' stack and scratch).
#[derive(Clone, Copy)]
pub(super) struct InUse {
    pub arrays: u64,
    pub reserved: u64,
}

/// The groups of memory in use in `allocator` at `at` (the start of the selected
/// module's last launch), largest first, adding up to `in_use` when it is known: the
/// arrays by who allocated them (what the history kept does not account for was
/// allocated before it), and the runtime's reservation. The launch's arguments are
/// matched among the arrays (`input_bytes`).
pub(super) fn live_groups(
    scan: &RuntimeScan,
    labels: &LaunchLabels,
    ordinals: &[usize],
    allocator: u16,
    at: i64,
    in_use: Option<InUse>,
    plan: &SelectedPlan<'_>,
) -> Vec<LiveGroup> {
    let live = live_at(scan, allocator, at);
    let known: u64 = live
        .iter()
        .map(|(_, l)| l.size)
        .fold(0, u64::saturating_add);
    let before = in_use.map_or(0, |u| u.arrays).saturating_sub(known);
    let (input, absorbed_before) = match_arguments(&live, labels, plan, before);
    let mut out = groups(scan, &live, &input, labels, ordinals);
    if before > 0 {
        out.push(LiveGroup {
            origin: LiveOrigin::BeforeCapture {
                history_from_ps: scan.records_dropped_through_ps,
            },
            bytes: before,
            count: 0,
            input_bytes: absorbed_before,
        });
    }
    if let Some(reserved) = in_use.map(|u| u.reserved).filter(|&r| r > 0) {
        out.push(LiveGroup {
            origin: LiveOrigin::RuntimeReserved,
            bytes: reserved,
            count: 0,
            input_bytes: 0,
        });
    }
    // Ties in the order the sentences sort in, so the order does not depend on hashing.
    out.sort_by_cached_key(|g| (std::cmp::Reverse(g.bytes), present::live_origin(&g.origin)));
    out
}

/// The allocations of `allocator` live just before `at`, by address (oldest address
/// first, so that matching and listing are deterministic).
fn live_at(scan: &RuntimeScan, allocator: u16, at: i64) -> Vec<(u64, Live)> {
    let mut live: HashMap<u64, Live> = HashMap::new();
    for r in scan
        .records
        .iter()
        .take_while(|r| r.time_ps < at)
        .filter(|r| r.allocator == allocator)
    {
        if r.is_allocation {
            live.insert(
                r.addr,
                Live {
                    size: r.size,
                    requested: r.requested,
                    origin: r.origin,
                },
            );
        } else {
            live.remove(&r.addr);
        }
    }
    let mut live: Vec<(u64, Live)> = live.into_iter().collect();
    live.sort_by_key(|(addr, _)| *addr);
    live
}

/// The group of a live allocation: the outputs of its launch's module, its transfer,
/// or neither.
fn group_key(labels: &LaunchLabels, live: &Live) -> GroupKey {
    match live.origin {
        Origin::Execution(i) => GroupKey::Outputs(labels.shown(i as usize).to_owned()),
        Origin::Transfer(t) => GroupKey::Transfer(t),
        // A history is settled before it is read (`RuntimeScan::settle_origins`): no
        // launch by number is left.
        Origin::Unknown | Origin::Run(_) | Origin::Launch(_) => GroupKey::Outside,
    }
}

/// Whether a live allocation can hold a parameter of `bytes`: its requested size when
/// known, else its chunk, rounded up by the allocator by less than 256 bytes.
fn holds(live: &Live, bytes: u64) -> bool {
    if live.requested > 0 {
        live.requested == bytes
    } else {
        bytes <= live.size && live.size < bytes.saturating_add(256).max(bytes + 1)
    }
}

/// The last launch's arguments are live at its start: its parameter sizes matched to
/// live arrays — first arrays that are not its own earlier outputs (a transfer, an init
/// step's outputs), then memory held from before the history (`before` bytes), then
/// its own earlier outputs (state it returned and gets back, when not donated).
/// Returns which live arrays are arguments, and the bytes of `before` that are.
fn match_arguments(
    live: &[(u64, Live)],
    labels: &LaunchLabels,
    plan: &SelectedPlan<'_>,
    before: u64,
) -> (Vec<bool>, u64) {
    let selected_outputs = plan.label.map(|l| GroupKey::Outputs(l.to_owned()));
    let mut wanted: Vec<u64> = plan.parameter_sizes.clone();
    let mut input = vec![false; live.len()];
    let mut absorbed_before = 0u64;
    for own in [false, true] {
        for (k, (_, l)) in live.iter().enumerate() {
            if input[k] || (Some(group_key(labels, l)) == selected_outputs) != own {
                continue;
            }
            if let Some(pos) = wanted.iter().position(|&p| holds(l, p)) {
                wanted.swap_remove(pos);
                input[k] = true;
            }
        }
        if !own {
            // Memory from before the capture can hold the rest; keep what it cannot
            // for the module's own outputs.
            let mut left = before;
            wanted.retain(|&p| {
                if p <= left {
                    left -= p;
                    false
                } else {
                    true
                }
            });
            absorbed_before = before - left;
        }
    }
    (input, absorbed_before)
}

/// What one group holds: bytes, allocations, bytes that are arguments, and the
/// numbers of the launches (of its module) that made them.
#[derive(Default)]
struct Group {
    bytes: u64,
    count: u64,
    input_bytes: u64,
    launches: Vec<usize>,
}

/// The live arrays grouped by who allocated them (`input`: which are arguments).
fn groups(
    scan: &RuntimeScan,
    live: &[(u64, Live)],
    input: &[bool],
    labels: &LaunchLabels,
    ordinals: &[usize],
) -> Vec<LiveGroup> {
    let mut groups: HashMap<GroupKey, Group> = HashMap::new();
    for (k, (_, l)) in live.iter().enumerate() {
        let g = groups.entry(group_key(labels, l)).or_default();
        g.bytes = g.bytes.saturating_add(l.size);
        g.count += 1;
        if input[k] {
            g.input_bytes = g.input_bytes.saturating_add(l.size);
        }
        if let Origin::Execution(i) = l.origin {
            let n = ordinals.get(i as usize).copied().unwrap_or(0);
            if !g.launches.contains(&n) {
                g.launches.push(n);
            }
        }
    }
    groups
        .into_iter()
        .map(|(key, g)| LiveGroup {
            origin: match key {
                GroupKey::Outputs(module) => LiveOrigin::Outputs {
                    module,
                    executions: g.launches,
                },
                GroupKey::Transfer(t) => {
                    let (event, frame) = scan
                        .transfers
                        .get(t as usize)
                        .cloned()
                        .unwrap_or_else(|| ("transfer".into(), None));
                    LiveOrigin::Transfer { event, frame }
                }
                GroupKey::Outside => LiveOrigin::Other,
            },
            bytes: g.bytes,
            count: g.count,
            input_bytes: g.input_bytes,
        })
        .collect()
}
