//! Which admitted workloads a pending one preempts, as Kueue v0.19.2's classical preemptor
//! chooses them (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/preemption/preemption.go`
//! `classicalPreemptions`, `classical/candidate_generator.go`,
//! `classical/hierarchical_preemption.go`, `common/ordering.go`, `common/preemption_policy.go`).
//!
//! Candidates are the workloads that hold a flavor/resource the preemptor needs and that the
//! policies allow: in its own ClusterQueue (`withinClusterQueue`), and in other queues of the
//! cohort that are over their nominal quota (`reclaimWithinCohort`; with `borrowWithinCohort`
//! also while the preemptor borrows). They are ordered other queues first, lowest priority,
//! most recently admitted, and removed one by one until the preemptor fits; then each but the
//! last is put back, newest first, if the preemptor still fits without it.

use super::quota::Node;
use super::snapshot::Snapshot;
use super::world::{Fr, FrMap, World};
use crate::profile::{ReclaimWithinCohort, WithinClusterQueue};
use std::cmp::Ordering;

/// Why a workload was preempted, in Kueue's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // Kueue's own names for the reasons.
pub enum Reason {
    InClusterQueue,
    InCohortReclamation,
    InCohortReclaimWhileBorrowing,
    InCohortFairSharing,
}

impl Reason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::InClusterQueue => "InClusterQueue",
            Self::InCohortReclamation => "InCohortReclamation",
            Self::InCohortReclaimWhileBorrowing => "InCohortReclaimWhileBorrowing",
            Self::InCohortFairSharing => "InCohortFairSharing",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Target {
    pub(crate) workload: usize,
    pub(crate) reason: Reason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    WithinCq,
    /// The preemptor fits its own nominal quota: it reclaims whatever the priorities.
    HierarchicalReclaim,
    /// Only if the preemptor does not borrow once admitted.
    ReclaimWithoutBorrowing,
    ReclaimWhileBorrowing,
}

impl Variant {
    fn reason(self) -> Reason {
        match self {
            Self::WithinCq => Reason::InClusterQueue,
            Self::HierarchicalReclaim | Self::ReclaimWithoutBorrowing => {
                Reason::InCohortReclamation
            }
            Self::ReclaimWhileBorrowing => Reason::InCohortReclaimWhileBorrowing,
        }
    }
}

#[derive(Clone, Copy)]
pub(super) enum Policy {
    Never,
    LowerPriority,
    LowerOrNewerEqualPriority,
    Any,
}

/// Kueue's `SatisfiesPreemptionPolicy`; the queue-order timestamp is the creation time
/// (`submitAt`): a requeued victim keeps it (conventions, 2).
pub(super) fn satisfies(world: &World, policy: Policy, preemptor: usize, candidate: usize) -> bool {
    let p = &world.workloads[preemptor];
    let c = &world.workloads[candidate];
    match policy {
        Policy::Never => false,
        Policy::LowerPriority => p.priority > c.priority,
        Policy::LowerOrNewerEqualPriority => {
            p.priority > c.priority || (p.priority == c.priority && p.submit_at < c.submit_at)
        }
        Policy::Any => true,
    }
}

pub(super) fn within_policy(p: WithinClusterQueue) -> Policy {
    match p {
        WithinClusterQueue::Never => Policy::Never,
        WithinClusterQueue::LowerPriority => Policy::LowerPriority,
        WithinClusterQueue::LowerOrNewerEqualPriority => Policy::LowerOrNewerEqualPriority,
    }
}

pub(super) fn reclaim_policy(p: ReclaimWithinCohort) -> Policy {
    match p {
        ReclaimWithinCohort::Never => Policy::Never,
        ReclaimWithinCohort::LowerPriority => Policy::LowerPriority,
        ReclaimWithinCohort::Any => Policy::Any,
    }
}

