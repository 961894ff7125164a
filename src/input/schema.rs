//! Stage 2 (`lib.rs`), the input, after the overlays: the loaded value against the profile's
//! JSON Schema (generated from the types), then into the typed `Profile`. Every error is collected and placed at its line.

use crate::base::codes;
use crate::base::diagnostic::{Diagnostic, did_you_mean};
use crate::base::pointer::{field_path, pointer_push};
use crate::input::load::Loaded;
use crate::profile::{self, Profile};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;
use std::sync::OnceLock;

/// The compiled profile schema, built once per process.
fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| compile_schema(schema()))
}

/// Compile a schema generated from our own types (profile, scenario). Failing to compile one
/// is a bug that every test would catch.
pub(crate) fn compile_schema(schema: &Value) -> jsonschema::Validator {
    jsonschema::options()
        .should_validate_formats(false)
        .build(schema)
        .expect("a schema generated from raykueue's types compiles")
}

/// The profile JSON Schema, with `null` removed from optional fields: an optional field is
/// omitted, never `null`, so editors and errors speak of the real type.
pub fn schema() -> &'static Value {
    static S: OnceLock<Value> = OnceLock::new();
    S.get_or_init(|| {
        let mut s = profile::json_schema();
        strip_null(&mut s);
        s
    })
}

/// Drop `null` from optional fields of a generated schema (shared with the scenario schema).
pub(crate) fn strip_null(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let kept: Vec<Value> = any
                    .iter()
                    .filter(|s| s.get("type").and_then(Value::as_str) != Some("null"))
                    .cloned()
                    .collect();
                if kept.len() == 1 && any.len() == 2 {
                    map.remove("anyOf");
                    if let Value::Object(inner) = &kept[0] {
                        for (k, val) in inner {
                            map.entry(k.clone()).or_insert_with(|| val.clone());
                        }
                    }
                }
            }
            map.values_mut().for_each(strip_null);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

/// Check the loaded document and build the typed profile, or report every problem found.
///
/// The typed deserializer refuses everything the schema refuses (name patterns and the
/// limits in `profile::limits`), so a profile that deserializes is valid and the schema
/// validator, the costliest thing to build in a run, is compiled only to explain an error.
/// `null` is the one value serde accepts (as an absent option) and the schema does not;
/// `load::strict` refuses the other leniency, a struct given as a sequence.
pub(crate) fn typed(loaded: &Loaded) -> Result<Profile, Vec<Diagnostic>> {
    if let Some(profile) = fast(&loaded.value) {
        return Ok(profile);
    }
    check_against_schema(loaded)
}

/// The fast path alone: the typed profile when the value deserializes and holds no `null`.
pub fn fast(value: &Value) -> Option<Profile> {
    if has_null(value) {
        return None;
    }
    crate::input::load::strict::from_value(value).ok()
}

/// The schema locations (`/$defs/WorkerGroup/properties/numOfHosts/maximum`) that `value`
/// violates: how the test of the fast path knows which limit a mutation broke.
pub fn schema_violations(value: &Value) -> Vec<String> {
    validator()
        .iter_errors(value)
        .map(|e| e.schema_path().as_str().to_owned())
        .collect()
}

fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(map) => map.values().any(has_null),
        _ => false,
    }
}

/// The slow path alone: every schema error, then the typed value (public for the test that
/// checks the two paths agree).
pub(crate) fn check_against_schema(loaded: &Loaded) -> Result<Profile, Vec<Diagnostic>> {
    check_document(
        loaded,
        &Document {
            validator: validator(),
            schema: schema(),
            kind: "Profile",
        },
    )
}

/// A document format with a generated schema: the profile, or a `simulate` scenario.
pub(crate) struct Document {
    pub(crate) validator: &'static jsonschema::Validator,
    /// The schema the validator was built from (for allowed keys and descriptions in hints).
    pub(crate) schema: &'static Value,
    /// The `kind:` of the document (`Profile`, `Scenario`), for the hint at the root.
    pub(crate) kind: &'static str,
}

/// Check any loaded document against its schema and build the typed value, or report every
/// problem found (the same diagnostics for a profile and a scenario).
pub(crate) fn check_document<T: serde::de::DeserializeOwned>(
    loaded: &Loaded,
    doc: &Document,
) -> Result<T, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    for err in doc.validator.iter_errors(&loaded.value) {
        report(loaded, doc, &err, &mut diags);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let de = loaded.value.clone();
    serde_path_to_error::deserialize::<_, T>(de).map_err(|e| {
        let pointer = path_to_pointer(e.path());
        let msg = e.inner().to_string();
        vec![
            loaded
                .at_value(Diagnostic::new(&codes::INVALID_VALUE, msg), &pointer)
                .path(field_path(&pointer)),
        ]
    })
}

fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut p = String::new();
    for seg in path {
        match seg {
            Segment::Seq { index } => p = format!("{p}/{index}"),
            Segment::Map { key } => p = pointer_push(&p, key),
            Segment::Enum { variant } => p = pointer_push(&p, variant),
            Segment::Unknown => {}
        }
    }
    p
}

