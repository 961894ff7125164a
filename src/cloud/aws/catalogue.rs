//! Built-in facts about EC2 instance types that the capacity rules and the ClusterConfig need:
//! vCPU, memory, NVIDIA GPUs and their model, the pod limit the EKS AMI gives the kubelet, and
//! what EKS leaves allocatable on a node.
//!
//! Sources (numbers only are carried over):
//! - vCPU, memory (GiB) and GPU count: the Cluster Autoscaler's static EC2 list,
//!   kubernetes/autoscaler@55c37cd5 `cluster-autoscaler/cloudprovider/aws/ec2_instance_types.go`
//!   (StaticListLastUpdateTime 2026-01-22).
//! - GPU model: eksctl-io/eksctl@99984adb `pkg/utils/instance/instance_types.go`
//!   (`NvidiaGPUType`); eksctl leaves it blank for `g4dn.metal` and the `p3` family, whose
//!   models (T4, V100) are the family's, as AWS names them.
//! - Max pods: awslabs/amazon-eks-ami `nodeadm/internal/kubelet/eni-max-pods.txt`
//!   (`# of ENI × (IPv4 per ENI − 1) + 2`, the VPC CNI's default).
//!
//! `p5e.48xlarge` is left out: the autoscaler's list does not have it. A type missing here is
//! not an error: the rules warn and skip their capacity checks for it.

use crate::cloud::instance::{Allocatable, InstanceType};
use crate::profile::quantity::Quantity;

/// One EC2 instance type: the seam's facts (GPU model as eksctl and AWS name it) and the pod
/// limit the EKS AMIs give the kubelet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ec2Type {
    pub(crate) base: InstanceType,
    /// The kubelet's `maxPods` on the EKS AMIs (the VPC CNI's ENI limit).
    pub(crate) max_pods: u32,
}

const fn cpu(name: &'static str, vcpus: u32, memory_gib: u32, max_pods: u32) -> Ec2Type {
    Ec2Type {
        base: crate::cloud::instance::cpu(name, vcpus, memory_gib),
        max_pods,
    }
}

const fn gpu(
    name: &'static str,
    vcpus: u32,
    memory_gib: u32,
    gpus: u32,
    gpu_model: &'static str,
    max_pods: u32,
) -> Ec2Type {
    Ec2Type {
        base: crate::cloud::instance::gpu(name, vcpus, memory_gib, gpus, gpu_model),
        max_pods,
    }
}

