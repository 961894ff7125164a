//! Helm values that match the chart they are for (Kueue 0.19.2, KubeRay operator 1.7.0, or the
//! AKS AI runtime's Kueue 0.17.1 and KubeRay 1.6.1): every key a generated values file sets
//! exists in the chosen chart's values (`assets/charts.json`, imported from
//! `../shared/schemas/charts` and checked fresh here), the Kueue Configuration is
//! the chart's own with only the profile's frameworks changed, and the operators run on the
//! System pool, tolerating `CriticalAddonsOnly` where it is set.

use crate::common::{bundle_text, repo, shared, skip};
use raykueue::api::facts::operators;
use serde_json::Value;

#[path = "../../xtask/src/charts.rs"]
mod chart_import;

const PROFILES: &[&str] = &[
    "single",
    "team",
    "kuberay-gpu",
    "profiles/examples/prod.yaml",
    "examples/aks-ai-runtime",
];

fn compiled(profile: &str) -> raykueue::api::compile::Compiled {
    let resolved = raykueue::api::input::resolve::resolve(profile).expect("resolves");
    raykueue::api::compile::compile(&resolved, false).expect("compiles")
}

/// The files of a profile's bundle, by name.
fn files(profile: &str) -> std::collections::BTreeMap<String, String> {
    compiled(profile).bundle.files
}

fn paths(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    chart_import::key_paths(v, "", &mut out);
    out
}

#[test]
fn every_key_a_values_file_sets_exists_in_the_pinned_chart() {
    let mut checked = 0;
    let mut entries = std::collections::BTreeSet::new();
    for profile in PROFILES {
        let compiled = compiled(profile);
        let files = &compiled.bundle.files;
        for (file, chart) in [
            ("infra/kueue-values.yaml", "kueue"),
            ("infra/kuberay-values.yaml", "kuberay-operator"),
        ] {
            let Some(text) = files.get(file) else {
                continue;
            };
            let values: Value = serde_saphyr::from_str(text).unwrap();
            let entry = operators::chart_entry(&compiled.profile, chart);
            entries.insert(entry);
            let known = operators::chart_keys(entry);
            assert!(known.len() > 50, "{chart}: the chart table has its keys");
            // A key whose chart default is an empty map (`nodeSelector: {}`) takes any keys.
            let free_form = |key: &str| {
                !known.iter().any(|k| {
                    k.len() > key.len() && k.starts_with(key) && k.as_bytes()[key.len()] == b'.'
                })
            };
            for key in paths(&values) {
                let under_free_form = key
                    .char_indices()
                    .filter(|(_, c)| *c == '.')
                    .any(|(i, _)| known.contains(&&key[..i]) && free_form(&key[..i]));
                if under_free_form {
                    continue;
                }
                assert!(
                    known.contains(&key.as_str()),
                    "{profile} {file}: `{key}` is no key of the {chart} chart"
                );
                checked += 1;
            }
            // The Configuration inside: under a field the chart's Configuration sets, the
            // chart's own keys only; any other field one of Kueue's Configuration fields (the
            // profile's `operators.kueue.configuration`, typed).
            if let Some(config) = values["managerConfig"]["controllerManagerConfigYaml"].as_str() {
                let config: Value = serde_saphyr::from_str(config).unwrap();
                let default = operators::kueue_default_configuration();
                let default_keys = paths(&default);
                for key in paths(&config) {
                    let top = key.split('.').next().unwrap_or_default();
                    assert!(
                        operators::CONFIGURATION_FIELDS.contains(&top),
                        "{profile}: `{top}` is no field of Kueue's Configuration"
                    );
                    // A monitored profile's one addition (docs/monitoring.md): a field of
                    // Kueue's `ControllerMetrics` (kueue@v0.19.2
                    // apis/config/v1beta2/configuration_types.go) the chart leaves commented out.
                    if default.get(top).is_some() && key != MONITORING_KEY {
                        assert!(
                            default_keys.contains(&key),
                            "{profile}: Configuration key `{key}` is not in the chart's Configuration"
                        );
                    }
                }
            }
        }
    }
    assert!(checked > 10, "{checked} keys checked");
    assert_eq!(
        entries.len(),
        4,
        "both sources' charts are checked: {entries:?}"
    );
}

