//! Fair sharing, as Kueue v0.19.2 runs it when the Configuration has `fairSharing`: the
//! dominant resource share (DRS) of ClusterQueues and Cohorts, the order of a cycle's heads
//! (a tournament through the Cohort tree) and the fair-sharing preemptor with its strategies.
//!
//! - Share (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/scheduler/fair_sharing.go`
//!   `dominantResourceShare`, `CompareDRS`): per resource, what a node uses beyond its subtree
//!   quota (over all flavors), per mille of what its parent could ever lend of that resource;
//!   the largest, divided by the node's weight. A root's share is 0; a node with weight 0 that
//!   borrows has an infinite share, and two such compare by their unweighted ratios.
//! - Order (`pkg/scheduler/fair_sharing_iterator.go`): each time the cycle takes an entry, a
//!   tournament from the root picks it: at each Cohort, each child (a ClusterQueue with its
//!   head, or a child Cohort with its own winner) counts with the share it would have once that
//!   head were admitted; a child that would not borrow on what the head asks wins (gate
//!   `FairSharingPrioritizeNonBorrowing`, beta and on), then the lower share, then the higher
//!   priority, then the older. Shares are computed again for each pick, after the admissions
//!   of the cycle so far.
//! - Preemption (`pkg/scheduler/preemption/preemption.go` `fairPreemptions`,
//!   `runFirstFsStrategy`, `runSecondFsStrategy`; `fairsharing/{ordering,target,
//!   least_common_ancestor,strategy}.go`): candidates are the preemptor's own workloads its
//!   `withinClusterQueue` allows and the workloads of queues in its tree that borrow on a
//!   flavor/resource it needs, as `reclaimWithinCohort` allows (`borrowWithinCohort` plays no
//!   part). Target queues come highest share first, down from the root (a subtree that does
//!   not borrow is left alone); the preemptor's own workloads go without condition; while the
//!   preemptor stays within its nominal quota, other queues' workloads go without condition
//!   too (`InCohortReclamation`, gate `FairSharingPreemptWithinNominal`, beta and on);
//!   otherwise a workload goes only if the first strategy holds between the two subtrees just
//!   below their common ancestor (`InCohortFairSharing`). With two strategies, those that
//!   failed get one more chance each under the second. Nothing is preempted unless the
//!   preemptor then fits; the targets not needed after all are put back (fill-back).

use super::oracle::Verdict;
use super::preemption::{
    self, Reason, Target, candidates_ordering, reclaim_policy, satisfies, within_policy,
};
use super::quota::{Node, parent};
use super::share::{Drs, Kept, compare};
use super::snapshot::Snapshot;
use super::world::{Fr, FrMap, World};
use crate::profile::{PreemptionStrategy, ReclaimWithinCohort, WithinClusterQueue};
use std::cmp::Ordering;

fn weight(w: &World, n: Node) -> f64 {
    match n {
        Node::Cq(c) => w.cqs[c].weight,
        Node::Cohort(k) => w.cohorts[k].weight,
    }
}

fn keys(w: &World, n: Node) -> &[Fr] {
    match n {
        Node::Cq(c) => &w.tree.cq_keys[c],
        Node::Cohort(k) => &w.tree.cohort_keys[k],
    }
}

/// The node's share with the snapshot's usage (Kueue's `dominantResourceShare`).
pub(super) fn drs(snap: &Snapshot<'_>, node: Node) -> Drs {
    share_of(snap, node, true)
}

/// `drs`, listing the flavor/resources the node borrows on only when `list` (the tournament
/// asks `borrowing_on`; the preemptor weighs shares alone, many times, and skips the list).
fn share_of(snap: &Snapshot<'_>, node: Node, list: bool) -> Drs {
    share_with(snap, node, list, &[])
}

/// `share_of` as if the node used `extra` more of some flavor/resources: what a request would
/// make of it, without changing the snapshot's usage (a change copies the whole usage table
/// on a snapshot's first, and adding and taking out again cost more than the share itself:
/// the tournament and the turned-away shortcut ask this of every head).
fn share_with(snap: &Snapshot<'_>, node: Node, list: bool, extra: &[(Fr, i128)]) -> Drs {
    let w = snap.world;
    let mut d = Drs {
        weight: weight(w, node),
        ratio: 0.0,
        borrowing: false,
        borrowed: Vec::new(),
    };
    let Some(p) = parent(w, node) else {
        return d;
    };
    // Per resource, what is used beyond the subtree quota over all flavors; a node has a
    // handful of resources, so a short list on the stack.
    let mut over = [(usize::MAX, 0_i128); 8];
    let mut spill: Vec<(usize, i128)> = Vec::new();
    let mut filled = 0;
    for &fr in keys(w, node) {
        let more = extra.iter().find(|(e, _)| *e == fr).map_or(0, |&(_, v)| v);
        let beyond = snap.usage.node(node, fr) + more - super::quota::subtree(w, node, fr);
        if beyond <= 0 {
            continue;
        }
        d.borrowing = true;
        if list {
            d.borrowed.push(fr);
        }
        if let Some((_, sum)) = over[..filled]
            .iter_mut()
            .chain(spill.iter_mut())
            .find(|(r, _)| *r == fr.resource)
        {
            *sum += beyond;
        } else if filled < over.len() {
            over[filled] = (fr.resource, beyond);
            filled += 1;
        } else {
            spill.push((fr.resource, beyond));
        }
    }
    for &(resource, beyond) in over[..filled].iter().chain(&spill) {
        let lendable = w.tree.lendable(p, resource);
        if lendable > 0 {
            let ratio = float(beyond) * 1000.0 / float(lendable);
            if ratio > d.ratio {
                d.ratio = ratio;
            }
        }
    }
    d
}

