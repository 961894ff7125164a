//! Instance types as the catalogues describe them (vCPU, memory, NVIDIA GPUs, retirement) and
//! what a node of one leaves for pods: data every cloud's `catalogue.rs` is written in, read by
//! the capacity rules, the scripts and the summary.

use crate::profile::quantity::Quantity;

/// The extended resource NVIDIA's device plugin advertises.
pub(crate) const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// The taint raykueue puts on GPU pools where the cloud sets none (EKS, ACK): the one GKE sets
/// itself, the one eksctl's NVIDIA device plugin DaemonSet tolerates (eksctl-io/eksctl@99984adb
/// `pkg/addons/assets/nvidia-device-plugin.yaml`: `nvidia.com/gpu`, `Exists`, `NoSchedule`), and
/// the one Kubernetes' ExtendedResourceToleration admission plugin tolerates for pods that
/// request `nvidia.com/gpu`.
pub(crate) const GPU_TAINT_KEY: &str = GPU_RESOURCE;

/// One instance type: what the hypervisor gives the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InstanceType {
    pub(crate) name: &'static str,
    pub(crate) vcpus: u32,
    pub(crate) memory_gib: u32,
    /// NVIDIA GPUs the node advertises as `nvidia.com/gpu` (0 for CPU sizes).
    pub(crate) gpus: u32,
    /// GPU model, for messages (`""` for CPU sizes).
    pub(crate) gpu_model: &'static str,
    /// The cloud no longer sells it: creating a pool of it fails.
    pub(crate) retired: Option<&'static Retirement>,
}

/// A retirement the cloud announced for a series of instance types, with the page that says so
/// and the series it names as successors.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Retirement {
    /// `YYYY-MM-DD`.
    pub(crate) date: &'static str,
    pub(crate) series: &'static str,
    pub(crate) page: &'static str,
    /// Name patterns of the successor series the page recommends, most recommended first
    /// (`*` stands for any text).
    pub(crate) successors: &'static [&'static str],
}

impl InstanceType {
    /// The same type, marked retired.
    pub(crate) const fn retired(self, r: &'static Retirement) -> Self {
        InstanceType {
            retired: Some(r),
            ..self
        }
    }
}

/// Current instance types of `catalogue` to suggest for a retired `old`: per successor series
/// its retirement names, the smallest type with the same GPU count that has at least `old`'s
/// memory, else the largest with that GPU count. Types the catalogue marks retired are never
/// suggested.
pub(crate) fn successors(
    catalogue: &'static [InstanceType],
    old: &InstanceType,
) -> Vec<&'static InstanceType> {
    let Some(r) = old.retired else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for pattern in r.successors {
        let mut same: Vec<&'static InstanceType> = catalogue
            .iter()
            .filter(|t| t.retired.is_none() && t.gpus == old.gpus && glob(pattern, t.name))
            .collect();
        same.sort_by_key(|t| (t.memory_gib, t.vcpus));
        if let Some(t) = same
            .iter()
            .find(|t| t.memory_gib >= old.memory_gib)
            .or(same.last())
        {
            out.push(*t);
        }
    }
    out
}

/// `*`-only glob match, ASCII case-insensitive (cloud instance names compare so).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.to_ascii_lowercase(), name.to_ascii_lowercase());
    let parts: Vec<&str> = p.split('*').collect();
    let mut rest = n.as_str();
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(part) else {
                return false;
            };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else if let Some(at) = rest.find(part) {
            rest = &rest[at + part.len()..];
        } else {
            return false;
        }
    }
    rest.is_empty()
}

pub(crate) const fn cpu(name: &'static str, vcpus: u32, memory_gib: u32) -> InstanceType {
    InstanceType {
        name,
        vcpus,
        memory_gib,
        gpus: 0,
        gpu_model: "",
        retired: None,
    }
}

pub(crate) const fn gpu(
    name: &'static str,
    vcpus: u32,
    memory_gib: u32,
    gpus: u32,
    gpu_model: &'static str,
) -> InstanceType {
    InstanceType {
        name,
        vcpus,
        memory_gib,
        gpus,
        gpu_model,
        retired: None,
    }
}

/// Node allocatable of one instance type, by the provider's model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Allocatable {
    pub(crate) cpu: Quantity,
    pub(crate) memory: Quantity,
    pub(crate) gpus: u32,
}

impl Allocatable {
    /// The allocatable amount of a resource the catalogue knows (`cpu`, `memory`,
    /// `nvidia.com/gpu`); `None` for any other resource.
    pub(crate) fn get(&self, resource: &str) -> Option<Quantity> {
        match resource {
            "cpu" => Some(self.cpu),
            "memory" => Some(self.memory),
            GPU_RESOURCE => Some(Quantity::from_units(u64::from(self.gpus))),
            _ => None,
        }
    }
}
