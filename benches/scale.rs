//! Makes large captures from real ones, for benchmarks: every line of the host and
//! device planes is repeated K times, each copy shifted in time by the capture's span,
//! so the result keeps the real event mix (allocator events, launches, kernels, Python
//! frames). The plan plane is copied once. Streams: memory stays flat at any K.

use std::io::{self, Write};

use oomlens::capture::{CaptureIndex, PlaneRef};
use oomlens::source::ByteSource;
use oomlens::wire::{StreamReader, StreamValue};

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
        // First pass: the plane's new length.
        let mut body = 0u64;
        walk_plane(src, plane, |item| {
            body += match item {
                PlaneItem::Raw(_, len) => len,
                PlaneItem::Line(l) => (0..repeat)
                    .map(|k| {
                        let n = line_message_len(&l, l.timestamp_ns + k * span_ns);
                        1 + varint_len(n) + n
                    })
                    .sum(),
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
                    for k in 0..repeat {
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
