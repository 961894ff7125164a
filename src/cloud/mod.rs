//! The cloud seam: everything that depends on which cloud runs the cluster. A profile names its
//! cloud by the section it has (`azure:`, `gcp:`, `aws:`, `alibaba:`; at most one, RK400), and
//! the rest of raykueue asks that section's [`Cloud`] instead of knowing a cloud:
//!
//! - the node pools as the scheduler sees their nodes ([`NodeGroup`]: the labels and taints the
//!   cloud puts on them besides the profile's own), with the instance catalogue behind them and
//!   the cloud's allocatable model;
//! - where the operators run ([`Placement`]) and who advertises `nvidia.com/gpu`;
//! - identity wiring: the service account's annotations and the pods' labels;
//! - the provisioning scripts: the cloud's template folder (`templates/infra/<section>/`) and
//!   the values it renders; the cloud-neutral steps live in `templates/infra/common/`;
//! - the cloud's own checks (`checks.rs`), and the words every message uses.
//!
//! Each cloud is one folder with the same layout: `section.rs` (the profile section's types),
//! `catalogue.rs` (its instance types), `mod.rs` (its `Cloud` impl), `checks.rs` (what its
//! CLI or API would refuse). The checks every cloud shares (pool names, sizes, autoscale
//! ranges, taints, the Kubernetes version, identity) run once over every cloud's pools
//! (`checks::clouds`).

pub(crate) mod alibaba;
pub(crate) mod aws;
pub(crate) mod azure;
pub(crate) mod gcp;
pub(crate) mod instance;

pub(crate) use instance::{Allocatable, GPU_RESOURCE, InstanceType, successors};

use crate::base::diagnostic::{Diagnostic, Findings};
use crate::profile::{Autoscale, Collector, NvidiaInstall, PoolSize, Profile, Taint};
use serde_json::Value;
use std::collections::BTreeMap;

/// Every cloud section a profile may have, in the order they are read: the one list of clouds.
/// A fifth cloud adds its line here and its field to `Profile`.
impl Profile {
    /// Every cloud section the profile has (RK400 reports a second).
    pub(crate) fn clouds(&self) -> Vec<&dyn Cloud> {
        let sections: [Option<&dyn Cloud>; 4] = [
            self.azure.as_ref().map(|c| c as &dyn Cloud),
            self.gcp.as_ref().map(|c| c as &dyn Cloud),
            self.aws.as_ref().map(|c| c as &dyn Cloud),
            self.alibaba.as_ref().map(|c| c as &dyn Cloud),
        ];
        sections.into_iter().flatten().collect()
    }

    /// The profile's cloud: its first cloud section.
    pub(crate) fn cloud(&self) -> Option<&dyn Cloud> {
        self.clouds().into_iter().next()
    }
}

/// The words a cloud's messages use.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Words {
    /// The managed Kubernetes service: `AKS`, `GKE`.
    pub(crate) service: &'static str,
    /// The pool field naming the instance type: `vmSize`, `machineType`.
    pub(crate) machine_field: &'static str,
    /// The same in prose: `VM size`, `machine type`.
    pub(crate) machine: &'static str,
    /// What the cloud calls a pool: `node pool`, `node group`; and for short: `pool`.
    pub(crate) pool: &'static str,
    pub(crate) pool_short: &'static str,
    /// The CLI whose default node count applies when a pool gives none: `az`, `gcloud`.
    pub(crate) cli: &'static str,
    /// A GPU instance type for hints.
    pub(crate) gpu_example: &'static str,
    /// The label the cloud puts on every node with its pool's name.
    pub(crate) pool_label: &'static str,
    /// Where the operators run, in prose: `the System pool`.
    pub(crate) operators_pool: &'static str,
    /// The label the cloud (or raykueue) puts on NVIDIA GPU nodes, with its value where it is
    /// one for all GPU nodes: what the device plugin's node affinity selects.
    pub(crate) gpu_label: (&'static str, Option<&'static str>),
    /// How many nodes the CLI gives a pool created without a count, where it gives one.
    pub(crate) default_count: Option<u32>,
    /// Where the CLI takes taints only as `key=value:Effect`: what it does with a taint
    /// without a value (RK450).
    pub(crate) taint_refusal: Option<&'static str>,
    /// A pool's `count` is sent with its autoscale range, so it must lie inside (RK452).
    pub(crate) count_within_autoscale: bool,
    /// A current Kubernetes version of the service, for hints (`"1.35"`).
    pub(crate) version_example: &'static str,
    /// RK453 without the section's `identity`: what the service account misses, and the hint.
    pub(crate) identity_missing: (&'static str, &'static str),
    /// RK454, the section's `identity` without a service account: message and hint.
    pub(crate) identity_unused: (&'static str, &'static str),
}

