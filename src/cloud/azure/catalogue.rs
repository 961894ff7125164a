//! Azure's catalogue: built-in facts about Azure that the capacity and naming rules need: the VM sizes people run
//! Ray on (vCPU, memory, GPUs), an approximation of what AKS leaves allocatable on a node, and
//! the Azure region names.
//!
//! Source of the sizes: the Azure VM size documentation (learn.microsoft.com, "Sizes for virtual
//! machines in Azure": the Dsv3, Dsv5, Ddsv5, Dsv6, Ddsv6, NCv3, NCasT4_v3, NC A10 v4,
//! NC A100 v4, NCads H100 v5, ND A100 v4, NDm A100 v4 and ND H100 v5 series pages). Only the
//! numbers are carried over. A size that is missing here is not an error: the rules warn and
//! skip their capacity checks for it.

use crate::cloud::instance::{Allocatable, InstanceType, Retirement, cpu, gpu};
use crate::profile::quantity::Quantity;

/// NCv3 (NC6s_v3, NC12s_v3, NC24s_v3, NC24rs_v3) was retired on 30 September 2025: its VMs are
/// deallocated and `az aks nodepool add` refuses the sizes (learn.microsoft.com
/// "NCv3-series retirement", and the retired-sizes list; a few sovereign regions run longer).
/// Microsoft recommends NCads H100 v5, and NCasT4_v3 where cost matters. No other series of this
/// catalogue has an announced retirement (the same list, read 2026-08).
pub(crate) const NCV3: Retirement = Retirement {
    date: "2025-09-30",
    series: "NCv3",
    page: "https://learn.microsoft.com/azure/virtual-machines/ncv3-retirement",
    successors: &["Standard_NC*_H100_v5", "Standard_NC*as_T4_v3"],
};

