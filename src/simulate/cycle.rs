//! One scheduling cycle, as Kueue v0.19.2's scheduler runs it
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/scheduler.go`: `schedule`, `nominate`,
//! `processEntry`, `makeClassicalIterator`, `requeueAndUpdate`):
//!
//! 1. take the head of every ClusterQueue and a snapshot of usage;
//! 2. nominate: assign flavors to each head against the snapshot, and find preemption
//!    targets for those that need them;
//! 3. process the heads in order: no borrowing first, then higher priority, then older (then
//!    by name). A head that no longer fits after earlier ones, or whose targets overlap an
//!    earlier preemption, is skipped; a head with targets issues its preemptions and waits; a
//!    head that needs preemption but has none may reserve quota (`reserveCapacityFor
//!    UnreclaimablePreempt`); the others are admitted;
//! 4. requeue the heads that were not admitted;
//! 5. evict the victims at once (conventions, 2): their quota is released and they and the
//!    parked workloads of their cohort go back to the queues.

use super::Sim;
use super::events::Event;
use super::fair_sharing;
use super::flavors::{self, Assignment, Mode};
use super::preemption::Target;
use super::preemptor;
use super::queues::Requeue;
use super::snapshot::Running;
use super::world::FrMap;
use crate::profile::ReclaimWithinCohort;
use std::collections::{BTreeMap, BTreeSet};

struct Entry {
    wl: usize,
    assignment: Assignment,
    targets: Vec<Target>,
    requeue: Option<Requeue>,
}

