//! Every diagnostic code raykueue reports, defined once: its stable identifier, its severity
//! and its one-line meaning. Every place that reports goes through a [`Code`] from here (no
//! code is spelled anywhere else; a test reads `src/` for strays), and `docs/rules.md` is
//! generated from this table (`cargo run -p xtask -- docs`, checked fresh by a test).
//!
//! Checks that are the same on every cloud have one code each; the codes they replaced are
//! listed in [`RETIRED`].

use Severity::{Error, Warning};
use serde::Serialize;

/// What a finding does to a run: an error stops `gen`; a warning does not, unless
/// `--deny-warnings`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One diagnostic code: what `error[RK402]` stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code {
    pub id: &'static str,
    pub severity: Severity,
    /// One line: what the finding means.
    pub title: &'static str,
    /// A profile (or manifest) that draws it, in a few words, for the rules reference.
    pub example: &'static str,
}

/// A code is its id to whoever asks which one it is (`d.code == "RK131"`).
impl PartialEq<str> for Code {
    fn eq(&self, id: &str) -> bool {
        self.id == id
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id)
    }
}

const fn code(
    id: &'static str,
    severity: Severity,
    title: &'static str,
    example: &'static str,
) -> Code {
    Code {
        id,
        severity,
        title,
        example,
    }
}

/// The groups of the rules reference, by code range: title, first code, last code.
pub(crate) const GROUPS: &[(&str, &str, &str)] = &[
    ("Input and schema: the profile as a file", "RK000", "RK049"),
    (
        "`raykueue validate`: manifests given to it",
        "RK050",
        "RK099",
    ),
    (
        "Kueue: queues, flavors and workload admission",
        "RK100",
        "RK199",
    ),
    (
        "Capacity: pods and quotas against the node pools",
        "RK200",
        "RK299",
    ),
    ("KubeRay and images", "RK300", "RK399"),
    (
        "Clouds: node pools, the cloud sections and their operators",
        "RK400",
        "RK599",
    ),
    ("`raykueue simulate` scenarios", "RK600", "RK699"),
    (
        "Fleets: a MultiKueue manager and its workers",
        "RK700",
        "RK799",
    ),
    (
        "Live state: a cluster snapshot read by `explain` and `check --state`",
        "RK800",
        "RK849",
    ),
    (
        "Internal: raykueue's own output (a bug in raykueue)",
        "RK900",
        "RK999",
    ),
];

// ---- Input and schema: the profile as a file (`input`)
pub(crate) const USAGE: Code = code(
    "RK000",
    Error,
    "usage or I/O: the profile cannot be found or read",
    "`--profile tem` → no profile named `tem` (did you mean the shipped profile `team`?)",
);
pub(crate) const YAML_SYNTAX: Code = code(
    "RK001",
    Error,
    "YAML syntax error, or more than one document",
    "`flavors: [default` → fix the YAML syntax at this place",
);
pub(crate) const NOT_UTF8: Code = code(
    "RK002",
    Error,
    "the profile is not valid UTF-8",
    "a Latin-1 `é` in a description",
);
pub(crate) const DUPLICATE_KEY: Code = code(
    "RK003",
    Error,
    "a mapping has the same key twice",
    "`namespace: ray` twice",
);
pub(crate) const INPUT_TOO_LARGE: Code = code(
    "RK004",
    Error,
    "the profile exceeds a size, depth, node-count or alias-expansion limit",
    "a YAML alias bomb",
);
pub(crate) const YAML_TAG: Code = code(
    "RK005",
    Error,
    "a YAML tag (`!!binary`, `!custom`): profiles are plain data",
    "`name: !!binary aGk=`",
);
pub(crate) const EMPTY_INPUT: Code = code("RK006", Error, "the profile is empty", "an empty file");
pub(crate) const WRONG_FILE_KIND: Code = code(
    "RK007",
    Error,
    "a raykueue file of another kind than the command reads: a Fleet or a Scenario as a profile, a fleet's manager profile (no queues of its own) alone, a profile as a cluster snapshot or as a manifest",
    "`raykueue diff fleet.yaml team` → fleet.yaml is a Fleet: `gen`, `check` and `simulate` read it",
);
pub(crate) const UNKNOWN_KEY: Code = code(
    "RK010",
    Error,
    "unknown key (with did-you-mean)",
    "`namspace: ray` → did you mean `namespace`?",
);
pub(crate) const WRONG_TYPE: Code = code(
    "RK011",
    Error,
    "wrong type (e.g. a number where text is expected)",
    "`count: \"two\"` where a number is expected",
);
pub(crate) const INVALID_VALUE: Code = code(
    "RK012",
    Error,
    "invalid value: pattern, enum, range, length or item count",
    "`name: Team-A` is not a DNS-1123 label; `nodeLabels` with 9 entries",
);
pub(crate) const MISSING_KEY: Code = code(
    "RK013",
    Error,
    "missing required key",
    "a node pool without `vmSize`",
);
pub(crate) const EXTENDS_NOT_FOUND: Code = code(
    "RK020",
    Error,
    "`extends` names a parent profile that cannot be found",
    "`extends: ../bsae.yaml`",
);
pub(crate) const EXTENDS_CYCLE: Code = code(
    "RK021",
    Error,
    "`extends` forms a cycle, or a chain too long to be anything else",
    "`a.yaml` extends `b.yaml`, which extends `a.yaml`",
);
pub(crate) const OVERLAY_CLASH: Code = code(
    "RK022",
    Error,
    "an overlay replaces a mapping, list or scalar with another type, or deletes what the parent lacks",
    "`flavors: gpu` over the parent's list",
);
pub(crate) const DEPRECATED_FIELD: Code = code(
    "RK023",
    Warning,
    "a deprecated profile field: still read in this `apiVersion`, to be replaced before the next one (docs/compatibility.md)",
    "a field the schema marks `deprecated`, with its replacement in the hint",
);

// ---- `raykueue validate`: manifests given to it (`output::validate`)
pub(crate) const MANIFEST_SCHEMA: Code = code(
    "RK050",
    Error,
    "validate: a manifest breaks its kind's schema, or has a field the schema lacks",
    "`spec.cohort` in a v1beta2 ClusterQueue",
);
pub(crate) const MANIFEST_DEFAULTED: Code = code(
    "RK051",
    Warning,
    "validate: a required field left to the API server's default",
    "a RayCluster worker group without `minReplicas`",
);
pub(crate) const MANIFEST_RULE: Code = code(
    "RK052",
    Error,
    "validate: a manifest breaks a CEL rule of its CRD",
    "a ClusterQueue with 65 resource groups",
);
pub(crate) const MANIFEST_WEBHOOK: Code = code(
    "RK053",
    Error,
    "validate: a manifest breaks a Kueue admission webhook rule",
    "a queued RayJob with `shutdownAfterJobFinishes: false`",
);
pub(crate) const MANIFEST_NOT_EVALUATED: Code = code(
    "RK054",
    Warning,
    "validate: a rule that could not be evaluated",
    "(named by its CEL text)",
);
pub(crate) const MANIFEST_NO_SCHEMA: Code = code(
    "RK055",
    Warning,
    "validate: no schema for this apiVersion and kind: not validated",
    "a Deployment in the stream",
);
pub(crate) const MANIFEST_NOT_OBJECT: Code = code(
    "RK056",
    Error,
    "validate: a document that is not a Kubernetes object",
    "a bare list",
);
pub(crate) const MANIFEST_EMPTY: Code = code(
    "RK057",
    Warning,
    "validate: no Kubernetes objects in the input",
    "an empty file",
);
pub(crate) const MANIFEST_NULL_DROPPED: Code = code(
    "RK058",
    Warning,
    "validate: a null in a field that is not nullable, which the API server drops before validating: the object is stored without the field",
    "`stopPolicy: null` in a LocalQueue",
);
pub(crate) const UNMANAGED: Code = code(
    "RK060",
    Error,
    "Kueue accepts the object but does not manage it (a queued RayJob with clusterSelector): its defaulter suspends it and KubeRay refuses a suspended clusterSelector RayJob, so it never runs",
    "a queued RayJob with `clusterSelector` and no `rayClusterSpec`",
);
pub(crate) const NO_WORKLOAD: Code = code(
    "RK061",
    Error,
    "Kueue accepts the object but cannot create its Workload (more than 18 PodSets with the submitter)",
    "a K8sJobMode RayJob with 17 worker groups (19 PodSets)",
);
pub(crate) const KUBERAY_REFUSES: Code = code(
    "RK070",
    Error,
    "the KubeRay controller refuses the object at reconcile (ValidationFailed), after `kubectl apply` said created",
    "`ttlSecondsAfterFinished: 600` with `shutdownAfterJobFinishes: false`",
);

