//! The JSON form of a comparison (schema `oomlens-diff/1`,
//! `schema/oomlens-diff.schema.json`). With one host compared, its fields sit at the
//! top level beside `schema`; with several, they are under `hosts`.

use serde_json::{json, Map, Value};

use crate::diff::model::{Diff, DiffReport, SCHEMA};

/// The comparison as a JSON value (`oomlens-diff/1`).
pub fn to_value(diff: &DiffReport) -> Value {
    let mut top = Map::new();
    top.insert("schema".into(), json!(SCHEMA));
    top.insert("tool".into(), json!(diff.tool));
    top.insert(
        "provenance".into(),
        json!({
            "plan": "read",
            "delta": "read",
            "buffers": "read",
            "scan_stacks": "read",
            "runtime": "measured",
            "estimated_saving_bytes": "estimated",
            "actual_saving_bytes": "read",
            "actual_in_use_saving_bytes": "measured",
        }),
    );
    top.insert("hosts_only_before".into(), json!(diff.hosts_only_before));
    top.insert("hosts_only_after".into(), json!(diff.hosts_only_after));
    match diff.hosts.as_slice() {
        [one] => {
            if let Ok(Value::Object(fields)) = serde_json::to_value(one) {
                top.extend(fields);
            }
        }
        many => {
            top.insert(
                "hosts".into(),
                serde_json::to_value(many).unwrap_or(Value::Null),
            );
        }
    }
    Value::Object(top)
}

/// The comparison as pretty-printed JSON.
pub fn render(diff: &DiffReport) -> String {
    super::json::pretty(&to_value(diff))
}

/// The JSON Schema of [`render`]'s output (`schema/oomlens-diff.schema.json`).
pub fn schema() -> Value {
    use schemars::JsonSchema;

    /// A comparison of one host: its fields at the top level.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct OneHost {
        /// Always "oomlens-diff/1".
        schema: String,
        tool: String,
        /// Which label (measured / read / estimated) each part of the comparison carries.
        provenance: std::collections::BTreeMap<String, String>,
        /// Hosts only the before run has: not compared.
        hosts_only_before: Vec<String>,
        /// Hosts only the after run has: not compared.
        hosts_only_after: Vec<String>,
        #[serde(flatten)]
        host: Diff,
    }
    /// A comparison of several hosts, host by host.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct ManyHosts {
        schema: String,
        tool: String,
        provenance: std::collections::BTreeMap<String, String>,
        hosts_only_before: Vec<String>,
        hosts_only_after: Vec<String>,
        /// One comparison per host both runs have.
        hosts: Vec<Diff>,
    }
    /// Two runs of a JAX program compared (schema "oomlens-diff/1").
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(untagged)]
    enum OomlensDiff {
        OneHost(Box<OneHost>),
        ManyHosts(ManyHosts),
    }
    serde_json::to_value(schemars::schema_for!(OomlensDiff)).unwrap_or(Value::Null)
}
