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

pub(crate) mod catalogue;
pub(crate) mod section;

pub(crate) use section::*;

mod checks;

use super::{
    CLASS_ATOMIC, CLASS_CHECK_CAPACITY, Cloud, Facts, ManagedFlavour, NodeGroup, Placement,
    PrometheusFacts, Provisioning, Words, taint_word,
};
use crate::base::diagnostic::Findings;
use crate::profile::{Collector, LabelValue, Profile, QualifiedName, Taint, TaintEffect};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Also the words of a profile without a cloud section (its messages have always named Azure).
pub(crate) const WORDS: Words = Words {
    service: "AKS",
    machine_field: "vmSize",
    machine: "VM size",
    pool: "node pool",
    pool_short: "pool",
    cli: "az",
    default_count: Some(AZ_DEFAULT_NODE_COUNT),
    taint_refusal: Some("az aks rejects it"),
    count_within_autoscale: true,
    version_example: "\"1.35\"",
    identity_missing: (
        "its client-id annotation would stay a placeholder",
        "add azure.identity (name, federatedCredential, and clientId/tenantId if the identity exists already), or set workloadIdentity: false",
    ),
    identity_unused: (
        "the managed identity has no service account to federate with: up.sh creates it, but no federated credential",
        "add serviceAccount: {name: ..., workloadIdentity: true}",
    ),
    gpu_example: "vmSize Standard_NC24ads_A100_v4",
    pool_label: "kubernetes.azure.com/agentpool",
    operators_pool: "the System pool",
    gpu_label: ("accelerator", Some("nvidia")),
};

/// Label AKS puts on every node with the node pool's mode (`system` or `user`).
pub(crate) const MODE_LABEL: &str = "kubernetes.azure.com/mode";

/// The taint of a System pool with `criticalAddonsOnly` (AKS's `--node-taints` convention).
pub(crate) const CRITICAL_ADDONS_ONLY_KEY: &str = "CriticalAddonsOnly";

/// The taint `criticalAddonsOnly` stands for (AKS's documented way to keep a system pool free
/// of application pods).
const CRITICAL_ADDONS_ONLY: &str = "CriticalAddonsOnly=true:NoSchedule";

/// The label Azure workload identity's webhook looks for on pods.
pub(crate) const WORKLOAD_IDENTITY_LABEL: &str = "azure.workload.identity/use";
const IDENTITY_POD_LABELS: &[(&str, &str)] = &[(WORKLOAD_IDENTITY_LABEL, "true")];

/// The storage account of `azure.storage`, in every RayJob's and Serve application's runtime
/// environment (the upstream example's variable name).
pub(crate) const STORAGE_ACCOUNT_ENV: &str = "AZURE_STORAGE_ACCOUNT_NAME";
/// `azure.storage.containers`, comma-separated, next to the account.
pub(crate) const STORAGE_CONTAINERS_ENV: &str = "AZURE_STORAGE_CONTAINERS";

/// Azure Monitor managed service for Prometheus
/// (https://learn.microsoft.com/en-us/azure/azure-monitor/essentials/prometheus-metrics-overview):
/// the AKS metrics add-on (`ama-metrics`) scrapes, and takes custom targets as its own
/// `azmonitoring.coreos.com/v1` PodMonitor and ServiceMonitor objects
/// (https://learn.microsoft.com/en-us/azure/azure-monitor/containers/prometheus-metrics-scrape-crd).
/// Default: the Prometheus Operator stack, as on every cloud (`docs/monitoring.md` says why).
const PROMETHEUS: PrometheusFacts = PrometheusFacts {
    managed: "Azure Monitor managed service for Prometheus",
    default_collector: Collector::PrometheusOperator,
    flavour: ManagedFlavour::AzureMonitor,
};

/// The facts of the cloud whatever the section says.
const FACTS: Facts = Facts {
    section: "azure",
    words: &WORDS,
    prometheus: &PROMETHEUS,
    allocatable: catalogue::allocatable,
    catalogue: catalogue::VM_SIZES,
    unknown_instance_hint,
    cloud_label_hint,
};

impl Cloud for Azure {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn cluster_key(&self) -> String {
        format!(
            "AKS cluster `{}` in resource group `{}`",
            self.cluster.name, self.resource_group
        )
    }

    fn kubernetes_version(&self) -> Option<&str> {
        self.cluster.kubernetes_version.as_deref()
    }

    fn has_identity(&self) -> bool {
        self.identity.is_some()
    }