/// The catalogue, by series. General purpose: memory is 4 GiB per vCPU in all these series.
pub(crate) const VM_SIZES: &[InstanceType] = &[
    // Dv3 / Dsv3 (Intel, 4 GiB per vCPU).
    cpu("Standard_D2_v3", 2, 8),
    cpu("Standard_D4_v3", 4, 16),
    cpu("Standard_D8_v3", 8, 32),
    cpu("Standard_D16_v3", 16, 64),
    cpu("Standard_D32_v3", 32, 128),
    cpu("Standard_D48_v3", 48, 192),
    cpu("Standard_D64_v3", 64, 256),
    cpu("Standard_D2s_v3", 2, 8),
    cpu("Standard_D4s_v3", 4, 16),
    cpu("Standard_D8s_v3", 8, 32),
    cpu("Standard_D16s_v3", 16, 64),
    cpu("Standard_D32s_v3", 32, 128),
    cpu("Standard_D48s_v3", 48, 192),
    cpu("Standard_D64s_v3", 64, 256),
    // Dsv5 / Ddsv5.
    cpu("Standard_D2s_v5", 2, 8),
    cpu("Standard_D4s_v5", 4, 16),
    cpu("Standard_D8s_v5", 8, 32),
    cpu("Standard_D16s_v5", 16, 64),
    cpu("Standard_D32s_v5", 32, 128),
    cpu("Standard_D48s_v5", 48, 192),
    cpu("Standard_D64s_v5", 64, 256),
    cpu("Standard_D96s_v5", 96, 384),
    cpu("Standard_D2ds_v5", 2, 8),
    cpu("Standard_D4ds_v5", 4, 16),
    cpu("Standard_D8ds_v5", 8, 32),
    cpu("Standard_D16ds_v5", 16, 64),
    cpu("Standard_D32ds_v5", 32, 128),
    cpu("Standard_D48ds_v5", 48, 192),
    cpu("Standard_D64ds_v5", 64, 256),
    cpu("Standard_D96ds_v5", 96, 384),
    // Dsv6 / Ddsv6.
    cpu("Standard_D2s_v6", 2, 8),
    cpu("Standard_D4s_v6", 4, 16),
    cpu("Standard_D8s_v6", 8, 32),
    cpu("Standard_D16s_v6", 16, 64),
    cpu("Standard_D32s_v6", 32, 128),
    cpu("Standard_D48s_v6", 48, 192),
    cpu("Standard_D64s_v6", 64, 256),
    cpu("Standard_D96s_v6", 96, 384),
    cpu("Standard_D128s_v6", 128, 512),
    cpu("Standard_D2ds_v6", 2, 8),
    cpu("Standard_D4ds_v6", 4, 16),
    cpu("Standard_D8ds_v6", 8, 32),
    cpu("Standard_D16ds_v6", 16, 64),
    cpu("Standard_D32ds_v6", 32, 128),
    cpu("Standard_D48ds_v6", 48, 192),
    cpu("Standard_D64ds_v6", 64, 256),
    cpu("Standard_D96ds_v6", 96, 384),
    cpu("Standard_D128ds_v6", 128, 512),
    // NCv3: NVIDIA V100 16 GB. Retired (`NCV3`).
    gpu("Standard_NC6s_v3", 6, 112, 1, "V100").retired(&NCV3),
    gpu("Standard_NC12s_v3", 12, 224, 2, "V100").retired(&NCV3),
    gpu("Standard_NC24s_v3", 24, 448, 4, "V100").retired(&NCV3),
    gpu("Standard_NC24rs_v3", 24, 448, 4, "V100").retired(&NCV3),
    // NCasT4_v3: NVIDIA T4 16 GB.
    gpu("Standard_NC4as_T4_v3", 4, 28, 1, "T4"),
    gpu("Standard_NC8as_T4_v3", 8, 56, 1, "T4"),
    gpu("Standard_NC16as_T4_v3", 16, 110, 1, "T4"),
    gpu("Standard_NC64as_T4_v3", 64, 440, 4, "T4"),
    // NC A10 v4: a partition of one NVIDIA A10 (1/3, 1/2, whole); the node sees one GPU.
    gpu("Standard_NC8ads_A10_v4", 8, 100, 1, "A10 (1/3)"),
    gpu("Standard_NC16ads_A10_v4", 16, 200, 1, "A10 (1/2)"),
    gpu("Standard_NC32ads_A10_v4", 32, 400, 1, "A10"),
    // NC A100 v4: NVIDIA A100 80 GB PCIe.
    gpu("Standard_NC24ads_A100_v4", 24, 220, 1, "A100 80GB"),
    gpu("Standard_NC48ads_A100_v4", 48, 440, 2, "A100 80GB"),
    gpu("Standard_NC96ads_A100_v4", 96, 880, 4, "A100 80GB"),
    // NCads H100 v5: NVIDIA H100 NVL 94 GB.
    gpu("Standard_NC40ads_H100_v5", 40, 320, 1, "H100 NVL"),
    gpu("Standard_NC80adis_H100_v5", 80, 640, 2, "H100 NVL"),
    // ND A100 v4 (A100 40 GB), NDm A100 v4 (A100 80 GB), ND H100 v5 (H100 80 GB).
    gpu("Standard_ND96asr_v4", 96, 900, 8, "A100 40GB"),
    gpu("Standard_ND96amsr_A100_v4", 96, 1900, 8, "A100 80GB"),
    gpu("Standard_ND96isr_H100_v5", 96, 1900, 8, "H100"),
];

/// The catalogue entry of a VM size. Azure compares size names case-insensitively.
pub(crate) fn vm_size(name: &str) -> Option<&'static InstanceType> {
    VM_SIZES.iter().find(|s| s.name.eq_ignore_ascii_case(name))
}

/// A VM size as Azure spells it (and stamps it in `node.kubernetes.io/instance-type`): the
/// catalogue's spelling of a size it knows, whatever the case the profile wrote; any other as
/// written.
pub(crate) fn spelling(name: &str) -> &str {
    vm_size(name).map_or(name, |s| s.name)
}

/// Whether nodes of this size advertise `nvidia.com/gpu`: the one definition of "a GPU pool"
/// that the rules, the scripts (`verify.sh`'s GPU checks) and the summary use. A size in the
/// catalogue says so itself; any other is judged by Azure's naming, case-insensitively as Azure
/// compares size names: the NVIDIA N-series families NC, ND and NV — except NVv4
/// (`…as_v4`) and NG, which carry AMD GPUs and expose no `nvidia.com/gpu`.
pub(crate) fn has_nvidia_gpus(name: &str) -> bool {
    if let Some(size) = vm_size(name) {
        return size.gpus > 0;
    }
    let lower = name.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("standard_") else {
        return false;
    };
    let amd = (rest.starts_with("nv") && rest.ends_with("as_v4")) || rest.starts_with("ng");
    !amd && (rest.starts_with("nc") || rest.starts_with("nd") || rest.starts_with("nv"))
}

