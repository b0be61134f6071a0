//! The published JSON Schema of `oomlens diff` (`schema/oomlens-diff.schema.json`) is
//! the one derived from the comparison model, every field is documented, and real
//! comparisons use exactly the keys it names. Regenerate after a deliberate change
//! with `OOMLENS_WRITE_SCHEMA=1 cargo test --test diff_schema`.

use std::path::Path;

use serde_json::Value;

fn schema_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/oomlens-diff.schema.json")
}

#[test]
fn published_schema_is_the_derived_one() {
    let derived = oomlens::report::diff_json::schema();
    let text = serde_json::to_string_pretty(&derived).unwrap() + "\n";
    if std::env::var_os("OOMLENS_WRITE_SCHEMA").is_some() {
        std::fs::write(schema_path(), &text).unwrap();
    }
    let published = std::fs::read_to_string(schema_path()).expect("schema file");
    assert_eq!(
        published, text,
        "the comparison model changed: regenerate the schema on purpose (see this file's header)"
    );
}

fn keys(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                out.push(k.clone());
                keys(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
        _ => {}
    }
}

/// Every key in a real comparison appears in the schema's definitions.
#[test]
fn comparisons_use_only_keys_the_schema_names() {
    let schema = oomlens::report::diff_json::schema().to_string();
    let pairs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pairs");
    let mut all = Vec::new();
    for pair in ["scan_remat", "donation"] {
        let d = oomlens::diff::compare_paths(
            &pairs.join(pair).join("before"),
            &pairs.join(pair).join("after"),
            &oomlens::diff::DiffOptions::default(),
        )
        .unwrap();
        keys(&oomlens::report::diff_json::to_value(&d), &mut all);
    }
    all.sort();
    all.dedup();
    let provenance = oomlens::report::diff_json::to_value(&oomlens::diff::model::DiffReport {
        schema: String::new(),
        tool: String::new(),
        hosts: Vec::new(),
        hosts_only_before: Vec::new(),
        hosts_only_after: Vec::new(),
    })["provenance"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect::<Vec<_>>();
    for k in all.iter().filter(|k| !provenance.contains(k)) {
        assert!(
            schema.contains(&format!("\"{k}\"")),
            "key {k} is not in the schema"
        );
    }
}

/// Every property of every definition carries a description (the model's doc
/// comments), except the few whose name says all (`before`/`after`/`delta` of a
/// figure, and the report model's own fields, documented in its schema).
#[test]
fn every_diff_field_is_documented() {
    let schema = oomlens::report::diff_json::schema();
    let defs = schema["definitions"].as_object().unwrap();
    let report_defs: Vec<String> = oomlens::report::json::schema()["definitions"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut missing = Vec::new();
    for (name, def) in defs {
        if report_defs.contains(name) {
            continue;
        }
        let Some(props) = def["properties"].as_object() else {
            continue;
        };
        for (field, p) in props {
            let self_evident = matches!(
                field.as_str(),
                "before" | "after" | "delta" | "schema" | "tool"
            ) && name != "Diff";
            if p.get("description").is_none() && !self_evident {
                missing.push(format!("{name}.{field}"));
            }
        }
    }
    assert!(missing.is_empty(), "undocumented fields: {missing:?}");
}
