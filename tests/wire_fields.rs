//! The field numbers and keys the wire readers use (`oomlens::wire::fields`) against
//! the `.proto` files prost compiles (`proto/`): every constant names a field that
//! exists, with that number and a key of the wire type its proto type implies; every
//! field of `proto/xplane.proto` (the schema read by hand) has its constant; the
//! readers spell no bare field number or key.

use std::collections::BTreeMap;
use std::path::Path;

use oomlens::wire::fields::{self, ALL, TAGS};

/// One field declared in a `.proto` file.
#[derive(Debug, Clone)]
struct ProtoField {
    file: String,
    /// The message, nested ones as `Outer.Inner`.
    message: String,
    name: String,
    number: u32,
    /// The declared type (`int64`, `string`, a message name, `map`).
    ty: String,
    repeated: bool,
}

/// Reads the fields of one `.proto` file, line by line: enough for the subset of the
/// language our files use (one declaration per line; messages, nested messages,
/// `oneof`, `map<…>`, `repeated`/`optional`). A line it does not understand fails the
/// test rather than being skipped.
fn parse_proto(path: &Path) -> Vec<ProtoField> {
    let text = std::fs::read_to_string(path).unwrap();
    let file = path.file_name().unwrap().to_string_lossy().into_owned();
    // Enclosing scopes: Some(name) for a message, None for a oneof or an enum.
    let mut scopes: Vec<Option<String>> = Vec::new();
    let mut in_enum = 0usize;
    let mut out = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split("//").next().unwrap().trim();
        let at = || format!("{file}:{}: {raw}", n + 1);
        if line.is_empty()
            || line.starts_with("syntax ")
            || line.starts_with("package ")
            || line.starts_with("import ")
            || line.starts_with("option ")
            || line.starts_with("reserved ")
        {
            continue;
        }
        if line == "}" {
            if scopes.pop().expect("a } without a scope").is_none() && in_enum > 0 {
                in_enum -= 1;
            }
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["message", name, "{"] => {
                scopes.push(Some((*name).to_owned()));
                continue;
            }
            ["oneof", _, "{"] => {
                scopes.push(None);
                continue;
            }
            ["enum", _, "{"] => {
                scopes.push(None);
                in_enum += 1;
                continue;
            }
            _ => {}
        }
        if in_enum > 0 {
            continue;
        }
        let message: Vec<&str> = scopes.iter().flatten().map(String::as_str).collect();
        assert!(!message.is_empty(), "a field outside a message at {}", at());
        let decl = line
            .strip_suffix(';')
            .unwrap_or_else(|| panic!("not a declaration: {}", at()));
        let (left, number) = decl
            .split_once('=')
            .unwrap_or_else(|| panic!("no field number: {}", at()));
        let number: u32 = number
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no field number: {}", at()));
        let (ty, name, repeated) = if let Some(rest) = left.trim().strip_prefix("map<") {
            let (_, name) = rest
                .split_once('>')
                .unwrap_or_else(|| panic!("a map without >: {}", at()));
            ("map".to_owned(), name.trim().to_owned(), true)
        } else {
            let mut words: Vec<&str> = left.split_whitespace().collect();
            let repeated = words.first() == Some(&"repeated");
            if matches!(words.first(), Some(&"repeated") | Some(&"optional")) {
                words.remove(0);
            }
            match words.as_slice() {
                [ty, name] => ((*ty).to_owned(), (*name).to_owned(), repeated),
                _ => panic!("not a field: {}", at()),
            }
        };
        out.push(ProtoField {
            file: file.clone(),
            message: message.join("."),
            name,
            number,
            ty,
            repeated,
        });
    }
    assert!(scopes.is_empty(), "{file}: a scope is not closed");
    out
}

fn protos() -> Vec<ProtoField> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("proto");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "proto"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "proto/ holds {files:?}");
    files.iter().flat_map(|f| parse_proto(f)).collect()
}