/// The AKS AI runtime's registry serves upstream's charts at its versions (the Azure AKS
/// example sets upstream's keys on them): its Kueue chart's keys are exactly those of
/// kubernetes-sigs/kueue@v0.17.1 `charts/kueue/values.yaml`, read from the module the Go
/// module proxy serves. (KubeRay's root module is not served by the proxy; its 1.6.1 keys rest
/// on the comparison cited in `xtask/src/charts.rs`.)
#[test]
fn the_ai_runtime_kueue_chart_has_the_keys_of_kueue_0_17_1() {
    let Some(dir) = crate::common::go_module("sigs.k8s.io/kueue", "v0.17.1") else {
        skip(
            "AKS AI runtime Kueue chart keys",
            "Go or the module proxy is unavailable",
        );
        return;
    };
    let text = std::fs::read_to_string(dir.join("charts/kueue/values.yaml")).unwrap();
    let values: Value = serde_saphyr::from_str(&text).unwrap();
    let mut upstream = paths(&values);
    upstream.sort();
    let mut table: Vec<String> = operators::chart_keys("aks-ai-runtime/kueue")
        .into_iter()
        .map(str::to_owned)
        .collect();
    table.sort();
    assert_eq!(table, upstream);
}

/// The Configuration key a monitored profile's Kueue values add.
const MONITORING_KEY: &str = "metrics.enableClusterQueueResources";

