//! The profile format: one typed description of a Ray platform under Kueue on AKS, GKE, EKS or
//! ACK. The JSON Schema
//! (`raykueue schema`, `profiles/profile.schema.json`) is generated from these types.
//!
//! Field names follow the vocabulary of the system they configure (Kueue's `coveredResources`,
//! `nominalQuota`; AKS's `vmSize`), so that a reader of the seeds or the upstream docs finds
//! the same words here. Maps are `BTreeMap`: output never depends on input key order.

mod capacity;
pub(crate) mod fleet;
mod kueue_config;
pub(crate) mod limits;
mod monitoring;
pub(crate) mod names;
pub(crate) mod pools;
pub(crate) mod quantity;
mod workload;

pub(crate) use capacity::*;
pub(crate) use fleet::Role;
pub(crate) use kueue_config::*;
pub(crate) use monitoring::*;
pub(crate) use names::*;
pub(crate) use pools::*;
pub(crate) use quantity::Quantity;
pub(crate) use workload::*;

pub(crate) use crate::cloud::azure::section::Azure;
pub(crate) use crate::cloud::gcp::section::Gcp;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The only format version so far. Future formats get a new value and a migration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApiVersion {
    #[serde(rename = "raykueue.io/v1alpha1")]
    V1Alpha1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ProfileKind {
    Profile,
}

/// A raykueue profile.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Profile {
    /// Format version, for migrations: `raykueue.io/v1alpha1`.
    pub api_version: ApiVersion,
    pub kind: ProfileKind,
    /// Build on another profile: a shipped name (`team`) or a path relative to this file.
    /// Merged before anything is checked; `docs/overlays.md` has the merge rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// The profile's name; used in generated comments and GitOps object names.
    pub name: Dns1123Label,
    /// Free text for reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Azure infrastructure provisioned by `infra/up.sh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub azure: Option<Azure>,
    /// Google Cloud infrastructure (GKE) provisioned by `infra/up.sh`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gcp: Option<Gcp>,
    /// AWS EKS infrastructure provisioned by `infra/up.sh` (eksctl).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aws: Option<crate::cloud::aws::section::Aws>,
    /// Alibaba Cloud ACK infrastructure provisioned by `infra/up.sh` (aliyun).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alibaba: Option<crate::cloud::alibaba::section::Alibaba>,
    /// Operators installed with Helm.
    #[serde(default)]
    pub operators: Operators,
    /// The namespace the Ray workloads run in.
    pub namespace: Dns1123Label,
    /// The service account Ray pods run as (with workload identity when `azure.identity` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<ServiceAccount>,
    /// Kueue Topologies for topology-aware scheduling: flavors name one in `topologyName`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topologies: Vec<Topology>,
    /// Kueue ResourceFlavors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flavors: Vec<Flavor>,
    /// Kueue AdmissionChecks (with their ProvisioningRequestConfigs) that ClusterQueues name in
    /// `admissionChecks`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub admission_checks: Vec<AdmissionCheck>,
    /// Kueue ClusterQueues and LocalQueues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queues: Option<Queues>,
    /// Kueue WorkloadPriorityClasses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub priority_classes: Vec<PriorityClass>,
    /// Defaults for Ray workloads: image and Ray version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ray: Option<RayDefaults>,
    /// RayJobs, RayServices and RayClusters admitted through the queues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workloads: Vec<Workload>,
    /// Argo CD and/or Flux objects that sync the committed bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gitops: Option<GitOps>,
    /// raykueue's estimates of a node pool's start from zero (RK194 compares them with
    /// `waitForPodsReady`); estimates, not measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimates: Option<Estimates>,
    /// Metrics, a dashboard made from the queues, and alerts (`monitoring/`). Without it: on
    /// for a profile with GPU node pools or GPU quota, off otherwise (`docs/monitoring.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monitoring: Option<Monitoring>,
    /// The profile's part in a fleet (`kind: Fleet`), set by the fleet pipeline; never written
    /// in a profile.
    #[serde(skip)]
    pub role: Option<Role>,
}

