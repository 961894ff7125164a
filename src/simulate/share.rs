//! A node's dominant resource share under fair sharing, and how two compare
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/scheduler/fair_sharing.go` `DRS`, `CompareDRS`):
//! data the fair-sharing code computes and the snapshot keeps for a nomination, in a leaf
//! module so that neither needs the other.

use super::world::{Fr, FrMap, World};
use std::cmp::Ordering;

/// What the state keeps of the shares with its usage (`Snapshot::shares`), each weighed or
/// ranked when a nomination first asks. A node is a slot: a ClusterQueue's index, or the
/// number of ClusterQueues plus a Cohort's.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    /// Per slot, its share.
    pub(super) shares: Vec<Option<Drs>>,
    /// Per Cohort, the slots of its children that borrow, heaviest first (`compare`).
    pub(super) ranked: Vec<Option<Vec<usize>>>,
    /// Per slot, whether taking out any one admitted workload under it makes its share
    /// strictly smaller.
    pub(super) each_lowers: Vec<Option<bool>>,
}

impl Kept {
    /// The tables sized for `world`'s queues and Cohorts, on first use: most snapshots (every
    /// cycle takes one) never ask, or run without fair sharing.
    pub(super) fn sized(&mut self, world: &World) -> &mut Self {
        if self.shares.is_empty() {
            let slots = world.cqs.len() + world.cohorts.len();
            self.shares.resize(slots, None);
            self.ranked.resize(world.cohorts.len(), None);
            self.each_lowers.resize(slots, None);
        }
        self
    }

    /// Usage moved under ClusterQueue `cq`: what was kept of it and of its Cohorts up to the
    /// root (their shares, their rankings of their children, what taking a workload out of
    /// them does) no longer holds. Nothing else does change: a node's share weighs only the
    /// usage under it against fixed quotas.
    pub(super) fn forget(&mut self, world: &World, cq: usize) {
        if self.shares.is_empty() {
            return;
        }
        self.shares[cq] = None;
        self.each_lowers[cq] = None;
        let mut at = world.cqs[cq].cohort;
        while let Some(k) = at {
            let slot = world.cqs.len() + k;
            self.shares[slot] = None;
            self.each_lowers[slot] = None;
            self.ranked[k] = None;
            at = world.cohorts[k].parent;
        }
    }
}

/// The root of ClusterQueue `cq`'s Cohort tree and the root's child on its path (the queue
/// itself right under the root), as a slot; none without a Cohort.
pub(super) fn top(world: &World, cq: usize) -> Option<(usize, usize)> {
    let mut k = world.cqs[cq].cohort?;
    let mut child = cq;
    while let Some(p) = world.cohorts[k].parent {
        child = world.cqs.len() + k;
        k = p;
    }
    Some((k, child))
}

/// A node's dominant resource share (Kueue's `DRS`).
#[derive(Clone, Debug)]
pub(crate) struct Drs {
    pub(super) weight: f64,
    /// Per mille of what the parent lends, before the weight.
    pub(super) ratio: f64,
    /// Over its quota on some flavor/resource.
    pub(super) borrowing: bool,
    /// The flavor/resources it is over its quota on.
    pub(super) borrowed: Vec<Fr>,
}

impl Drs {
    /// Kueue's `NegativeDRS`: below every share, where a search for the highest starts.
    pub(super) fn negative() -> Self {
        Self {
            weight: 1.0,
            ratio: -1.0,
            borrowing: false,
            borrowed: Vec::new(),
        }
    }

    /// Kueue's `PreciseWeightedShare`.
    pub(super) fn share(&self) -> f64 {
        if self.ratio == 0.0 {
            0.0
        } else if self.weight == 0.0 {
            f64::INFINITY
        } else {
            self.ratio / self.weight
        }
    }

    pub(super) fn zero_weight_borrows(&self) -> bool {
        self.weight == 0.0 && self.ratio != 0.0
    }

    /// Whether the node is over its quota on a flavor/resource `requested` asks for
    /// (`IsBorrowingOn`).
    pub(super) fn borrowing_on(&self, requested: &FrMap<i128>) -> bool {
        self.borrowed
            .iter()
            .any(|fr| requested.get(fr).is_some_and(|&v| v > 0))
    }
}

/// Kueue's `CompareDRS`: lower first; weight-0 borrowers last, among themselves by ratio.
pub(super) fn compare(a: &Drs, b: &Drs) -> Ordering {
    match (a.zero_weight_borrows(), b.zero_weight_borrows()) {
        (true, true) => a.ratio.total_cmp(&b.ratio),
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.share().total_cmp(&b.share()),
    }
}
