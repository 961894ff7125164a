//! The admission facts Kueue's view of a profile rests on, shared by `checks` and `simulate`
//! so the two never disagree: a workload's pod sets as Kueue counts them (`pods`) and the
//! per-flavor quotas of ClusterQueues and cohorts (`quota`) in their Cohort tree (`cohorts`).
//! It imports only earlier stages (the profile types and the cloud seam), and both `checks`
//! and `simulate` import it (the only other edge between them is checks → simulate: the rules
//! ask the simulator).

pub(crate) mod cohorts;
pub(crate) mod counted;
pub(crate) mod kuberay;
pub(crate) mod metrics;
pub(crate) mod monitoring;
pub(crate) mod operators;
pub(crate) mod pods;
mod quota;

pub(crate) use quota::Quotas;

/// Label on every generated object, so users (and `kubectl apply --prune`) can select them.
pub(crate) const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "raykueue");