// ---- Kueue: queues, flavors and workload admission (`checks`)
pub(crate) const LOCAL_QUEUE_TARGET: Code = code(
    "RK101",
    Error,
    "a LocalQueue points at a ClusterQueue the profile does not define",
    "`clusterQueue: team-c-cq` → did you mean `team-a-cq`?",
);
pub(crate) const FLAVOR_NOT_FOUND: Code = code(
    "RK102",
    Error,
    "a ClusterQueue names a ResourceFlavor that does not exist (the queue goes inactive with FlavorNotFound)",
    "flavor `gpus` in a resource group, only `gpu` defined",
);
pub(crate) const QUEUE_MODE: Code = code(
    "RK104",
    Error,
    "single and team queue modes are exclusive: one queue without a cohort, or team queues that share one",
    "`mode: single` with two ClusterQueues, or a `cohortName`",
);
pub(crate) const LIMIT_WITHOUT_COHORT: Code = code(
    "RK105",
    Error,
    "borrowingLimit and lendingLimit are allowed only in a ClusterQueue with a cohortName",
    "`borrowingLimit: \"4\"` on a queue without cohort",
);
pub(crate) const LENDING_OVER_NOMINAL: Code = code(
    "RK106",
    Error,
    "lendingLimit must not exceed nominalQuota",
    "nominal `\"4\"`, lendingLimit `\"6\"`",
);
pub(crate) const COVERED_RESOURCES: Code = code(
    "RK107",
    Error,
    "each flavor lists exactly its group's coveredResources, in the same order",
    "covers `[cpu, memory]`, flavor lists `[memory, cpu]`",
);
pub(crate) const DUPLICATE_NAME: Code = code(
    "RK108",
    Error,
    "two objects of one kind share a name",
    "two ResourceFlavors named `gpu`",
);
pub(crate) const GROUP_OVERLAP: Code = code(
    "RK109",
    Error,
    "a resource or a flavor appears in more than one resource group of a ClusterQueue",
    "`cpu` covered by groups 0 and 1",
);
pub(crate) const PRIORITY_NOT_FOUND: Code = code(
    "RK110",
    Error,
    "a workload names a WorkloadPriorityClass the profile does not define",
    "`priorityClass: hihg`",
);
pub(crate) const TOLERATION_SHAPE: Code = code(
    "RK112",
    Error,
    "a toleration Kueue's CEL rules reject (Exists with a value, tolerationSeconds without NoExecute, no key without Exists)",
    "`{operator: Exists, value: \"x\"}`",
);
pub(crate) const FUNGIBILITY: Code = code(
    "RK113",
    Error,
    "flavorFungibility.preference needs whenCanBorrow and whenCanPreempt both TryNextFlavor",
    "`preference: BorrowingOverPreemption` alone",
);
pub(crate) const BORROW_WITHIN_COHORT: Code = code(
    "RK114",
    Error,
    "preemption.borrowWithinCohort needs reclaimWithinCohort other than Never",
    "`borrowWithinCohort: {policy: LowerPriority}` with `reclaimWithinCohort: Never`",
);
pub(crate) const TAINT_DUPLICATE: Code = code(
    "RK115",
    Error,
    "a ResourceFlavor lists the same taint key and effect twice",
    "`nvidia.com/gpu:NoSchedule` twice",
);
pub(crate) const UNUSED_FLAVOR: Code = code(
    "RK116",
    Warning,
    "a ResourceFlavor no ClusterQueue uses",
    "flavor `spot` in no resource group",
);
pub(crate) const UNREACHABLE_CLUSTER_QUEUE: Code = code(
    "RK117",
    Warning,
    "a ClusterQueue no LocalQueue points at: nothing can be submitted to it",
    "`team-c-cq` with no LocalQueue",
);
pub(crate) const QUEUE_TOTALS: Code = code(
    "RK118",
    Error,
    "a ClusterQueue over Kueue's totals: 256 flavors, 256 covered resources, 512 flavor × resource pairs per group",
    "23 flavors × 23 resources = 529 in one group",
);
pub(crate) const FAIR_SHARING_WEIGHT: Code = code(
    "RK119",
    Error,
    "fairSharingWeight is positive but not above 1n (Kueue refuses weights that collapse to zero)",
    "`fairSharingWeight: 1n`",
);
pub(crate) const QUEUE_NOT_FOUND: Code = code(
    "RK120",
    Error,
    "a workload's queue names no LocalQueue in its namespace (it stays pending: LocalQueue not found)",
    "`queue: team-c` → did you mean `team-a`?",
);
pub(crate) const UNQUEUED: Code = code(
    "RK121",
    Warning,
    "a workload without `queue` and no `default` LocalQueue in its namespace bypasses admission and quota",
    "`team`'s `aurora-serve` (see [Workloads](#workloads))",
);
pub(crate) const TOO_MANY_GROUPS: Code = code(
    "RK122",
    Error,
    "more worker groups than a Kueue Workload has PodSets for (16 in K8sJobMode, else 17)",
    "17 worker groups on a K8sJobMode RayJob",
);
pub(crate) const HEAD_GROUP_NAME: Code = code(
    "RK123",
    Error,
    "a worker group is named `head`, which Kueue reserves for the head PodSet",
    "`workers: [{name: head, ...}]`",
);
pub(crate) const DUPLICATE_GROUP: Code = code(
    "RK124",
    Error,
    "two worker groups of a workload share a name",
    "two groups `gpu-workers`",
);
pub(crate) const DUPLICATE_WORKLOAD: Code = code(
    "RK125",
    Error,
    "two workloads share a name (one `workloads/<name>/` folder each)",
    "two RayJobs `train`",
);
pub(crate) const ELASTIC_GATE_OFF: Code = code(
    "RK126",
    Error,
    "an elastic queued workload while Kueue's ElasticJobsViaWorkloadSlices feature gate is off",
    "`elastic: true`, feature gate set to false",
);
pub(crate) const WRONG_KIND_FIELD: Code = code(
    "RK127",
    Error,
    "a field that belongs to another kind (RayJob-only fields, `serve` outside RayService, `submitter` outside K8sJobMode, Ray fields on a Job, Job fields on a Ray kind)",
    "`submitter` with `submissionMode: SidecarMode`",
);
pub(crate) const ENTRYPOINT_REQUIRED: Code = code(
    "RK128",
    Error,
    "a RayJob without `entrypoint` (only InteractiveMode submits it later)",
    "a RayJob with no `entrypoint`",
);
pub(crate) const SERVE_REQUIRED: Code = code(
    "RK129",
    Error,
    "a RayService without `serve` applications",
    "`kind: RayService` without `serve`",
);
pub(crate) const TEMPLATE_REQUIRED: Code = code(
    "RK152",
    Error,
    "a workload without the pods of its kind: a Ray kind without `head`, a Job without `pod`",
    "`kind: Job` without `pod`",
);
pub(crate) const CHART_SOURCE: Code = code(
    "RK153",
    Warning,
    "an operator chart that `operators.source` does not describe: another version than the source publishes (its values keys unchecked), or a chart or repository outside the source",
    "`source: aksAiRuntime` with `kueue: {version: 0.19.2}`",
);
pub(crate) const FRAMEWORK_MISSING: Code = code(
    "RK130",
    Error,
    "a queued workload's kind is not in operators.kueue.frameworks, so Kueue never admits it",
    "a queued RayService, frameworks without `ray.io/rayservice`",
);
pub(crate) const SCRIPT_UNREADABLE: Code = code(
    "RK131",
    Error,
    "a script is missing, unreadable, not UTF-8 text, outside the profile's folder, or (in a shipped profile) not one of its example scripts",
    "`scripts: [train.py]`, no such file",
);
pub(crate) const SCRIPT_KEY_CLASH: Code = code(
    "RK132",
    Error,
    "two scripts of a workload have the same file name (one ConfigMap key)",
    "`a/train.py` and `b/train.py`",
);
pub(crate) const SCRIPTS_TOO_LARGE: Code = code(
    "RK133",
    Error,
    "a workload's scripts exceed the 1 MiB a ConfigMap can hold",
    "a 2 MiB data file in `scripts`",
);
pub(crate) const NO_IMAGE: Code = code(
    "RK134",
    Error,
    "a workload has no image (`image`, or `ray.image` for all)",
    "no `image` and no `ray.image`",
);
pub(crate) const NO_RAY_VERSION: Code = code(
    "RK135",
    Error,
    "a workload's rayVersion is not given and its image tag names no Ray version",
    "`image: example.com/ml/trainer:1.4.0-cuda12.4` without `rayVersion`",
);
pub(crate) const MOUNT_PATH: Code = code(
    "RK136",
    Error,
    "scriptsMountPath is not an absolute path",
    "`scriptsMountPath: scripts`",
);
pub(crate) const SERVE_APPS: Code = code(
    "RK137",
    Error,
    "Serve applications must have unique names and unique route prefixes starting with `/`",
    "two applications on `routePrefix: /aurora`",
);
pub(crate) const NO_REQUESTS: Code = code(
    "RK138",
    Error,
    "a Ray pod without cpu and memory requests: Kueue assigns it no flavor (so no node selector) and Ray no CPUs",
    "`head: {resources: {}}`",
);
pub(crate) const POD_BY_POD: Code = code(
    "RK139",
    Warning,
    "a workload without `queue` whose kind's integration is off, in a namespace with a `default` LocalQueue and the `pod` integration on: Kueue admits its pods one by one",
    "a RayService in `single`",
);
pub(crate) const OVER_QUOTA: Code = code(
    "RK140",
    Error,
    "a workload needs more than its ClusterQueue can ever get (nominal quota + borrowing): it stays pending forever",
    "5 workers × 1 GPU on a queue with 4 GPUs and no cohort",
);
pub(crate) const NOT_COVERED: Code = code(
    "RK141",
    Error,
    "a workload requests a resource its ClusterQueue does not cover (or no flavor of it matches its pods): Kueue never admits it",
    "workers request `nvidia.com/gpu`, the queue covers `[cpu, memory]`",
);
pub(crate) const FLAVOR_LABELS_UNMATCHED: Code = code(
    "RK142",
    Error,
    "a ResourceFlavor's nodeLabels are carried by no node pool: pods admitted on it stay Pending",
    "`accelerator: nvidia` with only D-series pools",
);
pub(crate) const TAINT_NOT_TOLERATED: Code = code(
    "RK143",
    Error,
    "a pod does not tolerate the taints of the only node pools it can run on",
    "GPU workers, the only GPU pool tainted `sku=gpu:NoSchedule`",
);
pub(crate) const NO_POOL_MATCHES: Code = code(
    "RK144",
    Error,
    "no node pool matches a pod's node selector (with its flavors' labels) or has the GPUs it requests",
    "`nodeSelector: {disktype: nvme}`, no pool labelled so",
);
pub(crate) const INTEGRATION_CLASH: Code = code(
    "RK145",
    Warning,
    "`ray.io/raycluster` on without `ray.io/rayservice` while a RayService is queued: Kueue queues each of its RayClusters as a standalone job",
    "frameworks `[ray.io/raycluster, ray.io/rayjob]` and a RayService",
);
pub(crate) const CANNOT_RECLAIM: Code = code(
    "RK146",
    Warning,
    "a queued workload fits its ClusterQueue only by borrowing: it cannot reclaim its queue's quota from a borrowing cohort peer",
    "the upstream example's `llm-training`: 68.5 CPU on a queue with 48 CPU nominal",
);
pub(crate) const POD_WEBHOOK_EVERYWHERE: Code = code(
    "RK147",
    Warning,
    "a pod-based Kueue integration without managedJobsNamespaceSelector, on one Kueue replica: while Kueue is down no pod starts in any namespace",
    "the upstream example's Kueue settings",
);
pub(crate) const MANAGED_NAMESPACES: Code = code(
    "RK148",
    Error,
    "managedJobsNamespaceSelector selects kube-system or Kueue's namespace (Kueue refuses to start), or misses a namespace with a LocalQueue (its jobs are never managed)",
    "`{matchExpressions: [{key: team, operator: DoesNotExist}]}`",
);
pub(crate) const KUEUE_CONFIGURATION: Code = code(
    "RK149",
    Error,
    "a Configuration Kueue refuses at start-up (its controller does not run, and no workload is admitted)",
    "`fairSharing: {preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]}`",
);
pub(crate) const DANGLING_SCRIPT: Code = code(
    "RK150",
    Error,
    "an entrypoint or Serve import names a file under scriptsMountPath that the workload's `scripts` do not provide (the job fails at start)",
    "`entrypoint: python /home/ray/scripts/train_llm.py` with no `train_llm.py` in `scripts`",
);
pub(crate) const HEAD_GPU_PARAMS: Code = code(
    "RK151",
    Warning,
    "a RayService head requests GPUs without `num-cpus` and `num-gpus` in rayStartParams: Ray takes the whole container",
    "head `{cpu: \"20\", nvidia.com/gpu: \"1\"}`, no rayStartParams",
);

