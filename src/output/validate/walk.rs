//! The structural check: one object against its schema node by node, the way the API server
//! validates a custom resource, plus what it does *not* report but silently drops: unknown
//! fields (every object schema without `x-kubernetes-preserve-unknown-fields` is closed, as
//! with `kubectl --validate=strict`) and nulls in non-nullable fields. CEL rules run on a node
//! once its subtree is well typed (before that their results would only confuse).

use super::cel::{self, Outcome};
use super::schema::{ListType, Node, NodeId, Table, Type};
use super::{Check, Violation};
use crate::base::diagnostic::did_you_mean;
use crate::base::pointer::{pointer_push, push_segment};
use serde_json::{Map, Number, Value};
use std::fmt::Write as _;

/// Enough to show every distinct mistake; a runaway object stops here.
const MAX_VIOLATIONS: usize = 100;

pub(crate) struct Walker<'t> {
    pub(crate) table: &'t Table,
    pub(crate) out: Vec<Violation>,
    /// Type errors so far. CEL rules need well-typed input (the API server skips them too
    /// when a type is wrong); unknown fields and bad values do not stop them.
    type_errors: usize,
    /// `metadata` fields left unchecked (what the API server sets, in an object read back).
    pub(crate) skip_metadata: &'static [&'static str],
}

impl<'t> Walker<'t> {
    pub(crate) fn new(table: &'t Table) -> Self {
        Self {
            table,
            out: Vec::new(),
            type_errors: 0,
            skip_metadata: &[],
        }
    }

    pub(crate) fn report(
        &mut self,
        check: Check,
        pointer: &str,
        message: String,
        hint: Option<String>,
    ) {
        if self.out.len() < MAX_VIOLATIONS {
            self.out.push(Violation {
                check,
                pointer: pointer.to_owned(),
                message,
                hint,
            });
        }
    }

    fn schema(&mut self, pointer: &str, message: String) {
        self.report(Check::Schema, pointer, message, None);
    }

    pub(crate) fn walk(&mut self, id: NodeId, value: &Value, ptr: &str) {
        if self.out.len() >= MAX_VIOLATIONS {
            return;
        }
        let table = self.table;
        let node = table.node(id);
        if node.broken {
            self.schema(
                ptr,
                format!("internal error: schema node {id} of the embedded table is unreadable"),
            );
            return;
        }
        let type_errors = self.type_errors;
        if value.is_null() {
            let open = node.ty.is_none() && !node.int_or_string;
            if !node.nullable && !open {
                // The rules above it see the object without the field on a cluster; here
                // they would see the null, so they are left out as after a type error.
                self.type_errors += 1;
                self.report(
                    Check::NullDropped,
                    ptr,
                    "null in a field that is not nullable: the API server drops it, and stores the object without the field".to_owned(),
                    Some("omit the field, which is what the cluster will hold".to_owned()),
                );
            }
            return;
        }
        if node.int_or_string {
            if !(value.is_string() || value.as_number().is_some_and(is_integer)) {
                self.type_errors += 1;
                self.schema(
                    ptr,
                    format!(
                        "expected an integer or a string (int-or-string), found {}",
                        describe(value)
                    ),
                );
                return;
            }
        } else if let Some(t) = node.ty
            && !type_matches(t, value)
        {
            self.type_errors += 1;
            self.schema(ptr, format!("expected {}, found {}", a(t), describe(value)));
            return;
        }
        match value {
            Value::String(s) => self.string(node, s, ptr),
            Value::Number(n) => self.number(node, n, ptr),
            Value::Array(items) => self.array(node, items, ptr),
            Value::Object(map) => self.object(node, map, ptr),
            Value::Bool(_) | Value::Null => {}
        }
        if let Some(allowed) = &node.enumeration
            && !allowed.contains(value)
        {
            let names: Vec<String> = allowed.iter().map(short).collect();
            let hint = value.as_str().and_then(|s| {
                did_you_mean(s, allowed.iter().filter_map(Value::as_str))
                    .map(|m| format!("did you mean `{m}`?"))
            });
            self.report(
                Check::Schema,
                ptr,
                format!(
                    "{} is not an allowed value (enum: {})",
                    describe(value),
                    names.join(", ")
                ),
                hint,
            );
        }
        if !node.rules.is_empty() && self.type_errors == type_errors {
            self.rules(id, node, value, ptr);
        }
    }

