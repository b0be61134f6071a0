//! Makes large captures from real ones, for benchmarks: every line of the host and
//! device planes is repeated K times, each copy shifted in time by the capture's span
//! and given launch run ids of its own (so that copy k's launches are k-th repeats of
//! the step, not the same launches again), so the result keeps the real event mix
//! (allocator events, launches, kernels, Python frames). The plan plane is copied once.
//! Streams: memory stays flat at any K (one source line is held at a time).

use std::io::{self, Write};

use oomlens::capture::{CaptureIndex, Plane, PlaneRef};
use oomlens::source::ByteSource;
use oomlens::wire::{Fields, StreamReader, StreamValue, Value};

/// Part of the names of the captures this scaler makes: version 2 gives each copy its
/// own run ids (version 1 repeated them, so every copy's launches merged into one).
pub const VERSION: &str = "2";

/// How far apart the run ids of two copies are: past any real run id.
const RUN_ID_STRIDE: u64 = 1 << 32;

fn varint_len(mut v: u64) -> u64 {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(out: &mut impl Write, mut v: u64) -> io::Result<()> {
    let mut buf = [0u8; 10];
    let mut i = 0;
    while v >= 0x80 {
        buf[i] = (v as u8) | 0x80;
        v >>= 7;
        i += 1;
    }
    buf[i] = v as u8;
    out.write_all(&buf[..=i])
}

fn err(e: oomlens::Error) -> io::Error {
    io::Error::other(e.to_string())
}

/// Copies `[offset, offset + len)` of the source to `out` in chunks.
fn copy_range(src: &dyn ByteSource, offset: u64, len: u64, out: &mut impl Write) -> io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut done = 0;
    while done < len {
        let n = (len - done).min(buf.len() as u64) as usize;
        let got = src.read_at(offset + done, &mut buf[..n])?;
        if got == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "source ended early",
            ));
        }
        out.write_all(&buf[..got])?;
        done += got as u64;
    }
    Ok(())
}

/// A line's fields: its timestamp (field 3) and everything else as raw field ranges.
struct Line {
    /// Where the line's message lies in the source.
    offset: u64,
    len: u64,
    timestamp_ns: u64,
    /// (key offset, total length) of every field but 3.
    others: Vec<(u64, u64)>,
    others_len: u64,
    end_ns: u64,
}

fn read_line(src: &dyn ByteSource, offset: u64, len: u64) -> Result<Line, oomlens::Error> {
    let mut r = StreamReader::new(src, 1 << 20);
    r.seek(offset);
    let end = offset + len;
    let mut line = Line {
        offset,
        len,
        timestamp_ns: 0,
        others: Vec::new(),
        others_len: 0,
        end_ns: 0,
    };
    let mut duration_ps = 0u64;
    let mut last_event_end_ps = 0u64;
    loop {
        let start = r.position();
        let Some((field, value)) = r.next_field(end)? else {
            break;
        };
        let field_len = r.position() - start;
        match (field, value) {
            (3, StreamValue::Varint(v)) => line.timestamp_ns = v,
            (9, StreamValue::Varint(v)) => {
                duration_ps = v;
                line.others.push((start, field_len));
                line.others_len += field_len;
            }
            (4, StreamValue::Bytes { offset, len }) => {
                let bytes = r.bytes(offset, len)?.to_vec();
                let mut f = oomlens::wire::Fields::new(&bytes);
                let (mut off, mut dur) = (0u64, 0u64);
                while let Ok(Some((n, v))) = f.next_field() {
                    match (n, v) {
                        (2, oomlens::wire::Value::Varint(x)) => off = x,
                        (3, oomlens::wire::Value::Varint(x)) => dur = x,
                        _ => {}
                    }
                }
                last_event_end_ps = last_event_end_ps.max(off + dur);
                line.others.push((start, field_len));
                line.others_len += field_len;
            }
            _ => {
                line.others.push((start, field_len));
                line.others_len += field_len;
            }
        }
        // Neighbouring fields are one contiguous range: keep a few ranges, not one per event.
        if let [.., (a, alen), (b, blen)] = line.others[..] {
            if a + alen == b {
                line.others.pop();
                line.others.pop();
                line.others.push((a, alen + blen));
            }
        }
    }
    line.end_ns = line.timestamp_ns + duration_ps.max(last_event_end_ps) / 1000;
    Ok(line)
}