/// A quantity as Kueue's float64 division sees it. Through `i64` when it fits (the same
/// rounding, and a machine instruction rather than the 128-bit conversion routine, which the
/// shares called millions of times per run spent a tenth of their time in).
#[allow(clippy::cast_precision_loss)] // Kueue divides float64s too
fn float(x: i128) -> f64 {
    i64::try_from(x).map_or(x as f64, |v| v as f64)
}

/// Kueue's `status.fairSharing.weightedShare` of a node: the share rounded up, `i64::MAX`
/// for a weight-0 node that borrows (`roundedWeightedShare`).
pub(super) fn weighted_share(snap: &Snapshot<'_>, n: Node) -> i64 {
    let d = drs(snap, n);
    if d.zero_weight_borrows() {
        return i64::MAX;
    }
    #[allow(clippy::cast_possible_truncation)] // shares are per mille of small ratios
    let rounded = d.share().ceil() as i64;
    rounded
}

/// One head of a cycle as the tournament weighs it.
pub(super) struct Head {
    pub(super) wl: usize,
    /// What its assignment would use.
    pub(super) usage: FrMap<i128>,
}

/// The shares the tournament weighs: per head, per Cohort on its path, the share of that
/// Cohort's child on the path once the head were admitted, and whether that child would then
/// borrow on what the head asks (worked out once here: the tournament compares each entry
/// many times). A path is a few Cohorts long: a list per head, searched in place.
type Shares = Vec<Vec<(usize, bool, Drs)>>;

/// The tournament of a cycle: the shares, and the winner of every Cohort's subtree among the
/// entries left. Built once per cycle; taking an entry replays only the Cohorts on its path,
/// as a tournament tree does, since no other subtree lost or changed an entry, and a move of
/// usage (an admission, a preemption or a reservation) weighs again only the shares it
/// changed (`refresh`).
pub(super) struct Tournament {
    shares: Shares,
    /// Per Cohort, the entry that wins its subtree (`None`: no entry left there).
    best: Vec<Option<usize>>,
    /// Per ClusterQueue, its entry if not taken yet (a cycle has one head per queue).
    head_of_cq: Vec<Option<usize>>,
    /// The roots with entries, and the entries of queues without a Cohort.
    roots: Vec<usize>,
    loose: Vec<usize>,
    /// The queues whose usage moved since the shares were weighed (`Tournament::moved`).
    dirty: Vec<usize>,
}

impl Tournament {
    /// Usage moved in ClusterQueue `cq` (an admission or a reservation of the cycle): the
    /// shares that weigh it are weighed again before the next pick (`refresh`).
    pub(super) fn moved(&mut self, cq: usize) {
        self.dirty.push(cq);
    }
}

/// Weigh again what the moves since the last pick changed, and replay the Cohorts above them.
/// A node's share weighs only the usage under it, so a move in queue `x` changes the shares
/// of `x` and of its Cohorts alone: the entries of the heads below `x`'s Cohort under the
/// root (each head's list names the child on its path at each Cohort, and only a child that
/// holds `x` changed), and the winners of `x`'s Cohorts. Everywhere else the standing
/// winners hold.
fn refresh(snap: &mut Snapshot<'_>, heads: &[Head], t: &mut Tournament) {
    let w = snap.world;
    for x in std::mem::take(&mut t.dirty) {
        let path: Vec<usize> =
            std::iter::successors(w.cqs[x].cohort, |&k| w.cohorts[k].parent).collect();
        // The Cohort just below the root on `x`'s way up holds every head whose entries moved;
        // with `x` right under the root, only its own head's did.
        let top = path.len().checked_sub(2).map(|i| path[i]);
        let mut affected = Vec::new();
        match top {
            Some(k) => under(w, Node::Cohort(k), &mut |c| affected.push(c)),
            None => affected.push(x),
        }
        for c in affected {
            if let Some(i) = t.head_of_cq[c] {
                t.shares[i] = head_shares(snap, &heads[i]);
            }
        }
        for k in path {
            t.best[k] = winner(w, heads, t, k);
        }
    }
    debug_assert!(
        (0..w.cqs.len()).filter_map(|c| t.head_of_cq[c]).all(|i| {
            let full = head_shares(snap, &heads[i]);
            full.len() == t.shares[i].len()
                && full.iter().zip(&t.shares[i]).all(|(a, b)| {
                    a.0 == b.0 && a.1 == b.1 && a.2.ratio.to_bits() == b.2.ratio.to_bits()
                })
        }),
        "a tournament share left as it was no longer holds"
    );
}

/// Which of `left` (indices into `heads`: the cycle's entries not processed yet) Kueue takes
/// next: the winner of the tournament of each tree, and between trees (and queues without a
/// cohort, which Kueue takes in no particular order) the classic order: no borrowing first,
/// then higher priority, older, by name (`borrowing` gives each head's borrowing level).
/// `cache` holds the tournament of the entries of `left` (`None` before the cycle's first
/// pick), with the queues whose usage moved since the last pick (`Tournament::moved`); it is
/// brought up to date and updated for the entry returned, which the caller takes out of
/// `left`.
pub(super) fn next(
    snap: &mut Snapshot<'_>,
    heads: &[Head],
    left: &[usize],
    borrowing: &[u32],
    cache: &mut Option<Tournament>,
) -> Option<usize> {
    let w = snap.world;
    let t = cache.get_or_insert_with(|| tournament(snap, heads, left));
    if !t.dirty.is_empty() {
        refresh(snap, heads, t);
    }
    let pick = t
        .roots
        .iter()
        .filter_map(|&r| t.best[r])
        .chain(t.loose.iter().copied())
        .min_by(|&a, &b| {
            let (wa, wb) = (&w.workloads[heads[a].wl], &w.workloads[heads[b].wl]);
            borrowing[a]
                .cmp(&borrowing[b])
                .then(wb.priority.cmp(&wa.priority))
                .then(wa.submit_at.cmp(&wb.submit_at))
                .then(heads[a].wl.cmp(&heads[b].wl))
        })?;
    let cq = w.workloads[heads[pick].wl].cq;
    t.head_of_cq[cq] = None;
    t.loose.retain(|&i| i != pick);
    let mut at = w.cqs[cq].cohort;
    while let Some(k) = at {
        t.best[k] = winner(w, heads, t, k);
        at = w.cohorts[k].parent;
    }
    Some(pick)
}

