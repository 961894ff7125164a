//! The Kueue and KubeRay operators as the cluster runs them: their pinned charts' defaults
//! (`assets/charts.json`, written by `cargo run -p xtask -- import-schemas` from the charts'
//! values files) and where their pods land. One definition, read by the Helm values the model
//! writes and by the capacity rules that count the operators' pods.
//!
//! Placement is the provider's (`crate::cloud`): on AKS the System pool, on GKE the
//! cluster's first (CPU) pool.

pub(crate) use crate::cloud::Placement;
use crate::profile::{
    ChartSource, KubeRayOperator, KueueOperator, NvidiaInstall, Profile, Quantity,
};
use serde_json::Value;
use std::sync::OnceLock;

static TEXT: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/charts.json"));

/// The chart table, parsed on first use. The file is generated and checked by a test, so a
/// parse failure is a build defect, reported as an empty table rather than a panic.
fn table() -> &'static Value {
    static TABLE: OnceLock<Value> = OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str(TEXT).unwrap_or(Value::Null))
}

/// A chart's default at a dotted key path of its values (`managerConfig.controllerManagerConfigYaml`;
/// a YAML string in the chart is stored as data).
pub(crate) fn chart_default(chart: &str, key: &str) -> Option<&'static Value> {
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

/// The AKS AI runtime's chart registry and what the Azure AKS example installs from it
/// (Azure/AKS@3112ed89eab56d37f8d29780a0647b1ee1368ca6
/// `examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf` and `variables.tf`):
/// upstream's charts at these versions, with the operators' MCR images, and KubeRay told to
/// inject its wait-for-GCS init container, which the MCR Ray images rely on.
pub(crate) const AKS_AI_RUNTIME_REGISTRY: &str = "oci://mcr.microsoft.com/aks/ai-runtime/helm";
/// The Kueue chart version the AKS AI runtime publishes (`kueue_chart_version`).
pub(crate) const AKS_AI_RUNTIME_KUEUE: &str = "0.17.1";
/// The KubeRay operator chart version the AKS AI runtime publishes (`kuberay_chart_version`).
pub(crate) const AKS_AI_RUNTIME_KUBERAY: &str = "1.6.1";
const AKS_AI_RUNTIME_KUEUE_IMAGE: &str = "mcr.microsoft.com/oss/v2/kueue/kueue";
const AKS_AI_RUNTIME_KUBERAY_IMAGE: &str = "mcr.microsoft.com/oss/v2/kuberay/operator";

/// Kueue's chart as `helm install` takes it: the profile's, else its source's.
pub(crate) fn kueue_chart(p: &Profile, k: &KueueOperator) -> String {
    match (&k.chart, p.operators.source) {
        (Some(chart), _) => chart.to_string(),
        (None, ChartSource::Upstream) => "oci://registry.k8s.io/kueue/charts/kueue".into(),
        (None, ChartSource::AksAiRuntime) => format!("{AKS_AI_RUNTIME_REGISTRY}/kueue"),
    }
}

/// KubeRay's Helm repository: the profile's, else its source's (`oci://` for a registry).
pub(crate) fn kuberay_repo(p: &Profile, k: &KubeRayOperator) -> String {
    match (&k.repo, p.operators.source) {
        (Some(repo), _) => repo.to_string(),
        (None, ChartSource::Upstream) => "https://ray-project.github.io/kuberay-helm/".into(),
        (None, ChartSource::AksAiRuntime) => AKS_AI_RUNTIME_REGISTRY.into(),
    }
}

/// The chart table entry whose keys a values file for `chart` is held to: the pinned
/// upstream chart's, or the AKS AI runtime's version of it.
pub fn chart_entry(p: &Profile, chart: &'static str) -> &'static str {
    match (p.operators.source, chart) {
        (ChartSource::AksAiRuntime, "kueue") => "aks-ai-runtime/kueue",
        (ChartSource::AksAiRuntime, "kuberay-operator") => "aks-ai-runtime/kuberay-operator",
        _ => chart,
    }
}

/// The operator image a values file pins for the chart's source, as (repository, tag): the
/// AKS AI runtime's MCR images, tagged `v<chart version>`; `None` upstream (the chart's own).
pub(crate) fn operator_image(
    p: &Profile,
    chart: &'static str,
    version: &str,
) -> Option<(&'static str, String)> {
    let repository = match (p.operators.source, chart) {
        (ChartSource::AksAiRuntime, "kueue") => AKS_AI_RUNTIME_KUEUE_IMAGE,
        (ChartSource::AksAiRuntime, "kuberay-operator") => AKS_AI_RUNTIME_KUBERAY_IMAGE,
        _ => return None,
    };
    Some((repository, format!("v{version}")))
}

/// The top-level fields of Kueue's Configuration (kueue@v0.19.2
/// `apis/config/v1beta2/configuration_types.go`: `Configuration` and its inlined
/// `ControllerManager`). The chart's default Configuration sets some of them; a profile may set
/// others (`operators.kueue.configuration`), and a test holds the values files to this list.
pub const CONFIGURATION_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "namespace",
    "manageJobsWithoutQueueName",
    "managedJobsNamespaceSelector",
    "internalCertManagement",
    "waitForPodsReady",
    "clientConnection",
    "integrations",
    "multiKueue",
    "fairSharing",
    "admissionFairSharing",
    "resources",
    "featureGates",
    "objectRetentionPolicies",
    "visibilityServer",
    "webhook",
    "leaderElection",
    "metrics",
    "health",
    "pprofBindAddress",
    "controller",
    "tls",
];