// ---- Capacity-aware admission: topology-aware scheduling, admission checks, pods-ready
// (`checks::topology`, `checks::provisioning`)
pub(crate) const TOPOLOGY_LEVELS: Code = code(
    "RK180",
    Error,
    "a Topology's levels are ones Kueue refuses: a level twice, or kubernetes.io/hostname not the last",
    "`levels: [kubernetes.io/hostname, topology.kubernetes.io/zone]`",
);
pub(crate) const TOPOLOGY_ORDER: Code = code(
    "RK181",
    Warning,
    "a Topology's levels are not broadest first (a zone below a block, a host above a rack): Kueue nests the domains as written",
    "`levels: [cloud.google.com/gce-topology-block, topology.kubernetes.io/zone]`",
);
pub(crate) const TOPOLOGY_NOT_FOUND: Code = code(
    "RK182",
    Error,
    "a flavor's topologyName names no Topology of the profile: every ClusterQueue using the flavor is inactive (TopologyNotFound)",
    "`topologyName: gpu-topo` with only `gpu-topology` defined",
);
pub(crate) const TOPOLOGY_FLAVOR_LABELS: Code = code(
    "RK183",
    Error,
    "a flavor with topologyName and no nodeLabels: the API server refuses it",
    "`{name: gpu, topologyName: gpu-topology}`",
);
pub(crate) const TOPOLOGY_UNSERVED: Code = code(
    "RK184",
    Error,
    "a pod set's topology request (or its lack of one) matches no flavor its ClusterQueue offers it: Kueue never admits the workload",
    "workers `required: cloud.google.com/gce-topology-block`, their cpu from a flavor without topologyName",
);
pub(crate) const TOPOLOGY_ELASTIC: Code = code(
    "RK185",
    Error,
    "a topology request on an elastic workload: Kueue v0.19 places elastic workloads without TAS (and refuses required and preferred)",
    "`elastic: true` with workers `topology: {required: ...}`",
);
pub(crate) const TOPOLOGY_GATE_OFF: Code = code(
    "RK186",
    Error,
    "Topologies or topology requests with the TopologyAwareScheduling feature gate off",
    "`featureGates: {TopologyAwareScheduling: false}`",
);
pub(crate) const PROVISIONING_ON_MANAGER: Code = code(
    "RK197",
    Error,
    "a ProvisioningRequest check on a fleet manager's ClusterQueue, beside the fleet's MultiKueue check: Kueue makes the queue inactive (MultiKueueWithProvisioningRequest)",
    "a manager profile whose GPU queue names `gpu-capacity`",
);
pub(crate) const PROVISIONING_TAINT_NOT_TOLERATED: Code = code(
    "RK198",
    Error,
    "every node pool behind a flavor of a ProvisioningRequest check has a taint the pods it provisions do not tolerate in their template or the flavor: the autoscaler finds no pool for the request (tolerations added at pod creation, such as ExtendedResourceToleration's, do not count)",
    "an EKS GPU flavor behind `gpu-capacity` without a toleration of `nvidia.com/gpu`",
);
pub(crate) const TAS_TAINT_NOT_TOLERATED: Code = code(
    "RK196",
    Error,
    "every node pool of a topology-aware flavor has a taint its pods do not tolerate in their template or the flavor: Kueue's TAS leaves the nodes out (tolerations added at pod creation, such as ExtendedResourceToleration's, come too late)",
    "a GKE GPU flavor without a toleration of `nvidia.com/gpu`",
);
pub(crate) const ADMISSION_CHECK_NOT_FOUND: Code = code(
    "RK190",
    Error,
    "a ClusterQueue names an AdmissionCheck the profile does not define: the queue is inactive and admits nothing",
    "`admissionChecks: [gpu-capacty]`",
);
pub(crate) const ON_FLAVORS: Code = code(
    "RK191",
    Error,
    "an admission check's onFlavors names a flavor the ClusterQueue does not list: Kueue's webhook refuses the queue",
    "`onFlavors: [gpu]` on a queue with only `default`",
);
pub(crate) const ADMISSION_CHECK_UNUSED: Code = code(
    "RK192",
    Warning,
    "an AdmissionCheck no ClusterQueue names: it checks nothing",
    "`admissionChecks: [{name: gpu-capacity, ...}]`, no queue lists it",
);
pub(crate) const MANAGED_RESOURCES_UNREQUESTED: Code = code(
    "RK193",
    Warning,
    "a ProvisioningRequest check whose managedResources no workload of its queues requests: Kueue passes it at once and provisions nothing",
    "`managedResources: [nvidia.com/gpu]` on a CPU-only queue",
);
pub(crate) const PODS_READY_TIMEOUT: Code = code(
    "RK194",
    Warning,
    "waitForPodsReady's timeout is shorter than raykueue's estimate of a node pool's start from zero: Kueue evicts workloads while their nodes boot",
    "`timeout: 3m`, a GPU pool with `autoscale.min: 0`",
);
pub(crate) const TAS_FROM_ZERO: Code = code(
    "RK195",
    Error,
    "a topology-aware flavor whose node pools can shrink to zero, without a ProvisioningRequest check: TAS places pods only on nodes that exist, so nothing ever scales the pools up",
    "a TAS flavor on a pool with `autoscale: {min: 0, max: 4}`, no admission check",
);
pub(crate) const WEIGHT_WITHOUT_FAIR_SHARING: Code = code(
    "RK160",
    Warning,
    "a fairSharingWeight on a ClusterQueue or Cohort while fair sharing is off in Kueue's configuration: the weight does nothing",
    "`fairSharingWeight: \"2\"` without `operators.kueue.configuration.fairSharing`",
);
pub(crate) const COHORT_PARENT_UNKNOWN: Code = code(
    "RK161",
    Error,
    "a Cohort's parentName names no Cohort of `queues.cohorts` (Kueue would put an empty, made-up Cohort there)",
    "`parentName: orgg` → did you mean `org`?",
);
pub(crate) const COHORT_UNDECLARED: Code = code(
    "RK162",
    Error,
    "with `queues.cohorts`, a ClusterQueue's cohortName names no Cohort of the list",
    "`cohortName: reserch` → did you mean `research`?",
);
pub(crate) const COHORT_CYCLE: Code = code(
    "RK163",
    Error,
    "Cohorts whose parentName chain loops: Kueue deactivates every ClusterQueue in or below the cycle and admits nothing through them",
    "`a` with parent `b`, `b` with parent `a`",
);
pub(crate) const COHORT_OF_ONE: Code = code(
    "RK164",
    // A warning: Kueue accepts a cohort of one, and a workload it leaves pending is RK140's.
    Warning,
    "a ClusterQueue's cohortName is neither a Cohort object nor shared by another queue: a cohort of one, with nobody to borrow from or lend to",
    "`cohortName: shared-cohrt` beside two queues in `shared-cohort`",
);
pub(crate) const COHORT_LIMIT_WITHOUT_PARENT: Code = code(
    "RK165",
    Error,
    "borrowingLimit or lendingLimit on a Cohort without parentName (Kueue's webhook refuses it)",
    "`lendingLimit: \"4\"` on the root Cohort `org`",
);
pub(crate) const COHORT_QUOTA_UNUSABLE: Code = code(
    "RK166",
    Warning,
    "a Cohort holds quota of a flavor and resource that no ClusterQueue below it covers: nobody can use it",
    "`org` holds 8 `nvidia.com/gpu` of flavor `gpu`, its queues cover only `cpu` and `memory`",
);
pub(crate) const BORROW_WITHIN_COHORT_FAIR_SHARING: Code = code(
    "RK167",
    Warning,
    "preemption.borrowWithinCohort with fair sharing on: the fair-sharing preemptor ignores it",
    "`borrowWithinCohort: {policy: LowerPriority}` and `fairSharing` in the Kueue configuration",
);
pub(crate) const COHORT_WITHOUT_QUEUES: Code = code(
    "RK168",
    Warning,
    "a Cohort with no ClusterQueue below it: its quota and weight serve nobody",
    "Cohort `staging` that no ClusterQueue or Cohort names",
);
pub(crate) const FAIR_SHARING_ALONE: Code = code(
    "RK169",
    Warning,
    "fair sharing is on but no two ClusterQueues share a Cohort tree: there is nothing to share",
    "`fairSharing` on the `single` profile",
);
pub(crate) const QUEUE_GETS_NOTHING: Code = code(
    "RK170",
    Warning,
    "a ClusterQueue covers a resource it can never get any of: no nominal quota on any flavor, and its Cohort tree lends it none",
    "`nominalQuota: \"0\"` under a Cohort whose queues lend nothing (`lendingLimit: \"0\"`)",
);