fn report(
    loaded: &Loaded,
    doc: &Document,
    err: &jsonschema::ValidationError<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let pointer = err.instance_path().as_str().to_owned();
    let schema_ptr = err.schema_path().as_str().to_owned();
    let instance: &Value = err.instance();
    let path = field_path(&pointer);
    let subschema = parent_schema(doc.schema, &schema_ptr);
    let what = subschema
        .and_then(|s| s.get("description"))
        .and_then(Value::as_str)
        .map(first_sentence);
    let d = match err.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            unknown_keys(loaded, subschema, &pointer, unexpected, out);
            return;
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            loaded
                .at_key(
                    Diagnostic::new(
                        &codes::MISSING_KEY,
                        format!("missing required key `{name}`"),
                    ),
                    &pointer,
                )
                .path(path)
                .hint(format!("add `{name}:` here"))
        }
        ValidationErrorKind::Type { kind } => {
            wrong_type(loaded, doc, &pointer, instance, kind, path, what.as_deref())
        }
        ValidationErrorKind::Enum { options } => {
            let opts: Vec<&str> = options
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let got = scalar_text(instance);
            let d = Diagnostic::new(
                &codes::INVALID_VALUE,
                format!("`{got}` is not one of: {}", opts.join(", ")),
            )
            .path(path);
            match did_you_mean(&got, opts.iter().copied()) {
                Some(s) => d.hint(format!("did you mean `{s}`?")),
                None => d,
            }
        }
        ValidationErrorKind::Constant { expected_value } => Diagnostic::new(
            &codes::INVALID_VALUE,
            format!("must be `{}`", scalar_text(expected_value)),
        )
        .path(path),
        ValidationErrorKind::Pattern { .. } | ValidationErrorKind::AnyOf { .. } => {
            invalid_value(instance, path, what)
        }
        ValidationErrorKind::MinLength { limit } | ValidationErrorKind::MaxLength { limit } => {
            let bound = if matches!(err.kind(), ValidationErrorKind::MinLength { .. }) {
                "at least"
            } else {
                "at most"
            };
            wrong_length(instance, bound, *limit, path, what)
        }
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => {
            let raw = loaded
                .raw_text(&pointer)
                .map_or_else(|| instance.to_string(), str::to_owned);
            Diagnostic::new(
                &codes::INVALID_VALUE,
                format!("`{raw}` is below the minimum {limit}"),
            )
            .path(path)
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => {
            let raw = loaded
                .raw_text(&pointer)
                .map_or_else(|| instance.to_string(), str::to_owned);
            Diagnostic::new(
                &codes::INVALID_VALUE,
                format!("`{raw}` is above the maximum {limit}"),
            )
            .path(path)
        }
        ValidationErrorKind::MinItems { limit } => Diagnostic::new(
            &codes::INVALID_VALUE,
            format!("needs at least {limit} item(s)"),
        )
        .path(path),
        ValidationErrorKind::MaxItems { limit } | ValidationErrorKind::MaxProperties { limit } => {
            Diagnostic::new(
                &codes::INVALID_VALUE,
                format!("allows at most {limit} entries"),
            )
            .path(path)
        }
        ValidationErrorKind::PropertyNames { .. } => Diagnostic::new(
            &codes::INVALID_VALUE,
            "a key here is not a valid name".to_string(),
        )
        .path(path)
        .hint(what.map_or_else(String::new, |w| format!("keys must be {w}"))),
        _ => Diagnostic::new(&codes::INVALID_VALUE, err.to_string()).path(path),
    };
    out.push(loaded.at_value(d, &pointer));
}

/// One diagnostic per unknown key, each at the key, with the key it may have meant.
fn unknown_keys(
    loaded: &Loaded,
    subschema: Option<&Value>,
    pointer: &str,
    unexpected: &[String],
    out: &mut Vec<Diagnostic>,
) {
    let allowed: Vec<&str> = subschema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    for key in unexpected {
        let child = pointer_push(pointer, key);
        let mut d = loaded
            .at_key(
                Diagnostic::new(&codes::UNKNOWN_KEY, format!("unknown key `{key}`")),
                &child,
            )
            .path(field_path(&child))
            .label("not a field here");
        d = match did_you_mean(key, allowed.iter().copied()) {
            Some(s) => d.hint(format!("did you mean `{s}`?")),
            None => d.hint(format!("the keys allowed here are: {}", allowed.join(", "))),
        };
        out.push(d);
    }
}

/// A value of the wrong type, with a hint for YAML's readings of unquoted text.
fn wrong_type(
    loaded: &Loaded,
    doc: &Document,
    pointer: &str,
    instance: &Value,
    kind: &TypeKind,
    path: String,
    what: Option<&str>,
) -> Diagnostic {
    let expected = type_name(kind);
    let found = json_type(instance);
    let raw = loaded.raw_text(pointer).unwrap_or("the value").to_owned();
    let mut d = Diagnostic::new(
        &codes::WRONG_TYPE,
        format!("expected {expected}, found {found}"),
    )
    .path(path)
    .label(format!("this is {found}"));
    if pointer.is_empty() {
        d = d.hint(format!(
            "a {} is a YAML mapping that starts with `apiVersion: raykueue.io/v1alpha1` and `kind: {}`",
            doc.kind.to_lowercase(),
            doc.kind
        ));
    } else if expected.contains("string") && matches!(instance, Value::Bool(_) | Value::Number(_)) {
        d = d.hint(format!(
            "YAML reads `{raw}` as {found}; quote it to keep the text: \"{raw}\""
        ));
    } else if let Some(w) = what {
        d = d.hint(format!("expected {w}"));
    }
    d
}