/// The 0.18 chart's controller tuning (concurrency 5/1/1, qps 50, burst 100) once went into a
/// 0.19.2 install; now everything but `integrations.frameworks` and what the profile sets
/// (`managedJobsNamespaceSelector`) is the 0.19.2 chart's default.
#[test]
fn the_kueue_configuration_is_the_charts_own_but_for_the_frameworks() {
    for profile in ["single", "team", "profiles/examples/prod.yaml"] {
        let files = files(profile);
        let values: Value = serde_saphyr::from_str(&files["infra/kueue-values.yaml"]).unwrap();
        let mut config: Value = serde_saphyr::from_str(
            values["managerConfig"]["controllerManagerConfigYaml"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        let mut default = operators::kueue_default_configuration();
        assert!(
            config["integrations"]["frameworks"]
                .as_array()
                .is_some_and(|f| !f.is_empty())
        );
        config["integrations"]["frameworks"] = Value::Null;
        default["integrations"]["frameworks"] = Value::Null;
        // These GPU profiles are monitored: Kueue reports the ClusterQueues' quota and usage.
        assert_eq!(
            config["metrics"]
                .as_object_mut()
                .and_then(|m| m.remove("enableClusterQueueResources")),
            Some(Value::Bool(true)),
            "{profile}"
        );
        // The profiles confine Kueue's webhooks to their namespace (RK147).
        let selector = config
            .as_object_mut()
            .and_then(|c| c.remove("managedJobsNamespaceSelector"));
        assert_eq!(
            selector.unwrap()["matchExpressions"][0],
            serde_json::json!({"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["ray"]}),
            "{profile}"
        );
        assert_eq!(config, default, "{profile}");
        assert_eq!(config["clientConnection"]["qps"], 300, "{profile}");
        assert_eq!(
            config["controller"]["groupKindConcurrency"]["Workload.kueue.x-k8s.io"],
            10
        );
    }
}

/// The upstream Azure example gives both operators a `CriticalAddonsOnly` toleration
/// (Azure/AKS examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf); raykueue also
/// pins them to System nodes, so they never take a GPU node's room.
#[test]
fn operators_run_on_the_system_pool_and_tolerate_its_taint() {
    // single/team: System pool tainted CriticalAddonsOnly.
    let team = files("team");
    let kueue: Value = serde_saphyr::from_str(&team["infra/kueue-values.yaml"]).unwrap();
    let kuberay: Value = serde_saphyr::from_str(&team["infra/kuberay-values.yaml"]).unwrap();
    for pod in [&kueue["controllerManager"], &kuberay] {
        assert_eq!(pod["nodeSelector"]["kubernetes.azure.com/mode"], "system");
        assert_eq!(pod["tolerations"][0]["key"], "CriticalAddonsOnly");
        assert_eq!(pod["tolerations"][0]["operator"], "Exists");
        assert_eq!(pod["tolerations"][0]["effect"], "NoSchedule");
    }
    // kuberay-gpu: seed 004's System pool has no taint, so no toleration; still pinned.
    let seed = files("kuberay-gpu");
    let kuberay: Value = serde_saphyr::from_str(&seed["infra/kuberay-values.yaml"]).unwrap();
    assert_eq!(
        kuberay["nodeSelector"]["kubernetes.azure.com/mode"],
        "system"
    );
    assert!(kuberay.get("tolerations").is_none(), "{kuberay}");
    // The GitOps objects install with the same values.
    let prod = bundle_text("profiles/examples/prod.yaml");
    assert!(
        prod.matches("CriticalAddonsOnly").count() >= 4,
        "values files and GitOps objects"
    );
}

#[test]
fn the_embedded_chart_table_is_fresh() {
    let Some(shared) = shared() else {
        skip("chart table freshness", "../shared is absent");
        return;
    };
    let fresh = chart_import::import(&shared.join("schemas")).unwrap();
    let committed = std::fs::read_to_string(repo().join(chart_import::OUTPUT)).unwrap();
    assert!(
        fresh == committed,
        "{} is stale: run `cargo run -p xtask -- import-schemas` and commit the result",
        chart_import::OUTPUT
    );
}

/// The value keys a generated NVIDIA values file may set, per chart: NVIDIA/k8s-device-plugin@v0.17.0
/// `deployments/helm/nvidia-device-plugin/values.yaml` (`affinity` and `tolerations` are free
/// form there) and NVIDIA/gpu-operator@v25.10.1 `deployments/gpu-operator/values.yaml`.
const NVIDIA_CHART_KEYS: &[(&str, &[&str])] = &[
    (
        "nvidia-device-plugin",
        &[
            "affinity",
            "tolerations",
            "nodeSelector",
            "priorityClassName",
        ],
    ),
    (
        "gpu-operator",
        &[
            "driver.enabled",
            "toolkit.enabled",
            "operator.runtimeClass",
            "daemonsets.tolerations",
            "node-feature-discovery.worker.tolerations",
        ],
    ),
];

/// The device plugin's and the GPU Operator's values files set only keys their charts have, and
/// re-list the charts' default tolerations (a values file's list replaces the chart's).
#[test]
fn nvidia_values_set_only_their_charts_keys() {
    let gpu_operator = crate::common::shipped_text("kuberay-gpu").replace(
        "install: devicePlugin\n    version: 0.17.0",
        "install: gpuOperator",
    );
    assert!(gpu_operator.contains("install: gpuOperator"));
    let gpu_operator = crate::common::compile_text(gpu_operator.as_bytes())
        .unwrap_or_else(|d| panic!("{d:?}"))
        .bundle
        .files;
    for (files, file, chart) in [
        (
            files("team"),
            "infra/nvidia-device-plugin-values.yaml",
            "nvidia-device-plugin",
        ),
        (
            files("kuberay-gpu"),
            "infra/nvidia-device-plugin-values.yaml",
            "nvidia-device-plugin",
        ),
        (
            gpu_operator,
            "infra/gpu-operator-values.yaml",
            "gpu-operator",
        ),
    ] {
        let values: Value = serde_saphyr::from_str(&files[file]).unwrap();
        let allowed = NVIDIA_CHART_KEYS
            .iter()
            .find(|(c, _)| *c == chart)
            .unwrap()
            .1;
        for key in paths(&values) {
            assert!(
                allowed.iter().any(|a| key == *a
                    || key.starts_with(&format!("{a}."))
                    || a.starts_with(&format!("{key}."))),
                "{file}: `{key}` is no key raykueue may set on the {chart} chart"
            );
        }
        let tolerations = values
            .get("tolerations")
            .or_else(|| values["daemonsets"].get("tolerations"))
            .and_then(Value::as_array)
            .unwrap();
        assert!(
            tolerations.contains(&serde_json::json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})),
            "{file}: {tolerations:?}"
        );
    }
}
