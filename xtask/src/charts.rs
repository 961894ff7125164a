//! `import-schemas` (second part): the pinned Helm charts' values (`../shared/schemas/charts`)
//! → `assets/charts.json`, what raykueue needs to write values files that match the chart they
//! are for:
//!
//! - `keys`: every key path the chart's values define (`controllerManager.tolerations`), so a
//!   test can prove that each key a generated values file sets exists in the pinned chart;
//! - `defaults`: the few defaults raykueue builds on — Kueue's default controller
//!   Configuration (the chart ships it as one YAML string that a values file replaces whole,
//!   so raykueue starts from it and changes only what the profile decides) and each operator
//!   pod's resources (counted on the node pool the operators run on).
//!
//! Like `import.rs`, this file is also compiled into the integration tests (by path), which
//! regenerate the table in memory and compare it with the committed one.

use serde_json::{Map, Value, json};
use std::path::Path;

/// The generated file, relative to the repository root.
pub(super) const OUTPUT: &str = "assets/charts.json";

/// Chart name, values file under `charts/`, and the default paths raykueue reads.
const CHARTS: &[(&str, &str, &[&str])] = &[
    (
        "kueue",
        "kueue-0.19.2.values.yaml",
        &[
            "managerConfig.controllerManagerConfigYaml",
            "controllerManager.manager.resources",
        ],
    ),
    (
        "kuberay-operator",
        "kuberay-operator-1.7.0.values.yaml",
        &["resources"],
    ),
];

/// A chart another registry publishes at an older version than the pinned one: its keys are the
/// pinned chart's less those the older version does not define yet (each list from the two
/// values files compared key by key). Its defaults are the pinned chart's: raykueue's values
/// file for it builds on the same Configuration fields.
struct Variant {
    /// The table entry written (`<registry>/<chart>`).
    name: &'static str,
    /// The pinned chart it derives from.
    base: &'static str,
    version: &'static str,
    absent: &'static [&'static str],
}

/// The AKS AI runtime's registry (`oci://mcr.microsoft.com/aks/ai-runtime/helm`) publishes
/// upstream's charts: the Azure AKS example installs them with upstream's value keys
/// (Azure/AKS@3112ed89eab56d37f8d29780a0647b1ee1368ca6
/// `examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf`: `image.repository`,
/// `env[0].name`, `controllerManager.manager.image.repository`, versions in `variables.tf`).
const VARIANTS: &[Variant] = &[
    // kubernetes-sigs/kueue@v0.17.1 against @v0.19.2 `charts/kueue/values.yaml`.
    Variant {
        name: "aks-ai-runtime/kueue",
        base: "kueue",
        version: "0.17.1",
        absent: &[
            "controllerManager.dnsPolicy",
            "controllerManager.hostNetwork",
            "controllerManager.strategy",
            "enableMutatingAdmissionPolicy",
            "enableVisibilityAuthReaderRoleBinding",
            "kueueViz.backend.ingress.tlsEnabled",
            "kueueViz.frontend.containerSecurityContext.allowPrivilegeEscalation",
            "kueueViz.frontend.containerSecurityContext.capabilities",
            "kueueViz.frontend.containerSecurityContext.capabilities.drop",
            "kueueViz.frontend.containerSecurityContext.readOnlyRootFilesystem",
            "kueueViz.frontend.ingress.tlsEnabled",
            "kueueViz.frontend.podSecurityContext.runAsNonRoot",
            "kueueViz.frontend.podSecurityContext.runAsUser",
            "kueueViz.frontend.podSecurityContext.seccompProfile",
            "kueueViz.frontend.podSecurityContext.seccompProfile.type",
        ],
    },
    // ray-project/kuberay@v1.6.1 against @v1.7.0 `helm-chart/kuberay-operator/values.yaml`
    // (1.6.1 also has `metrics.serviceMonitor.selector`, which 1.7.0 renames to
    // `additionalLabels`; raykueue sets neither).
    Variant {
        name: "aks-ai-runtime/kuberay-operator",
        base: "kuberay-operator",
        version: "1.6.1",
        absent: &[
            "configuration.defaultPodAnnotations",
            "configuration.defaultPodLabels",
            "metrics.serviceMonitor.additionalLabels",
        ],
    },
];

/// The variants' entries, from the pinned charts' entries in `charts`.
fn variants(charts: &mut Map<String, Value>) -> Result<(), String> {
    for v in VARIANTS {
        let base = charts
            .get(v.base)
            .ok_or_else(|| format!("{}: no pinned chart `{}`", v.name, v.base))?;
        let keys: Vec<Value> = base["keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|k| k.as_str().is_some_and(|k| !v.absent.contains(&k)))
            .cloned()
            .collect();
        if let Some(missing) = v.absent.iter().find(|a| {
            !base["keys"]
                .as_array()
                .is_some_and(|k| k.contains(&json!(a)))
        }) {
            return Err(format!("{}: `{missing}` is no key of {}", v.name, v.base));
        }
        let entry = json!({ "version": v.version, "base": v.base, "keys": keys });
        charts.insert(v.name.to_owned(), entry);
    }
    Ok(())
}

/// Read `schemas_dir` (the `schemas/` folder of shared) and return the generated file's text.
pub(super) fn import(schemas_dir: &Path) -> Result<String, String> {
    let mut charts = Map::new();
    for (chart, file, wanted) in CHARTS {
        let path = schemas_dir.join("charts").join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let values: Value = serde_saphyr::from_str(&text)
            .map_err(|e| format!("{}: not YAML: {e}", path.display()))?;
        let version = file
            .strip_prefix(chart)
            .and_then(|v| v.strip_prefix('-'))
            .and_then(|v| v.strip_suffix(".values.yaml"))
            .ok_or_else(|| format!("{file}: expected `<chart>-<version>.values.yaml`"))?;
        let mut keys = Vec::new();
        key_paths(&values, "", &mut keys);
        let mut defaults = Map::new();
        for key in *wanted {
            let mut value = lookup(&values, key)
                .ok_or_else(|| format!("{file}: no `{key}`"))?
                .clone();
            // The Configuration is YAML inside a string: stored as data.
            if let Value::String(s) = &value {
                value = serde_saphyr::from_str(s)
                    .map_err(|e| format!("{file}: `{key}` is not YAML: {e}"))?;
            }
            defaults.insert((*key).to_owned(), value);
        }
        charts.insert(
            (*chart).to_owned(),
            json!({ "version": version, "keys": keys, "defaults": defaults }),
        );
    }
    variants(&mut charts)?;
    let out = json!({
        "about": "Generated by `cargo run -p xtask -- import-schemas` from shared/schemas/charts; do not edit.",
        "charts": charts,
    });
    let mut text = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// Every map key path below `v`, parents before children, in the file's order.
pub(super) fn key_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    if let Value::Object(m) = v {
        for (k, child) in m {
            let path = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            out.push(path.clone());
            key_paths(child, &path, out);
        }
    }
}

fn lookup<'v>(v: &'v Value, dotted: &str) -> Option<&'v Value> {
    dotted.split('.').try_fold(v, |v, k| v.get(k))
}
