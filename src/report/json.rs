//! The JSON form of the report (schema `oomlens/1`). With one host, the host's fields
//! sit at the top level beside `schema`; with several, they are under `hosts`.

use serde_json::{json, Map, Value};

use super::model::{Report, SCHEMA};

pub fn to_value(report: &Report) -> Value {
    let mut top = Map::new();
    top.insert("schema".into(), json!(SCHEMA));
    top.insert("tool".into(), json!(report.tool));
    top.insert(
        "provenance".into(),
        json!({"plan": "read", "runtime": "measured", "saving_bytes": "estimated", "growth_ratio_to_outputs": "estimated"}),
    );
    match report.hosts.as_slice() {
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

pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(&to_value(report))
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// The JSON Schema of [`render`]'s output (`schema/oomlens-report.schema.json`).
pub fn schema() -> Value {
    use schemars::JsonSchema;

    /// A report on one host: the host's fields at the top level.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct OneHost {
        /// Always "oomlens/1".
        schema: String,
        tool: String,
        /// Which label (measured / read / estimated) each part of the report carries.
        provenance: std::collections::BTreeMap<String, String>,
        #[serde(flatten)]
        host: super::model::HostReport,
    }
    /// A report on several hosts.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct ManyHosts {
        schema: String,
        tool: String,
        provenance: std::collections::BTreeMap<String, String>,
        hosts: Vec<super::model::HostReport>,
    }
    /// The oomlens report (schema "oomlens/1").
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    #[serde(untagged)]
    enum OomlensReport {
        OneHost(Box<OneHost>),
        ManyHosts(ManyHosts),
    }
    serde_json::to_value(schemars::schema_for!(OomlensReport)).unwrap_or(Value::Null)
}