/// A node pool as the scheduler sees its nodes: the profile's pool with what the cloud adds.
#[derive(Debug, Clone)]
pub(crate) struct NodeGroup<'a> {
    /// Position in the section's `nodePools`.
    pub(crate) index: usize,
    pub(crate) name: &'a str,
    /// The instance type as the profile spells it.
    pub(crate) machine: &'a str,
    /// The catalogue entry, when raykueue knows the type.
    pub(crate) instance: Option<&'static InstanceType>,
    /// Whether its nodes advertise `nvidia.com/gpu`.
    pub(crate) gpu: bool,
    pub(crate) size: PoolSize,
    /// `count` and `autoscale` as the profile gives them.
    pub(crate) count: Option<u32>,
    pub(crate) autoscale: Option<&'a Autoscale>,
    /// The pool's own taints, as the profile gives them.
    pub(crate) pool_taints: &'a [Taint],
    /// Every label each node carries: the pool's own and the cloud's.
    pub(crate) labels: BTreeMap<String, String>,
    /// Every taint each node carries: the pool's own and the cloud's.
    pub(crate) taints: Vec<Taint>,
    /// The operators run here (`Cloud::operator_placement`): their requests are not left for
    /// pods.
    pub(crate) hosts_operators: bool,
    /// Mode for the summary (`System`, `User`; `-` where the cloud has none).
    pub(crate) mode: &'static str,
    /// The pool's own taints and labels as the summary and `diff` show them.
    pub(crate) own_taints: Vec<String>,
    pub(crate) own_labels: Vec<String>,
}

impl NodeGroup<'_> {
    /// What one node leaves for pods, by the cloud's model.
    pub(crate) fn allocatable(&self, cloud: &dyn Cloud) -> Option<Allocatable> {
        self.instance.map(|i| cloud.allocatable(i))
    }
}

/// Where the operators' pods run, as Helm values keys under the chart's pod settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placement {
    /// The pods' `nodeSelector`.
    pub(crate) node_selector: Vec<(String, String)>,
    /// The pods' `tolerations` (none: the key is left to the chart).
    pub(crate) tolerations: Vec<Value>,
}

impl Placement {
    pub(crate) fn node_selector(&self) -> Value {
        Value::Object(
            self.node_selector
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect(),
        )
    }

    pub(crate) fn tolerations(&self) -> Option<Value> {
        (!self.tolerations.is_empty()).then(|| Value::Array(self.tolerations.clone()))
    }
}

/// A cloud's managed Prometheus, and which collector `monitoring.collector` defaults to there
/// (`docs/monitoring.md`). Each cloud's value cites its provider's documentation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PrometheusFacts {
    /// The managed service, by its provider's name.
    pub(crate) managed: &'static str,
    /// What `monitoring.collector` is when the profile does not say.
    pub(crate) default_collector: Collector,
    /// What raykueue writes for `collector: managed` (`model::monitoring::managed`).
    pub(crate) flavour: ManagedFlavour,
}

/// A cloud's managed Prometheus, by what it reads: which objects or files `monitoring/` holds
/// and what `infra/up.sh` does for it (`docs/monitoring.md`, "Managed Prometheus").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ManagedFlavour {
    /// Azure Monitor: its AKS add-on reads `azmonitoring.coreos.com/v1` ServiceMonitors and
    /// PodMonitors; alerts are an Azure resource (a Prometheus rule group).
    AzureMonitor,
    /// Google Cloud Managed Service for Prometheus: `monitoring.googleapis.com/v1`
    /// PodMonitorings and ClusterRules.
    Google,
    /// Amazon Managed Service for Prometheus: an AWS managed collector's scrape configuration
    /// and a rule groups namespace, both files `up.sh` hands to `aws amp`.
    Amazon,
    /// Alibaba Cloud Managed Service for Prometheus: the Prometheus Operator's kinds, annotated
    /// for its agent's discovery.
    Alibaba,
}

