//! Alibaba Cloud ACK: the `alibaba:` profile section, the ECS GPU catalogue, the labels and
//! taints ACK nodes carry, the request bodies of the ACK OpenAPI (`aliyun cs`), the VPC
//! prerequisites, RRSA, and the console-only step printed as a manual step.
//!
//! KubeRay's ACK guide is links only. raykueue calls the ACK OpenAPI ("CS", 2015-12-15) with
//! JSON bodies that it checks against its own schema (`assets/ack/`), and installs KubeRay with
//! Helm like on every cloud — not also with ACK's KubeRay add-on, which would run a second
//! operator on the same CRDs.

pub(crate) mod bodies;
pub(crate) mod catalogue;
pub(crate) mod section;

pub(crate) use section::*;

mod checks;

use super::instance::GPU_TAINT_KEY;
use super::{
    Carried, Cloud, Facts, ManagedFlavour, NodeGroup as SeamGroup, PrometheusFacts, Provisioning,
    Words, taint_word,
};
use crate::base::diagnostic::{Diagnostic, Findings};
use crate::profile::{Collector, LabelValue, Profile, QualifiedName, Taint, TaintEffect};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

const WORDS: Words = Words {
    service: "ACK",
    machine_field: "instanceType",
    machine: "instance type",
    pool: "node pool",
    pool_short: "pool",
    cli: "aliyun",
    default_count: None,
    taint_refusal: None,
    // With auto scaling ACK sizes the pool and `count` is not sent (RK442).
    count_within_autoscale: false,
    version_example: "\"1.34\"",
    identity_missing: (
        "no RAM role is named for RRSA",
        "add alibaba.identity (roleName: the RAM role the pods assume), or set workloadIdentity: false",
    ),
    identity_unused: (
        "`alibaba.identity` names the RAM role the Ray service account assumes (RRSA), but the profile has no `serviceAccount` to annotate",
        "add `serviceAccount: {name: ...}` (the Ray pods run as it), or remove `alibaba.identity`",
    ),
    gpu_example: "instanceType ecs.gn7i-c8g1.2xlarge",
    pool_label: POOL_LABEL,
    // No placement: the charts' defaults (the GPU taint keeps the operators off GPU nodes).
    operators_pool: "their pool",
    gpu_label: (GPU_LABEL, None),
};

/// ACK's GPU count label on GPU nodes (next to `aliyun.accelerator/nvidia_name`; ACK GPU docs).
pub(crate) const GPU_COUNT_LABEL: &str = "aliyun.accelerator/nvidia_count";

/// Where the request bodies land in the bundle.
pub(crate) const FILE_CREATE_CLUSTER: &str = "infra/ack/create-cluster.json";

/// The GPU label ACK puts on GPU nodes (the model, e.g. `NVIDIA-A10`); also the Cluster
/// Autoscaler's GPU label for alicloud (kubernetes/autoscaler@55c37cd5
/// `cloudprovider/alicloud/alicloud_cloud_provider.go` `GPULabel`).
pub(crate) const GPU_LABEL: &str = "aliyun.accelerator/nvidia_name";

/// The pool label that pins the NVIDIA driver of new nodes (ACK "Specify a custom GPU driver
/// version").
pub(crate) const DRIVER_VERSION_LABEL: &str = "ack.aliyun.com/nvidia-driver-version";

/// RRSA wiring read by `ack-pod-identity-webhook` (Alibaba Cloud help doc-detail/600451,
/// "ack-pod-identity-webhook": namespace label and service-account annotation).
pub(crate) const RRSA_NAMESPACE_LABEL: &str = "pod-identity.alibabacloud.com/injection";
pub(crate) const RRSA_ROLE_ANNOTATION: &str = "pod-identity.alibabacloud.com/role-name";
/// The add-on that injects the OIDC token and role environment into pods.
pub(crate) const RRSA_WEBHOOK_ADDON: &str = "ack-pod-identity-webhook";
const IDENTITY_NAMESPACE_LABELS: &[(&str, &str)] = &[(RRSA_NAMESPACE_LABEL, "on")];

/// The label raykueue gives every node of a pool, with the pool's name: ACK's own pool label
/// (`alibabacloud.com/nodepool-id`) carries the pool's ID, which only the cloud knows, and
/// `verify.sh` finds a pool's nodes by name with kubectl alone.
pub(crate) const POOL_LABEL: &str = "raykueue.io/node-pool";

/// The step no `aliyun` command does, with its reason, for `up.sh` to print.
pub(crate) const MANUAL_NODE_SCALING_STEP: &str = "In the ACK console: Clusters → this cluster → Node Pools → Node Scaling → Enable \
(authorize the AliyunCSManagedAutoScalerRole role and activate Auto Scaling (ESS) the first time). \
Why: node pool auto scaling only takes effect once node scaling is enabled for the cluster, and \
ACK documents that switch as a console step with no CLI command; until then a pool with min 0 \
never gets a node.";

