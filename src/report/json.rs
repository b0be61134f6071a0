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
