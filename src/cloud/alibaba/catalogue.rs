//! Built-in facts about Alibaba Cloud ECS GPU instance types (and the general-purpose types a
//! CPU pool uses): vCPU, memory, NVIDIA GPUs, GPU model and the value ACK gives the
//! `aliyun.accelerator/nvidia_name` node label.
//!
//! Source of the GPU types: Alibaba Cloud's ECS "GPU计算型实例规格族" tables (gn6i, gn7i, gn7,
//! gn7e; help.aliyun.com, ECS instance families); where the English and Chinese
//! tables differ (gn7: 95/380/760 vs 94/378/756 GiB) the smaller, Chinese figure is kept.
//! Families not collected there (gn7s, gn6v, gn6e, gn8is, the H series) are left out; a type
//! missing here is not an error: the rules warn and skip their capacity checks for it.
//!
//! Allocatable: ACK's default reservation formula could not be confirmed from a source here,
//! so [`allocatable`] is the node's capacity — an upper bound. A pod larger than it can never
//! run; a pod just under it may still not fit.

use crate::cloud::instance::{Allocatable, InstanceType};
use crate::profile::quantity::Quantity;

/// One ECS instance type: the seam's facts and the GPU label value ACK gives its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EcsType {
    pub(crate) base: InstanceType,
    /// The `aliyun.accelerator/nvidia_name` value ACK gives these nodes: the GPU's product
    /// name as `nvidia-smi` prints it, spaces turned into `-` (`Tesla-T4`, `NVIDIA-A10`;
    /// the Cluster Autoscaler's alicloud `GPULabel`, kubernetes/autoscaler
    /// `cluster-autoscaler/cloudprovider/alicloud/alicloud_cloud_provider.go`; a node of
    /// ecs.gn7i-c8g1.2xlarge labelled `NVIDIA-A10` in ACK's GPU docs). `None` where no source
    /// shows it (the A100 families: SXM4 or PCIe, 40 or 80 GB); a flavor can then match only
    /// the GPU count label.
    pub(crate) nvidia_name: Option<&'static str>,
}

const fn cpu(name: &'static str, vcpus: u32, memory_gib: u32) -> EcsType {
    EcsType {
        base: crate::cloud::instance::cpu(name, vcpus, memory_gib),
        nvidia_name: None,
    }
}

const fn t4(name: &'static str, vcpus: u32, memory_gib: u32, gpus: u32) -> EcsType {
    EcsType {
        base: crate::cloud::instance::gpu(name, vcpus, memory_gib, gpus, "T4"),
        nvidia_name: Some("Tesla-T4"),
    }
}

const fn a10(name: &'static str, vcpus: u32, memory_gib: u32, gpus: u32) -> EcsType {
    EcsType {
        base: crate::cloud::instance::gpu(name, vcpus, memory_gib, gpus, "A10"),
        nvidia_name: Some("NVIDIA-A10"),
    }
}

const fn a100(
    name: &'static str,
    vcpus: u32,
    memory_gib: u32,
    gpus: u32,
    gpu_model: &'static str,
) -> EcsType {
    EcsType {
        base: crate::cloud::instance::gpu(name, vcpus, memory_gib, gpus, gpu_model),
        nvidia_name: None,
    }
}

