//! The published JSON Schema (`schema/oomlens-report.schema.json`) is the one derived
//! from the report model, and real reports use exactly the keys it names.
//! Regenerate after a deliberate change with `OOMLENS_WRITE_SCHEMA=1 cargo test --test schema`.

use std::path::Path;

use serde_json::Value;

fn schema_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/oomlens-report.schema.json")
}

#[test]
fn published_schema_is_the_derived_one() {
    let derived = oomlens::report::json::schema();
    let text = serde_json::to_string_pretty(&derived).unwrap() + "\n";
    if std::env::var_os("OOMLENS_WRITE_SCHEMA").is_some() {
        std::fs::write(schema_path(), &text).unwrap();
    }
    let published = std::fs::read_to_string(schema_path()).expect("schema file");
    assert_eq!(
        published, text,
        "the report model changed: regenerate the schema on purpose (see this file's header)"
    );
}

/// Every key in a real report appears in the schema's definitions.
#[test]
fn reports_use_only_keys_the_schema_names() {
    let schema = oomlens::report::json::schema();
    let text = schema.to_string();
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/attention_train/attention_train.xplane.pb");
    let report = oomlens::analyze_path(&file, &oomlens::Options::default()).unwrap();
    // A report joining every kind of input: a capture, its XLA dump, an error message
    // (whose listing and allocator fill every part of `error`), device memory profiles.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let joined = oomlens::analyze_inputs(
        &[
            fixtures.join("dump_attention_train"),
            fixtures.join("errors/22-jax-13428-gpu-peak-buffers-cut.txt"),
            fixtures.join("profiles_leak"),
        ],
        &oomlens::Options {
            error_text: Some(
                std::fs::read_to_string(fixtures.join("errors/29-posecnn-79-bfc-stats.txt"))
                    .unwrap(),
            ),
            ..Default::default()
        },
    )
    .unwrap();
    let mut value = oomlens::report::json::to_value(&report);
    value["joined"] = oomlens::report::json::to_value(&joined);
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
    let mut all = Vec::new();
    keys(&value, &mut all);
    all.sort();
    all.dedup();
    let provenance_keys = [
        "plan",
        "runtime",
        "saving_bytes",
        "growth_ratio_to_outputs",
        "joined",
    ];
    for k in all
        .iter()
        .filter(|k| !provenance_keys.contains(&k.as_str()))
    {
        assert!(
            text.contains(&format!("\"{k}\"")),
            "key {k} is not in the schema"
        );
    }
    for required in [
        "schema",
        "modules",
        "selected_module",
        "diagnosis",
        "argument_bytes",
        "peak_bytes",
        "live_at_peak",
        "plan_source",
        "profiles",
        "growth",
        "inputs",
        "matched_part",
        "allocations",
    ] {
        assert!(
            all.contains(&required.to_owned()),
            "{required} present in a report"
        );
    }
}
