//! The capture decoder on arbitrary bytes: the index, every plane's metadata, and a
//! walk over every event and its stats (what the runtime scan does, minus its logic).
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::capture::{CaptureIndex, Event, EventVisitor, LineInfo, Plane};

struct Touch<'p> {
    plane: &'p Plane,
    events: u64,
    text: usize,
}

impl EventVisitor for Touch<'_> {
    fn line(&mut self, line: &LineInfo) -> bool {
        self.text += line.name.len();
        true
    }

    fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
        self.events += 1;
        let _ = event.start_ps(line);
        let _ = event.end_ps(line);
        if let Some(meta) = self.plane.event_metadata.get(&event.metadata_id) {
            self.text += meta.name.len();
        }
        let plane = self.plane;
        let mut text = 0;
        event.for_each_stat(|id, value| {
            let _ = plane.stat_name(id);
            let _ = (value.as_i64(), value.as_u64(), value.as_f64());
            if let Some(s) = plane.stat_str(&value) {
                text += s.len();
            }
        });
        self.text += text;
    }
}

fuzz_target!(|data: &[u8]| {
    let src = data;
    let Ok(index) = CaptureIndex::scan(&src) else {
        return;
    };
    let _ = index.notes();
    for at in &index.planes {
        let Ok(plane) = Plane::open(&src, at) else {
            continue;
        };
        let _ = plane.plane_stat("memory_size");
        for meta in plane.event_metadata.values() {
            for stat in &meta.stats {
                let _ = stat.value.as_ref();
            }
        }
        let mut visitor = Touch {
            plane: &plane,
            events: 0,
            text: 0,
        };
        let _ = plane.visit_events(&src, &mut visitor);
    }
});
