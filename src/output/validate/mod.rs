//! Stage 8 (output): validation. Every object raykueue writes, and every manifest given to
//! `raykueue validate`, is checked against the upstream schema of its kind (Kueue v1beta2,
//! KubeRay `ray.io/v1`, Kubernetes core; embedded from `assets/schemas.json`):
//!
//! - structure: types, enums, required fields, patterns, formats, bounds, int-or-string,
//!   nullable, list-type set/map uniqueness;
//! - unknown fields, which the API server prunes without a word (`walk`);
//! - `metadata`: name, namespace, label and annotation rules (`meta`), and the core API
//!   server's ConfigMap key and size rules (`core`);
//! - the CRDs' CEL rules (`cel`), transition rules excepted;
//! - Kueue's admission webhook rules for queues and Ray objects (`admission`);
//! - the KubeRay controller's checks, which pass the API server and fail at reconcile
//!   (`kuberay`).
//!
//! In generated output a finding is a bug in raykueue (`RK9xx`); in a user's manifest it is
//! the manifest's (`RK05x`, and `RK06x`/`RK07x` for what the cluster accepts but then refuses
//! to run). Each layer's severity is what the cluster does: what it refuses is an error, what
//! it accepts with a consequence is a warning.

use crate::base::codes;
mod cel;
mod core;
mod meta;
pub(crate) mod reconcile;
mod schema;
mod walk;
pub(crate) mod webhooks;

use crate::base::diagnostic::Diagnostic;
use crate::base::pointer::field_path;
use crate::input::load::{self, SpanMap};
use crate::output::bundle::Bundle;

use crate::base::source::Source;
use serde_json::Value;

/// Which kind of rule a violation breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Types, enums, required, patterns, formats, bounds, metadata rules.
    Schema,
    /// A field the schema does not have.
    UnknownField,
    /// A map key that is not allowed (label and annotation keys).
    BadKey,
    /// A required field that the API server would fill from its default.
    RequiredDefaulted,
    /// A null where the schema is not nullable: the API server prunes it (structural schemas
    /// drop such nulls before validation), so the object is accepted without the field.
    NullDropped,
    /// A CEL rule (`x-kubernetes-validations`) that the object breaks.
    Rule,
    /// A rule of Kueue's admission webhooks.
    Admission,
    /// Kueue's webhook accepts the object but leaves it unmanaged, with a consequence.
    Unmanaged,
    /// Kueue's webhook accepts the object but cannot build its Workload.
    KueueWorkload,
    /// The KubeRay controller refuses the object at reconcile (`ValidationFailed`).
    KubeRay,
    /// A rule this validator could not evaluate.
    NotEvaluated,
}

impl Check {
    /// Whether the API server (schema, CEL, an admission webhook) refuses an object with this
    /// finding, so that it never reaches a controller.
    fn refused_by_api_server(self) -> bool {
        matches!(
            self,
            Check::Schema | Check::UnknownField | Check::BadKey | Check::Rule | Check::Admission
        )
    }
}

/// One finding: where in the object (JSON pointer), what, and what would be right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub check: Check,
    pub pointer: String,
    pub message: String,
    pub hint: Option<String>,
}

/// The result of validating one object.
#[derive(Debug)]
pub enum Verdict {
    /// Checked against its kind's schema: the violations (none: valid).
    Checked(Vec<Violation>),
    /// raykueue has no schema for this apiVersion and kind: not validated.
    Unknown {
        message: String,
        hint: Option<String>,
    },
}

/// API groups whose objects raykueue may write without a schema to check them against: only
/// kustomize's own `kustomization.yaml` files, which no API server sees. Argo CD and Flux
/// objects and the repository Secret are validated like every other kind. Any other unknown
/// kind in the output is an error: a new kind needs its schema imported.
const UNCHECKED_GROUPS: &[&str] = &["kustomize.config.k8s.io"];

/// Single kinds written without a schema (none today).
const UNCHECKED_KINDS: &[(&str, &str)] = &[];