/// What a cloud is whatever its section says: one constant per cloud (`FACTS` in its
/// `mod.rs`), which the [`Cloud`] methods of the same names read, so an impl states each
/// fact once instead of forwarding it.
#[derive(Debug)]
pub(crate) struct Facts {
    /// The profile key of the section (`azure`), also the template folder's name.
    pub(crate) section: &'static str,
    pub(crate) words: &'static Words,
    /// The cloud's managed Prometheus and the default collector (sources in each cloud).
    pub(crate) prometheus: &'static PrometheusFacts,
    /// What one node of a type leaves for pods.
    pub(crate) allocatable: fn(&InstanceType) -> Allocatable,
    /// The catalogue whose current types replace a retired one (RK205); empty where the
    /// catalogue retires none.
    pub(crate) catalogue: &'static [InstanceType],
    /// The hint for an instance type the catalogue lacks (RK201).
    pub(crate) unknown_instance_hint: fn(&str) -> String,
    /// A hint for a flavor label no pool carries, when the cloud sets that label itself on
    /// some nodes (AKS's `accelerator=nvidia`, GKE's `cloud.google.com/gke-accelerator`):
    /// key, value, the pools in words.
    pub(crate) cloud_label_hint: fn(&str, &str, &str) -> Option<String>,
}

/// One cloud, as the rest of raykueue sees it.
pub(crate) trait Cloud: Sync {
    fn facts(&self) -> &'static Facts;