// ---- Capacity: pods and quotas against the node pools (`checks::nodes`)
pub(crate) const UNKNOWN_INSTANCE_TYPE: Code = code(
    "RK201",
    Warning,
    "a node pool's VM size is not in raykueue's catalogue: capacity checks skip the pool",
    "`Standard_NC24ads_A100_v5` → did you mean `Standard_NC24ads_A100_v4`?",
);
pub(crate) const QUOTA_BEYOND_POOLS: Code = code(
    "RK202",
    Warning,
    "a flavor's nominal quota exceeds what the node pools carrying it can provide at their maximum size",
    "8 GPUs of quota, pool of at most 4 × 1-GPU nodes",
);
pub(crate) const POD_FITS_NO_NODE: Code = code(
    "RK203",
    Error,
    "a pod requests more than one node of any pool it can run on has allocatable: it stays Pending",
    "a 300Gi worker on Standard_NC24ads_A100_v4 (220 GiB)",
);
pub(crate) const GROUP_BEYOND_POOLS: Code = code(
    "RK204",
    Warning,
    "a worker group at maxReplicas needs more nodes than its pools can scale to",
    "seed 004: up to 5 one-GPU workers, a one-GPU pool with at most 3 nodes",
);
pub(crate) const RETIRED_INSTANCE: Code = code(
    "RK205",
    Error,
    "a node pool's instance type was retired: the cloud refuses to create it",
    "seed 004's `Standard_NC6s_v3` (NCv3, retired 2025-09-30)",
);
pub(crate) const TOPOLOGY_LABEL_NOT_CARRIED: Code = code(
    "RK206",
    Error,
    "a Topology level's node label is carried by no node pool of the flavor: Kueue drops every node that lacks a level, so the flavor has no nodes for TAS",
    "`cloud.google.com/gce-topology-block` on a g2-standard-4 pool",
);
pub(crate) const TOPOLOGY_LABEL_SOME_POOLS: Code = code(
    "RK207",
    Warning,
    "some node pools of a topology-aware flavor lack a level's label (or carry it only on some set-ups): TAS leaves their nodes out",
    "an A3 Ultra pool and a G2 pool behind one flavor with a block level",
);
pub(crate) const TOPOLOGY_DOMAIN_TOO_SMALL: Code = code(
    "RK208",
    Error,
    "a pod set requires one domain of a level, and no domain of that level can hold it (node allocatable × pool sizes): Kueue never admits it",
    "4 workers of 8 GPUs `required: kubernetes.io/hostname`",
);
pub(crate) const PROVISIONING_FIXED_POOLS: Code = code(
    "RK209",
    Error,
    "a scale-up ProvisioningRequest check covers a flavor whose node pools cannot grow: the request fails and the workload is deactivated after its retries",
    "`best-effort-atomic-scale-up…` on a pool with `count: 2` and no autoscale",
);

