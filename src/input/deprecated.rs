//! Deprecated profile fields (`codes::DEPRECATED_FIELD`). A field is deprecated by marking it `#[deprecated]` in
//! `profile/`: schemars then writes `"deprecated": true` on it in the profile's JSON Schema
//! (editors strike it through), `docs/profile.md` says so, and this walk reports every use of
//! it, at its key, with the field's description (which names the replacement) as the hint.
//! One source, so a deprecation cannot be declared without being reported.
//! `docs/compatibility.md` says how long a deprecated field stays.

use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::pointer::{field_path, pointer_push};
use crate::input::load::Loaded;
use serde_json::Value;

/// The profile schema's deprecated fields, as `deprecated_fields` names them. Generating the
/// schema costs more than the rest of a small run's input stages together, so a run learns from
/// this list, not from the schema, that nothing is deprecated; `tests/it/compat.rs` fails
/// until it lists exactly the fields the schema marks.
pub const DEPRECATED: &[&str] = &[];

/// Every use of a deprecated field of the profile schema in `loaded`.
pub(crate) fn report(loaded: &Loaded) -> Vec<Diagnostic> {
    // Most releases deprecate nothing: then the schema is not generated and no profile is walked.
    if DEPRECATED.is_empty() {
        return Vec::new();
    }
    uses(loaded, super::schema::schema())
}

/// Every use in `loaded` of a field that `schema` (a schemars schema with `$defs`) marks
/// deprecated, as warnings in document order. Public for the tests, which hand it
/// schemas with deprecated fields the profile does not have (yet).
pub fn uses(loaded: &Loaded, schema: &Value) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    walk(schema, schema, &loaded.value, "", &mut found);
    // A field shared by two alternatives of a union is found twice.
    let mut seen = std::collections::BTreeSet::new();
    found.retain(|(pointer, _)| seen.insert(pointer.clone()));
    found
        .into_iter()
        .map(|(pointer, about)| {
            let field = field_path(&pointer);
            let d = Diagnostic::new(&codes::DEPRECATED_FIELD, format!("`{field}` is deprecated"));
            let hint = match about {
                Some(text) => format!("{text} (docs/compatibility.md)"),
                None => "see docs/compatibility.md for its replacement".to_owned(),
            };
            loaded.at_key(d, &pointer).path(field).hint(hint)
        })
        .collect()
}

/// The schema's deprecated fields, as `$defs` paths (`/$defs/ArgoCd/properties/project`):
/// what `docs/compatibility.md` lists.
pub fn deprecated_fields(schema: &Value) -> Vec<String> {
    fn visit(node: &Value, at: &str, out: &mut Vec<String>) {
        match node {
            Value::Object(map) => {
                if map.get("deprecated") == Some(&Value::Bool(true)) {
                    out.push(at.to_owned());
                }
                for (k, v) in map {
                    visit(v, &pointer_push(at, k), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    visit(v, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    visit(schema, "", &mut out);
    out
}

/// The schema a `$ref` (`#/$defs/Name`) points at, or the node itself.
fn resolved<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    node.get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
        .unwrap_or(node)
}

/// Whether `value` can be an instance of the alternative `alt`: no property of it fixed to a
/// `const` (a tagged union's `kind`) that `value` contradicts.
fn fits(root: &Value, alt: &Value, value: &Value) -> bool {
    let Some(props) = resolved(root, alt)
        .get("properties")
        .and_then(Value::as_object)
    else {
        return true;
    };
    props
        .iter()
        .all(|(k, p)| match (p.get("const"), value.get(k)) {
            (Some(c), Some(v)) => c == v,
            _ => true,
        })
}

fn walk(
    root: &Value,
    node: &Value,
    value: &Value,
    at: &str,
    out: &mut Vec<(String, Option<String>)>,
) {
    let node = resolved(root, node);
    for key in ["anyOf", "oneOf", "allOf"] {
        for alt in node
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if key == "allOf" || fits(root, alt, value) {
                walk(root, alt, value, at, out);
            }
        }
    }
    match value {
        Value::Object(map) => {
            let props = node.get("properties").and_then(Value::as_object);
            let extra = node.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in map {
                let here = pointer_push(at, k);
                match props.and_then(|p| p.get(k)) {
                    Some(field) => {
                        if field.get("deprecated") == Some(&Value::Bool(true)) {
                            let about = field
                                .get("description")
                                .or_else(|| resolved(root, field).get("description"))
                                .and_then(Value::as_str)
                                .map(|d| d.split("\n\n").next().unwrap_or(d).replace('\n', " "));
                            out.push((here.clone(), about));
                        }
                        walk(root, field, v, &here, out);
                    }
                    None => {
                        if let Some(schema) = extra {
                            walk(root, schema, v, &here, out);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(schema) = node.get("items") {
                for (i, v) in items.iter().enumerate() {
                    walk(root, schema, v, &format!("{at}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}
