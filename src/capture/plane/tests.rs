use super::walk::visit_line;
use super::*;
use crate::wire::fields::XLINE_EVENTS_TAG;
use crate::wire::{Fields, Value};

use crate::wire::encode_varint as varint;

fn header(e: &Event<'_>) -> (i64, i64, i64, i64) {
    (e.metadata_id, e.offset_ps, e.duration_ps, e.num_occurrences)
}

fn stats(e: &Event<'_>) -> String {
    let mut out = String::new();
    e.for_each_stat(|id, v| out.push_str(&format!("{id}={v:?};")));
    out
}

/// The header fast path reads what the general decoder reads, stats included,
/// whatever the fields present, their order, repeats and truncations.
#[test]
fn the_usual_event_header_decodes_as_the_general_decoder_does() {
    let stat = [0x22, 0x04, 0x08, 0x05, 0x18, 0x2a];
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for fields in 0u32..(1 << 6) {
        for big in [false, true] {
            let mut raw = Vec::new();
            // Keys 1, 2, 3 (varints), 5 (num_occurrences), 4 (a stat), in an order
            // picked by the bits, some repeated.
            let order: &[u8] = if fields & 32 == 0 {
                &[1, 2, 3, 4, 5]
            } else {
                &[2, 1, 4, 3, 1]
            };
            for (i, &f) in order.iter().enumerate() {
                if fields & (1 << i) == 0 {
                    continue;
                }
                if f == 4 {
                    raw.extend(stat);
                } else {
                    raw.push(f << 3);
                    varint(if big { 1 << (20 + 7 * u64::from(f)) } else { 7 }, &mut raw);
                }
            }
            raw.extend(stat);
            cases.push(raw.clone());
            for cut in 1..raw.len() {
                cases.push(raw[..cut].to_vec());
            }
        }
    }
    let (mut usual, mut statless) = (0, 0);
    for raw in &cases {
        let general = Event::parse_any(raw);
        if let Some(fast) = Event::parse_usual(raw) {
            usual += 1;
            let general = general.as_ref().unwrap();
            assert_eq!(header(&fast), header(general), "{raw:02x?}");
            assert_eq!(stats(&fast), stats(general), "{raw:02x?}");
        }
        match (Event::parse(raw), general) {
            (Ok(a), Ok(b)) => {
                assert_eq!(header(&a), header(&b), "{raw:02x?}");
                assert_eq!(stats(&a), stats(&b), "{raw:02x?}");
                // An event said to carry no stats has none to walk.
                if a.has_no_stats() {
                    statless += 1;
                    assert_eq!(stats(&b), "", "{raw:02x?}");
                }
            }
            (a, b) => assert_eq!(a.is_err(), b.is_err(), "{raw:02x?}"),
        }
    }
    assert!(usual > 100, "the fast path answered {usual} cases");
    assert!(
        statless > 10,
        "{statless} events were known to carry no stats"
    );
}

/// An event's stats as the general decoder reads them: every field 4 of the event,
/// up to the first field that cannot be read.
fn general_stats(raw: &[u8], wanted: impl Fn(u64) -> bool) -> String {
    let mut out = String::new();
    let mut fields = Fields::new(raw);
    while let Ok(Some((field, value))) = fields.next_field() {
        if let (4, Value::Bytes(b)) = (field, value) {
            if let Ok(Some((id, v))) = parse_stat(b) {
                if wanted(id) {
                    out.push_str(&format!("{id}={v:?};"));
                }
            }
        }
    }
    out
}