/// What a flavor can match on a pool's nodes: a label with a known value, or a label whose
/// value ACK sets but no source here gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LabelFact {
    Value(String),
    /// ACK sets the label; its value for this instance type is not known here.
    SetByAck,
}

/// Whether the pool's instance type has NVIDIA GPUs.
pub(crate) fn is_gpu_pool(pool: &AckNodePool) -> bool {
    catalogue::has_nvidia_gpus(&pool.instance_type)
}

/// The labels written into the node pool body: the profile's, the pool label, and the driver
/// pin.
pub(crate) fn config_labels(pool: &AckNodePool) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = pool
        .labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    labels.insert(POOL_LABEL.into(), pool.name.to_string());
    if let Some(v) = &pool.driver_version {
        labels.insert(DRIVER_VERSION_LABEL.into(), v.to_string());
    }
    labels
}

/// Every label a node of the pool carries that a flavor can match: the body's labels and ACK's
/// GPU label on GPU pools.
pub(crate) fn node_labels(pool: &AckNodePool) -> BTreeMap<String, LabelFact> {
    let mut labels: BTreeMap<String, LabelFact> = config_labels(pool)
        .into_iter()
        .map(|(k, v)| (k, LabelFact::Value(v)))
        .collect();
    if is_gpu_pool(pool) {
        let fact = catalogue::instance_type(&pool.instance_type)
            .and_then(|t| t.nvidia_name)
            .map_or(LabelFact::SetByAck, |v| LabelFact::Value(v.into()));
        labels.insert(GPU_LABEL.into(), fact);
    }
    labels
}

/// The taints written for a pool: the profile's, plus `nvidia.com/gpu=present:NoSchedule` on a
/// GPU pool that has no `nvidia.com/gpu` taint.
pub(crate) fn node_taints(pool: &AckNodePool) -> Vec<Taint> {
    let mut taints = pool.taints.clone();
    if is_gpu_pool(pool) && !taints.iter().any(|t| t.key.as_str() == GPU_TAINT_KEY) {
        taints.push(Taint {
            key: QualifiedName(GPU_TAINT_KEY.into()),
            value: Some(LabelValue("present".into())),
            effect: TaintEffect::NoSchedule,
        });
    }
    taints
}

/// RK201's hint: a close name, else the families the catalogue has.
fn unknown_instance_hint(name: &str) -> String {
    let names = catalogue::INSTANCE_TYPES.iter().map(|t| t.base.name);
    crate::base::diagnostic::did_you_mean(name, names).map_or_else(
        || "the catalogue has the g7 (CPU), gn6i (T4), gn7i (A10), gn7 and gn7e (A100) types; check the spelling in the ECS instance type list".to_string(),
        |s| format!("did you mean `{s}`?"),
    )
}

/// ACK sets `aliyun.accelerator/nvidia_name` on GPU nodes only, with the GPU's product name.
fn cloud_label_hint(key: &str, _value: &str, pools: &str) -> Option<String> {
    (key == GPU_LABEL || key == GPU_COUNT_LABEL).then(|| format!(
        "ACK sets `{key}` on GPU nodes only (`{GPU_LABEL}` is the product name: NVIDIA-A10 on gn7i, Tesla-T4 on gn6i; raykueue does not know it for the A100 types); pools: {pools}. Match a GPU pool's value, or add the label to a pool's `labels`"
    ))
}

/// Alibaba Cloud Managed Service for Prometheus, which ACK integrates as container monitoring
/// (https://www.alibabacloud.com/help/en/prometheus/user-guide/using-container-monitoring-pro);
/// its agent in the cluster takes ServiceMonitor and PodMonitor objects.
/// Default: the Prometheus Operator stack, as on every cloud (`docs/monitoring.md` says why).
const PROMETHEUS: PrometheusFacts = PrometheusFacts {
    managed: "Alibaba Cloud Managed Service for Prometheus",
    default_collector: Collector::PrometheusOperator,
    flavour: ManagedFlavour::Alibaba,
};

/// The facts of the cloud whatever the section says.
const FACTS: Facts = Facts {
    section: "alibaba",
    words: &WORDS,
    prometheus: &PROMETHEUS,
    allocatable: catalogue::allocatable,
    catalogue: &[],
    unknown_instance_hint,
    cloud_label_hint,
};

impl Cloud for Alibaba {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn cluster_key(&self) -> String {
        format!("ACK cluster `{}` in `{}`", self.cluster.name, self.region)
    }

