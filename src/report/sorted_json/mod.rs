//! Pretty JSON with every object's keys sorted, written from the model without building
//! a `serde_json::Value` first. The report's JSON has always been rendered through a
//! `Value` (whose objects sort their keys); for a capture with tens of thousands of
//! launches that tree is millions of small allocations, most of the time spent
//! rendering. Here each scalar is written once, as serde_json writes it, into one
//! buffer; objects and arrays keep only those byte ranges and their keys, are sorted
//! when complete, and are written out pretty. The output is byte for byte
//! `serde_json::to_string_pretty(&serde_json::to_value(x))`, which the tests check on
//! every report; what this writer does not handle (a map key that is not a string or a
//! number) is an error, and the caller falls back to the `Value`.

mod serializer;

use serde::Serialize;
use serde_json::Error;

use serializer::NodeSerializer;

/// A JSON value whose scalars lie, already written, in a [`Tree`]'s buffer.
pub(crate) enum Node {
    /// A scalar's bytes in the buffer.
    Scalar(std::ops::Range<usize>),
    Array(Vec<Node>),
    /// Entries in the order given until [`Node::sorted`].
    Object(Vec<(Key, Node)>),
}

/// An object's key: a struct field's name, or a map's key.
pub(crate) enum Key {
    Field(&'static str),
    Owned(String),
}

impl Key {
    fn as_str(&self) -> &str {
        match self {
            Key::Field(k) => k,
            Key::Owned(k) => k,
        }
    }
}

impl Node {
    /// The object's entries sorted by key, the last of a repeated key kept (what a
    /// `serde_json::Map` does with them).
    fn sorted(mut entries: Vec<(Key, Node)>) -> Node {
        entries.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        // Only a map can repeat a key: the entries of nearly every object stay where
        // they are.
        let repeats = entries
            .windows(2)
            .any(|pair| matches!(pair, [a, b] if a.0.as_str() == b.0.as_str()));
        if !repeats {
            return Node::Object(entries);
        }
        let mut kept: Vec<(Key, Node)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match kept.last_mut() {
                Some(last) if last.0.as_str() == entry.0.as_str() => *last = entry,
                _ => kept.push(entry),
            }
        }
        Node::Object(kept)
    }
}

/// The buffer the scalars are written to, and what writes nodes out.
#[derive(Default)]
pub(crate) struct Tree {
    scalars: Vec<u8>,
}

impl Tree {
    /// `value` as a node, its objects' keys sorted.
    pub(crate) fn node<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<Node, Error> {
        value.serialize(NodeSerializer { tree: self })
    }

    /// An object of `entries` (in the order a `Map` would receive them), sorted.
    pub(crate) fn object(entries: Vec<(Key, Node)>) -> Node {
        Node::sorted(entries)
    }

    /// About the bytes a tree of this buffer's nodes holds: its scalars, and nodes in
    /// proportion.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.scalars.capacity()
    }

    /// `node` pretty-printed as serde_json's pretty printer writes it.
    pub(crate) fn pretty(&self, node: &Node) -> String {
        self.pretty_on(node, Threads::One)
    }

    /// [`Tree::pretty`], on two threads where `threads` allows it and the output is
    /// large: the second writes the later half of the largest array (a report's
    /// launches), which the first appends when it gets there. The bytes are the same.
    pub(crate) fn pretty_on(&self, node: &Node, threads: Threads) -> String {
        let mut out = Vec::with_capacity(self.scalars.len().saturating_mul(2));
        let shared = match threads {
            Threads::Two if self.scalars.len() >= SHARED_WRITE_FROM_BYTES => {
                largest_array(node, 0).filter(|(items, _)| items.len() >= 2)
            }
            _ => None,
        };
        match shared {
            #[cfg(not(target_arch = "wasm32"))]
            Some((items, depth)) => self.write_shared(node, items, depth, &mut out),
            _ => self.write(node, 0, &mut out, &mut None),
        }
        // Every byte written is a scalar serde_json wrote, a key it escaped, or ASCII.
        String::from_utf8(out).unwrap_or_default()
    }

    /// Writes `node` with the later half of `items` (an array at `depth` in it) written
    /// by a second thread meanwhile.
    #[cfg(not(target_arch = "wasm32"))]
    fn write_shared(&self, node: &Node, items: &[Node], depth: usize, out: &mut Vec<u8>) {
        let half = items.len() / 2;
        let later = items.get(half..).unwrap_or_default();
        let room = out.capacity() / 2;
        std::thread::scope(|scope| {
            let written = scope.spawn(move || {
                let mut tail = Vec::with_capacity(room);
                self.write_items(later, depth, &mut tail);
                tail
            });
            let mut splice = Some(Splice {
                array: items.as_ptr(),
                half,
                tail: written,
            });
            self.write(node, 0, out, &mut splice);
        });
    }

    /// The items of an array at `depth`, each after its separator and indentation as
    /// the array writes them after an earlier item.
    fn write_items(&self, items: &[Node], depth: usize, out: &mut Vec<u8>) {
        for item in items {
            out.extend_from_slice(b",\n");
            indent(out, depth + 1);
            self.write(item, depth + 1, out, &mut None);
        }
    }

    fn write(&self, node: &Node, depth: usize, out: &mut Vec<u8>, splice: &mut Option<Splice<'_>>) {
        match node {
            Node::Scalar(range) => {
                out.extend_from_slice(self.scalars.get(range.clone()).unwrap_or_default())
            }
            Node::Array(items) if items.is_empty() => out.extend_from_slice(b"[]"),
            Node::Array(items) => {
                let spliced = splice
                    .take_if(|s| std::ptr::eq(s.array, items.as_ptr()))
                    .map(|s| (s.half, s.tail));
                let own = spliced.as_ref().map_or(items.len(), |(half, _)| *half);
                out.push(b'[');
                for (i, item) in items.iter().take(own).enumerate() {
                    out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
                    indent(out, depth + 1);
                    self.write(item, depth + 1, out, splice);
                }
                if let Some((half, tail)) = spliced {
                    let rest = items.get(half..).unwrap_or_default();
                    match tail.join().ok() {
                        Some(written) => out.extend_from_slice(&written),
                        // The other thread failed: its half is written here instead.
                        None => self.write_items(rest, depth, out),
                    }
                }
                out.push(b'\n');
                indent(out, depth);
                out.push(b']');
            }
            Node::Object(entries) if entries.is_empty() => out.extend_from_slice(b"{}"),
            Node::Object(entries) => {
                out.push(b'{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
                    indent(out, depth + 1);
                    write_key(out, key.as_str());
                    out.extend_from_slice(b": ");
                    self.write(value, depth + 1, out, splice);
                }
                out.push(b'\n');
                indent(out, depth);
                out.push(b'}');
            }
        }
    }

    /// Writes a scalar as serde_json writes it.
    fn scalar<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<Node, Error> {
        let start = self.scalars.len();
        serde_json::to_writer(&mut self.scalars, value)?;
        Ok(Node::Scalar(start..self.scalars.len()))
    }
}

