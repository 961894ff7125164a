//! AWS EKS: the `aws:` profile section, the EC2 catalogue, the labels and taints EKS nodes carry,
//! and the eksctl ClusterConfig (`infra/eksctl-cluster.yaml`) built as data.
//!
//! KubeRay's EKS guide is console-only; raykueue makes the cluster with eksctl from one file,
//! since the raw `aws eks` path also needs the VPC, subnets and IAM roles made first
//! (`CreateCluster` requires `roleArn` and `resourcesVpcConfig`).

pub(crate) mod catalogue;
pub(crate) mod eksctl;
pub(crate) mod section;

pub(crate) use section::*;

mod checks;

use super::instance::GPU_TAINT_KEY;
use super::{
    Allocatable, CLASS_ATOMIC, CLASS_CHECK_CAPACITY, Carried, Cloud, Facts, InstanceType,
    ManagedFlavour, NodeGroup as SeamGroup, PrometheusFacts, Provisioning, Words, taint_word,
};
use crate::base::diagnostic::{Diagnostic, Findings};
use crate::profile::{
    Collector, LabelValue, NvidiaInstall, Profile, QualifiedName, Taint, TaintEffect,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

const WORDS: Words = Words {
    service: "EKS",
    machine_field: "instanceType",
    machine: "instance type",
    pool: "node group",
    pool_short: "node group",
    cli: "eksctl",
    default_count: None,
    taint_refusal: None,
    count_within_autoscale: true,
    version_example: "\"1.34\"",
    identity_missing: (
        "no Pod Identity association gives its pods AWS permissions",
        "add aws.identity (permissionPolicyArns: the IAM policies eksctl attaches to the role it associates), or set workloadIdentity: false",
    ),
    identity_unused: (
        "`aws.identity` gives the Ray service account AWS permissions, but the profile has no `serviceAccount`: eksctl would have nothing to associate the role with",
        "add `serviceAccount: {name: ...}` (the Ray pods run as it), or remove `aws.identity`",
    ),
    gpu_example: "instanceType g5.xlarge",
    pool_label: EKSCTL_NODEGROUP_LABEL,
    // No placement: the charts' defaults (the GPU taint keeps the operators off GPU nodes).
    operators_pool: "their node group",
    gpu_label: (ACCELERATOR_LABEL, None),
};

/// The GPU label raykueue puts on GPU node groups (EKS adds none); see
/// [`catalogue::accelerator_label_value`].
pub(crate) const ACCELERATOR_LABEL: &str = "k8s.amazonaws.com/accelerator";

/// Labels eksctl sets on every node of a group (eksctl `userdocs/src/usage/dry-run.md`).
pub(crate) const EKSCTL_CLUSTER_LABEL: &str = "alpha.eksctl.io/cluster-name";
pub(crate) const EKSCTL_NODEGROUP_LABEL: &str = "alpha.eksctl.io/nodegroup-name";

/// Instance types whose nodes the AWS cloud provider labels with their network topology,
/// `topology.k8s.aws/network-node-layer-1` … `-3` (1 the top): the types EC2's
/// `DescribeInstanceTopology` answers for (docs.aws.amazon.com/AWSEC2/latest/UserGuide/
/// ec2-instance-topology-prerequisites.html; kubernetes/cloud-provider-aws
/// `pkg/providers/v1/instances_v2.go`, one label per network node). `*` ends a family.
const NETWORK_TOPOLOGY_TYPES: &[&str] = &[
    "g6e.*",
    "g7e.*",
    "hpc6a.48xlarge",
    "hpc6id.32xlarge",
    "hpc7g.*",
    "hpc7a.*",
    "p3dn.24xlarge",
    "p4d.24xlarge",
    "p4de.24xlarge",
    "p5.48xlarge",
    "p5e.48xlarge",
    "p5en.48xlarge",
    "p6e-gb200.36xlarge",
    "trn1.2xlarge",
    "trn1.32xlarge",
    "trn1n.32xlarge",
    "trn2.48xlarge",
    "trn2u.48xlarge",
    "p6-b200.48xlarge",
    "p6-b300.48xlarge",
];
/// The types with a fourth layer, `topology.k8s.aws/network-node-layer-4` (same EC2 page:
/// "Returns 4 network nodes").
const FOUR_LAYER_TYPES: &[&str] = &["p6-b200.48xlarge", "p6-b300.48xlarge"];
/// The placement labels' breadth among Topology levels (`cloud::placement_rank`): the zone ID
/// beside Kubernetes' zone, then network node layer 1 (the top, EC2's
/// `DescribeInstanceTopology`) down to layer 4.
pub(crate) const PLACEMENT_LEVELS: &[(&str, u8)] = &[
    ("topology.k8s.aws/zone-id", 1),
    ("topology.k8s.aws/network-node-layer-1", 2),
    ("topology.k8s.aws/network-node-layer-2", 3),
    ("topology.k8s.aws/network-node-layer-3", 4),
    ("topology.k8s.aws/network-node-layer-4", 5),
];

fn listed(list: &[&str], instance_type: &str) -> bool {
    list.iter().any(|t| match t.strip_suffix('*') {
        Some(family) => instance_type.starts_with(family),
        None => *t == instance_type,
    })
}

/// The Cluster Autoscaler each chart version ships (`charts/cluster-autoscaler/Chart.yaml`
/// `appVersion`, kubernetes/autoscaler at tags cluster-autoscaler-chart-9.35.0 … 9.59.0; the
/// chart moved under `cluster-autoscaler/` at 9.52.0): from the first chart of each CA release.
/// Newest first.
pub(crate) const AUTOSCALER_CHARTS: &[((u64, u64, u64), &str)] = &[
    ((9, 54, 0), "1.35.0"),
    ((9, 53, 0), "1.34.2"),
    ((9, 52, 0), "1.34.1"),
    ((9, 47, 0), "1.33.0"),
    ((9, 45, 0), "1.32.0"),
    ((9, 38, 0), "1.31.0"),
    ((9, 37, 0), "1.30.0"),
    ((9, 35, 0), "1.29.0"),
];

/// The Cluster Autoscaler release raykueue installs for each Kubernetes minor: the autoscaler's
/// README asks for "the latest Cluster Autoscaler release that corresponds to the minor version
/// of Kubernetes" the cluster runs, since it simulates the scheduler of its own minor
/// (kubernetes/autoscaler@cluster-autoscaler-1.35.0 `cluster-autoscaler/README.md`, "Releases").
/// Each row: the minor, the newest chart whose `appVersion` has that minor, and the minor's
/// newest CA tag, which the chart runs through `image.tag` (its README: other versions "may work
/// by overriding the `image`"). Read off the repository's tags at 55c37cd5 (2026-08-22); no
/// chart ships CA 1.36 yet, so 1.36 runs the newest chart.
pub(crate) const AUTOSCALER_RELEASES: &[(u32, &str, &str)] = &[
    (29, "9.36.0", "1.29.5"),
    (30, "9.37.0", "1.30.7"),
    (31, "9.44.0", "1.31.5"),
    (32, "9.46.6", "1.32.7"),
    (33, "9.51.0", "1.33.6"),
    (34, "9.53.0", "1.34.5"),
    (35, "9.59.0", "1.35.2"),
    (36, "9.59.0", "1.36.1"),
];

/// The first Cluster Autoscaler that serves the `autoscaling.x-k8s.io/v1` ProvisioningRequest
/// API Kueue v0.19.2 uses (kubernetes/autoscaler `cluster-autoscaler/apis/config/crd/
/// autoscaling.x-k8s.io_provisioningrequests.yaml` at cluster-autoscaler-1.31.0 and 1.31.1).
const PROVISIONING_V1_SINCE: (u64, u64, u64) = (1, 31, 1);

/// A dotted version's first three numbers (`9.59.0`, `1.35.2`, `9.1.0-rc.1`).
fn triple(v: &str) -> Option<(u64, u64, u64)> {
    let mut parts = v.split(['.', '-']).take(3).map(|n| n.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next()??))
}

