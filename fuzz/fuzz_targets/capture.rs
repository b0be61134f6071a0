//! The capture decoder on arbitrary bytes: the index, every plane's metadata, and a
//! walk over every event and its stats (what the runtime scan does, minus its logic);
//! every plane read tables-first, which must agree with it once confirmed; and every
//! plane shared by two walks, which together must visit what one walk visits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomlens::capture::{CaptureIndex, Event, EventVisitor, LineBoundary, LineInfo, Plane};

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
        let whole_events = visitor.events;
        // The same plane shared by two walks, the second setting the boundary at the
        // middle before the first starts: once the second walk confirms the tables read
        // from the plane's end, and no walk met damage (each part would stop at it on
        // its own), the two visit every event once and found the lines one walk finds.
        if let Ok(mut shared) = Plane::open_tables_first(&src, at) {
            let boundary = LineBoundary::default();
            let mut later = Touch {
                plane: &shared,
                events: 0,
                text: 0,
            };
            let _ = shared.visit_events_from_middle(&src, &boundary, &mut later);
            let mut earlier = Touch {
                plane: &shared,
                events: 0,
                text: 0,
            };
            let _ = shared.visit_events_before(&src, &boundary, &mut earlier);
            let parts = earlier.events + later.events;
            if shared.damage().is_none() && shared.confirm_tables() {
                assert_eq!(parts, whole_events);
                assert_eq!(shared.line_count, plane.line_count);
                assert_eq!(shared.lines, plane.lines);
            }
        }
        // The same plane with its tables read from its end: once a walk confirms them,
        // they and the lines it found are the ones the plane read by walking has.
        let Ok(mut first) = Plane::open_tables_first(&src, at) else {
            continue;
        };
        let mut visitor = Touch {
            plane: &first,
            events: 0,
            text: 0,
        };
        let _ = first.visit_events(&src, &mut visitor);
        if first.confirm_tables() {
            assert_eq!(first.id, plane.id);
            assert_eq!(first.name, plane.name);
            assert_eq!(first.stat_names, plane.stat_names);
            // Debug text, so that a NaN stat equals itself.
            assert_eq!(format!("{:?}", first.stats), format!("{:?}", plane.stats));
            assert_eq!(first.line_count, plane.line_count);
            assert_eq!(first.lines, plane.lines);
            let names = |p: &Plane| {
                let mut v: Vec<(i64, String, String, Vec<oomlens::capture::OwnedStat>)> = p
                    .event_metadata
                    .values()
                    .map(|m| (m.id, m.name.clone(), m.display_name.clone(), m.stats.clone()))
                    .collect();
                v.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
                v
            };
            assert_eq!(format!("{:?}", names(&first)), format!("{:?}", names(&plane)));
        }
    }
});