/// Where the operators run, as the profile's provider places them. `None` without a provider
/// section, or where the provider leaves them to the charts' defaults.
pub(crate) fn placement(p: &Profile) -> Option<Placement> {
    p.cloud()?.operator_placement()
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
pub(crate) fn operator_pods(p: &Profile) -> Vec<(&'static str, Quantity, Quantity)> {
    let mut out = Vec::new();
    if let Some(k) = &p.operators.kueue
        && let Some((cpu, mem)) = pod_requests("kueue", "controllerManager.manager.resources")
    {
        for _ in 0..k.replicas {
            out.push(("kueue-controller-manager", cpu, mem));
        }
    }
    if p.operators.kuberay.is_some()
        && let Some((cpu, mem)) = pod_requests("kuberay-operator", "resources")
    {
        out.push(("kuberay-operator", cpu, mem));
    }
    out
}

/// The NVIDIA component that makes GPU nodes advertise `nvidia.com/gpu`, as raykueue installs
/// it (`operators.nvidia`; `None` when nothing is installed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NvidiaStack {
    pub(crate) install: NvidiaInstall,
    /// Helm repository, added as `repo_alias`.
    pub(crate) repo: &'static str,
    pub(crate) repo_alias: &'static str,
    pub(crate) chart: &'static str,
    pub(crate) version: String,
    pub(crate) namespace: &'static str,
    pub(crate) release: &'static str,
    /// The DaemonSet that runs the device plugin on GPU nodes (what `verify.sh` waits for).
    pub(crate) daemonset: &'static str,
    /// The values file next to `up.sh`.
    pub(crate) values_file: &'static str,
}

/// NVIDIA's device plugin chart (NVIDIA/k8s-device-plugin@v0.17.0
/// `deployments/helm/nvidia-device-plugin/Chart.yaml`, README's `helm repo add nvdp`); the
/// Azure AKS example installs 0.17.0 into `kube-system` (Azure/AKS
/// `examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf`,
/// `helm_release.nvidia_device_plugin`). For a release named like the chart, the DaemonSet
/// is the release name (`templates/_helpers.tpl` `fullname`).
pub(crate) const DEVICE_PLUGIN_VERSION: &str = "0.17.0";
/// NVIDIA GPU Operator (NVIDIA/gpu-operator@v25.10.1 `deployments/gpu-operator/`, published on
/// NGC as `nvidia/gpu-operator`); its device plugin DaemonSet is
/// `nvidia-device-plugin-daemonset` in the operator's namespace
/// (`assets/state-device-plugin/0500_daemonset.yaml`).
pub(crate) const GPU_OPERATOR_VERSION: &str = "v25.10.1";

/// The chart's default tolerations, which a values file that sets `tolerations` replaces
/// whole (NVIDIA/k8s-device-plugin@v0.17.0 `deployments/helm/nvidia-device-plugin/values.yaml`
/// `tolerations`; the GPU Operator's `daemonsets.tolerations` and
/// `node-feature-discovery.worker.tolerations` hold the `nvidia.com/gpu` one too,
/// NVIDIA/gpu-operator@v25.10.1 `deployments/gpu-operator/values.yaml`).
pub(crate) fn device_plugin_default_tolerations() -> Vec<Value> {
    vec![
        serde_json::json!({ "key": "CriticalAddonsOnly", "operator": "Exists" }),
        serde_json::json!({ "key": crate::cloud::GPU_RESOURCE, "operator": "Exists", "effect": "NoSchedule" }),
    ]
}

/// What makes the profile's GPU nodes advertise `nvidia.com/gpu`, if raykueue installs it.
///
/// Without `operators.nvidia`: the device plugin chart on AKS when a pool has NVIDIA GPUs. AKS
/// installs the driver, not the device plugin ("Use GPUs on AKS": the self-managed default
/// manages "the NVIDIA GPU driver only"; the Azure AKS example installs the chart for that
/// reason). Elsewhere nothing: GKE runs its managed `nvidia-gpu-device-plugin` DaemonSet on
/// pools with an accelerator, eksctl applies its device plugin manifest to AmazonLinux GPU
/// node groups (eksctl-io/eksctl@v0.230.0 `pkg/eks/tasks.go`, `pkg/addons/device_plugin.go`;
/// Bottlerocket runs its own), and ACK installs `ack-nvidia-device-plugin` when the cluster is
/// created.
pub(crate) fn nvidia(p: &Profile) -> Option<NvidiaStack> {
    let install = if let Some(n) = &p.operators.nvidia {
        n.install
    } else if p
        .cloud()
        .is_some_and(|c| c.device_plugin().is_none() && c.node_groups().iter().any(|g| g.gpu))
    {
        NvidiaInstall::DevicePlugin
    } else {
        NvidiaInstall::None
    };
    let version = |default: &str| {
        p.operators
            .nvidia
            .as_ref()
            .and_then(|n| n.version.as_ref())
            .map_or_else(|| default.to_owned(), ToString::to_string)
    };
    match install {
        NvidiaInstall::None => None,
        NvidiaInstall::DevicePlugin => Some(NvidiaStack {
            install,
            repo: "https://nvidia.github.io/k8s-device-plugin",
            repo_alias: "nvdp",
            chart: "nvidia-device-plugin",
            version: version(DEVICE_PLUGIN_VERSION),
            namespace: "kube-system",
            release: "nvidia-device-plugin",
            daemonset: "nvidia-device-plugin",
            values_file: "infra/nvidia-device-plugin-values.yaml",
        }),
        NvidiaInstall::GpuOperator => Some(NvidiaStack {
            install,
            repo: "https://helm.ngc.nvidia.com/nvidia",
            repo_alias: "nvidia",
            chart: "gpu-operator",
            version: version(GPU_OPERATOR_VERSION),
            namespace: "gpu-operator",
            release: "gpu-operator",
            daemonset: "nvidia-device-plugin-daemonset",
            values_file: "infra/gpu-operator-values.yaml",
        }),
    }
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
