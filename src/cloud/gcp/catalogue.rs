//! GCP's catalogue: the machine types raykueue knows (vCPU, memory, GPUs), the accelerator each
//! GPU machine type carries, and an approximation of what GKE leaves allocatable on a node.
//!
//! How sure each number is, and its source:
//! - GPU model and count per accelerator-optimized machine type (G2, A2, A3 High):
//!   GoogleCloudPlatform/cluster-toolkit@19416ae5 `modules/compute/gke-node-pool/gpu_definition.tf`.
//! - vCPU and memory only where a source here confirms them: `e2-standard-4` and
//!   `g2-standard-4` (4 vCPU, 16 GB; the KubeRay GKE guide, ray-project/ray
//!   `doc/source/cluster/kubernetes/user-guides/gcp-gke-gpu-cluster.md`); the E2 standard
//!   types, N vCPU with 4 GB each, up to 32 vCPU (cloud.google.com/compute/docs/machine-types:
//!   "E2 … up to 32 vCPUs with up to 128 GB"; the `standard` ratio of 4 GB per vCPU:
//!   cloudwebschool.com "GCP machine types explained", pages corpus); `a2-highgpu-1g`
//!   (12 vCPU, 85 GB, corroborated as `MemoryMiB: 87040`) and `a3-highgpu-8g` (208 vCPU,
//!   1,872 GB; cloud.google.com/compute/docs/accelerator-optimized-machines). The other sizes
//!   are left out rather than guessed: a pool of one of them gets RK201 (capacity unchecked),
//!   and its GPUs are still known from [`accelerator`].

use crate::cloud::instance::{Allocatable, InstanceType, cpu, gpu};
use crate::profile::quantity::Quantity;

/// Machine types with confirmed vCPU and memory (GB as Google writes them, read as GiB, as the
/// Azure catalogue does).
pub(crate) const MACHINE_TYPES: &[InstanceType] = &[
    cpu("e2-standard-2", 2, 8),
    cpu("e2-standard-4", 4, 16),
    cpu("e2-standard-8", 8, 32),
    cpu("e2-standard-16", 16, 64),
    cpu("e2-standard-32", 32, 128),
    gpu("g2-standard-4", 4, 16, 1, "L4"),
    gpu("a2-highgpu-1g", 12, 85, 1, "A100 40GB"),
    gpu("a3-highgpu-8g", 208, 1872, 8, "H100 80GB"),
    // A3 Ultra: 224 vCPU, 2,952 GB, 8 × H200 141GB (cloud.google.com/compute/docs/gpus, the
    // accelerator-optimized machine table, as copied into machine tables in the code index;
    // GPUs: AI-Hypercomputer/xpk `system_characteristics.py` `h200-141gb-8`).
    gpu("a3-ultragpu-8g", 224, 2952, 8, "H200 141GB"),
];

/// Machine-type families Compute Engine offers without its standard (on-demand) provisioning
/// model: (name prefix, family, whether flex-start and spot VMs are offered). Google's
/// comparison of consumption options lists A4X, A4 and A3 Ultra for future reservations and
/// "any GPU machine except A4X" for flex-start and spot, and offers on-demand for none of them
/// (cloud.google.com/ai-hypercomputer/docs/consumption-models, "Comparison of consumption
/// options"; cloud.google.com/compute/docs/instances/about-flex-start-vms: flex-start supports
/// "all accelerator-optimized machine types (except A4X and G4)").
pub(crate) const RESERVATION_FAMILIES: &[(&str, &str, bool)] = &[
    ("a3-ultragpu-", "A3 Ultra", true),
    ("a4-highgpu-", "A4", true),
    ("a4x-highgpu-", "A4X", false),
];

/// The family of a machine type that Compute Engine offers only from a reservation (or
/// flex-start and spot, when the second value says so).
pub(crate) fn reservation_family(machine: &str) -> Option<(&'static str, bool)> {
    RESERVATION_FAMILIES
        .iter()
        .find(|(prefix, _, _)| machine.starts_with(prefix))
        .map(|(_, family, others)| (*family, *others))
}

/// The catalogue entry of a machine type (GCP names are lowercase).
pub(crate) fn machine_type(name: &str) -> Option<&'static InstanceType> {
    MACHINE_TYPES.iter().find(|s| s.name == name)
}

