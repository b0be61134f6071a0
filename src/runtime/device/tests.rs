use super::super::records::tests::execution;
use super::*;

/// The forward search from a hint finds what a binary search over all launches
/// finds, for every hint that is a true lower bound (ties in start included).
#[test]
fn the_launches_started_by_a_kernel_are_counted_from_any_hint() {
    let starts = [0i64, 5, 5, 5, 9, 20, 21, 21, 40, 41, 42, 100];
    let executions: Vec<ExecutionRecord> = starts.iter().map(|&s| execution(s)).collect();
    let order: Vec<u32> = (0..starts.len() as u32).collect();
    for start in -1..=101 {
        let expected = starts.partition_point(|&s| s <= start);
        for hint in 0..=expected {
            let found = launches_started_by(&executions, &order, start, hint);
            assert_eq!(found, expected, "start {start}, hint {hint}");
        }
    }
    assert_eq!(launches_started_by(&[], &[], 7, 0), 0);
}

/// What an event type names is the same whether its id is cached in the table or
/// hashed past it, asked first or again.
#[test]
fn an_event_types_module_is_found_for_small_and_large_ids() {
    use crate::capture::{EventMetadata, OwnedStat, StatValue};
    let mut plane = Plane::default();
    plane.stat_names.insert(1, "hlo_module".into());
    plane.stat_names.insert(2, "program_id".into());
    let large = DENSE_METADATA_IDS as i64 + 5;
    for id in [3, large] {
        let stats = vec![
            OwnedStat {
                metadata_id: 1,
                value: StatValue::Str(format!("jit_f{id}").into()),
            },
            OwnedStat {
                metadata_id: 2,
                value: StatValue::Uint(7),
            },
        ];
        let meta = EventMetadata {
            id,
            name: format!("fusion.{id}"),
            display_name: String::new(),
            stats,
        };
        plane.event_metadata.insert(id, meta);
    }
    let mut scan = RuntimeScan::default();
    let mut visitor = DeviceVisitor::new(&plane, &mut scan, &[], false);
    for _ in 0..2 {
        for id in [3, large, 4, large + 1] {
            let (module, program) = visitor.module_and_program_of_type(id);
            let named = module.map(|m| visitor.scan.module_names[m as usize].clone());
            let known = id == 3 || id == large;
            assert_eq!(named, known.then(|| format!("jit_f{id}")), "{id}");
            assert_eq!(program, known.then_some(7), "{id}");
        }
    }
    assert_eq!(visitor.by_large_metadata.len(), 2);
}

/// A plane without `hlo_module` and `program_id` stats (TensorFlow's GPU planes)
/// has only its module line read; a plane with either stat has every line read.
#[test]
fn lines_are_read_only_where_work_can_name_a_module_or_program() {
    let line = |name: &str| LineInfo {
        name: name.into(),
        ..LineInfo::default()
    };
    let stats: [&[&str]; 4] = [&[], &["shape"], &["hlo_module"], &["shape", "program_id"]];
    for names in stats {
        let mut plane = Plane::default();
        for (id, name) in (1..).zip(names) {
            plane.stat_names.insert(id, (*name).into());
        }
        let mut scan = RuntimeScan::default();
        let mut visitor = DeviceVisitor::new(&plane, &mut scan, &[], false);
        let names_work = names.iter().any(|n| *n != "shape");
        assert!(visitor.line(&line("XLA Modules")), "{names:?}");
        assert_eq!(
            visitor.line(&line("Stream #142(Compute)")),
            names_work,
            "{names:?}"
        );
    }
}