struct Candidate {
    workload: usize,
    variant: Variant,
    /// The Cohort at which the candidate was found (its subtree root); none in the
    /// preemptor's own queue.
    lca: Option<usize>,
}

/// Kueue's `classicalPreemptions`: the preemption targets that make `requests` fit for
/// `preemptor`, or none. `frs` are the flavor/resources that need preemption. The snapshot is
/// left as it was found.
pub(super) fn classical(
    snap: &mut Snapshot<'_>,
    preemptor: usize,
    frs: &[Fr],
    requests: &FrMap<i128>,
) -> Vec<Target> {
    let world = snap.world;
    let cq = world.workloads[preemptor].cq;
    let spec = &world.cqs[cq];
    let classify = |snap: &Snapshot<'_>, c: usize, advantage: bool| -> Option<Variant> {
        if !snap.uses_any(c, frs) {
            return None;
        }
        let same = world.workloads[c].cq == cq;
        let policy = if same {
            within_policy(spec.within_cq)
        } else {
            reclaim_policy(spec.reclaim)
        };
        if !satisfies(world, policy, preemptor, c) {
            return None;
        }
        Some(if same {
            Variant::WithinCq
        } else if advantage {
            Variant::HierarchicalReclaim
        } else {
            match spec.borrow_within_cohort {
                None => Variant::ReclaimWithoutBorrowing,
                Some(b) => {
                    let (cp, ip) = (
                        world.workloads[c].priority,
                        world.workloads[preemptor].priority,
                    );
                    let above =
                        cp >= ip || b.max_priority_threshold.is_some_and(|t| cp > i64::from(t));
                    if above {
                        Variant::ReclaimWithoutBorrowing
                    } else {
                        Variant::ReclaimWhileBorrowing
                    }
                }
            }
        })
    };
    let collect = |snap: &Snapshot<'_>, from: usize, advantage: bool, lca: Option<usize>| {
        snap.admitted_in(from)
            .filter_map(|c| {
                classify(snap, c, advantage).map(|variant| Candidate {
                    workload: c,
                    variant,
                    lca,
                })
            })
            .collect::<Vec<Candidate>>()
    };
    let mut same_queue = if spec.within_cq == WithinClusterQueue::Never {
        Vec::new()
    } else {
        collect(snap, cq, false, None)
    };
    let forbidden = spec.borrow_within_cohort.is_none();
    let (mut hierarchy, mut by_priority) = (Vec::new(), Vec::new());
    if let Some(cohort) = spec.cohort
        && spec.reclaim != ReclaimWithinCohort::Never
    {
        // `collectCandidatesForHierarchicalReclaim`: up the tree from the queue's Cohort,
        // each subtree (but the one just left) gives the queues that are over their quota
        // in it; the preemptor has the hierarchical advantage from the first subtree whose
        // quota holds its request.
        let (mut advantage, mut remaining) = snap.usage.fit_in_quota(world, Node::Cq(cq), requests);
        // Without the hierarchical advantage and without `borrowWithinCohort`, every
        // candidate of another queue is `ReclaimWithoutBorrowing`; a queue at or over nominal
        // gets the single attempt that allows borrowing, where such candidates are invalid.
        // Skipping them changes nothing but spares a scan of the cohort: this is the common
        // case of a long backlog (every parked head of a full queue asks it again). Only in
        // a one-level tree: deeper, the advantage may come from a Cohort on the way up.
        let flat = world.cohorts[cohort].parent.is_none();
        let useless = flat && forbidden && !advantage && !under_nominal(snap, cq, frs);
        let mut previous = None;
        let mut at = Some(cohort).filter(|_| !useless);
        while let Some(k) = at {
            let mut found = Vec::new();
            subtree_candidates(snap, cq, k, previous, frs, &mut |snap, other| {
                found.extend(collect(snap, other, advantage, Some(k)));
            });
            if advantage {
                hierarchy.extend(found);
            } else {
                by_priority.extend(found);
            }
            let (fits, rest) = snap.usage.fit_in_quota(world, Node::Cohort(k), &remaining);
            advantage |= fits;
            remaining = rest;
            previous = Some(k);
            at = world.cohorts[k].parent;
        }
    }
    let order =
        |a: &Candidate, b: &Candidate| candidates_ordering(snap, cq, a.workload, b.workload);
    same_queue.sort_by(order);
    by_priority.sort_by(order);
    hierarchy.sort_by(order);
    let no_other_queues = hierarchy.is_empty() && by_priority.is_empty();
    let no_hierarchy = hierarchy.is_empty();
    let mut all = hierarchy;
    all.extend(by_priority);
    all.extend(same_queue);

    let attempts: &[bool] = if no_other_queues || (forbidden && !under_nominal(snap, cq, frs)) {
        &[true]
    } else if forbidden && no_hierarchy {
        &[false, true]
    } else {
        &[true, false]
    };
    for &borrowing in attempts {
        let mut chosen: Vec<Target> = Vec::new();
        for c in &all {
            if !valid(snap, cq, c, borrowing, frs) {
                continue;
            }
            snap.remove_usage(c.workload);
            chosen.push(Target {
                workload: c.workload,
                reason: c.variant.reason(),
            });
            if fits(snap, cq, requests, borrowing) {
                let chosen = fill_back(snap, cq, requests, borrowing, chosen);
                for t in &chosen {
                    snap.restore(t.workload);
                }
                return chosen;
            }
        }
        for t in &chosen {
            snap.restore(t.workload);
        }
    }
    Vec::new()
}