/// `XEventMetadata` → `XEVENT_METADATA`, `Profile` → `PROFILE`, `MapEntry` → `MAP_ENTRY`.
fn screaming(camel: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in camel.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            out.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// The name a constant for `message.field` must have.
fn expected_name(message: &str, field: &str) -> String {
    // `XEVENT_METADATA_ID` and `XSTAT_METADATA_ID` are the event's and the stat's
    // `metadata_id`; the metadata messages' own ids are `…_OWN_ID`.
    if matches!(message, "XEventMetadata" | "XStatMetadata") && field == "id" {
        return format!("{}_OWN_ID", screaming(message));
    }
    format!("{}_{}", screaming(message), field.to_ascii_uppercase())
}

/// The wire type (as the low bits of a key) a field of this proto type is written with.
fn wire_type(field: &ProtoField) -> u8 {
    match field.ty.as_str() {
        // Packed, in proto3, when repeated.
        "int32" | "int64" | "uint32" | "uint64" | "sint32" | "sint64" | "bool"
            if !field.repeated =>
        {
            0
        }
        "double" | "fixed64" | "sfixed64" if !field.repeated => 1,
        "float" | "fixed32" | "sfixed32" if !field.repeated => 5,
        // string, bytes, messages, maps, packed numbers.
        _ => 2,
    }
}

/// The field a constant stands for. `MapEntry` is protobuf's encoding of a `map<K, V>`
/// field: a repeated message whose key is field 1 and value field 2.
fn field_of(all: &[ProtoField], message: &str, name: &str) -> Result<ProtoField, String> {
    if message == "MapEntry" {
        let (number, ty) = match name {
            "key" => (1, "int64"),
            "value" => (2, "message"),
            _ => return Err(format!("a map entry has no field {name}")),
        };
        return Ok(ProtoField {
            file: "(protobuf's map encoding)".into(),
            message: message.into(),
            name: name.into(),
            number,
            ty: ty.into(),
            repeated: false,
        });
    }
    let found: Vec<&ProtoField> = all
        .iter()
        .filter(|f| f.message == message && f.name == name)
        .collect();
    match found.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(format!("no field {message}.{name} in proto/")),
        _ => Err(format!("{message}.{name} is declared more than once")),
    }
}

