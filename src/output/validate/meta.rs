//! `metadata`, as the API server checks it (apimachinery `ValidateObjectMeta`): the CRDs say
//! only `metadata: {type: object}`, so the name, namespace, label and annotation rules live
//! here. The types are checked by the ObjectMeta schema the importer put in their place.

use super::Check;
use super::walk::Walker;
use super::walk::short;
use crate::base::pointer::pointer_push;
use serde_json::{Map, Value};

/// Total size of all annotation keys and values (`TotalAnnotationSizeLimitB`).
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Check `metadata` of an object of `kind`; `namespaced` from the kind's scope.
pub(super) fn run(w: &mut Walker, kind: &str, namespaced: bool, root: &Map<String, Value>) {
    let meta = match root.get("metadata") {
        Some(Value::Object(meta)) => meta,
        // A wrong type is reported by the schema walk already.
        Some(_) => return,
        None => {
            w.report(
                Check::Schema,
                "/metadata",
                "required field `metadata` is missing".to_owned(),
                None,
            );
            return;
        }
    };
    let name = meta.get("name").and_then(Value::as_str);
    match name {
        Some(n) => {
            // Namespaces are DNS-1123 labels; every other kind here, custom resources
            // included, takes a DNS-1123 subdomain.
            let problem = if kind == "Namespace" {
                dns1123_label(n)
            } else {
                dns1123_subdomain(n)
            };
            if let Some(p) = problem {
                w.report(
                    Check::Schema,
                    "/metadata/name",
                    format!("name {} is invalid: {p}", short(&Value::from(n))),
                    None,
                );
            }
        }
        None if meta.get("generateName").and_then(Value::as_str).is_some() => {}
        None => w.report(
            Check::Schema,
            "/metadata/name",
            "required field `metadata.name` is missing".to_owned(),
            Some(
                "`kubectl apply` needs a name (only `kubectl create` takes generateName)"
                    .to_owned(),
            ),
        ),
    }
    if let Some(ns) = meta.get("namespace").and_then(Value::as_str) {
        if !namespaced {
            w.report(
                Check::Schema,
                "/metadata/namespace",
                format!("{kind} is cluster-scoped: it has no namespace"),
                Some("remove `metadata.namespace`".to_owned()),
            );
        } else if let Some(p) = dns1123_label(ns) {
            w.report(
                Check::Schema,
                "/metadata/namespace",
                format!("namespace {} is invalid: {p}", short(&Value::from(ns))),
                None,
            );
        }
    }
    if let Some(Value::Object(labels)) = meta.get("labels") {
        for (k, v) in labels {
            let at = pointer_push("/metadata/labels", k);
            if let Some(p) = qualified_name(k) {
                w.report(
                    Check::BadKey,
                    &at,
                    format!(
                        "label key {} is invalid: {p}",
                        short(&Value::from(k.as_str()))
                    ),
                    None,
                );
            }
            if let Some(p) = v.as_str().and_then(label_value) {
                w.report(
                    Check::Schema,
                    &at,
                    format!("label value {} is invalid: {p}", short(v)),
                    None,
                );
            }
        }
    }
    if let Some(Value::Object(annotations)) = meta.get("annotations") {
        let mut total = 0;
        for (k, v) in annotations {
            total += k.len() + v.as_str().map_or(0, str::len);
            if let Some(p) = qualified_name(&k.to_ascii_lowercase()) {
                w.report(
                    Check::BadKey,
                    &pointer_push("/metadata/annotations", k),
                    format!(
                        "annotation key {} is invalid: {p}",
                        short(&Value::from(k.as_str()))
                    ),
                    None,
                );
            }
        }
        if total > ANNOTATIONS_MAX_BYTES {
            w.report(
                Check::Schema,
                "/metadata/annotations",
                format!(
                    "annotations take {total} bytes, more than the 256 KiB the API server allows"
                ),
                None,
            );
        }
    }
}

