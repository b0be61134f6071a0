//! Prints a module's buffer allocations and heap traces, for checking figures by hand:
//! `cargo run --example dump_allocations -- CAPTURE MODULE_LABEL_SUBSTRING`.

use oomlens::capture::CaptureIndex;
use oomlens::plan::find_modules;
use oomlens::source::FileSource;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(wanted)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: dump_allocations CAPTURE MODULE");
        std::process::exit(2);
    };
    let src = FileSource::open(std::path::Path::new(path))?;
    let capture = CaptureIndex::scan(&src)?;
    let planes = capture
        .planes
        .iter()
        .map(|p| oomlens::capture::Plane::open(&src, p))
        .collect::<Result<Vec<_>, _>>()?;
    for entry in find_modules(&planes) {
        if !entry.label.contains(wanted.as_str()) {
            continue;
        }
        let hlo = entry.decode(&src)?;
        let Some(ba) = hlo.buffer_assignment.as_ref() else {
            continue;
        };
        println!(
            "{}: {} allocations, {} traces",
            entry.label,
            ba.buffer_allocations.len(),
            ba.heap_simulator_traces.len()
        );
        for a in &ba.buffer_allocations {
            println!(
                "  alloc {} size {} color {} param {} live_out {} thread_local {} const {} tuple {} aliased {} assigned {}",
                a.index,
                a.size,
                a.color,
                a.is_entry_computation_parameter,
                a.maybe_live_out,
                a.is_thread_local,
                a.is_constant,
                a.is_tuple,
                a.is_parameter_aliased_with_output,
                a.assigned.len()
            );
        }
        for (i, t) in ba.heap_simulator_traces.iter().enumerate() {
            println!(
                "  trace {i}: {} events, first buffer {:?}",
                t.events.len(),
                t.events.first().map(|e| e.buffer_id)
            );
        }
    }
    Ok(())
}
