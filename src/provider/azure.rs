//! Azure (AKS): the `azure:` profile section, what AKS puts on its nodes, where the operators
//! run, workload identity, and the values of the `az` scripts (`templates/infra/azure/`).
//!
//! What a pool's nodes carry: the pool's own `labels`, plus what AKS sets itself —
//! `kubernetes.azure.com/agentpool` and `agentpool` (pool name), `kubernetes.azure.com/mode`
//! (`system`/`user`), `node.kubernetes.io/instance-type` (VM size), `kubernetes.io/os=linux`,
//! `topology.kubernetes.io/region` (location) and `accelerator=nvidia` on NVIDIA GPU sizes.
//! Taints: the pool's `taints`, and `CriticalAddonsOnly=true:NoSchedule` with
//! `criticalAddonsOnly`. AKS adds no taint of its own to GPU nodes (Azure/AKS#1449).
//!
//! Placement: the operators run on the System pool — the `kubernetes.azure.com/mode: system`
//! node selector keeps them off GPU nodes (which may scale to zero or be tainted, so that
//! `helm --wait` would hang), and where the System pool carries `CriticalAddonsOnly` they
//! tolerate it, as the upstream Azure example's Helm settings do
//! (Azure/AKS `examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf`,
//! `tolerations[0].key = CriticalAddonsOnly`, operator `Exists`, effect `NoSchedule`).

pub mod catalogue;

use super::{NodeGroup, Words, taint_word};
use crate::operators::Placement;
use crate::profile::limits;
use crate::profile::name_type;
use crate::profile::{
    Autoscale, KubernetesVersion, LabelValue, PoolSize, Profile, QualifiedName, Taint, TaintEffect,
    Uuid,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub(super) const WORDS: Words = Words {
    service: "AKS",
    machine_field: "vmSize",
    machine: "VM size",
    cli: "az",
    gpu_example: "vmSize Standard_NC24ads_A100_v4",
    pool_label: "kubernetes.azure.com/agentpool",
    operators_pool: "the System pool",
    gpu_label: ("accelerator", Some("nvidia")),
};

/// Label AKS puts on every node with the node pool's mode (`system` or `user`).
pub const MODE_LABEL: &str = "kubernetes.azure.com/mode";

/// The taint of a System pool with `criticalAddonsOnly` (AKS's `--node-taints` convention).
pub const CRITICAL_ADDONS_ONLY_KEY: &str = "CriticalAddonsOnly";

/// The taint `criticalAddonsOnly` stands for (AKS's documented way to keep a system pool free
/// of application pods).
const CRITICAL_ADDONS_ONLY: &str = "CriticalAddonsOnly=true:NoSchedule";

/// The label Azure workload identity's webhook looks for on pods.
pub const WORKLOAD_IDENTITY_LABEL: &str = "azure.workload.identity/use";
pub(super) const IDENTITY_POD_LABELS: &[(&str, &str)] = &[(WORKLOAD_IDENTITY_LABEL, "true")];

/// The storage account of `azure.storage`, in every RayJob's and Serve application's runtime
/// environment (the upstream example's variable name).
pub const STORAGE_ACCOUNT_ENV: &str = "AZURE_STORAGE_ACCOUNT_NAME";
/// `azure.storage.containers`, comma-separated, next to the account.
pub const STORAGE_CONTAINERS_ENV: &str = "AZURE_STORAGE_CONTAINERS";

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
    /// Azure VM size (`Standard_ND96amsr_A100_v4`).
    VmSize,
    "^Standard_[A-Za-z0-9_]+$",
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

impl Azure {
    /// The node pools with what AKS adds to their nodes.
    pub(super) fn node_groups(&self) -> Vec<NodeGroup<'_>> {
        let operators_on_system = self.node_pools.iter().any(|n| n.mode == PoolMode::System);
        self.node_pools
            .iter()
            .enumerate()
            .map(|(index, np)| {
                let mut labels: BTreeMap<String, String> = np
                    .labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                let mode = match np.mode {
                    PoolMode::System => "system",
                    PoolMode::User => "user",
                };
                for (k, v) in [
                    ("kubernetes.azure.com/agentpool", np.name.as_str()),
                    ("agentpool", np.name.as_str()),
                    (MODE_LABEL, mode),
                    ("node.kubernetes.io/instance-type", np.vm_size.as_str()),
                    ("kubernetes.io/os", "linux"),
                    ("topology.kubernetes.io/region", self.location.as_str()),
                ] {
                    labels.insert(k.into(), v.into());
                }
                let gpu = catalogue::has_nvidia_gpus(&np.vm_size);
                // AKS labels the nodes of NVIDIA GPU sizes `accelerator=nvidia` itself.
                if gpu {
                    labels.insert("accelerator".into(), "nvidia".into());
                }
                let mut taints = np.taints.clone();
                if np.critical_addons_only {
                    taints.push(Taint {
                        key: QualifiedName(CRITICAL_ADDONS_ONLY_KEY.into()),
                        value: Some(LabelValue("true".into())),
                        effect: TaintEffect::NoSchedule,
                    });
                }
                NodeGroup {
                    index,
                    name: np.name.as_str(),
                    machine: np.vm_size.as_str(),
                    instance: catalogue::vm_size(&np.vm_size),
                    gpu,
                    size: np.size(),
                    count: np.count,
                    labels,
                    taints,
                    hosts_operators: operators_on_system && np.mode == PoolMode::System,
                    mode: match np.mode {
                        PoolMode::System => "System",
                        PoolMode::User => "User",
                    },
                    own_taints: np
                        .critical_addons_only
                        .then(|| CRITICAL_ADDONS_ONLY.to_owned())
                        .into_iter()
                        .chain(np.taints.iter().map(taint_word))
                        .collect(),
                    own_labels: np.labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
                }
            })
            .collect()
    }

    /// On the System pool; `None` without one (RK451): the charts' defaults apply.
    pub(super) fn operator_placement(&self) -> Option<Placement> {
        let system: Vec<_> = self
            .node_pools
            .iter()
            .filter(|n| n.mode == PoolMode::System)
            .collect();
        if system.is_empty() {
            return None;
        }
        Some(Placement {
            node_selector: vec![(MODE_LABEL.into(), "system".into())],
            tolerations: if system.iter().any(|n| n.critical_addons_only) {
                vec![
                    json!({ "key": CRITICAL_ADDONS_ONLY_KEY, "operator": "Exists", "effect": "NoSchedule" }),
                ]
            } else {
                Vec::new()
            },
        })
    }

    /// `azure.workload.identity/client-id` and `tenant-id`: pinned, or filled in by `up.sh`.
    pub(super) fn identity_annotations(&self) -> Vec<(&'static str, Option<String>)> {
        let id = self.identity.as_ref();
        vec![
            (
                "azure.workload.identity/client-id",
                id.and_then(|i| i.client_id.as_ref())
                    .map(ToString::to_string),
            ),
            (
                "azure.workload.identity/tenant-id",
                id.and_then(|i| i.tenant_id.as_ref())
                    .map(ToString::to_string),
            ),
        ]
    }

    /// `azure.storage` as environment variables, so the programs find the profile's storage
    /// without a copy of its name (workload identity signs the requests).
    pub(super) fn workload_env(&self) -> Vec<(&'static str, String)> {
        self.storage.as_ref().map_or_else(Vec::new, |storage| {
            let containers: Vec<&str> = storage.containers.iter().map(|c| &**c).collect();
            vec![
                (STORAGE_ACCOUNT_ENV, storage.account.to_string()),
                (STORAGE_CONTAINERS_ENV, containers.join(",")),
            ]
        })
    }

    pub(super) fn script_context(&self, p: &Profile) -> Value {
        serde_json::to_value(azure_ctx(p, self)).unwrap_or_default()
    }
}