/// The tournament of the entries of `left` on the snapshot's usage.
fn tournament(snap: &mut Snapshot<'_>, heads: &[Head], left: &[usize]) -> Tournament {
    let w = snap.world;
    let mut t = Tournament {
        shares: shares_of(snap, heads, left),
        best: vec![None; w.cohorts.len()],
        head_of_cq: vec![None; w.cqs.len()],
        roots: Vec::new(),
        loose: Vec::new(),
        dirty: Vec::new(),
    };
    for &i in left {
        let cq = w.workloads[heads[i].wl].cq;
        t.head_of_cq[cq] = Some(i);
        match w.tree.cq_root[cq] {
            Some(r) => t.roots.push(r),
            None => t.loose.push(i),
        }
    }
    t.roots.sort_unstable();
    t.roots.dedup();
    for r in t.roots.clone() {
        play(w, heads, &mut t, r);
    }
    t
}

/// Every Cohort's winner in the subtree of `k`, children first.
fn play(w: &World, heads: &[Head], t: &mut Tournament, k: usize) {
    for &child in &w.cohorts[k].child_cohorts {
        play(w, heads, t, child);
    }
    t.best[k] = winner(w, heads, t, k);
}

/// `runTournament` at Cohort `k` from its children's standing winners: child Cohorts first,
/// then its queues' entries, the first that nothing after it beats.
fn winner(w: &World, heads: &[Head], t: &Tournament, k: usize) -> Option<usize> {
    let children = w.cohorts[k].child_cohorts.iter().filter_map(|&c| t.best[c]);
    let queues = w.cohorts[k]
        .child_cqs
        .iter()
        .filter_map(|&cq| t.head_of_cq[cq]);
    let mut best: Option<usize> = None;
    for c in children.chain(queues) {
        best = match best {
            Some(b) if !less(w, heads, c, b, k, &t.shares) => Some(b),
            _ => Some(c),
        };
    }
    best
}

/// `computeDRS` of Kueue's tournament: per head of a tree, the share each node on its path
/// would have once it were admitted.
fn shares_of(snap: &mut Snapshot<'_>, heads: &[Head], members: &[usize]) -> Shares {
    let mut shares: Shares = vec![Vec::new(); heads.len()];
    for &i in members {
        shares[i] = head_shares(snap, &heads[i]);
    }
    shares
}

/// One head's entries of `Shares`: none for a queue without a Cohort.
fn head_shares(snap: &Snapshot<'_>, head: &Head) -> Vec<(usize, bool, Drs)> {
    let w = snap.world;
    let cq = w.workloads[head.wl].cq;
    let mut out = Vec::new();
    if w.cqs[cq].cohort.is_none() {
        return out;
    }
    // What the head adds at each node on its way up, as if admitted.
    let mut extra: Vec<(Fr, i128)> = head.usage.iter().map(|(&fr, &v)| (fr, v)).collect();
    let mut node = Node::Cq(cq);
    let mut d = share_with(snap, node, true, &extra);
    let mut at = w.cqs[cq].cohort;
    while let Some(k) = at {
        for (fr, v) in &mut extra {
            *v = passed_up(snap, node, *fr, *v);
        }
        node = Node::Cohort(k);
        let up = share_with(snap, node, true, &extra);
        let borrows = d.borrowing_on(&head.usage);
        out.push((k, borrows, d));
        d = up;
        at = w.cohorts[k].parent;
    }
    debug_assert!(
        {
            let mut with = snap.clone();
            with.usage.to_mut().add_all(w, cq, &head.usage);
            let mut node = Node::Cq(cq);
            out.iter().all(|(k, _, d)| {
                let now = drs(&with, node);
                node = Node::Cohort(*k);
                now.ratio.to_bits() == d.ratio.to_bits() && now.borrowed == d.borrowed
            })
        },
        "the head's shares as if admitted"
    );
    out
}

/// What adding `val` of `fr` at `node` passes up to its parent: what the node cannot keep
/// in its own quota (`Usage::add`).
fn passed_up(snap: &Snapshot<'_>, node: Node, fr: Fr, val: i128) -> i128 {
    (val - snap.usage.local_available(snap.world, node, fr)).max(0)
}

/// `entryComparer.less` at Cohort `k`, with the workload's name as the last tie-break where
/// Kueue keeps whichever came first in map order.
fn less(w: &World, heads: &[Head], a: usize, b: usize, k: usize, shares: &Shares) -> bool {
    let none = (false, Drs::negative());
    let at = |i: usize| {
        shares[i]
            .iter()
            .find(|(c, ..)| *c == k)
            .map_or((none.0, &none.1), |(_, b, d)| (*b, d))
    };
    let ((ba, da), (bb, db)) = (at(a), at(b));
    if ba != bb {
        return !ba;
    }
    let (wa, wb) = (&w.workloads[heads[a].wl], &w.workloads[heads[b].wl]);
    compare(da, db)
        .then(wb.priority.cmp(&wa.priority))
        .then(wa.submit_at.cmp(&wb.submit_at))
        .then(heads[a].wl.cmp(&heads[b].wl))
        == Ordering::Less
}