// ---- KubeRay and images (`checks::ray`)
pub(crate) const NAME_TOO_LONG: Code = code(
    "RK301",
    Error,
    "a RayJob or RayService name longer than 47 characters, or a RayCluster name longer than 53",
    "a 48-character RayJob name",
);
pub(crate) const REPLICAS_RANGE: Code = code(
    "RK302",
    Error,
    "a worker group breaks minReplicas ≤ replicas ≤ maxReplicas",
    "`replicas: 3`, `maxReplicas: 2`",
);
pub(crate) const IMAGE_NOT_PINNED: Code = code(
    "RK303",
    Warning,
    "an image without a fixed tag (none, `latest`, `nightly`) or digest: every pull may bring another Ray",
    "`rayproject/ray:latest`, `rayproject/ray:nightly-gpu`",
);
pub(crate) const GPU_ON_CPU_IMAGE: Code = code(
    "RK304",
    Error,
    "a pod requesting nvidia.com/gpu runs a CPU-only Ray image",
    "GPU workers on `rayproject/ray:2.57.0` (no `-gpu`/`-cuXXX`)",
);
pub(crate) const RAY_VERSION_MISMATCH: Code = code(
    "RK305",
    Error,
    "rayVersion differs from the Ray version of the image",
    "`rayVersion: \"2.52.0\"` with `rayproject/ray:2.57.0-gpu`",
);
pub(crate) const RAY_START_LABELS: Code = code(
    "RK307",
    Error,
    "rayStartParams sets `labels`, which KubeRay forbids (it has its own `labels` field)",
    "`rayStartParams: {labels: \"zone=a\"}`",
);

// ---- Clouds: node pools, the cloud sections and their operators (`checks::clouds`,
// `checks::operators`, `cloud/<name>/checks.rs`)
pub(crate) const TWO_PROVIDERS: Code = code(
    "RK400",
    Error,
    "a profile names more than one provider section (azure, gcp, …): it provisions one cluster",
    "`azure:` and `gcp:` together",
);
pub(crate) const POOL_NAME_TWICE: Code = code(
    "RK402",
    Error,
    "two node pools of the cluster share a name",
    "two pools `gpupool`",
);
pub(crate) const SYSTEM_POOL_EMPTY: Code = code(
    "RK403",
    Error,
    "a System node pool that can have 0 nodes (AKS requires at least 1)",
    "System pool with `autoscale: {min: 0, max: 3}`",
);
pub(crate) const POOL_SIZE_MISSING: Code = code(
    "RK404",
    Error,
    "a node pool gives neither `count` nor `autoscale` (its size would be the cloud CLI's default, unknown to the profile)",
    "`{name: gpupool, vmSize: Standard_NC8as_T4_v3}`",
);
pub(crate) const WORKLOAD_IDENTITY_OIDC: Code = code(
    "RK406",
    Error,
    "cluster.workloadIdentity without cluster.oidcIssuer",
    "`workloadIdentity: true, oidcIssuer: false`",
);
pub(crate) const SERVICE_ACCOUNT_IDENTITY: Code = code(
    "RK407",
    Error,
    "serviceAccount.workloadIdentity on a cluster without workloadIdentity: no token reaches the pods",
    "`azure.identity` set, `cluster.workloadIdentity: false`",
);
pub(crate) const UNKNOWN_LOCATION: Code = code(
    "RK408",
    Warning,
    "an Azure location raykueue does not know",
    "`location: eastus22` → did you mean `eastus2`?",
);
pub(crate) const STORAGE_WITHOUT_IDENTITY: Code = code(
    "RK409",
    Warning,
    "a storage account without azure.identity: its role is granted to nobody",
    "`storage` set, `identity` missing",
);
pub(crate) const KUBERNETES_TOO_OLD: Code = code(
    "RK410",
    Error,
    "the cluster's kubernetesVersion is older than 1.29, which Kueue needs",
    "`kubernetesVersion: \"1.28\"`",
);
pub(crate) const FIRST_POOL_NAME: Code = code(
    "RK421",
    Error,
    "the first GKE node pool is created with the cluster, which names it default-pool",
    "first pool `system`",
);
pub(crate) const ACCELERATOR_MISMATCH: Code = code(
    "RK422",
    Error,
    "a GKE node pool's accelerator disagrees with the GPUs its machine type carries",
    "`g2-standard-4` with `type: nvidia-tesla-t4`",
);
pub(crate) const RESERVATION_ONLY: Code = code(
    "RK425",
    Error,
    "a GKE node pool of a machine family Compute Engine offers only from a reservation, flex-start or spot (A3 Ultra, A4, A4X), with none of them",
    "`machineType: a3-ultragpu-8g` without `capacity`",
);
pub(crate) const CAPACITY_UNUSABLE: Code = code(
    "RK426",
    Error,
    "a GKE node pool's consumption option it cannot take: one its machine family is not offered as, on the pool created with the cluster, beside queued provisioning, or flex-start without autoscale",
    "`machineType: a4x-highgpu-4g` with `capacity: spot`",
);
pub(crate) const NO_AUTOSCALER: Code = code(
    "RK433",
    Warning,
    "an autoscaled EKS node group without `aws.autoscaler`: EKS runs no node autoscaler, so the group stays at its starting size",
    "`autoscale: {min: 0, max: 1}`, no `autoscaler`",
);
pub(crate) const TAINT_BLOCKS_DEVICE_PLUGIN: Code = code(
    "RK434",
    Error,
    "a taint on an AmazonLinux2023 GPU node group that eksctl's NVIDIA device plugin does not tolerate: its nodes never advertise nvidia.com/gpu",
    "the guide's `ray.io/node-type=worker:NoSchedule`",
);
pub(crate) const AUTOSCALER_OTHER_MINOR: Code = code(
    "RK437",
    Warning,
    "the pinned Cluster Autoscaler chart runs a CA of another Kubernetes minor than the EKS cluster's: the autoscaler simulates its own minor's scheduler",
    "`kubernetesVersion: \"1.34\"` with `autoscaler: {version: \"9.59.0\"}` (CA 1.35.0)",
);
pub(crate) const AUTOSCALER_RELEASE_UNKNOWN: Code = code(
    "RK438",
    Error,
    "`aws.autoscaler` pins no chart version, and the cluster's Kubernetes minor (which picks the release) is not given or not known",
    "`autoscaler: {}` without `kubernetesVersion`",
);
pub(crate) const COUNT_WITH_AUTOSCALE: Code = code(
    "RK442",
    Warning,
    "an ACK node pool gives both `count` and `autoscale`: with auto scaling, ACK sizes the pool and `count` is not sent",
    "`count: 1, autoscale: {min: 0, max: 1}`",
);
pub(crate) const VSWITCH_OUTSIDE_VPC: Code = code(
    "RK444",
    Error,
    "the vSwitch CIDR is not inside the VPC CIDR",
    "VPC `192.168.0.0/16`, vSwitch `10.0.0.0/24`",
);
pub(crate) const CIDR_OVERLAP: Code = code(
    "RK445",
    Error,
    "the cluster's pod or service CIDR overlaps the VPC or the other",
    "`containerCidr: 192.168.0.0/16` in a `192.168.0.0/16` VPC",
);
pub(crate) const TAINT_WITHOUT_VALUE: Code = code(
    "RK450",
    Error,
    "a node pool taint without a value, where the cloud CLI takes only key=value:Effect (AKS, GKE)",
    "`{key: sku, effect: NoSchedule}`",
);
pub(crate) const NO_SYSTEM_POOL: Code = code(
    "RK451",
    Error,
    "azure.nodePools needs a System pool: the cluster is created with it",
    "two User pools only",
);
pub(crate) const AUTOSCALE_RANGE: Code = code(
    "RK452",
    Error,
    "a node pool's autoscale min is larger than its max, or its count lies outside the range",
    "`autoscale: {min: 5, max: 4}`",
);
pub(crate) const IDENTITY_WITHOUT_PROVIDER_IDENTITY: Code = code(
    "RK453",
    Error,
    "serviceAccount.workloadIdentity needs the provider's identity (azure.identity, gcp.identity): nothing else sets the annotation",
    "`serviceAccount: {workloadIdentity: true}`, no `azure.identity`",
);
pub(crate) const IDENTITY_WITHOUT_SERVICE_ACCOUNT: Code = code(
    "RK454",
    Warning,
    "the provider section's identity without a serviceAccount: nothing in the cluster uses it",
    "`identity` set, `serviceAccount` missing",
);
pub(crate) const NO_DEVICE_PLUGIN: Code = code(
    "RK460",
    Warning,
    "operators.nvidia.install is none on AKS GPU pools: AKS installs the driver only, so nothing advertises nvidia.com/gpu",
    "seed 004's \"nothing else to do\"",
);
pub(crate) const SECOND_DEVICE_PLUGIN: Code = code(
    "RK461",
    Error,
    "operators.nvidia installs a device plugin where the cloud or the node image already runs one, or the GPU Operator off AKS",
    "`install: devicePlugin` on GKE",
);
pub(crate) const PROVISIONING_CLASS_UNSUPPORTED: Code = code(
    "RK470",
    Error,
    "a ProvisioningRequest class the cluster's autoscaler does not serve: the check never becomes Ready",
    "`queued-provisioning.gke.io` on EKS; any class on ACK",
);
pub(crate) const PROVISIONING_CLASS_UNDOCUMENTED: Code = code(
    "RK471",
    Warning,
    "a ProvisioningRequest class the provider does not document for its managed autoscaler",
    "`best-effort-atomic-scale-up.autoscaling.x-k8s.io` on GKE",
);
pub(crate) const PROVISIONING_NEEDS_AUTOSCALER: Code = code(
    "RK472",
    Error,
    "a ProvisioningRequest check on EKS without a Cluster Autoscaler that serves the v1 API (aws.autoscaler; a pinned chart 9.45.0 or later)",
    "`admissionChecks` with no `aws.autoscaler`",
);
pub(crate) const QUEUED_POOL_WITHOUT_CHECK: Code = code(
    "RK473",
    Error,
    "a GKE queued-provisioning pool backs a flavor that no queued-provisioning.gke.io check covers: its nodes come only through ProvisioningRequests, so pods wait for ever",
    "`queuedProvisioning: true`, the flavor's queue without `admissionChecks`",
);
pub(crate) const QUEUED_CLASS_WITHOUT_QUEUED_POOL: Code = code(
    "RK474",
    Error,
    "a queued-provisioning.gke.io check covers a flavor with no queued-provisioning pool behind it: GKE serves the class only from such pools",
    "the check on a flavor of an ordinary autoscaled pool",
);
pub(crate) const QUEUED_POOL_SHAPE: Code = code(
    "RK475",
    Error,
    "a GKE queued-provisioning pool needs autoscale with min 0 and no count: GKE adds its nodes only for ProvisioningRequests",
    "`queuedProvisioning: true, count: 2`",
);
pub(crate) const GPU_MONITORING_OFF_AKS: Code = code(
    "RK476",
    Error,
    "`monitoring.gpuMetrics: aksGpuMonitoring` is the AKS AI runtime's chart: it reads the AKS host's DCGM exporter and runs only on AKS",
    "`gpuMetrics: aksGpuMonitoring` in a GKE profile",
);