/// Whether preempting for `val` of `fr` would surely find no targets for `preemptor`, and so
/// would any preemption it asks for with at least `val` of `fr` among its needs. Two things
/// must hold. No admitted workload of its own queue that uses `fr` is one the queue's policy
/// lets it preempt: removing workloads that do not use `fr` never makes room in `fr`. And no
/// workload of another queue can help: the queue has no cohort or does not reclaim, or it
/// lacks `borrowWithinCohort` and `val` does not fit its nominal quota on top of its usage.
/// Then `targets` has no hierarchical candidates (that needs the request to fit nominal), the
/// attempt that forbids borrowing can never fit (its usage of `fr` does not fall), and the
/// attempt that allows borrowing takes no candidate of another queue
/// (`ReclaimWithoutBorrowing`). A `false` says nothing.
pub(super) fn surely_none(snap: &Snapshot<'_>, preemptor: usize, fr: Fr, val: i128) -> bool {
    let world = snap.world;
    let cq = world.workloads[preemptor].cq;
    let spec = &world.cqs[cq];
    // Deeper trees (a Cohort on the way up may give the hierarchical advantage) and fair
    // sharing (its preemptor ignores `borrowWithinCohort`) are left to the full search.
    let flat = spec
        .cohort
        .is_none_or(|k| world.cohorts[k].parent.is_none())
        && world.fair_sharing.is_none();
    let others_out = spec.cohort.is_none()
        || spec.reclaim == ReclaimWithinCohort::Never
        || (flat
            && spec.borrow_within_cohort.is_none()
            && spec.quota(fr).nominal < snap.usage.of(cq, fr) + val);
    if !others_out {
        return false;
    }
    let policy = within_policy(spec.within_cq);
    spec.within_cq == WithinClusterQueue::Never
        || !snap
            .admitted_in(cq)
            .any(|c| snap.uses_any(c, &[fr]) && satisfies(world, policy, preemptor, c))
}

/// Kueue's `CandidatesOrdering`: other ClusterQueues first, lower priority first, more
/// recently admitted first; the UID tie-break is the workload's name here.
pub(super) fn candidates_ordering(snap: &Snapshot<'_>, cq: usize, a: usize, b: usize) -> Ordering {
    candidate_key(snap, cq, a).cmp(&candidate_key(snap, cq, b))
}