/// What AKS leaves for pods on one node of this size (node allocatable).
///
/// The approximation, from the AKS "node resource reservations" documentation (AKS 1.29+):
/// - CPU: kube-reserved is 60m for the first core, 40m for the second, 20m for each of cores 3
///   and 4, and 10m for every core above 4 (this reproduces the documented table: 1→60m,
///   2→100m, 4→140m, 8→180m, 16→260m, 32→420m, 64→740m; larger nodes continue at 10m a core).
/// - Memory: kube-reserved is the lesser of `20 MiB × max pods + 50 MiB` and 25 % of the
///   node's memory, plus the kubelet's `memory.available<100Mi` eviction threshold. Max pods is
///   taken as 250 (the default of Azure CNI Overlay, the `az aks create` default), which gives
///   the larger reservation. The documentation writes MB; MiB is used, again the larger.
/// - GPUs: all of them (the NVIDIA device plugin reserves none).
///
/// Daemon sets (CNI, kube-proxy, CSI drivers, monitoring) also take their share of what is
/// left; that share depends on add-ons and is not modelled, so a pod that fits here by a few
/// hundred millicores may still not fit in practice.
pub(crate) fn allocatable(size: &InstanceType) -> Allocatable {
    let cores = i128::from(size.vcpus);
    let reserved_milli = if cores == 0 {
        0
    } else {
        60 + if cores >= 2 { 40 } else { 0 }
            + 20 * (cores.clamp(2, 4) - 2)
            + 10 * (cores - 4).max(0)
    };
    let cpu_milli = (cores * 1000 - reserved_milli).max(0);
    let mib: i128 = 1024 * 1024;
    let memory = i128::from(size.memory_gib) * 1024 * mib;
    let kube_reserved = (20 * 250 * mib + 50 * mib).min(memory / 4);
    let eviction = 100 * mib;
    let memory_bytes = (memory - kube_reserved - eviction).max(0);
    Allocatable {
        cpu: Quantity::from_nanos(cpu_milli * 1_000_000),
        memory: Quantity::from_bytes(memory_bytes),
        gpus: size.gpus,
    }
}

/// Azure public-cloud region names as `az account list-locations --query [].name` prints them,
/// plus the Azure Government and Azure China regions.
pub(crate) const REGIONS: &[&str] = &[
    "australiacentral",
    "australiacentral2",
    "australiaeast",
    "australiasoutheast",
    "austriaeast",
    "belgiumcentral",
    "brazilsouth",
    "brazilsoutheast",
    "canadacentral",
    "canadaeast",
    "centralindia",
    "centralus",
    "centraluseuap",
    "chilecentral",
    "chinaeast",
    "chinaeast2",
    "chinaeast3",
    "chinanorth",
    "chinanorth2",
    "chinanorth3",
    "denmarkeast",
    "eastasia",
    "eastus",
    "eastus2",
    "eastus2euap",
    "francecentral",
    "francesouth",
    "germanynorth",
    "germanywestcentral",
    "indonesiacentral",
    "israelcentral",
    "italynorth",
    "japaneast",
    "japanwest",
    "jioindiacentral",
    "jioindiawest",
    "koreacentral",
    "koreasouth",
    "malaysiawest",
    "mexicocentral",
    "newzealandnorth",
    "northcentralus",
    "northeurope",
    "norwayeast",
    "norwaywest",
    "polandcentral",
    "qatarcentral",
    "southafricanorth",
    "southafricawest",
    "southcentralus",
    "southeastasia",
    "southindia",
    "spaincentral",
    "swedencentral",
    "swedensouth",
    "switzerlandnorth",
    "switzerlandwest",
    "uaecentral",
    "uaenorth",
    "uksouth",
    "ukwest",
    "usdodcentral",
    "usdodeast",
    "usgovarizona",
    "usgovtexas",
    "usgovvirginia",
    "westcentralus",
    "westeurope",
    "westindia",
    "westus",
    "westus2",
    "westus3",
];

#[cfg(test)]
mod tests {

