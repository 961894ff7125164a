//! Capacity-aware admission in the profile: Kueue's Topology objects and the pod-set requests
//! that ask for one of their levels (topology-aware scheduling, TAS), AdmissionChecks with their
//! ProvisioningRequestConfig, and raykueue's own start-up estimate of a node pool at zero.
//! Field names and limits are Kueue v0.19.2's (`apis/kueue/v1beta2/topology_types.go`,
//! `admissioncheck_types.go`, `provisioningrequestconfig_types.go`, and their CRDs); the profile
//! keys are spelled as `docs/profile.md` lists them.

use super::{Dns1123Label, Dns1123Subdomain, GoDuration, QualifiedName, limits};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The node label Kubernetes gives every node (one value per node): Kueue allows it only as a
/// Topology's last level.
pub(crate) const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// A Kueue Topology: the levels topology-aware scheduling places pods by.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Topology {
    /// The Topology's name; flavors name it in `topologyName`.
    pub name: Dns1123Subdomain,
    /// The node label of each level, broadest first (1 to 16, each once;
    /// `kubernetes.io/hostname` only as the last).
    #[schemars(length(min = 1, max = 16))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 16>")]
    pub levels: Vec<QualifiedName>,
}

/// What a head or worker group asks of topology-aware scheduling: all its pods in one domain of
/// a level (`required`), as few domains as it can starting at a level (`preferred`), or any
/// placement on the flavor's nodes (`unconstrained: true`). Written as Kueue's pod-set
/// annotations `kueue.x-k8s.io/podset-{required,preferred,unconstrained}-topology`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TopologyRequest {
    Required(QualifiedName),
    Preferred(QualifiedName),
    Unconstrained(AlwaysTrue),
}

impl TopologyRequest {
    /// The level asked for; `None` for `unconstrained` (Kueue's lowest level).
    pub fn level(&self) -> Option<&str> {
        match self {
            Self::Required(l) | Self::Preferred(l) => Some(l.as_str()),
            Self::Unconstrained(_) => None,
        }
    }

    /// The pod-template annotation Kueue reads, and its value.
    pub fn annotation(&self) -> (&'static str, &str) {
        match self {
            Self::Required(l) => ("kueue.x-k8s.io/podset-required-topology", l.as_str()),
            Self::Preferred(l) => ("kueue.x-k8s.io/podset-preferred-topology", l.as_str()),
            Self::Unconstrained(_) => ("kueue.x-k8s.io/podset-unconstrained-topology", "true"),
        }
    }

    /// `required: kubernetes.io/hostname`, for messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Required(l) => format!("required: {l}"),
            Self::Preferred(l) => format!("preferred: {l}"),
            Self::Unconstrained(_) => "unconstrained: true".into(),
        }
    }
}

/// `true`, the only value Kueue reads as asking for unconstrained placement: `"false"` still
/// marks the pod set as asking for TAS but names no level, so no flavor ever matches it
/// (kueue@v0.19.2 `pkg/workload/workload.go` `IsExplicitlyRequestingTAS`,
/// `pkg/cache/scheduler/tas_flavor_snapshot.go` `levelKey`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AlwaysTrue(bool);

impl<'de> Deserialize<'de> for AlwaysTrue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if bool::deserialize(d)? {
            Ok(Self(true))
        } else {
            Err(serde::de::Error::custom(
                "expected `true`: `unconstrained: false` asks for no level, and Kueue admits such a pod set on no flavor; remove `topology` instead",
            ))
        }
    }
}

impl JsonSchema for AlwaysTrue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AlwaysTrue".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "boolean", "const": true })
    }
}

/// A Kueue AdmissionCheck: a ClusterQueue that names it admits a workload only once the check
/// is Ready.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdmissionCheck {
    /// The AdmissionCheck's name, also its ProvisioningRequestConfig's (Kueue refers to the
    /// config by a DNS label).
    pub name: Dns1123Label,
    /// A ProvisioningRequest check (controller `kueue.x-k8s.io/provisioning-request`): before it
    /// admits a workload, Kueue asks the cluster autoscaler for its nodes.
    pub provisioning_request: ProvisioningRequestConfig,
}

impl AdmissionCheck {
    /// The name of the check's ProvisioningRequestConfig: its own, else the check's.
    pub fn config_name(&self) -> &str {
        self.provisioning_request
            .name
            .as_ref()
            .map_or(self.name.as_str(), |n| n.as_str())
    }
}

