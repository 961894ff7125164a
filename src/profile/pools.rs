//! The shapes every cloud's node pools share: size (`count`, `autoscale`) and taints, and the
//! tolerations pods and flavors answer them with. The cloud sections (`cloud/*/section.rs`)
//! build on these.

use super::limits;
use super::names::{LabelValue, QualifiedName};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How many nodes a pool has: the one reading of `count` and `autoscale` that the rules, the
/// scripts and the summary share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolSize {
    /// Nodes at creation.
    pub initial: u32,
    /// The fewest nodes the pool can shrink to.
    pub min: u32,
    /// The most nodes the pool can grow to.
    pub max: u32,
    pub autoscaled: bool,
    /// False when the profile gives neither `count` nor `autoscale` (RK404): az's default
    /// applies.
    pub given: bool,
}

impl PoolSize {
    /// The size of a pool given `count` and `autoscale`, where the cloud's CLI creates
    /// `cli_default` nodes when told no count. With neither, the pool has exactly that many. An
    /// autoscaled pool without `count` starts at the default when it lies in the range, else at
    /// `min` (`up.sh` passes the count then, since the CLIs refuse a default outside the range).
    pub fn of(autoscale: Option<&Autoscale>, count: Option<u32>, cli_default: u32) -> Self {
        match (autoscale, count) {
            (Some(a), count) => PoolSize {
                initial: count.unwrap_or(if (a.min..=a.max).contains(&cli_default) {
                    cli_default
                } else {
                    a.min
                }),
                min: a.min,
                max: a.max,
                autoscaled: true,
                given: true,
            },
            (None, Some(c)) => PoolSize {
                initial: c,
                min: c,
                max: c,
                autoscaled: false,
                given: true,
            },
            (None, None) => PoolSize {
                initial: cli_default,
                min: cli_default,
                max: cli_default,
                autoscaled: false,
                given: false,
            },
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Autoscale {
    #[schemars(range(min = 0, max = 1000))]
    #[serde(deserialize_with = "limits::range::<_, u32, 0, 1000>")]
    pub min: u32,
    #[schemars(range(min = 1, max = 1000))]
    #[serde(deserialize_with = "limits::range::<_, u32, 1, 1000>")]
    pub max: u32,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

impl TaintEffect {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoSchedule => "NoSchedule",
            Self::PreferNoSchedule => "PreferNoSchedule",
            Self::NoExecute => "NoExecute",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Taint {
    pub key: QualifiedName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<LabelValue>,
    pub effect: TaintEffect,
}

impl Taint {
    /// The taint as Kubernetes writes it (`key`, `value` when set, `effect`), which is also
    /// how eksctl's ClusterConfig and ACK's node pool API take it: its own serialization.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TolerationOperator {
    #[default]
    Equal,
    Exists,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(clippy::struct_field_names)] // Kubernetes' field names (the YAML keys).
pub struct Toleration {
    /// Empty with `Exists` tolerates every taint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<QualifiedName>,
    #[serde(default)]
    pub operator: TolerationOperator,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<LabelValue>,
    /// Empty tolerates every effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

impl Toleration {
    /// Whether this toleration lets a pod onto a node with `taint` (Kubernetes' matching rule).
    pub fn tolerates(&self, taint: &Taint) -> bool {
        if let Some(effect) = self.effect
            && effect != taint.effect
        {
            return false;
        }
        match (&self.key, self.operator) {
            (None, TolerationOperator::Exists) => true,
            (Some(k), op) if *k == taint.key => match op {
                TolerationOperator::Exists => true,
                TolerationOperator::Equal => {
                    self.value.as_ref().map_or("", |v| v.as_str())
                        == taint.value.as_ref().map_or("", |v| v.as_str())
                }
            },
            _ => false,
        }
    }
}