/// Whether [`Tree::pretty_on`] may write on a second thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Threads {
    One,
    /// Only the command line writes on two threads; the page's worker has one.
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    Two,
}

/// Output from which a second thread's share of the writing pays for its start: about
/// a megabyte of scalars, a few milliseconds of writing.
const SHARED_WRITE_FROM_BYTES: usize = 1 << 20;

/// An array whose later items, from `half` on, another thread writes: `tail` gives
/// their bytes when joined.
struct Splice<'scope> {
    array: *const Node,
    half: usize,
    tail: std::thread::ScopedJoinHandle<'scope, Vec<u8>>,
}

/// The array with the most items among the values of `node`'s objects (not inside
/// arrays, whose items are alike), and its depth.
fn largest_array(node: &Node, depth: usize) -> Option<(&[Node], usize)> {
    match node {
        Node::Array(items) => Some((items.as_slice(), depth)),
        Node::Object(entries) => entries
            .iter()
            .filter_map(|(_, value)| largest_array(value, depth + 1))
            .max_by_key(|(items, _)| items.len()),
        Node::Scalar(_) => None,
    }
}

fn indent(out: &mut Vec<u8>, depth: usize) {
    const SPACES: &[u8] = b"                                                                ";
    let mut left = depth.saturating_mul(2);
    while left > 0 {
        let run = SPACES.get(..left.min(SPACES.len())).unwrap_or_default();
        out.extend_from_slice(run);
        left = left.saturating_sub(run.len().max(1));
    }
}

