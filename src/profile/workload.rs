//! Ray workloads in the profile: RayJobs, RayServices and RayClusters, each admitted through a
//! Kueue LocalQueue.

use super::{
    Dns1035Label, Dns1123Label, Dns1123Subdomain, EnvName, Image, QualifiedName, Quantity,
    RayVersion, RelativePath, Toleration,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WorkloadKind {
    RayJob,
    RayService,
    RayCluster,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RayJob => "RayJob",
            Self::RayService => "RayService",
            Self::RayCluster => "RayCluster",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SubmissionMode {
    #[default]
    K8sJobMode,
    HTTPMode,
    InteractiveMode,
    SidecarMode,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Workload {
    pub kind: WorkloadKind,
    /// Object name (RayJob/RayService ≤ 47 characters, RayCluster ≤ 53).
    pub name: Dns1035Label,
    /// Defaults to the profile's namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Dns1123Label>,
    /// LocalQueue to submit to (`kueue.x-k8s.io/queue-name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Dns1123Label>,
    /// WorkloadPriorityClass (`kueue.x-k8s.io/priority-class`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class: Option<Dns1123Subdomain>,
    /// Image for every pod; `ray.image` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// `rayVersion`; taken from the image tag when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ray_version: Option<RayVersion>,
    /// Service account of the pods; the profile's `serviceAccount` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account: Option<Dns1123Subdomain>,
    /// RayJob: the command the submitter runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrypoint: Option<String>,
    /// RayJob: runtime environment (pip packages, environment variables, working dir).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_env: Option<RuntimeEnv>,
    /// RayJob: how the job is submitted (`K8sJobMode` by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submission_mode: Option<SubmissionMode>,
    /// RayJob: resources of the submitter pod (K8sJobMode); Kueue counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submitter: Option<Submitter>,
    /// RayJob: seconds to keep the finished cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub ttl_seconds_after_finished: Option<i32>,
    /// RayJob: deadline in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub active_deadline_seconds: Option<i32>,
    /// RayJob: retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub backoff_limit: Option<i32>,
    /// Elastic workload: Ray's autoscaler on, admitted as Kueue workload slices.
    #[serde(default)]
    pub elastic: bool,
    /// RayService: Ray Serve applications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<Serve>,
    pub head: HeadGroup,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<WorkerGroup>,
    /// Local files (relative to the profile) packed into a ConfigMap mounted in every pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<RelativePath>,
    /// Where the scripts are mounted.
    #[serde(default = "default_scripts_mount")]
    pub scripts_mount_path: String,
}

fn default_scripts_mount() -> String {
    "/home/ray/scripts".into()
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RuntimeEnv {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pip: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env_vars: BTreeMap<EnvName, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Submitter {
    /// Requests = limits of the submitter container.
    pub resources: BTreeMap<QualifiedName, Quantity>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Serve {
    /// Port the Serve HTTP proxy listens on.
    #[serde(default = "default_serve_port")]
    pub port: u16,
    #[schemars(length(min = 1))]
    pub applications: Vec<ServeApplication>,
}

fn default_serve_port() -> u16 {
    8000
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServeApplication {
    pub name: Dns1123Label,
    /// HTTP route, e.g. `/aurora`.
    pub route_prefix: String,
    /// `module:attribute` of the Serve deployment graph.
    pub import_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_env: Option<RuntimeEnv>,
}

/// Requests = limits for the Ray container: `cpu`, `memory`, `nvidia.com/gpu`, ...
pub type Resources = BTreeMap<QualifiedName, Quantity>;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HeadGroup {
    pub resources: Resources,
    /// `rayStartParams`, e.g. `num-cpus: "0"` to keep tasks off the head.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ray_start_params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<QualifiedName, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerGroup {
    /// `groupName` (not `head`).
    pub name: Dns1123Label,
    #[schemars(range(min = 0, max = 10000))]
    pub replicas: u32,
    /// Defaults to `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 10000))]
    pub min_replicas: Option<u32>,
    /// Defaults to `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 10000))]
    pub max_replicas: Option<u32>,
    /// Pods per replica (multi-host groups).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 64))]
    pub num_of_hosts: u32,
    pub resources: Resources,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ray_start_params: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<QualifiedName, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

fn one() -> u32 {
    1
}

impl WorkerGroup {
    pub fn min(&self) -> u32 {
        self.min_replicas.unwrap_or(self.replicas)
    }
    pub fn max(&self) -> u32 {
        self.max_replicas.unwrap_or(self.replicas)
    }
}