    /// The profile key of the section (`azure`), also the template folder's name.
    fn section(&self) -> &'static str {
        self.facts().section
    }

    fn words(&self) -> &'static Words {
        self.facts().words
    }

    /// The cluster the section names, as the cloud identifies it (AKS: resource group and
    /// name; GKE: project, location and name; EKS and ACK: region and name), in words: two
    /// fleet members with the same key are one cluster.
    fn cluster_key(&self) -> String;

    /// The node pools with what the cloud adds to their nodes.
    fn node_groups(&self) -> Vec<NodeGroup<'_>>;

    /// What one node of this type leaves for pods.
    fn allocatable(&self, instance: &InstanceType) -> Allocatable {
        (self.facts().allocatable)(instance)
    }

    /// Current instance types to suggest for a retired one (RK205).
    fn successors(&self, retired: &InstanceType) -> Vec<&'static InstanceType> {
        successors(self.facts().catalogue, retired)
    }

    /// The hint for an instance type the catalogue lacks (RK201).
    fn unknown_instance_hint(&self, name: &str) -> String {
        (self.facts().unknown_instance_hint)(name)
    }

    /// A hint for a flavor label no pool carries, when the cloud sets that label itself.
    fn cloud_label_hint(&self, key: &str, value: &str, pools: &str) -> Option<String> {
        (self.facts().cloud_label_hint)(key, value, pools)
    }

    /// The cluster's Kubernetes version as the profile pins it, for the checks every cloud
    /// shares.
    fn kubernetes_version(&self) -> Option<&str>;

    /// Whether the section wires an identity to the service account.
    fn has_identity(&self) -> bool;

    /// Where the operators run, or `None` for the charts' defaults.
    fn operator_placement(&self) -> Option<Placement> {
        None
    }

    /// Who advertises `nvidia.com/gpu` on the cloud's GPU nodes when raykueue installs nothing
    /// (`None`: nobody, so raykueue installs NVIDIA's device plugin by default), with a source.
    fn device_plugin(&self) -> Option<&'static str>;

    /// Why raykueue must not install `install` on this cloud, if it must not (RK461).
    fn refuses(&self, install: NvidiaInstall) -> Option<String> {
        match (install, self.device_plugin()) {
            (NvidiaInstall::None, _) | (_, None) => None,
            (install, Some(who)) => Some(format!(
                "{} already runs a device plugin ({who}); {} would be a second one advertising the same GPUs",
                self.words().service,
                if install == NvidiaInstall::GpuOperator {
                    "the NVIDIA GPU Operator"
                } else {
                    "NVIDIA's device plugin chart"
                }
            )),
        }
    }

    /// The service account's workload-identity annotations: (key, value, or `None` while
    /// `up.sh` has to fill it in).
    fn identity_annotations(&self) -> Vec<(&'static str, Option<String>)> {
        Vec::new()
    }

    /// `up.sh` annotates the service account with the identity (AKS, GKE); elsewhere the
    /// cloud's own tooling wires it.
    fn annotates_identity(&self) -> bool {
        false
    }

    /// Labels the pods of a workload-identity service account carry.
    fn identity_pod_labels(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Labels the workloads' namespace needs for the identity wiring (ACK's RRSA webhook acts
    /// only in labelled namespaces).
    fn identity_namespace_labels(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Environment variables every RayJob and Serve application gets from the section.
    fn workload_env(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The values the cloud's script templates read (`templates/infra/<section>/`).
    fn script_context(&self, p: &Profile) -> Value;

    /// Files of `infra/` besides the scripts that the cloud's tools read (eksctl's
    /// ClusterConfig, ACK's request bodies): path → content.
    fn infra_files(&self, _p: &Profile) -> Result<Vec<(String, String)>, Diagnostic> {
        Ok(Vec::new())
    }

    /// Fields of a pool that `raykueue diff` compares besides the ones every cloud has.
    fn pool_fields(&self, _group: &NodeGroup<'_>, _fields: &mut BTreeMap<&'static str, String>) {}

    /// What the cloud's CLI or API would refuse, or what would leave the cluster without what
    /// the rest of the profile relies on (the checks only this cloud has).
    fn own_checks(&self, p: &Profile, out: &mut Findings);

    /// Labels a Topology level can name that the cloud puts on a pool's nodes besides the
    /// pool's `labels` (whose values [`NodeGroup::labels`] has) and Kubernetes' own
    /// (`kubernetes.io/hostname`, `topology.kubernetes.io/{zone,region}`; [`topology_labels`]
    /// adds them): the cloud's physical placement labels, with a source each.
    fn topology_labels(&self, _group: &NodeGroup<'_>) -> Vec<(&'static str, Carried)> {
        Vec::new()
    }

    /// Whether the cloud's autoscaler serves ProvisioningRequests of `class` for the profile's
    /// cluster (the provider's documentation is the source, in each impl).
    fn provisioning(&self, p: &Profile, class: &str) -> Provisioning;

    /// The cloud's managed Prometheus and the default collector (sources in each cloud).
    fn prometheus(&self) -> &'static PrometheusFacts {
        self.facts().prometheus
    }

    /// Whether the pool's nodes come only through ProvisioningRequests (GKE's queued
    /// provisioning).
    fn queued_provisioning(&self, _group: &NodeGroup<'_>) -> bool {
        false
    }
}

/// How a pool's nodes carry a label a Kueue Topology level names (Kueue v0.19.2 drops from a
/// topology-aware flavor every node that lacks a level: `pkg/util/tas/node.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carried {
    /// Every node, a value of its own (`kubernetes.io/hostname`): a domain is one node.
    PerNode,
    /// Every node, one value for the whole pool (its name; the zone of a zonal cluster).
    PerPool,
    /// Every node, with values that vary inside the pool in ways raykueue cannot know (a
    /// physical block, a network layer, the zone of a pool that spans zones).
    Varying,
    /// Only on some set-ups: why it may be missing.
    Uncertain(&'static str),
}

/// Well-known node labels (kubernetes.io/docs/reference/node/node-labels/) every managed
/// service sets: the kubelet's instance type and OS, the cloud provider's region and zone.
pub(crate) const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
pub(crate) const OS_LABEL: &str = "kubernetes.io/os";
pub(crate) const REGION_LABEL: &str = "topology.kubernetes.io/region";
pub(crate) const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// The well-known labels of a Linux node of `instance_type`, which every cloud's pools carry.
pub(crate) fn node_identity_labels(instance_type: &str) -> [(&'static str, &str); 2] {
    [(INSTANCE_TYPE_LABEL, instance_type), (OS_LABEL, "linux")]
}

/// How broad a Topology level is, broadest 0: Kubernetes' region and zone, then each cloud's
/// physical placement labels (`PLACEMENT_LEVELS` of `gcp` and `aws`), the node last. `None`
/// for a label raykueue cannot rank (a pool's own).
pub(crate) fn placement_rank(label: &str) -> Option<u8> {
    match label {
        REGION_LABEL => Some(0),
        ZONE_LABEL => Some(1),
        crate::profile::HOSTNAME_LABEL => Some(9),
        _ => gcp::PLACEMENT_LEVELS
            .iter()
            .chain(aws::PLACEMENT_LEVELS)
            .find(|(l, _)| *l == label)
            .map(|(_, rank)| *rank),
    }
}

/// Every label a Topology level can name on the pool's nodes, with how they carry it: the
/// pool's labels (cloud-set and the profile's, one value per pool), `kubernetes.io/hostname`
/// (set by the kubelet), `topology.kubernetes.io/zone` and `region` (set by every managed
/// service: kubernetes.io/docs/reference/node/node-labels/; per cloud in `docs/capacity.md`),
/// and the cloud's placement labels.
pub(crate) fn topology_labels(
    cloud: &dyn Cloud,
    group: &NodeGroup<'_>,
) -> BTreeMap<String, Carried> {
    let mut out: BTreeMap<String, Carried> = group
        .labels
        .keys()
        .map(|k| (k.clone(), Carried::PerPool))
        .collect();
    out.insert(crate::profile::HOSTNAME_LABEL.into(), Carried::PerNode);
    for k in [ZONE_LABEL, REGION_LABEL] {
        out.entry(k.into()).or_insert(Carried::Varying);
    }
    for (k, c) in cloud.topology_labels(group) {
        out.insert(k.into(), c);
    }
    out
}

/// Whether a cloud's autoscaler serves a ProvisioningRequest class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Provisioning {
    /// Served; when the scale-up is not all-or-nothing there, what to know.
    Served(Option<String>),
    /// Not documented by the provider: why it may not work.
    Undocumented(String),
    /// Not served: why.
    Refused(String),
}

/// The upstream Cluster Autoscaler's ProvisioningRequest classes
/// (kubernetes/autoscaler@cluster-autoscaler-1.35.0 `cluster-autoscaler/FAQ.md`, "Supported
/// ProvisioningClasses").
pub(crate) const CLASS_ATOMIC: &str = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";
pub(crate) const CLASS_CHECK_CAPACITY: &str = "check-capacity.autoscaling.x-k8s.io";
/// GKE's class: flex-start with queued provisioning (Dynamic Workload Scheduler).
pub(crate) const CLASS_GKE_QUEUED: &str = "queued-provisioning.gke.io";

/// Per pool, the fields `raykueue diff` compares (they are in scripts, not objects).
pub(crate) fn pool_fields(cloud: &dyn Cloud) -> Vec<(String, BTreeMap<&'static str, String>)> {
    let field = cloud.words().machine_field;
    cloud
        .node_groups()
        .into_iter()
        .map(|g| {
            let mut f = BTreeMap::new();
            f.insert(field, g.machine.to_owned());
            cloud.pool_fields(&g, &mut f);
            if let Some(c) = g.count {
                f.insert("count", c.to_string());
            }
            if g.size.autoscaled {
                f.insert("min", g.size.min.to_string());
                f.insert("max", g.size.max.to_string());
            }
            if !g.own_taints.is_empty() {
                f.insert("taints", g.own_taints.join(","));
            }
            if !g.own_labels.is_empty() {
                f.insert("labels", g.own_labels.join(","));
            }
            (g.name.to_owned(), f)
        })
        .collect()
}

/// `key=value:Effect`, the CLIs' taint syntax (both `az` and `gcloud` want a value: RK450).
pub(crate) fn taint_word(t: &Taint) -> String {
    format!(
        "{}={}:{}",
        t.key,
        t.value.as_ref().map_or("", |v| v.as_str()),
        t.effect.as_str()
    )
}

/// One node pool of a profile as a cluster made from it runs it: what each of its nodes
/// carries. The e2e tier (`xtask e2e up`) fakes exactly these nodes, so that placement on the
/// faked cluster is placement on the cloud's.
#[derive(Debug, Clone)]
pub struct PoolNodes {
    pub pool: String,
    pub machine: String,
    /// The pool at its largest: `autoscale.max`, else `count`, else the CLI's default.
    pub nodes: u32,
    /// Every label of each node: the pool's own and the cloud's.
    pub labels: BTreeMap<String, String>,
    /// Every taint of each node, as Kubernetes writes it.
    pub taints: Vec<Value>,
    /// What one node leaves for pods (`cpu`, `memory` as Kubernetes writes them; GPUs), when
    /// the catalogue knows the instance type.
    pub allocatable: Option<(String, String, u32)>,
    /// Whether the node advertises `nvidia.com/gpu`.
    pub gpu: bool,
}

/// The node pools of the profile's cloud, largest size (none without a cloud section).
pub fn pool_nodes(profile: &Profile) -> Vec<PoolNodes> {
    let Some(cloud) = profile.cloud() else {
        return Vec::new();
    };
    cloud
        .node_groups()
        .iter()
        .map(|g| PoolNodes {
            pool: g.name.to_string(),
            machine: g.machine.to_string(),
            nodes: g.size.max,
            labels: g.labels.clone(),
            taints: g.taints.iter().map(Taint::to_json).collect(),
            allocatable: g
                .allocatable(cloud)
                .map(|a| (a.cpu.canonical(), a.memory.canonical(), a.gpus)),
            gpu: g.gpu,
        })
        .collect()
}