    /// AKS installs the GPU driver, not the device plugin (learn.microsoft.com
    /// `azure/aks/use-nvidia-gpu`: the default "manages the NVIDIA GPU driver only").
    fn device_plugin(&self) -> Option<&'static str> {
        None
    }

    fn annotates_identity(&self) -> bool {
        true
    }

    fn identity_pod_labels(&self) -> &'static [(&'static str, &'static str)] {
        IDENTITY_POD_LABELS
    }

    fn pool_fields(&self, group: &NodeGroup<'_>, fields: &mut BTreeMap<&'static str, String>) {
        fields.insert("mode", group.mode.to_owned());
    }

    fn own_checks(&self, p: &Profile, out: &mut Findings) {
        checks::run(self, p, out);
    }

    /// The node pools with what AKS adds to their nodes.
    fn node_groups(&self) -> Vec<NodeGroup<'_>> {
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
                let identity = crate::cloud::node_identity_labels(catalogue::spelling(&np.vm_size));
                for (k, v) in identity.into_iter().chain([
                    ("kubernetes.azure.com/agentpool", np.name.as_str()),
                    ("agentpool", np.name.as_str()),
                    (MODE_LABEL, mode),
                    (crate::cloud::REGION_LABEL, self.location.as_str()),
                ]) {
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
                    machine: catalogue::spelling(&np.vm_size),
                    instance: catalogue::vm_size(&np.vm_size),
                    gpu,
                    size: np.size(),
                    count: np.count,
                    autoscale: np.autoscale.as_ref(),
                    pool_taints: &np.taints,
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
    fn operator_placement(&self) -> Option<Placement> {
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
    fn identity_annotations(&self) -> Vec<(&'static str, Option<String>)> {
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
    fn workload_env(&self) -> Vec<(&'static str, String)> {
        self.storage.as_ref().map_or_else(Vec::new, |storage| {
            let containers: Vec<&str> = storage.containers.iter().map(|c| &**c).collect();
            vec![
                (STORAGE_ACCOUNT_ENV, storage.account.to_string()),
                (STORAGE_CONTAINERS_ENV, containers.join(",")),
            ]
        })
    }

    /// AKS's managed cluster autoscaler serves `best-effort-atomic-scale-up` on a pool created
    /// with `--enable-cluster-autoscaler` (Azure/AKS@a5bf7121
    /// `examples/kueue-and-ray-on-aks/2-kueue-queues/manifests/40-autoscale-queue.yaml` and
    /// `3-workloads/cas-batch-job/README.md`, which follow Microsoft's how-to "Provision capacity
    /// for Kueue batch jobs with the cluster autoscaler on AKS"). Which Kubernetes version it
    /// needs is not settled: that README says 1.30+, an Azure/AKS review (PR #5867) 1.33+, and a
    /// maintainer wrote in February 2026 that it could not be enabled (Azure/AKS#5492). AKS has
    /// no rack or host labels (learn.microsoft.com, AKS node labels; `docs/capacity.md`), so only the defaults apply.
    /// raykueue takes the later figure: below Kubernetes 1.33, or with AKS's default version,
    /// the class may not be served (a warning, as the sources disagree).
    fn provisioning(&self, _p: &Profile, class: &str) -> Provisioning {
        let minor = self
            .cluster
            .kubernetes_version
            .as_ref()
            .and_then(|v| v.as_str().split('.').nth(1)?.parse::<u32>().ok());
        match class {
            CLASS_ATOMIC if minor.is_none_or(|m| m < 33) => Provisioning::Undocumented(format!(
                "AKS's managed cluster autoscaler serves `{CLASS_ATOMIC}` from Kubernetes 1.33 by an Azure/AKS review (PR #5867; its example README says 1.30), and the cluster runs {}",
                self.cluster.kubernetes_version.as_ref().map_or_else(
                    || "AKS's default version".to_owned(),
                    |v| format!("Kubernetes {}", v.as_str())
                )
            )),
            CLASS_ATOMIC => Provisioning::Served(None),
            CLASS_CHECK_CAPACITY => Provisioning::Undocumented(format!(
                "Microsoft's AKS how-to and examples use only `{CLASS_ATOMIC}`; whether AKS's managed autoscaler serves `{class}` is not documented"
            )),
            _ => Provisioning::Refused(format!(
                "AKS's managed cluster autoscaler serves `{CLASS_ATOMIC}`; `{class}` is no class it documents"
            )),
        }
    }

    fn script_context(&self, p: &Profile) -> Value {
        serde_json::to_value(azure_ctx(p, self)).unwrap_or_default()
    }
}

/// RK201's hint: a close name, else the series the catalogue has.
fn unknown_instance_hint(name: &str) -> String {
    let names = catalogue::VM_SIZES.iter().map(|s| s.name);
    crate::base::diagnostic::did_you_mean(name, names).map_or_else(
        || "the catalogue has the Dv3, Dsv3, Dsv5, Ddsv5, Dsv6, Ddsv6, NCv3, NCasT4_v3, NC A10 v4, NC A100 v4, NCads H100 v5, ND A100 v4 and ND H100 v5 sizes; check the spelling with `az vm list-sizes`".to_string(),
        |s| format!("did you mean `{s}`?"),
    )
}

/// AKS labels GPU nodes `accelerator=nvidia` only on NVIDIA sizes.
fn cloud_label_hint(key: &str, value: &str, pools: &str) -> Option<String> {
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
        vm_size: catalogue::spelling(&n.vm_size).to_string(),
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
