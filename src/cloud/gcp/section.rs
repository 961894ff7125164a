//! The `gcp:` profile section: a GKE cluster in one zone, its node pools (with their
//! accelerators) and the Google service account bound to the Ray service account through
//! Workload Identity Federation. Names carry the patterns GCP enforces.

use super::catalogue;
use crate::profile::limits;
use crate::profile::names::name_type;
use crate::profile::names::{KubernetesVersion, LabelValue, QualifiedName};
use crate::profile::pools::{Autoscale, PoolSize, Taint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The node count gcloud gives a pool created without `--num-nodes`.
pub(crate) const GCLOUD_DEFAULT_NODE_COUNT: u32 = 3;

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
    /// Compute Engine reservation name (`a3u-reservation`).
    ReservationName,
    "^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$",
    1,
    63,
    "a Compute Engine reservation name: 1 to 63 lowercase letters, digits and '-', starting with a letter"
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
    /// Flex-start with queued provisioning (`--flex-start --enable-queued-provisioning`): GKE
    /// gives the pool nodes only for ProvisioningRequests of class
    /// `queued-provisioning.gke.io`, all of a request's nodes at once, and taints them
    /// `cloud.google.com/gke-queued=true:NoSchedule`. Needs `autoscale` with `min: 0` and no
    /// `count`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queued_provisioning: bool,
    /// How Compute Engine supplies the pool's VMs: on demand (the default), `spot`,
    /// `flexStart`, or `{reservation: {name}}`. A3 Ultra, A4 and A4X come only from a
    /// reservation, flex-start or spot (RK425).
    #[serde(default, skip_serializing_if = "Capacity::is_on_demand")]
    pub capacity: Capacity,
}

/// A pool's consumption option (cloud.google.com/ai-hypercomputer/docs/consumption-models).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Capacity {
    /// The standard provisioning model: no flag.
    #[default]
    OnDemand,
    /// Spot VMs (`--spot`): cheaper, reclaimed by Compute Engine at any time.
    Spot,
    /// Flex-start VMs (`--flex-start`): Compute Engine provisions them when capacity frees, for
    /// up to seven days; the pool autoscales from zero.
    FlexStart,
    /// VMs from a Compute Engine reservation.
    Reservation(Reservation),
}

impl Capacity {
    pub fn is_on_demand(&self) -> bool {
        *self == Self::OnDemand
    }
}

/// Which reservation a pool consumes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reservation {
    /// The reservation (`--reservation-affinity specific --reservation NAME`); without it, any
    /// matching reservation (`--reservation-affinity any`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<ReservationName>,
    /// The project that shares the reservation, when it is not the cluster's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<GcpProjectId>,
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
