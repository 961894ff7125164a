//! `import-schemas`: the upstream CRDs and Kubernetes JSON schemas (`../shared/schemas`) →
//! the compact schema table raykueue embeds (`assets/schemas.json`).
//!
//! Only what validation reads is kept: types, properties, required, items, map values, enums,
//! patterns, formats, bounds, defaults (CEL sees the defaulted object, as in the API server),
//! int-or-string, preserve-unknown-fields, list types and CEL rules. Descriptions and
//! everything else go. Every subschema is interned: identical subschemas (PodTemplateSpec
//! appears many times in the Ray CRDs) are stored once and referred to by index. A keyword
//! this importer does not know is an error, never dropped: validation must not get weaker
//! without anyone noticing.
//!
//! The managed Prometheus flavours' kinds come from Go modules, by module name and version,
//! as the Go module proxy serves them (`MANAGED`): the caller says where a module's tree is.
//!
//! This file is also compiled into raykueue's integration tests (by path), which regenerate
//! the table in memory and compare it with the committed one. It needs only serde_json and
//! serde-saphyr, both dependencies of the main crate too.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;

/// The generated file, relative to the repository root.
pub(super) const OUTPUT: &str = "assets/schemas.json";

/// The kinds raykueue validates. CRDs: file under `crds/` and the served version to take.
const CRDS: &[(&str, &str)] = &[
    ("kueue.x-k8s.io_resourceflavors.yaml", "v1beta2"),
    ("kueue.x-k8s.io_workloadpriorityclasses.yaml", "v1beta2"),
    ("kueue.x-k8s.io_clusterqueues.yaml", "v1beta2"),
    ("kueue.x-k8s.io_localqueues.yaml", "v1beta2"),
    ("kueue.x-k8s.io_cohorts.yaml", "v1beta2"),
    // Workloads of a live snapshot (`explain`, `check --state`): read, never written.
    ("kueue.x-k8s.io_workloads.yaml", "v1beta2"),
    // Capacity-aware admission: topology-aware scheduling and ProvisioningRequest checks;
    // a fleet's manager: its MultiKueue admission check, config and clusters.
    ("kueue.x-k8s.io_topologies.yaml", "v1beta2"),
    ("kueue.x-k8s.io_admissionchecks.yaml", "v1beta2"),
    ("kueue.x-k8s.io_provisioningrequestconfigs.yaml", "v1beta2"),
    ("kueue.x-k8s.io_multikueueconfigs.yaml", "v1beta2"),
    ("kueue.x-k8s.io_multikueueclusters.yaml", "v1beta2"),
    ("ray.io_rayjobs.yaml", "v1"),
    ("ray.io_rayclusters.yaml", "v1"),
    ("ray.io_rayservices.yaml", "v1"),
    // GitOps kinds raykueue writes (Argo CD v3.5.1; Flux source-controller v1.9.1,
    // helm-controller v1.6.3, kustomize-controller v1.9.4).
    ("gitops/application-crd.yaml", "v1alpha1"),
    ("gitops/source.toolkit.fluxcd.io_gitrepositories.yaml", "v1"),
    (
        "gitops/source.toolkit.fluxcd.io_helmrepositories.yaml",
        "v1",
    ),
    ("gitops/source.toolkit.fluxcd.io_ocirepositories.yaml", "v1"),
    ("gitops/helm.toolkit.fluxcd.io_helmreleases.yaml", "v2"),
    (
        "gitops/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
        "v1",
    ),
    // The Prometheus Operator's (v0.93.0) kinds that `monitoring/` writes.
    (
        "monitoring/monitoring.coreos.com_servicemonitors.yaml",
        "v1",
    ),
    ("monitoring/monitoring.coreos.com_podmonitors.yaml", "v1"),
    (
        "monitoring/monitoring.coreos.com_prometheusrules.yaml",
        "v1",
    ),
];

