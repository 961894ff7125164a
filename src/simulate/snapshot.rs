//! The admitted workloads and the usage they hold (`State`), and what a scheduling cycle sees
//! of them (`Snapshot`): Kueue's cache snapshot. A snapshot copies only the usage of queues
//! and cohorts, and only when it first changes it (preemption simulating removals, the cycle
//! adding what it admits); the admitted workloads themselves are shared with the state, so a
//! cycle costs at most the size of the quota table, not of the scenario, and a cycle that only
//! turns heads away copies nothing.

use super::oracle::OracleMemo;
use super::quota::Usage;
use super::share::Kept;
use super::world::{Fr, FrMap, World};
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeSet;

/// An admitted workload: when it ends and what it holds.
#[derive(Clone, Debug)]
pub(super) struct Running {
    pub(crate) admitted_at: u64,
    pub(crate) ends: u64,
    pub(crate) usage: FrMap<i128>,
}

/// The admitted workloads and the usage of every queue and cohort.
#[derive(Clone, Debug)]
pub(super) struct State {
    pub(crate) usage: Usage,
    /// Indexed by workload.
    pub(crate) running: Vec<Option<Running>>,
    /// Admitted workloads per ClusterQueue.
    pub(crate) by_cq: Vec<BTreeSet<usize>>,
    /// The preemption oracle's answers for the admitted workloads as they are; forgotten, as
    /// far as they no longer hold, when a workload is admitted or released
    /// (`OracleMemo::moved`).
    oracle: RefCell<OracleMemo>,
    /// The fair shares kept with this usage; forgotten along a queue's path to its root when
    /// a workload of the queue is admitted or released (`Kept::forget`).
    shares: RefCell<Kept>,
    /// The sum of a hash of each admitted workload with its times, kept as workloads come
    /// and go: `Sim::settle` asks for it every cycle, and hashing every admitted workload
    /// each time was a tenth of a run. A sum, as the admitted workloads are a set (indexed
    /// by workload, so no order to keep).
    fingerprint: u64,
}

impl State {
    pub(super) fn new(world: &World) -> Self {
        Self {
            usage: Usage::new(world),
            running: vec![None; world.workloads.len()],
            by_cq: vec![BTreeSet::new(); world.cqs.len()],
            oracle: RefCell::default(),
            shares: RefCell::default(),
            fingerprint: 0,
        }
    }

    /// One admitted workload's part of `fingerprint`.
    fn mark(wl: usize, running: &Running) -> u64 {
        // foldhash, not SipHash: nothing here comes from outside to collide on purpose.
        std::hash::BuildHasher::hash_one(
            &foldhash::fast::FixedState::default(),
            (wl, running.admitted_at, running.ends),
        )
    }

    pub(super) fn admit(&mut self, world: &World, wl: usize, running: Running) {
        let cq = world.workloads[wl].cq;
        self.oracle.get_mut().moved(world, cq);
        self.shares.get_mut().forget(world, cq);
        self.usage.add_all(world, cq, &running.usage);
        self.by_cq[cq].insert(wl);
        if let Some(gone) = &self.running[wl] {
            self.fingerprint = self.fingerprint.wrapping_sub(Self::mark(wl, gone));
        }
        self.fingerprint = self.fingerprint.wrapping_add(Self::mark(wl, &running));
        self.running[wl] = Some(running);
    }

    /// Take an admitted workload out (eviction, end); returns what it held.
    pub(super) fn release(&mut self, world: &World, wl: usize) -> Option<Running> {
        let running = self.running[wl].take()?;
        self.fingerprint = self.fingerprint.wrapping_sub(Self::mark(wl, &running));
        let cq = world.workloads[wl].cq;
        self.oracle.get_mut().moved(world, cq);
        self.shares.get_mut().forget(world, cq);
        self.usage.remove_all(world, cq, &running.usage);
        self.by_cq[cq].remove(&wl);
        Some(running)
    }