/// An object's key as serde_json writes a string: as it is, in quotes, unless it holds
/// what serde_json escapes (a quote, a backslash, a control character).
fn write_key(out: &mut Vec<u8>, key: &str) {
    if key.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.push(b'"');
    } else {
        // Writing into a Vec does not fail.
        let _ = serde_json::to_writer(&mut *out, key);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use serde::Serialize;
    use serde_json::json;
    use std::collections::{BTreeMap, HashMap};

    use super::*;

    /// What the report's JSON has always been: through a `Value`.
    fn through_value<T: Serialize + ?Sized>(value: &T) -> String {
        serde_json::to_string_pretty(&serde_json::to_value(value).unwrap()).unwrap()
    }

    fn sorted<T: Serialize + ?Sized>(value: &T) -> String {
        let mut tree = Tree::default();
        let node = tree.node(value).unwrap();
        tree.pretty(&node)
    }

    #[derive(Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(i32, f32),
        Struct { z: bool, a: Option<String> },
    }

    #[derive(Serialize)]
    struct Fields {
        zeta: Vec<Shape>,
        alpha: f64,
        #[serde(flatten)]
        more: BTreeMap<String, i64>,
        empty: Vec<u8>,
        nothing: HashMap<String, u8>,
        unit: (),
        bytes: serde_bytes_like::Bytes,
        nan: f64,
        keys: BTreeMap<u32, &'static str>,
    }

    /// Bytes serialized as bytes (as `serde_bytes` would), without the dependency.
    mod serde_bytes_like {
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    /// Every shape serde gives a value in writes what the `Value` path writes:
    /// variants, floats (f32 widened, NaN as null), escapes, flattened maps whose keys
    /// sort among the struct's, empty containers, numeric map keys.
    #[test]
    fn every_serde_shape_is_written_as_through_a_value() {
        let value = Fields {
            zeta: vec![
                Shape::Unit,
                Shape::Newtype(7),
                Shape::Tuple(-3, 0.1),
                Shape::Struct {
                    z: true,
                    a: Some("quote \" backslash \\ tab \t é \u{1}".into()),
                },
                Shape::Struct { z: false, a: None },
            ],
            alpha: 1.0,
            more: [("beta".to_string(), 2), ("empty".to_string(), 3)].into(),
            empty: vec![],
            nothing: HashMap::new(),
            unit: (),
            bytes: serde_bytes_like::Bytes(vec![0, 255]),
            nan: f64::NAN,
            keys: [(10, "ten"), (9, "nine")].into(),
        };
        assert_eq!(sorted(&value), through_value(&value));
        let values = [
            json!(null),
            json!([]),
            json!({}),
            json!([[], {}, [1, [2, {"b": 1, "a": [true, false]}]]]),
            json!({"b": {"d": 1e300, "c": -0.0}, "a": "x", "": 5, "ä": 1, "Z": 2}),
            json!(u64::MAX),
            json!(i64::MIN),
            json!({"quote\"": 1, "back\\slash": 2, "ctl\u{1}": 3, "tab\t": 4, "\u{7f}": 5, "é": 6}),
        ];
        // Deeper than the indentation written at once.
        let mut deep = json!({"leaf": [1]});
        for _ in 0..40 {
            deep = json!([deep, {"k": deep.clone()}]);
            if deep.to_string().len() > 1 << 16 {
                deep = json!([deep[0].clone()]);
            }
        }
        assert_eq!(sorted(&deep), through_value(&deep));
        for v in &values {
            assert_eq!(sorted(v), through_value(v), "{v}");
        }
    }

    /// Written on two threads, a large value is the same bytes as on one: the largest
    /// array (nested, beside a smaller one and scalars) split between them, whether its
    /// items are objects, arrays or scalars, and with as few items as can be split.
    #[test]
    fn writing_on_two_threads_gives_the_same_bytes() {
        let launch = |i: u64| json!({"start_ns": i as f64 * 1.5, "module": format!("jit_step_{i}"), "in_use": [i, i + 1], "ok": i % 2 == 0});
        let large = json!({
            "zeta": "x".repeat(SHARED_WRITE_FROM_BYTES),
            "runtime": {
                "launches": (0..5001).map(launch).collect::<Vec<_>>(),
                "points": (0..100).collect::<Vec<_>>(),
            },
            "alpha": [[1, 2], [3]],
        });
        let scalars = json!({"big": "y".repeat(SHARED_WRITE_FROM_BYTES), "items": [1, 2, 3]});
        let two_items =
            json!({"pad": "z".repeat(SHARED_WRITE_FROM_BYTES), "pair": [{"b": 1}, {"a": [2]}]});
        for value in [&large, &scalars, &two_items] {
            let mut tree = Tree::default();
            let node = tree.node(value).unwrap();
            assert!(tree.scalars.len() >= SHARED_WRITE_FROM_BYTES);
            assert!(largest_array(&node, 0).is_some_and(|(items, _)| items.len() >= 2));
            let two = tree.pretty_on(&node, Threads::Two);
            assert_eq!(two, tree.pretty(&node));
            assert_eq!(two, through_value(value));
        }
    }

    /// The report on every real capture, a folder of several of them, and with a
    /// pasted error: the same bytes as through a `Value`.
    #[test]
    fn every_real_report_renders_as_through_a_value() {
        let options = crate::Options::default();
        let mut hosts = Vec::new();
        for path in crate::real_captures::all() {
            let src = crate::source::FileSource::open(&path).expect("open");
            let Ok(host) = crate::analyze(&src, "host", "capture", &options, &mut |_, _, _| {})
            else {
                continue;
            };
            let report = crate::report(vec![host.clone()]);
            let json = crate::report::json::render(&report);
            let value = crate::report::json::to_value(&report);
            assert_eq!(
                json,
                format!("{}\n", through_value(&value)),
                "{}",
                path.display()
            );
            hosts.push(host);
        }
        assert!(hosts.len() >= 3, "only {} real captures", hosts.len());
        let report = crate::report(hosts);
        let value = crate::report::json::to_value(&report);
        assert_eq!(
            crate::report::json::render(&report),
            format!("{}\n", through_value(&value))
        );
    }
}
