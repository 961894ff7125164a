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
use std::collections::{BTreeSet, HashMap, VecDeque};

/// A workload's place in queue order (higher priority, then older, then the workload's
/// index, its name's order) among all the world's workloads: one word to compare and move,
/// where the tuple it stands for is four (`Queues::new`).
type Key = u32;

/// Workloads of one equivalence class of a queue in order, first at the front, with the sums
/// of their fingerprint marks as waiting and as parked (`Queues::fingerprint`), so that a
/// whole list changes sets with two additions. A sorted double-ended list rather than a tree:
/// heads leave from the front and are put back there, new workloads mostly join at the back.
#[derive(Clone, Debug, Default)]
struct Ordered {
    keys: VecDeque<Key>,
    waiting_marks: u64,
    parked_marks: u64,
}

impl Ordered {
    fn first(&self) -> Option<&Key> {
        self.keys.front()
    }

    fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn count(&mut self, key: Key, add: bool) {
        let (w, p) = (Mark::Waiting(key).hash(), Mark::Parked(key).hash());
        if add {
            self.waiting_marks = self.waiting_marks.wrapping_add(w);
            self.parked_marks = self.parked_marks.wrapping_add(p);
        } else {
            self.waiting_marks = self.waiting_marks.wrapping_sub(w);
            self.parked_marks = self.parked_marks.wrapping_sub(p);
        }
    }

    /// Returns whether the key was new.
    fn insert(&mut self, key: Key) -> bool {
        let at = self.keys.partition_point(|k| *k < key);
        let new = self.keys.get(at) != Some(&key);
        if new {
            self.count(key, true);
            self.keys.insert(at, key);
        }
        new
    }

    fn remove(&mut self, key: Key) -> bool {
        match self.keys.binary_search(&key) {
            Ok(at) => {
                self.count(key, false);
                self.keys.remove(at).is_some()
            }
            Err(_) => false,
        }
    }

    fn contains(&self, key: Key) -> bool {
        self.keys.binary_search(&key).is_ok()
    }

    fn pop_first(&mut self) -> Option<Key> {
        let key = self.keys.pop_front()?;
        self.count(key, false);
        Some(key)
    }

    /// Move every key of `from` here (a workload waits in one place at a time, so the two
    /// hold different keys). Into an empty list that is a swap: a class's backlog changes
    /// sets in one step however long it is.
    fn take_all(&mut self, from: &mut Ordered) {
        if self.keys.is_empty() {
            std::mem::swap(self, from);
            return;
        }
        self.waiting_marks = self.waiting_marks.wrapping_add(from.waiting_marks);
        self.parked_marks = self.parked_marks.wrapping_add(from.parked_marks);
        self.keys.extend(from.keys.drain(..));
        self.keys.make_contiguous().sort_unstable();
        from.waiting_marks = 0;
        from.parked_marks = 0;
    }
}

/// The workloads of one equivalence class in one queue. Parking (Kueue's
/// `SchedulingEquivalenceHashing`) and the requeue after a release move a class's workloads
/// together, so each class keeps its waiting and its parked workloads in lists of their own:
/// a move is a swap of lists, not a walk over the backlog, which grows with the scenario and
/// comes back after every release.
#[derive(Clone, Debug, Default)]
struct ClassQueue {
    /// The class (`WorkloadSpec::class`).
    class: usize,
    waiting: Ordered,
    parked: Ordered,
    /// Parked as a whole (`hashToBulkMoveReason`), until quota is released in the cohort.
    bulk_parked: bool,
}

#[derive(Clone, Debug, Default)]
struct CqQueue {
    /// The classes of the queue's workloads, each at its slot (`Queues::slot`).
    classes: Vec<ClassQueue>,
    /// The first waiting key of each class that has one: the first of the set is the
    /// queue's first waiting workload.
    firsts: BTreeSet<Key>,
    /// The slots that may have parked workloads or be parked as a whole: what a requeue of
    /// the parked workloads visits.
    touched: Vec<usize>,
    /// The workload whose preemptions are under way (Kueue's `preemptorWorkload`). In a
    /// `BestEffortFIFO` queue it stays the head until it is admitted, so that the workloads
    /// skipped while it waited do not take the quota its victims free (Kueue#6929, #7101).
    sticky: Option<usize>,
}

impl CqQueue {
    /// Run `f` on the waiting list of `slot`, keeping `firsts` on its first key.
    fn with_waiting<R>(&mut self, slot: usize, f: impl FnOnce(&mut ClassQueue) -> R) -> R {
        let c = &mut self.classes[slot];
        let before = c.waiting.first().copied();
        let out = f(c);
        let after = c.waiting.first().copied();
        if before != after {
            if let Some(k) = before {
                self.firsts.remove(&k);
            }
            if let Some(k) = after {
                self.firsts.insert(k);
            }
        }
        out
    }