#[test]
fn every_field_constant_has_the_number_of_its_field_in_proto() {
    let all = protos();
    let mut wrong = Vec::new();
    for c in ALL {
        match field_of(&all, c.message, c.field) {
            Ok(f) if f.number != c.number => wrong.push(format!(
                "{} = {} but {}.{} is {} in {}",
                c.constant, c.number, c.message, c.field, f.number, f.file
            )),
            Ok(_) => {}
            Err(e) => wrong.push(format!("{}: {e}", c.constant)),
        }
        let name = expected_name(c.message, c.field);
        if c.constant != name {
            wrong.push(format!(
                "{} stands for {}.{}: name it {name}",
                c.constant, c.message, c.field
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(ALL.len() >= 40, "{} constants", ALL.len());
}

#[test]
fn every_key_is_its_fields_number_and_wire_type() {
    let all = protos();
    let by_name: BTreeMap<&str, _> = ALL.iter().map(|c| (c.constant, c)).collect();
    let mut wrong = Vec::new();
    for t in TAGS {
        let Some(c) = by_name.get(t.field) else {
            wrong.push(format!("{}: no field constant {}", t.constant, t.field));
            continue;
        };
        if t.constant != format!("{}_TAG", t.field) {
            wrong.push(format!("{} is made from {}", t.constant, t.field));
        }
        let f = field_of(&all, c.message, c.field).unwrap();
        let expected = (f.number << 3) as u8 | wire_type(&f);
        if t.tag != expected {
            wrong.push(format!(
                "{} = {:#04x}, but {}.{} ({}{} = {}) is keyed {expected:#04x}",
                t.constant,
                t.tag,
                c.message,
                c.field,
                if f.repeated { "repeated " } else { "" },
                f.ty,
                f.number
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_field_of_the_hand_read_schema_has_a_constant() {
    let all = protos();
    let missing: Vec<String> = all
        .iter()
        .filter(|f| f.file == "xplane.proto")
        .filter(|f| {
            !ALL.iter()
                .any(|c| c.message == f.message && c.field == f.name)
        })
        .map(|f| format!("{}.{} = {}", f.message, f.name, f.number))
        .collect();
    assert!(
        missing.is_empty(),
        "fields of proto/xplane.proto without a constant in src/wire/fields.rs: {missing:?}"
    );
    // Its maps are read as entries of MAP_ENTRY_KEY and MAP_ENTRY_VALUE.
    let maps = all
        .iter()
        .filter(|f| f.file == "xplane.proto" && f.ty == "map")
        .count();
    assert_eq!(maps, 2);
    assert_eq!((fields::MAP_ENTRY_KEY, fields::MAP_ENTRY_VALUE), (1, 2));
}

/// The other schemas are decoded by prost from the same files (and the pprof profile
/// is walked by hand only to bound what decoding it allocates, through the constants
/// checked above): build.rs must compile every file of proto/.
#[test]
fn the_schemas_without_constants_are_compiled_by_prost() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let build = std::fs::read_to_string(root.join("build.rs")).unwrap();
    for entry in std::fs::read_dir(root.join("proto")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".proto") {
            assert!(
                build.contains(&format!("\"proto/{name}\"")),
                "build.rs does not compile proto/{name}"
            );
        }
    }
    let hand_read: Vec<&str> = ALL.iter().map(|c| c.message).collect();
    let all = protos();
    for f in all.iter().filter(|f| f.file == "hlo.proto") {
        assert!(
            !hand_read.contains(&f.message.as_str()),
            "{} is read by prost, not by hand",
            f.message
        );
    }
}

#[test]
fn the_first_field_past_each_message_is_one_past_its_highest() {
    let all = protos();
    let past = |message: &str| {
        all.iter()
            .filter(|f| f.file == "xplane.proto" && f.message == message)
            .map(|f| f.number)
            .max()
            .unwrap()
            + 1
    };
    assert_eq!(fields::XEVENT_METADATA_PAST_LAST, past("XEventMetadata"));
    assert_eq!(fields::XSTAT_METADATA_PAST_LAST, past("XStatMetadata"));
    assert_eq!(fields::XSTAT_PAST_LAST, past("XStat"));
}

/// The readers' code (their unit tests apart, inline or in a `tests.rs`) matches no bare field number against a
/// wire value and spells no one-byte key as a literal: they use `wire::fields`.
#[test]
fn the_readers_spell_no_bare_field_numbers_or_keys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        root.join("src/wire.rs"),
        root.join("src/evidence/device_profile/budget.rs"),
    ];
    // Every file under src/capture, in its folders too.
    let mut dirs = vec![root.join("src/capture")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if !path.ends_with("tests.rs") {
                // A `tests.rs` holds its folder's unit tests.
                files.push(path);
            }
        }
    }
    assert!(files
        .iter()
        .any(|f| f.ends_with("capture/plane/segments.rs")));
    // Every one-byte key a field of number 1 to 15 can have.
    let keys: Vec<String> = (1u8..=15)
        .flat_map(|f| [0u8, 1, 2, 5].map(|w| format!("0x{:02x}", (f << 3) | w)))
        .collect();
    let mut found = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap();
            let at = format!("{}:{}: {}", path.display(), n + 1, line.trim());
            let lower = line.to_ascii_lowercase();
            if keys.iter().any(|k| {
                lower.match_indices(k.as_str()).any(|(i, _)| {
                    !lower[i + k.len()..].starts_with(|c: char| c.is_ascii_alphanumeric())
                })
            }) {
                found.push(at.clone());
            }
            // `(3, StreamValue::…)`, `(2..=4 | 6, Value::…)`, `Some((4, Value::…))`.
            for value in [", Value::", ", StreamValue::"] {
                for (i, _) in line.match_indices(value) {
                    let before = &line[..i];
                    let pattern = &before[before.rfind('(').map_or(0, |p| p + 1)..];
                    let bare = !pattern.trim().is_empty()
                        && pattern
                            .chars()
                            .all(|c| c.is_ascii_digit() || " .=|".contains(c));
                    if bare {
                        found.push(at.clone());
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "bare field numbers or keys (use oomlens::wire::fields):\n{}",
        found.join("\n")
    );
}