// ---- `raykueue simulate` scenarios (`simulate::scenario`)
pub(crate) const UNKNOWN_QUEUE: Code = code(
    "RK601",
    Error,
    "a scenario workload's queue names no LocalQueue of the profile",
    "`queue: team-c` → did you mean `team-a`?",
);
pub(crate) const UNKNOWN_PRIORITY_CLASS: Code = code(
    "RK602",
    Error,
    "a scenario workload's priorityClass names no WorkloadPriorityClass of the profile",
    "`priorityClass: hihg`",
);
pub(crate) const UNKNOWN_FROM: Code = code(
    "RK603",
    Error,
    "a scenario workload's `from` names no workload of the profile",
    "`from: llm-trainin` → did you mean `llm-training`?",
);
pub(crate) const SCENARIO_DUPLICATE_WORKLOAD: Code = code(
    "RK604",
    Error,
    "two scenario workloads, or two pod sets of one workload, share a name",
    "two submissions named `a`",
);
pub(crate) const PODS_OR_FROM: Code = code(
    "RK605",
    Error,
    "a scenario workload needs exactly one of `podSets` and `from`",
    "neither given",
);
pub(crate) const PRIORITY_TWICE: Code = code(
    "RK606",
    Error,
    "a scenario workload gives both `priority` and `priorityClass`",
    "`priority: 5` with `priorityClass: high`",
);