/// The Cluster Autoscaler version a chart version ships, when the chart is 9.35.0 or newer.
pub(crate) fn autoscaler_app_version(chart: &str) -> Option<&'static str> {
    let v = triple(chart)?;
    AUTOSCALER_CHARTS
        .iter()
        .find(|(min, _)| v >= *min)
        .map(|(_, app)| *app)
}

/// Whether a Cluster Autoscaler version serves ProvisioningRequest v1.
pub(crate) fn serves_provisioning_v1(ca: &str) -> bool {
    triple(ca).is_some_and(|v| v >= PROVISIONING_V1_SINCE)
}

/// The release of `AUTOSCALER_RELEASES` for a Kubernetes version (`"1.34"`, `"1.34.2"`).
pub(crate) fn autoscaler_release(kubernetes: &str) -> Option<(u32, &'static str, &'static str)> {
    let minor: u32 = kubernetes
        .strip_prefix("1.")?
        .split('.')
        .next()?
        .parse()
        .ok()?;
    AUTOSCALER_RELEASES.iter().find(|r| r.0 == minor).copied()
}

/// What `up.sh` installs for `aws.autoscaler`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AutoscalerInstall {
    /// The chart version.
    pub(crate) chart: String,
    /// `image.tag`, when raykueue picked the release (a pinned chart runs its own).
    pub(crate) image_tag: Option<String>,
    /// The Cluster Autoscaler that runs, when known.
    pub(crate) ca: Option<&'static str>,
}