/// The candidates of each target queue, in candidate order, and which queues and Cohorts the
/// walk has given up on (Kueue's `TargetClusterQueueOrdering`).
struct TargetOrder {
    preemptor_cq: usize,
    ancestors: Vec<usize>,
    /// The candidates grouped by ClusterQueue, each queue's in candidate order, and per
    /// queue the range of its candidates not yet weighed (one list, not a list per queue: a
    /// search sets this up for every queue of the tree and uses a few). Flags and ranges
    /// indexed by queue and by Cohort rather than searched: the walk asks them for every
    /// child of every Cohort on its way, once per target.
    queued: Vec<usize>,
    ranges: Vec<std::ops::Range<usize>>,
    pruned_cqs: Vec<bool>,
    pruned_cohorts: Vec<bool>,
    /// The shares of the queues and Cohorts the walk has weighed, while the usage stays as
    /// it is: the walk weighs every child of a Cohort for each target it picks, and most
    /// picks take nothing (`moved` forgets them when a target is taken). Indexed by queue
    /// and by Cohort: hashing the node cost more than weighing it.
    seen_cqs: Vec<Option<Drs>>,
    seen_cohorts: Vec<Option<Drs>>,
}

impl TargetOrder {
    fn new(w: &World, cq: usize, candidates: &[usize]) -> Self {
        // A counting sort by queue, which keeps each queue's candidates in their order.
        let mut ranges = vec![0..0; w.cqs.len()];
        for &c in candidates {
            ranges[w.workloads[c].cq].end += 1;
        }
        let mut start = 0;
        for r in &mut ranges {
            let n = r.end;
            *r = start..start;
            start += n;
        }
        let mut queued = vec![0; candidates.len()];
        for &c in candidates {
            let r = &mut ranges[w.workloads[c].cq];
            queued[r.end] = c;
            r.end += 1;
        }
        Self {
            preemptor_cq: cq,
            ancestors: std::iter::successors(w.cqs[cq].cohort, |&k| w.cohorts[k].parent).collect(),
            queued,
            ranges,
            pruned_cqs: vec![false; w.cqs.len()],
            pruned_cohorts: vec![false; w.cohorts.len()],
            seen_cqs: vec![None; w.cqs.len()],
            seen_cohorts: vec![None; w.cohorts.len()],
        }
    }

    /// A node's share with the usage as it is, weighed once until `moved`.
    fn share(&mut self, snap: &Snapshot<'_>, node: Node) -> Drs {
        let slot = match node {
            Node::Cq(c) => &mut self.seen_cqs[c],
            Node::Cohort(k) => &mut self.seen_cohorts[k],
        };
        slot.get_or_insert_with(|| share_of(snap, node, false))
            .clone()
    }

    /// The usage moved (a target was taken): every share weighed so far is stale.
    fn moved(&mut self) {
        self.seen_cqs.fill(None);
        self.seen_cohorts.fill(None);
    }

    fn has_workload(&self, cq: usize) -> bool {
        !self.ranges[cq].is_empty()
    }

    fn pop(&mut self, cq: usize) -> Option<usize> {
        self.ranges[cq].next().map(|i| self.queued[i])
    }

    /// The next target queue (`Iter`), or none when the walk is over.
    fn next(&mut self, snap: &Snapshot<'_>) -> Option<usize> {
        let Some(&root) = self.ancestors.last() else {
            let cq = self.preemptor_cq;
            return (!self.pruned_cqs[cq] && self.has_workload(cq)).then_some(cq);
        };
        while !self.pruned_cohorts[root] {
            if let Some(t) = self.next_target(snap, root) {
                return Some(t);
            }
        }
        None
    }

    /// `nextTarget`: down from Cohort `k` towards the highest share.
    fn next_target(&mut self, snap: &Snapshot<'_>, k: usize) -> Option<usize> {
        let w = snap.world;
        let mut best_cq: Option<usize> = None;
        let mut best_cq_drs = Drs::negative();
        for &cq in &w.cohorts[k].child_cqs {
            if self.pruned_cqs[cq] {
                continue;
            }
            let d = self.share(snap, Node::Cq(cq));
            if (!d.borrowing && cq != self.preemptor_cq) || !self.has_workload(cq) {
                self.pruned_cqs[cq] = true;
                continue;
            }
            match compare(&d, &best_cq_drs) {
                Ordering::Equal => {
                    if let Some(b) = best_cq
                        && let (Some(x), Some(y)) = (self.head(cq), self.head(b))
                        && candidates_ordering(snap, self.preemptor_cq, x, y) == Ordering::Less
                    {
                        best_cq = Some(cq);
                    }
                }
                Ordering::Greater => {
                    best_cq = Some(cq);
                    best_cq_drs = d;
                }
                Ordering::Less => {}
            }
        }
        let mut best_cohort: Option<usize> = None;
        let mut best_cohort_drs = Drs::negative();
        for &child in &w.cohorts[k].child_cohorts {
            if self.pruned_cohorts[child] {
                continue;
            }
            let d = self.share(snap, Node::Cohort(child));
            if !d.borrowing && !self.ancestors.contains(&child) {
                self.pruned_cohorts[child] = true;
            } else if compare(&d, &best_cohort_drs) != Ordering::Less {
                best_cohort = Some(child);
                best_cohort_drs = d;
            }
        }
        match (best_cohort, best_cq) {
            (None, None) => {
                self.pruned_cohorts[k] = true;
                None
            }
            (Some(c), _) if compare(&best_cohort_drs, &best_cq_drs) != Ordering::Less => {
                self.next_target(snap, c)
            }
            (_, cq) => cq,
        }
    }