/// Validate one object (a parsed YAML/JSON document).
pub fn object(value: &Value) -> Verdict {
    object_skipping(value, &[])
}

/// Validate one object read back from a cluster, leaving the `metadata` fields the API
/// server sets (`skip`) unchecked: the object is checked as it was written, without copying
/// it to take them out.
pub(crate) fn object_skipping(value: &Value, skip: &'static [&'static str]) -> Verdict {
    let table = match schema::table() {
        Ok(t) => t,
        Err(e) => {
            return Verdict::Checked(vec![Violation {
                check: Check::Schema,
                pointer: String::new(),
                message: format!("internal error: {e}"),
                hint: None,
            }]);
        }
    };
    let mut w = walk::Walker::new(table);
    w.skip_metadata = skip;
    let Value::Object(root) = value else {
        w.report(
            Check::Schema,
            "",
            format!(
                "expected a mapping (a Kubernetes object), found {}",
                walk::describe(value)
            ),
            None,
        );
        return Verdict::Checked(w.out);
    };
    let api_version = root.get("apiVersion").and_then(Value::as_str);
    let kind = root.get("kind").and_then(Value::as_str);
    let (Some(api_version), Some(kind)) = (api_version, kind) else {
        for field in ["apiVersion", "kind"] {
            if root.get(field).and_then(Value::as_str).is_none() {
                w.report(
                    Check::Schema,
                    &format!("/{field}"),
                    format!("`{field}` is missing or not a string"),
                    None,
                );
            }
        }
        return Verdict::Checked(w.out);
    };
    let Some(entry) = table.kind(api_version, kind) else {
        let known = table.versions_of(kind);
        let hint = if known.is_empty() {
            None
        } else {
            Some(format!(
                "raykueue validates {kind} as apiVersion {}{}",
                known.join(", "),
                if api_version.starts_with("kueue.x-k8s.io/v1beta1") {
                    " (v1beta1 is deprecated; v1beta2 is the storage version)"
                } else {
                    ""
                }
            ))
        };
        return Verdict::Unknown {
            message: format!(
                "no schema for apiVersion `{api_version}` kind `{kind}`: not validated"
            ),
            hint,
        };
    };
    w.walk(entry.root, value, "");
    meta::run(&mut w, kind, entry.namespaced, root);
    core::run(&mut w, kind, root);
    webhooks::run(&mut w, kind, root);
    let refused: Vec<String> = w
        .out
        .iter()
        .filter(|v| v.check.refused_by_api_server())
        .map(|v| v.pointer.clone())
        .collect();
    let before = w.out.len();
    reconcile::run(&mut w, kind, root);
    // A field the API server refuses never reaches the controller: one finding, the first
    // layer's (the CRD bounds some fields the controller checks again).
    let mut i = 0;
    w.out.retain(|v| {
        i += 1;
        i <= before || !refused.contains(&v.pointer)
    });
    Verdict::Checked(w.out)
}

/// `ClusterQueue/team-a-cq`, `RayJob/ray/llm-training`: how messages name an object.
pub(crate) fn object_name(value: &Value) -> String {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("object");
    let meta = value.get("metadata");
    let name = meta
        .and_then(|m| m.get("name").or_else(|| m.get("generateName")))
        .and_then(Value::as_str)
        .unwrap_or("<unnamed>");
    match meta
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
    {
        Some(ns) => format!("{kind}/{ns}/{name}"),
        None => format!("{kind}/{name}"),
    }
}

/// Whose object it is: the codes and wording differ, the checks do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// raykueue's own output: any finding is a bug in raykueue.
    Generated,
    /// A manifest given to `raykueue validate`.
    Manifest,
}

/// Where an object stands in a parsed document: its source, the object's value, the
/// document's positions, and the object's JSON pointer in the document (`""`, or `/items/3`
/// in a `List`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place<'a> {
    pub(crate) source: &'a Source,
    pub(crate) object: &'a Value,
    pub(crate) spans: &'a SpanMap,
    pub(crate) base: &'a str,
}

