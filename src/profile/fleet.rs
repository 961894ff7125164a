//! `kind: Fleet`: one file naming a MultiKueue manager and its worker clusters, each a profile
//! of its own. The spelling is the fleet contract's (`manager.profile`, `workers[].name`,
//! `workers[].profile`, `multiKueue.dispatcher`, `multiKueue.origin`); the facts behind it are
//! Kueue v0.19.2's (`apis/kueue/v1beta2/multikueue_types.go`, `apis/config/v1beta2/
//! configuration_types.go` `MultiKueue`).
//!
//! A member profile learns its part in the fleet through [`Role`], which the fleet pipeline sets
//! on the typed profile: the checks and the model read it, the profile file never spells it.

use super::{ApiVersion, Dns1123Label, LabelValue, limits};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum FleetKind {
    Fleet,
}

/// A MultiKueue fleet: a manager cluster users submit to, and the workers it dispatches to.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fleet {
    /// Format version: `raykueue.io/v1alpha1`.
    pub api_version: ApiVersion,
    pub kind: FleetKind,
    /// The fleet's name: its MultiKueueConfig and AdmissionCheck are named after it.
    pub name: Dns1123Label,
    /// Free text for reviewers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The cluster users submit to. Its queues and workloads are what users see; without
    /// `queues` they are derived from the workers'.
    pub manager: Member,
    /// The clusters that run the jobs, in dispatch order (1 to 20: MultiKueueConfig's
    /// `spec.clusters` maxItems).
    #[schemars(length(min = 1, max = 20))]
    #[serde(deserialize_with = "limits::items::<_, _, 1, 20>")]
    pub workers: Vec<Worker>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_kueue: Option<FleetMultiKueue>,
}

/// The manager: a profile.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Member {
    /// A shipped profile name or a path relative to the fleet file.
    #[schemars(length(min = 1, max = 4096))]
    pub profile: String,
}

/// One worker cluster.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Worker {
    /// The MultiKueueCluster's name, its kubeconfig Secret's (`<name>-kubeconfig`) and the
    /// worker's folder in the bundle.
    pub name: Dns1123Label,
    /// A shipped profile name or a path relative to the fleet file.
    #[schemars(length(min = 1, max = 4096))]
    pub profile: String,
}

/// The manager's MultiKueue settings (Kueue's Configuration `multiKueue` block).
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FleetMultiKueue {
    /// How workers are offered a workload: all at once (Kueue's default), or a few at a time in
    /// fleet order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatcher: Option<Dispatcher>,
    /// How many workers the Incremental dispatcher adds per round (Kueue's default: 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 20))]
    #[serde(deserialize_with = "limits::opt_range::<_, u32, 1, 20>")]
    pub step_size: Option<u32>,
    /// The `kueue.x-k8s.io/multikueue-origin` label value on the objects the manager creates on
    /// workers (Kueue's default: `multikueue`). Give each manager its own when workers are
    /// shared: a manager's garbage collector deletes remote objects of its origin that it does
    /// not know.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<LabelValue>,
}

/// Kueue's built-in dispatchers, by the contract's short names or Kueue's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Dispatcher {
    #[serde(alias = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once")]
    AllAtOnce,
    #[serde(alias = "kueue.x-k8s.io/multikueue-dispatcher-incremental")]
    Incremental,
}

impl Dispatcher {
    /// Kueue's `dispatcherName` (kueue@v0.19.2 `apis/config/v1beta2/configuration_types.go`).
    pub(crate) fn kueue_name(self) -> &'static str {
        match self {
            Self::AllAtOnce => "kueue.x-k8s.io/multikueue-dispatcher-all-at-once",
            Self::Incremental => "kueue.x-k8s.io/multikueue-dispatcher-incremental",
        }
    }
}

/// Kueue's default origin label value (kueue@v0.19.2 `apis/config/v1beta2/defaults.go`
/// `DefaultMultiKueueOrigin`).
pub(crate) const DEFAULT_ORIGIN: &str = "multikueue";
/// Kueue's default Incremental step (`defaults.go`: `StepSize` 3).
pub(crate) const DEFAULT_STEP: u32 = 3;
/// The Incremental dispatcher's round (kueue@v0.19.2
/// `pkg/controller/workloaddispatcher/incrementaldispatcher.go`: 5 minutes, fixed).
pub(crate) const INCREMENTAL_ROUND_SECONDS: u64 = 300;
/// The controller name of MultiKueue's admission check.
pub(crate) const MULTIKUEUE_CONTROLLER: &str = "kueue.x-k8s.io/multikueue";
/// The service account the manager acts as on every worker, in the worker's Kueue namespace.
pub(crate) const MANAGER_SERVICE_ACCOUNT: &str = "multikueue-sa";

impl Fleet {
    pub(crate) fn dispatcher(&self) -> Dispatcher {
        self.multi_kueue
            .as_ref()
            .and_then(|m| m.dispatcher)
            .unwrap_or(Dispatcher::AllAtOnce)
    }

    pub(crate) fn origin(&self) -> &str {
        self.multi_kueue
            .as_ref()
            .and_then(|m| m.origin.as_deref())
            .unwrap_or(DEFAULT_ORIGIN)
    }

    /// Workers offered per round: all of them at once, or the Incremental step.
    pub(crate) fn step(&self) -> usize {
        match self.dispatcher() {
            Dispatcher::AllAtOnce => self.workers.len(),
            Dispatcher::Incremental => self
                .multi_kueue
                .as_ref()
                .and_then(|m| m.step_size)
                .unwrap_or(DEFAULT_STEP) as usize,
        }
    }

    /// The MultiKueue AdmissionCheck's name (and the MultiKueueConfig's: the fleet's name).
    pub(crate) fn admission_check(&self) -> String {
        format!("{}-multikueue", self.name)
    }
}

/// A member's part in a fleet, set by the fleet pipeline on the typed profile.
#[derive(Clone, Debug)]
pub enum Role {
    /// The manager: its ClusterQueues dispatch through the fleet's MultiKueue check; its
    /// workloads run on the workers.
    Manager(Arc<Fleet>),
    /// A worker: it grants the manager's service account what MultiKueue needs for these
    /// Kueue integrations (the manager's `frameworks`).
    Worker {
        fleet: Arc<Fleet>,
        name: Dns1123Label,
        frameworks: Vec<super::Framework>,
    },
}
