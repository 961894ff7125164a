//! The `monitoring` section: which Prometheus collects the queues' metrics, where GPU metrics
//! come from, KueueViz, and the alerts' thresholds. Absent, it is resolved per profile
//! (`facts::monitoring`): on, with the cloud's default collector, for a profile with GPU node
//! pools or GPU quota; off otherwise (`docs/monitoring.md` says why).

use super::{Dns1123Label, GoDuration, ReleaseName, limits};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Metrics, a dashboard made from the profile's queues, and alerts (`monitoring/` of the
/// bundle). Without this section: on for a profile with GPU node pools or GPU quota, off
/// otherwise.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Monitoring {
    /// Which Prometheus collects: `prometheusOperator` (an in-cluster Prometheus Operator
    /// stack, such as kube-prometheus-stack; raykueue writes its ServiceMonitors, PodMonitors,
    /// PrometheusRule and Grafana dashboard), `managed` (the cloud's managed Prometheus:
    /// Azure Monitor, Google Cloud Managed Service for Prometheus, Amazon Managed Service for
    /// Prometheus, Alibaba's Managed Service for Prometheus; raykueue writes what each reads and
    /// `infra/up.sh` turns it on) or `none` (monitoring off). Default: `prometheusOperator`
    /// on every cloud (`docs/monitoring.md` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collector: Option<Collector>,
    /// Where GPU metrics come from: `dcgmExporter` (NVIDIA's DCGM exporter), `aksGpuMonitoring`
    /// (AKS only: the AKS AI runtime's `gpu-monitoring` chart, GPU health as node conditions)
    /// or `none`. Default: `dcgmExporter` when a node pool has NVIDIA GPUs, else `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_metrics: Option<GpuMetrics>,
    /// Kueue's KueueViz dashboard (the Kueue chart's `enableKueueViz`).
    #[serde(default)]
    pub kueue_viz: bool,
    /// Namespace of the monitoring objects: where the Prometheus Operator stack and its
    /// Grafana run.
    #[serde(default = "default_namespace")]
    pub namespace: Dns1123Label,
    /// Helm release of the Prometheus Operator stack: its Prometheus selects ServiceMonitors,
    /// PodMonitors and PrometheusRules labelled `release: <this>` (kube-prometheus-stack's
    /// default selector).
    #[serde(default = "default_release")]
    pub release: ReleaseName,
    /// Thresholds of the alerts.
    #[serde(default)]
    pub alerts: Alerts,
}

impl Default for Monitoring {
    fn default() -> Self {
        Self {
            collector: None,
            gpu_metrics: None,
            kueue_viz: false,
            namespace: default_namespace(),
            release: default_release(),
            alerts: Alerts::default(),
        }
    }
}

/// Which Prometheus collects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Collector {
    PrometheusOperator,
    Managed,
    None,
}

/// Where GPU metrics come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GpuMetrics {
    /// NVIDIA's DCGM exporter on the GPU nodes: utilisation and memory per GPU and pod, which
    /// the dashboard's GPU rows and the idle-GPU alert read.
    DcgmExporter,
    /// AKS only: the AKS AI runtime's `gpu-monitoring` chart, as the upstream Azure example
    /// installs it. It reports GPU health (Xid errors, NVLink, ECC, throttling) as node
    /// conditions, read from the host's DCGM exporter, and exports no DCGM series: the
    /// dashboard's GPU rows and the idle-GPU alert are left out.
    AksGpuMonitoring,
    None,
}

/// When the alerts fire.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Alerts {
    /// A ClusterQueue has pending workloads this long while its cohort has unused nominal quota
    /// (a quota or flavor mistake rather than load). Default `15m`.
    #[serde(default = "default_pending_for")]
    pub pending_for: GoDuration,
    /// A ClusterQueue is not active this long. Default `5m`.
    #[serde(default = "default_inactive_for")]
    pub inactive_for: GoDuration,
    /// GPUs are below `gpuIdleBelowPercent` utilisation this long while workloads wait.
    /// Default `30m`.
    #[serde(default = "default_gpu_idle_for")]
    pub gpu_idle_for: GoDuration,
    /// The utilisation (percent) under which a GPU counts as idle. Default 10.
    #[serde(default = "default_gpu_idle_below")]
    #[schemars(range(min = 1, max = 100))]
    #[serde(deserialize_with = "limits::range::<_, u32, 1, 100>")]
    pub gpu_idle_below_percent: u32,
    /// More preemptions than this in an hour, in one ClusterQueue, is a preemption storm.
    /// Default 20.
    #[serde(default = "default_preemptions_per_hour")]
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(deserialize_with = "limits::range::<_, u32, 1, 100_000>")]
    pub preemptions_per_hour: u32,
    /// Kueue's controller has not been scraped this long. Default `5m`.
    #[serde(default = "default_controller_down_for")]
    pub controller_down_for: GoDuration,
}

impl Default for Alerts {
    fn default() -> Self {
        Self {
            pending_for: default_pending_for(),
            inactive_for: default_inactive_for(),
            gpu_idle_for: default_gpu_idle_for(),
            gpu_idle_below_percent: default_gpu_idle_below(),
            preemptions_per_hour: default_preemptions_per_hour(),
            controller_down_for: default_controller_down_for(),
        }
    }
}

fn default_namespace() -> Dns1123Label {
    Dns1123Label("monitoring".into())
}
fn default_release() -> ReleaseName {
    ReleaseName("kube-prometheus-stack".into())
}
fn default_pending_for() -> GoDuration {
    GoDuration("15m".into())
}
fn default_inactive_for() -> GoDuration {
    GoDuration("5m".into())
}
fn default_gpu_idle_for() -> GoDuration {
    GoDuration("30m".into())
}
fn default_gpu_idle_below() -> u32 {
    10
}
fn default_preemptions_per_hour() -> u32 {
    20
}
fn default_controller_down_for() -> GoDuration {
    GoDuration("5m".into())
}
