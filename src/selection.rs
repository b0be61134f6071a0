//! Which module the report is about, and what — if anything — says memory ran out
//! there. A module is only said to be where memory ran out when something corroborates
//! it: the pasted error's failed request is part of its plan, the allocator waited for
//! memory (`AllocatorRetry`) in its last launch, or what was in use when that launch
//! started plus what the launch allocates exceeds the pool. A launch without kernels
//! alone proves nothing: device traces are often cut short.

use crate::diagnosis::error_text::RequestMatch;
use crate::error::Error;
use crate::report::model::{HostReport, ModuleReport};
use crate::runtime::scan::{ExecutionRecord, RuntimeScan};
use crate::runtime::LaunchLabels;
use crate::units::size;

/// What says memory ran out in the selected module.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The pasted error's failed request is this part of the module's plan.
    PastedRequest(RequestMatch),
    /// Its last launch waited for memory (`AllocatorRetry`) and launched no kernel.
    AllocatorRetry,
    /// Its last launch launched no kernel, and what was in use at its start plus what
    /// it allocates (its plan less its arguments) exceeds the pool.
    NoRoom {
        in_use: u64,
        adds: u64,
        capacity: u64,
    },
}

/// The module the report is about, why, and what says it ran out there.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub module: Option<String>,
    pub reason: String,
    pub failure: Option<Failure>,
}

impl Selection {
    fn of(module: &str, reason: impl Into<String>, failure: Option<Failure>) -> Self {
        Selection {
            module: Some(module.to_owned()),
            reason: reason.into(),
            failure,
        }
    }
}

/// A call of a jitted function at the end of the capture with no launch of its module
/// after it: it never ran, or had not finished when the capture stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct UnfinishedCall {
    pub module: String,
    pub start_ps: i64,
}

/// What selection reads from the runtime scan.
pub struct Launches<'a> {
    pub scan: &'a RuntimeScan,
    /// Each launch's module label (`name(?)` when ambiguous), as `scan.executions`.
    pub labels: &'a LaunchLabels,
    /// The device pool's capacity, when allocator events were recorded.
    pub capacity: Option<u64>,
    /// Bytes in use when each launch started, as `scan.executions`.
    pub in_use_at_start: Vec<Option<u64>>,
}

/// Chooses the module (`docs/diagnosis.md#which-module-the-report-is-about`): the user's choice; the
/// module the pasted error's failed request belongs to; a module whose last launch ran
/// out by the capture's own evidence; the module of a final call that never finished,
/// when it needs more than any module that ran; the largest module that executed.
pub fn select(
    report: &HostReport,
    launches: &Launches<'_>,
    wanted: Option<&str>,
    pasted: Option<&RequestMatch>,
    unfinished: Option<&UnfinishedCall>,
) -> Result<Selection, Error> {
    if let Some(s) = chosen_or_pasted(report, wanted, pasted) {
        return s;
    }
    if let Some(s) = corroborated_failure(report, launches) {
        return Ok(s);
    }
    let largest_executed = report
        .modules
        .iter()
        .filter(|m| m.executions > 0)
        .max_by_key(|m| m.plan.peak_bytes);
    if let Some(call) = unfinished {
        let module = report.modules.iter().find(|m| m.label == call.module);
        let needs_most = |m: &ModuleReport| {
            largest_executed.is_none_or(|l| m.plan.total_bytes > l.plan.total_bytes)
        };
        if let Some(m) = module.filter(|m| needs_most(m)) {
            return Ok(Selection::of(
                &m.label,
                "the capture ends during a call of it that never finished, and it needs more memory than any module that ran; nothing in the capture says why it stopped: give the error message too (paste it in the page, or --error-text) to match it to the plan",
                None,
            ));
        }
    }
    if let Some(m) = largest_executed {
        return Ok(Selection::of(
            &m.label,
            "the largest module that executed in the capture",
            None,
        ));
    }
    Ok(match report.modules.first() {
        Some(m) => Selection::of(
            &m.label,
            "the largest module (no executions recorded)",
            None,
        ),
        None => Selection {
            module: None,
            reason: "the capture holds no module plan".into(),
            failure: None,
        },
    })
}

