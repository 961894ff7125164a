//! Google Cloud (GKE): the `gcp:` profile section, what GKE puts on its nodes, where the
//! operators run, Workload Identity Federation, and the values of the `gcloud` scripts
//! (`templates/infra/gcp/`). The commands follow the KubeRay GKE guide (ray-project/ray
//! `doc/source/cluster/kubernetes/user-guides/gcp-gke-gpu-cluster.md`; the choices and their
//! sources for users in `docs/providers.md`).
//!
//! What a pool's nodes carry: the pool's own `labels`, plus what GKE sets itself —
//! `cloud.google.com/gke-nodepool` (pool name), `node.kubernetes.io/instance-type` (machine
//! type), `kubernetes.io/os=linux`, `topology.kubernetes.io/zone`, and on GPU nodes
//! `cloud.google.com/gke-accelerator=<accelerator type>` (GKE's GPU label, also the cluster
//! autoscaler's: kubernetes/autoscaler `cloudprovider/gce/gce_cloud_provider.go` `GPULabel`)
//! and `cloud.google.com/gke-gpu-driver-version` when GKE installs the driver.
//! Taints: the pool's `taints`, and on GPU nodes `nvidia.com/gpu=present:NoSchedule`, which
//! GKE adds itself when the cluster also has a pool without GPUs (always here: the create-time
//! pool is the CPU pool). GKE's ExtendedResourceToleration admission plugin gives every pod
//! that requests `nvidia.com/gpu` the matching toleration, so GPU workloads need none of their
//! own, and a flavor needs none to be backed by the GPU pool, unless Kueue places or
//! provisions before the pod is created: a topology-aware flavor (RK196) and one behind a
//! ProvisioningRequest check (RK198) carry the toleration.
//!
//! The first pool is created with the cluster (`gcloud container clusters create` has no
//! pool-name flag — gcloud 528's static completion tree — and GKE's "About node pools" page
//! calls it the default node pool; it is named `default-pool`, rule RK421); the operators run
//! there, off the GPU nodes, through a `cloud.google.com/gke-nodepool` node selector (the
//! label GKE records a node's pool in: Apigee hybrid's "Configure dedicated node pools" docs
//! select pools by it).
//!
//! Workload Identity Federation: the Kubernetes service account is annotated
//! `iam.gke.io/gcp-service-account: GSA@PROJECT.iam.gserviceaccount.com`, and the Google
//! service account grants `roles/iam.workloadIdentityUser` to
//! `serviceAccount:PROJECT.svc.id.goog[NS/KSA]` (KEDA's "GCP Workload Identity" docs; Google's
//! "Authenticate to Google Cloud APIs from GKE workloads").

pub(crate) mod catalogue;
pub(crate) mod section;

pub(crate) use section::*;

mod checks;

use super::{
    CLASS_ATOMIC, CLASS_CHECK_CAPACITY, CLASS_GKE_QUEUED, Carried, Cloud, Facts, ManagedFlavour,
    NodeGroup, Placement, PrometheusFacts, Provisioning, Words, taint_word,
};
use crate::base::diagnostic::Findings;
use crate::profile::{Collector, LabelValue, Profile, QualifiedName, Taint, TaintEffect};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

const WORDS: Words = Words {
    service: "GKE",
    machine_field: "machineType",
    machine: "machine type",
    pool: "node pool",
    pool_short: "pool",
    cli: "gcloud",
    default_count: Some(GCLOUD_DEFAULT_NODE_COUNT),
    taint_refusal: Some("gcloud writes --node-taints only as key=value:Effect"),
    count_within_autoscale: true,
    version_example: "\"1.35\"",
    identity_missing: (
        "its iam.gke.io/gcp-service-account annotation would stay a placeholder",
        "add gcp.identity (serviceAccount: the Google service account up.sh creates and binds), or set workloadIdentity: false",
    ),
    identity_unused: (
        "the Google service account has no Kubernetes service account to bind: up.sh creates it, but no pod can act as it",
        "add serviceAccount: {name: ..., workloadIdentity: true}",
    ),
    gpu_example: "machineType g2-standard-4",
    pool_label: NODEPOOL_LABEL,
    operators_pool: "the cluster's first pool",
    gpu_label: ("cloud.google.com/gke-accelerator", None),
};

