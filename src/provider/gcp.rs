//! Google Cloud (GKE): the `gcp:` profile section, what GKE puts on its nodes, where the
//! operators run, Workload Identity Federation, and the values of the `gcloud` scripts
//! (`templates/infra/gcp/`). The commands follow the KubeRay GKE guide (ray-project/ray
//! `doc/source/cluster/kubernetes/user-guides/gcp-gke-gpu-cluster.md`; facts and sources in
//! `../shared/docs/CLOUDS.md` §2).
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
//! own, and a flavor needs none to be backed by the GPU pool.
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
//! `serviceAccount:PROJECT.svc.id.goog[NS/KSA]` (KEDA's "GCP Workload Identity" docs; CLOUDS.md
//! §2.5).

pub mod catalogue;

use super::{NodeGroup, Words, taint_word};
use crate::operators::Placement;
use crate::profile::limits;
use crate::profile::name_type;
use crate::profile::{
    Autoscale, KubernetesVersion, LabelValue, PoolSize, Profile, QualifiedName, Taint, TaintEffect,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) const WORDS: Words = Words {
    service: "GKE",
    machine_field: "machineType",
    machine: "machine type",
    cli: "gcloud",
    gpu_example: "machineType g2-standard-4",
    pool_label: NODEPOOL_LABEL,
    operators_pool: "the cluster's first pool",
    gpu_label: ("cloud.google.com/gke-accelerator", None),
};

/// Label GKE puts on every node with its pool's name.
pub const NODEPOOL_LABEL: &str = "cloud.google.com/gke-nodepool";
/// Label GKE puts on GPU nodes with the accelerator type.
pub const ACCELERATOR_LABEL: &str = "cloud.google.com/gke-accelerator";
/// The service-account annotation that links it to a Google service account (Workload
/// Identity Federation for GKE).
pub const GSA_ANNOTATION: &str = "iam.gke.io/gcp-service-account";
/// The name GKE gives the pool `clusters create` makes.
pub const DEFAULT_POOL: &str = "default-pool";
/// The node count gcloud gives a pool created without `--num-nodes`.
pub const GCLOUD_DEFAULT_NODE_COUNT: u32 = 3;

name_type!(
    /// GCP project ID.
    GcpProjectId,
    "^[a-z][a-z0-9-]{4,28}[a-z0-9]$",
    6,
    30,
    "a GCP project ID: 6 to 30 lowercase letters, digits and '-', starting with a letter"
);
name_type!(
    /// GCP zone (`us-west1-b`).
    GcpZone,
    "^[a-z]+-[a-z]+[0-9]+-[a-z]$",
    8,
    40,
    "a GCP zone such as us-west1-b"
);
name_type!(
    /// GKE cluster name.
    GkeClusterName,
    "^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$",
    1,
    40,
    "a GKE cluster name: 1 to 40 lowercase letters, digits and '-', starting with a letter"
);
name_type!(
    /// GKE node pool name.
    GkeNodePoolName,
    "^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$",
    1,
    40,
    "a GKE node pool name: 1 to 40 lowercase letters, digits and '-', starting with a letter"
);
name_type!(
    /// Compute Engine machine type (`g2-standard-4`).
    MachineType,
    "^[a-z][a-z0-9]*(-[a-z0-9]+)+$",
    3,
    64,
    "a Compute Engine machine type such as g2-standard-4"
);
name_type!(
    /// GPU accelerator type (`nvidia-l4`).
    AcceleratorType,
    "^nvidia-[a-z0-9-]+$",
    8,
    64,
    "a GPU accelerator type such as nvidia-l4"
);
name_type!(
    /// Google service account ID (the part before `@`).
    GcpServiceAccountId,
    "^[a-z][a-z0-9-]{4,28}[a-z0-9]$",
    6,
    30,
    "a Google service account ID: 6 to 30 lowercase letters, digits and '-', starting with a letter"
);
name_type!(
    /// IAM role (`roles/storage.objectUser`).
    GcpRole,
    "^(roles|projects/[a-z][a-z0-9-]{4,28}[a-z0-9]/roles)/[A-Za-z0-9_.]+$",
    7,
    128,
    "an IAM role such as roles/storage.objectUser"
);

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Gcp {
    /// Project ID; gcloud's configured project (`gcloud config get-value project`) when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<GcpProjectId>,
    /// The zone of a zonal cluster, e.g. `us-west1-b`.
    pub zone: GcpZone,
    pub cluster: GkeCluster,
    /// Node pools; the first is created with the cluster and must be `default-pool`, the
    /// others are added with `gcloud container node-pools create`.
    #[schemars(length(min = 1, max = 100))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 100>")]
    pub node_pools: Vec<GkeNodePool>,
    /// Workload Identity Federation: a Google service account the Ray service account acts as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<GcpIdentity>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GkeCluster {
    pub name: GkeClusterName,
    /// `--cluster-version` (`"1.35"`); GKE's default when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<KubernetesVersion>,
    /// `--workload-pool=PROJECT.svc.id.goog`: Workload Identity Federation for GKE.
    #[serde(default)]
    pub workload_identity: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GkeNodePool {
    pub name: GkeNodePoolName,
    pub machine_type: MachineType,
    /// Nodes at creation (`--num-nodes`, per zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 1000>")]
    pub count: Option<u32>,
    /// Cluster autoscaler range (`--enable-autoscaling --min-nodes --max-nodes`, per zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<Autoscale>,
    /// GPUs attached to each node (`--accelerator`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<Accelerator>,
    /// Node labels (`--node-labels`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<QualifiedName, LabelValue>,
    /// Node taints (`--node-taints`); GKE adds `nvidia.com/gpu=present:NoSchedule` to GPU
    /// nodes itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Accelerator {
    /// `type=`: the GPU model, e.g. `nvidia-l4` (G2, A2 and A3 machine types fix it).
    #[serde(rename = "type")]
    pub kind: AcceleratorType,
    /// `count=`: GPUs per node.
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 16))]
    #[serde(deserialize_with = "limits::range::<_, u32, 1, 16>")]
    pub count: u32,
    /// `gpu-driver-version=`: `default` lets GKE install the driver.
    #[serde(default)]
    pub gpu_driver_version: GpuDriverVersion,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GpuDriverVersion {
    #[default]
    Default,
    Latest,
    Disabled,
}