/// A violation as a diagnostic, placed in `place` when the object has one.
pub(crate) fn diagnostic(
    origin: Origin,
    name: &str,
    v: &Violation,
    place: Option<Place>,
) -> Diagnostic {
    let generated = origin == Origin::Generated;
    let mut d = match (v.check, generated) {
        (
            Check::Schema
            | Check::UnknownField
            | Check::BadKey
            | Check::RequiredDefaulted
            | Check::NullDropped,
            true,
        ) => Diagnostic::new(&codes::GENERATED_SCHEMA, v.message.clone()),
        (Check::Rule, true) => Diagnostic::new(&codes::GENERATED_RULE, v.message.clone()),
        (Check::Admission | Check::Unmanaged | Check::KueueWorkload, true) => {
            Diagnostic::new(&codes::GENERATED_WEBHOOK, v.message.clone())
        }
        (Check::KubeRay, true) => {
            Diagnostic::new(&codes::GENERATED_KUBERAY_REFUSES, v.message.clone())
        }
        (Check::NotEvaluated, true) => {
            Diagnostic::new(&codes::GENERATED_NOT_EVALUATED, v.message.clone())
        }
        (Check::Schema | Check::UnknownField | Check::BadKey, false) => {
            Diagnostic::new(&codes::MANIFEST_SCHEMA, v.message.clone())
        }
        (Check::RequiredDefaulted, false) => {
            Diagnostic::new(&codes::MANIFEST_DEFAULTED, v.message.clone())
        }
        (Check::NullDropped, false) => {
            Diagnostic::new(&codes::MANIFEST_NULL_DROPPED, v.message.clone())
        }
        (Check::Rule, false) => Diagnostic::new(&codes::MANIFEST_RULE, v.message.clone()),
        (Check::Admission, false) => Diagnostic::new(&codes::MANIFEST_WEBHOOK, v.message.clone()),
        (Check::NotEvaluated, false) => {
            Diagnostic::new(&codes::MANIFEST_NOT_EVALUATED, v.message.clone())
        }
        (Check::Unmanaged, false) => Diagnostic::new(&codes::UNMANAGED, v.message.clone()),
        (Check::KueueWorkload, false) => Diagnostic::new(&codes::NO_WORKLOAD, v.message.clone()),
        (Check::KubeRay, false) => Diagnostic::new(&codes::KUBERAY_REFUSES, v.message.clone()),
    };
    let field = field_path(&v.pointer);
    d = d.path(if field.is_empty() {
        name.to_owned()
    } else {
        format!("{name}: {field}")
    });
    if let Some(p) = place {
        let pointer = format!("{}{}", p.base, v.pointer);
        // A scalar is shown where it is; a field that is missing, unknown, or a whole
        // mapping or list is shown at its key (`spec:`), not at its first entry.
        let scalar = p
            .object
            .pointer(&v.pointer)
            .is_some_and(|x| !x.is_object() && !x.is_array());
        let at_key = matches!(v.check, Check::UnknownField | Check::BadKey);
        let pos = if scalar && !at_key {
            p.spans.value_pos(&pointer)
        } else if p.spans.has(&pointer) {
            p.spans.key_pos(&pointer)
        } else {
            p.spans.key_pos(parent(&pointer))
        };
        d = d.at(p.source, pos);
    }
    // KubeRay's checks also read values a profile passes through verbatim (rayStartParams,
    // env, annotations), so such a finding is not always raykueue's own.
    let bug = if v.check == Check::KubeRay {
        "raykueue wrote this object: if the value comes from the profile (rayStartParams, env), change it there; otherwise it is a bug in raykueue, please report it with the profile"
    } else {
        "this is a bug in raykueue, not in the profile: please report it with the profile"
    };
    match (&v.hint, generated) {
        (Some(h), true) => d.hint(format!("{h}; {bug}")),
        (None, true) => d.hint(bug),
        (Some(h), false) => d.hint(h.clone()),
        (None, false) => d,
    }
}