    fn head(&self, cq: usize) -> Option<usize> {
        self.ranges[cq].clone().next().map(|i| self.queued[i])
    }
}

/// The node just below the common ancestor `lca` on the way up from ClusterQueue `cq`.
fn almost_lca(w: &World, cq: usize, lca: usize) -> Node {
    let mut below = Node::Cq(cq);
    let mut at = w.cqs[cq].cohort;
    while let Some(k) = at {
        if k == lca {
            return below;
        }
        below = Node::Cohort(k);
        at = w.cohorts[k].parent;
    }
    below
}

/// The nodes `ComputeShares` weighs: the preemptor's side and the target's side, each the
/// node just below their lowest common Cohort.
fn sides(w: &World, ordering: &TargetOrder, target: usize) -> Option<(Node, Node)> {
    let lca = std::iter::successors(w.cqs[target].cohort, |&k| w.cohorts[k].parent)
        .find(|k| ordering.ancestors.contains(k))?;
    Some((
        almost_lca(w, ordering.preemptor_cq, lca),
        almost_lca(w, target, lca),
    ))
}

/// `ComputeShares` with the usage as it is: (preemptor's side, target's side). Not in one
/// tree (never the case for a candidate): no share to weigh.
fn shares(snap: &Snapshot<'_>, ordering: &mut TargetOrder, target: usize) -> (Drs, Drs) {
    match sides(snap.world, ordering, target) {
        Some((p, t)) => (ordering.share(snap, p), ordering.share(snap, t)),
        None => (Drs::negative(), Drs::negative()),
    }
}

/// The target side's share with a candidate's usage taken out for the question (not kept).
fn target_share_without(snap: &Snapshot<'_>, ordering: &TargetOrder, target: usize) -> Drs {
    sides(snap.world, ordering, target)
        .map_or_else(Drs::negative, |(_, t)| share_of(snap, t, false))
}

fn passes(
    strategy: PreemptionStrategy,
    preemptor_new: &Drs,
    target_old: &Drs,
    target_new: &Drs,
) -> bool {
    match strategy {
        PreemptionStrategy::LessThanOrEqualToFinalShare => {
            compare(preemptor_new, target_new) != Ordering::Greater
        }
        PreemptionStrategy::LessThanInitialShare => {
            compare(preemptor_new, target_old) == Ordering::Less
        }
    }
}

/// Whether the fair-sharing preemptor surely finds no targets for a preemption that asks at
/// least `val` of `fr`, among flavor/resources `frs` that need preemption (`preemptor::targets`
/// asks first; a `false` says nothing; debug builds check every `true` against the full
/// search). Nothing is taken when all of these hold, so the shares never move and each target
/// queue is weighed on the shares as they are:
///
/// - No admitted workload of its own queue is one its `withinClusterQueue` lets it preempt
///   (those go without condition, whatever they use, and taking one lowers its queue's share).
/// - Its queue would borrow on `fr` with the request, so it is not within nominal quota
///   (where other queues' workloads go without condition).
/// - At every Cohort on its way up, against each borrowing sibling of its side (the child on
///   its path, with the request counted): its side weighs more (`compare`) than the sibling
///   as it is — a sibling's share only falls as workloads are taken out of it, so neither
///   strategy lets one of its workloads go (LessThanOrEqualToFinalShare needs the preemptor's
///   side no heavier than the target's after the removal, LessThanInitialShare lighter than
///   before: kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/preemption/fairsharing/strategy.go`,
///   `CompareDRS(...) <= 0` and `< 0`); or the two weigh the same and either the first strategy is
///   LessThanInitialShare (which needs the preemptor's side strictly lighter, as the second
///   one does) or taking out any one candidate under the sibling leaves it lighter than the
///   preemptor's side; or no workload under the sibling is a candidate at all.
///
/// Asking more of `fr`, or of other resources too, only makes the preemptor's side heavier,
/// and the candidates are weighed over all of `frs`, so the answer holds for the whole request.
///
/// The answer (`Verdict::none`) comes with what it rests on beyond the preemptor's own child
/// of the root, so that the state can keep it while usage moves only elsewhere.
pub(super) fn surely_none(
    snap: &mut Snapshot<'_>,
    preemptor: usize,
    fr: Fr,
    val: i128,
    frs: &[Fr],
    strategies: &[PreemptionStrategy],
) -> Verdict {
    let mut out = Verdict {
        none: false,
        taker: None,
        top_mine: None,
        recheck: Vec::new(),
    };
    let w = snap.world;
    let cq = w.workloads[preemptor].cq;
    let spec = &w.cqs[cq];
    if spec.within_cq != WithinClusterQueue::Never {
        let policy = within_policy(spec.within_cq);
        if snap
            .admitted_in(cq)
            .any(|c| satisfies(w, policy, preemptor, c))
        {
            return out;
        }
    }
    if spec.cohort.is_none() || spec.reclaim == ReclaimWithinCohort::Never {
        out.none = true;
        return out;
    }
    if !snap.usage.borrowing_with(w, cq, fr, val) {
        return out;
    }
    let ties_may_take = ties_may_take(strategies);
    // The preemptor's sides up the tree, with the request counted: each node keeps what it
    // has free of its own quota and passes the rest up (`Usage::add`).
    let mut side = Node::Cq(cq);
    let mut at = spec.cohort;
    let mut extra = val;
    while let Some(k) = at {
        let mine = share_with(snap, side, false, &[(fr, extra)]);
        debug_assert!(
            {
                let mut with = snap.clone();
                with.usage.to_mut().add(w, cq, fr, val);
                share_of(&with, side, false).ratio.to_bits() == mine.ratio.to_bits()
            },
            "the request's share as if added"
        );
        extra = passed_up(snap, side, fr, extra);
        let top = w.cohorts[k].parent.is_none();
        // The siblings that may let a workload go, as they are (the request does not touch
        // them): those the preemptor's side does not outweigh, the heaviest borrowing ones
        // (a short list, usually empty).
        let heavy = heavy_siblings(snap, k, side, &mine, ties_may_take);
        for (s, heavier) in heavy {
            if lets_go(snap, preemptor, frs, &mine, s, heavier, ties_may_take) {
                out.taker = top.then(|| slot(w, s));
                return out;
            }
        }
        if top {
            out.top_mine = Some(mine);
        }
        side = Node::Cohort(k);
        at = w.cohorts[k].parent;
    }
    out.none = true;
    out
}

