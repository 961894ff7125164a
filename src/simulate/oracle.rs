//! The preemption oracle's memory: whether preemption could make room for a pod set's
//! resource in a ClusterQueue, remembered while the admitted workloads stay the same. Its own
//! module so that the snapshot (which holds it) and the flavor assignment (which asks it) need
//! nothing of each other.

use super::share::Drs;
use super::world::{Fr, World};

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
    pub(super) hopeless: Memo<Verdict>,
}

/// The fair-sharing shortcut's answer to one question (`fair_sharing::surely_none`), with what it
/// rests on outside the preemptor's own child of the root, so that it can be kept while
/// usage moves only under other children of the root.
#[derive(Clone, Debug)]
pub(super) struct Verdict {
    /// Preemption surely finds no targets.
    pub(super) none: bool,
    /// For a `false`: the child of the root (a slot, as `share::Kept` numbers nodes) under
    /// which a workload may go, when that is why.
    pub(super) taker: Option<usize>,
    /// For a `true` in a Cohort tree: the preemptor's side at the root's level, with the
    /// request counted.
    pub(super) top_mine: Option<Drs>,
    /// For a `true`: the children of the root whose usage moved since, each weighed again
    /// (`fair_sharing::still_none`) before the answer is used.
    pub(super) recheck: Vec<usize>,
}

impl OracleMemo {
    /// Usage moved under ClusterQueue `cq` (an admission or a release): what no longer holds
    /// is forgotten. The oracle's answers all go. A shortcut answer for a queue of another
    /// tree holds; so does one for a queue of the same tree under another child of the root
    /// (a `false` unless that child was why, a `true` once that child is weighed again),
    /// since only that child's share and workloads moved of all it weighed: its side's
    /// shares at every level stay, and so do the other siblings. One for the queue itself,
    /// or under the same child of the root, goes.
    pub(super) fn moved(&mut self, world: &World, cq: usize) {
        self.answers.clear();
        let Some((root, top)) = super::share::top(world, cq) else {
            self.hopeless.retain(|key, _| key.cq != cq);
            return;
        };
        self.hopeless.retain(|key, v| {
            if key.cq == cq {
                return false;
            }
            let Some((their_root, their_top)) = super::share::top(world, key.cq) else {
                return true;
            };
            if their_root != root {
                return true;
            }
            if their_top == top {
                return false;
            }
            if !v.none {
                return v.taker != Some(top);
            }
            if v.top_mine.is_some() && !v.recheck.contains(&top) {
                v.recheck.push(top);
            }
            true
        });
    }
}