/// The managed Prometheus flavours' kinds (`monitoring.collector: managed`), from Go modules:
/// module, version, file in the module, the served version to take, and the API group to give
/// it (`None`: the CRD's own).
///
/// - Azure Monitor's `azmonitoring.coreos.com/v1` ServiceMonitor and PodMonitor are the
///   Prometheus Operator's, renamed: Azure/prometheus-collector@v7.1.1-main-07-21-2026-39583fd5
///   `otelcollector/deploy/addon-chart/azure-monitor-metrics-addon/templates/ama-metrics-{servicemonitor,podmonitor}-crd.yaml`
///   hold prometheus-operator v0.84.0's schemas, descriptions and `status` left out (compared
///   node for node), under the group the addon's target allocator is built with
///   (`otelcollector/otel-allocator/Dockerfile`, `-X …/pkg/apis/monitoring.GroupName=azmonitoring.coreos.com`).
///   That repository is no Go module the proxy serves; prometheus-operator v0.84.0 is.
/// - Google Cloud Managed Service for Prometheus: GoogleCloudPlatform/prometheus-engine@v0.17.2
///   `charts/operator/crds/`, the version Google's documentation links its API reference at.
pub(super) const MANAGED: &[Managed] = &[
    Managed {
        module: "github.com/prometheus-operator/prometheus-operator",
        version: "v0.84.0",
        file: "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml",
        served: "v1",
        group: Some("azmonitoring.coreos.com"),
    },
    Managed {
        module: "github.com/prometheus-operator/prometheus-operator",
        version: "v0.84.0",
        file: "example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml",
        served: "v1",
        group: Some("azmonitoring.coreos.com"),
    },
    Managed {
        module: "github.com/GoogleCloudPlatform/prometheus-engine",
        version: "v0.17.2",
        file: "charts/operator/crds/monitoring.googleapis.com_podmonitorings.yaml",
        served: "v1",
        group: None,
    },
    Managed {
        module: "github.com/GoogleCloudPlatform/prometheus-engine",
        version: "v0.17.2",
        file: "charts/operator/crds/monitoring.googleapis.com_clusterrules.yaml",
        served: "v1",
        group: None,
    },
];

/// One managed flavour's kind, from a Go module (`MANAGED`).
pub(super) struct Managed {
    pub(super) module: &'static str,
    pub(super) version: &'static str,
    pub(super) file: &'static str,
    pub(super) served: &'static str,
    pub(super) group: Option<&'static str>,
}

/// Where a Go module's tree is: module, version → its folder.
pub(super) type ModuleDir<'a> = &'a dyn Fn(&str, &str) -> Result<std::path::PathBuf, String>;

/// Core kinds: file under `K8S_DIR`, apiVersion, kind, namespaced.
const NATIVE: &[(&str, &str, &str, bool)] = &[
    ("namespace-v1.json", "v1", "Namespace", false),
    // The Argo CD repository registration raykueue writes.
    ("secret-v1.json", "v1", "Secret", true),
    ("serviceaccount-v1.json", "v1", "ServiceAccount", true),
    ("configmap-v1.json", "v1", "ConfigMap", true),
    (
        "priorityclass-scheduling-v1.json",
        "scheduling.k8s.io/v1",
        "PriorityClass",
        false,
    ),
];

/// Core kinds with no file of their own, only a definition in `_definitions.json`: definition,
/// apiVersion, kind, namespaced. A fleet's workers grant the manager access with these.
const NATIVE_DEFINITIONS: &[(&str, &str, &str, bool)] = &[
    // The plain Jobs of Kueue's `batch/job` integration.
    ("io.k8s.api.batch.v1.Job", "batch/v1", "Job", true),
    (
        "io.k8s.api.rbac.v1.ClusterRole",
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        false,
    ),
    (
        "io.k8s.api.rbac.v1.ClusterRoleBinding",
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        false,
    ),
    // A managed collector's leave to read the token it scrapes Kueue with.
    (
        "io.k8s.api.rbac.v1.Role",
        "rbac.authorization.k8s.io/v1",
        "Role",
        true,
    ),
    (
        "io.k8s.api.rbac.v1.RoleBinding",
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        true,
    ),
];

const K8S_DIR: &str = "k8s/v1.34.0-local-strict";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// Bumped when the node format changes (the reader checks it).
pub(super) const FORMAT: u64 = 1;