/// A tie lets a workload go only under LessThanOrEqualToFinalShare first, and only one whose
/// removal leaves its side as heavy.
fn ties_may_take(strategies: &[PreemptionStrategy]) -> bool {
    strategies.first() != Some(&PreemptionStrategy::LessThanInitialShare)
}

/// Whether sibling `s`, which the preemptor's side `mine` does not outweigh (a tie unless
/// `heavier`), may let one of its workloads go to `preemptor`.
fn lets_go(
    snap: &mut Snapshot<'_>,
    preemptor: usize,
    frs: &[Fr],
    mine: &Drs,
    s: Node,
    heavier: bool,
    ties_may_take: bool,
) -> bool {
    let w = snap.world;
    // A tie lets nothing go when the first strategy needs the preemptor's side strictly
    // lighter, or when every workload under the sibling makes it lighter taken out (its
    // share is `mine`, so it becomes lighter than the preemptor's side); whatever the
    // candidates are, then. Asked of a queue only, and kept by the state: for a Cohort it
    // would weigh every workload of its subtree, where the candidates below are usually a
    // few of them.
    if !heavier && (!ties_may_take || (matches!(s, Node::Cq(_)) && each_lowers(snap, s))) {
        return false;
    }
    // The candidates under the sibling, as `targets` finds them.
    let policy = reclaim_policy(w.cqs[w.workloads[preemptor].cq].reclaim);
    let mut candidates = Vec::new();
    under(w, s, &mut |t| {
        if snap.usage.over_nominal(w, t, frs) {
            candidates.extend(candidates_in(snap, t, policy, preemptor, frs));
        }
    });
    // A heavier sibling with a candidate lets it go under LessThanInitialShare (at the
    // latest as the second strategy).
    if heavier {
        return !candidates.is_empty();
    }
    candidates.into_iter().any(|c| {
        snap.remove_usage(c);
        let still = compare(mine, &share_of(snap, s, false)) != Ordering::Greater;
        snap.restore(c);
        still
    })
}

/// A kept `true` of `surely_none`, after the usage under `top` (a child of the root, not the
/// preemptor's) moved: whether it still holds. Nothing else it rested on moved: the
/// preemptor's side at the root's level (`mine`) and everything under it, and the other
/// children of the root.
pub(super) fn still_none(
    snap: &mut Snapshot<'_>,
    kept: &std::cell::RefCell<Kept>,
    preemptor: usize,
    frs: &[Fr],
    strategies: &[PreemptionStrategy],
    mine: &Drs,
    top: usize,
) -> bool {
    let w = snap.world;
    let s = node_of(w, top);
    let d = kept.borrow_mut().sized(w).shares[top]
        .get_or_insert_with(|| share_of(snap, s, false))
        .clone();
    if !d.borrowing {
        return true;
    }
    let ties_may_take = ties_may_take(strategies);
    match compare(mine, &d) {
        Ordering::Greater => true,
        Ordering::Equal if !ties_may_take => true,
        o => !lets_go(
            snap,
            preemptor,
            frs,
            mine,
            s,
            o == Ordering::Less,
            ties_may_take,
        ),
    }
}

/// Whether taking out any one admitted workload under `node` makes its share strictly
/// smaller, with the state's usage: kept by the state when asked during a nomination.
fn each_lowers(snap: &mut Snapshot<'_>, node: Node) -> bool {
    let w = snap.world;
    let i = slot(w, node);
    if let Some(kept) = snap.kept
        && let Some(known) = kept.shares.borrow().each_lowers.get(i).copied().flatten()
    {
        return known;
    }
    let before = share_of(snap, node, false);
    let mut admitted = Vec::new();
    under(w, node, &mut |t| admitted.extend(snap.admitted_in(t)));
    let lowers = admitted.into_iter().all(|c| {
        snap.remove_usage(c);
        let after = share_of(snap, node, false);
        snap.restore(c);
        compare(&before, &after) == Ordering::Greater
    });
    if let Some(kept) = snap.kept {
        kept.shares.borrow_mut().sized(w).each_lowers[i] = Some(lowers);
    }
    lowers
}

/// The admitted workloads of queue `cq` that `preemptor` may take under `policy` and that use
/// some of `frs` (a queue's part of Kueue's `findCandidates`).
fn candidates_in<'s>(
    snap: &'s Snapshot<'_>,
    cq: usize,
    policy: preemption::Policy,
    preemptor: usize,
    frs: &'s [Fr],
) -> impl Iterator<Item = usize> + 's {
    let w = snap.world;
    snap.admitted_in(cq)
        .filter(move |&c| satisfies(w, policy, preemptor, c) && snap.uses_any(c, frs))
}