/// RK201's hint: a close name, else the series the catalogue has.
pub(super) fn unknown_instance_hint(name: &str) -> String {
    let names = catalogue::VM_SIZES.iter().map(|s| s.name);
    crate::diagnostic::did_you_mean(name, names).map_or_else(
        || "the catalogue has the Dv3, Dsv3, Dsv5, Ddsv5, Dsv6, Ddsv6, NCv3, NCasT4_v3, NC A10 v4, NC A100 v4, NCads H100 v5, ND A100 v4 and ND H100 v5 sizes; check the spelling with `az vm list-sizes`".to_string(),
        |s| format!("did you mean `{s}`?"),
    )
}

/// AKS labels GPU nodes `accelerator=nvidia` only on NVIDIA sizes.
pub(super) fn cloud_label_hint(key: &str, value: &str, pools: &str) -> Option<String> {
    (key == "accelerator" && value == "nvidia").then(|| format!(
        "AKS labels nodes `accelerator=nvidia` only on NVIDIA GPU sizes; pools: {pools}. Add a GPU pool, or add the label to a pool's `labels`"
    ))
}

// ---------------------------------------------------------------------------------------------
// Script values (`templates/infra/azure/`)

#[derive(Serialize)]
struct AzureCtx {
    subscription: Option<String>,
    location: String,
    resource_group: String,
    cluster: String,
    kubernetes_version: Option<String>,
    oidc_issuer: bool,
    workload_identity: bool,
    /// The pool created with the cluster (`None` only for a profile that bypassed the schema).
    system_pool: Option<PoolCtx>,
    /// Pools added with `az aks nodepool add`, in profile order.
    pools: Vec<PoolCtx>,
    identity: Option<IdentityCtx>,
    storage: Option<StorageCtx>,
    /// Some pool autoscales from zero: missing nodes are not a failure in `verify.sh`.
    scales_to_zero: bool,
}