    fn rules(&mut self, id: NodeId, node: &Node, value: &Value, ptr: &str) {
        for rule in &node.rules {
            match cel::evaluate(self.table, rule, id, value) {
                Outcome::Pass | Outcome::Transition => {}
                Outcome::Fail(msg) => {
                    let at = rule
                        .field_path
                        .as_deref()
                        .and_then(|f| field_path_pointer(ptr, f))
                        .unwrap_or_else(|| ptr.to_owned());
                    self.report(
                        Check::Rule,
                        &at,
                        format!("{msg} (CEL rule `{}`)", rule.rule),
                        None,
                    );
                }
                Outcome::NotEvaluated(why) => self.report(
                    Check::NotEvaluated,
                    ptr,
                    format!("CEL rule `{}` was not evaluated: {why}", rule.rule),
                    Some("check this rule by hand, or with a real API server".to_owned()),
                ),
            }
        }
    }

    fn string(&mut self, node: &Node, s: &str, ptr: &str) {
        let len = s.chars().count() as u64;
        if let Some(max) = node.max_length
            && len > max
        {
            self.schema(
                ptr,
                format!("is {len} characters long, more than the maximum (maxLength: {max})"),
            );
        }
        if let Some(min) = node.min_length
            && len < min
        {
            self.schema(
                ptr,
                format!("is {len} characters long, less than the minimum (minLength: {min})"),
            );
        }
        match node.regex() {
            Some(Ok(re)) if !re.is_match(s) => self.schema(
                ptr,
                format!(
                    "{} does not match the pattern `{}`",
                    describe(&Value::String(s.to_owned())),
                    re.as_str()
                ),
            ),
            Some(Err(pattern)) => self.report(
                Check::NotEvaluated,
                ptr,
                format!("pattern `{pattern}` was not checked: it does not compile here"),
                None,
            ),
            _ => {}
        }
        let bad_format = match node.format.as_deref() {
            Some("date-time") => !is_date_time(s),
            Some("byte") => !is_base64(s),
            _ => false,
        };
        if let Some(f) = node.format.as_deref().filter(|_| bad_format) {
            self.schema(
                ptr,
                format!(
                    "{} is not a valid {f}",
                    describe(&Value::String(s.to_owned()))
                ),
            );
        }
    }

