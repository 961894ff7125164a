//! The provider seam: everything that depends on which cloud runs the cluster. A profile names
//! its provider by the section it has (`azure:`, `gcp:`, …; at most one, rule RK400); the rest
//! of raykueue asks a [`Provider`] instead of knowing a cloud:
//!
//! - the node pools as the scheduler sees their nodes ([`NodeGroup`]: the labels and taints the
//!   cloud puts on them besides the profile's own), with the instance catalogue behind them
//!   (vCPU, memory, GPUs, GPU model) and the cloud's allocatable model;
//! - where the operators run ([`crate::operators::Placement`]);
//! - identity wiring: the service account's annotations and the pods' labels;
//! - what a workload's runtime environment gets from the cloud section (storage names);
//! - the provisioning scripts: the cloud's template folder (`templates/infra/<section>/`) and
//!   the values it renders; the cloud-neutral steps live in `templates/infra/common/`;
//! - the words its messages use (`vmSize` or `machineType`, `AKS` or `GKE`).
//!
//! Adding a cloud is one file here (its section type and an `impl`), one arm in each `match`
//! below, and its templates. Rule codes by cloud: Azure RK402–RK410 and RK450–RK454, GCP
//! RK420–RK429, AWS RK430–RK439, Alibaba RK440–RK449; RK400 is the seam's own.

pub mod alibaba;
pub mod aws;
pub mod azure;
pub mod gcp;

use crate::diagnostic::Severity::Error;
use crate::profile::{PoolSize, Profile, Quantity, Taint};
use crate::rules::RuleInfo;
use serde_json::Value;
use std::collections::BTreeMap;

pub use azure::Azure;
pub use gcp::Gcp;

/// The extended resource NVIDIA's device plugin advertises.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// RK400: two provider sections in one profile.
pub const TWO_PROVIDERS: RuleInfo = RuleInfo {
    code: "RK400",
    severity: Error,
    title: "a profile names more than one provider section (azure, gcp, …): it provisions one cluster",
};

/// The cloud a profile provisions on, with its section.
#[derive(Clone, Copy, Debug)]
pub enum Provider<'a> {
    Azure(&'a Azure),
    Gcp(&'a Gcp),
    Aws(&'a aws::Aws),
    Alibaba(&'a alibaba::Alibaba),
}

impl Profile {
    /// The profile's provider: the first provider section it has (RK400 reports a second).
    pub fn provider(&self) -> Option<Provider<'_>> {
        self.providers().into_iter().next()
    }

    /// Every provider section the profile has, in the order of [`Provider::SECTIONS`].
    pub fn providers(&self) -> Vec<Provider<'_>> {
        let mut out = Vec::new();
        if let Some(a) = &self.azure {
            out.push(Provider::Azure(a));
        }
        if let Some(g) = &self.gcp {
            out.push(Provider::Gcp(g));
        }
        if let Some(a) = &self.aws {
            out.push(Provider::Aws(a));
        }
        if let Some(a) = &self.alibaba {
            out.push(Provider::Alibaba(a));
        }
        out
    }
}

/// The words a provider's messages use.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// The managed Kubernetes service: `AKS`, `GKE`.
    pub service: &'static str,
    /// The pool field naming the instance type: `vmSize`, `machineType`.
    pub machine_field: &'static str,
    /// The same in prose: `VM size`, `machine type`.
    pub machine: &'static str,
    /// The CLI whose default node count applies when a pool gives none: `az`, `gcloud`.
    pub cli: &'static str,
    /// A GPU instance type for hints.
    pub gpu_example: &'static str,
    /// The label the cloud puts on every node with its pool's name.
    pub pool_label: &'static str,
    /// Where the operators run, in prose: `the System pool`.
    pub operators_pool: &'static str,
    /// The label the cloud (or raykueue) puts on NVIDIA GPU nodes, with its value where it is
    /// one for all GPU nodes: what the device plugin's node affinity selects.
    pub gpu_label: (&'static str, Option<&'static str>),
}

/// One instance type: what the hypervisor gives the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InstanceType {
    pub name: &'static str,
    pub vcpus: u32,
    pub memory_gib: u32,
    /// NVIDIA GPUs the node advertises as `nvidia.com/gpu` (0 for CPU sizes).
    pub gpus: u32,
    /// GPU model, for messages (`""` for CPU sizes).
    pub gpu_model: &'static str,
    /// The cloud no longer sells it: creating a pool of it fails.
    pub retired: Option<&'static Retirement>,
}

