use super::stream::JUMP_READ;
use super::*;
use crate::source::ByteSource;

/// The word-at-a-time decoder reads what the byte loop reads, for every length, with
/// bytes after the varint that would confuse a careless mask, and near the end of
/// the buffer.
#[test]
fn varints_decode_alike_by_word_and_by_byte() {
    let by_byte = |buf: &[u8]| {
        let mut value = 0u64;
        for (i, &b) in buf.iter().take(10).enumerate() {
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Some((value, i + 1));
            }
        }
        None
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut values: Vec<u64> = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1]).collect();
    values.extend((0..2000).map(|_| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed >> (seed % 64)
    }));
    values.push(u64::MAX);
    for v in values {
        for tail in [
            vec![],
            vec![0xff; 12],
            vec![0x00; 12],
            vec![0x80, 0x81, 0x7f],
        ] {
            let mut buf = Vec::new();
            encode_varint(v, &mut buf);
            let used = buf.len();
            buf.extend(&tail);
            assert_eq!(decode_varint(&buf), Ok((v, used)), "{v} {tail:?}");
            assert_eq!(by_byte(&buf), Some((v, used)));
        }
    }
    // Every length told, with and without bytes after it (or before it) to read a
    // word from.
    for v in [
        0u64,
        1,
        127,
        128,
        300,
        1 << 35,
        (1 << 56) - 1,
        1 << 56,
        u64::MAX,
    ] {
        let mut exact = Vec::new();
        encode_varint(v, &mut exact);
        // Bytes before it too, for the word that ends with the varint.
        for (head, tail) in [vec![], vec![0xff; 12], vec![0x00; 12]]
            .into_iter()
            .flat_map(|tail| [(vec![], tail.clone()), (vec![0xd5; 9], tail)])
        {
            let buf = [&head[..], &exact[..], &tail[..]].concat();
            let from = head.len();
            for len in 0..=(buf.len() - from).min(11) {
                let told = varint_at(&buf, from, len);
                let general = match decode_varint(&buf[from..from + len]) {
                    Ok((value, used)) if used == len => Some(value),
                    _ => None,
                };
                assert_eq!(told, general, "{v} {len} {head:?} {tail:?}");
            }
            assert_eq!(varint_at(&buf, from, exact.len()), Some(v));
        }
    }
    // A tenth byte past the top bit (encoders never write one): its low bit only.
    let mut wide = vec![0xff; 9];
    wide.extend([0x7f, 0x01, 0x02]);
    assert_eq!(decode_varint(&wide), Ok((u64::MAX, 10)));
    assert_eq!(by_byte(&wide), Some((u64::MAX, 10)));
    // Overlong and truncated, by word and near the end.
    assert_eq!(decode_varint(&[0xff; 16]), Err(WireError::BadVarint));
    assert_eq!(decode_varint(&[0xff; 10]), Err(WireError::BadVarint));
    assert_eq!(decode_varint(&[0xff; 9]), Err(WireError::Truncated));
    assert_eq!(decode_varint(&[0x80; 3]), Err(WireError::Truncated));
}

#[test]
fn varints_decode_and_reject_overlong() {
    assert_eq!(decode_varint(&[0x96, 0x01]), Ok((150, 2)));
    assert_eq!(decode_varint(&[0xff; 11]), Err(WireError::BadVarint));
    assert_eq!(decode_varint(&[0x80]), Err(WireError::Truncated));
}

/// Events `skip_small_messages` passes over, for every length and id width it
/// reads (and some it leaves to the general decoder): what it passes over is what
/// the general decoder reads as skipped, and it stops where the decoder finds the
/// first event to keep, or a field it does not read itself.
#[test]
fn the_skip_loop_passes_over_what_the_general_decoder_reads_as_skipped() {
    use fields::{XEVENT_METADATA_ID_TAG as ID, XLINE_EVENTS_TAG as EVENTS};
    let event = |id: u64, pad: usize| {
        let mut payload = vec![ID];
        encode_varint(id, &mut payload);
        payload.resize(payload.len() + pad, 0x10);
        let mut field = vec![EVENTS];
        encode_varint(payload.len() as u64, &mut field);
        field.extend(payload);
        field
    };
    let kept = |id: i64| id % 7 == 3;
    for ids in [
        [1u64, 2, 3],
        [200, 5000, 3],
        [130, 20_000, 999_999],
        [4, 300, 10],
    ] {
        for pad in [0usize, 100, 126, 127, 300, 16_300, 16_400] {
            let mut buf: Vec<u8> = ids.iter().flat_map(|&id| event(id, pad)).collect();
            buf.extend([0x08, 0x01]);
            let mut fast = Fields::new(&buf);
            let skipped = fast.skip_small_messages(EVENTS, |id, _| !kept(id));
            let passed = skipped.last;
            // The general decoder, one field at a time.
            let mut slow = Fields::new(&buf);
            let mut last = None;
            let mut first_kept = None;
            loop {
                let at = slow.position();
                match slow.next_field().unwrap() {
                    Some((4, Value::Bytes(b))) => {
                        let id = match Fields::new(b).next_field() {
                            Ok(Some((1, Value::Varint(id)))) => id as i64,
                            other => unreachable!("an event starts with its id: {other:?}"),
                        };
                        if kept(id) {
                            first_kept = Some((b, at));
                            break;
                        }
                        last = Some(b);
                    }
                    _ => {
                        slow.pos = at;
                        break;
                    }
                }
            }
            // The fast loop may stop earlier (a field it leaves to the decoder),
            // never later, and agrees on everything it passed.
            assert!(fast.position() <= slow.position(), "{ids:?} {pad}");
            let short_enough = pad + 4 < 1 << 14;
            let two_byte_ids = ids.iter().all(|&id| id < 1 << 14);
            if short_enough && two_byte_ids {
                assert_eq!(fast.position(), slow.position(), "{ids:?} {pad}");
                assert_eq!(passed, last, "{ids:?} {pad}");
                // The event it stopped at is read, as the decoder reads it.
                assert_eq!(skipped.kept, first_kept, "{ids:?} {pad}");
            } else if fast.position() == slow.position() {
                assert_eq!(passed, last, "{ids:?} {pad}");
                assert_eq!(skipped.kept, first_kept, "{ids:?} {pad}");
            } else {
                assert_eq!(skipped.kept, None, "{ids:?} {pad}");
            }
        }
    }
}

