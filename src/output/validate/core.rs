//! Rules the Kubernetes API server applies to core kinds beyond their schema (apimachinery and
//! `pkg/apis/core/validation`): ConfigMap keys and size. raykueue builds ConfigMaps from the
//! script files a profile names, so a file name is a key here.

use super::Check;
use super::walk::{Walker, short};
use crate::base::pointer::pointer_push;
use serde_json::{Map, Value};

/// `corev1.MaxSecretSize`, which also bounds a ConfigMap's data.
const CONFIGMAP_MAX_BYTES: usize = 1024 * 1024;

pub(super) fn run(w: &mut Walker, kind: &str, root: &Map<String, Value>) {
    if kind == "ConfigMap" {
        config_map(w, root);
    }
}

fn config_map(w: &mut Walker, root: &Map<String, Value>) {
    let data = root.get("data").and_then(Value::as_object);
    let binary = root.get("binaryData").and_then(Value::as_object);
    let mut total = 0;
    for (field, map) in [("data", data), ("binaryData", binary)] {
        for (k, v) in map.into_iter().flatten() {
            total += v.as_str().map_or(0, str::len);
            let at = pointer_push(&format!("/{field}"), k);
            if let Some(p) = config_map_key(k) {
                w.report(
                    Check::BadKey,
                    &at,
                    format!("key {} is invalid: {p}", short(&Value::from(k.as_str()))),
                    None,
                );
            }
            if field == "binaryData" && data.is_some_and(|d| d.contains_key(k)) {
                w.report(
                    Check::BadKey,
                    &at,
                    format!("key `{k}` is in both data and binaryData"),
                    None,
                );
            }
        }
    }
    if total > CONFIGMAP_MAX_BYTES {
        w.report(
            Check::Schema,
            "/data",
            format!("the data takes {total} bytes, more than the 1 MiB a ConfigMap may hold"),
            None,
        );
    }
}

/// `IsConfigMapKey`: `[-._a-zA-Z0-9]+`, at most 253 characters, not `.` or `..`.
fn config_map_key(k: &str) -> Option<&'static str> {
    if k.is_empty() || k.len() > 253 {
        return Some("must be 1 to 253 characters");
    }
    if k == "." || k == ".." {
        return Some("must not be `.` or `..`");
    }
    if !k
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
    {
        return Some("must consist of alphanumeric characters, '-', '_' or '.'");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_map_keys() {
        assert_eq!(config_map_key("train.py"), None);
        assert_eq!(config_map_key(".env"), None);
        assert!(config_map_key("dir/train.py").is_some());
        assert!(config_map_key("my script.py").is_some());
        assert!(config_map_key("..").is_some());
        assert!(config_map_key("").is_some());
    }
}