    fn kubernetes_version(&self) -> Option<&str> {
        self.cluster.kubernetes_version.as_deref()
    }

    fn has_identity(&self) -> bool {
        self.identity.is_some()
    }

    /// ACK installs `ack-nvidia-device-plugin` with the cluster on GPU nodes (alibabacloud.com
    /// "Configure and manage the ack-nvidia-device-plugin component"; before Kubernetes 1.32
    /// a static pod, which taints do not affect).
    fn device_plugin(&self) -> Option<&'static str> {
        Some("its ack-nvidia-device-plugin component on every GPU node, installed with the cluster")
    }

    fn identity_namespace_labels(&self) -> &'static [(&'static str, &'static str)] {
        IDENTITY_NAMESPACE_LABELS
    }

    fn own_checks(&self, p: &Profile, out: &mut Findings) {
        checks::run(self, p, out);
    }

    /// The node pools with what ACK and raykueue put on their nodes.
    fn node_groups(&self) -> Vec<SeamGroup<'_>> {
        self.node_pools
            .iter()
            .enumerate()
            .map(|(index, np)| {
                let mut labels: BTreeMap<String, String> = node_labels(np)
                    .into_iter()
                    .filter_map(|(k, v)| match v {
                        LabelFact::Value(v) => Some((k, v)),
                        LabelFact::SetByAck => None,
                    })
                    .collect();
                let instance = catalogue::instance_type(&np.instance_type);
                if let Some(t) = instance.filter(|t| t.base.gpus > 0) {
                    labels.insert(GPU_COUNT_LABEL.into(), t.base.gpus.to_string());
                }
                let identity = crate::cloud::node_identity_labels(np.instance_type.as_str());
                for (k, v) in identity.into_iter().chain([
                    (crate::cloud::REGION_LABEL, self.region.as_str()),
                    (crate::cloud::ZONE_LABEL, self.zone.as_str()),
                ]) {
                    labels.insert(k.into(), v.into());
                }
                let taints = node_taints(np);
                SeamGroup {
                    index,
                    name: np.name.as_str(),
                    machine: np.instance_type.as_str(),
                    instance: instance.map(|t| &t.base),
                    gpu: is_gpu_pool(np),
                    size: np.size(),
                    count: np.count,
                    autoscale: np.autoscale.as_ref(),
                    pool_taints: &np.taints,
                    labels,
                    own_taints: taints.iter().map(taint_word).collect(),
                    taints,
                    hosts_operators: false,
                    mode: "-",
                    own_labels: config_labels(np)
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect(),
                }
            })
            .collect()
    }

    /// RRSA: the service account names its RAM role (known from the profile, so GitOps can
    /// own the object as generated).
    fn identity_annotations(&self) -> Vec<(&'static str, Option<String>)> {
        self.identity
            .as_ref()
            .map(|i| vec![(RRSA_ROLE_ANNOTATION, Some(i.role_name.to_string()))])
            .unwrap_or_default()
    }

    /// `alibabacloud.com/nodepool-id` on every node of a pool ("ACK automatically creates a
    /// globally unique label alibabacloud.com/nodepool-id for each node pool",
    /// help.aliyun.com/en/ack/ack-managed-and-ack-dedicated/user-guide/schedule-an-application-pod-to-a-specific-node-pool).
    /// ACK's switch labels exist only on Lingjun nodes of ACK Lingjun clusters
    /// (help.aliyun.com, ACK Lingjun node labels; `docs/capacity.md`), not on the ECS pools raykueue makes.
    fn topology_labels(&self, _group: &SeamGroup<'_>) -> Vec<(&'static str, Carried)> {
        vec![("alibabacloud.com/nodepool-id", Carried::PerPool)]
    }

    /// No Alibaba documentation says ACK's managed cluster-autoscaler or its node instant
    /// scaling serves ProvisioningRequests (the ACK auto-scaling FAQ,
    /// alibabacloud.com/help/en/ack/ack-managed-and-ack-dedicated/user-guide/faq-about-node-auto-scaling,
    /// names none; ACK Kube Queue's admission checks are its own, not Kueue's), and upstream
    /// CA's Alibaba provider does not implement `AtomicIncreaseSize`
    /// (kubernetes/autoscaler `cloudprovider/alicloud/alicloud_auto_scaling_group.go`).
    fn provisioning(&self, _p: &Profile, class: &str) -> Provisioning {
        Provisioning::Refused(format!(
            "ACK documents no ProvisioningRequest support in its managed cluster-autoscaler or node instant scaling, so nothing serves `{class}`"
        ))
    }

    fn script_context(&self, p: &Profile) -> Value {
        let identity_wired = p
            .service_account
            .as_ref()
            .filter(|sa| sa.workload_identity && self.identity.is_some())
            .map(|sa| IdentityCtx {
                namespace: p.namespace.to_string(),
                service_account: sa.name.to_string(),
                role_name: self
                    .identity
                    .as_ref()
                    .map(|i| i.role_name.to_string())
                    .unwrap_or_default(),
            });
        serde_json::to_value(AlibabaCtx {
            region: self.region.to_string(),
            zone: self.zone.to_string(),
            vpc: VpcCtx {
                name: self.vpc.name.to_string(),
                cidr: self.vpc.cidr.to_string(),
                vswitch_name: self.vpc.vswitch_name.to_string(),
                vswitch_cidr: self.vpc.vswitch_cidr.to_string(),
            },
            cluster: self.cluster.name.to_string(),
            node_pools: self.node_pools.iter().map(|n| n.name.to_string()).collect(),
            identity: self.identity.is_some(),
            identity_wired,
            manual_step: needs_manual_node_scaling(self).then_some(MANUAL_NODE_SCALING_STEP),
            fill_cluster_ids: bodies::FILL_CLUSTER_IDS,
            fill_node_pool_ids: bodies::FILL_NODE_POOL_IDS,
        })
        .unwrap_or_default()
    }

    /// The request bodies: `infra/ack/create-cluster.json`, `infra/ack/nodepool-<name>.json`.
    fn infra_files(&self, _p: &Profile) -> Result<Vec<(String, String)>, Diagnostic> {
        let json = |v: &Value| format!("{v:#}\n");
        let mut out = vec![(
            FILE_CREATE_CLUSTER.to_owned(),
            json(&bodies::cluster_body_file(self)),
        )];
        for np in &self.node_pools {
            out.push((
                format!("infra/ack/nodepool-{}.json", np.name),
                json(&bodies::node_pool_body_file(np)),
            ));
        }
        Ok(out)
    }
}