#[derive(Serialize)]
struct PoolCtx {
    name: String,
    mode: &'static str,
    vm_size: String,
    count: Option<u32>,
    min: Option<u32>,
    max: Option<u32>,
    /// `--node-taints` / `--nodepool-taints`: comma-separated `key=value:Effect`.
    taints: Option<String>,
    /// `--labels` / `--nodepool-labels`: one `key=value` word each.
    labels: Vec<String>,
    /// An NVIDIA GPU VM size: `verify.sh` checks its nodes' allocatable `nvidia.com/gpu`.
    gpu: bool,
    /// The fewest nodes the pool may have (0 when it autoscales from zero).
    min_nodes: u32,
}

#[derive(Serialize)]
struct IdentityCtx {
    name: String,
    federated_credential: String,
    /// `system:serviceaccount:<ns>:<sa>`; no federated credential without a service account.
    subject: Option<String>,
}

#[derive(Serialize)]
struct StorageCtx {
    account: String,
    containers: Vec<String>,
    role: String,
}

fn azure_ctx(p: &Profile, a: &Azure) -> AzureCtx {
    // The cluster is created with the first System pool (AKS makes the create-time pool a
    // System pool); a profile without one gets its first pool there (rule RK451 reports it).
    let system_index = a
        .node_pools
        .iter()
        .position(|n| n.mode == PoolMode::System)
        .unwrap_or(0);
    let pools: Vec<PoolCtx> = a.node_pools.iter().map(pool).collect();
    let scales_to_zero = pools.iter().any(|n| n.min_nodes == 0);
    let mut system_pool = None;
    let mut extra = Vec::new();
    for (i, pc) in pools.into_iter().enumerate() {
        if i == system_index {
            system_pool = Some(pc);
        } else {
            extra.push(pc);
        }
    }
    let uses_identity = a.identity.is_some();
    AzureCtx {
        subscription: a.subscription.as_ref().map(ToString::to_string),
        location: a.location.to_string(),
        resource_group: a.resource_group.to_string(),
        cluster: a.cluster.name.to_string(),
        kubernetes_version: a
            .cluster
            .kubernetes_version
            .as_ref()
            .map(ToString::to_string),
        // Workload identity needs both features; an identity in the profile turns them on.
        oidc_issuer: a.cluster.oidc_issuer || uses_identity,
        workload_identity: a.cluster.workload_identity || uses_identity,
        system_pool,
        pools: extra,
        identity: a.identity.as_ref().map(|id| IdentityCtx {
            name: id.name.to_string(),
            federated_credential: id.federated_credential.to_string(),
            subject: p
                .service_account
                .as_ref()
                .map(|sa| format!("system:serviceaccount:{}:{}", p.namespace, sa.name)),
        }),
        storage: a.storage.as_ref().map(|s| StorageCtx {
            account: s.account.to_string(),
            containers: s.containers.iter().map(ToString::to_string).collect(),
            role: s.role.to_string(),
        }),
        scales_to_zero,
    }
}

fn pool(n: &NodePool) -> PoolCtx {
    let size = n.size();
    let mut taints: Vec<String> = Vec::new();
    if n.critical_addons_only {
        taints.push(CRITICAL_ADDONS_ONLY.into());
    }
    taints.extend(n.taints.iter().map(taint_word));
    PoolCtx {
        name: n.name.to_string(),
        mode: match n.mode {
            PoolMode::System => "System",
            PoolMode::User => "User",
        },
        vm_size: n.vm_size.to_string(),
        // Without a count, az starts a pool at its default, which it refuses when that lies
        // outside the autoscaler range: then the count is written (seed 004's 0–3 keeps az's
        // default, and its command line).
        count: n.count.or_else(|| {
            (size.autoscaled && size.initial != AZ_DEFAULT_NODE_COUNT).then_some(size.initial)
        }),
        min: n.autoscale.as_ref().map(|s| s.min),
        max: n.autoscale.as_ref().map(|s| s.max),
        taints: (!taints.is_empty()).then(|| taints.join(",")),
        labels: n.labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        gpu: catalogue::has_nvidia_gpus(n.vm_size.as_str()),
        min_nodes: size.min,
    }
}