/// Read `schemas_dir` (the `schemas/` folder of shared) and the managed flavours' modules
/// (`module_dir`), and return the generated file's text.
pub(super) fn import(schemas_dir: &Path, module_dir: ModuleDir) -> Result<String, String> {
    let definitions = read_json(&schemas_dir.join(K8S_DIR).join("_definitions.json"))?;
    let defs = definitions
        .get("$defs")
        .and_then(Value::as_object)
        .ok_or("_definitions.json has no $defs")?;
    let mut table = Table::default();
    let mut native = Native {
        defs,
        done: HashMap::new(),
    };
    // CRDs say only `metadata: {type: object}`; every kind gets the real ObjectMeta.
    let object_meta = native.def(&mut table, OBJECT_META, 0)?;
    let mut kinds = Vec::new();
    for (file, version) in CRDS {
        let crd = read_yaml(&schemas_dir.join("crds").join(file))?;
        kinds.push(crd_kind(&mut table, &crd, file, version, object_meta)?);
    }
    for (file, api_version, kind, namespaced) in NATIVE {
        let schema = read_json(&schemas_dir.join(K8S_DIR).join(file))?;
        let root = native.convert(&mut table, &schema, file, 0)?;
        kinds.push(KindEntry {
            api_version: (*api_version).to_owned(),
            kind: (*kind).to_owned(),
            namespaced: *namespaced,
            root,
        });
    }
    for (definition, api_version, kind, namespaced) in NATIVE_DEFINITIONS {
        let root = native.def(&mut table, definition, 0)?;
        kinds.push(KindEntry {
            api_version: (*api_version).to_owned(),
            kind: (*kind).to_owned(),
            namespaced: *namespaced,
            root,
        });
    }
    for m in MANAGED {
        let path = module_dir(m.module, m.version)?.join(m.file);
        let mut crd = read_yaml(&path)?;
        let label = format!("{}@{} {}", m.module, m.version, m.file);
        if let Some(group) = m.group {
            crd["spec"]["group"] = Value::from(group);
            // The renamed CRDs leave `status` out (it is never written).
            for v in crd["spec"]["versions"].as_array_mut().into_iter().flatten() {
                if let Some(props) = v
                    .pointer_mut("/schema/openAPIV3Schema/properties")
                    .and_then(Value::as_object_mut)
                {
                    props.remove("status");
                }
            }
        }
        kinds.push(crd_kind(&mut table, &crd, &label, m.served, object_meta)?);
    }
    Ok(table.write(&kinds))
}

struct KindEntry {
    api_version: String,
    kind: String,
    namespaced: bool,
    root: usize,
}

/// Interned nodes: canonical JSON text → index. Children are interned before their parents.
#[derive(Default)]
struct Table {
    nodes: Vec<String>,
    index: HashMap<String, usize>,
}

impl Table {
    fn intern(&mut self, node: BTreeMap<&'static str, Value>) -> usize {
        let map: Map<String, Value> = node.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        let text = Value::Object(map).to_string();
        if let Some(i) = self.index.get(&text) {
            return *i;
        }
        let i = self.nodes.len();
        self.nodes.push(text.clone());
        self.index.insert(text, i);
        i
    }

    fn any(&mut self) -> usize {
        self.intern(BTreeMap::new())
    }

    /// One node per line: small diffs when upstream changes.
    fn write(&self, kinds: &[KindEntry]) -> String {
        let mut out = String::from("{\"format\":");
        let _ = write!(out, "{FORMAT}");
        out.push_str(
            ",\"about\":\"Generated by `cargo run -p xtask -- import-schemas` from shared/schemas \
             (Kueue v0.19.2, KubeRay v1.7.0, Kubernetes v1.34.0, Argo CD v3.5.1, Flux source v1.9.1, helm v1.6.3, kustomize v1.9.4, Prometheus Operator v0.93.0) and the Go modules of the managed Prometheus flavours (Azure Monitor: Prometheus Operator v0.84.0 renamed; Google: prometheus-engine v0.17.2). Do not edit.\",\n\"kinds\":[\n",
        );
        for (i, k) in kinds.iter().enumerate() {
            let entry = serde_json::json!({
                "apiVersion": k.api_version,
                "kind": k.kind,
                "namespaced": k.namespaced,
                "root": k.root,
            });
            out.push_str(&entry.to_string());
            out.push_str(if i + 1 < kinds.len() { ",\n" } else { "\n" });
        }
        out.push_str("],\n\"nodes\":[\n");
        for (i, n) in self.nodes.iter().enumerate() {
            out.push_str(n);
            out.push_str(if i + 1 < self.nodes.len() {
                ",\n"
            } else {
                "\n"
            });
        }
        out.push_str("]}\n");
        out
    }
}