/// Where the committed bundle lives, and which GitOps tool syncs it.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitOps {
    /// Git repository that holds the output of `raykueue gen --out` (Argo CD's spelling).
    #[serde(rename = "repoURL")]
    pub repo_url: GitUrl,
    /// Branch or tag to sync.
    #[serde(default = "default_revision")]
    pub revision: GitRevision,
    /// Folder of the bundle in the repository (the `--out` directory).
    #[serde(default = "default_gitops_path")]
    pub path: RelativePath,
    /// Argo CD Applications (app of apps with sync waves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argocd: Option<ArgoCd>,
    /// Flux sources, HelmReleases and Kustomizations with `dependsOn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flux: Option<Flux>,
}

fn default_revision() -> GitRevision {
    GitRevision("main".into())
}
fn default_gitops_path() -> RelativePath {
    RelativePath("deploy".into())
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgoCd {
    /// Namespace Argo CD runs in (its Applications live there).
    #[serde(default = "default_argocd_namespace")]
    pub namespace: Dns1123Label,
    #[serde(default = "default_argocd_project")]
    pub project: Dns1123Subdomain,
    /// Render the platform and the synced workloads inside Argo CD with the raykueue Config
    /// Management Plugin (`argocd/plugin.yaml`, `docs/gitops.md`) instead of syncing the
    /// committed bundle: only the profile is committed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<ArgoPlugin>,
}

/// The raykueue Config Management Plugin, run by Argo CD's repo-server.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgoPlugin {
    /// This profile's path in `repoURL` (relative to the repository root). Its name ends in
    /// `.raykueue.yaml`: the plugin's discovery pattern, which Argo CD matches even for an
    /// Application that names the plugin.
    pub profile: PluginProfilePath,
}

fn default_argocd_namespace() -> Dns1123Label {
    Dns1123Label("argocd".into())
}
fn default_argocd_project() -> Dns1123Subdomain {
    Dns1123Subdomain("default".into())
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Flux {
    /// Namespace of the Flux objects.
    #[serde(default = "default_flux_namespace")]
    pub namespace: Dns1123Label,
    /// Reconciliation interval (a Go duration such as `10m`).
    #[serde(default = "default_flux_interval")]
    pub interval: GoDuration,
}

fn default_flux_namespace() -> Dns1123Label {
    Dns1123Label("flux-system".into())
}
fn default_flux_interval() -> GoDuration {
    GoDuration("10m".into())
}

// ---------------------------------------------------------------------------------------------
// Operators

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Operators {
    /// Where the Kueue and KubeRay charts come from when `chart` and `repo` are not given:
    /// `upstream` (the projects' own registries, the versions raykueue pins) or `aksAiRuntime`
    /// (the AKS AI runtime's registry `oci://mcr.microsoft.com/aks/ai-runtime/helm`, which
    /// publishes the upstream charts at its own versions and runs MCR images;
    /// `docs/providers.md`).
    #[serde(default, skip_serializing_if = "ChartSource::is_upstream")]
    pub source: ChartSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kueue: Option<KueueOperator>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kuberay: Option<KubeRayOperator>,
    /// What makes GPU nodes advertise `nvidia.com/gpu`. When omitted: the NVIDIA device plugin
    /// chart on AKS pools with NVIDIA GPUs (AKS installs the driver only), nothing elsewhere
    /// (GKE, EKS through eksctl, and ACK install a device plugin themselves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvidia: Option<NvidiaOperator>,
}

/// The registry the operator charts come from (`operators.source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ChartSource {
    #[default]
    Upstream,
    AksAiRuntime,
}

impl ChartSource {
    #[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
    fn is_upstream(&self) -> bool {
        *self == Self::Upstream
    }
}