// ---- Fleets: a MultiKueue manager and its workers (`checks::fleet`)
pub(crate) const FLEET_MEMBER_UNREADABLE: Code = code(
    "RK700",
    Error,
    "a fleet member's profile cannot be found or read",
    "`workers: [{name: gke-west, profile: team-gke.yaml}]` with no such file beside the fleet",
);
pub(crate) const FLEET_NAMES: Code = code(
    "RK701",
    Error,
    "two fleet workers share a name, or a worker is named `manager` or `fleet` (the bundle's own folders)",
    "two workers named `east`",
);
pub(crate) const MANAGER_IS_WORKER: Code = code(
    "RK702",
    Error,
    "the manager is also one of its workers, or two workers are one cluster (same profile file, or same cloud cluster)",
    "manager and worker both `team`",
);
pub(crate) const INCREMENTAL_STEP: Code = code(
    "RK703",
    Error,
    "`multiKueue.stepSize` without the Incremental dispatcher (Kueue refuses the Configuration)",
    "`multiKueue: {stepSize: 2}`",
);
pub(crate) const WORKER_MISSING_QUEUE: Code = code(
    "RK704",
    Error,
    "a worker has no LocalQueue (same namespace and name) for a manager LocalQueue: jobs dispatched there are never admitted",
    "the manager serves `ray/team-c`, worker `gke-west` does not",
);
pub(crate) const WORKER_QUEUE_SELECTOR: Code = code(
    "RK705",
    Error,
    "the worker ClusterQueue behind a mirrored LocalQueue does not select its namespace",
    "`namespaceSelector: {matchLabels: {team: a}}` on the worker's queue",
);
pub(crate) const WORKER_UNCOVERED_RESOURCE: Code = code(
    "RK706",
    Error,
    "a manager workload requests a resource the worker's ClusterQueue does not cover",
    "a GPU job dispatched to a worker queue covering cpu and memory only",
);
pub(crate) const FITS_SOME_WORKERS: Code = code(
    "RK707",
    Warning,
    "a manager workload fits some workers but not all: it only ever runs on those",
    "8 GPUs per pod on a fleet with one 8-GPU worker",
);
pub(crate) const FITS_NO_WORKER: Code = code(
    "RK708",
    Error,
    "a manager workload fits no worker: MultiKueue dispatches it and no worker ever admits it",
    "16 GPUs per pod",
);
pub(crate) const MANAGER_QUOTA: Code = code(
    "RK709",
    Warning,
    "a manager ClusterQueue's quota is out of line with its workers' (more than they hold together, or less than the largest of them)",
    "`nominalQuota: \"64\"` of GPUs over workers with 16",
);
pub(crate) const WORKER_INTEGRATION: Code = code(
    "RK710",
    Error,
    "a worker lacks an integration the manager uses: its Kueue does not enable the kind, or it has no KubeRay operator (no Ray CRDs), so MultiKueue cannot connect or the job is never admitted",
    "manager queues RayServices, worker frameworks `[ray.io/rayjob]`",
);
pub(crate) const WORKER_CRDS: Code = code(
    "RK711",
    Warning,
    "the manager enables an integration whose CRDs raykueue does not install on the workers: MultiKueue's watch fails and the worker is not connected until they are installed",
    "`frameworks: [jobset.x-k8s.io/jobset]` on the manager",
);
pub(crate) const MULTIKUEUE_ELASTIC: Code = code(
    "RK712",
    Error,
    "an elastic (autoscaling) Ray workload on the manager: Kueue 0.19 does not run it through MultiKueue",
    "`elastic: true` on a manager RayCluster",
);
pub(crate) const MANAGER_PLACEMENT: Code = code(
    "RK713",
    Warning,
    "a manager workload carries node selectors or tolerations: MultiKueue copies them to every worker, whatever its cloud",
    "`nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}` on a manager RayJob",
);
pub(crate) const VERSION_SKEW: Code = code(
    "RK714",
    Warning,
    "a fleet member runs another Kueue or KubeRay version than the manager",
    "manager Kueue 0.19.2, worker 0.18.0",
);
pub(crate) const KUBERAY_FOR_MULTIKUEUE: Code = code(
    "RK715",
    Error,
    "a member's KubeRay cannot serve MultiKueue: no KubeRay on the manager (RayJobs cannot be created), or older than 1.3.1 (1.6.0 for RayServices)",
    "`operators.kuberay.version: 1.2.2`",
);
pub(crate) const MULTIKUEUE_GATE: Code = code(
    "RK716",
    Error,
    "the manager switches Kueue's `MultiKueue` feature gate off",
    "`featureGates: {MultiKueue: false}`",
);
pub(crate) const WORKER_NAME_CLASH: Code = code(
    "RK717",
    Warning,
    "a worker's own workload has the name and namespace of a manager workload: MultiKueue never replaces an object it did not create",
    "`aurora-finetune` in namespace `ray` on the manager and in the worker's profile",
);

// ---- Internal: raykueue's own output (`output::validate`)
pub(crate) const INTERNAL: Code = code(
    "RK900",
    Error,
    "internal: raykueue generated an invalid object (a bug in raykueue)",
    "(report it)",
);
pub(crate) const GENERATED_SCHEMA: Code = code(
    "RK901",
    Error,
    "internal: a generated object breaks its schema or has an unknown field",
    "(report it)",
);
pub(crate) const GENERATED_RULE: Code = code(
    "RK902",
    Error,
    "internal: a generated object breaks a CEL rule",
    "(report it)",
);
pub(crate) const GENERATED_WEBHOOK: Code = code(
    "RK903",
    Error,
    "internal: a generated object breaks a Kueue admission webhook rule",
    "(report it)",
);
pub(crate) const GENERATED_NOT_EVALUATED: Code = code(
    "RK904",
    Error,
    "internal: a rule on a generated object could not be evaluated",
    "(report it)",
);
pub(crate) const GENERATED_UNPLACED: Code = code(
    "RK905",
    Error,
    "internal: a generated object could not be placed or checked",
    "(report it)",
);
pub(crate) const GENERATED_KUBERAY_REFUSES: Code = code(
    "RK906",
    Error,
    "raykueue wrote an object the KubeRay controller would refuse (a profile value passed through, or a bug)",
    "`rayStartParams: {redis-username: ray}` in the profile",
);

/// Every code, in code order (the rules reference and the tests read this).
// ---- Live state: a cluster snapshot (`input::state`, `live`)
pub(crate) const STATE_VERSION: Code = code(
    "RK800",
    Error,
    "a Kueue object of the live state is not `kueue.x-k8s.io/v1beta2`, the version of Kueue v0.19.2 raykueue reads",
    "`apiVersion: kueue.x-k8s.io/v1beta1` on a ClusterQueue from an older Kueue",
);
pub(crate) const STATE_EMPTY: Code = code(
    "RK801",
    Error,
    "the live state holds no Kueue queue object or Workload",
    "`kubectl get pods -o yaml` given as `--state`",
);
pub(crate) const STATE_DUPLICATE: Code = code(
    "RK802",
    Error,
    "one object (kind, namespace, name) is twice in the live state",
    "the same snapshot file given twice in a folder",
);
pub(crate) const DRIFT_MISSING: Code = code(
    "RK810",
    Error,
    "the profile defines a queue object the cluster does not have",
    "ClusterQueue `team-a-cq` in the profile, not in `kubectl get clusterqueues`",
);
pub(crate) const DRIFT_EXTRA: Code = code(
    "RK811",
    Error,
    "the cluster has a queue object the profile does not define",
    "a LocalQueue created by hand with `kubectl apply`",
);
pub(crate) const DRIFT_CHANGED: Code = code(
    "RK812",
    Error,
    "a field of a live queue object differs from what the profile compiles to",
    "`nominalQuota: 8` in the cluster, `16` in the profile",
);
pub(crate) const EXPLAIN_UNKNOWN_WORKLOAD: Code = code(
    "RK820",
    Error,
    "`explain` names a Workload the live state does not hold",
    "`raykueue explain ... job-x` with no Workload `job-x` in the snapshot",
);
pub(crate) const LIVE_UNKNOWN_QUEUE: Code = code(
    "RK821",
    Warning,
    "a live Workload's LocalQueue is not one the profile defines in its namespace: it is left out",
    "`spec.queueName: scratch` with no LocalQueue `scratch` in the profile",
);

pub(crate) const SCENARIO_LIVE_NAME_CLASH: Code = code(
    "RK822",
    Error,
    "a scenario submitted on top of a live snapshot names a Workload the snapshot already holds",
    "`name: job-1` in the scenario and Workload `ray/job-1` in `--state`",
);

