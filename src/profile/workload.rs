//! Workloads in the profile: RayJobs, RayServices and RayClusters, and plain `batch/v1` Jobs,
//! each admitted through a Kueue LocalQueue.

use super::{
    Dns1035Label, Dns1123Label, Dns1123Subdomain, EnvName, Image, QualifiedName, Quantity,
    RayParamName, RayParamValue, RayVersion, RelativePath, Toleration, TopologyRequest, limits,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum WorkloadKind {
    RayJob,
    RayService,
    RayCluster,
    /// A plain `batch/v1` Job (Kueue's `batch/job` integration): one pod template, no Ray.
    Job,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RayJob => "RayJob",
            Self::RayService => "RayService",
            Self::RayCluster => "RayCluster",
            Self::Job => "Job",
        }
    }

    /// Whether the workload is a Ray object (head and worker groups) rather than a plain Job.
    pub fn is_ray(self) -> bool {
        self != Self::Job
    }

    /// Whether an object of this kind runs once and is done: a RayJob ends, and with
    /// `ttlSecondsAfterFinished` KubeRay deletes it. GitOps must not own such an object — a
    /// synced folder would re-create it after it is deleted, and the job would run again for
    /// ever — so only long-running kinds (RayService, RayCluster) are synced.
    pub fn is_one_shot(self) -> bool {
        matches!(self, Self::RayJob | Self::Job)
    }

    /// The Kueue integration that manages this kind.
    pub fn framework(self) -> super::Framework {
        match self {
            Self::RayJob => super::Framework::RayJob,
            Self::RayService => super::Framework::RayService,
            Self::RayCluster => super::Framework::RayCluster,
            Self::Job => super::Framework::BatchJob,
        }
    }
}

/// A Kueue Workload holds at most this many PodSets (`jobframework.MaxPodSets`; the Workload
/// CRD's `podSets` has `maxItems: 18`).
pub(crate) const MAX_POD_SETS: usize = 18;

/// How many worker groups a queued Ray object may have: one PodSet each, beside the head's
/// and, for a RayJob in K8sJobMode, the submitter Job's (Kueue v0.19.2
/// `pkg/controller/jobs/rayjob/rayjob_controller.go`, `addSubmitterPodSet`). The one number the
/// profile rule (RK122) and the output validation both use.
pub(crate) fn max_worker_groups(submitter_pod_set: bool) -> usize {
    MAX_POD_SETS - 1 - usize::from(submitter_pod_set)
}

/// The LocalQueue name Kueue's webhooks give a job that has none, when the namespace has a
/// LocalQueue of that name (kueue@v0.19.2 `pkg/controller/constants` `DefaultLocalQueueName`).
pub(crate) const DEFAULT_LOCAL_QUEUE: &str = "default";

/// How Kueue treats a workload once it is applied: the one answer every rule and the output
/// share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission<'p> {
    /// Admitted as one Workload through this LocalQueue: the one `queue` names, or
    /// [`DEFAULT_LOCAL_QUEUE`] that Kueue's job webhook sets when `queue` is absent
    /// (`defaulted`).
    Queued { queue: &'p str, defaulted: bool },
    /// The kind's integration is off, but `pod` is on and the namespace has a `default`
    /// LocalQueue: Kueue's pod webhook labels, gates and admits every pod of the workload on
    /// its own, as a plain pod.
    PodByPod,
    /// Kueue leaves the workload alone.
    Unmanaged,
}

impl<'p> Admission<'p> {
    pub fn is_queued(self) -> bool {
        matches!(self, Self::Queued { .. })
    }

    /// The LocalQueue the workload is admitted through.
    pub fn queue(self) -> Option<&'p str> {
        match self {
            Self::Queued { queue, .. } => Some(queue),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[allow(clippy::enum_variant_names)] // KubeRay's own names for the modes (the YAML values).
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
    /// Object name (RayJob/RayService ≤ 47 characters, RayCluster ≤ 53, Job ≤ 63).
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
    /// RayJob or Job: seconds to keep the finished cluster or Job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    #[serde(deserialize_with = "limits::opt_range::<_, i32, 0, { i32::MAX as i64 }>")]
    pub ttl_seconds_after_finished: Option<i32>,
    /// RayJob or Job: deadline in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    #[serde(deserialize_with = "limits::opt_range::<_, i32, 1, { i32::MAX as i64 }>")]
    pub active_deadline_seconds: Option<i32>,
    /// RayJob or Job: retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    #[serde(deserialize_with = "limits::opt_range::<_, i32, 0, { i32::MAX as i64 }>")]
    pub backoff_limit: Option<i32>,
    /// Elastic workload: Ray's in-tree autoscaler scales each worker group between
    /// `minReplicas` and `maxReplicas`. Queued through Kueue it is admitted as workload slices
    /// (`kueue.x-k8s.io/elastic-job`); without a queue it is plain KubeRay autoscaling.
    #[serde(default)]
    pub elastic: bool,
    /// RayService: Ray Serve applications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serve: Option<Serve>,
    /// Ray kinds: the head group (required for them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<HeadGroup>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workers: Vec<WorkerGroup>,
    /// Local files (relative to the profile) packed into a ConfigMap mounted in every pod.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<RelativePath>,
    /// Where the scripts are mounted.
    #[serde(default = "default_scripts_mount")]
    pub scripts_mount_path: String,
    /// Job: the container's command, exec form (`[sh, -c, "…"]`); the image's own when omitted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Job: pods running at once (`spec.parallelism`, Kubernetes' default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100_000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 100000>")]
    pub parallelism: Option<u32>,
    /// Job: pods that must succeed (`spec.completions`); `parallelism` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 100_000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 100000>")]
    pub completions: Option<u32>,
    /// Job: `Indexed` gives every pod a completion index (ranks of a distributed job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_mode: Option<CompletionMode>,
    /// Job: its one pod template (required for a Job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<JobPod>,
}

/// `spec.completionMode` of a Job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum CompletionMode {
    NonIndexed,
    Indexed,
}