fn read_json(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_yaml(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // The Ray CRDs are large (1.4 MB, ~100k nodes): lift the limits meant for hostile input.
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_nodes: 10_000_000,
            max_depth: 256,
        },
    };
    serde_saphyr::from_str_with_options(&text, options)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn crd_kind(
    table: &mut Table,
    crd: &Value,
    file: &str,
    version: &str,
    object_meta: usize,
) -> Result<KindEntry, String> {
    let spec = crd.get("spec").ok_or_else(|| format!("{file}: no spec"))?;
    let group = spec
        .get("group")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{file}: no spec.group"))?;
    let kind = spec
        .pointer("/names/kind")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{file}: no spec.names.kind"))?;
    let namespaced = match spec.get("scope").and_then(Value::as_str) {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => return Err(format!("{file}: unexpected scope {other:?}")),
    };
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{file}: no spec.versions"))?;
    let v = versions
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        .ok_or_else(|| format!("{file}: no version {version}"))?;
    if v.get("served") != Some(&Value::Bool(true)) {
        return Err(format!("{file}: version {version} is not served"));
    }
    let schema = v
        .pointer("/schema/openAPIV3Schema")
        .and_then(Value::as_object)
        .ok_or_else(|| format!("{file}: {version} has no openAPIV3Schema"))?;
    // The root is converted by hand: `metadata` becomes ObjectMeta.
    let mut root = schema.clone();
    let Some(Value::Object(mut props)) = root.remove("properties") else {
        return Err(format!("{file}: root has no properties"));
    };
    let status = props.remove("status");
    let mut node = crd_node(table, &Value::Object(root), &format!("{file}#"))?;
    let mut converted = BTreeMap::new();
    for (name, sub) in &props {
        let idx = if name == "metadata" {
            object_meta
        } else {
            crd_convert(table, sub, &format!("{file}#/{name}"))?
        };
        converted.insert(name.clone(), Value::from(idx));
    }
    // `status` is converted too: raykueue never writes it, but it reads live objects
    // (`--state`), whose status (a Workload's admission and conditions) must be checked.
    if let Some(st) = &status {
        let idx = crd_convert(table, st, &format!("{file}#/status"))?;
        converted.insert("status".to_owned(), Value::from(idx));
    }
    node.insert("p", Value::Object(converted.into_iter().collect()));
    Ok(KindEntry {
        api_version: format!("{group}/{version}"),
        kind: kind.to_owned(),
        namespaced,
        root: table.intern(node),
    })
}

fn crd_convert(table: &mut Table, schema: &Value, path: &str) -> Result<usize, String> {
    let node = crd_node(table, schema, path)?;
    Ok(table.intern(node))
}

/// One CRD (OpenAPI v3, structural) schema → node fields; children interned first.
fn crd_node(
    table: &mut Table,
    schema: &Value,
    path: &str,
) -> Result<BTreeMap<&'static str, Value>, String> {
    let obj = schema
        .as_object()
        .ok_or_else(|| format!("{path}: schema is not an object"))?;
    let mut out = BTreeMap::new();
    let int_or_string = obj.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    for (key, v) in obj {
        let at = || format!("{path}/{key}");
        match key.as_str() {
            "description" | "title" | "example" | "x-kubernetes-map-type" => {}
            "type" => {
                let t = v
                    .as_str()
                    .ok_or_else(|| format!("{}: not a string", at()))?;
                if !matches!(
                    t,
                    "object" | "array" | "string" | "integer" | "number" | "boolean"
                ) {
                    return Err(format!("{}: unknown type {t}", at()));
                }
                out.insert("t", v.clone());
            }
            "nullable" => {
                if v == &Value::Bool(true) {
                    out.insert("n", Value::Bool(true));
                }
            }
            "properties" => {
                let props = v
                    .as_object()
                    .ok_or_else(|| format!("{}: not an object", at()))?;
                let mut converted = BTreeMap::new();
                for (name, sub) in props {
                    let idx = crd_convert(table, sub, &format!("{path}/{name}"))?;
                    converted.insert(name.clone(), Value::from(idx));
                }
                out.insert("p", Value::Object(converted.into_iter().collect()));
            }
            "items" => {
                out.insert(
                    "i",
                    Value::from(crd_convert(table, v, &format!("{path}[]"))?),
                );
            }
            "additionalProperties" => match v {
                Value::Bool(true) => {
                    out.insert("a", Value::from(table.any()));
                }
                Value::Bool(false) => {}
                _ => {
                    out.insert(
                        "a",
                        Value::from(crd_convert(table, v, &format!("{path}/*"))?),
                    );
                }
            },
            "anyOf" if int_or_string && is_int_or_string_any_of(v) => {}
            "x-kubernetes-int-or-string" => {
                if int_or_string {
                    out.insert("ios", Value::Bool(true));
                }
            }
            "x-kubernetes-preserve-unknown-fields" => {
                if v == &Value::Bool(true) {
                    out.insert("pu", Value::Bool(true));
                }
            }
            "x-kubernetes-list-type" => match v.as_str() {
                Some("atomic") => {}
                Some("set" | "map") => {
                    out.insert("lt", v.clone());
                }
                _ => return Err(format!("{}: unknown list type {v}", at())),
            },
            "x-kubernetes-list-map-keys" => {
                out.insert("lk", v.clone());
            }
            "x-kubernetes-validations" => {
                out.insert("v", rules(v, &at())?);
            }
            "default" => {
                out.insert("d", v.clone());
            }
            other => {
                let short = keyword(other).ok_or_else(|| {
                    format!(
                        "{}: schema keyword `{other}` is not supported by the importer",
                        at()
                    )
                })?;
                out.insert(short, v.clone());
            }
        }
    }
    Ok(out)
}