/// Label GKE puts on every node with its pool's name.
pub(crate) const NODEPOOL_LABEL: &str = "cloud.google.com/gke-nodepool";
/// Label GKE puts on GPU nodes with the accelerator type.
pub(crate) const ACCELERATOR_LABEL: &str = "cloud.google.com/gke-accelerator";
/// The service-account annotation that links it to a Google service account (Workload
/// Identity Federation for GKE).
pub(crate) const GSA_ANNOTATION: &str = "iam.gke.io/gcp-service-account";
/// The name GKE gives the pool `clusters create` makes.
pub(crate) const DEFAULT_POOL: &str = "default-pool";
/// The label and taint GKE puts on the nodes of a queued-provisioning pool
/// (`cloud.google.com/gke-queued=true:NoSchedule`): pods and the flavor must tolerate it.
/// Sources: GoogleCloudPlatform/cluster-toolkit@0a497447 `docs/gke-consumption-options.md`
/// ("toleration for `cloud.google.com/gke-queued:NoSchedule`"); AI-Hypercomputer/xpk
/// `src/xpk/core/capacity.py` (`get_capacity_node_selectors_from_capacity_type`: flex-start
/// pods select `cloud.google.com/gke-queued: "true"`).
pub(crate) const QUEUED_KEY: &str = "cloud.google.com/gke-queued";
/// Compute Engine's physical-placement labels on GKE nodes, broadest first.
pub(crate) const TOPOLOGY_BLOCK: &str = "cloud.google.com/gce-topology-block";
pub(crate) const TOPOLOGY_SUBBLOCK: &str = "cloud.google.com/gce-topology-subblock";
pub(crate) const TOPOLOGY_HOST: &str = "cloud.google.com/gce-topology-host";
/// The placement labels' breadth among Topology levels (`cloud::placement_rank`): block ⊃
/// sub-block ⊃ host (Compute Engine's "view instance topology" page), all below the zone.
pub(crate) const PLACEMENT_LEVELS: &[(&str, u8)] = &[
    (TOPOLOGY_BLOCK, 2),
    (TOPOLOGY_SUBBLOCK, 3),
    (TOPOLOGY_HOST, 4),
];

/// Machine-type families whose VMs carry the `gce-topology-*` labels without a placement
/// policy: A4X, A4 and A3 Ultra. Compute Engine reports a host topology for them
/// (cloud.google.com/compute/docs/instances/view-instance-topology), and Google's Cluster
/// Toolkit says "A4 / A3 Ultra: Topology labels and compact placement are applied automatically
/// by default for On-Demand nodes", while A3 Mega, A3 High and other GPU VMs need a compact
/// placement policy to carry them (GoogleCloudPlatform/cluster-toolkit@0a497447
/// `docs/gke-consumption-options.md`). raykueue's GKE pools set no placement policy, so those
/// are not listed. Each of these VMs fills its physical host, so a host is one node.
const TOPOLOGY_FAMILIES: &[&str] = &["a4x-", "a4-", "a3-ultragpu-"];

impl Gcp {
    /// The Google service account's e-mail, when the project is pinned.
    pub(crate) fn gsa_email(&self) -> Option<String> {
        let id = self.identity.as_ref()?;
        let project = self.project.as_ref()?;
        Some(format!(
            "{}@{project}.iam.gserviceaccount.com",
            id.service_account
        ))
    }
}

/// Google Cloud Managed Service for Prometheus
/// (https://cloud.google.com/stackdriver/docs/managed-prometheus): managed collection on GKE
/// takes `monitoring.googleapis.com/v1` PodMonitoring and ClusterPodMonitoring objects, and
/// rules as `Rules`/`ClusterRules`
/// (https://cloud.google.com/stackdriver/docs/managed-prometheus/setup-managed).
/// Default: the Prometheus Operator stack, as on every cloud (`docs/monitoring.md` says why).
const PROMETHEUS: PrometheusFacts = PrometheusFacts {
    managed: "Google Cloud Managed Service for Prometheus",
    default_collector: Collector::PrometheusOperator,
    flavour: ManagedFlavour::Google,
};

/// The facts of the cloud whatever the section says.
const FACTS: Facts = Facts {
    section: "gcp",
    words: &WORDS,
    prometheus: &PROMETHEUS,
    allocatable: catalogue::allocatable,
    catalogue: catalogue::MACHINE_TYPES,
    unknown_instance_hint,
    cloud_label_hint,
};

impl Cloud for Gcp {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn cluster_key(&self) -> String {
        let project = self.project.as_deref().map_or_else(
            || "gcloud's current project".to_owned(),
            |p| format!("project `{p}`"),
        );
        format!(
            "GKE cluster `{}` in `{}` of {project}",
            self.cluster.name, self.zone
        )
    }