/// The catalogue, by family.
pub(crate) const INSTANCE_TYPES: &[Ec2Type] = &[
    // m5: the guide's CPU node group.
    cpu("m5.large", 2, 8, 29),
    cpu("m5.xlarge", 4, 16, 58),
    cpu("m5.2xlarge", 8, 32, 58),
    cpu("m5.4xlarge", 16, 64, 234),
    // g4dn: NVIDIA T4.
    gpu("g4dn.xlarge", 4, 16, 1, "T4", 29),
    gpu("g4dn.2xlarge", 8, 32, 1, "T4", 29),
    gpu("g4dn.4xlarge", 16, 64, 1, "T4", 29),
    gpu("g4dn.8xlarge", 32, 128, 1, "T4", 58),
    gpu("g4dn.12xlarge", 48, 192, 4, "T4", 234),
    gpu("g4dn.16xlarge", 64, 256, 1, "T4", 58),
    gpu("g4dn.metal", 96, 384, 8, "T4", 737),
    // g5: NVIDIA A10G; the guide's GPU node group is g5.xlarge.
    gpu("g5.xlarge", 4, 16, 1, "A10G", 58),
    gpu("g5.2xlarge", 8, 32, 1, "A10G", 58),
    gpu("g5.4xlarge", 16, 64, 1, "A10G", 234),
    gpu("g5.8xlarge", 32, 128, 1, "A10G", 234),
    gpu("g5.12xlarge", 48, 192, 4, "A10G", 737),
    gpu("g5.16xlarge", 64, 256, 1, "A10G", 234),
    gpu("g5.24xlarge", 96, 384, 4, "A10G", 737),
    gpu("g5.48xlarge", 192, 768, 8, "A10G", 345),
    // g6: NVIDIA L4.
    gpu("g6.xlarge", 4, 16, 1, "L4", 58),
    gpu("g6.2xlarge", 8, 32, 1, "L4", 58),
    gpu("g6.4xlarge", 16, 64, 1, "L4", 234),
    gpu("g6.8xlarge", 32, 128, 1, "L4", 234),
    gpu("g6.12xlarge", 48, 192, 4, "L4", 234),
    gpu("g6.16xlarge", 64, 256, 1, "L4", 737),
    gpu("g6.24xlarge", 96, 384, 4, "L4", 737),
    gpu("g6.48xlarge", 192, 768, 8, "L4", 737),
    // g6e: NVIDIA L40S.
    gpu("g6e.xlarge", 4, 32, 1, "L40S", 58),
    gpu("g6e.2xlarge", 8, 64, 1, "L40S", 58),
    gpu("g6e.4xlarge", 16, 128, 1, "L40S", 234),
    gpu("g6e.8xlarge", 32, 256, 1, "L40S", 234),
    gpu("g6e.12xlarge", 48, 384, 4, "L40S", 292),
    gpu("g6e.16xlarge", 64, 512, 1, "L40S", 737),
    gpu("g6e.24xlarge", 96, 768, 4, "L40S", 492),
    gpu("g6e.48xlarge", 192, 1536, 8, "L40S", 492),
    // p3: NVIDIA V100.
    gpu("p3.2xlarge", 8, 61, 1, "V100", 58),
    gpu("p3.8xlarge", 32, 244, 4, "V100", 234),
    gpu("p3.16xlarge", 64, 488, 8, "V100", 234),
    // p4d / p4de: NVIDIA A100 (40 GB / 80 GB).
    gpu("p4d.24xlarge", 96, 1152, 8, "A100", 737),
    gpu("p4de.24xlarge", 96, 1152, 8, "A100", 737),
    // p5 / p5en: NVIDIA H100 / H200.
    gpu("p5.4xlarge", 16, 256, 1, "H100", 118),
    gpu("p5.48xlarge", 192, 2048, 8, "H100", 100),
    gpu("p5en.48xlarge", 192, 2048, 8, "H200", 198),
];

/// The catalogue entry of an instance type (EC2 names are lowercase and compared exactly).
pub(crate) fn instance_type(name: &str) -> Option<&'static Ec2Type> {
    INSTANCE_TYPES.iter().find(|t| t.base.name == name)
}

/// The EC2 families with NVIDIA GPUs (those of the catalogue, plus `p5e`, whose H200 eksctl
/// lists): the one definition of "a GPU node group" for a type this catalogue lacks. A type in
/// the catalogue says so itself.
const NVIDIA_FAMILIES: &[&str] = &[
    "g4dn", "g5", "g6", "g6e", "p3", "p4d", "p4de", "p5", "p5e", "p5en",
];

/// Whether nodes of this type advertise `nvidia.com/gpu`.
pub(crate) fn has_nvidia_gpus(name: &str) -> bool {
    if let Some(t) = instance_type(name) {
        return t.base.gpus > 0;
    }
    name.split_once('.')
        .is_some_and(|(family, _)| NVIDIA_FAMILIES.contains(&family))
}

/// The value raykueue gives the `k8s.amazonaws.com/accelerator` label on a GPU node group:
/// `nvidia-` and the model in lowercase (`nvidia-a10g`). EKS sets no GPU label itself; this key
/// is the one the Cluster Autoscaler's AWS provider reads as the GPU label
/// (kubernetes/autoscaler@55c37cd5 `cloudprovider/aws/aws_cloud_provider.go` `GPULabel`), and
/// its README recommends setting it so that the autoscaler does not over-scale while the device
/// plugin starts. The value is free-form; this spelling follows the README's `nvidia-tesla-k80`.
pub(crate) fn accelerator_label_value(t: &InstanceType) -> Option<String> {
    (t.gpus > 0).then(|| format!("nvidia-{}", t.gpu_model.to_ascii_lowercase()))
}