/// Kueue's ProvisioningRequestConfig.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProvisioningRequestConfig {
    /// The ProvisioningRequestConfig's own name; the check's when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<Dns1123Label>,
    /// The autoscaler's class: `queued-provisioning.gke.io` (GKE),
    /// `best-effort-atomic-scale-up.autoscaling.x-k8s.io` or `check-capacity.autoscaling.x-k8s.io`
    /// (the upstream Cluster Autoscaler's).
    pub provisioning_class_name: Dns1123Subdomain,
    /// Only pod sets that request one of these take part (all pod sets when empty; at most 100).
    /// A workload none of whose pod sets requests one passes the check at once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 100))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 100>")]
    pub managed_resources: Vec<QualifiedName>,
    /// Passed to the ProvisioningRequest (GKE: `maxRunDurationSeconds`; at most 8 here).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(extend("maxProperties" = 8))]
    #[serde(deserialize_with = "limits::entries::<_, _, _, 8>")]
    pub parameters: BTreeMap<QualifiedName, ParameterValue>,
    /// How often a failed or expired request is retried before the workload is deactivated
    /// (Kueue's defaults: 3 retries, 60 s base, 1800 s at most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_strategy: Option<ProvisioningRetryStrategy>,
    /// Which pod sets are merged into one entry of the request; none are when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_set_merge_policy: Option<PodSetMergePolicy>,
}

super::names::name_type!(
    /// A ProvisioningRequest parameter value (at most 255 characters, one line).
    ParameterValue,
    "^[^\\n]*$",
    0,
    255,
    "a parameter value: at most 255 characters on one line"
);

/// Kueue's `ProvisioningRequestRetryStrategy`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(clippy::struct_field_names)] // Kueue's field names (the YAML keys).
pub struct ProvisioningRetryStrategy {
    /// Retries before the check is Rejected and the workload deactivated; 0 retries never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 2147483647>")]
    pub backoff_limit_count: Option<u32>,
    /// Base of the exponential delay between retries, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 2147483647>")]
    pub backoff_base_seconds: Option<u32>,
    /// The longest delay between retries, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 2147483647>")]
    pub backoff_max_seconds: Option<u32>,
}

/// Kueue's `ProvisioningRequestConfigPodSetMergePolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PodSetMergePolicy {
    IdenticalPodTemplates,
    IdenticalWorkloadSchedulingRequirements,
}

/// One AdmissionCheck a ClusterQueue waits for: its name (for every flavor), or the name with
/// the flavors it applies to.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ClusterQueueCheck {
    Name(Dns1123Label),
    OnFlavors(ScopedCheck),
}

/// An AdmissionCheck that applies only to workloads assigned one of `onFlavors`. Inlined in
/// the schema: a failed `anyOf` is reported at the `anyOf` (`tests/it/fastpath.rs`).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(inline)]
pub struct ScopedCheck {
    pub name: Dns1123Label,
    /// Flavors of this ClusterQueue (1 to 64).
    #[schemars(length(min = 1, max = 64))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 64>")]
    pub on_flavors: Vec<Dns1123Subdomain>,
}

impl ClusterQueueCheck {
    pub fn name(&self) -> &str {
        match self {
            Self::Name(n) => n.as_str(),
            Self::OnFlavors(s) => s.name.as_str(),
        }
    }

    /// The flavors it applies to; empty means all of the ClusterQueue's.
    pub fn on_flavors(&self) -> &[Dns1123Subdomain] {
        match self {
            Self::Name(_) => &[],
            Self::OnFlavors(s) => &s.on_flavors,
        }
    }

    /// Whether it applies to a workload assigned `flavor`.
    pub fn applies_to(&self, flavor: &str) -> bool {
        let on = self.on_flavors();
        on.is_empty() || on.iter().any(|f| f.as_str() == flavor)
    }
}

/// raykueue's estimates of how long a pod waits for a node of a pool at zero: not measured, and
/// no provider documents such figures. Rule RK194 compares them with Kueue's
/// `waitForPodsReady.timeout`; set them to what your cluster shows.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Estimates {
    /// A new node until it is Ready with its GPUs allocatable: VM, boot, join, GPU driver and
    /// device plugin (raykueue's estimate: 5m).
    #[serde(default = "default_node_startup")]
    pub node_startup: GoDuration,
    /// The first pull of the Ray image on a new node (raykueue's estimate: 5m; GPU images are
    /// several GB).
    #[serde(default = "default_image_pull")]
    pub image_pull: GoDuration,
}

impl Default for Estimates {
    fn default() -> Self {
        Self {
            node_startup: default_node_startup(),
            image_pull: default_image_pull(),
        }
    }
}

fn default_node_startup() -> GoDuration {
    GoDuration("5m".into())
}
fn default_image_pull() -> GoDuration {
    GoDuration("5m".into())
}

impl Estimates {
    /// A pod on a pool at zero: node start-up plus image pull, in seconds.
    pub fn cold_start_seconds(&self) -> f64 {
        self.node_startup.seconds() + self.image_pull.seconds()
    }
}