/// Every ClusterQueue in the subtree of `node`.
fn under(w: &World, node: Node, each: &mut dyn FnMut(usize)) {
    match node {
        Node::Cq(c) => each(c),
        Node::Cohort(k) => {
            for &c in &w.cohorts[k].child_cqs {
                each(c);
            }
            for &child in &w.cohorts[k].child_cohorts {
                under(w, Node::Cohort(child), each);
            }
        }
    }
}

fn slot(w: &World, node: Node) -> usize {
    match node {
        Node::Cq(c) => c,
        Node::Cohort(k) => w.cqs.len() + k,
    }
}

fn node_of(w: &World, slot: usize) -> Node {
    if slot < w.cqs.len() {
        Node::Cq(slot)
    } else {
        Node::Cohort(slot - w.cqs.len())
    }
}

/// The borrowing children of Cohort `k` but `side` that `mine` does not outweigh with the
/// state's usage, each with whether it is heavier (not a tie), heaviest first. During nomination
/// the shares and the ranking are kept (`Snapshot::shares`, until usage under them moves):
/// every head's search asks the same Cohorts, cycle after cycle, and a ranking turns the walk
/// over all children into a look at the top few. Ties known to let nothing go are left out
/// (all of them unless `ties_may_take`, and those kept as `each_lowers`): in a Cohort of
/// like queues most siblings weigh the same, and each search met them all.
fn heavy_siblings(
    snap: &Snapshot<'_>,
    k: usize,
    side: Node,
    mine: &Drs,
    ties_may_take: bool,
) -> Vec<(Node, bool)> {
    let w = snap.world;
    let cohort = &w.cohorts[k];
    let children = cohort
        .child_cqs
        .iter()
        .map(|&c| Node::Cq(c))
        .chain(cohort.child_cohorts.iter().map(|&c| Node::Cohort(c)));
    // Outside a nomination nothing is kept: the same ranking, for this question only.
    let mut guard = snap.kept.map(|k| k.shares.borrow_mut());
    let mut local = Kept::default();
    let kept = match guard.as_deref_mut() {
        Some(kept) => kept,
        None => &mut local,
    };
    let Kept {
        shares,
        ranked,
        each_lowers,
    } = kept.sized(w);
    let ranked = ranked[k].get_or_insert_with(|| {
        let mut borrowing: Vec<usize> = children
            .map(|s| slot(w, s))
            .filter(|&i| {
                shares[i]
                    .get_or_insert_with(|| share_of(snap, node_of(w, i), false))
                    .borrowing
            })
            .collect();
        // Heaviest first; `sort_by` is stable, so equal shares keep the children's order.
        borrowing.sort_by(|&a, &b| compare_kept(shares, b, a));
        borrowing
    });
    let own = slot(w, side);
    let mut out = Vec::new();
    for &i in ranked.iter() {
        if i == own {
            continue;
        }
        let Some(d) = &shares[i] else { continue };
        debug_assert!(
            {
                let now = share_of(snap, node_of(w, i), false);
                now.ratio.to_bits() == d.ratio.to_bits() && now.borrowing == d.borrowing
            },
            "a kept share no longer holds: the usage moved"
        );
        match compare(mine, d) {
            Ordering::Greater => break,
            Ordering::Equal
                if !ties_may_take || (i < w.cqs.len() && each_lowers[i] == Some(true)) => {}
            o => out.push((node_of(w, i), o == Ordering::Less)),
        }
    }
    out
}

fn compare_kept(shares: &[Option<Drs>], a: usize, b: usize) -> Ordering {
    match (&shares[a], &shares[b]) {
        (Some(x), Some(y)) => compare(x, y),
        _ => Ordering::Equal,
    }
}