/// The values of `templates/infra/alibaba/`.
#[derive(Serialize)]
struct AlibabaCtx {
    region: String,
    zone: String,
    vpc: VpcCtx,
    cluster: String,
    /// Pool names, in profile order; each has its body `ack/nodepool-<name>.json`.
    node_pools: Vec<String>,
    identity: bool,
    /// The service account RRSA is wired to (namespace label, role annotation).
    identity_wired: Option<IdentityCtx>,
    /// The console-only step, when some pool autoscales.
    manual_step: Option<&'static str>,
    /// The jq programs that add cloud-assigned IDs to the bodies.
    fill_cluster_ids: &'static str,
    fill_node_pool_ids: &'static str,
}

#[derive(Serialize)]
struct IdentityCtx {
    namespace: String,
    service_account: String,
    role_name: String,
}

#[derive(Serialize)]
struct VpcCtx {
    name: String,
    cidr: String,
    vswitch_name: String,
    vswitch_cidr: String,
}

/// Whether some pool relies on node pool auto scaling, so `up.sh` must print the manual step.
pub(crate) fn needs_manual_node_scaling(a: &Alibaba) -> bool {
    a.node_pools.iter().any(|p| p.autoscale.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(instance_type: &str) -> AckNodePool {
        AckNodePool {
            name: AckNodePoolName("gpu-pool".into()),
            instance_type: EcsInstanceType(instance_type.into()),
            system_disk_size: None,
            count: None,
            autoscale: None,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            driver_version: None,
        }
    }

    #[test]
    fn gpu_pools_carry_acks_gpu_label_and_get_the_gpu_taint() {
        let a10 = pool("ecs.gn7i-c8g1.2xlarge");
        assert_eq!(
            node_labels(&a10)[GPU_LABEL],
            LabelFact::Value("NVIDIA-A10".into())
        );
        assert_eq!(node_taints(&a10).len(), 1);
        assert_eq!(node_taints(&a10)[0].key.as_str(), GPU_TAINT_KEY);
        let a100 = pool("ecs.gn7e-c16g1.4xlarge");
        assert_eq!(node_labels(&a100)[GPU_LABEL], LabelFact::SetByAck);
        let cpu = pool("ecs.g7.xlarge");
        assert_eq!(
            node_labels(&cpu).into_iter().collect::<Vec<_>>(),
            vec![(POOL_LABEL.to_owned(), LabelFact::Value("gpu-pool".into()))]
        );
        assert!(node_taints(&cpu).is_empty());
    }

    #[test]
    fn the_driver_pin_is_a_pool_label() {
        let mut p = pool("ecs.gn7i-c8g1.2xlarge");
        p.driver_version = Some(DriverVersion("550.144.03".into()));
        assert_eq!(config_labels(&p)[DRIVER_VERSION_LABEL], "550.144.03");
    }
}