/// What the module line says when no plan was given at all.
pub const NO_PLAN_GIVEN: &str = "no plan was given: pass the XLA dump (XLA_FLAGS=--xla_dump_to=DIR) or a profiler capture to see which module ran out and what fills it";

/// The module the user chose, else the one the pasted error's failed request belongs
/// to: what outranks every other reason, with a capture or without.
fn chosen_or_pasted(
    report: &HostReport,
    wanted: Option<&str>,
    pasted: Option<&RequestMatch>,
) -> Option<Result<Selection, Error>> {
    if let Some(wanted) = wanted {
        return Some(chosen(report, wanted, pasted));
    }
    let m = pasted?;
    let reason = format!("the failed request in the error message is {}", m.part);
    Some(Ok(Selection::of(
        &m.module,
        reason,
        Some(Failure::PastedRequest(m.clone())),
    )))
}

/// Chooses the module when no capture was given (the plans of an XLA dump, or none):
/// the user's choice; the module the failed request belongs to; the largest module. A
/// dump records no executions, so nothing else says where memory ran out.
pub fn select_from_plans(
    report: &HostReport,
    wanted: Option<&str>,
    pasted: Option<&RequestMatch>,
) -> Result<Selection, Error> {
    if let Some(s) = chosen_or_pasted(report, wanted, pasted) {
        return s;
    }
    Ok(match report.modules.first() {
        Some(m) => Selection::of(
            &m.label,
            "the largest module of the XLA dump (a dump records no executions)",
            None,
        ),
        None => Selection {
            module: None,
            reason: NO_PLAN_GIVEN.into(),
            failure: None,
        },
    })
}

