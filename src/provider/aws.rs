//! AWS EKS: the `aws:` profile section, the EC2 catalogue, the labels and taints EKS nodes carry,
//! and the eksctl ClusterConfig (`infra/eksctl-cluster.yaml`) built as data.
//!
//! KubeRay's EKS guide is console-only; raykueue makes the cluster with eksctl from one file,
//! since the raw `aws eks` path also needs the VPC, subnets and IAM roles made first
//! (`CreateCluster` requires `roleArn` and `resourcesVpcConfig`).

pub mod catalogue;
pub mod eksctl;
pub mod profile;

pub use profile::*;

use crate::profile::{LabelValue, QualifiedName, Taint, TaintEffect};
use std::collections::BTreeMap;

/// The GPU label raykueue puts on GPU node groups (EKS adds none); see
/// [`catalogue::accelerator_label_value`].
pub const ACCELERATOR_LABEL: &str = "k8s.amazonaws.com/accelerator";

/// The taint raykueue puts on GPU node groups: the one eksctl's NVIDIA device plugin DaemonSet
/// tolerates (eksctl-io/eksctl@99984adb `pkg/addons/assets/nvidia-device-plugin.yaml`:
/// `nvidia.com/gpu`, `Exists`, `NoSchedule`), the one GKE sets itself, and the one Kubernetes'
/// ExtendedResourceToleration admission plugin tolerates for pods that request `nvidia.com/gpu`.
pub const GPU_TAINT_KEY: &str = "nvidia.com/gpu";

/// Labels eksctl sets on every node of a group (eksctl `userdocs/src/usage/dry-run.md`).
const EKSCTL_CLUSTER_LABEL: &str = "alpha.eksctl.io/cluster-name";
const EKSCTL_NODEGROUP_LABEL: &str = "alpha.eksctl.io/nodegroup-name";

/// Whether the group's instance type has NVIDIA GPUs.
pub fn is_gpu_group(group: &NodeGroup) -> bool {
    catalogue::has_nvidia_gpus(&group.instance_type)
}

/// The labels written into the ClusterConfig for a group: the profile's, plus the accelerator
/// label on a GPU group whose model the catalogue knows. A label the profile sets wins.
pub fn config_labels(group: &NodeGroup) -> BTreeMap<String, String> {
    let mut labels: BTreeMap<String, String> = group
        .labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if let Some(value) =
        catalogue::instance_type(&group.instance_type).and_then(catalogue::accelerator_label_value)
    {
        labels.entry(ACCELERATOR_LABEL.into()).or_insert(value);
    }
    labels
}

/// Every label a node of the group carries that a flavor's `nodeLabels` can match: the
/// ClusterConfig's labels and eksctl's own.
pub fn node_labels(cluster: &str, group: &NodeGroup) -> BTreeMap<String, String> {
    let mut labels = config_labels(group);
    labels.insert(EKSCTL_CLUSTER_LABEL.into(), cluster.into());
    labels.insert(EKSCTL_NODEGROUP_LABEL.into(), group.name.to_string());
    labels
}

/// The taints written for a group: the profile's, plus `nvidia.com/gpu=present:NoSchedule` on
/// a GPU group that has no `nvidia.com/gpu` taint. EKS itself taints nothing.
pub fn node_taints(group: &NodeGroup) -> Vec<Taint> {
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
