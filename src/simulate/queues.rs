//! The pending workloads of each ClusterQueue, as Kueue v0.19.2's queue manager keeps them
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/queue/cluster_queue.go`): an ordered heap
//! (higher priority first, then older, then by name for Kueue's UID tie-break) whose head is
//! offered to each scheduling cycle, and the parked "inadmissible" workloads that wait until
//! quota is released in the cohort (`QueueAssociatedInadmissibleWorkloadsAfter`).
//!
//! Whether a workload that was not admitted goes back to the heap at once or is parked is
//! `RequeueIfNotPresent`: in a `StrictFIFO` queue always back (so a head that does not fit
//! blocks the queue); in `BestEffortFIFO` back only after a failure that depended on the cycle
//! (it no longer fit after another admission) or while its preemptions complete.

use super::model::World;
use crate::profile::QueueingStrategy;
use std::cmp::Reverse;
use std::collections::BTreeSet;

type Key = (Reverse<i64>, u64, usize);

#[derive(Clone, Debug, Default)]
struct CqQueue {
    heap: BTreeSet<Key>,
    inadmissible: BTreeSet<usize>,
}

/// Why a head was not admitted in a cycle (Kueue's `RequeueReason`s that matter here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requeue {
    /// No flavor assignment fits.
    NoFit,
    /// Preemption would be needed but there is nothing to preempt.
    NoCandidates,
    /// It fitted at nomination but not after other admissions of the cycle.
    FailedAfterNomination,
    /// Its preemptions were issued.
    PendingPreemption,
}

#[derive(Clone, Debug)]
pub struct Queues {
    cqs: Vec<CqQueue>,
}

impl Queues {
    pub fn new(world: &World) -> Self {
        Self {
            cqs: vec![CqQueue::default(); world.cqs.len()],
        }
    }

    fn key(world: &World, wl: usize) -> Key {
        let w = &world.workloads[wl];
        (Reverse(w.priority), w.submit_at, wl)
    }

    /// A new or evicted workload enters its queue's heap.
    pub fn push(&mut self, world: &World, wl: usize) {
        let q = &mut self.cqs[world.workloads[wl].cq];
        q.inadmissible.remove(&wl);
        q.heap.insert(Self::key(world, wl));
    }

    /// The head of every ClusterQueue with one, in ClusterQueue order (`Heads`).
    pub fn pop_heads(&mut self) -> Vec<usize> {
        self.cqs
            .iter_mut()
            .filter_map(|q| q.heap.pop_first().map(|(_, _, wl)| wl))
            .collect()
    }

    /// Put back a head that was not admitted; returns whether it was parked.
    pub fn requeue(&mut self, world: &World, wl: usize, why: Requeue) -> bool {
        let cq = world.workloads[wl].cq;
        let immediate = match world.cqs[cq].strategy {
            QueueingStrategy::StrictFIFO => true,
            QueueingStrategy::BestEffortFIFO => matches!(
                why,
                Requeue::FailedAfterNomination | Requeue::PendingPreemption
            ),
        };
        if immediate {
            self.cqs[cq].heap.insert(Self::key(world, wl));
        } else {
            self.cqs[cq].inadmissible.insert(wl);
        }
        !immediate
    }

    /// Quota was released in `cq`: every parked workload of its cohort (or of the queue
    /// alone, without a cohort) goes back to its heap.
    pub fn retry_inadmissible(&mut self, world: &World, cq: usize) {
        let cohort = world.cqs[cq].cohort;
        for (i, spec) in world.cqs.iter().enumerate() {
            let related = i == cq || (cohort.is_some() && spec.cohort == cohort);
            if !related || self.cqs[i].inadmissible.is_empty() {
                continue;
            }
            let parked = std::mem::take(&mut self.cqs[i].inadmissible);
            for wl in parked {
                self.cqs[i].heap.insert(Self::key(world, wl));
            }
        }
    }

    /// Whether a workload is waiting in some queue.
    pub fn is_pending(&self, world: &World, wl: usize) -> bool {
        let q = &self.cqs[world.workloads[wl].cq];
        q.inadmissible.contains(&wl) || q.heap.contains(&Self::key(world, wl))
    }
}
