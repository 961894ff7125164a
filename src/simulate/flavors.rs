//! Flavor assignment: for each pod set and resource group, the flavor Kueue v0.19.2 would
//! give it, and whether that takes a fit, preemption, or nothing
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner.go`:
//! `assignFlavors`, `findFlavorForPodSets`, `fitsResourceQuota`, `isPreferred`,
//! `shouldTryNextFlavor`; `preemption_oracle.go` for whether preemption could help).
//!
//! Flavors are tried in the resource group's order. A flavor is scored per resource (fit,
//! reclaim, preempt, preempt-without-candidates, no fit; and whether it borrows); the pod set
//! keeps the first flavor `flavorFungibility` lets it stop at, else the best one seen. Earlier
//! pod sets' requests count against later ones on the same flavor.

use super::oracle::{OracleKey, Possibility};
use super::snapshot::Snapshot;
use super::world::{Fr, FrMap, World, flavor_matches};
use super::{preemption, preemptor};
use crate::profile::{
    FungibilityPolicy, FungibilityPreference, ReclaimWithinCohort, WithinClusterQueue,
};
use std::collections::BTreeMap;

/// How an assignment can be admitted; ordered worst to best.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Mode {
    NoFit,
    Preempt,
    Fit,
}

impl Possibility {
    fn mode(self) -> Mode {
        match self {
            Self::NoFit => Mode::NoFit,
            Self::Fit => Mode::Fit,
            _ => Mode::Preempt,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Granular {
    possibility: Possibility,
    borrow: u32,
}

const BEST: Granular = Granular {
    possibility: Possibility::Fit,
    borrow: 0,
};
const WORST: Granular = Granular {
    possibility: Possibility::NoFit,
    borrow: u32::MAX,
};

/// Why nothing fits, for `End.neverAdmissible` and messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoFitReason {
    /// A resource no resource group of the ClusterQueue covers (or no flavor matches).
    NoMatchingFlavor,
    /// More than the ClusterQueue could ever get.
    ExceedsMaxQuota,
    /// Not now: quota is in use.
    WaitingForQuota,
}

impl NoFitReason {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::NoMatchingFlavor => "NoMatchingFlavor",
            Self::ExceedsMaxQuota => "ExceedsMaxQuota",
            Self::WaitingForQuota => "WaitingForQuota",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct FlavorChoice {
    pub(crate) flavor: usize,
    pub(crate) mode: Mode,
    pub(crate) borrow: u32,
}

#[derive(Clone, Debug)]
pub(super) struct Assignment {
    /// Per pod set: resource → flavor choice.
    pub(crate) pod_sets: Vec<BTreeMap<usize, FlavorChoice>>,
    /// Total requests per flavor/resource.
    pub(crate) usage: FrMap<i128>,
    /// The borrowing level (0: within nominal).
    pub(crate) borrowing: u32,
    pub(crate) mode: Mode,
    pub(crate) no_fit: Option<NoFitReason>,
}

impl Assignment {
    /// The flavor/resources that need preemption (`flavorResourcesNeedPreemption`).
    pub(super) fn needs_preemption(&self) -> Vec<Fr> {
        let mut frs: Vec<Fr> = self
            .pod_sets
            .iter()
            .flat_map(|ps| ps.iter())
            .filter(|(_, c)| c.mode == Mode::Preempt)
            .map(|(&resource, c)| Fr {
                flavor: c.flavor,
                resource,
            })
            .collect();
        frs.sort_unstable();
        frs.dedup();
        frs
    }

    pub(super) fn flavors(&self) -> Vec<BTreeMap<usize, usize>> {
        self.pod_sets
            .iter()
            .map(|ps| ps.iter().map(|(&r, c)| (r, c.flavor)).collect())
            .collect()
    }
}

/// `isPreferred`: whether `a` is better than `b` under the queue's preference
/// (borrowing over preemption unless the profile says otherwise).
fn preferred(a: Granular, b: Granular, preference: Option<FungibilityPreference>) -> bool {
    if a.possibility == Possibility::NoFit {
        return false;
    }
    if b.possibility == Possibility::NoFit {
        return true;
    }
    let (a_none, b_none) = (
        a.possibility == Possibility::NoCandidates,
        b.possibility == Possibility::NoCandidates,
    );
    if a_none != b_none {
        return !a_none;
    }
    if preference == Some(FungibilityPreference::PreemptionOverBorrowing) {
        if a.borrow != b.borrow {
            return a.borrow < b.borrow;
        }
        return a.possibility > b.possibility;
    }
    if a.possibility != b.possibility {
        return a.possibility > b.possibility;
    }
    a.borrow < b.borrow
}

/// `shouldTryNextFlavor`.
fn try_next(
    m: Granular,
    when_can_borrow: FungibilityPolicy,
    when_can_preempt: FungibilityPolicy,
) -> bool {
    match m.possibility {
        Possibility::NoFit | Possibility::NoCandidates => true,
        Possibility::Preempt | Possibility::Reclaim
            if when_can_preempt == FungibilityPolicy::TryNextFlavor =>
        {
            true
        }
        _ => m.borrow != 0 && when_can_borrow == FungibilityPolicy::TryNextFlavor,
    }
}

/// Assign flavors to every pod set of workload `wl` against the snapshot. With `oracle`
/// false, preemption is never simulated (used to ask whether a workload could ever fit).
pub(super) fn assign(snap: &mut Snapshot<'_>, wl: usize, oracle: bool) -> Assignment {
    let world = snap.world;
    let spec = &world.workloads[wl];
    let cq = &world.cqs[spec.cq];
    let mut out = Assignment {
        pod_sets: Vec::with_capacity(spec.pod_sets.len()),
        usage: FrMap::default(),
        borrowing: 0,
        mode: Mode::Fit,
        no_fit: None,
    };
    for (i, ps) in spec.pod_sets.iter().enumerate() {
        let mut chosen: BTreeMap<usize, FlavorChoice> = BTreeMap::new();
        let mut failed = None;
        for &(resource, amount) in &ps.requests {
            let Some(&g) = cq.group_of.get(&resource) else {
                // Zero requests of resources the queue does not define are skipped (#8079).
                if amount == 0 {
                    continue;
                }
                failed = Some(NoFitReason::NoMatchingFlavor);
                break;
            };
            if chosen.contains_key(&resource) {
                continue;
            }
            let group = &cq.groups[g];
            let requests: Vec<(usize, i128)> = ps
                .requests
                .iter()
                .filter(|(r, _)| group.resources.contains(r))
                .copied()
                .collect();
            match find_flavor(snap, wl, i, &group.flavors, &requests, &out.usage, oracle) {
                Ok(found) => chosen.extend(found),
                Err(reason) => {
                    failed = Some(reason);
                    break;
                }
            }
        }
        if let Some(reason) = failed {
            out.pod_sets.push(BTreeMap::new());
            out.mode = Mode::NoFit;
            out.no_fit = Some(reason);
            return out;
        }
        for &(resource, amount) in &ps.requests {
            if let Some(c) = chosen.get(&resource) {
                out.borrowing = out.borrowing.max(c.borrow);
                *out.usage
                    .entry(Fr {
                        flavor: c.flavor,
                        resource,
                    })
                    .or_insert(0) += amount;
                out.mode = out.mode.min(c.mode);
            }
        }
        out.pod_sets.push(chosen);
    }
    out
}

/// One request of a pod set as `surely_turned_away` weighs it: the amount, and the
/// flavor/resources that could serve it (its resource on each flavor of the covering group
/// that the pod set may use), each with whether the amount is beyond what the queue could
/// ever get of it; none when no group covers a non-zero request.
#[derive(Clone, Debug)]
pub(super) struct Demand {
    amount: i128,
    frs: Vec<(Fr, bool)>,
}

/// Every workload's demands, in workload order, scarcest first (the request that takes the
/// largest share of what its queue could ever get), as that is the one most often refused:
/// what does not change while it waits, worked out once per run.
pub(super) fn demands(world: &World) -> Vec<Vec<Demand>> {
    world
        .workloads
        .iter()
        .map(|spec| {
            let cq = spec.cq;
            let queue = &world.cqs[cq];
            let mut out = Vec::new();
            for ps in &spec.pod_sets {
                for &(resource, amount) in &ps.requests {
                    let frs = match queue.group_of.get(&resource) {
                        Some(&g) => queue.groups[g]
                            .flavors
                            .iter()
                            .filter(|&&f| flavor_matches(&world.flavors[f], ps))
                            .map(|&flavor| {
                                let fr = Fr { flavor, resource };
                                (fr, amount > super::quota::potential(world, cq, fr))
                            })
                            .collect(),
                        // Zero requests of resources the queue does not define are skipped.
                        None if amount == 0 => continue,
                        None => Vec::new(),
                    };
                    out.push(Demand { amount, frs });
                }
            }
            let share = |d: &Demand| {
                d.frs
                    .iter()
                    .map(|&(fr, _)| {
                        #[allow(clippy::cast_precision_loss)] // an ordering hint only
                        let most = super::quota::potential(world, cq, fr) as f64;
                        #[allow(clippy::cast_precision_loss)]
                        let amount = d.amount as f64;
                        if most > 0.0 {
                            amount / most
                        } else {
                            f64::INFINITY
                        }
                    })
                    .fold(f64::INFINITY, f64::min)
            };
            out.sort_by(|a, b| share(b).total_cmp(&share(a)));
            out
        })
        .collect()
}

/// Whether a scheduling cycle would surely turn workload `wl` away, asked without
/// allocating: some request is refused by every flavor that could serve it, either outright
/// (`fits_quota`'s two `NoFit` answers) or because it needs preemption that surely finds no
/// targets (`preemption::surely_none`). Both only grow with the amount asked, and earlier pod
/// sets only add to what a flavor must hold, so the request alone decides: `assign` would
/// give `NoFit`, or `Preempt` for which `targets` finds nothing. The second is used only in
/// queues that reclaim from `Any`, where a head without candidates reserves nothing for the
/// rest of the cycle, so either way it is parked and nothing else changes.
///
/// This is the common case of a long backlog: every release in a cohort sends all its parked
/// workloads back, and most are turned away again. A `false` says nothing; `assign` decides.
///
/// Under fair sharing it asks the fair-sharing preemptor's shortcut
/// (`fair_sharing::surely_none`), and a head it turns away is not parked at once: Kueue
/// iterates the entries that get no fit too (kubernetes-sigs/kueue@v0.19.2
/// `pkg/scheduler/scheduler.go` `nominate` keeps them in `entries`), and there each entry
/// shapes the tournament (`fair_sharing_iterator.go` `computeDRS`: a Cohort competes with the
/// share its winning head would give it), so the cycle assigns it in full when the order of
/// its entries can matter (`cycle::run`).
pub(super) fn surely_turned_away(snap: &mut Snapshot<'_>, wl: usize, demands: &[Demand]) -> bool {
    let world = snap.world;
    let cq = world.workloads[wl].cq;
    let queue = &world.cqs[cq];
    let no_reservation = queue.reclaim == ReclaimWithinCohort::Any;
    let while_borrowing = preempts_while_borrowing(world, cq);
    let deep = queue
        .cohort
        .is_some_and(|k| world.cohorts[k].parent.is_some());
    let mut refused = |fr: Fr, val: i128, beyond: bool| {
        if beyond {
            return true;
        }
        let q = queue.quota(fr);
        let used = snap.usage.of(cq, fr);
        if val <= snap.usage.available_with(world, cq, fr, &q, used) {
            return false;
        }
        // `fits_quota` past its fit. Its third way on, reclaiming in a subtree smaller than
        // the tree (`borrow_level`): in a one-level tree that needs `nominal >= used + val`,
        // which `nominal >= val` covers; deeper, it is asked.
        let may_reclaim = deep && snap.usage.borrow_level(world, cq, fr, val).1;
        let outright = !(q.nominal >= val || may_reclaim || while_borrowing);
        outright
            || (no_reservation
                && match &world.fair_sharing {
                    Some(_) => hopeless(snap, wl, fr, val),
                    None => preemption::surely_none(snap, wl, fr, val),
                })
    };
    demands.iter().any(|d| {
        d.frs
            .iter()
            .all(|&(fr, beyond)| refused(fr, d.amount, beyond))
    })
}

/// Under fair sharing, whether preempting for at least `val` of `fr` surely finds no
/// targets for `wl` (`fair_sharing::surely_none`), its candidates weighed over every
/// flavor/resource of its queue: a superset of those any assignment could need freed, and
/// more candidates only make `surely_none` say `true` less often. So the question is the
/// oracle's (the queue, the flavor/resource, the amount, the priority). The answer is kept
/// by the state, across admissions and releases as far as it still holds
/// (`OracleMemo::moved`); debug builds check every kept answer against a fresh search. Asked
/// only during nomination, while the snapshot's usage is the state's.
fn hopeless(snap: &mut Snapshot<'_>, wl: usize, fr: Fr, val: i128) -> bool {
    let world = snap.world;
    let Some(strategies) = &world.fair_sharing else {
        return false;
    };
    let frs = &world.tree.cq_keys[world.workloads[wl].cq];
    // Without the state's answers (after nomination), worked out afresh.
    let Some(kept) = snap.kept else {
        return super::fair_sharing::surely_none(snap, wl, fr, val, frs, strategies).none;
    };
    let key = oracle_key(world, wl, fr, val);
    // The memory is the state's, not the snapshot's: held while a kept answer is weighed
    // again (`still_none` never asks it).
    let oracle = kept.oracle;
    let mut memo = oracle.borrow_mut();
    let Some(v) = memo.hopeless.get_mut(&key) else {
        drop(memo);
        let verdict = super::fair_sharing::surely_none(snap, wl, fr, val, frs, strategies);
        let none = verdict.none;
        oracle.borrow_mut().hopeless.insert(key, verdict);
        return none;
    };
    // A kept `true` whose tree moved under other children of the root: those weighed again.
    if let Some(mine) = v.top_mine.as_ref().filter(|_| v.none) {
        let taker = v.recheck.iter().copied().find(|&top| {
            !super::fair_sharing::still_none(snap, kept.shares, wl, frs, strategies, mine, top)
        });
        if taker.is_some() {
            v.none = false;
            v.taker = taker;
            v.top_mine = None;
        }
    }
    v.recheck.clear();
    let answer = v.none;
    drop(memo);
    debug_assert_eq!(
        answer,
        super::fair_sharing::surely_none(snap, wl, fr, val, frs, strategies).none,
        "a kept answer of the fair-sharing shortcut no longer holds"
    );
    answer
}

/// The oracle's question: what decides whether preemption finds targets for `val` of `fr`.
fn oracle_key(world: &World, wl: usize, fr: Fr, val: i128) -> OracleKey {
    let w = &world.workloads[wl];
    OracleKey {
        cq: w.cq,
        fr,
        val,
        priority: w.priority,
        created: (world.cqs[w.cq].within_cq == WithinClusterQueue::LowerOrNewerEqualPriority)
            .then_some(w.submit_at),
    }
}

/// `canPreemptWhileBorrowing`: `borrowWithinCohort` allows it, or fair sharing is on and the
/// queue reclaims in its cohort.
pub(super) fn preempts_while_borrowing(world: &World, cq: usize) -> bool {
    let spec = &world.cqs[cq];
    spec.borrow_within_cohort.is_some()
        || (world.fair_sharing.is_some() && spec.reclaim != ReclaimWithinCohort::Never)
}

/// `findFlavorForPodSets` for one pod set and one resource group.
pub(super) fn find_flavor(
    snap: &mut Snapshot<'_>,
    wl: usize,
    pod_set: usize,
    flavors: &[usize],
    requests: &[(usize, i128)],
    assumed: &FrMap<i128>,
    oracle: bool,
) -> Result<BTreeMap<usize, FlavorChoice>, NoFitReason> {
    let world = snap.world;
    let spec = &world.workloads[wl];
    let cq = &world.cqs[spec.cq];
    let mut best: Option<BTreeMap<usize, FlavorChoice>> = None;
    let mut best_mode = WORST;
    let mut reason = NoFitReason::NoMatchingFlavor;
    for &f in flavors {
        if !flavor_matches(&world.flavors[f], &spec.pod_sets[pod_set]) {
            continue;
        }
        let mut rep = BEST;
        let mut found = BTreeMap::new();
        for &(resource, amount) in requests {
            let fr = Fr {
                flavor: f,
                resource,
            };
            let val = assumed.get(&fr).copied().unwrap_or(0) + amount;
            let (possibility, borrow, why) = fits_quota(snap, wl, fr, val, oracle);
            if let Some(why) = why {
                reason = worse(reason, why);
            }
            let m = Granular {
                possibility,
                borrow,
            };
            if preferred(rep, m, cq.preference) {
                rep = m;
            }
            if rep.possibility == Possibility::NoFit {
                continue;
            }
            found.insert(
                resource,
                FlavorChoice {
                    flavor: f,
                    mode: possibility.mode(),
                    borrow,
                },
            );
        }
        if !try_next(rep, cq.when_can_borrow, cq.when_can_preempt) {
            return Ok(found);
        }
        if preferred(rep, best_mode, cq.preference) {
            best = Some(found);
            best_mode = rep;
        }
    }
    best.ok_or(reason)
}

/// The more telling of two reasons (Kueue's `mostSevereReason`: waiting beats exceeding the
/// maximum, which beats no matching flavor): the workload is never admissible only when every
/// flavor is out for good.
fn worse(a: NoFitReason, b: NoFitReason) -> NoFitReason {
    let rank = |r| match r {
        NoFitReason::NoMatchingFlavor => 0,
        NoFitReason::ExceedsMaxQuota => 1,
        NoFitReason::WaitingForQuota => 2,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// `fitsResourceQuota`: how `val` (this and earlier pod sets' requests) of `fr` can be had.
fn fits_quota(
    snap: &mut Snapshot<'_>,
    wl: usize,
    fr: Fr,
    val: i128,
    oracle: bool,
) -> (Possibility, u32, Option<NoFitReason>) {
    let world = snap.world;
    let cq = world.workloads[wl].cq;
    let spec = &world.cqs[cq];
    if val > super::quota::potential(world, cq, fr) {
        return (Possibility::NoFit, 0, Some(NoFitReason::ExceedsMaxQuota));
    }
    let (borrow, may_reclaim) = snap.usage.borrow_level(world, cq, fr, val);
    if val <= snap.usage.available(world, cq, fr) {
        return (Possibility::Fit, borrow, None);
    }
    if !(spec.quota(fr).nominal >= val || may_reclaim || preempts_while_borrowing(world, cq)) {
        return (
            Possibility::NoFit,
            borrow,
            Some(NoFitReason::WaitingForQuota),
        );
    }
    if !oracle {
        // Asked whether the workload could ever fit: preemption might make room.
        return (
            Possibility::Preempt,
            borrow,
            Some(NoFitReason::WaitingForQuota),
        );
    }
    // The oracle: would preempting for this one flavor/resource find targets? The answer
    // depends only on the admitted workloads (the cycle's snapshot, unchanged while heads are
    // nominated), the queue, the request and the preemptor's priority (and its creation time
    // when `withinClusterQueue: LowerOrNewerEqualPriority` compares it), so it is kept until
    // the admitted workloads change: the heads of later cycles ask the same questions.
    // Without the state's answers (the reference run), asked every time.
    let Some(kept) = snap.kept else {
        let (p, b) = oracle_answer(snap, wl, fr, val);
        return (p, b, Some(NoFitReason::WaitingForQuota));
    };
    let key = oracle_key(world, wl, fr, val);
    if let Some(&(p, b)) = kept.oracle.borrow().answers.get(&key) {
        return (p, b, Some(NoFitReason::WaitingForQuota));
    }
    // Most answers of a long backlog are "no candidates"; under fair sharing the shortcut
    // the turned-away heads were asked with has most of them already (`oracle_answer` gives
    // the borrowing level as it is then, as here).
    if hopeless(snap, wl, fr, val) {
        return (
            Possibility::NoCandidates,
            borrow,
            Some(NoFitReason::WaitingForQuota),
        );
    }
    let (p, b) = oracle_answer(snap, wl, fr, val);
    kept.oracle.borrow_mut().answers.insert(key, (p, b));
    (p, b, Some(NoFitReason::WaitingForQuota))
}

/// What preempting for `val` of `fr` alone would give: no candidates, or preemption (in the
/// queue) or reclamation (from the cohort) with the borrowing level once the targets are gone.
fn oracle_answer(snap: &mut Snapshot<'_>, wl: usize, fr: Fr, val: i128) -> (Possibility, u32) {
    let world = snap.world;
    let cq = world.workloads[wl].cq;
    let requests: FrMap<i128> = std::iter::once((fr, val)).collect();
    let targets = preemptor::targets(snap, wl, &[fr], &requests);
    if targets.is_empty() {
        let (b, _) = snap.usage.borrow_level(world, cq, fr, val);
        return (Possibility::NoCandidates, b);
    }
    for t in &targets {
        snap.remove_usage(t.workload);
    }
    let (after, _) = snap.usage.borrow_level(world, cq, fr, val);
    for t in &targets {
        snap.restore(t.workload);
    }
    let same_queue = targets.iter().any(|t| world.workloads[t.workload].cq == cq);
    let p = if same_queue {
        Possibility::Preempt
    } else {
        Possibility::Reclaim
    };
    (p, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(possibility: Possibility, borrow: u32) -> Granular {
        Granular {
            possibility,
            borrow,
        }
    }

    /// kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner_test.go`
    /// `TestIsPreferred`.
    #[test]
    fn preference_orders_modes_as_kueue_does() {
        use Possibility::{Fit, NoCandidates, NoFit, Preempt, Reclaim};
        let pob = Some(FungibilityPreference::PreemptionOverBorrowing);
        // Default (BorrowingOverPreemption): the better preemption mode wins, then less borrowing.
        assert!(preferred(g(Fit, 1), g(Preempt, 0), None));
        assert!(preferred(g(Reclaim, 0), g(Preempt, 0), None));
        assert!(preferred(g(Fit, 0), g(Fit, 1), None));
        // PreemptionOverBorrowing: less borrowing wins, then the better mode.
        assert!(preferred(g(Preempt, 0), g(Fit, 1), pob));
        assert!(preferred(g(Fit, 1), g(Preempt, 1), pob));
        // A flavor without candidates ranks below any viable one, above no fit.
        assert!(preferred(g(Fit, 1), g(NoCandidates, 0), pob));
        assert!(preferred(g(NoCandidates, 0), g(NoFit, 0), None));
        assert!(!preferred(g(NoFit, 0), g(NoCandidates, 0), None));
        // Among flavors without candidates, less borrowing still wins.
        assert!(preferred(g(NoCandidates, 0), g(NoCandidates, 1), None));
    }

    #[test]
    fn fungibility_decides_when_to_stop() {
        use FungibilityPolicy::{MayStopSearch, TryNextFlavor};
        use Possibility::{Fit, NoCandidates, Preempt};
        assert!(!try_next(g(Fit, 1), MayStopSearch, TryNextFlavor));
        assert!(try_next(g(Fit, 1), TryNextFlavor, TryNextFlavor));
        assert!(try_next(g(Preempt, 0), MayStopSearch, TryNextFlavor));
        assert!(!try_next(g(Preempt, 0), MayStopSearch, MayStopSearch));
        assert!(try_next(g(NoCandidates, 0), MayStopSearch, MayStopSearch));
    }
}