    fn number(&mut self, node: &Node, n: &Number, ptr: &str) {
        let range = match node.format.as_deref() {
            Some("int32") => Some((f64::from(i32::MIN), f64::from(i32::MAX), "int32")),
            Some("int64") => Some((i64::MIN as f64, i64::MAX as f64, "int64")),
            _ => None,
        };
        let x = n.as_f64().unwrap_or_default();
        if let Some((lo, hi, name)) = range {
            let out_of_range = match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => (i as f64) < lo || (i as f64) > hi,
                (None, Some(_)) => true,
                (None, None) => x < lo || x > hi,
            };
            if out_of_range {
                self.schema(ptr, format!("{n} does not fit the format {name}"));
            }
        }
        if let Some(min) = node.minimum {
            let below = if node.exclusive_minimum {
                x <= min
            } else {
                x < min
            };
            if below {
                let op = if node.exclusive_minimum { ">" } else { ">=" };
                self.schema(ptr, format!("{n} is too small (must be {op} {min})"));
            }
        }
        if let Some(max) = node.maximum {
            let above = if node.exclusive_maximum {
                x >= max
            } else {
                x > max
            };
            if above {
                let op = if node.exclusive_maximum { "<" } else { "<=" };
                self.schema(ptr, format!("{n} is too large (must be {op} {max})"));
            }
        }
        if let Some(m) = node.multiple_of
            && m != 0.0
            && (x / m).fract() != 0.0
        {
            self.schema(ptr, format!("{n} is not a multiple of {m}"));
        }
    }

    fn array(&mut self, node: &Node, items: &[Value], ptr: &str) {
        let n = items.len() as u64;
        if let Some(max) = node.max_items
            && n > max
        {
            self.schema(
                ptr,
                format!("has {n} items, more than allowed (maxItems: {max})"),
            );
        }
        if let Some(min) = node.min_items
            && n < min
        {
            self.schema(
                ptr,
                format!("has {n} items, fewer than required (minItems: {min})"),
            );
        }
        if let Some(item) = node.items {
            let mut child_ptr = String::with_capacity(ptr.len() + 8);
            for (i, v) in items.iter().enumerate() {
                child_ptr.clear();
                child_ptr.push_str(ptr);
                let _ = write!(child_ptr, "/{i}");
                self.walk(item, v, &child_ptr);
            }
        }
        match node.list_type {
            Some(ListType::Set) => {
                for (i, v) in items.iter().enumerate() {
                    if let Some(first) = items[..i].iter().position(|w| w == v) {
                        self.schema(
                            &format!("{ptr}/{i}"),
                            format!(
                                "duplicate entry {} (also at [{first}]; x-kubernetes-list-type: set)",
                                describe(v)
                            ),
                        );
                    }
                }
            }
            Some(ListType::Map) => self.list_map_keys(node, items, ptr),
            None => {}
        }
    }

    /// `x-kubernetes-list-type: map`: each item is identified by its key fields; the API
    /// server rejects two items with the same keys (`Duplicate value`).
    fn list_map_keys(&mut self, node: &Node, items: &[Value], ptr: &str) {
        let item_schema = node.items.map(|i| self.table.node(i));
        let key_of = |v: &Value| -> Vec<Value> {
            node.list_keys
                .iter()
                .map(|k| {
                    v.get(k)
                        .cloned()
                        .or_else(|| {
                            let props = item_schema?.properties.as_ref()?;
                            self.table.node(*props.get(k)?).default.clone()
                        })
                        .unwrap_or(Value::Null)
                })
                .collect()
        };
        // Items that are not objects have a type error already; they have no keys.
        let keys: Vec<Option<Vec<Value>>> = items
            .iter()
            .map(|v| v.is_object().then(|| key_of(v)))
            .collect();
        for (i, k) in keys.iter().enumerate() {
            let Some(k) = k else { continue };
            if let Some(first) = keys[..i].iter().position(|other| other.as_ref() == Some(k)) {
                let shown: Vec<String> = node
                    .list_keys
                    .iter()
                    .zip(k)
                    .map(|(name, v)| format!("{name}={}", short(v)))
                    .collect();
                self.schema(
                    &format!("{ptr}/{i}"),
                    format!(
                        "duplicate entry {} (also at [{first}]; list keyed by {})",
                        shown.join(", "),
                        node.list_keys.join(", ")
                    ),
                );
            }
        }
    }

    fn object(&mut self, node: &Node, map: &Map<String, Value>, ptr: &str) {
        let props = node.properties.as_ref();
        // One buffer for every child's pointer: cut back to `ptr` and extended per key.
        let mut child_ptr = String::with_capacity(ptr.len() + 32);
        for (key, v) in map {
            if !self.skip_metadata.is_empty()
                && ptr == "/metadata"
                && self.skip_metadata.contains(&key.as_str())
            {
                continue;
            }
            child_ptr.clear();
            child_ptr.push_str(ptr);
            push_segment(&mut child_ptr, key);
            if let Some(child) = props.and_then(|p| p.get(key)) {
                self.walk(*child, v, &child_ptr);
            } else if let Some(values) = node.values {
                self.walk(values, v, &child_ptr);
            } else if !node.preserve_unknown {
                let known = props.map(|p| p.keys().map(String::as_str));
                let hint = known
                    .and_then(|k| did_you_mean(key, k))
                    .map(|m| format!("did you mean `{m}`?"));
                self.report(
                    Check::UnknownField,
                    &child_ptr,
                    format!(
                        "unknown field `{key}` (not in the schema: the API server would drop it, `kubectl --validate=strict` rejects it)"
                    ),
                    hint,
                );
            }
        }
        for name in &node.required {
            if map.contains_key(name) {
                continue;
            }
            let default = props
                .and_then(|p| p.get(name))
                .and_then(|c| self.table.node(*c).default.as_ref());
            let child_ptr = pointer_push(ptr, name);
            match default {
                Some(d) => self.report(
                    Check::RequiredDefaulted,
                    &child_ptr,
                    format!("required field `{name}` is missing"),
                    Some(format!(
                        "the API server would default it to {}; write it out: offline validators and reviewers do not default",
                        short(d)
                    )),
                ),
                None => self.schema(&child_ptr, format!("required field `{name}` is missing")),
            }
        }
        let n = map.len() as u64;
        if let Some(max) = node.max_properties
            && n > max
        {
            self.schema(
                ptr,
                format!("has {n} entries, more than allowed (maxProperties: {max})"),
            );
        }
        if let Some(min) = node.min_properties
            && n < min
        {
            self.schema(
                ptr,
                format!("has {n} entries, fewer than required (minProperties: {min})"),
            );
        }
    }
}