/// Run one cycle at time `now`. Returns whether anything changed (an admission, a preemption,
/// a workload parked); a cycle that changes nothing would repeat itself.
pub(super) fn run(sim: &mut Sim<'_>, now: u64) -> bool {
    let world = sim.world;
    let heads = sim.queues.pop_heads();
    if heads.is_empty() {
        return false;
    }
    // Admissions and evictions reach the state after the cycle; within it, only the
    // snapshot's usage moves (as Kueue's snapshot does).
    let mut admitted: Vec<(usize, Running)> = Vec::new();
    let mut snap = sim.state.snapshot(world);
    if sim.reference {
        snap.take_no_shortcuts();
    }
    let mut changed = false;
    let mut entries: Vec<Entry> = Vec::with_capacity(heads.len());
    // Heads surely turned away: they move no usage wherever they come in the cycle.
    let mut idle: Vec<usize> = Vec::new();
    for wl in heads {
        if !sim.reference && flavors::surely_turned_away(&mut snap, wl, &sim.demands[wl]) {
            debug_assert!(
                turned_away_in_full(&mut snap, wl),
                "the shortcut turned away `{}`, which the full assignment would not",
                world.workloads[wl].name
            );
            idle.push(wl);
            continue;
        }
        let assignment = flavors::assign(&mut snap, wl, true);
        let targets = if assignment.mode == Mode::Preempt {
            let frs = assignment.needs_preemption();
            preemptor::targets(&mut snap, wl, &frs, &assignment.usage)
        } else {
            Vec::new()
        };
        entries.push(Entry {
            wl,
            assignment,
            targets,
            requeue: None,
        });
    }
    // Under fair sharing an idle head may still shape the tournament (`fair_sharing::next`):
    // assigned in full (it has no targets, as the shortcut says) when the order of the
    // entries can matter and it speaks for a Cohort below the root (`shapes_order`).
    // Otherwise parked now rather than after the cycle: it takes nothing from the snapshot,
    // each queue offers one head, and the cycle's victims come back after every requeue, so
    // nothing sees the difference; the sort below is spared it.
    if world.fair_sharing.is_some() && (sim.reference || order_matters(&mut snap, &entries)) {
        for wl in idle {
            if !sim.reference && !shapes_order(world, wl) {
                changed |= sim.queues.requeue(world, wl, Requeue::NoFit);
                continue;
            }
            let assignment = flavors::assign(&mut snap, wl, true);
            entries.push(Entry {
                wl,
                assignment,
                targets: Vec::new(),
                requeue: None,
            });
        }
    } else {
        for wl in idle {
            changed |= sim.queues.requeue(world, wl, Requeue::NoFit);
        }
    }
    snap.end_nomination();
    entries.sort_by(|a, b| {
        let (wa, wb) = (&world.workloads[a.wl], &world.workloads[b.wl]);
        a.assignment
            .borrowing
            .cmp(&b.assignment.borrowing)
            .then(wb.priority.cmp(&wa.priority))
            .then(wa.submit_at.cmp(&wb.submit_at))
            .then(a.wl.cmp(&b.wl))
    });
    // Classic order: as sorted. Fair sharing: a tournament for each entry taken, on the
    // usage the entries before it left (`fair_sharing::next`), while the order can matter.
    let mut order = Order::new(world.fair_sharing.is_some(), sim.reference, &entries);

    let mut preempted: BTreeSet<usize> = BTreeSet::new();
    let mut victims: Vec<usize> = Vec::new();
    while let Some(i) = order.next(&mut snap, &entries, &preempted) {
        let e = &mut entries[i];
        let cq = world.workloads[e.wl].cq;
        match e.assignment.mode {
            Mode::NoFit => {
                e.requeue = Some(Requeue::NoFit);
                continue;
            }
            Mode::Preempt if e.targets.is_empty() => {
                e.requeue = Some(Requeue::NoCandidates);
                // A queue that cannot always reclaim holds on to what it would take, so that
                // later heads of the cycle do not take it first.
                if world.cqs[cq].reclaim != ReclaimWithinCohort::Any {
                    let reserve = reservation(&snap, cq, &e.assignment);
                    snap.usage.to_mut().add_all(world, cq, &reserve);
                    order.moved(cq);
                }
                continue;
            }
            _ => {}
        }
        if e.targets.iter().any(|t| preempted.contains(&t.workload)) {
            e.requeue = Some(Requeue::FailedAfterNomination);
            continue;
        }
        if !fits(&mut snap, cq, &e.assignment.usage, &preempted, &e.targets) {
            e.requeue = Some(Requeue::FailedAfterNomination);
            continue;
        }
        preempted.extend(e.targets.iter().map(|t| t.workload));
        snap.usage.to_mut().add_all(world, cq, &e.assignment.usage);
        order.moved(cq);
        changed = true;
        if e.assignment.mode == Mode::Preempt {
            for t in &e.targets {
                sim.events.push(Event::Preempted {
                    time: now,
                    workload: t.workload,
                    by: e.wl,
                    reason: t.reason,
                });
                victims.push(t.workload);
            }
            e.requeue = Some(Requeue::PendingPreemption);
            continue;
        }
        let borrowed = borrowed(&snap, cq, &e.assignment.usage);
        let flavors = e.assignment.flavors();
        let ends = now.saturating_add(world.workloads[e.wl].run_for);
        admitted.push((
            e.wl,
            Running {
                admitted_at: now,
                ends,
                usage: e.assignment.usage.clone(),
            },
        ));
        sim.events.push(Event::Admitted {
            time: now,
            workload: e.wl,
            flavors,
            borrowed,
        });
    }
    drop(snap);
    for (wl, running) in admitted {
        sim.ends.push(std::cmp::Reverse((running.ends, wl)));
        sim.state.admit(world, wl, running);
        sim.queues.admitted(world, wl);
    }
    for e in &entries {
        if let Some(why) = e.requeue {
            changed |= sim.queues.requeue(world, e.wl, why);
        }
    }
    for v in victims {
        if sim.state.release(world, v).is_some() {
            let cq = world.workloads[v].cq;
            sim.queues.push(world, v);
            sim.queues.retry_inadmissible(world, cq);
        }
    }
    changed
}

/// The order a cycle processes its entries in.
#[allow(clippy::large_enum_variant)] // one per cycle, never moved around
enum Order {
    /// Kueue's classical iterator: the entries as sorted, one after the other.
    Classic(std::ops::Range<usize>),
    /// Kueue's fair-sharing iterator: the entries not taken yet, each entry with what it
    /// would use, and the tournament while usage has not moved. `open` while the order of the
    /// entries left may still matter (see `Order::next`), always in the reference run, which
    /// also builds the tournament afresh for every pick.
    Fair {
        left: Vec<usize>,
        open: bool,
        reference: bool,
        heads: Vec<fair_sharing::Head>,
        borrowing: Vec<u32>,
        tournament: Option<fair_sharing::Tournament>,
    },
}