fn line_message_len(line: &Line, timestamp_ns: u64) -> u64 {
    line.others_len + 1 + varint_len(timestamp_ns)
}

fn put_field_bytes(out: &mut Vec<u8>, key: u8, bytes: &[u8]) {
    out.push(key);
    let _ = put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A stat with `shift` added to its integer value.
fn shifted_stat(stat: &[u8], shift: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(stat.len() + 4);
    let mut f = Fields::new(stat);
    while let Ok(Some((n, v))) = f.next_field() {
        match (n, v) {
            (3 | 4, Value::Varint(x)) => {
                out.push((n as u8) << 3);
                let _ = put_varint(&mut out, x.wrapping_add(shift));
            }
            (n, Value::Varint(x)) => {
                out.push((n as u8) << 3);
                let _ = put_varint(&mut out, x);
            }
            (n, Value::Bytes(b)) => put_field_bytes(&mut out, ((n as u8) << 3) | 2, b),
            (n, Value::Fixed64(x)) => {
                out.push(((n as u8) << 3) | 1);
                out.extend_from_slice(&x.to_le_bytes());
            }
            (n, Value::Fixed32(x)) => {
                out.push(((n as u8) << 3) | 5);
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    out
}

/// An event with the run-id stats among `run_stats` shifted by `shift`.
fn shifted_event(event: &[u8], run_stats: &[u64], shift: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.len() + 8);
    let mut f = Fields::new(event);
    let mut at = 0;
    while let Ok(Some((n, v))) = f.next_field() {
        let raw = &event[at..f.position()];
        at = f.position();
        if let (4, Value::Bytes(stat)) = (n, v) {
            let id = Fields::new(stat).next_field().ok().flatten();
            if let Some((1, Value::Varint(id))) = id {
                if run_stats.contains(&id) {
                    put_field_bytes(&mut out, 0x22, &shifted_stat(stat, shift));
                    continue;
                }
            }
        }
        out.extend_from_slice(raw);
    }
    out
}

/// Copy `k` of a host line (`bytes`, its message), whole: its timestamp, and its
/// events' run ids shifted.
fn host_line_copy(
    bytes: &[u8],
    line: &Line,
    k: u64,
    span_ns: u64,
    run_stats: &[u64],
) -> io::Result<Vec<u8>> {
    let shift = k * RUN_ID_STRIDE;
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 8 + 16);
    out.push(0x18);
    put_varint(&mut out, line.timestamp_ns + k * span_ns)?;
    let mut f = Fields::new(bytes);
    let mut at = 0;
    while let Ok(Some((n, v))) = f.next_field() {
        let raw = &bytes[at..f.position()];
        at = f.position();
        match (n, v) {
            (3, _) => {}
            (4, Value::Bytes(event)) if shift > 0 => {
                put_field_bytes(&mut out, 0x22, &shifted_event(event, run_stats, shift))
            }
            _ => out.extend_from_slice(raw),
        }
    }
    Ok(out)
}

/// The stat ids that carry a launch's run id on a host plane (`run_id`, and the
/// producer and consumer ids that name it).
fn run_id_stats(src: &dyn ByteSource, plane: &PlaneRef) -> Vec<u64> {
    if !plane.name.starts_with("/host:CPU") {
        return Vec::new();
    }
    let Ok(plane) = Plane::open(src, plane) else {
        return Vec::new();
    };
    ["run_id", "_p", "_c"]
        .iter()
        .filter_map(|name| plane.stat_id(name))
        .collect()
}

/// Writes `input` scaled by `copies` to `out`. Returns the bytes written.
pub fn scale(src: &dyn ByteSource, copies: u64, out: &mut impl Write) -> io::Result<u64> {
    let index = CaptureIndex::scan(src).map_err(err)?;
    // The span all copies are shifted by: the latest line end over all planes.
    let mut span_ns = 1u64;
    for plane in &index.planes {
        for_each_line(src, plane, |l| {
            span_ns = span_ns.max(l.end_ns + 1);
            Ok(())
        })?;
    }
    let mut written = 0u64;
    for plane in &index.planes {
        let repeat = if plane.name == "/host:metadata" {
            1
        } else {
            copies
        };
        let run_stats = run_id_stats(src, plane);
        // A host line's copies are rewritten whole from its message, read once per
        // pass; other lines' are copied in ranges.
        let host_line = |l: &Line| -> io::Result<Option<Vec<u8>>> {
            if run_stats.is_empty() {
                return Ok(None);
            }
            oomlens::wire::read_payload(src, l.offset, l.len)
                .map(Some)
                .map_err(err)
        };
        // First pass: the plane's new length.
        let mut body = 0u64;
        walk_plane(src, plane, |item| {
            body += match item {
                PlaneItem::Raw(_, len) => len,
                PlaneItem::Line(l) => {
                    let source = host_line(&l)?;
                    let mut sum = 0;
                    for k in 0..repeat {
                        let n = match &source {
                            Some(bytes) => {
                                host_line_copy(bytes, &l, k, span_ns, &run_stats)?.len() as u64
                            }
                            None => line_message_len(&l, l.timestamp_ns + k * span_ns),
                        };
                        sum += 1 + varint_len(n) + n;
                    }
                    sum
                }
            };
            Ok(())
        })?;
        out.write_all(&[0x0a])?;
        put_varint(out, body)?;
        written += 1 + varint_len(body) + body;
        // Second pass: the bytes.
        walk_plane(src, plane, |item| {
            match item {
                PlaneItem::Raw(offset, len) => copy_range(src, offset, len, out)?,
                PlaneItem::Line(l) => {
                    let source = host_line(&l)?;
                    for k in 0..repeat {
                        if let Some(source) = &source {
                            let bytes = host_line_copy(source, &l, k, span_ns, &run_stats)?;
                            out.write_all(&[0x1a])?;
                            put_varint(out, bytes.len() as u64)?;
                            out.write_all(&bytes)?;
                            continue;
                        }
                        let ts = l.timestamp_ns + k * span_ns;
                        out.write_all(&[0x1a])?;
                        put_varint(out, line_message_len(&l, ts))?;
                        out.write_all(&[0x18])?;
                        put_varint(out, ts)?;
                        for &(offset, len) in &l.others {
                            copy_range(src, offset, len, out)?;
                        }
                    }
                }
            }
            Ok(())
        })?;
    }
    Ok(written)
}

enum PlaneItem {
    Raw(u64, u64),
    Line(Line),
}

fn walk_plane(
    src: &dyn ByteSource,
    plane: &PlaneRef,
    mut f: impl FnMut(PlaneItem) -> io::Result<()>,
) -> io::Result<()> {
    let mut r = StreamReader::new(src, 1 << 20);
    r.seek(plane.offset);
    let end = plane.offset + plane.len;
    loop {
        let start = r.position();
        let Some((field, value)) = r.next_field(end).map_err(err)? else {
            break;
        };
        match (field, value) {
            (3, StreamValue::Bytes { offset, len }) => {
                f(PlaneItem::Line(read_line(src, offset, len).map_err(err)?))?
            }
            _ => f(PlaneItem::Raw(start, r.position() - start))?,
        }
    }
    Ok(())
}

fn for_each_line(
    src: &dyn ByteSource,
    plane: &PlaneRef,
    mut f: impl FnMut(&Line) -> io::Result<()>,
) -> io::Result<()> {
    walk_plane(src, plane, |item| match item {
        PlaneItem::Line(l) => f(&l),
        PlaneItem::Raw(..) => Ok(()),
    })
}