/// Whether the group's instance type has NVIDIA GPUs.
pub(crate) fn is_gpu_group(group: &NodeGroup) -> bool {
    catalogue::has_nvidia_gpus(&group.instance_type)
}

/// The labels written into the ClusterConfig for a group: the profile's, plus the accelerator
/// label on a GPU group whose model the catalogue knows. A label the profile sets wins.
pub(crate) fn config_labels(group: &NodeGroup) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = group
        .labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(value) = catalogue::instance_type(&group.instance_type)
        .and_then(|t| catalogue::accelerator_label_value(&t.base))
    {
        labels.entry(ACCELERATOR_LABEL.into()).or_insert(value);
    }
    labels
}

/// Every label a node of the group carries that a flavor's `nodeLabels` can match: the
/// ClusterConfig's labels and eksctl's own.
pub(crate) fn node_labels(cluster: &str, group: &NodeGroup) -> BTreeMap<String, String> {
    let mut labels = config_labels(group);
    labels.insert(EKSCTL_CLUSTER_LABEL.into(), cluster.into());
    labels.insert(EKSCTL_NODEGROUP_LABEL.into(), group.name.to_string());
    labels
}

/// The taints written for a group: the profile's, plus `nvidia.com/gpu=present:NoSchedule` on
/// a GPU group that has no `nvidia.com/gpu` taint. EKS itself taints nothing.
pub(crate) fn node_taints(group: &NodeGroup) -> Vec<Taint> {
    let mut taints = group.taints.clone();
    if is_gpu_group(group) && !taints.iter().any(|t| t.key.as_str() == GPU_TAINT_KEY) {
        taints.push(Taint {
            key: QualifiedName(GPU_TAINT_KEY.into()),
            value: Some(LabelValue("present".into())),
            effect: TaintEffect::NoSchedule,
        });
    }
    taints
}