/// `a-z0-9` and `-`, alphanumeric at both ends, at most `max` long.
fn label_like(s: &str, max: usize) -> Option<String> {
    if s.is_empty() {
        return Some("must not be empty".to_owned());
    }
    if s.len() > max {
        return Some(format!("must be at most {max} characters"));
    }
    let ok_char = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-';
    let b = s.as_bytes();
    if !b.iter().all(|c| ok_char(*c)) {
        return Some("must consist of lower case alphanumeric characters or '-'".to_owned());
    }
    if !b[0].is_ascii_alphanumeric() || !b[b.len() - 1].is_ascii_alphanumeric() {
        return Some("must start and end with an alphanumeric character".to_owned());
    }
    None
}

/// RFC 1123 label: at most 63 characters.
pub(super) fn dns1123_label(s: &str) -> Option<String> {
    label_like(s, 63).map(|p| format!("{p} (RFC 1123 label)"))
}

/// RFC 1035 label (`IsDNS1035Label`): an RFC 1123 label that starts with a letter.
pub(super) fn dns1035_label(s: &str) -> Option<String> {
    if let Some(p) = label_like(s, 63) {
        return Some(format!("{p} (DNS-1035 label)"));
    }
    (!s.as_bytes()[0].is_ascii_lowercase())
        .then(|| "must start with a lower-case letter (DNS-1035 label)".to_owned())
}

/// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
pub(super) fn dns1123_subdomain(s: &str) -> Option<String> {
    if s.len() > 253 {
        return Some("must be at most 253 characters (RFC 1123 subdomain)".to_owned());
    }
    s.split('.')
        .find_map(|part| label_like(part, 253))
        .map(|p| format!("{p} (RFC 1123 subdomain)"))
}

/// `[A-Za-z0-9]`, with `-`, `_`, `.` inside, at most 63 characters, or empty when `empty_ok`.
fn name_part(s: &str, empty_ok: bool) -> Option<String> {
    if s.is_empty() {
        return (!empty_ok).then(|| "the name part must not be empty".to_owned());
    }
    if s.len() > 63 {
        return Some("must be at most 63 characters".to_owned());
    }
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    if !b.iter().all(inner)
        || !b[0].is_ascii_alphanumeric()
        || !b[b.len() - 1].is_ascii_alphanumeric()
    {
        return Some(
            "must be alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character"
                .to_owned(),
        );
    }
    None
}

/// A label or annotation key: `[prefix/]name`, the prefix a DNS subdomain.
pub(super) fn qualified_name(s: &str) -> Option<String> {
    match s.split_once('/') {
        Some((prefix, name)) => {
            if prefix.is_empty() {
                return Some("the prefix before '/' must not be empty".to_owned());
            }
            if let Some(p) = dns1123_subdomain(prefix) {
                return Some(format!("prefix: {p}"));
            }
            name_part(name, false)
        }
        None => name_part(s, false),
    }
}

/// A label value: empty, or a name part.
pub(super) fn label_value(s: &str) -> Option<String> {
    name_part(s, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_labels_and_keys() {
        assert_eq!(dns1123_subdomain("team-a-cq"), None);
        assert_eq!(dns1123_subdomain("a.b-c"), None);
        assert!(dns1123_subdomain("Team").is_some());
        assert!(dns1123_subdomain("a..b").is_some());
        assert!(dns1123_label("a.b").is_some());
        assert!(dns1123_label(&"a".repeat(64)).is_some());
        assert_eq!(dns1035_label("llm-training"), None);
        assert!(dns1035_label("7b-finetune").is_some());
        assert!(dns1035_label("a.b").is_some());
        assert_eq!(qualified_name("kueue.x-k8s.io/queue-name"), None);
        assert_eq!(qualified_name("app"), None);
        assert!(qualified_name("/app").is_some());
        assert!(qualified_name("Bad_Prefix/app").is_some());
        assert!(qualified_name("a/b/c").is_some());
        assert_eq!(label_value(""), None);
        assert_eq!(label_value("true"), None);
        assert!(label_value("a b").is_some());
        assert!(label_value(&"a".repeat(64)).is_some());
    }
}