/// The pod template of a Job.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct JobPod {
    /// The container's name (`main` when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Dns1123Label>,
    /// Environment variables of the container.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<EnvName, String>,
    /// `resources.requests` of the container.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: Resources,
    /// `resources.limits` of the container; Kubernetes takes a missing request from its limit,
    /// and Kueue counts it so.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: Resources,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<QualifiedName, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// Size of a memory-backed `/dev/shm` (NCCL and PyTorch data loaders need more than the
    /// container runtime's 64 MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_memory: Option<Quantity>,
    /// Topology-aware scheduling of the Job's pods (Kueue's pod-set annotations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyRequest>,
}

impl JobPod {
    /// What one pod requests as Kubernetes defaults it and Kueue counts it: the limits, with
    /// the requests given over them.
    pub fn effective_requests(&self) -> Resources {
        let mut out = self.limits.clone();
        out.extend(self.requests.iter().map(|(k, v)| (k.clone(), *v)));
        out
    }
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
    #[serde(deserialize_with = "limits::items::<_, _, 1, { usize::MAX }>")]
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
pub(crate) type Resources = BTreeMap<QualifiedName, Quantity>;

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HeadGroup {
    pub resources: Resources,
    /// `rayStartParams`, e.g. `num-cpus: "0"` to keep tasks off the head.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ray_start_params: BTreeMap<RayParamName, RayParamValue>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<QualifiedName, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// Topology-aware scheduling of the head: `{required: LEVEL}`, `{preferred: LEVEL}` or
    /// `{unconstrained: true}` (Kueue's pod-set annotations on the head's template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyRequest>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorkerGroup {
    /// `groupName` (not `head`).
    pub name: Dns1123Label,
    #[schemars(range(min = 0, max = 10000))]
    #[serde(deserialize_with = "limits::range::<_, u32, 0, 10000>")]
    pub replicas: u32,
    /// Defaults to `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 10000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 10000>")]
    pub min_replicas: Option<u32>,
    /// Defaults to `replicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 10000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 10000>")]
    pub max_replicas: Option<u32>,
    /// Pods per replica (multi-host groups).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 64))]
    #[serde(deserialize_with = "limits::range::<_, u32, 1, 64>")]
    pub num_of_hosts: u32,
    pub resources: Resources,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ray_start_params: BTreeMap<RayParamName, RayParamValue>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<QualifiedName, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    /// Topology-aware scheduling of the group's pods: `{required: LEVEL}` (all in one domain of
    /// that level), `{preferred: LEVEL}` or `{unconstrained: true}`; LEVEL is a level of the
    /// Topology of the flavor Kueue assigns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<TopologyRequest>,
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

impl Workload {
    /// The namespace the workload runs in.
    pub fn namespace_in<'a>(&'a self, profile: &'a super::Profile) -> &'a str {
        self.namespace
            .as_ref()
            .map_or(profile.namespace.as_str(), |n| n.as_str())
    }

    /// The image of every pod: the workload's own, else (for a Ray kind) `ray.image`.
    pub fn image_in<'a>(&'a self, profile: &'a super::Profile) -> Option<&'a Image> {
        if !self.kind.is_ray() {
            return self.image.as_ref();
        }
        self.image
            .as_ref()
            .or_else(|| profile.ray.as_ref().map(|r| &r.image))
    }

    /// `rayVersion`: the workload's own; else, for its own image, the version in that tag; else
    /// `ray.version`; else the version in the `ray.image` tag. `None` when nothing names one.
    pub fn ray_version_in(&self, profile: &super::Profile) -> Option<String> {
        if let Some(v) = &self.ray_version {
            return Some(v.0.clone());
        }
        if let Some(image) = &self.image {
            return ray_version_from_image(image);
        }
        let ray = profile.ray.as_ref()?;
        ray.version
            .as_ref()
            .map(|v| v.0.clone())
            .or_else(|| ray_version_from_image(&ray.image))
    }

    /// Pods Kueue counts for a Job: `parallelism`, or `completions` when that is smaller
    /// (kueue@v0.19.2 `pkg/controller/jobs/job/job_controller.go` `podsCount`).
    pub fn job_pod_count(&self) -> u32 {
        let parallelism = self.parallelism.unwrap_or(1);
        self.completions.map_or(parallelism, |c| c.min(parallelism))
    }

    /// Whether a workload of this kind and submission mode counts a submitter PodSet.
    pub fn has_submitter_pod_set(&self) -> bool {
        self.kind == WorkloadKind::RayJob
            && self.submission_mode.unwrap_or_default() == SubmissionMode::K8sJobMode
    }

    /// How Kueue admits this workload (Kueue v0.19.2). With `queue`, through that LocalQueue.
    /// Without it, Kueue's defaulting webhooks decide, in a namespace Kueue manages (its
    /// default `managedJobsNamespaceSelector` leaves out `kube-system` and Kueue's own
    /// namespace) that has a LocalQueue named `default`:
    /// - the kind's job webhook labels the object with `default` when the kind's integration
    ///   is on (kueue@v0.19.2 `pkg/controller/jobframework/defaults.go`
    ///   `ApplyDefaultLocalQueueWithManagedJobsNamespaceSelector`, called from
    ///   `pkg/controller/jobs/{rayjob,raycluster,rayservice}/*_webhook.go` `Default`);
    /// - else, with the `pod` integration on, the pod webhook labels each pod of the workload
    ///   (`pkg/controller/jobs/pod/pod_webhook.go` `Default`, "Local queue defaulting"): no
    ///   ancestor is managed by Kueue, so every pod becomes a Workload of its own.
    pub fn admission<'p>(&'p self, profile: &'p super::Profile) -> Admission<'p> {
        if let Some(q) = &self.queue {
            return Admission::Queued {
                queue: q.as_str(),
                defaulted: false,
            };
        }
        let Some(kueue) = &profile.operators.kueue else {
            return Admission::Unmanaged;
        };
        let ns = self.namespace_in(profile);
        let managed_namespace = ns != "kube-system" && ns != kueue.namespace.as_str();
        let has_default = profile.local_queue(DEFAULT_LOCAL_QUEUE, ns).is_some();
        if !managed_namespace || !has_default {
            Admission::Unmanaged
        } else if kueue.frameworks.contains(&self.kind.framework()) {
            Admission::Queued {
                queue: DEFAULT_LOCAL_QUEUE,
                defaulted: true,
            }
        } else if kueue.frameworks.contains(&super::Framework::Pod)
            // With `ray.io/raycluster` on, the RayCluster a RayJob or RayService creates is
            // an ancestor Kueue manages (defaulted to `default` itself), so the pod webhook
            // leaves its pods alone (`FindAncestorJobManagedByKueue`); RK145 covers the
            // RayService case.
            && (self.kind == WorkloadKind::RayCluster
                || !kueue.frameworks.contains(&super::Framework::RayCluster))
        {
            Admission::PodByPod
        } else {
            Admission::Unmanaged
        }
    }
}

/// The Ray version an image tag names: the first `X.Y.Z` in the tag that is not part of a longer
/// dotted number (`2.57.0-gpu`, `py3.12-ray2.55.1-cuda13.0` → `2.55.1`). Digests and tags
/// without a version (`nightly-gpu`, `latest`) name none.
pub(crate) fn ray_version_from_image(image: &str) -> Option<String> {
    let reference = image.split('@').next().unwrap_or(image);
    // The tag follows the last ':' that comes after the last '/' (a registry port is not a tag).
    let last_slash = reference.rfind('/').map_or(0, |i| i + 1);
    let tag = &reference[last_slash..];
    let tag = &tag[tag.find(':')? + 1..];
    let bytes = tag.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !is_version_byte(bytes[i - 1])) {
            let end = bytes[i..]
                .iter()
                .position(|b| !is_version_byte(*b))
                .map_or(bytes.len(), |n| i + n);
            let run = &tag[i..end];
            let parts: Vec<&str> = run.split('.').collect();
            if parts.len() == 3 && parts.iter().all(|p| !p.is_empty()) {
                return Some(run.to_owned());
            }
            i = end;
        } else {
            i += 1;
        }
    }
    None
}

fn is_version_byte(b: u8) -> bool {
    b.is_ascii_digit() || b == b'.'
}

#[cfg(test)]
mod tests {
    use super::ray_version_from_image;

    #[test]
    fn ray_version_comes_from_the_first_three_part_number_of_the_tag() {
        let v = |s| ray_version_from_image(s);
        assert_eq!(v("rayproject/ray:2.57.0-gpu").as_deref(), Some("2.57.0"));
        assert_eq!(
            v("mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.55.1-cuda13.0").as_deref(),
            Some("2.55.1")
        );
        assert_eq!(
            v("rayproject/ray-llm:2.52.0-py311-cu128").as_deref(),
            Some("2.52.0")
        );
        assert_eq!(v("localhost:5000/ray:2.9.3").as_deref(), Some("2.9.3"));
        assert_eq!(v("rayproject/ray:nightly-gpu"), None);
        assert_eq!(v("rayproject/ray"), None);
        assert_eq!(v("localhost:5000/ray"), None);
        assert_eq!(v("rayproject/ray:1.2.3.4"), None);
        assert_eq!(v("rayproject/ray@sha256:0123"), None);
    }
}