/// The taints of a GPU group that keep eksctl's NVIDIA device plugin pods off its nodes, so
/// they never advertise `nvidia.com/gpu` (eksctl's embedded plugin manifest tolerates only
/// `nvidia.com/gpu:Exists:NoSchedule`, eksctl `pkg/addons/assets/nvidia-device-plugin.yaml`;
/// the guide's `ray.io/node-type` taint blocks it). Only AmazonLinux2023 runs the plugin as a
/// DaemonSet; Bottlerocket runs it on the host.
pub fn taints_blocking_device_plugin(group: &NodeGroup) -> Vec<Taint> {
    if !is_gpu_group(group) || group.ami_family != AmiFamily::AmazonLinux2023 {
        return Vec::new();
    }
    node_taints(group)
        .into_iter()
        .filter(|t| {
            let tolerated = t.key.as_str() == GPU_TAINT_KEY && t.effect == TaintEffect::NoSchedule;
            !tolerated && t.effect != TaintEffect::PreferNoSchedule
        })
        .collect()
}

/// Node allocatable of a catalogued type, by the EKS AMIs' reservation (see
/// [`catalogue::allocatable`]); a type the catalogue lacks has no instance entry, so this only
/// sees catalogued ones.
fn allocatable(instance: &InstanceType) -> Allocatable {
    catalogue::instance_type(instance.name).map_or(
        Allocatable {
            cpu: crate::profile::Quantity::from_units(u64::from(instance.vcpus)),
            memory: crate::profile::Quantity::from_bytes(
                i128::from(instance.memory_gib) * 1024 * 1024 * 1024,
            ),
            gpus: instance.gpus,
        },
        catalogue::allocatable,
    )
}

/// RK201's hint: a close name, else the families the catalogue has.
fn unknown_instance_hint(name: &str) -> String {
    let names = catalogue::INSTANCE_TYPES.iter().map(|t| t.base.name);
    crate::base::diagnostic::did_you_mean(name, names).map_or_else(
        || "the catalogue has the m5, g4dn, g5, g6, g6e, p3, p4d, p4de, p5 and p5en types; check the spelling with `aws ec2 describe-instance-types`".to_string(),
        |s| format!("did you mean `{s}`?"),
    )
}

/// EKS sets no GPU label; raykueue's `k8s.amazonaws.com/accelerator` is on GPU node groups only.
fn cloud_label_hint(key: &str, _value: &str, pools: &str) -> Option<String> {
    (key == ACCELERATOR_LABEL).then(|| format!(
        "EKS sets no GPU label; raykueue labels GPU node groups `{ACCELERATOR_LABEL}=nvidia-<model>` (nvidia-a10g on g5, nvidia-l4 on g6, nvidia-t4 on g4dn); node groups: {pools}. Match a GPU group's value, or add the label to a group's `labels`"
    ))
}

/// Amazon Managed Service for Prometheus
/// (https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-ingest-methods.html): an AWS
/// managed collector (an agentless scraper created with `aws amp create-scraper`) takes a
/// Prometheus scrape configuration, not Kubernetes objects
/// (https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-collector-how-to.html).
/// Default: the Prometheus Operator stack, as on every cloud (`docs/monitoring.md` says why).
const PROMETHEUS: PrometheusFacts = PrometheusFacts {
    managed: "Amazon Managed Service for Prometheus",
    default_collector: Collector::PrometheusOperator,
    flavour: ManagedFlavour::Amazon,
};

/// The facts of the cloud whatever the section says.
const FACTS: Facts = Facts {
    section: "aws",
    words: &WORDS,
    prometheus: &PROMETHEUS,
    allocatable,
    catalogue: &[],
    unknown_instance_hint,
    cloud_label_hint,
};