/// Validation keywords copied as they are, under a short name.
fn keyword(name: &str) -> Option<&'static str> {
    Some(match name {
        "required" => "r",
        "enum" => "e",
        "pattern" => "pat",
        "format" => "f",
        "minimum" => "min",
        "maximum" => "max",
        "exclusiveMinimum" => "xmin",
        "exclusiveMaximum" => "xmax",
        "multipleOf" => "mul",
        "minLength" => "minL",
        "maxLength" => "maxL",
        "minItems" => "minI",
        "maxItems" => "maxI",
        "minProperties" => "minP",
        "maxProperties" => "maxP",
        _ => return None,
    })
}

/// controller-gen writes int-or-string as `anyOf: [{type: integer}, {type: string}]` next to
/// `x-kubernetes-int-or-string: true`; the flag says it all.
fn is_int_or_string_any_of(v: &Value) -> bool {
    let Some(items) = v.as_array() else {
        return false;
    };
    let mut types: Vec<&str> = items
        .iter()
        .filter_map(|i| {
            let o = i.as_object()?;
            (o.len() == 1).then_some(())?;
            o.get("type")?.as_str()
        })
        .collect();
    types.sort_unstable();
    // A Quantity is string-or-number in the native schemas; raykueue writes every quantity as a
    // string, so int-or-string (which a fractional number fails) is the check it needs.
    types == ["integer", "string"] || types == ["number", "string"]
}

/// CEL rules, kept with their message (or messageExpression) and fieldPath.
fn rules(v: &Value, at: &str) -> Result<Value, String> {
    let list = v.as_array().ok_or_else(|| format!("{at}: not a list"))?;
    let mut out = Vec::new();
    for r in list {
        let o = r
            .as_object()
            .ok_or_else(|| format!("{at}: rule is not an object"))?;
        let mut rule = Map::new();
        for (k, val) in o {
            match k.as_str() {
                "rule" | "message" | "messageExpression" | "fieldPath" | "reason"
                | "optionalOldSelf" => {
                    rule.insert(k.clone(), val.clone());
                }
                other => return Err(format!("{at}: unknown rule key `{other}`")),
            }
        }
        if !rule.contains_key("rule") {
            return Err(format!("{at}: rule without `rule`"));
        }
        out.push(Value::Object(rule));
    }
    Ok(Value::Array(out))
}

/// Kubernetes JSON Schema (draft 2020-12, "strict") → the same node format. `$ref`s point
/// into `_definitions.json`; each definition is converted once.
struct Native<'a> {
    defs: &'a Map<String, Value>,
    done: HashMap<String, usize>,
}