/// The fair-sharing preemptor's targets for `preemptor` (see the module comment), or none.
/// The snapshot is left as it was found.
pub(super) fn targets(
    snap: &mut Snapshot<'_>,
    preemptor: usize,
    frs: &[Fr],
    requests: &FrMap<i128>,
    strategies: &[PreemptionStrategy],
) -> Vec<Target> {
    let w = snap.world;
    let cq = w.workloads[preemptor].cq;
    let spec = &w.cqs[cq];
    // `findCandidates`.
    let mut candidates: Vec<usize> = Vec::new();
    if spec.within_cq != WithinClusterQueue::Never {
        let policy = within_policy(spec.within_cq);
        candidates.extend(candidates_in(snap, cq, policy, preemptor, frs));
    }
    if let Some(root) = w.tree.cq_root[cq]
        && spec.reclaim != ReclaimWithinCohort::Never
    {
        let policy = reclaim_policy(spec.reclaim);
        for other in (0..w.cqs.len()).filter(|&o| o != cq && w.tree.cq_root[o] == Some(root)) {
            if snap.usage.over_nominal(w, other, frs) {
                candidates.extend(candidates_in(snap, other, policy, preemptor, frs));
            }
        }
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    // `candidates_ordering`, its keys looked up once per candidate rather than per comparison.
    let mut keyed: Vec<_> = candidates
        .iter()
        .map(|&c| (preemption::candidate_key(snap, cq, c), c))
        .collect();
    keyed.sort_unstable_by_key(|&(key, _)| key);
    let candidates: Vec<usize> = keyed.into_iter().map(|(_, c)| c).collect();
    // Every share below counts the incoming workload.
    snap.usage.to_mut().add_all(w, cq, requests);
    let first = strategies
        .first()
        .copied()
        .unwrap_or(PreemptionStrategy::LessThanOrEqualToFinalShare);
    let (mut fits, mut chosen, retry) = first_strategy(snap, cq, frs, requests, &candidates, first);
    if !fits && strategies.len() > 1 {
        fits = second_strategy(snap, cq, requests, &retry, &mut chosen);
    }
    snap.usage.to_mut().remove_all(w, cq, requests);
    if !fits {
        for t in &chosen {
            snap.restore(t.workload);
        }
        return Vec::new();
    }
    let chosen = preemption::fill_back(snap, cq, requests, true, chosen);
    for t in &chosen {
        snap.restore(t.workload);
    }
    chosen
}

/// `workloadFitsForFairSharing`: whether the preemptor fits, its own usage (counted for the
/// shares) taken out for the question.
fn fits_now(snap: &mut Snapshot<'_>, cq: usize, requests: &FrMap<i128>) -> bool {
    let w = snap.world;
    snap.usage.to_mut().remove_all(w, cq, requests);
    let ok = preemption::fits(snap, cq, requests, true);
    snap.usage.to_mut().add_all(w, cq, requests);
    ok
}

fn take(snap: &mut Snapshot<'_>, chosen: &mut Vec<Target>, workload: usize, reason: Reason) {
    snap.remove_usage(workload);
    chosen.push(Target { workload, reason });
}

/// `runFirstFsStrategy`: (fits, targets so far, candidates for the second strategy).
fn first_strategy(
    snap: &mut Snapshot<'_>,
    cq: usize,
    frs: &[Fr],
    requests: &FrMap<i128>,
    candidates: &[usize],
    strategy: PreemptionStrategy,
) -> (bool, Vec<Target>, Vec<usize>) {
    let w = snap.world;
    let mut ordering = TargetOrder::new(w, cq, candidates);
    let mut chosen = Vec::new();
    let mut retry = Vec::new();
    // The incoming workload is already counted: within nominal means its queue does not
    // borrow on what it needs even with it.
    let within_nominal = !snap.usage.over_nominal(w, cq, frs);
    while let Some(target) = ordering.next(snap) {
        if target == cq {
            let Some(wl) = ordering.pop(target) else {
                continue;
            };
            take(snap, &mut chosen, wl, Reason::InClusterQueue);
            ordering.moved();
            if fits_now(snap, cq, requests) {
                return (true, chosen, retry);
            }
            continue;
        }
        if within_nominal {
            let Some(wl) = ordering.pop(target) else {
                continue;
            };
            take(snap, &mut chosen, wl, Reason::InCohortReclamation);
            ordering.moved();
            if fits_now(snap, cq, requests) {
                return (true, chosen, retry);
            }
            continue;
        }
        let (preemptor_new, target_old) = shares(snap, &mut ordering, target);
        // `fsStrategyUnsatisfiable`: no workload of this queue can pass. Nor can one when
        // the strategy fails on the target's share as it is: a share only falls as usage is
        // taken out (the largest of usage beyond quota), so under LessThanOrEqualToFinalShare
        // a preemptor's side that weighs more than the target's side now weighs more than it
        // after any one removal, and LessThanInitialShare weighs the target's side as it is.
        // One comparison then decides for the whole queue, as Kueue's loop would one by one.
        let unsatisfiable =
            preemptor_new.share().is_infinite() && !target_old.share().is_infinite();
        let fails_now = match strategy {
            PreemptionStrategy::LessThanOrEqualToFinalShare => {
                compare(&preemptor_new, &target_old) == Ordering::Greater
            }
            PreemptionStrategy::LessThanInitialShare => {
                compare(&preemptor_new, &target_old) != Ordering::Less
            }
        };
        if unsatisfiable || fails_now {
            while let Some(wl) = ordering.pop(target) {
                retry.push(wl);
            }
            continue;
        }
        while let Some(wl) = ordering.pop(target) {
            let usage = snap.running[wl]
                .as_ref()
                .map(|r| r.usage.clone())
                .unwrap_or_default();
            snap.usage.to_mut().remove_all(w, target, &usage);
            let target_new = target_share_without(snap, &ordering, target);
            snap.usage.to_mut().add_all(w, target, &usage);
            if passes(strategy, &preemptor_new, &target_old, &target_new) {
                take(snap, &mut chosen, wl, Reason::InCohortFairSharing);
                ordering.moved();
                if fits_now(snap, cq, requests) {
                    return (true, chosen, retry);
                }
                // The shares changed: choose the target queue again.
                break;
            }
            retry.push(wl);
        }
    }
    (false, chosen, retry)
}

/// `runSecondFsStrategy` (always `LessThanInitialShare`, as Kueue accepts it only second): at
/// most one more workload per target queue.
fn second_strategy(
    snap: &mut Snapshot<'_>,
    cq: usize,
    requests: &FrMap<i128>,
    retry: &[usize],
    chosen: &mut Vec<Target>,
) -> bool {
    let mut ordering = TargetOrder::new(snap.world, cq, retry);
    while let Some(target) = ordering.next(snap) {
        let (preemptor_new, target_old) = shares(snap, &mut ordering, target);
        let Some(wl) = ordering.pop(target) else {
            ordering.pruned_cqs[target] = true;
            continue;
        };
        if compare(&preemptor_new, &target_old) == Ordering::Less {
            take(snap, chosen, wl, Reason::InCohortFairSharing);
            ordering.moved();
            if fits_now(snap, cq, requests) {
                return true;
            }
        }
        ordering.pruned_cqs[target] = true;
    }
    false
}
