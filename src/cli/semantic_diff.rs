//! What changes in the cluster between two profiles, as a reviewer reads it: objects added and
//! removed, fields changed (`ClusterQueue team-b-cq: nvidia.com/gpu borrowingLimit 4 → 2`), and
//! node pools resized. Rendered as Markdown for a pull-request comment.

use crate::output::bundle::Bundle;
use crate::profile::Profile;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One change, already in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) subject: String,
    pub(crate) what: String,
}

/// Changes to the generated Kubernetes objects, in apply order of the new bundle.
pub(crate) fn object_changes(old: &Bundle, new: &Bundle) -> Vec<Change> {
    let key = |v: &Value| {
        let ns = v["metadata"]["namespace"].as_str().unwrap_or("");
        let name = v["metadata"]["name"].as_str().unwrap_or("");
        let kind = v["kind"].as_str().unwrap_or("");

        if ns.is_empty() {
            format!("{kind} {name}")
        } else {
            format!("{kind} {ns}/{name}")
        }
    };
    // The smoke test's RayJob is submitted and deleted by `infra/smoke.sh`, never kept in the
    // cluster: not a change a reviewer of the cluster needs to see.
    let kept =
        |r: &&crate::output::bundle::Written| !crate::model::smoke::is_smoke_file(&r.object.file);
    let olds: BTreeMap<String, &Value> = old
        .objects
        .iter()
        .filter(kept)
        .map(|r| (key(&r.object.value), &r.object.value))
        .collect();
    let news: Vec<(String, &Value)> = new
        .objects
        .iter()
        .filter(kept)
        .map(|r| (key(&r.object.value), &r.object.value))
        .collect();
    let mut out = Vec::new();
    for (subject, value) in &news {
        match olds.get(subject) {
            None => out.push(Change {
                subject: subject.clone(),
                what: "added".into(),
            }),
            Some(before) => {
                let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
                leaves(before, String::new(), &mut a);
                leaves(value, String::new(), &mut b);
                for (path, old_v) in &a {
                    match b.get(path) {
                        Some(new_v) if new_v != old_v => out.push(Change {
                            subject: subject.clone(),
                            what: format!("{} {} → {}", pretty(path), old_v, new_v),
                        }),
                        None => out.push(Change {
                            subject: subject.clone(),
                            what: format!("{} {} removed", pretty(path), old_v),
                        }),
                        _ => {}
                    }
                }
                for (path, new_v) in &b {
                    if !a.contains_key(path) {
                        out.push(Change {
                            subject: subject.clone(),
                            what: format!("{} {} added", pretty(path), new_v),
                        });
                    }
                }
            }
        }
    }
    let new_keys: Vec<&String> = news.iter().map(|(k, _)| k).collect();
    for subject in olds.keys() {
        if !new_keys.contains(&subject) {
            out.push(Change {
                subject: subject.clone(),
                what: "removed".into(),
            });
        }
    }
    out
}

/// Flatten to `path → scalar text`; list items with a `name` are addressed by it, so that a
/// reordered or inserted item does not show as a change of every later index.
fn leaves(v: &Value, path: String, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            if m.is_empty() {
                out.insert(path.clone(), "{}".into());
            }
            for (k, child) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves(child, p, out);
            }
        }
        Value::Array(items) => {
            if items.is_empty() {
                out.insert(path.clone(), "[]".into());
            }
            let scalars = items.iter().all(|i| !i.is_object() && !i.is_array());
            if scalars && !items.is_empty() {
                let list: Vec<String> = items.iter().map(scalar).collect();
                out.insert(path, format!("[{}]", list.join(", ")));
                return;
            }
            for (i, child) in items.iter().enumerate() {
                let seg = child["name"]
                    .as_str()
                    .or_else(|| child["groupName"].as_str())
                    .map_or_else(|| i.to_string(), str::to_owned);
                leaves(child, format!("{path}[{seg}]"), out);
            }
        }
        other => {
            out.insert(path, scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `spec.resourceGroups[1].flavors[gpu].resources[nvidia.com/gpu].borrowingLimit` →
/// `nvidia.com/gpu borrowingLimit (flavor gpu)`; other paths lose only their `spec.`.
fn pretty(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("spec.resourceGroups[")
        && let Some((_, after)) = rest.split_once("].flavors[")
        && let Some((flavor, after)) = after.split_once("].resources[")
        && let Some((resource, field)) = after.split_once("].")
    {
        return format!("{resource} {field} (flavor {flavor})");
    }
    path.strip_prefix("spec.").unwrap_or(path).to_owned()
}

/// Changes to the node pools (they are in scripts, not objects, so compared from the profiles),
/// field by field: `node pool gpupool: max 3 → 5`.
pub(crate) fn node_pool_changes(old: &Profile, new: &Profile) -> Vec<Change> {
    let pools = |p: &Profile| -> BTreeMap<String, BTreeMap<&'static str, String>> {
        p.cloud()
            .map(crate::cloud::pool_fields)
            .unwrap_or_default()
            .into_iter()
            .collect()
    };
    let (a, b) = (pools(old), pools(new));
    let mut out = Vec::new();
    for (name, after) in &b {
        let subject = format!("node pool {name}");
        let Some(before) = a.get(name) else {
            out.push(Change {
                subject,
                what: "added".into(),
            });
            continue;
        };
        let fields: std::collections::BTreeSet<&&str> = before.keys().chain(after.keys()).collect();
        for field in fields {
            let what = match (before.get(*field), after.get(*field)) {
                (Some(x), Some(y)) if x != y => format!("{field} {x} → {y}"),
                (Some(x), None) => format!("{field} {x} removed"),
                (None, Some(y)) => format!("{field} {y} added"),
                _ => continue,
            };
            out.push(Change {
                subject: subject.clone(),
                what,
            });
        }
    }
    for name in a.keys().filter(|n| !b.contains_key(*n)) {
        out.push(Change {
            subject: format!("node pool {name}"),
            what: "removed".into(),
        });
    }
    out
}

/// The Markdown report for a pull-request comment.
pub(crate) fn markdown(
    old_name: &str,
    new_name: &str,
    objects: &[Change],
    pools: &[Change],
) -> String {
    let mut md = format!("### raykueue diff: `{old_name}` → `{new_name}`\n\n");
    if objects.is_empty() && pools.is_empty() {
        md.push_str("No change in the cluster.\n");
        return md;
    }
    for (title, list) in [("Cluster objects", objects), ("Node pools", pools)] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(md, "**{title}**\n");
        for c in list {
            let _ = writeln!(md, "- `{}`: {}", c.subject, c.what);
        }
        md.push('\n');
    }
    md
}