impl GpuDriverVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Latest => "latest",
            Self::Disabled => "disabled",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GcpIdentity {
    /// The Google service account's ID (`ray-workload` for
    /// `ray-workload@PROJECT.iam.gserviceaccount.com`), created by `up.sh`.
    pub service_account: GcpServiceAccountId,
    /// Project roles granted to it (`roles/storage.objectUser`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<GcpRole>,
}

impl GkeNodePool {
    pub fn size(&self) -> PoolSize {
        PoolSize::of(
            self.autoscale.as_ref(),
            self.count,
            GCLOUD_DEFAULT_NODE_COUNT,
        )
    }

    /// The pool's GPUs: its `accelerator`, else what its machine type carries.
    pub fn gpus(&self) -> Option<(&str, u32)> {
        self.accelerator
            .as_ref()
            .map(|a| (a.kind.as_str(), a.count))
            .or_else(|| catalogue::accelerator(&self.machine_type))
    }
}

impl Gcp {
    /// The Google service account's e-mail, when the project is pinned.
    pub fn gsa_email(&self) -> Option<String> {
        let id = self.identity.as_ref()?;
        let project = self.project.as_ref()?;
        Some(format!(
            "{}@{project}.iam.gserviceaccount.com",
            id.service_account
        ))
    }

    pub(super) fn node_groups(&self) -> Vec<NodeGroup<'_>> {
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
                for (k, v) in [
                    (NODEPOOL_LABEL, np.name.as_str()),
                    ("node.kubernetes.io/instance-type", np.machine_type.as_str()),
                    ("kubernetes.io/os", "linux"),
                    ("topology.kubernetes.io/zone", self.zone.as_str()),
                ] {
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
    pub(super) fn operator_placement(&self) -> Option<Placement> {
        let first = self.node_pools.first()?;
        first.gpus().is_none().then(|| Placement {
            node_selector: vec![(NODEPOOL_LABEL.into(), first.name.to_string())],
            tolerations: Vec::new(),
        })
    }

    /// `iam.gke.io/gcp-service-account`: the e-mail when the project is pinned, else filled in
    /// by `up.sh`.
    pub(super) fn identity_annotations(&self) -> Vec<(&'static str, Option<String>)> {
        if self.identity.is_none() {
            return Vec::new();
        }
        vec![(GSA_ANNOTATION, self.gsa_email())]
    }

    pub(super) fn pool_fields(&self, index: usize, f: &mut BTreeMap<&'static str, String>) {
        if let Some(a) = self
            .node_pools
            .get(index)
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

    pub(super) fn script_context(&self, p: &Profile) -> Value {
        serde_json::to_value(gcp_ctx(p, self)).unwrap_or_default()
    }
}

/// RK201's hint for GCP.
pub(super) fn unknown_instance_hint(name: &str) -> String {
    let names = catalogue::MACHINE_TYPES.iter().map(|s| s.name);
    crate::diagnostic::did_you_mean(name, names).map_or_else(
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
pub(super) fn cloud_label_hint(key: &str, value: &str, pools: &str) -> Option<String> {
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
    }
}