/// A retirement the cloud announced for a series of instance types, with the page that says so
/// and the series it names as successors.
#[derive(Debug, PartialEq, Eq)]
pub struct Retirement {
    /// `YYYY-MM-DD`.
    pub date: &'static str,
    pub series: &'static str,
    pub page: &'static str,
    /// Name patterns of the successor series the page recommends, most recommended first
    /// (`*` stands for any text).
    pub successors: &'static [&'static str],
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
pub fn successors(
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
pub struct Allocatable {
    pub cpu: Quantity,
    pub memory: Quantity,
    pub gpus: u32,
}

impl Allocatable {
    /// The allocatable amount of a resource the catalogue knows (`cpu`, `memory`,
    /// `nvidia.com/gpu`); `None` for any other resource.
    pub fn get(&self, resource: &str) -> Option<Quantity> {
        match resource {
            "cpu" => Some(self.cpu),
            "memory" => Some(self.memory),
            GPU_RESOURCE => Some(Quantity::from_units(u64::from(self.gpus))),
            _ => None,
        }
    }
}

/// A node pool as the scheduler sees its nodes: the profile's pool with what the cloud adds.
#[derive(Debug, Clone)]
pub struct NodeGroup<'a> {
    /// Position in the section's `nodePools`.
    pub index: usize,
    pub name: &'a str,
    /// The instance type as the profile spells it.
    pub machine: &'a str,
    /// The catalogue entry, when raykueue knows the type.
    pub instance: Option<&'static InstanceType>,
    /// Whether its nodes advertise `nvidia.com/gpu`.
    pub gpu: bool,
    pub size: PoolSize,
    /// `count` as the profile gives it.
    pub count: Option<u32>,
    /// Every label each node carries: the pool's own and the cloud's.
    pub labels: BTreeMap<String, String>,
    /// Every taint each node carries: the pool's own and the cloud's.
    pub taints: Vec<Taint>,
    /// The operators run here (`operators::placement`): their requests are not left for pods.
    pub hosts_operators: bool,
    /// Mode for the summary (`System`, `User`; `-` where the cloud has none).
    pub mode: &'static str,
    /// The pool's own taints and labels as the summary and `diff` show them.
    pub own_taints: Vec<String>,
    pub own_labels: Vec<String>,
}

impl NodeGroup<'_> {
    /// What one node leaves for pods, by the provider's model.
    pub fn allocatable(&self, provider: Provider<'_>) -> Option<Allocatable> {
        self.instance.map(|i| provider.allocatable(i))
    }
}