fn type_matches(t: Type, v: &Value) -> bool {
    match t {
        Type::Object => v.is_object(),
        Type::Array => v.is_array(),
        Type::String => v.is_string(),
        Type::Boolean => v.is_boolean(),
        Type::Number => v.is_number(),
        Type::Integer => v.as_number().is_some_and(is_integer),
    }
}

/// `3` and `3.0` are integers to the API server (JSON numbers decode the same way).
fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn a(t: Type) -> &'static str {
    match t {
        Type::Object => "a mapping",
        Type::Array => "a list",
        Type::String => "a string",
        Type::Integer => "an integer",
        Type::Number => "a number",
        Type::Boolean => "a boolean",
    }
}

/// A value as messages show it: scalars quoted as YAML would need, containers by kind.
pub(super) fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) => format!("number `{n}`"),
        Value::String(_) => format!("string {}", short(v)),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "a mapping".to_owned(),
    }
}

/// A scalar as JSON text, cut to a readable length.
pub(super) fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// A rule's `fieldPath` (`.spec.foo`, `.bar['x.y']` — the simple dotted form) below `ptr`.
fn field_path_pointer(ptr: &str, field_path: &str) -> Option<String> {
    let rest = field_path.strip_prefix('.')?;
    let mut out = ptr.to_owned();
    for seg in rest.split('.') {
        if seg.is_empty() || seg.contains('[') {
            return None;
        }
        out = pointer_push(&out, seg);
    }
    Some(out)
}

/// RFC 3339 date-time, as `metav1.Time` accepts it: `2006-01-02T15:04:05Z` or with an offset
/// and optional fraction.
fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() < 20
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
        || !matches!(b[10], b'T' | b't')
        || !digits(11..13)
        || b[13] != b':'
        || !digits(14..16)
        || b[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match &b[i..] {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// Standard base64 with padding (how `[]byte` fields are written in JSON).
fn is_base64(s: &str) -> bool {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return false;
    }
    let pad = b.iter().rev().take_while(|c| **c == b'=').count();
    pad <= 2
        && b[..b.len() - pad]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'+' || *c == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(is_date_time("2026-08-20T10:00:00Z"));
        assert!(is_date_time("2026-08-20T10:00:00.123+02:00"));
        assert!(!is_date_time("2026-08-20 10:00:00"));
        assert!(!is_date_time("2026-08-20T10:00:00"));
        assert!(is_base64("aGk="));
        assert!(is_base64(""));
        assert!(!is_base64("aGk"));
        assert!(!is_base64("a*k="));
    }

    #[test]
    fn field_paths_below_the_rule() {
        assert_eq!(
            field_path_pointer("/spec", ".a.b").as_deref(),
            Some("/spec/a/b")
        );
        assert_eq!(field_path_pointer("/spec", ".a['x']"), None);
    }
}