    /// Everything a cycle reads of the admitted workloads (who, since when, until when), for
    /// `Sim::settle`'s loop detection; usage follows from it.
    pub(super) fn fingerprint(&self) -> u64 {
        debug_assert_eq!(
            self.fingerprint,
            self.running
                .iter()
                .enumerate()
                .filter_map(|(wl, r)| Some(Self::mark(wl, r.as_ref()?)))
                .fold(0, u64::wrapping_add),
            "the kept fingerprint follows every admission and release"
        );
        self.fingerprint
    }

    /// The view of a scheduling cycle.
    pub(super) fn snapshot<'a>(&'a self, world: &'a World) -> Snapshot<'a> {
        Snapshot {
            world,
            usage: Cow::Borrowed(&self.usage),
            running: &self.running,
            by_cq: &self.by_cq,
            removed: Vec::new(),
            kept: Some(KeptAnswers {
                oracle: &self.oracle,
                shares: &self.shares,
            }),
            reference: false,
        }
    }
}

/// What the state keeps for the admitted workloads as they are, across cycles: the preemption
/// oracle's answers, forgotten as far as they no longer hold when a workload is admitted or
/// released (`OracleMemo::moved`), and the fair shares of every queue and Cohort with each
/// Cohort's borrowing children ranked by them (`Kept::forget`). They hold for the state's
/// usage only: a snapshot reaches them while its usage is the state's (nomination, when every
/// search leaves the usage as it found it) and lets go of them when the cycle's admissions
/// start to move it (`end_nomination`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeptAnswers<'a> {
    pub(crate) oracle: &'a RefCell<OracleMemo>,
    pub(crate) shares: &'a RefCell<Kept>,
}

#[derive(Clone, Debug)]
pub(super) struct Snapshot<'a> {
    pub(crate) world: &'a World,
    /// The state's usage until the snapshot first changes it.
    pub(crate) usage: Cow<'a, Usage>,
    pub(crate) running: &'a [Option<Running>],
    by_cq: &'a [BTreeSet<usize>],
    /// Admitted workloads whose removal is being simulated (a few at a time: a list).
    removed: Vec<usize>,
    /// The state's kept answers, while nomination is under way (`None` after it, and in the
    /// reference run): whoever asks for one works it out afresh without them.
    pub(crate) kept: Option<KeptAnswers<'a>>,
    /// The reference run (`simulate::run_reference`): no shortcut is taken.
    pub(crate) reference: bool,
}

impl Snapshot<'_> {
    /// Nomination is over: the usage moves from here on, the state's answers no longer hold.
    pub(super) fn end_nomination(&mut self) {
        self.kept = None;
    }

    /// The reference run's view: no shortcut, nothing kept.
    pub(super) fn take_no_shortcuts(&mut self) {
        self.reference = true;
        self.kept = None;
    }

    /// The admitted workloads of a ClusterQueue (those not removed in simulation).
    pub(super) fn admitted_in(&self, cq: usize) -> impl Iterator<Item = usize> + '_ {
        self.by_cq[cq]
            .iter()
            .copied()
            .filter(|w| !self.removed.contains(w))
    }

    /// Simulate the removal of an admitted workload (undone by `restore`).
    pub(super) fn remove_usage(&mut self, wl: usize) {
        if let Some(r) = &self.running[wl]
            && !self.removed.contains(&wl)
        {
            self.removed.push(wl);
            let cq = self.world.workloads[wl].cq;
            self.usage.to_mut().remove_all(self.world, cq, &r.usage);
        }
    }

    pub(super) fn restore(&mut self, wl: usize) {
        if let Some(r) = &self.running[wl]
            && let Some(i) = self.removed.iter().position(|&w| w == wl)
        {
            self.removed.swap_remove(i);
            let cq = self.world.workloads[wl].cq;
            self.usage.to_mut().add_all(self.world, cq, &r.usage);
        }
    }

    /// Whether an admitted workload holds any of `frs` (Kueue's `WorkloadUsesResources`).
    pub(super) fn uses_any(&self, wl: usize, frs: &[Fr]) -> bool {
        self.running[wl]
            .as_ref()
            .is_some_and(|r| frs.iter().any(|fr| r.usage.get(fr).is_some_and(|&v| v > 0)))
    }
}
