//! The `azure:` profile section: an AKS cluster, its node pools, the managed identity
//! federated with the Ray service account, and the storage account. Names carry the patterns
//! and lengths Azure enforces, so a bad one is refused by the schema check.

use crate::profile::limits;
use crate::profile::names::name_type;
use crate::profile::names::{KubernetesVersion, LabelValue, QualifiedName, Uuid};
use crate::profile::pools::{Autoscale, PoolSize, Taint};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------------
// Name rules: each name with the pattern and length Azure enforces.

name_type!(
    /// AKS node pool name (Linux): 1–12 lowercase alphanumerics, starting with a letter.
    NodePoolName,
    "^[a-z][a-z0-9]{0,11}$",
    1,
    12,
    "an AKS node pool name: 1 to 12 lowercase letters and digits, starting with a letter"
);

name_type!(
    /// Azure resource group name.
    ResourceGroupName,
    "^[A-Za-z0-9_().-]{0,89}[A-Za-z0-9_()-]$",
    1,
    90,
    "an Azure resource group name: 1 to 90 letters, digits, '_', '-', '.', '(' and ')', not ending with '.'"
);

name_type!(
    /// AKS managed cluster name.
    ClusterName,
    "^[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$",
    1,
    63,
    "an AKS cluster name: 1 to 63 letters, digits, '_' and '-', starting and ending with a letter or digit"
);

name_type!(
    /// Azure storage account name (globally unique).
    StorageAccountName,
    "^[a-z0-9]{3,24}$",
    3,
    24,
    "an Azure storage account name: 3 to 24 lowercase letters and digits, unique across Azure"
);

name_type!(
    /// Blob container name.
    ContainerName,
    "^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$",
    3,
    63,
    "a blob container name: 3 to 63 lowercase letters, digits and single '-', starting and ending with a letter or digit"
);

name_type!(
    /// Azure managed identity or federated credential name.
    AzureIdentityName,
    "^[A-Za-z0-9][A-Za-z0-9_-]{2,119}$",
    3,
    120,
    "an Azure identity name: 3 to 120 letters, digits, '_' and '-', starting with a letter or digit"
);

name_type!(
    /// Azure region name as the CLI spells it (`eastus2`).
    AzureLocation,
    "^[a-z][a-z0-9]*$",
    2,
    40,
    "an Azure region as the CLI spells it, e.g. eastus2"
);

name_type!(
    /// Azure VM size (`Standard_ND96amsr_A100_v4`), in any case: Azure compares size names
    /// without regard to it.
    VmSize,
    "^[Ss][Tt][Aa][Nn][Dd][Aa][Rr][Dd]_[A-Za-z0-9_]+$",
    10,
    64,
    "an Azure VM size, e.g. Standard_NC16as_T4_v3"
);

name_type!(
    /// Azure role name (`Storage Blob Data Contributor`).
    RoleName,
    "^[A-Za-z][A-Za-z0-9 ._-]*$",
    1,
    128,
    "an Azure built-in role name such as \"Storage Blob Data Contributor\""
);

// ---------------------------------------------------------------------------------------------
// The `azure:` section

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Azure {
    /// Subscription to use; the CLI's current one when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription: Option<Uuid>,
    /// Azure region, e.g. `eastus2`.
    pub location: AzureLocation,
    pub resource_group: ResourceGroupName,
    pub cluster: AksCluster,
    /// Node pools; the first `System` pool is created with the cluster, the others are added.
    #[schemars(length(min = 1, max = 100))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 100>")]
    pub node_pools: Vec<NodePool>,
    /// User-assigned managed identity federated with the service account (workload identity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<Identity>,
    /// Storage account for datasets and checkpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AksCluster {
    pub name: ClusterName,
    /// Kubernetes version (`"1.35"`); AKS's default when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<KubernetesVersion>,
    /// `--enable-oidc-issuer`; needed by workload identity.
    #[serde(default)]
    pub oidc_issuer: bool,
    /// `--enable-workload-identity`.
    #[serde(default)]
    pub workload_identity: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PoolMode {
    System,
    #[default]
    User,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NodePool {
    pub name: NodePoolName,
    #[serde(default)]
    pub mode: PoolMode,
    pub vm_size: VmSize,
    /// Fixed node count (`--node-count`). Give either `count` or `autoscale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 1000))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 1000>")]
    pub count: Option<u32>,
    /// Cluster autoscaler range (`--enable-cluster-autoscaler --min-count --max-count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscale: Option<Autoscale>,
    /// Node labels set by AKS on every node of the pool (`--labels`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<QualifiedName, LabelValue>,
    /// Node taints (`--node-taints`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// System pool taint `CriticalAddonsOnly=true:NoSchedule`: only system pods run there.
    #[serde(default)]
    pub critical_addons_only: bool,
}

/// The node count az gives a pool created without `--node-count` (`az aks create`,
/// `az aks nodepool add`; azure-cli 2.91 `_params.py`: `node_count` default 3).
pub const AZ_DEFAULT_NODE_COUNT: u32 = 3;

impl NodePool {
    /// The pool's size. With neither `count` nor `autoscale`, az creates
    /// [`AZ_DEFAULT_NODE_COUNT`] nodes, and so the pool has exactly that many. An autoscaled
    /// pool without `count` starts at az's default when it lies in the range, else at `min`
    /// (`up.sh` passes `--node-count` then, since az refuses a default outside the range).
    pub fn size(&self) -> PoolSize {
        PoolSize::of(self.autoscale.as_ref(), self.count, AZ_DEFAULT_NODE_COUNT)
    }

    /// The largest number of nodes the pool can ever have.
    pub fn max_nodes(&self) -> u32 {
        self.size().max
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Identity {
    /// Managed identity name (`az identity create`).
    pub name: AzureIdentityName,
    /// Federated credential name linking the identity to the service account.
    pub federated_credential: AzureIdentityName,
    /// The identity's client ID, once known (`az identity show --query clientId`). When set,
    /// the ServiceAccount carries it and GitOps can own the object; otherwise `infra/up.sh`
    /// fills it in after creating the identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Uuid>,
    /// The Entra tenant ID, once known (`az account show --query tenantId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant_id: Option<Uuid>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Storage {
    /// Storage account name: globally unique.
    pub account: StorageAccountName,
    /// Blob containers to create.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerName>,
    /// Role granted to the managed identity on the account.
    #[serde(default = "default_storage_role")]
    pub role: RoleName,
}

fn default_storage_role() -> RoleName {
    RoleName("Storage Blob Data Contributor".into())
}
