//! The reference documents that are generated, never written by hand: `docs/rules.md` from the
//! code table (`base::codes`), `profiles/profile.schema.json` from the profile types, and
//! `docs/profile.md` from that schema. `cargo run -p xtask -- docs` writes them; a test keeps
//! the committed files fresh.

use crate::base::codes::{self, Severity};
use serde_json::Value;
use std::fmt::Write as _;

/// The file the rules reference is written to, and the profile reference.
pub const RULES_FILE: &str = "docs/rules.md";
pub const PROFILE_FILE: &str = "docs/profile.md";
/// The profile's JSON Schema, which editors read (`yaml-language-server`) and `raykueue schema`
/// prints.
pub const SCHEMA_FILE: &str = "profiles/profile.schema.json";

/// The fleet file's JSON Schema (`kind: Fleet`).
pub const FLEET_SCHEMA_FILE: &str = "profiles/fleet.schema.json";

/// `profiles/fleet.schema.json`, pretty and newline-terminated.
pub fn fleet_schema() -> String {
    let mut s =
        serde_json::to_string_pretty(crate::input::fleet::fleet_schema()).unwrap_or_default();
    s.push('\n');
    s
}

/// `profiles/profile.schema.json`, pretty and newline-terminated.
pub fn schema() -> String {
    crate::input::schema::schema_text()
}

/// `docs/rules.md`: every code, by group, with its severity, meaning and an example; then the
/// retired codes.
pub fn rules() -> String {
    let mut out = String::from(
        "# Rules\n\n<!-- Generated from src/base/codes.rs by `cargo run -p xtask -- docs`; a test keeps it fresh. -->\n\n\
         Every diagnostic has a stable code. Errors stop `gen`; warnings are printed on stderr and do \
         not, unless `--deny-warnings` is given (then they fail the run, and are still printed as \
         warnings). Each domain rule (RK1xx–RK4xx) has a failing fixture in `tests/fixtures/bad/` \
         whose rendered diagnostic is snapshotted in `golden/diagnostics/`.\n",
    );
    for (title, from, to) in codes::GROUPS {
        let rows: Vec<&codes::Code> = codes::ALL
            .iter()
            .filter(|c| c.id >= *from && c.id <= *to)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = write!(
            out,
            "\n## {title}\n\n| code | severity | what | example |\n|---|---|---|---|\n"
        );
        for c in rows {
            let severity = match c.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let _ = writeln!(
                out,
                "| `{}` | {severity} | {} | {} |",
                c.id,
                cell(c.title),
                cell(c.example)
            );
        }
    }
    out.push_str(
        "\n## Retired codes\n\nChecks that every cloud has were one code per cloud; each is one code now.\n\n\
         | retired | replaced by |\n|---|---|\n",
    );
    for (old, new) in codes::RETIRED {
        let _ = writeln!(out, "| `{old}` | `{}`: {} |", new.id, cell(new.title));
    }
    out
}

/// A table cell: no line breaks, and a `|` that would end the cell escaped.
fn cell(text: &str) -> String {
    text.replace('\n', " ").replace('|', "\\|")
}

/// `docs/profile.md`: every object of the profile format with its fields, from the JSON Schema.
pub fn profile() -> String {
    let schema = crate::profile::json_schema();
    let defs = schema.get("$defs").and_then(Value::as_object);
    let mut out = String::from(
        "# Profile reference\n\n<!-- Generated from the profile's JSON Schema by `cargo run -p xtask -- docs`; a test keeps it fresh. -->\n\n\
         A profile is one YAML document; `raykueue schema` prints the JSON Schema this page is \
         written from. Names link to the object they hold.\n",
    );
    object(&mut out, "Profile", &schema);
    if let Some(defs) = defs {
        for (name, node) in defs {
            if node.get("properties").is_some() {
                object(&mut out, name, node);
            }
        }
        out.push_str("\n## Values\n\n| name | what |\n|---|---|\n");
        for (name, node) in defs {
            if node.get("properties").is_none() {
                let _ = writeln!(
                    out,
                    "| <a id=\"{}\"></a>`{name}` | {} |",
                    anchor(name),
                    cell(&describe(node))
                );
            }
        }
    }
    out
}

fn anchor(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// One object's section: a table of its fields.
fn object(out: &mut String, name: &str, node: &Value) {
    let _ = write!(out, "\n## <a id=\"{}\"></a>`{name}`\n\n", anchor(name));
    if let Some(d) = node.get("description").and_then(Value::as_str) {
        let _ = write!(out, "{}\n\n", d.replace('\n', " "));
    }
    out.push_str("| field | type | required | default | what |\n|---|---|---|---|---|\n");
    let required: Vec<&str> = node
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = node.get("properties").and_then(Value::as_object) {
        for (field, p) in props {
            let default = p
                .get("default")
                .map_or_else(String::new, |d| format!("`{d}`"));
            let what = p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "| `{field}` | {} | {} | {} | {} |",
                kind(p),
                if required.contains(&field.as_str()) {
                    "yes"
                } else {
                    ""
                },
                cell(&default),
                cell(what)
            );
        }
    }
}

/// A field's type as the reader needs it: a link to the object it holds, or the JSON type.
fn kind(p: &Value) -> String {
    if let Some(r) = p.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or(r);
        return format!("[`{name}`](#{})", anchor(name));
    }
    if let Some(any) = p
        .get("anyOf")
        .or_else(|| p.get("oneOf"))
        .and_then(Value::as_array)
    {
        return any.iter().map(kind).collect::<Vec<_>>().join(" or ");
    }
    match p.get("type").and_then(Value::as_str) {
        Some("array") => format!(
            "list of {}",
            p.get("items").map_or_else(|| "values".into(), kind)
        ),
        Some("object") => match p.get("additionalProperties") {
            Some(v @ Value::Object(_)) => format!("map of {}", kind(v)),
            _ => match p.get("patternProperties").and_then(Value::as_object) {
                Some(pp) => format!(
                    "map of {}",
                    pp.values().next().map_or_else(|| "values".into(), kind)
                ),
                None => "object".into(),
            },
        },
        Some(t) => t.to_owned(),
        None if p.get("type").is_some_and(Value::is_array) => p["type"]
            .as_array()
            .map(|ts| {
                ts.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" or ")
            })
            .unwrap_or_default(),
        None => p
            .get("enum")
            .map_or_else(|| "value".into(), |_| "one of the values below".into()),
    }
}

/// A value type's one-line description: its pattern or its values.
fn describe(node: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(d) = node.get("description").and_then(Value::as_str) {
        parts.push(d.replace('\n', " "));
    }
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| format!("`{}`", v.as_str().unwrap_or_default()))
            .collect();
        parts.push(format!("one of {}", values.join(", ")));
    }
    if let Some(one_of) = node.get("oneOf").and_then(Value::as_array) {
        let values: Vec<String> = one_of
            .iter()
            .filter_map(|v| {
                v.get("const")
                    .or_else(|| v.get("enum").and_then(|e| e.get(0)))
            })
            .map(|v| format!("`{}`", v.as_str().unwrap_or_default()))
            .collect();
        if !values.is_empty() {
            parts.push(format!("one of {}", values.join(", ")));
        }
    }
    if let Some(t) = node.get("type").and_then(Value::as_str)
        && parts.is_empty()
    {
        parts.push(t.to_owned());
    }
    parts.join("; ")
}