impl Order {
    fn new(fair: bool, reference: bool, entries: &[Entry]) -> Self {
        if !fair {
            return Self::Classic(0..entries.len());
        }
        Self::Fair {
            left: (0..entries.len()).collect(),
            open: true,
            reference,
            heads: entries
                .iter()
                .map(|e| fair_sharing::Head {
                    wl: e.wl,
                    usage: e.assignment.usage.clone(),
                })
                .collect(),
            borrowing: entries.iter().map(|e| e.assignment.borrowing).collect(),
            tournament: None,
        }
    }

    /// The snapshot's usage moved in ClusterQueue `cq`: the tournament weighs it again.
    fn moved(&mut self, cq: usize) {
        if let Self::Fair {
            tournament, open, ..
        } = self
        {
            if let Some(t) = tournament {
                t.moved(cq);
            }
            *open = true;
        }
    }

    /// The next entry to process. Under fair sharing the tournament decides only while the
    /// order of the entries left can matter. An entry that cannot move usage now
    /// (`may_move`) leaves the snapshot as it is wherever it comes, and usage that only grows
    /// never lets it move later (admissions and reservations add usage; only preemptions
    /// free some). So when none of the entries left can move usage, or one can and it
    /// preempts nothing, every order gives the same admissions, reservations and requeues
    /// (events come only from entries that move usage), and the entries left go in the
    /// sorted order. Most cycles of a long backlog are such cycles: every head is turned
    /// away, or one is admitted and the others no longer fit.
    fn next(
        &mut self,
        snap: &mut super::snapshot::Snapshot<'_>,
        entries: &[Entry],
        preempted: &BTreeSet<usize>,
    ) -> Option<usize> {
        match self {
            Self::Classic(range) => range.next(),
            Self::Fair {
                left,
                open,
                reference,
                heads,
                borrowing,
                tournament,
            } => {
                if *reference {
                    *tournament = None;
                } else if *open {
                    *open = matters(snap, entries, left.iter().copied(), preempted);
                }
                if !*open || left.len() <= 1 {
                    // Closed for good (usage only grows from here): the standing tournament
                    // no longer follows the entries taken, so it goes.
                    *tournament = None;
                    return (!left.is_empty()).then(|| left.remove(0));
                }
                let pick = fair_sharing::next(snap, heads, left, borrowing, tournament)?;
                let at = left.iter().position(|&i| i == pick)?;
                Some(left.remove(at))
            }
        }
    }
}

/// Whether a head that moves no usage can change the order the tournament takes the others
/// in. Taken, it changes nothing, so every comparison after it is the one that would have
/// been made without it; it matters only while it is the best of a Cohort's subtree that
/// competes in a Cohort above (the tournament bubbles up one head per Cohort and weighs the
/// Cohort by the share that head would give it, kubernetes-sigs/kueue@v0.19.2
/// `pkg/scheduler/fair_sharing_iterator.go` `runTournament`, `computeDRS`), where without it the next best of the subtree would stand for the Cohort,
/// with another share, and might win where it lost. A head whose queue sits right under the
/// root of its tree only ever competes as itself: without it the same head wins each round.
fn shapes_order(world: &super::world::World, wl: usize) -> bool {
    let cq = world.workloads[wl].cq;
    world.cqs[cq]
        .cohort
        .is_some_and(|k| world.cohorts[k].parent.is_some())
}

/// Whether the order of the nominated entries can matter (see `Order::next`).
fn order_matters(snap: &mut super::snapshot::Snapshot<'_>, entries: &[Entry]) -> bool {
    matters(snap, entries, 0..entries.len(), &BTreeSet::new())
}