    /// Azure retired NCv3 on 2025-09-30 (learn.microsoft.com ncv3-retirement); no other series
    /// here has an announced retirement. Each retired size suggests current sizes with its GPU
    /// count from the successor series Microsoft names.
    #[test]
    fn retired_sizes_suggest_current_sizes_with_the_same_gpus() {
        let retired: Vec<&str> = VM_SIZES
            .iter()
            .filter(|s| s.retired.is_some())
            .map(|s| s.name)
            .collect();
        assert_eq!(
            retired,
            [
                "Standard_NC6s_v3",
                "Standard_NC12s_v3",
                "Standard_NC24s_v3",
                "Standard_NC24rs_v3"
            ]
        );
        for size in VM_SIZES.iter().filter(|s| s.retired.is_some()) {
            assert_eq!(size.retired.map(|r| r.date), Some("2025-09-30"));
            let next = crate::cloud::successors(VM_SIZES, size);
            assert!(!next.is_empty(), "{}", size.name);
            for n in next {
                assert_eq!(n.gpus, size.gpus, "{} -> {}", size.name, n.name);
                assert!(n.retired.is_none());
            }
        }
        let names = |n: &str| -> Vec<&str> {
            crate::cloud::successors(VM_SIZES, vm_size(n).unwrap())
                .iter()
                .map(|t| t.name)
                .collect()
        };
        // One V100, 112 GiB: the one-GPU H100 NVL, and the largest one-GPU T4 (110 GiB).
        assert_eq!(
            names("Standard_NC6s_v3"),
            ["Standard_NC40ads_H100_v5", "Standard_NC16as_T4_v3"]
        );
        // Four V100s: no four-GPU NCads H100 v5; the four-T4 size.
        assert_eq!(names("Standard_NC24s_v3"), ["Standard_NC64as_T4_v3"]);
    }
    use super::*;

    #[test]
    fn cpu_reservation_reproduces_the_aks_table() {
        for (cores, reserved) in [
            (1, 60),
            (2, 100),
            (4, 140),
            (8, 180),
            (16, 260),
            (32, 420),
            (64, 740),
        ] {
            let size = cpu("x", cores, 4 * cores);
            let a = allocatable(&size);
            assert_eq!(
                a.cpu,
                Quantity::from_nanos(i128::from(cores * 1000 - reserved) * 1_000_000),
                "{cores} cores"
            );
        }
    }

    #[test]
    fn memory_reservation_is_capped_at_a_quarter() {
        // 8 GiB: 20 MiB × 250 + 50 MiB = 5050 MiB > 2 GiB, so 2 GiB + 100 MiB are reserved.
        let a = allocatable(&cpu("x", 2, 8));
        assert_eq!(a.memory, Quantity::parse("6044Mi").unwrap());
        // NC6s_v3, 112 GiB: 5050 MiB + 100 MiB reserved.
        let a = allocatable(vm_size("Standard_NC6s_v3").unwrap());
        assert_eq!(a.memory, Quantity::parse("109538Mi").unwrap());
        assert_eq!(a.gpus, 1);
    }

    #[test]
    fn sizes_are_unique_and_looked_up_case_insensitively() {
        let mut names: Vec<String> = VM_SIZES.iter().map(|s| s.name.to_lowercase()).collect();
        names.sort();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len());
        assert_eq!(
            vm_size("standard_nd96amsr_a100_v4").map(|s| s.gpus),
            Some(8)
        );
        assert!(has_nvidia_gpus("Standard_NV36ads_A10_v5"));
        assert!(!has_nvidia_gpus("Standard_D4ds_v6"));
    }

    /// `verify.sh` once matched sizes case-sensitively while the rules did not, so
    /// `Standard_nc6s_v3` got capacity checks but no GPU checks: one definition, any case.
    #[test]
    fn gpu_sizes_are_detected_in_any_case_known_or_not() {
        for name in [
            "Standard_NC6s_v3",
            "standard_nc6s_v3",
            "STANDARD_ND96AMSR_A100_V4",
            "Standard_NV36ads_A10_v5",
            "Standard_NC999future_v9",
            "standard_nd_unknown",
        ] {
            assert!(has_nvidia_gpus(name), "{name}");
        }
        for name in [
            "Standard_D8s_v3",
            "standard_d4ds_v6",
            "Standard_NV16as_v4",
            "standard_nv32as_v4",
            "Standard_NG32ads_V620_v1",
            "Basic_A1",
        ] {
            assert!(!has_nvidia_gpus(name), "{name}");
        }
    }

    #[test]
    fn regions_are_sorted_and_unique() {
        let mut sorted = REGIONS.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, REGIONS);
    }
}