impl Cloud for Aws {
    fn facts(&self) -> &'static Facts {
        &FACTS
    }

    fn cluster_key(&self) -> String {
        format!("EKS cluster `{}` in `{}`", self.cluster.name, self.region)
    }

    fn kubernetes_version(&self) -> Option<&str> {
        self.cluster.kubernetes_version.as_deref()
    }

    fn has_identity(&self) -> bool {
        self.identity.is_some()
    }

    /// eksctl applies its NVIDIA device plugin to AmazonLinux GPU node groups, tolerating
    /// `nvidia.com/gpu` and each group's taint keys; Bottlerocket runs its own
    /// (eksctl-io/eksctl@v0.230.0 `pkg/eks/tasks.go`, `pkg/addons/device_plugin.go`).
    fn device_plugin(&self) -> Option<&'static str> {
        Some("eksctl's NVIDIA device plugin on AmazonLinux GPU node groups; Bottlerocket's own")
    }

    /// NVIDIA's chart may replace eksctl's (`up.sh` then tells eksctl not to install its own),
    /// except on Bottlerocket GPU groups, which run a plugin of their own; the GPU Operator is
    /// raykueue's on AKS only.
    fn refuses(&self, install: NvidiaInstall) -> Option<String> {
        match install {
            NvidiaInstall::None => None,
            NvidiaInstall::GpuOperator => Some("raykueue installs the NVIDIA GPU Operator on AKS only (over the driver and container toolkit of AKS's node image); on EKS, eksctl's device plugin or NVIDIA's chart serve the GPU AMIs".into()),
            NvidiaInstall::DevicePlugin => self
                .node_pools
                .iter()
                .find(|g| g.ami_family == AmiFamily::Bottlerocket && is_gpu_group(g))
                .map(|g| format!("GPU node group `{}` runs Bottlerocket, which starts its own NVIDIA device plugin: the chart would be a second one on its nodes", g.name)),
        }
    }

    fn own_checks(&self, p: &Profile, out: &mut Findings) {
        checks::run(self, p, out);
    }

    /// The node groups with what eksctl and raykueue put on their nodes.
    fn node_groups(&self) -> Vec<SeamGroup<'_>> {
        self.node_pools
            .iter()
            .enumerate()
            .map(|(index, g)| {
                let mut labels = node_labels(&self.cluster.name, g);
                // Well-known labels the kubelet and the AWS cloud provider set on every node.
                let identity = crate::cloud::node_identity_labels(g.instance_type.as_str());
                for (k, v) in identity
                    .into_iter()
                    .chain([(crate::cloud::REGION_LABEL, self.region.as_str())])
                {
                    labels.insert(k.into(), v.into());
                }
                let taints = node_taints(g);
                SeamGroup {
                    index,
                    name: g.name.as_str(),
                    machine: g.instance_type.as_str(),
                    instance: catalogue::instance_type(&g.instance_type).map(|t| &t.base),
                    gpu: is_gpu_group(g),
                    size: g.size(),
                    count: g.count,
                    autoscale: g.autoscale.as_ref(),
                    pool_taints: &g.taints,
                    labels,
                    own_taints: taints.iter().map(taint_word).collect(),
                    taints,
                    hosts_operators: false,
                    mode: "-",
                    own_labels: config_labels(g)
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect(),
                }
            })
            .collect()
    }

    /// `topology.k8s.aws/zone-id` on every node (kubernetes/cloud-provider-aws
    /// `pkg/providers/v1/well_known_labels.go` `LabelZoneID`), `eks.amazonaws.com/nodegroup` on
    /// the nodes of a managed node group (the group's name), and the network layers on the
    /// instance types EC2 reports a topology for.
    fn topology_labels(&self, group: &SeamGroup<'_>) -> Vec<(&'static str, Carried)> {
        let mut out = vec![
            ("topology.k8s.aws/zone-id", Carried::Varying),
            ("eks.amazonaws.com/nodegroup", Carried::PerPool),
        ];
        if listed(NETWORK_TOPOLOGY_TYPES, group.machine) {
            out.extend([
                ("topology.k8s.aws/network-node-layer-1", Carried::Varying),
                ("topology.k8s.aws/network-node-layer-2", Carried::Varying),
                ("topology.k8s.aws/network-node-layer-3", Carried::Varying),
            ]);
        }
        if listed(FOUR_LAYER_TYPES, group.machine) {
            out.push(("topology.k8s.aws/network-node-layer-4", Carried::Varying));
        }
        out
    }

    /// The upstream Cluster Autoscaler raykueue installs (`aws.autoscaler`) serves both upstream
    /// classes once `--enable-provisioning-requests` is on (kubernetes/autoscaler@cluster-
    /// autoscaler-1.35.0 `cluster-autoscaler/FAQ.md`); EKS Auto Mode and Karpenter serve none
    /// (kubernetes-sigs/kueue#5133). AWS node groups do not scale atomically: the AWS provider's
    /// `AtomicIncreaseSize` returns not-implemented (`cloudprovider/aws/aws_cloud_provider.go`
    /// at the same tag), and the FAQ says the scale-up then "doesn't guarantee atomicity".
    fn provisioning(&self, _p: &Profile, class: &str) -> Provisioning {
        match class {
            CLASS_ATOMIC => Provisioning::Served(Some(
                "on EKS the scale-up is not all-or-nothing: the AWS provider of the Cluster Autoscaler does not implement AtomicIncreaseSize, so a request may get part of its nodes".into(),
            )),
            CLASS_CHECK_CAPACITY => Provisioning::Served(None),
            _ => Provisioning::Refused(format!(
                "the Cluster Autoscaler raykueue installs on EKS serves `{CLASS_ATOMIC}` and `{CLASS_CHECK_CAPACITY}`, not `{class}`"
            )),
        }
    }

    fn script_context(&self, p: &Profile) -> Value {
        serde_json::to_value(AwsCtx {
            region: self.region.to_string(),
            cluster: self.cluster.name.to_string(),
            autoscaler: self.autoscaler.as_ref().zip(self.autoscaler_install()).map(
                |(a, install)| AutoscalerCtx {
                    repo: a.repo.to_string(),
                    chart: a.chart.to_string(),
                    version: install.chart,
                    image_tag: install.image_tag,
                    namespace: eksctl::AUTOSCALER_NAMESPACE,
                    service_account: eksctl::AUTOSCALER_SERVICE_ACCOUNT,
                },
            ),
            identity: self.ray_identity(p).map(|r| IdentityCtx {
                namespace: r.namespace.to_owned(),
                service_account: r.service_account.to_owned(),
            }),
            provisioning: self.provisioning_ctx(p),
        })
        .unwrap_or_default()
    }

    /// `infra/eksctl-cluster.yaml`.
    fn infra_files(&self, p: &Profile) -> Result<Vec<(String, String)>, Diagnostic> {
        let config = eksctl::cluster_config(self, self.ray_identity(p));
        let yaml = crate::base::yaml::to_yaml(&config)?;
        Ok(vec![(
            eksctl::FILE.to_owned(),
            format!("{}{yaml}", crate::base::yaml::HEADER),
        )])
    }
}