fn chosen(
    report: &HostReport,
    wanted: &str,
    pasted: Option<&RequestMatch>,
) -> Result<Selection, Error> {
    let found = report
        .modules
        .iter()
        .find(|m| m.label == wanted)
        .or_else(|| report.modules.iter().find(|m| m.name == wanted));
    match found {
        Some(m) => {
            let failure = pasted
                .filter(|p| p.module == m.label)
                .map(|p| Failure::PastedRequest(p.clone()));
            Ok(Selection::of(&m.label, "chosen by the user", failure))
        }
        None if report.modules.is_empty() => Err(Error::UnknownModule {
            wanted: wanted.to_owned(),
            available: "none (no plan was given: pass a capture or an XLA dump)".into(),
        }),
        None => Err(Error::UnknownModule {
            wanted: wanted.to_owned(),
            available: report
                .modules
                .iter()
                .map(|m| m.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The last launch of each module, by label, in the order modules first launched.
fn last_launches<'s>(launches: &Launches<'s>) -> Vec<(&'s str, usize)> {
    launches.labels.last_launches()
}

/// A module whose last launch launched no kernel while the capture itself says it ran
/// out: the allocator waited for memory in it, or it could not have fit.
fn corroborated_failure(report: &HostReport, launches: &Launches<'_>) -> Option<Selection> {
    let scan = launches.scan;
    if scan.kernels == 0 && scan.device_events == 0 {
        return None;
    }
    let mut best: Option<(bool, i64, Selection)> = None;
    for (label, i) in last_launches(launches) {
        let Some(e) = scan.executions.get(i).filter(|e| !e.launched_kernels) else {
            continue;
        };
        let Some(module) = report.modules.iter().find(|m| m.label == label) else {
            continue;
        };
        let Some(s) = failure_in(module, e, launches, i) else {
            continue;
        };
        let key = (e.waited_for_memory, e.start_ps);
        if best.as_ref().is_none_or(|(w, t, _)| key > (*w, *t)) {
            best = Some((key.0, key.1, s));
        }
    }
    best.map(|(_, _, s)| s)
}

fn failure_in(
    module: &ModuleReport,
    e: &ExecutionRecord,
    launches: &Launches<'_>,
    index: usize,
) -> Option<Selection> {
    if e.waited_for_memory {
        return Some(Selection::of(
            &module.label,
            "its last execution waited for memory (AllocatorRetry) and launched no kernel: it is where memory ran out",
            Some(Failure::AllocatorRetry),
        ));
    }
    let capacity = launches.capacity?;
    let in_use = launches.in_use_at_start.get(index).copied().flatten()?;
    let adds = module
        .plan
        .total_bytes
        .saturating_sub(module.plan.parameter_bytes);
    if in_use.saturating_add(adds) <= capacity {
        return None;
    }
    Some(Selection::of(
        &module.label,
        format!(
            "its last execution launched no kernel, and the {} in use when it started plus the {} it allocates exceed the {} pool: it is where memory ran out",
            size(in_use),
            size(adds),
            size(capacity)
        ),
        Some(Failure::NoRoom {
            in_use,
            adds,
            capacity,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::ModuleReport;

    fn module(label: &str, total: u64, params: u64, executions: u64) -> ModuleReport {
        let mut m = ModuleReport {
            label: label.into(),
            name: label.split('(').next().unwrap_or(label).into(),
            executions,
            ..Default::default()
        };
        m.plan.total_bytes = total;
        m.plan.peak_bytes = total;
        m.plan.parameter_bytes = params;
        m
    }

    fn launch(start_ps: i64, launched_kernels: bool) -> ExecutionRecord {
        ExecutionRecord {
            start_ps,
            end_ps: start_ps + 1,
            run_id: None,
            module: None,
            program_id: None,
            launched_kernels,
            waited_for_memory: false,
            module_hint: None,
            link: None,
            device_run: None,
        }
    }

    fn report(modules: Vec<ModuleReport>) -> HostReport {
        HostReport {
            modules,
            ..Default::default()
        }
    }

    /// A launch without kernels after launches that ran some is a cut device trace,
    /// not a failure, unless the capture says memory ran out.
    #[test]
    fn a_launch_without_kernels_alone_is_not_where_memory_ran_out() {
        let r = report(vec![module("jit_a(1)", 100, 10, 3)]);
        let mut scan = RuntimeScan::default();
        scan.executions = vec![launch(1, true), launch(2, true), launch(3, false)];
        scan.kernels = 5;
        let labels = LaunchLabels::new([Some("jit_a(1)"); 3]);
        let launches = Launches {
            scan: &scan,
            labels: &labels,
            capacity: Some(1000),
            in_use_at_start: vec![Some(100); 3],
        };
        let s = select(&r, &launches, None, None, None).expect("selects");
        assert_eq!(s.failure, None);
        assert_eq!(s.reason, "the largest module that executed in the capture");

        // What was in use plus what the launch allocates exceeds the pool: it ran out.
        let launches = Launches {
            in_use_at_start: vec![Some(100), Some(100), Some(950)],
            ..launches
        };
        let s = select(&r, &launches, None, None, None).expect("selects");
        assert_eq!(
            s.failure,
            Some(Failure::NoRoom {
                in_use: 950,
                adds: 90,
                capacity: 1000
            })
        );
    }

    /// The pasted error's module wins even when it never launched in the capture.
    #[test]
    fn the_pasted_request_names_the_module() {
        let r = report(vec![
            module("jit_small(8)", 10, 5, 3),
            module("jit_big(6)", 1 << 40, 5, 0),
        ]);
        let scan = RuntimeScan::default();
        let launches = Launches {
            scan: &scan,
            labels: &LaunchLabels::default(),
            capacity: None,
            in_use_at_start: Vec::new(),
        };
        let m = RequestMatch {
            module: "jit_big(6)".into(),
            part: "the temporary block of jit_big(6) (1 MiB)".into(),
            bytes: 1 << 20,
            is_temp_block: true,
            exact: true,
        };
        let s = select(&r, &launches, None, Some(&m), None).expect("selects");
        assert_eq!(s.module.as_deref(), Some("jit_big(6)"));
        assert!(matches!(s.failure, Some(Failure::PastedRequest(_))));
        // Without the error, the unfinished call of the larger module is chosen, with
        // no claim about why it did not finish.
        let call = UnfinishedCall {
            module: "jit_big(6)".into(),
            start_ps: 5,
        };
        let s = select(&r, &launches, None, None, Some(&call)).expect("selects");
        assert_eq!(s.module.as_deref(), Some("jit_big(6)"));
        assert_eq!(s.failure, None);
        assert!(s.reason.contains("never finished"), "{}", s.reason);
    }
}