impl Native<'_> {
    fn def(&mut self, table: &mut Table, name: &str, depth: usize) -> Result<usize, String> {
        if let Some(i) = self.done.get(name) {
            return Ok(*i);
        }
        let schema = self
            .defs
            .get(name)
            .ok_or_else(|| format!("_definitions.json: no definition {name}"))?;
        let idx = self.convert(table, schema, name, depth + 1)?;
        self.done.insert(name.to_owned(), idx);
        Ok(idx)
    }

    fn convert(
        &mut self,
        table: &mut Table,
        schema: &Value,
        path: &str,
        depth: usize,
    ) -> Result<usize, String> {
        if depth > 64 {
            return Err(format!("{path}: $ref chain too deep (a cycle?)"));
        }
        let obj = schema
            .as_object()
            .ok_or_else(|| format!("{path}: schema is not an object"))?;
        if let Some(r) = obj.get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| format!("{path}: $ref not a string"))?;
            let name = r
                .strip_prefix("/api/_definitions.json#/$defs/")
                .or_else(|| r.strip_prefix("#/$defs/"))
                .ok_or_else(|| format!("{path}: unsupported $ref {r}"))?;
            if let Some(extra) = obj.keys().find(|k| *k != "$ref" && *k != "description") {
                return Err(format!("{path}: `{extra}` next to $ref is not supported"));
            }
            return self.def(table, name, depth);
        }
        let mut out = BTreeMap::new();
        let mut object = false;
        let mut closed = false;
        for (key, v) in obj {
            let at = || format!("{path}/{key}");
            match key.as_str() {
                "description"
                | "$schema"
                | "$id"
                | "x-kubernetes-group-version-kind"
                | "x-kubernetes-patch-strategy"
                | "x-kubernetes-patch-merge-key"
                | "x-kubernetes-map-type"
                | "x-kubernetes-unions" => {}
                "type" => {
                    let (t, nullable) = native_type(v).ok_or_else(|| format!("{}: {v}", at()))?;
                    object = t == "object";
                    out.insert("t", Value::from(t));
                    if nullable {
                        out.insert("n", Value::Bool(true));
                    }
                }
                "properties" => {
                    let props = v
                        .as_object()
                        .ok_or_else(|| format!("{}: not an object", at()))?;
                    let mut converted = BTreeMap::new();
                    for (name, sub) in props {
                        let idx = self.convert(table, sub, &format!("{path}/{name}"), depth)?;
                        converted.insert(name.clone(), Value::from(idx));
                    }
                    out.insert("p", Value::Object(converted.into_iter().collect()));
                }
                "items" => {
                    let idx = self.convert(table, v, &format!("{path}[]"), depth)?;
                    out.insert("i", Value::from(idx));
                }
                "additionalProperties" => match v {
                    Value::Bool(false) => closed = true,
                    Value::Bool(true) => {
                        out.insert("a", Value::from(table.any()));
                    }
                    _ => {
                        let idx = self.convert(table, v, &format!("{path}/*"), depth)?;
                        out.insert("a", Value::from(idx));
                    }
                },
                "oneOf" => {
                    if !is_native_int_or_string(v) {
                        return Err(format!("{}: only int-or-string oneOf is supported", at()));
                    }
                    out.insert("ios", Value::Bool(true));
                }
                "x-kubernetes-list-type" => match v.as_str() {
                    Some("atomic") => {}
                    Some("set" | "map") => {
                        out.insert("lt", v.clone());
                    }
                    _ => return Err(format!("{}: unknown list type {v}", at())),
                },
                "x-kubernetes-list-map-keys" => {
                    out.insert("lk", v.clone());
                }
                other => {
                    let short = keyword(other).ok_or_else(|| {
                        format!(
                            "{}: schema keyword `{other}` is not supported by the importer",
                            at()
                        )
                    })?;
                    out.insert(short, v.clone());
                }
            }
        }
        // JSON Schema: an object without `additionalProperties: false` takes any other key.
        if object && !closed && !out.contains_key("a") {
            out.insert("pu", Value::Bool(true));
        }
        Ok(table.intern(out))
    }
}

/// `"string"` or `["string", "null"]` → (type, nullable).
fn native_type(v: &Value) -> Option<(&str, bool)> {
    match v {
        Value::String(s) => Some((s.as_str(), false)),
        Value::Array(items) => {
            let names: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            let nullable = names.contains(&"null");
            let rest: Vec<&str> = names.into_iter().filter(|n| *n != "null").collect();
            (rest.len() == 1).then(|| (rest[0], nullable))
        }
        _ => None,
    }
}

fn is_native_int_or_string(v: &Value) -> bool {
    let Some(items) = v.as_array() else {
        return false;
    };
    let mut types: Vec<&str> = items
        .iter()
        .filter_map(|i| native_type(i.get("type")?).map(|(t, _)| t))
        .collect();
    types.sort_unstable();
    // A Quantity is string-or-number in the native schemas; raykueue writes every quantity as a
    // string, so int-or-string (which a fractional number fails) is the check it needs.
    types == ["integer", "string"] || types == ["number", "string"]
}
