//! Which module of each run is compared. Program ids change from run to run, so
//! modules are matched by name: the one the user names; else the module each report is
//! about when their names agree; else the largest module both runs have.

use super::model::ModuleChoice;
use crate::error::Error;
use crate::report::model::{HostReport, ModuleReport};

/// The modules compared (`None` for a run without a compiled plan) and why.
#[derive(Debug, Clone, Copy)]
pub struct Chosen<'r> {
    pub before: Option<&'r ModuleReport>,
    pub after: Option<&'r ModuleReport>,
    pub choice: ModuleChoice,
}

/// `jit_step` from the label `jit_step(12)`; `None` when `label` is not one.
pub fn name_part(label: &str) -> Option<&str> {
    let open = label.rfind('(')?;
    let id = label.get(open + 1..)?.strip_suffix(')')?;
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .then(|| label.get(..open))
        .flatten()
        .filter(|name| !name.is_empty())
}

fn selected(report: &HostReport) -> Option<&ModuleReport> {
    let label = report.selected_module.as_deref()?;
    report.modules.iter().find(|m| m.label == label)
}

/// The module of that name the report is about, else its largest (modules are listed
/// largest peak first).
fn by_name<'r>(report: &'r HostReport, name: &str) -> Option<&'r ModuleReport> {
    selected(report)
        .filter(|m| m.name == name)
        .or_else(|| report.modules.iter().find(|m| m.name == name))
}

/// The module `wanted` names in a run: by label, else by name, else by the name of
/// the label (its program id is another run's).
fn find<'r>(
    report: &'r HostReport,
    wanted: &str,
    side: &'static str,
) -> Result<&'r ModuleReport, Error> {
    report
        .modules
        .iter()
        .find(|m| m.label == wanted)
        .or_else(|| by_name(report, wanted))
        .or_else(|| name_part(wanted).and_then(|name| by_name(report, name)))
        .ok_or_else(|| Error::UnknownModuleIn {
            wanted: wanted.to_owned(),
            side,
            available: report
                .modules
                .iter()
                .map(|m| m.label.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

pub fn choose<'r>(
    before: &'r HostReport,
    after: &'r HostReport,
    wanted: Option<&str>,
) -> Result<Chosen<'r>, Error> {
    if let Some(wanted) = wanted {
        return Ok(Chosen {
            before: Some(find(before, wanted, "before")?),
            after: Some(find(after, wanted, "after")?),
            choice: ModuleChoice::Asked,
        });
    }
    let (sb, sa) = (
        selected(before).or(before.modules.first()),
        selected(after).or(after.modules.first()),
    );
    let (Some(sb), Some(sa)) = (sb, sa) else {
        return Ok(Chosen {
            before: sb,
            after: sa,
            choice: ModuleChoice::NoPlan,
        });
    };
    if sb.name == sa.name {
        return Ok(Chosen {
            before: Some(sb),
            after: Some(sa),
            choice: ModuleChoice::Selected,
        });
    }
    // The largest module both have: the largest peak of either run.
    let mut largest: Option<(&ModuleReport, &ModuleReport)> = None;
    for m in &before.modules {
        let (Some(b), Some(a)) = (by_name(before, &m.name), by_name(after, &m.name)) else {
            continue;
        };
        let peak =
            |(b, a): (&ModuleReport, &ModuleReport)| b.plan.peak_bytes.max(a.plan.peak_bytes);
        if largest.is_none_or(|l| peak((b, a)) > peak(l)) {
            largest = Some((b, a));
        }
    }
    Ok(match largest {
        Some((b, a)) => Chosen {
            before: Some(b),
            after: Some(a),
            choice: ModuleChoice::LargestCommon,
        },
        None => Chosen {
            before: Some(sb),
            after: Some(sa),
            choice: ModuleChoice::NoCommonName,
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn module(name: &str, id: u64, peak: u64) -> ModuleReport {
        let mut m = ModuleReport {
            name: name.into(),
            program_id: id,
            label: format!("{name}({id})"),
            ..Default::default()
        };
        m.plan.peak_bytes = peak;
        m
    }

    fn report(modules: Vec<ModuleReport>, selected: &str) -> HostReport {
        HostReport {
            modules,
            selected_module: Some(selected.into()),
            ..Default::default()
        }
    }

    #[test]
    fn labels_name_their_name() {
        assert_eq!(name_part("jit_step(12)"), Some("jit_step"));
        assert_eq!(name_part("jit_f(x)(3)"), Some("jit_f(x)"));
        assert_eq!(name_part("jit_step"), None);
        assert_eq!(name_part("(3)"), None);
        assert_eq!(name_part("jit_step()"), None);
    }

    #[test]
    fn selected_modules_with_one_name_are_compared_whatever_their_ids() {
        let b = report(
            vec![module("jit_step", 10, 9), module("jit_eval", 2, 1)],
            "jit_step(10)",
        );
        let a = report(
            vec![module("jit_step", 14, 5), module("jit_eval", 4, 1)],
            "jit_step(14)",
        );
        let c = choose(&b, &a, None).unwrap();
        assert_eq!(c.choice, ModuleChoice::Selected);
        assert_eq!(c.after.unwrap().label, "jit_step(14)");
    }

    #[test]
    fn otherwise_the_largest_module_both_have() {
        let b = report(
            vec![
                module("jit_new", 1, 100),
                module("jit_step", 10, 9),
                module("jit_eval", 2, 1),
            ],
            "jit_new(1)",
        );
        let a = report(
            vec![module("jit_step", 14, 5), module("jit_eval", 4, 1)],
            "jit_step(14)",
        );
        let c = choose(&b, &a, None).unwrap();
        assert_eq!(c.choice, ModuleChoice::LargestCommon);
        assert_eq!(c.before.unwrap().label, "jit_step(10)");
        assert_eq!(c.after.unwrap().label, "jit_step(14)");
    }

    #[test]
    fn no_common_name_compares_the_selected_modules() {
        let b = report(vec![module("jit_a", 1, 100)], "jit_a(1)");
        let a = report(vec![module("jit_b", 1, 100)], "jit_b(1)");
        assert_eq!(
            choose(&b, &a, None).unwrap().choice,
            ModuleChoice::NoCommonName
        );
        let empty = HostReport::default();
        let c = choose(&b, &empty, None).unwrap();
        assert_eq!(c.choice, ModuleChoice::NoPlan);
        assert!(c.after.is_none());
    }

    #[test]
    fn the_asked_module_is_found_by_label_name_or_the_labels_name() {
        let b = report(
            vec![module("jit_step", 10, 9), module("jit_eval", 2, 1)],
            "jit_step(10)",
        );
        let a = report(
            vec![module("jit_step", 14, 5), module("jit_eval", 4, 1)],
            "jit_step(14)",
        );
        let c = choose(&b, &a, Some("jit_eval(2)")).unwrap();
        assert_eq!(c.choice, ModuleChoice::Asked);
        assert_eq!(c.before.unwrap().label, "jit_eval(2)");
        assert_eq!(c.after.unwrap().label, "jit_eval(4)");
        let err = choose(&b, &a, Some("jit_missing")).unwrap_err();
        assert_eq!(err.kind(), "unknown_module");
        assert!(err.to_string().contains("in the before run"), "{err}");
    }
}
