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

type Memo<V> = std::collections::HashMap<OracleKey, V, foldhash::fast::FixedState>;

/// The oracle's answers while the admitted workloads stay the same (`State` clears it), and
/// the fair-sharing preemptor's shortcut (`fair_sharing::surely_none`) as the turned-away
/// shortcut asks it: for the same question, of the heads of one queue in cycle after cycle.
#[derive(Clone, Debug, Default)]
pub(super) struct OracleMemo {
    pub(super) answers: Memo<(Possibility, u32)>,
    pub(super) hopeless: Memo<bool>,
}

impl OracleMemo {
    pub(super) fn clear(&mut self) {
        self.answers.clear();
        self.hopeless.clear();
    }
}