/// Validate the bundle's objects once, on the data that will be written (on all cores when
/// there are many): the objects that fail, by their index in apply order, with what fails. An
/// object of a kind without a schema fails too, unless its group is one raykueue writes
/// unchecked (kustomize's own files).
pub(crate) fn generated<'a>(
    objects: impl IntoIterator<Item = &'a crate::model::Object>,
) -> Vec<(usize, Verdict)> {
    let objects: Vec<&crate::model::Object> = objects.into_iter().collect();
    let verdicts = crate::base::par::map(crate::base::par::wide(objects.len()), &objects, |o| {
        object(&o.value)
    });
    verdicts
        .into_iter()
        .enumerate()
        .zip(&objects)
        .filter_map(|((i, v), o)| match &v {
            Verdict::Checked(found) if found.is_empty() => None,
            Verdict::Unknown { .. } if unchecked_group(&o.value) => None,
            _ => Some((i, v)),
        })
        .collect()
}

/// Every object of a written bundle validated (`generated`) and its findings placed (`place`):
/// what a test or the validation benchmark asks of a whole bundle.
pub fn bundle(bundle: &Bundle) -> Vec<Diagnostic> {
    place(bundle, generated(bundle.objects.iter().map(|w| &w.object)))
}

/// The findings of the objects that failed (`generated`), as errors (RK9xx) placed in the file
/// of the written bundle each object goes to. Nothing is validated again.
pub(crate) fn place(bundle: &Bundle, failed: Vec<(usize, Verdict)>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, verdict) in failed {
        let Some(r) = bundle.objects.get(i) else {
            continue;
        };
        let name = r.object.display_name();
        let violations = match verdict {
            Verdict::Checked(v) => v,
            Verdict::Unknown { message, hint } => {
                let mut d = Diagnostic::new(&codes::GENERATED_UNPLACED, format!("internal error: {message}"))
                    .path(name)
                    .hint("import its schema (xtask/src/import.rs) or, for GitOps kinds without one, list its group in UNCHECKED_GROUPS (src/output/validate/mod.rs)");
                if let Some(h) = hint {
                    d = d.hint(h);
                }
                out.push(d);
                continue;
            }
        };
        let located = locate(bundle, i);
        for v in &violations {
            out.push(diagnostic(
                Origin::Generated,
                &name,
                v,
                located.as_ref().map(|(source, doc)| Place {
                    source,
                    object: &doc.value,
                    spans: &doc.spans,
                    base: "",
                }),
            ));
        }
    }
    out
}

fn parent(pointer: &str) -> &str {
    pointer.rfind('/').map_or("", |i| &pointer[..i])
}

fn unchecked_group(value: &Value) -> bool {
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    UNCHECKED_GROUPS.contains(&group) || UNCHECKED_KINDS.contains(&(api_version, kind))
}

