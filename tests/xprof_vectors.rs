//! XProf's own Memory Viewer test vectors (openxla/xprof
//! `xprof/convert/hlo_proto_to_memory_visualization_utils_test.cc`), ported: the same
//! HloProtos, built with our prost types, must give the same peaks, totals and
//! buffers live at the peak.

use oomlens::proto::xla::{
    buffer_allocation_proto::Assigned, heap_simulator_trace::Event, logical_buffer_proto::Location,
    BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto,
    HloInstructionProto, HloModuleProto, HloProto, LogicalBufferProto, ShapeProto,
};
use oomlens::report::model::Plan;

const U64: i32 = 9;
const TUPLE: i32 = 13;
const HALF_MIB: i64 = 524_288;
const MIB: u64 = 1 << 20;

const ALLOC: i32 = 0;
const FREE: i32 = 1;
const SHARE_WITH: i32 = 2;

fn event(kind: i32, buffer_id: i64, canonical: i64) -> Event {
    Event {
        kind,
        buffer_id,
        share_with_canonical_id: canonical,
        ..Default::default()
    }
}

/// `buffers` fusions, one 0.5 MiB logical buffer each, in one allocation of `allocation_size`.
fn hlo(buffers: i64, allocation_size: i64, events: Vec<Event>) -> HloProto {
    let tuple_of_u64 = ShapeProto {
        element_type: TUPLE,
        tuple_shapes: vec![ShapeProto {
            element_type: U64,
            ..Default::default()
        }],
        ..Default::default()
    };
    let instructions = (0..buffers)
        .map(|i| HloInstructionProto {
            name: format!("fusion.{}", i + 1),
            id: i,
            shape: Some(tuple_of_u64.clone()),
            ..Default::default()
        })
        .collect();
    let module = HloModuleProto {
        name: "test_module".into(),
        entry_computation_name: "test_computation".into(),
        computations: vec![HloComputationProto {
            name: "test_computation".into(),
            instructions,
            ..Default::default()
        }],
        ..Default::default()
    };
    let logical_buffers = (0..buffers)
        .map(|i| LogicalBufferProto {
            id: i + 1,
            size: HALF_MIB,
            color: 0,
            defined_at: Some(Location {
                instruction_id: i,
                shape_index: vec![0],
                ..Default::default()
            }),
        })
        .collect();
    let assigned = (0..buffers)
        .map(|i| Assigned {
            logical_buffer_id: i + 1,
            offset: 0,
            size: HALF_MIB,
            ..Default::default()
        })
        .collect();
    let assignment = BufferAssignmentProto {
        buffer_allocations: vec![BufferAllocationProto {
            index: 0,
            size: allocation_size,
            color: 0,
            assigned,
            ..Default::default()
        }],
        logical_buffers,
        heap_simulator_traces: vec![HeapSimulatorTrace {
            events,
            ..Default::default()
        }],
        ..Default::default()
    };
    HloProto {
        hlo_module: Some(module),
        buffer_assignment: Some(assignment),
    }
}

fn live_names(plan: &Plan) -> Vec<&str> {
    plan.live_at_peak.iter().map(|b| b.name.as_str()).collect()
}

#[test]
fn share_with_1_memory_is_not_doubled() {
    let plan = oomlens::plan::analyze(&hlo(
        2,
        1 << 20,
        vec![
            event(ALLOC, 1, 0),
            event(SHARE_WITH, 2, 1),
            event(FREE, 1, 0),
            event(FREE, 2, 0),
        ],
    ));
    assert_eq!(plan.peak_bytes, MIB / 2);
    assert_eq!(plan.allocation_bytes, MIB);
}

#[test]
fn share_with_2_after_free_memory_is_not_doubled() {
    let plan = oomlens::plan::analyze(&hlo(
        2,
        1 << 20,
        vec![
            event(ALLOC, 1, 0),
            event(FREE, 1, 0),
            event(SHARE_WITH, 2, 1),
            event(FREE, 2, 0),
        ],
    ));
    assert_eq!(plan.peak_bytes, MIB / 2);
    assert_eq!(plan.allocation_bytes, MIB);
    assert!(!plan.timeline.is_empty(), "a program-order timeline exists");
}

#[test]
fn share_with_chain_leaves_no_phantom_buffer() {
    let plan = oomlens::plan::analyze(&hlo(
        3,
        1_572_864,
        vec![
            event(ALLOC, 1, 0),
            event(SHARE_WITH, 2, 1),
            event(FREE, 1, 0),
            event(FREE, 2, 0),
            event(SHARE_WITH, 3, 2),
            event(FREE, 3, 0),
        ],
    ));
    assert_eq!(plan.peak_bytes, MIB / 2);
    assert_eq!(plan.live_at_peak.len(), 1, "{:?}", live_names(&plan));
}

#[test]
fn share_with_peak_shows_the_reusing_buffer() {
    let plan = oomlens::plan::analyze(&hlo(
        3,
        1_572_864,
        vec![
            event(ALLOC, 1, 0),
            event(FREE, 1, 0),
            event(SHARE_WITH, 2, 1),
            event(ALLOC, 3, 0),
            event(FREE, 2, 0),
            event(FREE, 3, 0),
        ],
    ));
    assert_eq!(plan.peak_bytes, MIB);
    assert_eq!(plan.allocation_bytes, 1_572_864);
    let mut names = live_names(&plan);
    names.sort();
    assert_eq!(names, ["fusion.2{0}", "fusion.3{0}"]);
}
