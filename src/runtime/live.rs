//! The arrays live at the selected module's last launch, grouped by who allocated
//! them (a module's outputs, a transfer, memory held from before the history kept),
//! with the launch's own arguments matched among them.

use std::collections::HashMap;

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

pub(super) fn live_groups(
    scan: &RuntimeScan,
    labels: &[Option<String>],
    ordinals: &[usize],
    allocator: u16,
    at: i64,
    allocated: Option<u64>,
    plan: &SelectedPlan<'_>,
) -> Vec<LiveGroup> {
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
    // Oldest first, so matching and listing are deterministic.
    let mut live: Vec<(u64, Live)> = live.into_iter().collect();
    live.sort_by_key(|(addr, _)| *addr);

    let key_of = |l: &Live| -> GroupKey {
        match l.origin {
            Origin::Execution(i) => GroupKey::Outputs(
                labels
                    .get(i as usize)
                    .cloned()
                    .flatten()
                    .unwrap_or_else(|| "?".into()),
            ),
            Origin::Transfer(t) => GroupKey::Transfer(t),
            Origin::Unknown | Origin::Run(_) => GroupKey::Outside,
        }
    };
    let selected_outputs = plan.label.map(|l| GroupKey::Outputs(l.to_owned()));

    // The last launch's arguments are live at its start: match its parameter sizes to
    // live arrays — first arrays that are not its own earlier outputs (a transfer, an
    // init step's outputs), then memory held from before the capture, then its own
    // earlier outputs (state it returned and gets back, when not donated).
    let mut wanted: Vec<u64> = plan.parameter_sizes.clone();
    let mut input = vec![false; live.len()];
    let known: u64 = live
        .iter()
        .map(|(_, l)| l.size)
        .fold(0, u64::saturating_add);
    let before = allocated.unwrap_or(0).saturating_sub(known);
    let mut absorbed_before = 0u64;
    let matches = |l: &Live, p: u64| {
        if l.requested > 0 {
            l.requested == p
        } else {
            p <= l.size && l.size < p.saturating_add(256).max(p + 1)
        }
    };
    for own in [false, true] {
        for (k, (_, l)) in live.iter().enumerate() {
            if input[k] || (Some(key_of(l)) == selected_outputs) != own {
                continue;
            }
            if let Some(pos) = wanted.iter().position(|&p| matches(l, p)) {
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

    let mut groups: HashMap<GroupKey, (u64, u64, u64, Vec<usize>)> = HashMap::new();
    for (k, (_, l)) in live.iter().enumerate() {
        let g = groups.entry(key_of(l)).or_insert((0, 0, 0, Vec::new()));
        g.0 = g.0.saturating_add(l.size);
        g.1 += 1;
        if input[k] {
            g.2 = g.2.saturating_add(l.size);
        }
        if let Origin::Execution(i) = l.origin {
            let n = ordinals.get(i as usize).copied().unwrap_or(0);
            if !g.3.contains(&n) {
                g.3.push(n);
            }
        }
    }
    let mut out: Vec<LiveGroup> = groups
        .into_iter()
        .map(|(key, (bytes, count, input_bytes, launches))| {
            let origin = match key {
                GroupKey::Outputs(module) => LiveOrigin::Outputs {
                    module,
                    executions: launches,
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
            };
            LiveGroup {
                origin,
                bytes,
                count,
                input_bytes,
            }
        })
        .collect();
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
    // Ties in the order the sentences sort in, so the order does not depend on hashing.
    out.sort_by_cached_key(|g| (std::cmp::Reverse(g.bytes), present::live_origin(&g.origin)));
    out
}