/// The catalogue, by family.
pub(crate) const INSTANCE_TYPES: &[EcsType] = &[
    // g7: general purpose, 4 GiB per vCPU, for CPU pools (the figures agree across several public
    // ECS spec tables, none of them Alibaba's own page).
    cpu("ecs.g7.xlarge", 4, 16),
    cpu("ecs.g7.2xlarge", 8, 32),
    cpu("ecs.g7.4xlarge", 16, 64),
    // gn6i: NVIDIA T4 16 GB.
    t4("ecs.gn6i-c4g1.xlarge", 4, 15, 1),
    t4("ecs.gn6i-c8g1.2xlarge", 8, 31, 1),
    t4("ecs.gn6i-c16g1.4xlarge", 16, 62, 1),
    t4("ecs.gn6i-c24g1.6xlarge", 24, 93, 1),
    t4("ecs.gn6i-c40g1.10xlarge", 40, 155, 1),
    t4("ecs.gn6i-c24g1.12xlarge", 48, 186, 2),
    t4("ecs.gn6i-c24g1.24xlarge", 96, 372, 4),
    // gn7i: NVIDIA A10 24 GB.
    a10("ecs.gn7i-c8g1.2xlarge", 8, 30, 1),
    a10("ecs.gn7i-c16g1.4xlarge", 16, 60, 1),
    a10("ecs.gn7i-c32g1.8xlarge", 32, 188, 1),
    a10("ecs.gn7i-c48g1.12xlarge", 48, 310, 1),
    a10("ecs.gn7i-c56g1.14xlarge", 56, 346, 1),
    a10("ecs.gn7i-c32g1.16xlarge", 64, 376, 2),
    a10("ecs.gn7i-c32g1.32xlarge", 128, 752, 4),
    a10("ecs.gn7i-2x.8xlarge", 32, 128, 2),
    a10("ecs.gn7i-4x.8xlarge", 32, 128, 4),
    a10("ecs.gn7i-4x.16xlarge", 64, 256, 4),
    a10("ecs.gn7i-8x.16xlarge", 64, 256, 8),
    a10("ecs.gn7i-8x.32xlarge", 128, 512, 8),
    // gn7: NVIDIA A100 40 GB.
    a100("ecs.gn7-c12g1.3xlarge", 12, 94, 1, "A100 40GB"),
    a100("ecs.gn7-c13g1.13xlarge", 52, 378, 4, "A100 40GB"),
    a100("ecs.gn7-c13g1.26xlarge", 104, 756, 8, "A100 40GB"),
    // gn7e: NVIDIA A100 80 GB.
    a100("ecs.gn7e-c16g1.4xlarge", 16, 125, 1, "A100 80GB"),
    a100("ecs.gn7e-c16g1.8xlarge", 32, 250, 2, "A100 80GB"),
    a100("ecs.gn7e-c16g1.16xlarge", 64, 500, 4, "A100 80GB"),
    a100("ecs.gn7e-c16g1.32xlarge", 128, 1000, 8, "A100 80GB"),
];

/// The catalogue entry of an instance type (ECS names are lowercase and compared exactly).
pub(crate) fn instance_type(name: &str) -> Option<&'static EcsType> {
    INSTANCE_TYPES.iter().find(|t| t.base.name == name)
}

/// The ECS families with NVIDIA GPUs (`ecs.gn…`, `ecs.ebmgn…`, `ecs.sgn…` vGPU excluded): the
/// definition of "a GPU pool" for a type the catalogue lacks. A catalogued type says so itself.
pub(crate) fn has_nvidia_gpus(name: &str) -> bool {
    if let Some(t) = instance_type(name) {
        return t.base.gpus > 0;
    }
    name.strip_prefix("ecs.")
        .is_some_and(|rest| rest.starts_with("gn") || rest.starts_with("ebmgn"))
}

/// Node allocatable, bounded by the node's capacity (see the module comment).
pub(crate) fn allocatable(t: &InstanceType) -> Allocatable {
    Allocatable {
        cpu: Quantity::from_nanos(i128::from(t.vcpus) * 1_000_000_000),
        memory: Quantity::from_bytes(i128::from(t.memory_gib) * 1024 * 1024 * 1024),
        gpus: t.gpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_entries_are_unique_and_consistent() {
        let mut names: Vec<_> = INSTANCE_TYPES.iter().map(|t| t.base.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INSTANCE_TYPES.len());
        for t in INSTANCE_TYPES {
            let b = &t.base;
            assert_eq!(b.gpus > 0, has_nvidia_gpus(b.name), "{}", b.name);
            assert_eq!(b.gpus > 0, !b.gpu_model.is_empty(), "{}", b.name);
            assert!(t.nvidia_name.is_none() || b.gpus > 0, "{}", b.name);
        }
    }

    #[test]
    fn gpu_families_outside_the_catalogue_are_known_by_prefix() {
        let a10 = instance_type("ecs.gn7i-c8g1.2xlarge").unwrap();
        assert_eq!(
            (a10.base.vcpus, a10.base.memory_gib, a10.base.gpus),
            (8, 30, 1)
        );
        assert_eq!(a10.nvidia_name, Some("NVIDIA-A10"));
        assert!(has_nvidia_gpus("ecs.gn8is.2xlarge"));
        assert!(has_nvidia_gpus("ecs.ebmgn7e.32xlarge"));
        assert!(!has_nvidia_gpus("ecs.g7.xlarge"));
        assert!(!has_nvidia_gpus("g5.xlarge"));
    }

    #[test]
    fn allocatable_is_the_capacity_bound() {
        let a = allocatable(&instance_type("ecs.gn6i-c4g1.xlarge").unwrap().base);
        assert_eq!(a.cpu, Quantity::parse("4").unwrap());
        assert_eq!(a.memory, Quantity::parse("15Gi").unwrap());
        assert_eq!(a.gpus, 1);
    }
}