impl<'a> Provider<'a> {
    /// The profile keys that name a provider, in the order `Profile::providers` reads them.
    pub const SECTIONS: &'static [&'static str] = &["azure", "gcp", "aws", "alibaba"];

    /// The profile key of the section (`azure`), also the template folder's name.
    pub fn section(self) -> &'static str {
        match self {
            Self::Azure(_) => "azure",
            Self::Gcp(_) => "gcp",
            Self::Aws(_) => "aws",
            Self::Alibaba(_) => "alibaba",
        }
    }

    pub fn words(self) -> Words {
        match self {
            Self::Azure(_) => azure::WORDS,
            Self::Gcp(_) => gcp::WORDS,
            Self::Aws(_) => aws::WORDS,
            Self::Alibaba(_) => alibaba::WORDS,
        }
    }

    /// The node pools with what the cloud adds to their nodes.
    pub fn node_groups(self) -> Vec<NodeGroup<'a>> {
        match self {
            Self::Azure(a) => a.node_groups(),
            Self::Gcp(g) => g.node_groups(),
            Self::Aws(a) => a.node_groups(),
            Self::Alibaba(a) => a.node_groups(),
        }
    }

    /// The catalogue entry of an instance type.
    pub fn instance(self, name: &str) -> Option<&'static InstanceType> {
        match self {
            Self::Azure(_) => azure::catalogue::vm_size(name),
            Self::Gcp(_) => gcp::catalogue::machine_type(name),
            Self::Aws(_) => aws::catalogue::instance_type(name).map(|t| &t.base),
            Self::Alibaba(_) => alibaba::catalogue::instance_type(name).map(|t| &t.base),
        }
    }

    /// Every instance type the catalogue knows (the retirement hint picks successors from it).
    pub fn catalogue(self) -> &'static [InstanceType] {
        match self {
            Self::Azure(_) => azure::catalogue::VM_SIZES,
            Self::Gcp(_) => gcp::catalogue::MACHINE_TYPES,
            Self::Aws(_) | Self::Alibaba(_) => &[],
        }
    }

    /// What one node of this type leaves for pods.
    pub fn allocatable(self, instance: &InstanceType) -> Allocatable {
        match self {
            Self::Azure(_) => azure::catalogue::allocatable(instance),
            Self::Gcp(_) => gcp::catalogue::allocatable(instance),
            Self::Aws(_) => aws::allocatable(instance),
            Self::Alibaba(_) => alibaba::catalogue::allocatable(instance),
        }
    }

    /// The hint for an instance type the catalogue lacks (RK201).
    pub fn unknown_instance_hint(self, name: &str) -> String {
        match self {
            Self::Azure(_) => azure::unknown_instance_hint(name),
            Self::Gcp(_) => gcp::unknown_instance_hint(name),
            Self::Aws(_) => aws::unknown_instance_hint(name),
            Self::Alibaba(_) => alibaba::unknown_instance_hint(name),
        }
    }

    /// A hint for a flavor label no pool carries, when the cloud sets that label itself on some
    /// nodes (AKS's `accelerator=nvidia`, GKE's `cloud.google.com/gke-accelerator`).
    pub fn cloud_label_hint(self, key: &str, value: &str, pools: &str) -> Option<String> {
        match self {
            Self::Azure(_) => azure::cloud_label_hint(key, value, pools),
            Self::Gcp(_) => gcp::cloud_label_hint(key, value, pools),
            Self::Aws(_) => aws::cloud_label_hint(key, value, pools),
            Self::Alibaba(_) => alibaba::cloud_label_hint(key, value, pools),
        }
    }

    /// Where the operators run (a node selector and tolerations), or `None` for the charts'
    /// defaults.
    pub fn operator_placement(self) -> Option<crate::operators::Placement> {
        match self {
            Self::Azure(a) => a.operator_placement(),
            Self::Gcp(g) => g.operator_placement(),
            // The charts' defaults: the GPU taint keeps the operators off GPU nodes.
            Self::Aws(_) | Self::Alibaba(_) => None,
        }
    }

    /// The service account's annotations for workload identity: (key, value or `None` while
    /// `up.sh` has to fill it in); none where the section wires no identity.
    pub fn identity_annotations(self) -> Vec<(&'static str, Option<String>)> {
        match self {
            Self::Azure(a) => a.identity_annotations(),
            Self::Gcp(g) => g.identity_annotations(),
            // EKS Pod Identity associates the role with the service account itself.
            Self::Aws(_) => Vec::new(),
            Self::Alibaba(a) => a.identity_annotations(),
        }
    }

    /// Labels the pods of a workload-identity service account carry.
    pub fn identity_pod_labels(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Azure(_) => azure::IDENTITY_POD_LABELS,
            Self::Gcp(_) | Self::Aws(_) | Self::Alibaba(_) => &[],
        }
    }

    /// Environment variables every RayJob and Serve application gets from the section.
    pub fn workload_env(self) -> Vec<(&'static str, String)> {
        match self {
            Self::Azure(a) => a.workload_env(),
            Self::Gcp(_) | Self::Aws(_) | Self::Alibaba(_) => Vec::new(),
        }
    }

    /// Whether the section wires an identity to the service account.
    pub fn has_identity(self) -> bool {
        match self {
            Self::Azure(a) => a.identity.is_some(),
            Self::Gcp(g) => g.identity.is_some(),
            Self::Aws(a) => a.identity.is_some(),
            Self::Alibaba(a) => a.identity.is_some(),
        }
    }

    /// The values the provider's script templates read (`templates/infra/<section>/`), under
    /// the section's name.
    pub fn script_context(self, p: &Profile) -> Value {
        match self {
            Self::Azure(a) => a.script_context(p),
            Self::Aws(a) => a.script_context(p),
            Self::Alibaba(a) => a.script_context(p),
            Self::Gcp(g) => g.script_context(p),
        }
    }

    /// Labels the workloads' namespace needs for the section's identity wiring (ACK's RRSA
    /// webhook acts only in labelled namespaces).
    pub fn identity_namespace_labels(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Azure(_) | Self::Gcp(_) | Self::Aws(_) => &[],
            Self::Alibaba(_) => alibaba::IDENTITY_NAMESPACE_LABELS,
        }
    }

    /// Files of `infra/` besides the scripts that the cloud's tools read (eksctl's
    /// ClusterConfig, ACK's request bodies): path → content.
    pub fn infra_files(
        self,
        p: &Profile,
    ) -> Result<Vec<(String, String)>, crate::diagnostic::Diagnostic> {
        match self {
            Self::Azure(_) | Self::Gcp(_) => Ok(Vec::new()),
            Self::Aws(a) => a.infra_files(p),
            Self::Alibaba(a) => Ok(a.infra_files()),
        }
    }

    /// Per pool, the fields `raykueue diff` compares (they are in scripts, not objects).
    pub fn pool_fields(self) -> Vec<(String, BTreeMap<&'static str, String>)> {
        let field = self.words().machine_field;
        self.node_groups()
            .into_iter()
            .map(|g| {
                let mut f = BTreeMap::new();
                f.insert(field, g.machine.to_owned());
                match self {
                    Self::Azure(_) => {
                        f.insert("mode", g.mode.to_owned());
                    }
                    Self::Gcp(gcp) => gcp.pool_fields(g.index, &mut f),
                    Self::Aws(_) | Self::Alibaba(_) => {}
                }
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

/// RK400: at most one provider section, reported at the second.
pub(crate) fn check(ctx: &mut crate::rules::Ctx<'_>) {
    let providers = ctx.profile.providers();
    if let [first, second, ..] = providers.as_slice() {
        ctx.report(
            &TWO_PROVIDERS,
            &format!("/{}", second.section()),
            format!(
                "the profile has both `{}` and `{}`: a profile provisions one cluster on one cloud",
                first.section(),
                second.section()
            ),
            Some(format!(
                "keep one section; for the same queues on another cloud, write a second profile that `extends` this one and sets `{}: null`",
                first.section()
            )),
        );
    }
}