/// `candidates_ordering` as a key, for sorting many candidates with one look-up each: other
/// queues' first, lower priority first, more recently admitted first, then the workload.
pub(super) fn candidate_key(
    snap: &Snapshot<'_>,
    cq: usize,
    c: usize,
) -> (bool, i64, std::cmp::Reverse<u64>, usize) {
    let w = &snap.world.workloads[c];
    let admitted_at = snap.running[c].as_ref().map_or(0, |r| r.admitted_at);
    (w.cq == cq, w.priority, std::cmp::Reverse(admitted_at), c)
}

/// `collectCandidatesInSubtree`: the queues under Cohort `k` (but not under `skip`, nor the
/// preemptor's own) that use more than their quota of some of `frs`, found through Cohorts
/// that do too.
fn subtree_candidates(
    snap: &Snapshot<'_>,
    cq: usize,
    k: usize,
    skip: Option<usize>,
    frs: &[Fr],
    found: &mut dyn FnMut(&Snapshot<'_>, usize),
) {
    let world = snap.world;
    for &child in &world.cohorts[k].child_cohorts {
        if Some(child) == skip || snap.usage.within_nominal(world, Node::Cohort(child), frs) {
            continue;
        }
        subtree_candidates(snap, cq, child, skip, frs, found);
    }
    for &other in &world.cohorts[k].child_cqs {
        if other != cq && snap.usage.over_nominal(world, other, frs) {
            found(snap, other);
        }
    }
}

/// `candidateIsValid`: a workload of another queue is taken only while that queue, and every
/// Cohort between it and the subtree it was found in, is still over its quota, and not when
/// the preemptor would borrow and the variant forbids it.
fn valid(snap: &Snapshot<'_>, cq: usize, c: &Candidate, borrowing: bool, frs: &[Fr]) -> bool {
    let world = snap.world;
    let owner = world.workloads[c.workload].cq;
    if owner == cq {
        return true;
    }
    if borrowing && c.variant == Variant::ReclaimWithoutBorrowing {
        return false;
    }
    if !snap.usage.over_nominal(world, owner, frs) {
        return false;
    }
    let mut at = world.cqs[owner].cohort;
    while let Some(k) = at {
        if Some(k) == c.lca {
            break;
        }
        if snap.usage.within_nominal(world, Node::Cohort(k), frs) {
            return false;
        }
        at = world.cohorts[k].parent;
    }
    true
}

/// `queueUnderNominalInResourcesNeedingPreemption`: usage strictly below nominal.
fn under_nominal(snap: &Snapshot<'_>, cq: usize, frs: &[Fr]) -> bool {
    frs.iter()
        .all(|&fr| snap.world.cqs[cq].quota(fr).nominal > snap.usage.of(cq, fr))
}

/// `workloadFits`: every request within what is available, and within nominal when the
/// attempt does not allow borrowing.
pub(super) fn fits(
    snap: &Snapshot<'_>,
    cq: usize,
    requests: &FrMap<i128>,
    borrowing: bool,
) -> bool {
    requests.iter().all(|(&fr, &v)| {
        (borrowing || !snap.usage.borrowing_with(snap.world, cq, fr, v))
            && v <= snap.usage.available(snap.world, cq, fr)
    })
}

/// `fillBackWorkloads`: from the second newest target back, put each one back when the
/// preemptor still fits (swap-remove, as Kueue does, which fixes the order of the rest).
pub(super) fn fill_back(
    snap: &mut Snapshot<'_>,
    cq: usize,
    requests: &FrMap<i128>,
    borrowing: bool,
    mut chosen: Vec<Target>,
) -> Vec<Target> {
    for i in (0..chosen.len().saturating_sub(1)).rev() {
        snap.restore(chosen[i].workload);
        if fits(snap, cq, requests, borrowing) {
            chosen.swap_remove(i);
        } else {
            snap.remove_usage(chosen[i].workload);
        }
    }
    chosen
}
