//! The pending workloads of each ClusterQueue, as Kueue v0.19.2's queue manager keeps them
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/queue/cluster_queue.go`): an ordered heap
//! (higher priority first, then older, then by name for Kueue's UID tie-break) whose head is
//! offered to each scheduling cycle, and the parked "inadmissible" workloads that wait until
//! quota is released in the cohort (`QueueAssociatedInadmissibleWorkloadsAfter`).
//!
//! Parked workloads return to the heaps only on an event that may free capacity: a workload
//! of the cohort finished or was evicted (kubernetes-sigs/kueue@v0.19.2
//! `pkg/cache/queue/manager.go` `QueueAssociatedInadmissibleWorkloadsAfter` →
//! `inadmissible_workloads.go` `notifyRetryInadmissibleWithoutLock`, `requeueWorkloadsCohort`,
//! `queueInadmissibleWorkloads`: every ClusterQueue of the cohort tree, all its parked
//! workloads, and its bulk-moved equivalence classes forgotten). Kueue batches these requests
//! (a delaying work queue, `requeueBatchPeriod` 1 s); the simulator requeues in the same second,
//! as the contract's conventions have it, so several releases in one second are one requeue.
//!
//! Whether a workload that was not admitted goes back to the heap at once or is parked is
//! `requeueIfNotPresent` (`cluster_queue.go`): in a `StrictFIFO` queue always back (so a head that does not fit
//! blocks the queue); in `BestEffortFIFO` back only after a failure that depended on the cycle
//! (it no longer fit after another admission) or while its preemptions complete.

use super::world::World;
use crate::profile::QueueingStrategy;
use std::cmp::Reverse;
use std::collections::VecDeque;

/// Queue order: higher priority, then older, then the workload's index (its name's order).
/// The workload's equivalence class rides along, after the unique index, so that parking a
/// class does not look up every waiting workload.
type Key = (Reverse<i64>, u64, usize, usize);

/// A queue's waiting workloads in order, first at the front. A sorted double-ended list
/// rather than a tree: a queue holds a handful at a time, heads leave from the front and are
/// put back there, new workloads mostly join at the back, and a whole backlog comes back at
/// once (`extend`, one sort).
#[derive(Clone, Debug, Default)]
struct Ordered(VecDeque<Key>);

impl Ordered {
    /// Returns whether the key was new.
    fn insert(&mut self, key: Key) -> bool {
        let at = self.0.partition_point(|k| *k < key);
        let new = self.0.get(at) != Some(&key);
        if new {
            self.0.insert(at, key);
        }
        new
    }

    fn remove(&mut self, key: &Key) -> bool {
        match self.0.binary_search(key) {
            Ok(at) => self.0.remove(at).is_some(),
            Err(_) => false,
        }
    }

    fn contains(&self, key: &Key) -> bool {
        self.0.binary_search(key).is_ok()
    }

    fn pop_first(&mut self) -> Option<Key> {
        self.0.pop_front()
    }

    /// Add workloads that are not in the list (a workload waits in one place at a time).
    fn extend(&mut self, keys: impl IntoIterator<Item = Key>) {
        self.0.extend(keys);
        self.0.make_contiguous().sort_unstable();
    }
}

#[derive(Clone, Debug, Default)]
struct CqQueue {
    heap: Ordered,
    /// Unordered: parked workloads go back to the heap, which orders them. A list, as a
    /// queue parks a few workloads at a time and takes them all back at once.
    inadmissible: Vec<usize>,
    /// The workload whose preemptions are under way (Kueue's `preemptorWorkload`). In a
    /// `BestEffortFIFO` queue it stays the head until it is admitted, so that the workloads
    /// skipped while it waited do not take the quota its victims free (Kueue#6929, #7101).
    sticky: Option<usize>,
    /// Equivalence classes parked as a whole (`hashToBulkMoveReason`), until quota is
    /// released in the cohort (a few: a list).
    parked_classes: Vec<usize>,
}

/// Why a head was not admitted in a cycle (Kueue's `RequeueReason`s that matter here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Requeue {
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
pub(super) struct Queues {
    cqs: Vec<CqQueue>,
    /// See `fingerprint`.
    fingerprint: u64,
}

/// A member of one of a queue's sets, as `Queues::fingerprint` counts it.
#[derive(Clone, Copy)]
enum Mark {
    Waiting(usize),
    Parked(usize),
    Sticky(usize),
    /// A parked class of a queue.
    Class(usize, usize),
}

impl Mark {
    /// The member's hash: the set and the member in one word, mixed (SplitMix64's
    /// finalizer; asked every time a queue changes, so a few instructions).
    fn hash(self) -> u64 {
        let (set, a, b) = match self {
            Mark::Waiting(wl) => (1, wl, 0),
            Mark::Parked(wl) => (2, wl, 0),
            Mark::Sticky(wl) => (3, wl, 0),
            Mark::Class(cq, class) => (4, cq, class),
        };
        let mut z = (set << 60) ^ ((a as u64) << 28) ^ (b as u64);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl Queues {
    pub(super) fn new(world: &World) -> Self {
        Self {
            cqs: vec![CqQueue::default(); world.cqs.len()],
            fingerprint: 0,
        }
    }

    /// Everything a cycle reads of the queues, for `Sim::settle`'s loop detection: kept as
    /// workloads come and go rather than hashed from every waiting workload each cycle (that
    /// was a twelfth of a fair-sharing run). What a cycle can observe of a queue is four sets:
    /// the waiting workloads (their order follows from their keys, and a key from the
    /// workload), the parked ones and the parked classes (lists whose order nothing reads),
    /// and the sticky preemptor; so a sum over their members, each hashed with its set.
    pub(super) fn fingerprint(&self) -> u64 {
        debug_assert_eq!(
            self.fingerprint,
            self.cqs
                .iter()
                .enumerate()
                .flat_map(|(cq, q)| {
                    let heap = q.heap.0.iter().map(|k| Mark::Waiting(k.2));
                    let parked = q.inadmissible.iter().map(|&wl| Mark::Parked(wl));
                    let sticky = q.sticky.map(Mark::Sticky);
                    let classes = q.parked_classes.iter().map(move |&c| Mark::Class(cq, c));
                    heap.chain(parked).chain(sticky).chain(classes)
                })
                .map(Mark::hash)
                .fold(0, u64::wrapping_add),
            "the kept fingerprint follows every change to the queues"
        );
        self.fingerprint
    }

    fn add(&mut self, mark: Mark) {
        self.fingerprint = self.fingerprint.wrapping_add(mark.hash());
    }

    fn sub(&mut self, mark: Mark) {
        self.fingerprint = self.fingerprint.wrapping_sub(mark.hash());
    }

    fn set_sticky(&mut self, cq: usize, wl: Option<usize>) {
        if let Some(old) = std::mem::replace(&mut self.cqs[cq].sticky, wl) {
            self.sub(Mark::Sticky(old));
        }
        if let Some(new) = wl {
            self.add(Mark::Sticky(new));
        }
    }

    fn key(world: &World, wl: usize) -> Key {
        let w = &world.workloads[wl];
        (Reverse(w.priority), w.submit_at, wl, w.class)
    }

    /// A new or evicted workload enters its queue's heap, or is parked at once when its
    /// equivalence class was parked (`BestEffortFIFO` only; `PushOrUpdate`).
    pub(super) fn push(&mut self, world: &World, wl: usize) {
        let spec = &world.workloads[wl];
        let q = &mut self.cqs[spec.cq];
        if world.cqs[spec.cq].strategy == QueueingStrategy::BestEffortFIFO
            && q.parked_classes.contains(&spec.class)
        {
            if !q.inadmissible.contains(&wl) {
                q.inadmissible.push(wl);
                self.add(Mark::Parked(wl));
            }
            return;
        }
        let before = q.inadmissible.len();
        q.inadmissible.retain(|&w| w != wl);
        let unparked = before - q.inadmissible.len();
        let waits = q.heap.insert(Self::key(world, wl));
        for _ in 0..unparked {
            self.sub(Mark::Parked(wl));
        }
        if waits {
            self.add(Mark::Waiting(wl));
        }
    }

    /// The head of every ClusterQueue with one, in ClusterQueue order (`Heads`): the sticky
    /// preemptor when it is waiting in the heap, else the first in order.
    pub(super) fn pop_heads(&mut self, world: &World) -> Vec<usize> {
        let heads: Vec<usize> = self
            .cqs
            .iter_mut()
            .filter_map(|q| {
                if let Some(wl) = q.sticky
                    && q.heap.remove(&Self::key(world, wl))
                {
                    return Some(wl);
                }
                q.heap.pop_first().map(|(_, _, wl, _)| wl)
            })
            .collect();
        for &wl in &heads {
            self.sub(Mark::Waiting(wl));
        }
        heads
    }

    /// A workload was admitted: it is no longer its queue's preemptor.
    pub(super) fn admitted(&mut self, world: &World, wl: usize) {
        let cq = world.workloads[wl].cq;
        if self.cqs[cq].sticky == Some(wl) {
            self.set_sticky(cq, None);
        }
    }

    /// Put back a head that was not admitted; returns whether it was parked.
    pub(super) fn requeue(&mut self, world: &World, wl: usize, why: Requeue) -> bool {
        let cq = world.workloads[wl].cq;
        if why == Requeue::PendingPreemption
            && world.cqs[cq].strategy == QueueingStrategy::BestEffortFIFO
        {
            self.set_sticky(cq, Some(wl));
        }
        let immediate = match world.cqs[cq].strategy {
            QueueingStrategy::StrictFIFO => true,
            QueueingStrategy::BestEffortFIFO => matches!(
                why,
                Requeue::FailedAfterNomination | Requeue::PendingPreemption
            ),
        };
        let q = &mut self.cqs[cq];
        if immediate {
            if q.heap.insert(Self::key(world, wl)) {
                self.add(Mark::Waiting(wl));
            }
            return false;
        }
        q.inadmissible.push(wl);
        self.add(Mark::Parked(wl));
        // Kueue's SchedulingEquivalenceHashing (on by default since 0.18): the workloads of
        // the same class that wait in the heap would fail the same way; park them too.
        if matches!(why, Requeue::NoFit | Requeue::NoCandidates) {
            let q = &mut self.cqs[cq];
            let class = world.workloads[wl].class;
            let new_class = !q.parked_classes.contains(&class);
            if new_class {
                q.parked_classes.push(class);
            }
            let same = |k: &Key| k.3 == class;
            // Most heads have no class-mate waiting; look before rebuilding the heap.
            let mut moved = Vec::new();
            if q.heap.0.iter().any(same) {
                q.heap.0.retain(|k| {
                    if same(k) {
                        moved.push(k.2);
                        return false;
                    }
                    true
                });
                q.inadmissible.extend_from_slice(&moved);
            }
            if new_class {
                self.add(Mark::Class(cq, class));
            }
            for wl in moved {
                self.sub(Mark::Waiting(wl));
                self.add(Mark::Parked(wl));
            }
        }
        true
    }

    /// Quota was released in `cq`: every parked workload of its Cohort tree (or of the queue
    /// alone, without a cohort) goes back to its heap.
    pub(super) fn retry_inadmissible(&mut self, world: &World, cq: usize) {
        let root = world.tree.cq_root[cq];
        for i in 0..world.cqs.len() {
            let related = i == cq || (root.is_some() && world.tree.cq_root[i] == root);
            if !related {
                continue;
            }
            let q = &mut self.cqs[i];
            // After every release the whole backlog comes back: one sort per queue. The
            // lists are drained, not dropped, to keep what they grew to.
            let mut gone = 0_u64;
            for class in q.parked_classes.drain(..) {
                gone = gone.wrapping_add(Mark::Class(i, class).hash());
            }
            if !q.inadmissible.is_empty() {
                for &wl in &q.inadmissible {
                    gone = gone.wrapping_add(Mark::Parked(wl).hash());
                    gone = gone.wrapping_sub(Mark::Waiting(wl).hash());
                }
                q.heap
                    .extend(q.inadmissible.drain(..).map(|wl| Self::key(world, wl)));
            }
            self.fingerprint = self.fingerprint.wrapping_sub(gone);
        }
    }

    /// A workload leaves its queue without being admitted: a fleet's copy, withdrawn on one
    /// worker when another admitted it (`simulate::fleet`).
    pub(super) fn remove(&mut self, world: &World, wl: usize) {
        let key = Self::key(world, wl);
        let cq = world.workloads[wl].cq;
        let q = &mut self.cqs[cq];
        let waited = q.heap.remove(&key);
        let before = q.inadmissible.len();
        q.inadmissible.retain(|&w| w != wl);
        let unparked = before - q.inadmissible.len();
        if waited {
            self.sub(Mark::Waiting(wl));
        }
        for _ in 0..unparked {
            self.sub(Mark::Parked(wl));
        }
        if self.cqs[cq].sticky == Some(wl) {
            self.set_sticky(cq, None);
        }
    }

    /// Whether a workload is waiting in some queue.
    pub(super) fn is_pending(&self, world: &World, wl: usize) -> bool {
        let q = &self.cqs[world.workloads[wl].cq];
        q.inadmissible.contains(&wl) || q.heap.contains(&Self::key(world, wl))
    }
}