/// How GPU nodes get their device plugin, the component that advertises `nvidia.com/gpu`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NvidiaOperator {
    /// `devicePlugin`: NVIDIA's device plugin chart; `gpuOperator`: the NVIDIA GPU Operator (on
    /// AKS, over the driver AKS installs); `none`: nothing is installed (the cloud or the node
    /// image brings a device plugin).
    pub install: NvidiaInstall,
    /// Pinned chart version. Default: `0.17.0` for the device plugin, `v25.10.1` for the GPU
    /// Operator (whose versions carry a leading `v`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<NvidiaChartVersion>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NvidiaInstall {
    DevicePlugin,
    GpuOperator,
    None,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KueueOperator {
    /// Chart reference (Kueue publishes an OCI chart). Default: the source's,
    /// `oci://registry.k8s.io/kueue/charts/kueue` upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chart: Option<ChartRef>,
    /// Pinned chart version (no leading `v`).
    pub version: ChartVersion,
    #[serde(default = "default_kueue_namespace")]
    pub namespace: Dns1123Label,
    #[serde(default = "default_kueue_release")]
    pub release: ReleaseName,
    /// `integrations.frameworks` of the Kueue Configuration.
    #[schemars(length(min = 1))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, { usize::MAX }>")]
    pub frameworks: Vec<Framework>,
    /// Feature gates to set (`controllerManager.featureGates`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub feature_gates: BTreeMap<String, bool>,
    /// Controller replicas (`controllerManager.replicas`). From 2 the chart's
    /// PodDisruptionBudget is switched on (`minAvailable: 1`), so a node drain leaves one
    /// replica serving Kueue's webhooks.
    #[serde(default = "default_kueue_replicas")]
    #[schemars(range(min = 1, max = 10))]
    #[serde(deserialize_with = "limits::range::<_, u32, 1, 10>")]
    pub replicas: u32,
    /// A typed fragment of Kueue's Configuration (`config.kueue.x-k8s.io/v1beta2`), merged over
    /// the pinned chart's default Configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<KueueConfiguration>,
}

fn default_kueue_replicas() -> u32 {
    1
}

fn default_kueue_namespace() -> Dns1123Label {
    Dns1123Label("kueue-system".into())
}
fn default_kueue_release() -> ReleaseName {
    ReleaseName("kueue".into())
}

/// Kueue integration frameworks (the Helm chart's list).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum Framework {
    #[serde(rename = "batch/job")]
    BatchJob,
    #[serde(rename = "kubeflow.org/mpijob")]
    MpiJob,
    #[serde(rename = "ray.io/rayjob")]
    RayJob,
    #[serde(rename = "ray.io/rayservice")]
    RayService,
    #[serde(rename = "ray.io/raycluster")]
    RayCluster,
    #[serde(rename = "jobset.x-k8s.io/jobset")]
    JobSet,
    #[serde(rename = "workload.codeflare.dev/appwrapper")]
    AppWrapper,
    #[serde(rename = "trainer.kubeflow.org/trainjob")]
    TrainJob,
    #[serde(rename = "pod")]
    Pod,
    #[serde(rename = "deployment")]
    Deployment,
    #[serde(rename = "statefulset")]
    StatefulSet,
    #[serde(rename = "leaderworkerset.x-k8s.io/leaderworkerset")]
    LeaderWorkerSet,
}

