//! `operators.kueue.configuration`: the part of Kueue's Configuration (`config.kueue.x-k8s.io/v1beta2`)
//! a profile may set. Field names, enums and defaults are Kueue v0.19.2's
//! (`apis/config/v1beta2/configuration_types.go`, defaults in `defaults.go`); every field not
//! written here keeps the pinned chart's default Configuration, which raykueue merges this over
//! key by key (`model::infra::kueue_values`). What Kueue's own `pkg/config/validation.go` refuses
//! beyond what the schema can say is checked in `checks::operators` (RK152).

use super::{LabelSelector, QualifiedName, Quantity, limits, names::GoDuration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The part of Kueue's Configuration a profile may set; every other field keeps the chart's
/// default.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KueueConfiguration {
    /// The namespaces whose jobs and pods Kueue manages. The chart also makes it the
    /// `namespaceSelector` of Kueue's webhooks (kueue@v0.19.2
    /// `charts/kueue/templates/webhook/manifests.yaml`), so pods created elsewhere never wait
    /// for Kueue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub managed_jobs_namespace_selector: Option<LabelSelector>,
    /// Fair sharing between ClusterQueues and Cohorts: present means on (v1beta2 has no
    /// `enable`). ClusterQueue and Cohort weights only count when it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fair_sharing: Option<FairSharing>,
    /// Ordering of workloads within a ClusterQueue by their LocalQueue's decayed usage
    /// (`AdmissionFairSharing` gate, beta and on in 0.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admission_fair_sharing: Option<AdmissionFairSharing>,
    /// All-or-nothing scheduling: an admitted workload whose pods are not all ready within
    /// `timeout` is evicted and requeued. Kueue v0.19.2 turns it on even when the Configuration
    /// leaves it out, with a 30m timeout (`apis/config/v1beta2/defaults.go`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    /// Which requested resources Kueue counts against quota, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<QuotaResources>,
}

/// Kueue's `FairSharing`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FairSharing {
    /// Which constraints a fair-sharing preemption must satisfy, tried in order. Kueue accepts
    /// `[LessThanOrEqualToFinalShare]`, `[LessThanInitialShare]` or both in that order.
    #[schemars(length(min = 1, max = 2))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 2>")]
    pub preemption_strategies: Vec<PreemptionStrategy>,
}

/// Kueue's `PreemptionStrategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum PreemptionStrategy {
    /// Preempt only if the preemptor's queue, with the new workload, has a share at most the
    /// preemptee's queue's share without the preempted workload.
    LessThanOrEqualToFinalShare,
    /// Preempt only if the preemptor's queue, with the new workload, has a share strictly less
    /// than the preemptee's queue's share.
    LessThanInitialShare,
}

impl PreemptionStrategy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::LessThanOrEqualToFinalShare => "LessThanOrEqualToFinalShare",
            Self::LessThanInitialShare => "LessThanInitialShare",
        }
    }
}

/// Kueue's `AdmissionFairSharing`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AdmissionFairSharing {
    /// After how long a LocalQueue's recorded usage decays by half (`0s` resets it at once).
    pub usage_half_life_time: GoDuration,
    /// How often Kueue samples usage (Kueue's default is 5m; must be more than zero).
    #[serde(default = "default_sampling_interval")]
    pub usage_sampling_interval: GoDuration,
    /// Weight of each resource in a LocalQueue's usage (1 when not listed; at most 8).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(deserialize_with = "limits::entries::<_, _, _, 8>")]
    #[schemars(extend("maxProperties" = 8))]
    pub resource_weights: BTreeMap<QualifiedName, Weight>,
}

fn default_sampling_interval() -> GoDuration {
    GoDuration("5m".into())
}

/// A non-negative number (a resource weight).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, JsonSchema)]
#[schemars(transparent)]
pub struct Weight(#[schemars(range(min = 0))] pub f64);

impl<'de> Deserialize<'de> for Weight {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if v.is_finite() && v >= 0.0 {
            Ok(Self(v))
        } else {
            Err(serde::de::Error::custom(format!(
                "expected a number of 0 or more, found {v}"
            )))
        }
    }
}

/// Kueue's `WaitForPodsReady`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitForPodsReady {
    /// How long an admitted workload has to get all its pods ready before Kueue evicts and
    /// requeues it (Kueue's default: 30m).
    pub timeout: GoDuration,
    /// Hold every later admission in the ClusterQueue until this workload's pods are ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_admission: Option<bool>,
    /// How long a running workload may stay not ready (a pod replaced) before it is requeued;
    /// defaults to `timeout`, `0s` switches it off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_timeout: Option<GoDuration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeuing_strategy: Option<RequeuingStrategy>,
}

/// Kueue's `RequeuingStrategy`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequeuingStrategy {
    /// Where a requeued workload goes in the queue: by its eviction (default) or creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<RequeuingTimestamp>,
    /// Requeues before the workload is deactivated; unlimited when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 2147483647>")]
    pub backoff_limit_count: Option<u32>,
    /// Base of the exponential requeue delay (Kueue's default: 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 2147483647>")]
    pub backoff_base_seconds: Option<u32>,
    /// Longest requeue delay (Kueue's default: 3600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 2_147_483_647))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 0, 2147483647>")]
    pub backoff_max_seconds: Option<u32>,
}

/// Kueue's `RequeuingTimestamp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum RequeuingTimestamp {
    Eviction,
    Creation,
}

/// Kueue's `Resources`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuotaResources {
    /// Which requested resources are checked against quota: all of them (`BlockUndeclared`,
    /// Kueue's default: a resource no ClusterQueue covers blocks admission) or only the covered
    /// ones (`IgnoreUndeclared`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_check_strategy: Option<QuotaCheckStrategy>,
    /// Resources whose name starts with one of these are not counted at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 32>")]
    pub exclude_resource_prefixes: Vec<ResourcePrefix>,
    /// Resources counted as others (a MIG slice as a share of a GPU, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 32))]
    #[serde(deserialize_with = "limits::items::<_, _, 0, 32>")]
    pub transformations: Vec<ResourceTransformation>,
}

/// Kueue's `QuotaCheckStrategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum QuotaCheckStrategy {
    BlockUndeclared,
    IgnoreUndeclared,
}

super::names::name_type!(
    /// The start of a resource name (`ephemeral-storage`, `example.com/`).
    ResourcePrefix,
    "^[A-Za-z0-9]([-A-Za-z0-9_./]*)?$",
    1,
    253,
    "the start of a resource name such as ephemeral-storage or example.com/"
);

/// Kueue's `ResourceTransformation`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceTransformation {
    /// The resource a pod requests.
    pub input: QualifiedName,
    /// `Retain` (Kueue's default) counts the input as well; `Replace` counts only the outputs.
    #[serde(default)]
    pub strategy: TransformationStrategy,
    /// A resource whose requested amount multiplies the outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiply_by: Option<QualifiedName>,
    /// What one unit of the input counts as (at most 8). Empty with `Replace`: the input is not
    /// counted.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[serde(deserialize_with = "limits::entries::<_, _, _, 8>")]
    #[schemars(extend("maxProperties" = 8))]
    pub outputs: BTreeMap<QualifiedName, Quantity>,
}

/// Kueue's `ResourceTransformationStrategy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TransformationStrategy {
    #[default]
    Retain,
    Replace,
}