/// Whether the order of `left` (entries not processed yet) can matter: two of them could
/// move usage, or one could and its preemptions might make room for another.
fn matters(
    snap: &mut super::snapshot::Snapshot<'_>,
    entries: &[Entry],
    left: impl Iterator<Item = usize>,
    preempted: &BTreeSet<usize>,
) -> bool {
    let mut live = left.filter(|&i| may_move(snap, &entries[i], preempted));
    match (live.next(), live.next()) {
        (None, _) => false,
        (Some(i), None) => !entries[i].targets.is_empty(),
        (Some(_), Some(_)) => true,
    }
}

/// Whether processing `e` now could move the snapshot's usage: it would be admitted or
/// preempt (its targets untouched by the cycle's earlier preemptions, and it still fits), or
/// it reserves quota having found no targets.
fn may_move(
    snap: &mut super::snapshot::Snapshot<'_>,
    e: &Entry,
    preempted: &BTreeSet<usize>,
) -> bool {
    let world = snap.world;
    let cq = world.workloads[e.wl].cq;
    match e.assignment.mode {
        Mode::NoFit => false,
        Mode::Preempt if e.targets.is_empty() => world.cqs[cq].reclaim != ReclaimWithinCohort::Any,
        _ => {
            !e.targets.iter().any(|t| preempted.contains(&t.workload))
                && fits(snap, cq, &e.assignment.usage, preempted, &e.targets)
        }
    }
}

/// What `flavors::surely_turned_away` claims, worked out in full: the head gets no fit, or
/// needs preemption and finds no targets. Debug builds check every use of the shortcut with
/// it; the reference run (`simulate::run_reference`) never takes the shortcut.
fn turned_away_in_full(snap: &mut super::snapshot::Snapshot<'_>, wl: usize) -> bool {
    let assignment = flavors::assign(snap, wl, true);
    match assignment.mode {
        Mode::NoFit => true,
        Mode::Fit => false,
        Mode::Preempt => {
            let frs = assignment.needs_preemption();
            preemptor::targets(snap, wl, &frs, &assignment.usage).is_empty()
        }
    }
}

/// `fits`: the assignment's usage fits what is available once the cycle's victims and the
/// entry's own targets are gone.
fn fits(
    snap: &mut super::snapshot::Snapshot<'_>,
    cq: usize,
    usage: &FrMap<i128>,
    preempted: &BTreeSet<usize>,
    targets: &[Target],
) -> bool {
    let mut gone: BTreeSet<usize> = preempted.clone();
    gone.extend(targets.iter().map(|t| t.workload));
    for &g in &gone {
        snap.remove_usage(g);
    }
    let world = snap.world;
    let ok = usage
        .iter()
        .all(|(&fr, &v)| v <= snap.usage.available(world, cq, fr));
    for &g in &gone {
        snap.restore(g);
    }
    ok
}

/// `quotaResourcesToReserve` for a head that needs preemption but found no targets.
fn reservation(snap: &super::snapshot::Snapshot<'_>, cq: usize, a: &Assignment) -> FrMap<i128> {
    let world = snap.world;
    a.usage
        .iter()
        .map(|(&fr, &v)| {
            let q = world.cqs[cq].quota(fr);
            let used = snap.usage.of(cq, fr);
            let keep = if a.borrowing > 0 {
                q.borrowing_limit
                    .map_or(v, |bl| v.min(q.nominal + bl - used))
            } else {
                v.min(q.nominal - used).max(0)
            };
            (fr, keep)
        })
        .collect()
}

/// Conventions, 4: per resource, `min(request, max(0, usage after admission − nominal))` on
/// the assigned flavor, summed over flavors; resources with nothing borrowed left out.
fn borrowed(
    snap: &super::snapshot::Snapshot<'_>,
    cq: usize,
    usage: &FrMap<i128>,
) -> BTreeMap<usize, i128> {
    let world = snap.world;
    let mut out: BTreeMap<usize, i128> = BTreeMap::new();
    for (&fr, &v) in usage {
        let over = (snap.usage.of(cq, fr) - world.cqs[cq].quota(fr).nominal).max(0);
        let b = v.min(over);
        if b > 0 {
            *out.entry(fr.resource).or_insert(0) += b;
        }
    }
    out
}