impl Framework {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BatchJob => "batch/job",
            Self::MpiJob => "kubeflow.org/mpijob",
            Self::RayJob => "ray.io/rayjob",
            Self::RayService => "ray.io/rayservice",
            Self::RayCluster => "ray.io/raycluster",
            Self::JobSet => "jobset.x-k8s.io/jobset",
            Self::AppWrapper => "workload.codeflare.dev/appwrapper",
            Self::TrainJob => "trainer.kubeflow.org/trainjob",
            Self::Pod => "pod",
            Self::Deployment => "deployment",
            Self::StatefulSet => "statefulset",
            Self::LeaderWorkerSet => "leaderworkerset.x-k8s.io/leaderworkerset",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeRayOperator {
    /// Helm repository URL (`oci://` for an OCI registry). Default: the source's,
    /// `https://ray-project.github.io/kuberay-helm/` upstream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<ChartRef>,
    #[serde(default = "default_kuberay_chart")]
    pub chart: ChartRef,
    pub version: ChartVersion,
    #[serde(default = "default_kuberay_namespace")]
    pub namespace: Dns1123Label,
    #[serde(default = "default_kuberay_chart_release")]
    pub release: ReleaseName,
}

fn default_kuberay_chart() -> ChartRef {
    ChartRef("kuberay-operator".into())
}
fn default_kuberay_namespace() -> Dns1123Label {
    Dns1123Label("kuberay-system".into())
}
fn default_kuberay_chart_release() -> ReleaseName {
    ReleaseName("kuberay-operator".into())
}

// ---------------------------------------------------------------------------------------------
// Kubernetes platform objects

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceAccount {
    pub name: Dns1123Subdomain,
    /// Annotate for Azure workload identity (client-id, tenant-id from `azure.identity`) and
    /// label workload pods `azure.workload.identity/use: "true"`.
    #[serde(default)]
    pub workload_identity: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Flavor {
    pub name: Dns1123Subdomain,
    /// Labels Kueue adds to the node selector of admitted pods (at most 8).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 8))]
    #[serde(deserialize_with = "limits::entries::<_, _, _, 8>")]
    pub node_labels: BTreeMap<QualifiedName, LabelValue>,
    /// Taints of the flavor's nodes that admitted workloads must tolerate (at most 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 8>")]
    pub node_taints: Vec<Taint>,
    /// Tolerations Kueue adds to admitted pods (at most 8).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 8>")]
    pub tolerations: Vec<Toleration>,
    /// A Topology from `topologies`: Kueue places this flavor's pods by its levels
    /// (topology-aware scheduling). Needs `nodeLabels`; Kueue keeps it, the labels and the
    /// tolerations immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology_name: Option<Dns1123Subdomain>,
}

/// Single queue (seed 000 option A) or team queues in a cohort (option B). Exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum QueueMode {
    Single,
    Team,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(clippy::struct_field_names)] // the YAML keys `clusterQueues`, `localQueues`.
pub struct Queues {
    pub mode: QueueMode,
    #[schemars(length(min = 1, max = 1000))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 1000>")]
    pub cluster_queues: Vec<ClusterQueue>,
    #[schemars(length(min = 1))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, { usize::MAX }>")]
    pub local_queues: Vec<LocalQueue>,
    /// Cohort objects (`kueue.x-k8s.io/v1beta2`): a tree by `parentName`, each with quota of
    /// its own and a fair-sharing weight. When present, every cohort a ClusterQueue or a Cohort
    /// names is declared here, roots included; without it, `cohortName` is a bare name (a
    /// cohort Kueue makes up, with no quota of its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 1000))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 1000>")]
    pub cohorts: Vec<Cohort>,
}

/// A Cohort object (kubernetes-sigs/kueue@v0.19.2 `apis/kueue/v1beta2/cohort_types.go`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cohort {
    pub name: Dns1123Subdomain,
    /// The Cohort above this one; none for the root of a tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_name: Option<Dns1123Subdomain>,
    /// Fair-sharing weight of this subtree against its siblings (`spec.fairSharing.weight`;
    /// only used when fair sharing is on in the Kueue configuration; `"0"` is weight 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing_weight: Option<Quantity>,
    /// Quota the Cohort itself holds, on top of what its ClusterQueues lend it: a shared pool
    /// of the subtree. `borrowingLimit` and `lendingLimit` (towards the parent) need a
    /// `parentName`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 16>")]
    pub resource_groups: Vec<ResourceGroup>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum QueueingStrategy {
    #[default]
    BestEffortFIFO,
    StrictFIFO,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StopPolicy {
    #[default]
    None,
    Hold,
    HoldAndDrain,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterQueue {
    pub name: Dns1123Subdomain,
    /// The cohort this queue borrows from and lends to (team mode): a Cohort of
    /// `queues.cohorts` when the profile declares any, else a bare name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_name: Option<Dns1123Subdomain>,
    #[serde(default)]
    pub queueing_strategy: QueueingStrategy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemption: Option<Preemption>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flavor_fungibility: Option<FlavorFungibility>,
    /// Which namespaces may submit; all (`{}`) when omitted. Always emitted: a ClusterQueue
    /// without it selects no namespace at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_policy: Option<StopPolicy>,
    /// Fair-sharing weight (only used when fair sharing is on in the Kueue configuration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing_weight: Option<Quantity>,
    /// AdmissionChecks from `admissionChecks` a workload waits for before Kueue admits it: a
    /// name (every flavor), or `{name, onFlavors}` (at most 64).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 64>")]
    pub admission_checks: Vec<ClusterQueueCheck>,
    #[schemars(length(min = 1, max = 16))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 16>")]
    pub resource_groups: Vec<ResourceGroup>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelector {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub match_labels: BTreeMap<QualifiedName, LabelValue>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 16))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 16>")]
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

impl LabelSelector {
    /// Whether an object with these labels is selected (`metav1.LabelSelectorAsSelector`).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k.as_str()).is_some_and(|l| l == v.as_str()))
            && self.match_expressions.iter().all(|e| e.matches(labels))
    }
}

/// One `matchExpressions` entry of a label selector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LabelSelectorRequirement {
    pub key: QualifiedName,
    pub operator: SelectorOperator,
    /// Required for `In` and `NotIn`, empty for `Exists` and `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 64))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 64>")]
    pub values: Vec<LabelValue>,
}

impl LabelSelectorRequirement {
    fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        let value = labels.get(self.key.as_str());
        let listed = || value.is_some_and(|v| self.values.iter().any(|x| x.as_str() == v));
        match self.operator {
            SelectorOperator::In => listed(),
            SelectorOperator::NotIn => !listed(),
            SelectorOperator::Exists => value.is_some(),
            SelectorOperator::DoesNotExist => value.is_none(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SelectorOperator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ReclaimWithinCohort {
    #[default]
    Never,
    LowerPriority,
    Any,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WithinClusterQueue {
    #[default]
    Never,
    LowerPriority,
    LowerOrNewerEqualPriority,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum BorrowWithinCohortPolicy {
    #[default]
    Never,
    LowerPriority,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Preemption {
    #[serde(default)]
    pub reclaim_within_cohort: ReclaimWithinCohort,
    #[serde(default)]
    pub within_cluster_queue: WithinClusterQueue,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub borrow_within_cohort: Option<BorrowWithinCohort>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BorrowWithinCohort {
    pub policy: BorrowWithinCohortPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_priority_threshold: Option<i32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FungibilityPolicy {
    MayStopSearch,
    TryNextFlavor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FungibilityPreference {
    BorrowingOverPreemption,
    PreemptionOverBorrowing,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlavorFungibility {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_can_borrow: Option<FungibilityPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_can_preempt: Option<FungibilityPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preference: Option<FungibilityPreference>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceGroup {
    /// Resources this group covers, e.g. `[cpu, memory]`; every flavor lists them in this order.
    #[schemars(length(min = 1, max = 64))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 64>")]
    pub covered_resources: Vec<QualifiedName>,
    #[schemars(length(min = 1, max = 64))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 64>")]
    pub flavors: Vec<FlavorQuota>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlavorQuota {
    /// A ResourceFlavor from `flavors`.
    pub name: Dns1123Subdomain,
    #[schemars(length(min = 1, max = 64))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 64>")]
    pub resources: Vec<ResourceQuota>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceQuota {
    pub name: QualifiedName,
    pub nominal_quota: Quantity,
    /// How much more this queue may borrow from its cohort (cohort only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<Quantity>,
    /// How much of its nominal quota this queue may lend (cohort only; ≤ nominal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<Quantity>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LocalQueue {
    /// The queue name workloads put in `kueue.x-k8s.io/queue-name`.
    pub name: Dns1123Label,
    /// Defaults to the profile's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Dns1123Label>,
    pub cluster_queue: Dns1123Subdomain,
}

impl LocalQueue {
    /// The namespace the LocalQueue lives in: its own, else the profile's.
    pub fn namespace_in<'a>(&'a self, profile: &'a Profile) -> &'a str {
        self.namespace
            .as_ref()
            .map_or(profile.namespace.as_str(), |n| n.as_str())
    }
}

impl Profile {
    /// How many queues and workloads the profile declares: the work the parallel stages
    /// (rules, objects, summary) divide, and so whether other cores pay off (`par::wide`).
    pub fn items(&self) -> usize {
        self.workloads.len()
            + self
                .queues
                .as_ref()
                .map_or(0, |q| q.cluster_queues.len() + q.local_queues.len())
    }

    /// Kueue's `fairSharing`, when the profile turns it on (present means on).
    pub fn fair_sharing(&self) -> Option<&kueue_config::FairSharing> {
        self.operators
            .kueue
            .as_ref()?
            .configuration
            .as_ref()?
            .fair_sharing
            .as_ref()
    }

    /// The fleet this profile manages, when it is a fleet's manager: its workloads run on the
    /// workers, and its ClusterQueues dispatch through MultiKueue.
    pub fn managed_fleet(&self) -> Option<&fleet::Fleet> {
        match &self.role {
            Some(Role::Manager(f)) => Some(f),
            _ => None,
        }
    }

    /// Per resource, the nominal quota (every flavor) of the ClusterQueue behind LocalQueue
    /// `name` in namespace `ns`; `None` without that LocalQueue.
    pub fn nominal_behind(&self, ns: &str, name: &str) -> Option<BTreeMap<String, Quantity>> {
        let lq = self.local_queue(name, ns)?;
        let mut out = BTreeMap::new();
        let cq = self
            .queues
            .as_ref()?
            .cluster_queues
            .iter()
            .find(|c| c.name == lq.cluster_queue);
        for r in cq
            .iter()
            .flat_map(|c| &c.resource_groups)
            .flat_map(|g| &g.flavors)
            .flat_map(|f| &f.resources)
        {
            let e = out.entry(r.name.to_string()).or_insert_with(Quantity::zero);
            *e = e.plus(r.nominal_quota);
        }
        Some(out)
    }

    /// Kueue's `managedJobsNamespaceSelector`, if the profile sets one.
    pub fn managed_jobs_selector(&self) -> Option<&LabelSelector> {
        self.operators
            .kueue
            .as_ref()?
            .configuration
            .as_ref()?
            .managed_jobs_namespace_selector
            .as_ref()
    }

    /// The LocalQueue named `name` in namespace `ns`, the one a workload there can use.
    pub fn local_queue(&self, name: &str, ns: &str) -> Option<&LocalQueue> {
        self.queues
            .iter()
            .flat_map(|q| &q.local_queues)
            .find(|lq| lq.name.as_str() == name && lq.namespace_in(self) == ns)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriorityClass {
    pub name: Dns1123Subdomain,
    pub value: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2048))]
    #[serde(deserialize_with = "limits::opt_text::<_, 2048>")]
    pub description: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RayDefaults {
    /// Default image for every workload.
    pub image: Image,
    /// Ray version inside the image (`rayVersion`); derived from the image tag when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<RayVersion>,
}

/// The JSON Schema of the profile format, as committed in `profiles/profile.schema.json`.
pub(crate) fn json_schema() -> serde_json::Value {
    let schema = schemars::schema_for!(Profile);
    serde_json::to_value(schema).unwrap_or_default()
}