#[test]
fn fields_reject_length_past_end() {
    // field 2, length-delimited, length 5 but only 1 byte follows
    let mut f = Fields::new(&[0x12, 0x05, 0x00]);
    assert_eq!(f.next_field().unwrap_err(), WireError::LengthPastEnd);
}

#[test]
fn stream_reader_walks_fields_across_small_chunks() {
    // field 1 varint 150; field 2 bytes "abc"; field 3 fixed64 7
    let data: Vec<u8> = vec![
        0x08, 0x96, 0x01, 0x12, 0x03, b'a', b'b', b'c', 0x19, 7, 0, 0, 0, 0, 0, 0, 0,
    ];
    let mut r = StreamReader::new(&data, 1);
    let end = data.len() as u64;
    let mut seen = Vec::new();
    while let Some((field, value)) = r.next_field(end).unwrap() {
        match value {
            StreamValue::Bytes { offset, len } => {
                seen.push((field, r.bytes(offset, len).unwrap().to_vec()));
            }
            StreamValue::Varint(v) | StreamValue::Fixed64(v) => {
                seen.push((field, v.to_le_bytes().to_vec()))
            }
            StreamValue::Fixed32(v) => seen.push((field, v.to_le_bytes().to_vec())),
        }
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[1], (2, b"abc".to_vec()));
}

#[test]
fn a_length_past_the_data_is_refused_before_allocating() {
    let data: Vec<u8> = vec![0x12, 0x03, b'a'];
    let mut r = StreamReader::new(&data, 1);
    assert!(r.bytes(2, 1 << 40).is_err());
    assert!(r.bytes(2, 3).is_err());
    assert!(r.bytes(u64::MAX, 2).is_err());
    assert_eq!(r.bytes(2, 1).unwrap(), b"a");
    assert!(read_payload(&data, 2, 2).is_err());
    assert!(read_payload(&data, u64::MAX, 1).is_err());
    assert_eq!(read_payload(&data, 1, 2).unwrap(), vec![3, b'a']);
}

#[test]
fn a_reader_over_a_message_reads_no_further() {
    let data: Vec<u8> = vec![0x08, 0x01, 0x08, 0x02];
    let mut r = StreamReader::over(&data, 1 << 20, 0, 2);
    assert!(matches!(
        r.next_field(2).unwrap(),
        Some((1, StreamValue::Varint(1)))
    ));
    assert!(r.next_field(2).unwrap().is_none());
    assert!(r.window().len() <= 2);
}

/// Passing over many small fields reads through whole chunks, a few reads in all;
/// passing over large ones reads little more than their headers.
#[test]
fn a_reader_passing_over_fields_reads_chunks_of_small_ones_and_little_of_large_ones() {
    use std::cell::Cell;
    /// A source that only copies (no views), counting its reads.
    struct Reads<'b> {
        bytes: &'b [u8],
        calls: Cell<u64>,
        read: Cell<u64>,
    }
    impl ByteSource for Reads<'_> {
        fn len(&self) -> u64 {
            self.bytes.len() as u64
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = ByteSource::read_at(self.bytes, offset, buf)?;
            self.calls.set(self.calls.get() + 1);
            self.read.set(self.read.get() + n as u64);
            Ok(n)
        }
    }
    let chunk = 64usize << 10;
    for (field_len, count) in [(1500usize, 2000usize), (200 << 10, 40)] {
        let mut bytes = Vec::new();
        for _ in 0..count {
            bytes.push(0x1a);
            encode_varint(field_len as u64, &mut bytes);
            bytes.resize(bytes.len() + field_len, 7);
        }
        let total = bytes.len() as u64;
        let src = Reads {
            bytes: &bytes,
            calls: Cell::new(0),
            read: Cell::new(0),
        };
        let mut reader = StreamReader::over(&src, chunk, 0, total);
        let mut fields = 0;
        while let Some((3, StreamValue::Bytes { .. })) = reader.next_field(total).unwrap() {
            fields += 1;
        }
        assert_eq!(fields, count);
        if field_len < chunk {
            let chunks = total.div_ceil(chunk as u64);
            assert!(src.calls.get() <= chunks + 1, "{} reads", src.calls.get());
        } else {
            let little = count as u64 * JUMP_READ as u64 + chunk as u64;
            assert!(src.read.get() <= little, "{} bytes read", src.read.get());
        }
    }
}