    fn kubernetes_version(&self) -> Option<&str> {
        self.cluster.kubernetes_version.as_deref()
    }

    fn has_identity(&self) -> bool {
        self.identity.is_some()
    }

    /// GKE runs its managed `nvidia-gpu-device-plugin` DaemonSet on pools with an accelerator;
    /// it tolerates every NoSchedule taint (GoogleCloudPlatform/container-engine-accelerators
    /// `cmd/nvidia_gpu/device-plugin.yaml`, a reference copy of it).
    fn device_plugin(&self) -> Option<&'static str> {
        Some("its managed nvidia-gpu-device-plugin DaemonSet on every pool with an accelerator")
    }

    fn annotates_identity(&self) -> bool {
        true
    }

    fn own_checks(&self, p: &Profile, out: &mut Findings) {
        checks::run(self, p, out);
    }

    fn node_groups(&self) -> Vec<NodeGroup<'_>> {
        let has_cpu_pool = self.node_pools.iter().any(|n| n.gpus().is_none());
        self.node_pools
            .iter()
            .enumerate()
            .map(|(index, np)| {
                let mut labels: BTreeMap<String, String> = np
                    .labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let identity = crate::cloud::node_identity_labels(np.machine_type.as_str());
                for (k, v) in identity.into_iter().chain([
                    (NODEPOOL_LABEL, np.name.as_str()),
                    (crate::cloud::ZONE_LABEL, self.zone.as_str()),
                ]) {
                    labels.insert(k.into(), v.into());
                }
                let gpus = np.gpus();
                let mut taints = np.taints.clone();
                if let Some((kind, _)) = gpus {
                    labels.insert(ACCELERATOR_LABEL.into(), kind.into());
                    let managed = np
                        .accelerator
                        .as_ref()
                        .is_none_or(|a| a.gpu_driver_version != GpuDriverVersion::Disabled);
                    if managed {
                        labels.insert(
                            "cloud.google.com/gke-gpu-driver-version".into(),
                            np.accelerator
                                .as_ref()
                                .map_or("default", |a| a.gpu_driver_version.as_str())
                                .into(),
                        );
                    }
                    // GKE taints GPU nodes when the cluster has a non-GPU pool too.
                    let gpu_taint = Taint {
                        key: QualifiedName(super::GPU_RESOURCE.into()),
                        value: Some(LabelValue("present".into())),
                        effect: TaintEffect::NoSchedule,
                    };
                    if has_cpu_pool && !taints.contains(&gpu_taint) {
                        taints.push(gpu_taint);
                    }
                }
                if np.queued_provisioning {
                    labels.insert(QUEUED_KEY.into(), "true".into());
                    let queued = Taint {
                        key: QualifiedName(QUEUED_KEY.into()),
                        value: Some(LabelValue("true".into())),
                        effect: TaintEffect::NoSchedule,
                    };
                    if !taints.contains(&queued) {
                        taints.push(queued);
                    }
                }
                // The catalogue's entry, with the GPUs the pool attaches to an N1-style type.
                let instance = catalogue::machine_type(&np.machine_type);
                NodeGroup {
                    index,
                    name: np.name.as_str(),
                    machine: np.machine_type.as_str(),
                    instance,
                    gpu: gpus.is_some_and(|(_, n)| n > 0),
                    size: np.size(),
                    count: np.count,
                    autoscale: np.autoscale.as_ref(),
                    pool_taints: &np.taints,
                    labels,
                    taints,
                    hosts_operators: index == 0,
                    mode: "-",
                    own_taints: np.taints.iter().map(taint_word).collect(),
                    own_labels: np.labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                }
            })
            .collect()
    }

    /// On the create-time pool (`default-pool`), when it has no GPUs: GPU nodes may scale to
    /// zero, and `helm --wait` would hang.
    fn operator_placement(&self) -> Option<Placement> {
        let first = self.node_pools.first()?;
        first.gpus().is_none().then(|| Placement {
            node_selector: vec![(NODEPOOL_LABEL.into(), first.name.to_string())],
            tolerations: Vec::new(),
        })
    }

    /// `iam.gke.io/gcp-service-account`: the e-mail when the project is pinned, else filled in
    /// by `up.sh`.
    fn identity_annotations(&self) -> Vec<(&'static str, Option<String>)> {
        if self.identity.is_none() {
            return Vec::new();
        }
        vec![(GSA_ANNOTATION, self.gsa_email())]
    }

    fn pool_fields(&self, group: &NodeGroup<'_>, f: &mut BTreeMap<&'static str, String>) {
        if let Some(a) = self
            .node_pools
            .get(group.index)
            .and_then(|n| n.accelerator.as_ref())
        {
            f.insert(
                "accelerator",
                format!(
                    "type={},count={},gpu-driver-version={}",
                    a.kind,
                    a.count,
                    a.gpu_driver_version.as_str()
                ),
            );
        }
    }

    fn script_context(&self, p: &Profile) -> Value {
        serde_json::to_value(gcp_ctx(p, self)).unwrap_or_default()
    }

    fn topology_labels(&self, group: &NodeGroup<'_>) -> Vec<(&'static str, Carried)> {
        if !TOPOLOGY_FAMILIES
            .iter()
            .any(|f| group.machine.starts_with(f))
        {
            return Vec::new();
        }
        if self.queued_provisioning(group) {
            // Compact placement is not supported on queued-provisioning pools (same page):
            // whether their nodes carry the labels is not documented.
            let why = "GKE documents the gce-topology labels for on-demand A4, A4X and A3 Ultra nodes; on a queued-provisioning pool compact placement is not supported, and whether its nodes carry them is not documented";
            return vec![
                (TOPOLOGY_BLOCK, Carried::Uncertain(why)),
                (TOPOLOGY_SUBBLOCK, Carried::Uncertain(why)),
                (TOPOLOGY_HOST, Carried::Uncertain(why)),
            ];
        }
        vec![
            (TOPOLOGY_BLOCK, Carried::Varying),
            (TOPOLOGY_SUBBLOCK, Carried::Varying),
            (TOPOLOGY_HOST, Carried::PerNode),
        ]
    }

    /// GKE serves `queued-provisioning.gke.io` from queued-provisioning pools
    /// (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest: "you have to add the
    /// --flex-start and --enable-queued-provisioning flags when you create the node pool";
    /// Kueue's `site/content/en/docs/tasks/troubleshooting/troubleshooting_provreq.md` at
    /// v0.19.2: GKE 1.28.3-gke.1098000 or newer). Google documents no other class for its
    /// managed autoscaler.
    fn provisioning(&self, _p: &Profile, class: &str) -> Provisioning {
        match class {
            CLASS_GKE_QUEUED => Provisioning::Served(None),
            CLASS_ATOMIC | CLASS_CHECK_CAPACITY => Provisioning::Undocumented(format!(
                "Google documents only `{CLASS_GKE_QUEUED}` for GKE's managed cluster autoscaler (cloud.google.com/kubernetes-engine/docs/how-to/provisioningrequest); whether it serves `{class}` is not documented"
            )),
            _ => Provisioning::Refused(format!(
                "GKE's managed cluster autoscaler serves `{CLASS_GKE_QUEUED}` (flex-start with queued provisioning); `{class}` is no class it documents"
            )),
        }
    }

    fn queued_provisioning(&self, group: &NodeGroup<'_>) -> bool {
        self.node_pools
            .get(group.index)
            .is_some_and(|n| n.queued_provisioning)
    }
}

