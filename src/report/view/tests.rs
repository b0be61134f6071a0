use super::*;
use crate::report::model::{Category, Execution, ModuleReport};

fn buffer(name: &str, bytes: u64, memory_space: i64) -> LiveBuffer {
    LiveBuffer {
        name: name.into(),
        opcode: "fusion".into(),
        shape: "f32[1024,1024]".into(),
        bytes,
        unpadded_bytes: bytes / 2,
        category: Category::Temporary,
        role: Role::Backward,
        source: "/src/model.py:7".into(),
        op_name: "jit(step)/transpose(jvp())/dot".into(),
        memory_space,
        shared_by: Vec::new(),
    }
}

fn module(label: &str, live: Vec<LiveBuffer>) -> ModuleReport {
    ModuleReport {
        label: label.into(),
        plan: Plan {
            live_at_peak: live,
            ..Plan::default()
        },
        ..ModuleReport::default()
    }
}

fn execution(module: &str, kernels: Option<bool>) -> Execution {
    Execution {
        module: module.into(),
        start_ns: 1.5e9,
        duration_ns: 3.4e6,
        launched_kernels: kernels,
        ..Execution::default()
    }
}

#[test]
fn the_page_gets_each_listed_buffer_in_full() {
    let live = vec![
        buffer("a", 4 << 20, 0),
        buffer("b", 2 << 20, 5),
        buffer("c", 1, 0),
    ];
    let h = HostReport {
        modules: vec![module("jit_step(1)", live), module("jit_other(2)", vec![])],
        selected_module: Some("jit_step(1)".into()),
        ..HostReport::default()
    };
    let v = host(&h, 2);
    let t = v.live.expect("a live table");
    assert_eq!(v.live_buffers.len(), t.rows.len());
    for (row, b) in t.rows.iter().zip(&v.live_buffers) {
        assert_eq!(
            row[0].text, b.rows[1].value,
            "the size shown in the table and the detail"
        );
        assert_eq!(row[5].text, b.name);
    }
    let b = &v.live_buffers[1];
    let names: Vec<&str> = b.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "shape",
            "size (padded)",
            "unpadded",
            "category",
            "role",
            "opcode",
            "source",
            "op_name",
            "memory space"
        ]
    );
    assert_eq!(b.rows[1].note, "2,097,152 bytes");
    assert_eq!(b.rows[4].value, "backward");
    assert_eq!(
        b.rows[6].value, "/src/model.py:7",
        "the detail has the full source"
    );
    assert!(!v.live_buffers[0]
        .rows
        .iter()
        .any(|r| r.name == "memory space"));
    // The module table marks the selected module.
    let modules = v.modules.expect("a module table");
    assert_eq!(modules.marks, [Some(RowMark::Selected), None]);
    // Every label has its meaning.
    assert_eq!(v.labels.len(), 3);
    assert!(v
        .labels
        .iter()
        .all(|l| l.meaning.starts_with(l.label.as_str())));
}

#[test]
fn executions_are_listed_latest_first_cut_and_marked() {
    let mut executions: Vec<Execution> = (0..limits::EXECUTIONS + 5)
        .map(|_| execution("jit_other(2)", Some(true)))
        .collect();
    executions.push(execution("jit_step(1)", Some(true)));
    executions.push(execution("jit_step(1)", Some(false)));
    let rt = Runtime {
        execution_count: 5000,
        executions,
        ..Runtime::default()
    };
    let t = executions_table(&rt);
    assert_eq!(t.rows.len(), limits::EXECUTIONS);
    assert_eq!(t.title, "Executions (the latest 1,000 of 5,000)");
    let last = t.rows.last().expect("a row");
    let texts: Vec<&str> = last.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["jit_step(1)", "—", "1.50 s", "3.400 ms", "—", "no"]);
    let n = t.marks.len();
    assert_eq!(t.marks[n - 1], Some(RowMark::NoKernel));
    assert_eq!(t.marks[n - 2], Some(RowMark::Selected));
    assert_eq!(t.marks[n - 3], None);
    let few = Runtime {
        execution_count: 1,
        executions: vec![execution("", None)],
        ..Runtime::default()
    };
    let t = executions_table(&few);
    assert_eq!(t.title, "Executions (1)");
    assert_eq!(t.rows[0][0].text, "—");
    assert_eq!(t.rows[0][5].text, "—");
}

fn executions_table(rt: &Runtime) -> Table {
    executions(rt, Some("jit_step(1)")).expect("an executions table")
}

#[test]
fn a_cause_the_title_or_the_text_already_says_is_not_repeated() {
    let title = "Mostly backward: gradients and their temporaries";
    let text =
        "the capture has no device plane: it ran on the CPU backend; runtime peaks are unavailable";
    assert!(repeats("gradients and their temporaries", &[title, text]));
    assert!(repeats(
        "the capture has no device plane: it ran on the CPU backend",
        &[title, text]
    ));
    assert!(repeats("", &[title]));
    // Whole words only: "temporar" is not said by "temporaries".
    assert!(!repeats("temporar", &[title]));
    assert!(!repeats(
        "old and new state are live together",
        &[title, text]
    ));
}