impl Aws {
    /// The Cluster Autoscaler chart and version `up.sh` installs: the pinned chart, or the
    /// release for the cluster's Kubernetes minor. `None` without `aws.autoscaler`, or when
    /// neither a pin nor a known minor says which (RK438).
    pub(crate) fn autoscaler_install(&self) -> Option<AutoscalerInstall> {
        let a = self.autoscaler.as_ref()?;
        if let Some(pinned) = &a.version {
            return Some(AutoscalerInstall {
                chart: pinned.to_string(),
                image_tag: None,
                ca: autoscaler_app_version(pinned),
            });
        }
        let (_, chart, ca) = autoscaler_release(self.cluster.kubernetes_version.as_deref()?)?;
        Some(AutoscalerInstall {
            chart: chart.to_owned(),
            image_tag: Some(format!("v{ca}")),
            ca: Some(ca),
        })
    }

    /// What `up.sh` installs for ProvisioningRequest checks: the CRD from the Cluster
    /// Autoscaler's own tag (the chart does not install it: kubernetes/autoscaler
    /// @cluster-autoscaler-chart-9.59.0 `charts/cluster-autoscaler/` has no `crds/`), before
    /// Kueue, which looks for it only when it starts; and the flags that turn the autoscaler's
    /// support on (`--enable-provisioning-requests`, and the JSON content type the FAQ asks for).
    fn provisioning_ctx(&self, p: &Profile) -> Option<ProvisioningCtx> {
        let used = p.admission_checks.iter().any(|c| {
            p.queues.iter().flat_map(|q| &q.cluster_queues).any(|cq| {
                cq.admission_checks
                    .iter()
                    .any(|r| r.name() == c.name.as_str())
            })
        });
        let ca = self
            .autoscaler_install()?
            .ca
            .filter(|ca| serves_provisioning_v1(ca))?;
        used.then(|| ProvisioningCtx {
            crd_url: format!(
                "https://raw.githubusercontent.com/kubernetes/autoscaler/cluster-autoscaler-{ca}/cluster-autoscaler/apis/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml"
            ),
            autoscaler_version: ca,
        })
    }