    /// Note that `slot` may now hold parked workloads or be parked as a whole.
    fn touch(&mut self, slot: usize) {
        let c = &self.classes[slot];
        if !c.bulk_parked && c.parked.is_empty() {
            self.touched.push(slot);
        }
    }
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
    /// Per workload, the slot of its class in its queue's `classes`.
    slot: Vec<usize>,
    /// Per workload, its key; and per key, its workload.
    key: Vec<Key>,
    workload: Vec<usize>,
    /// See `fingerprint`.
    fingerprint: u64,
}

/// A member of one of a queue's sets, as `Queues::fingerprint` counts it.
#[derive(Clone, Copy)]
enum Mark {
    /// A waiting workload, by its key (`Queues::key`).
    Waiting(Key),
    /// A parked workload, by its key.
    Parked(Key),
    Sticky(usize),
    /// A parked class of a queue.
    Class(usize, usize),
}

impl Mark {
    /// The member's hash: the set and the member in one word, mixed (SplitMix64's
    /// finalizer; asked every time a queue changes, so a few instructions).
    fn hash(self) -> u64 {
        let (set, a, b) = match self {
            Mark::Waiting(k) => (1, k as usize, 0),
            Mark::Parked(k) => (2, k as usize, 0),
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
        let mut cqs = vec![CqQueue::default(); world.cqs.len()];
        let mut slots: HashMap<(usize, usize), usize> = HashMap::new();
        let slot = world
            .workloads
            .iter()
            .map(|w| {
                *slots.entry((w.cq, w.class)).or_insert_with(|| {
                    let classes = &mut cqs[w.cq].classes;
                    classes.push(ClassQueue {
                        class: w.class,
                        ..ClassQueue::default()
                    });
                    classes.len() - 1
                })
            })
            .collect();
        let mut workload: Vec<usize> = (0..world.workloads.len()).collect();
        workload.sort_by_key(|&wl| {
            let w = &world.workloads[wl];
            (Reverse(w.priority), w.submit_at, wl)
        });
        let mut key = vec![0; workload.len()];
        for (k, &wl) in workload.iter().enumerate() {
            key[wl] = Key::try_from(k).expect("fewer than 2^32 workloads");
        }
        Self {
            cqs,
            slot,
            key,
            workload,
            fingerprint: 0,
        }
    }

    /// Everything a cycle reads of the queues, for `Sim::settle`'s loop detection: kept as
    /// workloads come and go rather than hashed from every waiting workload each cycle (that
    /// was a twelfth of a fair-sharing run). What a cycle can observe of a queue is four sets:
    /// the waiting workloads (their order follows from their keys, and a key from the
    /// workload), the parked ones and the parked classes (sets whose order nothing reads),
    /// and the sticky preemptor; so a sum over their members, each hashed with its set.
    pub(super) fn fingerprint(&self) -> u64 {
        debug_assert_eq!(
            self.fingerprint,
            self.cqs
                .iter()
                .enumerate()
                .flat_map(|(cq, q)| {
                    let sticky = q.sticky.map(Mark::Sticky);
                    q.classes
                        .iter()
                        .flat_map(move |c| {
                            let waiting = c.waiting.keys.iter().map(|&k| Mark::Waiting(k));
                            let parked = c.parked.keys.iter().map(|&k| Mark::Parked(k));
                            let class = c.bulk_parked.then_some(Mark::Class(cq, c.class));
                            waiting.chain(parked).chain(class)
                        })
                        .chain(sticky)
                })
                .map(Mark::hash)
                .fold(0, u64::wrapping_add),
            "the kept fingerprint follows every change to the queues"
        );
        debug_assert!(self.cqs.iter().all(|q| {
            q.firsts.iter().copied().eq(q
                .classes
                .iter()
                .filter_map(|c| c.waiting.first().copied())
                .collect::<BTreeSet<Key>>())
        }));
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

    /// Add `wl` to the waiting workloads of its queue; returns whether it was not waiting.
    fn wait(&mut self, world: &World, wl: usize) -> bool {
        let (cq, slot) = (world.workloads[wl].cq, self.slot[wl]);
        let key = self.key[wl];
        let new = self.cqs[cq].with_waiting(slot, |c| c.waiting.insert(key));
        if new {
            self.add(Mark::Waiting(key));
        }
        new
    }

    /// Add `wl` to the parked workloads of its queue; returns whether it was not parked.
    fn park(&mut self, world: &World, wl: usize) -> bool {
        let (cq, slot) = (world.workloads[wl].cq, self.slot[wl]);
        let q = &mut self.cqs[cq];
        q.touch(slot);
        let key = self.key[wl];
        let new = q.classes[slot].parked.insert(key);
        if new {
            self.add(Mark::Parked(key));
        }
        new
    }

    /// Take `wl` out of the parked workloads of its queue; returns whether it was parked.
    fn unpark(&mut self, world: &World, wl: usize) -> bool {
        let (cq, slot) = (world.workloads[wl].cq, self.slot[wl]);
        let gone = self.cqs[cq].classes[slot].parked.remove(self.key[wl]);
        if gone {
            self.sub(Mark::Parked(self.key[wl]));
        }
        gone
    }

    /// A new or evicted workload enters its queue's heap, or is parked at once when its
    /// equivalence class was parked (`BestEffortFIFO` only; `PushOrUpdate`).
    pub(super) fn push(&mut self, world: &World, wl: usize) {
        let cq = world.workloads[wl].cq;
        if world.cqs[cq].strategy == QueueingStrategy::BestEffortFIFO
            && self.cqs[cq].classes[self.slot[wl]].bulk_parked
        {
            self.park(world, wl);
            return;
        }
        self.unpark(world, wl);
        self.wait(world, wl);
    }

    /// The head of every ClusterQueue with one, in ClusterQueue order (`Heads`): the sticky
    /// preemptor when it is waiting in the heap, else the first in order.
    pub(super) fn pop_heads(&mut self) -> Vec<usize> {
        let (slots, keys, workload) = (&self.slot, &self.key, &self.workload);
        let heads: Vec<usize> = self
            .cqs
            .iter_mut()
            .filter_map(|q| {
                if let Some(wl) = q.sticky
                    && q.with_waiting(slots[wl], |c| c.waiting.remove(keys[wl]))
                {
                    return Some(wl);
                }
                let first = q.firsts.first().copied()?;
                let wl = workload[first as usize];
                q.with_waiting(slots[wl], |c| c.waiting.pop_first());
                Some(wl)
            })
            .collect();
        for &wl in &heads {
            self.sub(Mark::Waiting(self.key[wl]));
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
        if immediate {
            self.wait(world, wl);
            return false;
        }
        // Kueue's SchedulingEquivalenceHashing (on by default since 0.18): the workloads of
        // the same class that wait in the heap would fail the same way; park them too. They
        // go first, so that a class parked with none of it parked yet is a swap of lists.
        if matches!(why, Requeue::NoFit | Requeue::NoCandidates) {
            let slot = self.slot[wl];
            let q = &mut self.cqs[cq];
            q.touch(slot);
            let c = &mut q.classes[slot];
            let new_class = !std::mem::replace(&mut c.bulk_parked, true);
            let moved = c.waiting.parked_marks.wrapping_sub(c.waiting.waiting_marks);
            q.with_waiting(slot, |c| c.parked.take_all(&mut c.waiting));
            self.fingerprint = self.fingerprint.wrapping_add(moved);
            if new_class {
                self.add(Mark::Class(cq, world.workloads[wl].class));
            }
        }
        self.park(world, wl);
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
            // A class's parked workloads come back as one list. The list of touched slots is
            // drained, not dropped, to keep what it grew to.
            let mut delta = 0_u64;
            let mut touched = std::mem::take(&mut q.touched);
            for slot in touched.drain(..) {
                let c = &mut q.classes[slot];
                if std::mem::replace(&mut c.bulk_parked, false) {
                    delta = delta.wrapping_sub(Mark::Class(i, c.class).hash());
                }
                if !c.parked.is_empty() {
                    delta = delta
                        .wrapping_add(c.parked.waiting_marks)
                        .wrapping_sub(c.parked.parked_marks);
                    q.with_waiting(slot, |c| c.waiting.take_all(&mut c.parked));
                }
            }
            q.touched = touched;
            self.fingerprint = self.fingerprint.wrapping_add(delta);
        }
    }

    /// A workload leaves its queue without being admitted: a fleet's copy, withdrawn on one
    /// worker when another admitted it (`simulate::fleet`).
    pub(super) fn remove(&mut self, world: &World, wl: usize) {
        let (cq, slot) = (world.workloads[wl].cq, self.slot[wl]);
        let key = self.key[wl];
        if self.cqs[cq].with_waiting(slot, |c| c.waiting.remove(key)) {
            self.sub(Mark::Waiting(key));
        }
        self.unpark(world, wl);
        if self.cqs[cq].sticky == Some(wl) {
            self.set_sticky(cq, None);
        }
    }

    /// Whether a workload is waiting in some queue.
    pub(super) fn is_pending(&self, world: &World, wl: usize) -> bool {
        let c = &self.cqs[world.workloads[wl].cq].classes[self.slot[wl]];
        let key = self.key[wl];
        c.parked.contains(key) || c.waiting.contains(key)
    }
}