/// The accelerator an accelerator-optimized machine type carries: (`--accelerator type=`,
/// count), from cluster-toolkit's `gpu_definition.tf`. `None` for other machine types (N1 and
/// general-purpose types carry no GPU unless one is attached with `accelerator`).
pub(crate) fn accelerator(machine: &str) -> Option<(&'static str, u32)> {
    let fixed: &[(&str, &str, u32)] = &[
        ("g2-standard-4", "nvidia-l4", 1),
        ("g2-standard-8", "nvidia-l4", 1),
        ("g2-standard-12", "nvidia-l4", 1),
        ("g2-standard-16", "nvidia-l4", 1),
        ("g2-standard-32", "nvidia-l4", 1),
        ("g2-standard-24", "nvidia-l4", 2),
        ("g2-standard-48", "nvidia-l4", 4),
        ("g2-standard-96", "nvidia-l4", 8),
        ("a2-highgpu-1g", "nvidia-tesla-a100", 1),
        ("a2-highgpu-2g", "nvidia-tesla-a100", 2),
        ("a2-highgpu-4g", "nvidia-tesla-a100", 4),
        ("a2-highgpu-8g", "nvidia-tesla-a100", 8),
        ("a2-megagpu-16g", "nvidia-tesla-a100", 16),
        ("a2-ultragpu-1g", "nvidia-a100-80gb", 1),
        ("a2-ultragpu-2g", "nvidia-a100-80gb", 2),
        ("a2-ultragpu-4g", "nvidia-a100-80gb", 4),
        ("a2-ultragpu-8g", "nvidia-a100-80gb", 8),
        ("a3-highgpu-8g", "nvidia-h100-80gb", 8),
        // AI-Hypercomputer/xpk `src/xpk/core/system_characteristics.py`: `h200-141gb-8` is
        // `a3-ultragpu-8g` with 8 × `nvidia-h200-141gb`.
        ("a3-ultragpu-8g", "nvidia-h200-141gb", 8),
    ];
    fixed
        .iter()
        .find(|(m, _, _)| *m == machine)
        .map(|(_, t, n)| (*t, *n))
}

/// What GKE leaves for pods on one node of this machine type (node allocatable).
///
/// GKE's documented reservation for Standard node pools (cloud.google.com/kubernetes-engine/
/// docs/concepts/plan-node-sizes, "Memory and CPU reservations"; the memory steps and the
/// 100 MiB eviction threshold are confirmed by a stored copy of a calculator built on that
/// page, github.com/hatemosphere/gke-node-allocatable-memory-calculator; the CPU steps are the
/// same page's table, not shown in the stored excerpts):
/// - CPU: 6 % of the first core, 1 % of the second, 0.5 % of cores 3–4, 0.25 % of every
///   further core;
/// - memory: 25 % of the first 4 GiB, 20 % of the next 4 GiB, 10 % of the next 8 GiB, 6 % of
///   the next 112 GiB and 2 % above 128 GiB, plus the kubelet's 100 MiB eviction threshold;
/// - GPUs: all of them.
///
/// Daemon sets (logging, networking, the GPU device plugin) take their share too; that is not
/// modelled.
pub(crate) fn allocatable(size: &InstanceType) -> Allocatable {
    let cores = i128::from(size.vcpus);
    // In thousandths of a core ×100 (0.25 % of a core is 2.5 m): 600, 100, 50, 25 per core.
    let reserved_centi_milli = [(1, 6000), (1, 1000), (2, 500)]
        .iter()
        .scan(cores, |left, (n, per)| {
            let take = (*left).min(*n);
            *left -= take;
            Some(take * per)
        })
        .sum::<i128>()
        + (cores - 4).max(0) * 250;
    // A hundredth of a millicore is 10,000 ns.
    let cpu_nanos = cores * 1_000_000_000 - reserved_centi_milli * 10_000;
    let mib: i128 = 1024 * 1024;
    let memory = i128::from(size.memory_gib) * 1024 * mib;
    let gib = 1024 * mib;
    let mut left = memory;
    let mut reserved = 0;
    for (span, percent) in [
        (4 * gib, 25),
        (4 * gib, 20),
        (8 * gib, 10),
        (112 * gib, 6),
        (i128::MAX, 2),
    ] {
        let take = left.min(span);
        reserved += take * percent / 100;
        left -= take;
    }
    let eviction = 100 * mib;
    Allocatable {
        cpu: Quantity::from_nanos(cpu_nanos.max(0)),
        memory: Quantity::from_bytes((memory - reserved - eviction).max(0)),
        gpus: size.gpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocatable_follows_the_reservation_table() {
        // 4 vCPU: 60m + 10m + 2 × 5m = 80m reserved; 16 GiB: 1 + 0.8 + 0.8 GiB + 100 MiB.
        let a = allocatable(machine_type("e2-standard-4").unwrap());
        assert_eq!(a.cpu.canonical(), "3920m");
        let mib: i128 = 1024 * 1024;
        let expected = (16 * 1024 - 1024 - 819 - 819 - 100) * mib;
        // 20 % of 4 GiB and 10 % of 8 GiB are 819.2 MiB each: compare within a MiB.
        let bytes = a.memory.nanos() / 1_000_000_000;
        assert!((bytes - expected).abs() < mib, "{bytes}");
        assert_eq!(a.gpus, 0);
        let g = allocatable(machine_type("g2-standard-4").unwrap());
        assert_eq!(g.gpus, 1);
        // 208 vCPU: 80m + 204 × 2.5m = 590m.
        let a3 = allocatable(machine_type("a3-highgpu-8g").unwrap());
        assert_eq!(a3.cpu.canonical(), "207410m");
    }

    #[test]
    fn every_catalogued_gpu_type_names_its_accelerator() {
        for m in MACHINE_TYPES.iter().filter(|m| m.gpus > 0) {
            assert_eq!(
                accelerator(m.name).map(|(_, n)| n),
                Some(m.gpus),
                "{}",
                m.name
            );
        }
        assert_eq!(accelerator("g2-standard-24"), Some(("nvidia-l4", 2)));
        assert_eq!(accelerator("e2-standard-4"), None);
    }
}