    /// The Ray service account the Pod Identity association names: only when the profile has
    /// one marked `workloadIdentity` and `aws.identity` is set.
    fn ray_identity<'p>(&self, p: &'p Profile) -> Option<eksctl::RayIdentity<'p>> {
        let sa = p.service_account.as_ref()?;
        (sa.workload_identity && self.identity.is_some()).then(|| eksctl::RayIdentity {
            namespace: p.namespace.as_str(),
            service_account: sa.name.as_str(),
        })
    }
}

/// The values of `templates/infra/aws/`.
#[derive(Serialize)]
struct AwsCtx {
    region: String,
    cluster: String,
    autoscaler: Option<AutoscalerCtx>,
    /// The Pod Identity association eksctl makes, which `verify.sh` checks.
    identity: Option<IdentityCtx>,
    /// ProvisioningRequest support in the Cluster Autoscaler, when a check needs it.
    provisioning: Option<ProvisioningCtx>,
}

#[derive(Serialize)]
struct ProvisioningCtx {
    crd_url: String,
    autoscaler_version: &'static str,
}

#[derive(Serialize)]
struct AutoscalerCtx {
    repo: String,
    chart: String,
    version: String,
    /// The CA image the chart runs, when raykueue picked the release for the cluster's minor.
    image_tag: Option<String>,
    namespace: &'static str,
    service_account: &'static str,
}

#[derive(Serialize)]
struct IdentityCtx {
    namespace: String,
    service_account: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(instance_type: &str, ami: AmiFamily, taints: Vec<Taint>) -> NodeGroup {
        NodeGroup {
            name: NodeGroupName("gpu-node-group".into()),
            instance_type: Ec2InstanceType(instance_type.into()),
            ami_family: ami,
            volume_size: None,
            count: Some(1),
            autoscale: None,
            labels: BTreeMap::new(),
            taints,
        }
    }

    fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
        Taint {
            key: QualifiedName(key.into()),
            value: Some(LabelValue(value.into())),
            effect,
        }
    }

    fn aws(kubernetes: Option<&str>, pinned: Option<&str>) -> Aws {
        serde_json::from_value(serde_json::json!({
            "region": "us-west-2",
            "cluster": {"name": "c", "kubernetesVersion": kubernetes},
            "nodePools": [{"name": "g", "instanceType": "m5.xlarge", "count": 1}],
            "autoscaler": {"version": pinned},
        }))
        .unwrap()
    }

    #[test]
    fn the_autoscaler_follows_the_cluster_minor_unless_pinned() {
        let picked = aws(Some("1.33"), None).autoscaler_install().unwrap();
        assert_eq!(
            (
                picked.chart.as_str(),
                picked.image_tag.as_deref(),
                picked.ca
            ),
            ("9.51.0", Some("v1.33.6"), Some("1.33.6"))
        );
        let patch = aws(Some("1.35.1"), None).autoscaler_install().unwrap();
        assert_eq!(patch.image_tag.as_deref(), Some("v1.35.2"));
        let pinned = aws(Some("1.33"), Some("9.59.0"))
            .autoscaler_install()
            .unwrap();
        assert_eq!(
            (pinned.chart.as_str(), pinned.image_tag, pinned.ca),
            ("9.59.0", None, Some("1.35.0"))
        );
        assert_eq!(aws(None, None).autoscaler_install(), None);
        assert_eq!(aws(Some("1.40"), None).autoscaler_install(), None);
    }

    /// The two tables agree: each minor's chart ships that minor's CA (but 1.36, which no chart
    /// ships yet), and the picked CA is of that minor.
    #[test]
    fn each_release_row_names_a_chart_of_its_minor() {
        for &(minor, chart, ca) in AUTOSCALER_RELEASES {
            assert!(ca.starts_with(&format!("1.{minor}.")), "{minor}: {ca}");
            let shipped = autoscaler_app_version(chart).unwrap();
            if minor == 36 {
                assert_eq!(shipped, "1.35.0");
            } else {
                assert!(
                    shipped.starts_with(&format!("1.{minor}.")),
                    "{chart}: {shipped}"
                );
            }
        }
        assert!(!serves_provisioning_v1("1.31.0") && serves_provisioning_v1("1.31.1"));
    }

    #[test]
    fn gpu_groups_get_the_accelerator_label_and_the_gpu_taint() {
        let g = group("g5.xlarge", AmiFamily::AmazonLinux2023, vec![]);
        let labels = node_labels("c", &g);
        assert_eq!(labels[ACCELERATOR_LABEL], "nvidia-a10g");
        assert_eq!(labels[EKSCTL_NODEGROUP_LABEL], "gpu-node-group");
        assert_eq!(
            node_taints(&g),
            vec![taint(GPU_TAINT_KEY, "present", TaintEffect::NoSchedule)]
        );
        let cpu = group("m5.xlarge", AmiFamily::AmazonLinux2023, vec![]);
        assert!(!config_labels(&cpu).contains_key(ACCELERATOR_LABEL));
        assert!(node_taints(&cpu).is_empty());
    }

    #[test]
    fn a_label_or_taint_the_profile_sets_is_kept() {
        let mut g = group(
            "g5.xlarge",
            AmiFamily::AmazonLinux2023,
            vec![taint(GPU_TAINT_KEY, "true", TaintEffect::NoSchedule)],
        );
        g.labels.insert(
            QualifiedName(ACCELERATOR_LABEL.into()),
            LabelValue("a10g".into()),
        );
        assert_eq!(config_labels(&g)[ACCELERATOR_LABEL], "a10g");
        assert_eq!(node_taints(&g).len(), 1);
        assert_eq!(node_taints(&g)[0].value.as_deref(), Some("true"));
    }

    #[test]
    fn the_guides_taint_blocks_the_device_plugin_on_amazon_linux_only() {
        let guide = taint("ray.io/node-type", "worker", TaintEffect::NoSchedule);
        let al = group("g5.xlarge", AmiFamily::AmazonLinux2023, vec![guide.clone()]);
        assert_eq!(taints_blocking_device_plugin(&al), vec![guide.clone()]);
        let br = group("g5.xlarge", AmiFamily::Bottlerocket, vec![guide.clone()]);
        assert!(taints_blocking_device_plugin(&br).is_empty());
        let plain = group("g5.xlarge", AmiFamily::AmazonLinux2023, vec![]);
        assert!(taints_blocking_device_plugin(&plain).is_empty());
        let cpu = group("m5.xlarge", AmiFamily::AmazonLinux2023, vec![guide]);
        assert!(taints_blocking_device_plugin(&cpu).is_empty());
    }
}