/// Stats read where they lie (the scan's path) are the ones the general decoder
/// reads, whatever their shape: long ids, every value kind, varints of every
/// length (padded, overflowing, too long), extra fields, cut frames; with or
/// without a filter on ids.
#[test]
fn stats_read_in_place_are_the_ones_the_general_decoder_reads() {
    let mut shapes: Vec<Vec<u8>> = Vec::new();
    for id in [1u64, 5, 127, 128, 300] {
        let mut with_id = vec![0x08];
        varint(id, &mut with_id);
        for v in [
            0u64,
            1,
            127,
            128,
            1 << 20,
            1 << 35,
            1 << 49,
            1 << 56,
            u64::MAX,
        ] {
            for key in [0x18u8, 0x20, 0x38] {
                let mut s = with_id.clone();
                s.push(key);
                varint(v, &mut s);
                shapes.push(s);
            }
        }
        let mut double = with_id.clone();
        double.push(0x11);
        double.extend(2.5f64.to_le_bytes());
        shapes.push(double.clone());
        shapes.push(double[..double.len() - 1].to_vec());
        let mut text = with_id.clone();
        text.extend([0x2a, 0x02, b'h', b'i']);
        shapes.push(text);
        let odd: [&[u8]; 5] = [
            &[0x18, 0x80, 0x00],
            &[
                0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
            ],
            &[
                0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x81, 0x01,
            ],
            &[0x18, 0x85],
            &[0x18, 0x05, 0x20, 0x06],
        ];
        for tail in odd {
            let mut s = with_id.clone();
            s.extend(tail);
            shapes.push(s);
        }
    }
    let frame = |s: &[u8]| {
        let mut f = vec![0x22];
        varint(s.len() as u64, &mut f);
        f.extend(s);
        f
    };
    let header = [0x08, 0x07, 0x10, 0x90, 0x92, 0xc2, 0x44];
    let mut checked = 0;
    for (i, stat) in shapes.iter().enumerate() {
        // Alone (its value ends the event), before another stat (ten bytes or
        // more follow), and with its frame cut.
        let next = &shapes[(i + 7) % shapes.len()];
        let mut events = Vec::new();
        for after in [&[][..], &frame(next)] {
            let mut raw = header.to_vec();
            raw.extend(frame(stat));
            raw.extend(after);
            events.push(raw);
        }
        let mut cut = header.to_vec();
        cut.extend(frame(next));
        cut.extend(&frame(stat)[..stat.len()]);
        events.push(cut);
        for raw in &events {
            // A cut frame is the event's own damage when the general decoder
            // meets it while reading the header.
            let Ok(event) = Event::parse(raw) else {
                assert!(Event::parse_any(raw).is_err(), "{raw:02x?}");
                continue;
            };
            assert_eq!(stats(&event), general_stats(raw, |_| true), "{raw:02x?}");
            let wanted = |id: u64| id == 5 || id == 300;
            let mut only = String::new();
            event.for_each_stat_of(wanted, |id, v| only.push_str(&format!("{id}={v:?};")));
            assert_eq!(only, general_stats(raw, wanted), "{raw:02x?}");
            checked += 1;
        }
    }
    assert!(checked > 300, "{checked} events checked");
}

/// Records the starts of the events of type [`COUNTED`], by [`Interest::Count`]
/// when `counting`, else by reading each one whole.
struct Starts {
    counting: bool,
    starts: Vec<i64>,
}

const COUNTED: i64 = 5;

impl EventVisitor for Starts {
    fn interest(&mut self, metadata_id: i64) -> Interest {
        match metadata_id {
            COUNTED if self.counting => Interest::Count,
            COUNTED => Interest::Read,
            _ => Interest::Skip,
        }
    }

    fn count(&mut self, start_ps: i64) {
        self.starts.push(start_ps);
    }

    fn event(&mut self, line: &LineInfo, event: &Event<'_>) {
        if event.metadata_id == COUNTED {
            self.starts.push(event.start_ps(line));
        }
    }
}

/// Records the name of each line it is given, reading names or not as told.
struct Names {
    reads: bool,
    names: Vec<String>,
}

impl EventVisitor for Names {
    fn reads_line_names(&self) -> bool {
        self.reads
    }

    fn line(&mut self, line: &LineInfo) -> bool {
        self.names.push(line.name.clone());
        true
    }