pub const ALL: &[Code] = &[
    USAGE,
    YAML_SYNTAX,
    NOT_UTF8,
    DUPLICATE_KEY,
    INPUT_TOO_LARGE,
    YAML_TAG,
    EMPTY_INPUT,
    WRONG_FILE_KIND,
    UNKNOWN_KEY,
    WRONG_TYPE,
    INVALID_VALUE,
    MISSING_KEY,
    EXTENDS_NOT_FOUND,
    EXTENDS_CYCLE,
    OVERLAY_CLASH,
    DEPRECATED_FIELD,
    MANIFEST_SCHEMA,
    MANIFEST_DEFAULTED,
    MANIFEST_NULL_DROPPED,
    MANIFEST_RULE,
    MANIFEST_WEBHOOK,
    MANIFEST_NOT_EVALUATED,
    MANIFEST_NO_SCHEMA,
    MANIFEST_NOT_OBJECT,
    MANIFEST_EMPTY,
    UNMANAGED,
    NO_WORKLOAD,
    KUBERAY_REFUSES,
    LOCAL_QUEUE_TARGET,
    FLAVOR_NOT_FOUND,
    QUEUE_MODE,
    LIMIT_WITHOUT_COHORT,
    LENDING_OVER_NOMINAL,
    COVERED_RESOURCES,
    DUPLICATE_NAME,
    GROUP_OVERLAP,
    PRIORITY_NOT_FOUND,
    TOLERATION_SHAPE,
    FUNGIBILITY,
    BORROW_WITHIN_COHORT,
    TAINT_DUPLICATE,
    UNUSED_FLAVOR,
    UNREACHABLE_CLUSTER_QUEUE,
    QUEUE_TOTALS,
    FAIR_SHARING_WEIGHT,
    QUEUE_NOT_FOUND,
    UNQUEUED,
    TOO_MANY_GROUPS,
    HEAD_GROUP_NAME,
    DUPLICATE_GROUP,
    DUPLICATE_WORKLOAD,
    ELASTIC_GATE_OFF,
    WRONG_KIND_FIELD,
    ENTRYPOINT_REQUIRED,
    SERVE_REQUIRED,
    TEMPLATE_REQUIRED,
    CHART_SOURCE,
    FRAMEWORK_MISSING,
    SCRIPT_UNREADABLE,
    SCRIPT_KEY_CLASH,
    SCRIPTS_TOO_LARGE,
    NO_IMAGE,
    NO_RAY_VERSION,
    MOUNT_PATH,
    SERVE_APPS,
    NO_REQUESTS,
    POD_BY_POD,
    OVER_QUOTA,
    NOT_COVERED,
    FLAVOR_LABELS_UNMATCHED,
    TAINT_NOT_TOLERATED,
    NO_POOL_MATCHES,
    INTEGRATION_CLASH,
    CANNOT_RECLAIM,
    POD_WEBHOOK_EVERYWHERE,
    MANAGED_NAMESPACES,
    KUEUE_CONFIGURATION,
    DANGLING_SCRIPT,
    HEAD_GPU_PARAMS,
    TOPOLOGY_LEVELS,
    TOPOLOGY_ORDER,
    TOPOLOGY_NOT_FOUND,
    TOPOLOGY_FLAVOR_LABELS,
    TOPOLOGY_UNSERVED,
    TOPOLOGY_ELASTIC,
    TOPOLOGY_GATE_OFF,
    TAS_TAINT_NOT_TOLERATED,
    PROVISIONING_ON_MANAGER,
    PROVISIONING_TAINT_NOT_TOLERATED,
    ADMISSION_CHECK_NOT_FOUND,
    ON_FLAVORS,
    ADMISSION_CHECK_UNUSED,
    MANAGED_RESOURCES_UNREQUESTED,
    PODS_READY_TIMEOUT,
    TAS_FROM_ZERO,
    WEIGHT_WITHOUT_FAIR_SHARING,
    COHORT_PARENT_UNKNOWN,
    COHORT_UNDECLARED,
    COHORT_CYCLE,
    COHORT_OF_ONE,
    COHORT_LIMIT_WITHOUT_PARENT,
    COHORT_QUOTA_UNUSABLE,
    BORROW_WITHIN_COHORT_FAIR_SHARING,
    COHORT_WITHOUT_QUEUES,
    FAIR_SHARING_ALONE,
    QUEUE_GETS_NOTHING,
    UNKNOWN_INSTANCE_TYPE,
    QUOTA_BEYOND_POOLS,
    POD_FITS_NO_NODE,
    GROUP_BEYOND_POOLS,
    RETIRED_INSTANCE,
    TOPOLOGY_LABEL_NOT_CARRIED,
    TOPOLOGY_LABEL_SOME_POOLS,
    TOPOLOGY_DOMAIN_TOO_SMALL,
    PROVISIONING_FIXED_POOLS,
    NAME_TOO_LONG,
    REPLICAS_RANGE,
    IMAGE_NOT_PINNED,
    GPU_ON_CPU_IMAGE,
    RAY_VERSION_MISMATCH,
    RAY_START_LABELS,
    TWO_PROVIDERS,
    POOL_NAME_TWICE,
    SYSTEM_POOL_EMPTY,
    POOL_SIZE_MISSING,
    WORKLOAD_IDENTITY_OIDC,
    SERVICE_ACCOUNT_IDENTITY,
    UNKNOWN_LOCATION,
    STORAGE_WITHOUT_IDENTITY,
    KUBERNETES_TOO_OLD,
    FIRST_POOL_NAME,
    ACCELERATOR_MISMATCH,
    RESERVATION_ONLY,
    CAPACITY_UNUSABLE,
    NO_AUTOSCALER,
    TAINT_BLOCKS_DEVICE_PLUGIN,
    AUTOSCALER_OTHER_MINOR,
    AUTOSCALER_RELEASE_UNKNOWN,
    COUNT_WITH_AUTOSCALE,
    VSWITCH_OUTSIDE_VPC,
    CIDR_OVERLAP,
    TAINT_WITHOUT_VALUE,
    NO_SYSTEM_POOL,
    AUTOSCALE_RANGE,
    IDENTITY_WITHOUT_PROVIDER_IDENTITY,
    IDENTITY_WITHOUT_SERVICE_ACCOUNT,
    NO_DEVICE_PLUGIN,
    SECOND_DEVICE_PLUGIN,
    PROVISIONING_CLASS_UNSUPPORTED,
    PROVISIONING_CLASS_UNDOCUMENTED,
    PROVISIONING_NEEDS_AUTOSCALER,
    QUEUED_POOL_WITHOUT_CHECK,
    QUEUED_CLASS_WITHOUT_QUEUED_POOL,
    QUEUED_POOL_SHAPE,
    GPU_MONITORING_OFF_AKS,
    UNKNOWN_QUEUE,
    UNKNOWN_PRIORITY_CLASS,
    UNKNOWN_FROM,
    SCENARIO_DUPLICATE_WORKLOAD,
    PODS_OR_FROM,
    PRIORITY_TWICE,
    FLEET_MEMBER_UNREADABLE,
    FLEET_NAMES,
    MANAGER_IS_WORKER,
    INCREMENTAL_STEP,
    WORKER_MISSING_QUEUE,
    WORKER_QUEUE_SELECTOR,
    WORKER_UNCOVERED_RESOURCE,
    FITS_SOME_WORKERS,
    FITS_NO_WORKER,
    MANAGER_QUOTA,
    WORKER_INTEGRATION,
    WORKER_CRDS,
    MULTIKUEUE_ELASTIC,
    MANAGER_PLACEMENT,
    VERSION_SKEW,
    KUBERAY_FOR_MULTIKUEUE,
    MULTIKUEUE_GATE,
    WORKER_NAME_CLASH,
    STATE_VERSION,
    STATE_EMPTY,
    STATE_DUPLICATE,
    DRIFT_MISSING,
    DRIFT_EXTRA,
    DRIFT_CHANGED,
    EXPLAIN_UNKNOWN_WORKLOAD,
    LIVE_UNKNOWN_QUEUE,
    SCENARIO_LIVE_NAME_CLASH,
    INTERNAL,
    GENERATED_SCHEMA,
    GENERATED_RULE,
    GENERATED_WEBHOOK,
    GENERATED_NOT_EVALUATED,
    GENERATED_UNPLACED,
    GENERATED_KUBERAY_REFUSES,
];

/// Codes no longer reported, and the code that took each one's place (one check on every
/// cloud where there was one per cloud).
pub const RETIRED: &[(&str, &Code)] = &[
    ("RK420", &POOL_NAME_TWICE),
    ("RK423", &AUTOSCALE_RANGE),
    ("RK424", &TAINT_WITHOUT_VALUE),
    ("RK430", &POOL_NAME_TWICE),
    ("RK431", &POOL_SIZE_MISSING),
    ("RK432", &AUTOSCALE_RANGE),
    ("RK435", &IDENTITY_WITHOUT_SERVICE_ACCOUNT),
    ("RK436", &KUBERNETES_TOO_OLD),
    ("RK440", &POOL_NAME_TWICE),
    ("RK441", &POOL_SIZE_MISSING),
    ("RK443", &IDENTITY_WITHOUT_SERVICE_ACCOUNT),
    ("RK446", &KUBERNETES_TOO_OLD),
    ("RK447", &AUTOSCALE_RANGE),
];
