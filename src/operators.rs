//! The Kueue and KubeRay operators as the cluster runs them: their pinned charts' defaults
//! (`assets/charts.json`, written by `cargo run -p xtask -- import-schemas` from the charts'
//! values files) and where their pods land. One definition, read by the Helm values the model
//! writes and by the capacity rules that count the operators' pods.
//!
//! Placement is the provider's (`crate::provider`): on AKS the System pool, on GKE the
//! cluster's first (CPU) pool.

use crate::profile::{Profile, Quantity};
use serde_json::Value;
use std::sync::OnceLock;

static TEXT: &str = include_str!("../assets/charts.json");

/// The chart table, parsed on first use. The file is generated and checked by a test, so a
/// parse failure is a build defect, reported as an empty table rather than a panic.
fn table() -> &'static Value {
    static TABLE: OnceLock<Value> = OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str(TEXT).unwrap_or(Value::Null))
}

/// A chart's default at a dotted key path of its values (`managerConfig.controllerManagerConfigYaml`;
/// a YAML string in the chart is stored as data).
pub fn chart_default(chart: &str, key: &str) -> Option<&'static Value> {
    table()["charts"][chart]["defaults"].get(key)
}

/// Every key path the chart's values define, for tests.
pub fn chart_keys(chart: &str) -> Vec<&'static str> {
    table()["charts"][chart]["keys"]
        .as_array()
        .map(|keys| keys.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Kueue's chart: the controller Configuration it ships (Kueue v0.19.2 `charts/kueue/values.yaml`
/// `managerConfig.controllerManagerConfigYaml`). A values file that sets this key replaces the
/// whole Configuration, so raykueue starts from this one and changes only what the profile says.
pub fn kueue_default_configuration() -> Value {
    chart_default("kueue", "managerConfig.controllerManagerConfigYaml")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Where the operators' pods run, as Helm values keys under the chart's pod settings. The
/// provider decides (`Provider::operator_placement`).
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// The pods' `nodeSelector`.
    pub node_selector: Vec<(String, String)>,
    /// The pods' `tolerations` (none: the key is left to the chart).
    pub tolerations: Vec<Value>,
}

impl Placement {
    pub fn node_selector(&self) -> Value {
        Value::Object(
            self.node_selector
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }

    pub fn tolerations(&self) -> Option<Value> {
        (!self.tolerations.is_empty()).then(|| Value::Array(self.tolerations.clone()))
    }
}

/// Where the operators run, as the profile's provider places them. `None` without a provider
/// section, or where the provider leaves them to the charts' defaults.
pub fn placement(p: &Profile) -> Option<Placement> {
    p.provider()?.operator_placement()
}

/// One operator pod's requests (cpu, memory): the chart's `requests`, else its `limits` (the
/// API server defaults requests to limits). The KubeRay chart sets only limits.
fn pod_requests(chart: &str, key: &str) -> Option<(Quantity, Quantity)> {
    let resources = chart_default(chart, key)?;
    let side = resources
        .get("requests")
        .or_else(|| resources.get("limits"))?;
    let q = |r: &str| side.get(r)?.as_str().and_then(|s| Quantity::parse(s).ok());
    Some((q("cpu")?, q("memory")?))
}

/// The operator pods a profile installs, with their requests: (name, cpu, memory).
pub fn operator_pods(p: &Profile) -> Vec<(&'static str, Quantity, Quantity)> {
    let mut out = Vec::new();
    if p.operators.kueue.is_some()
        && let Some((cpu, mem)) = pod_requests("kueue", "controllerManager.manager.resources")
    {
        out.push(("kueue-controller-manager", cpu, mem));
    }
    if p.operators.kuberay.is_some()
        && let Some((cpu, mem)) = pod_requests("kuberay-operator", "resources")
    {
        out.push(("kuberay-operator", cpu, mem));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_table_has_what_the_model_reads() {
        let config = kueue_default_configuration();
        assert_eq!(config["kind"], "Configuration");
        // Kueue v0.19.2's chart: 10 Workload reconcilers, qps 300 (the 0.18 chart had 5 and 50).
        assert_eq!(
            config["controller"]["groupKindConcurrency"]["Workload.kueue.x-k8s.io"],
            10
        );
        assert_eq!(config["clientConnection"]["qps"], 300);
        assert!(chart_keys("kueue").contains(&"controllerManager.tolerations"));
        assert!(chart_keys("kuberay-operator").contains(&"tolerations"));
        let kueue = pod_requests("kueue", "controllerManager.manager.resources").unwrap();
        assert_eq!(
            (kueue.0.canonical(), kueue.1.canonical()),
            ("500m".into(), "512Mi".into())
        );
        let kuberay = pod_requests("kuberay-operator", "resources").unwrap();
        assert_eq!(
            (kuberay.0.canonical(), kuberay.1.canonical()),
            ("100m".into(), "512Mi".into())
        );
    }
}