    fn event(&mut self, _line: &LineInfo, _event: &Event<'_>) {}
}

/// A line's name reaches a visitor that reads names, invalid UTF-8 replaced as the
/// lossy decoder does; a visitor that does not read them gets an empty name.
#[test]
fn line_names_reach_only_visitors_that_read_them() {
    for (name, expected) in [
        (&b"XLA Modules"[..], "XLA Modules"),
        (&b"python\xff3"[..], "python\u{fffd}3"),
    ] {
        let name_tag = crate::wire::tag(
            crate::wire::fields::XLINE_NAME,
            crate::wire::WireType::LengthDelimited,
        );
        let mut line = vec![name_tag];
        varint(name.len() as u64, &mut line);
        line.extend(name);
        line.extend([XLINE_EVENTS_TAG, 0x04, 0x08, 0x05, 0x10, 0x01]);
        for reads in [true, false] {
            let mut visitor = Names {
                reads,
                names: Vec::new(),
            };
            let src: &[u8] = &line;
            let end = line.len() as u64;
            let mut reader = StreamReader::over(&src, READ_CHUNK, 0, end);
            visit_line(&mut reader, 0, end, 0, false, &mut visitor).unwrap();
            let seen = if reads { expected } else { "" };
            assert_eq!(visitor.names, [seen], "{name:02x?}");
        }
    }
}

/// Events counted by their start alone are counted at the starts their whole
/// reading finds, in every shape: the usual header, other field orders (given to
/// the visitor whole), skipped types between them, a line starting with a counted
/// event; and a damaged counted event stops both walks alike.
#[test]
fn events_counted_by_start_are_counted_as_reading_them_would() {
    let event = |fields: &[(u8, u64)]| {
        let mut payload = Vec::new();
        for &(key, value) in fields {
            payload.push(key);
            varint(value, &mut payload);
        }
        let mut field = vec![XLINE_EVENTS_TAG];
        varint(payload.len() as u64, &mut field);
        field.extend(payload);
        field
    };
    let (id, offset, duration) = (0x08, 0x10, 0x18);
    let mut line = vec![0x18];
    varint(1_700_000_000, &mut line);
    for (i, skipped) in [(0u64, 3u64), (1, 300), (2, 7)] {
        let at = 1 << (10 + 7 * i);
        line.extend(event(&[(id, 5), (offset, at), (duration, 40)]));
        line.extend(event(&[(id, skipped), (offset, at + 1)]));
        // Offset before the id, then duration before the offset.
        line.extend(event(&[(offset, at + 2), (id, 5)]));
        line.extend(event(&[(id, 5), (duration, 9), (offset, at + 3)]));
        line.extend(event(&[(id, 5), (offset, at + 4)]));
        line.extend(event(&[(id, 5)]));
    }
    let damaged = {
        let mut line = line.clone();
        line.extend([XLINE_EVENTS_TAG, 0x03, id, 5, offset]);
        line
    };
    for (bytes, is_damaged) in [(&line, false), (&damaged, true)] {
        let walk = |counting: bool| {
            let mut visitor = Starts {
                counting,
                starts: Vec::new(),
            };
            let src: &[u8] = bytes;
            let end = bytes.len() as u64;
            let mut reader = StreamReader::over(&src, READ_CHUNK, 0, end);
            let walked = visit_line(&mut reader, 0, end, 0, false, &mut visitor);
            (walked.map_err(|e| e.to_string()), visitor.starts)
        };
        let (counted, read) = (walk(true), walk(false));
        assert_eq!(counted, read);
        assert_eq!(counted.0.is_err(), is_damaged, "{counted:?}");
        assert_eq!(counted.1.len(), 15, "{counted:?}");
    }
}

/// Nanoseconds to picoseconds without a 128-bit product saturates where
/// `saturating_mul` does, at and around both bounds.
#[test]
fn picoseconds_saturate_as_saturating_mul_does() {
    let bound = i64::MAX / 1000;
    for ns in [
        0,
        1,
        -1,
        1_700_000_000_000_000_000 / 1000,
        bound,
        bound + 1,
        -bound,
        -bound - 1,
    ]
    .into_iter()
    .chain([i64::MAX, i64::MIN, i64::MIN / 1000, i64::MIN / 1000 - 1])
    {
        assert_eq!(event::ns_to_ps(ns), ns.saturating_mul(1000), "{ns}");
    }
}