/// A value that does not match its pattern (or any of its forms), with a hint for the usual
/// slips in quantities and names.
fn invalid_value(instance: &Value, path: String, what: Option<String>) -> Diagnostic {
    let got = scalar_text(instance);
    let desc = what.unwrap_or_else(|| "a valid value".into());
    let mut d = Diagnostic::new(&codes::INVALID_VALUE, format!("`{got}` is not {desc}")).path(path);
    if desc.contains("quantity") && got.ends_with(['B', 'b']) {
        let no_b = "Kubernetes quantities use binary suffixes such as Gi or Mi (768Gi), or decimal ones such as G or M (768G); there is no `B`";
        d = match binary_quantity(&got) {
            Some(q) => d.hint(format!("did you mean `{q}`? {no_b}")),
            None => d.hint(no_b),
        };
    } else if desc.contains("quantity") && got.starts_with('-') {
        d = d.hint("quotas and requests cannot be negative");
    } else if desc.starts_with("a DNS") && got.chars().any(|c| c.is_ascii_uppercase()) {
        d = d.hint(format!("use lowercase: `{}`", got.to_lowercase()));
    }
    d
}

/// A string too short or too long (`bound` is "at least" or "at most"); an empty one is
/// refused as empty.
fn wrong_length(
    instance: &Value,
    bound: &str,
    limit: u64,
    path: String,
    what: Option<String>,
) -> Diagnostic {
    let got = scalar_text(instance);
    let n = instance.as_str().map_or(0, |s| s.chars().count());
    if n == 0 {
        return Diagnostic::new(&codes::INVALID_VALUE, "an empty value is not allowed here")
            .path(path);
    }
    let mut d = Diagnostic::new(
        &codes::INVALID_VALUE,
        format!("`{got}` has {n} characters; {bound} {limit} are allowed"),
    )
    .path(path);
    if let Some(w) = what {
        d = d.hint(format!("expected {w}"));
    }
    d
}

/// The subschema that holds the failing keyword (schema paths end in the keyword).
fn parent_schema(root: &'static Value, schema_ptr: &str) -> Option<&'static Value> {
    let cut = schema_ptr.rfind('/')?;
    root.pointer(&schema_ptr[..cut]).or_else(|| {
        // Keywords under `anyOf/N` describe their parent's type.
        let up = schema_ptr[..cut].rfind('/')?;
        root.pointer(&schema_ptr[..up])
    })
}

fn first_sentence(s: &str) -> String {
    s.split_terminator(['\n'])
        .next()
        .unwrap_or(s)
        .trim_end_matches('.')
        .to_owned()
}

fn type_name(kind: &TypeKind) -> String {
    match kind {
        TypeKind::Single(t) => article(&t.to_string()),
        TypeKind::Multiple(ts) => ts
            .iter()
            .map(|t| article(&t.to_string()))
            .collect::<Vec<_>>()
            .join(" or "),
    }
}

fn article(t: &str) -> String {
    match t {
        "object" => "a mapping".into(),
        "array" => "a list".into(),
        "integer" => "an integer".into(),
        "null" => "nothing".into(),
        other => format!("a {other}"),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a decimal number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A value as shown inside a message: control characters (a newline in a name) escaped, so the
/// message stays one line and shows what is really there.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) if s.chars().any(char::is_control) => s.escape_debug().to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The schema as committed in `profiles/profile.schema.json` (pretty, newline-terminated).
pub(crate) fn schema_text() -> String {
    let mut s = serde_json::to_string_pretty(schema()).unwrap_or_default();
    s.push('\n');
    s
}

/// The binary quantity a byte size written the way disks and dashboards write it means
/// (`4Gb`, `4 GB`, `160GiB` → `4Gi`, `4Gi`, `160Gi`), or None when it names no unit.
fn binary_quantity(got: &str) -> Option<String> {
    let compact: String = got.chars().filter(|c| !c.is_whitespace()).collect();
    let unit_end = compact.strip_suffix(['B', 'b'])?;
    let unit_end = unit_end.strip_suffix('i').unwrap_or(unit_end);
    let (number, unit) = unit_end.split_at(unit_end.len().checked_sub(1)?);
    let unit = match unit {
        "k" | "K" => "Ki",
        "m" | "M" => "Mi",
        "g" | "G" => "Gi",
        "t" | "T" => "Ti",
        "p" | "P" => "Pi",
        "e" | "E" => "Ei",
        _ => return None,
    };
    let numeric = !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.');
    numeric.then(|| format!("{number}{unit}"))
}