/// RK201's hint for GCP.
fn unknown_instance_hint(name: &str) -> String {
    let names = catalogue::MACHINE_TYPES.iter().map(|s| s.name);
    crate::base::diagnostic::did_you_mean(name, names).map_or_else(
        || {
            format!(
                "the catalogue has {}; check the name with `gcloud compute machine-types list`",
                catalogue::MACHINE_TYPES
                    .iter()
                    .map(|m| m.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        |s| format!("did you mean `{s}`?"),
    )
}

/// GKE labels GPU nodes `cloud.google.com/gke-accelerator=<type>`, and only GPU nodes: asked
/// when no pool carries the label at all.
fn cloud_label_hint(key: &str, value: &str, pools: &str) -> Option<String> {
    (key == ACCELERATOR_LABEL).then(|| format!(
        "GKE labels only GPU nodes `{ACCELERATOR_LABEL}`, with their accelerator type, and no pool has GPUs (pools: {pools}); add a pool with `accelerator: {{type: {value}}}` or a machine type that carries it"
    ))
}

// ---------------------------------------------------------------------------------------------
// Script values (`templates/infra/gcp/`)

#[derive(Serialize)]
struct GcpCtx {
    project: Option<String>,
    zone: String,
    cluster: String,
    kubernetes_version: Option<String>,
    workload_identity: bool,
    /// The pool created with the cluster.
    default_pool: Option<PoolCtx>,
    /// Pools added with `gcloud container node-pools create`, in profile order.
    pools: Vec<PoolCtx>,
    identity: Option<IdentityCtx>,
}

#[derive(Serialize)]
struct PoolCtx {
    name: String,
    machine_type: String,
    count: Option<u32>,
    min: Option<u32>,
    max: Option<u32>,
    /// `--accelerator`: `type=…,count=…,gpu-driver-version=…`.
    accelerator: Option<String>,
    /// `--node-taints`: comma-separated `key=value:Effect`.
    taints: Option<String>,
    /// `--node-labels`: comma-separated `key=value`.
    labels: Option<String>,
    gpu: bool,
    /// Flex-start with queued provisioning.
    queued: bool,
    /// Where the pool's VMs come from: `on-demand`, `spot` (`--spot`), `flex-start`
    /// (`--flex-start`, without queued provisioning), `reservation` (`--reservation`) or
    /// `any-reservation` (`--reservation-affinity any`).
    capacity: &'static str,
    /// `--reservation`: the reservation, `projects/P/reservations/N` when another project shares it.
    reservation: Option<String>,
}

#[derive(Serialize)]
struct IdentityCtx {
    service_account: String,
    roles: Vec<String>,
    /// `serviceAccount:PROJECT.svc.id.goog[NS/KSA]` is built in the script (it needs the
    /// project); these are its parts. `None` without a service account to bind.
    namespace: Option<String>,
    kubernetes_service_account: Option<String>,
}

fn gcp_ctx(p: &Profile, g: &Gcp) -> GcpCtx {
    let mut pools: Vec<PoolCtx> = g.node_pools.iter().map(pool).collect();
    let default_pool = (!pools.is_empty()).then(|| pools.remove(0));
    GcpCtx {
        project: g.project.as_ref().map(ToString::to_string),
        zone: g.zone.to_string(),
        cluster: g.cluster.name.to_string(),
        kubernetes_version: g
            .cluster
            .kubernetes_version
            .as_ref()
            .map(ToString::to_string),
        // An identity needs the workload pool: it turns it on.
        workload_identity: g.cluster.workload_identity || g.identity.is_some(),
        default_pool,
        pools,
        identity: g.identity.as_ref().map(|id| IdentityCtx {
            service_account: id.service_account.to_string(),
            roles: id.roles.iter().map(ToString::to_string).collect(),
            namespace: p.service_account.as_ref().map(|_| p.namespace.to_string()),
            kubernetes_service_account: p.service_account.as_ref().map(|sa| sa.name.to_string()),
        }),
    }
}

fn pool(n: &GkeNodePool) -> PoolCtx {
    let size = n.size();
    PoolCtx {
        name: n.name.to_string(),
        machine_type: n.machine_type.to_string(),
        // gcloud starts a pool at 3 nodes without `--num-nodes`, outside a smaller range:
        // the count is written then.
        count: n.count.or_else(|| {
            (size.autoscaled && size.initial != GCLOUD_DEFAULT_NODE_COUNT).then_some(size.initial)
        }),
        min: n.autoscale.as_ref().map(|s| s.min),
        max: n.autoscale.as_ref().map(|s| s.max),
        accelerator: n.accelerator.as_ref().map(|a| {
            format!(
                "type={},count={},gpu-driver-version={}",
                a.kind,
                a.count,
                a.gpu_driver_version.as_str()
            )
        }),
        taints: (!n.taints.is_empty()).then(|| {
            n.taints
                .iter()
                .map(taint_word)
                .collect::<Vec<_>>()
                .join(",")
        }),
        labels: (!n.labels.is_empty()).then(|| {
            n.labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(",")
        }),
        gpu: n.gpus().is_some(),
        queued: n.queued_provisioning,
        capacity: match &n.capacity {
            Capacity::OnDemand => "on-demand",
            Capacity::Spot => "spot",
            Capacity::FlexStart => "flex-start",
            Capacity::Reservation(r) if r.name.is_some() => "reservation",
            Capacity::Reservation(_) => "any-reservation",
        },
        reservation: match &n.capacity {
            Capacity::Reservation(r) => r.name.as_ref().map(|name| match &r.project {
                Some(project) => format!("projects/{project}/reservations/{name}"),
                None => name.to_string(),
            }),
            _ => None,
        },
    }
}
