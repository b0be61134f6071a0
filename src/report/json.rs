//! The JSON form of the report (schema `oomlens/1`). With one host, the host's fields
//! sit at the top level beside `schema`; with several, they are under `hosts`.

use serde_json::{json, Map, Value};

use super::model::{Report, SCHEMA};
pub(crate) use super::sorted_json::Threads;
use super::sorted_json::{Key, Node, Tree};

/// Which label each part of the report carries (`provenance`).
fn provenance() -> Value {
    json!({"plan": "read", "runtime": "measured", "saving_bytes": "estimated", "growth_ratio_to_outputs": "estimated"})
}

/// The report as a JSON value (`oomlens/1`): with one host, its fields at the top level.
pub fn to_value(report: &Report) -> Value {
    let mut top = Map::new();
    top.insert("schema".into(), json!(SCHEMA));
    top.insert("tool".into(), json!(report.tool));
    top.insert("provenance".into(), provenance());
    match report.hosts.as_slice() {
        [one] if report.hosts_summary.is_empty() => {
            if let Ok(Value::Object(fields)) = serde_json::to_value(one) {
                top.extend(fields);
            }
        }
        many => {
            top.insert(
                "hosts".into(),
                serde_json::to_value(many).unwrap_or(Value::Null),
            );
            top.insert(
                "hosts_summary".into(),
                serde_json::to_value(&report.hosts_summary).unwrap_or(Value::Null),
            );
        }
    }
    Value::Object(top)
}

/// One host's report as it appears in `hosts[]` of [`render`]'s output: pretty, each
/// line indented as an element of that array. [`write_folder`] joins these.
pub fn host_fragment(host: &super::model::HostReport) -> String {
    // Keys sorted, as [`to_value`]'s `Value` sorts them.
    let mut tree = Tree::default();
    let body = match tree.node(host) {
        Ok(node) => tree.pretty(&node),
        Err(_) => serde_json::to_value(host)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")),
    };
    let mut out = String::with_capacity(body.len() + body.len() / 8);
    for (i, line) in body.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

/// [`render`] of a folder whose host reports were written out one by one as
/// [`host_fragment`]s: `summary` is the report without its hosts (their summary rows
/// only), and `host(i)` gives the i-th fragment kept, in host order, until `None`. The
/// output is byte for byte what [`render`] gives with the hosts in memory.
pub fn write_folder(
    summary: &Report,
    host: &mut dyn FnMut(usize) -> std::io::Result<Option<String>>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let text = render(summary);
    // The hosts array is the first key: an empty array there, in the report without them.
    let empty = "\n  \"hosts\": [],\n";
    let Some(at) = text.find(empty) else {
        return out.write_all(text.as_bytes());
    };
    out.write_all(&text.as_bytes()[..at])?;
    out.write_all(b"\n  \"hosts\": [")?;
    let mut i = 0;
    while let Some(fragment) = host(i)? {
        out.write_all(if i == 0 { b"\n" } else { b",\n" })?;
        out.write_all(fragment.as_bytes())?;
        i += 1;
    }
    out.write_all(if i == 0 { b"],\n" } else { b"\n  ],\n" })?;
    out.write_all(&text.as_bytes()[at + empty.len()..])
}

/// The report as pretty-printed JSON.
pub fn render(report: &Report) -> String {
    render_on(report, Threads::One)
}

/// [`render`], written on two threads where `threads` allows it and the report is
/// large (see [`Tree::pretty_on`]); the same bytes.
pub(crate) fn render_on(report: &Report, threads: Threads) -> String {
    sorted_render(report, threads).unwrap_or_else(|_| pretty(&to_value(report)))
}

/// [`render`] without the `Value` tree (see [`super::sorted_json`]): the same entries
/// as [`to_value`], in the same order, so that the same key wins where two repeat.
fn sorted_render(report: &Report, threads: Threads) -> Result<String, serde_json::Error> {
    let mut tree = Tree::default();
    let mut top = vec![
        (Key::Field("schema"), tree.node(SCHEMA)?),
        (Key::Field("tool"), tree.node(&report.tool)?),
        (Key::Field("provenance"), tree.node(&provenance())?),
    ];
    match report.hosts.as_slice() {
        [one] if report.hosts_summary.is_empty() => {
            if let Node::Object(fields) = tree.node(one)? {
                top.extend(fields);
            }
        }
        many => {
            top.push((Key::Field("hosts"), tree.node(many)?));
            let summary = tree.node(&report.hosts_summary)?;
            top.push((Key::Field("hosts_summary"), summary));
        }
    }
    let top = Tree::object(top);
    let mut out = tree.pretty_on(&top, threads);
    if threads == Threads::Two {
        // A large report's tree is millions of small allocations.
        let bytes = tree.heap_bytes();
        crate::free::free_later((tree, top), bytes);
    }
    out.push('\n');
    Ok(out)
}

/// A JSON value pretty-printed, ending in a newline: every JSON output's form.
pub(crate) fn pretty(value: &Value) -> String {
    let mut s =
        serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
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
        /// One row per host file, analyzed or not (see `docs/hosts.md`).
        hosts_summary: Vec<super::model::HostSummary>,
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