/// What EKS leaves for pods on one node of this type (node allocatable), as the EKS AMIs'
/// `nodeadm` computes kube-reserved (awslabs/amazon-eks-ami
/// `nodeadm/internal/kubelet/config.go`, `getCPUMillicoresToReserve`,
/// `GetMemoryMebibytesToReserve`, `defaultKubeletSubConfig`):
/// - CPU: 6 % of the first core, 1 % of the second, 0.5 % of cores 3 and 4, 0.25 % of every
///   core above 4.
/// - Memory: `11 MiB × maxPods + 255 MiB`, plus the `memory.available<100Mi` hard eviction
///   threshold.
/// - GPUs: all of them.
///
/// The memory is the instance's nominal memory; the kernel keeps some of it, and daemon sets
/// (VPC CNI, kube-proxy, the device plugin) take their share of the rest, so a pod that fits
/// here by a few hundred MiB may still not fit in practice.
pub(crate) fn allocatable(t: &Ec2Type) -> Allocatable {
    let max_pods = t.max_pods;
    let t = &t.base;
    let milli = i128::from(t.vcpus) * 1000;
    // (range end in millicores, reservation in hundredths of a percent) as nodeadm writes it.
    let bands: [(i128, i128); 4] = [(1000, 600), (2000, 100), (4000, 50), (i128::MAX, 25)];
    let mut start = 0;
    let mut reserved_milli = 0;
    for (end, per_10000) in bands {
        if milli > start {
            reserved_milli += (milli.min(end) - start) * per_10000 / 10_000;
        }
        start = end;
    }
    let mib: i128 = 1024 * 1024;
    let memory = i128::from(t.memory_gib) * 1024 * mib;
    let kube_reserved = (11 * i128::from(max_pods) + 255) * mib;
    let eviction = 100 * mib;
    Allocatable {
        cpu: Quantity::from_nanos((milli - reserved_milli).max(0) * 1_000_000),
        memory: Quantity::from_bytes((memory - kube_reserved - eviction).max(0)),
        gpus: t.gpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guides_node_groups_are_in_the_catalogue() {
        // KubeRay's EKS guide: CPU m5.xlarge (4 vCPU, 16 GB), GPU g5.xlarge (1 GPU, 4 vCPU, 16 GB).
        let m5 = &instance_type("m5.xlarge").unwrap().base;
        assert_eq!((m5.vcpus, m5.memory_gib, m5.gpus), (4, 16, 0));
        let g5 = &instance_type("g5.xlarge").unwrap().base;
        assert_eq!(
            (g5.vcpus, g5.memory_gib, g5.gpus, g5.gpu_model),
            (4, 16, 1, "A10G")
        );
        assert_eq!(accelerator_label_value(g5).as_deref(), Some("nvidia-a10g"));
        assert_eq!(accelerator_label_value(m5), None);
    }

    #[test]
    fn names_are_unique_and_gpu_types_name_their_model() {
        let mut names: Vec<_> = INSTANCE_TYPES.iter().map(|t| t.base.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INSTANCE_TYPES.len());
        for t in INSTANCE_TYPES {
            let b = &t.base;
            assert_eq!(b.gpus > 0, !b.gpu_model.is_empty(), "{}", b.name);
            assert!(t.max_pods > 0, "{}", b.name);
        }
    }

    #[test]
    fn gpu_types_outside_the_catalogue_are_known_by_family() {
        assert!(has_nvidia_gpus("g5.xlarge"));
        assert!(
            has_nvidia_gpus("p5e.48xlarge"),
            "not in the catalogue, NVIDIA family"
        );
        assert!(!has_nvidia_gpus("m5.xlarge"));
        assert!(!has_nvidia_gpus("g4ad.xlarge"), "AMD Radeon family");
        assert!(!has_nvidia_gpus("inf2.xlarge"), "Inferentia, not NVIDIA");
        assert!(!has_nvidia_gpus("nodot"));
    }

    #[test]
    fn allocatable_follows_nodeadm() {
        // m5.xlarge: 4 cores → 60 + 10 + 5 + 5 = 80m reserved; 58 pods → 11·58 + 255 = 893 MiB,
        // plus 100 MiB eviction.
        let a = allocatable(instance_type("m5.xlarge").unwrap());
        assert_eq!(a.cpu, Quantity::from_nanos(3_920 * 1_000_000));
        assert_eq!(
            a.memory,
            Quantity::from_bytes((16 * 1024 - 893 - 100) * 1024 * 1024)
        );
        assert_eq!(a.gpus, 0);
        // g5.48xlarge: 192 cores → 80m + 188 × 2.5m = 550m.
        let a = allocatable(instance_type("g5.48xlarge").unwrap());
        assert_eq!(a.cpu, Quantity::from_nanos((192_000 - 550) * 1_000_000));
        assert_eq!(a.gpus, 8);
    }
}
