//! The preemption oracle's memory: whether preemption could make room for a pod set's
//! resource in a ClusterQueue, remembered while the admitted workloads stay the same. Its own
//! module so that the snapshot (which holds it) and the flavor assignment (which asks it) need
//! nothing of each other.

use super::world::Fr;

/// Kueue's `preemptionMode`, ordered worst to best.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Possibility {
    NoFit,
    NoCandidates,
    Preempt,
    Reclaim,
    Fit,
}

/// One question to the preemption oracle (see `fits_quota`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct OracleKey {
    pub(super) cq: usize,
    pub(super) fr: Fr,
    pub(super) val: i128,
    pub(super) priority: i64,
    pub(super) created: Option<u64>,
}

/// The oracle's answers while the admitted workloads stay the same (`State` clears it).
pub(super) type OracleMemo =
    std::collections::HashMap<OracleKey, (Possibility, u32), foldhash::fast::FixedState>;
