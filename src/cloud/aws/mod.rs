//! AWS EKS: the `aws:` profile section, the EC2 catalogue, the labels and taints EKS nodes carry,
//! and the eksctl ClusterConfig (`infra/eksctl-cluster.yaml`) built as data.
//!
//! KubeRay's EKS guide is console-only; raykueue makes the cluster with eksctl from one file,
//! since the raw `aws eks` path also needs the VPC, subnets and IAM roles made first
//! (`CreateCluster` requires `roleArn` and `resourcesVpcConfig`).

pub mod catalogue;
pub mod eksctl;
pub mod section;

pub use section::*;

mod checks;

use super::instance::GPU_TAINT_KEY;
use super::{Allocatable, Cloud, InstanceType, NodeGroup as SeamGroup, Words, taint_word};
use crate::base::diagnostic::{Diagnostic, Findings};
use crate::profile::{LabelValue, NvidiaInstall, Profile, QualifiedName, Taint, TaintEffect};
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
/// they never advertise `nvidia.com/gpu` (CLOUDS.md §1.4; the guide's `ray.io/node-type` taint
/// does this). Only AmazonLinux2023 runs the plugin as a DaemonSet; Bottlerocket runs it on the
/// host.
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

impl Cloud for Aws {
    fn cluster_key(&self) -> String {
        format!("EKS cluster `{}` in `{}`", self.cluster.name, self.region)
    }

    fn section(&self) -> &'static str {
        "aws"
    }

    fn words(&self) -> &'static Words {
        &WORDS
    }

    fn allocatable(&self, instance: &InstanceType) -> Allocatable {
        allocatable(instance)
    }

    fn unknown_instance_hint(&self, name: &str) -> String {
        unknown_instance_hint(name)
    }

    fn cloud_label_hint(&self, key: &str, value: &str, pools: &str) -> Option<String> {
        cloud_label_hint(key, value, pools)
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
                for (k, v) in [
                    ("node.kubernetes.io/instance-type", g.instance_type.as_str()),
                    ("kubernetes.io/os", "linux"),
                    ("topology.kubernetes.io/region", self.region.as_str()),
                ] {
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

    fn script_context(&self, p: &Profile) -> Value {
        serde_json::to_value(AwsCtx {
            region: self.region.to_string(),
            cluster: self.cluster.name.to_string(),
            autoscaler: self.autoscaler.as_ref().map(|a| AutoscalerCtx {
                repo: a.repo.to_string(),
                chart: a.chart.to_string(),
                version: a.version.to_string(),
                namespace: eksctl::AUTOSCALER_NAMESPACE,
                service_account: eksctl::AUTOSCALER_SERVICE_ACCOUNT,
            }),
            identity: self.ray_identity(p).map(|r| IdentityCtx {
                namespace: r.namespace.to_owned(),
                service_account: r.service_account.to_owned(),
            }),
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
}

#[derive(Serialize)]
struct AutoscalerCtx {
    repo: String,
    chart: String,
    version: String,
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