/// The bundle file of object `i` and its document there, parsed with positions (only when
/// something is to be reported, so the cost is on the error path).
fn locate(bundle: &Bundle, i: usize) -> Option<(Source, load::Document)> {
    let r = bundle.objects.get(i)?;
    let text = bundle.files.get(&r.object.file)?;
    let index = bundle.objects[..i]
        .iter()
        .filter(|o| o.object.file == r.object.file)
        .count();
    let source = Source::new(r.object.file.as_str(), text.as_str());
    let doc = load::parse_stream(&source).ok()?.into_iter().nth(index)?;
    Some((source, doc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn violations(v: &Value) -> Vec<Violation> {
        match object(v) {
            Verdict::Checked(v) => v,
            Verdict::Unknown { message, .. } => panic!("{message}"),
        }
    }

    fn cq(spec: &Value) -> Value {
        json!({
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "ClusterQueue",
            "metadata": {"name": "team-a-cq", "labels": {"app.kubernetes.io/managed-by": "raykueue"}},
            "spec": spec,
        })
    }

    #[test]
    fn a_valid_cluster_queue_passes() {
        let v = cq(&json!({
            "cohortName": "shared",
            "namespaceSelector": {},
            "queueingStrategy": "BestEffortFIFO",
            "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": "48", "borrowingLimit": 48},
                    {"name": "memory", "nominalQuota": "768Gi"},
                ]}],
            }],
        }));
        assert_eq!(violations(&v), vec![]);
    }

    #[test]
    fn finds_unknown_fields_enums_types_rules_and_metadata() {
        let v = cq(&json!({
            "cohort": "shared",
            "queueingStrategy": "Fifo",
            "resourceGroups": [{
                "coveredResources": ["cpu", "memory"],
                "flavors": [{"name": "default", "resources": [
                    {"name": "cpu", "nominalQuota": "48", "borrowingLimit": "4"},
                ]}],
            }],
        }));
        let found = violations(&v);
        let has =
            |check: Check, ptr: &str| found.iter().any(|f| f.check == check && f.pointer == ptr);
        assert!(has(Check::UnknownField, "/spec/cohort"), "{found:#?}");
        assert!(has(Check::Schema, "/spec/queueingStrategy"), "{found:#?}");
        // The size rule on the group and the borrowing rule on spec both fail.
        assert!(has(Check::Rule, "/spec/resourceGroups/0"), "{found:#?}");
        assert!(has(Check::Rule, "/spec"), "{found:#?}");
        let found = violations(&cq(&json!({"stopPolicy": 3})));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(found[0].message.contains("expected a string"), "{found:#?}");
        let mut bad = cq(&json!({}));
        bad["metadata"]["name"] = json!("Team_A");
        bad["metadata"]["namespace"] = json!("ray");
        let found = violations(&bad);
        assert!(
            found.iter().any(|f| f.pointer == "/metadata/name"),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|f| f.pointer == "/metadata/namespace"),
            "{found:#?}"
        );
    }

    #[test]
    fn unknown_kinds_are_not_validated_and_say_so() {
        let v = json!({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "a"}});
        let Verdict::Unknown { hint, .. } = object(&v) else {
            panic!("v1beta1 has no schema here");
        };
        assert!(hint.unwrap().contains("kueue.x-k8s.io/v1beta2"));
    }

    #[test]
    fn the_compile_hook_names_object_path_and_rule_in_the_bundle_file() {
        use crate::model::Object;
        use crate::output::bundle::Written;
        let value = cq(&json!({"cohort": "shared", "namespaceSelector": {}}));
        let object = Object::data(
            "ClusterQueue",
            "team-a-cq",
            None,
            "platform/20-clusterqueues.yaml",
            value.clone(),
        );
        let failed = generated([&object]);
        let yaml = crate::base::yaml::to_yaml(&value).unwrap();
        let mut b = Bundle::default();
        b.add_object_files(vec![Written { object, yaml }], "# header\n");
        let diags = place(&b, failed);
        assert_eq!(diags.len(), 1, "{diags:#?}");
        let d = &diags[0];
        assert_eq!(d.code, "RK901");
        assert!(d.is_error());
        assert_eq!(
            d.path.as_deref(),
            Some("ClusterQueue/team-a-cq: spec.cohort")
        );
        assert!(
            d.message.contains("unknown field `cohort`"),
            "{}",
            d.message
        );
        assert!(d.hint.as_deref().unwrap().contains("bug in raykueue"));
        let place = d.place.as_ref().unwrap();
        assert_eq!(&*place.source.name, "platform/20-clusterqueues.yaml");
        // header, `---`, apiVersion, kind, metadata (4 lines), spec, then `cohort`.
        assert_eq!(place.pos.line, 10, "{}", place.source.text);
    }

    #[test]
    fn required_fields_with_defaults_are_flagged() {
        let v = json!({
            "apiVersion": "ray.io/v1", "kind": "RayCluster",
            "metadata": {"name": "c", "namespace": "ray"},
            "spec": {
                "headGroupSpec": {"template": {"spec": {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}},
                "workerGroupSpecs": [{"groupName": "gpu", "template": {"spec": {"containers": [{"name": "w", "image": "rayproject/ray:2.52.0"}]}}}],
            },
        });
        let found = violations(&v);
        assert!(
            found.iter().any(|f| f.check == Check::RequiredDefaulted
                && f.pointer == "/spec/workerGroupSpecs/0/minReplicas"),
            "{found:#?}"
        );
    }
}
