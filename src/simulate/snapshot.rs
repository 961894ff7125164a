//! What a scheduling cycle sees: the usage of every queue and cohort and the admitted
//! workloads with what they hold. The scheduler takes a copy at the start of a cycle (Kueue's
//! cache snapshot); preemption simulates removals on it and puts them back.

use super::model::{Fr, World};
use super::quota::Usage;
use std::collections::{BTreeSet, HashMap};

/// An admitted workload: where it runs and what it holds.
#[derive(Clone, Debug)]
pub struct Running {
    pub admitted_at: u64,
    pub ends: u64,
    pub usage: HashMap<Fr, i128>,
}

#[derive(Clone, Debug)]
pub struct Snapshot<'w> {
    pub world: &'w World,
    pub usage: Usage,
    /// Indexed by workload.
    pub running: Vec<Option<Running>>,
    /// Admitted workloads per ClusterQueue.
    pub by_cq: Vec<BTreeSet<usize>>,
}

impl<'w> Snapshot<'w> {
    pub fn new(world: &'w World) -> Self {
        Self {
            world,
            usage: Usage::new(world),
            running: vec![None; world.workloads.len()],
            by_cq: vec![BTreeSet::new(); world.cqs.len()],
        }
    }

    pub fn admit(&mut self, wl: usize, running: Running) {
        let cq = self.world.workloads[wl].cq;
        self.usage.add_all(self.world, cq, &running.usage);
        self.by_cq[cq].insert(wl);
        self.running[wl] = Some(running);
    }

    /// Take an admitted workload out (eviction, end); returns what it held.
    pub fn release(&mut self, wl: usize) -> Option<Running> {
        let running = self.running[wl].take()?;
        let cq = self.world.workloads[wl].cq;
        self.usage.remove_all(self.world, cq, &running.usage);
        self.by_cq[cq].remove(&wl);
        Some(running)
    }

    /// Simulate the removal of an admitted workload (undone by `restore`).
    pub fn remove_usage(&mut self, wl: usize) {
        if let Some(r) = &self.running[wl] {
            let cq = self.world.workloads[wl].cq;
            self.usage.remove_all(self.world, cq, &r.usage);
            self.by_cq[cq].remove(&wl);
        }
    }

    pub fn restore(&mut self, wl: usize) {
        if let Some(r) = &self.running[wl] {
            let cq = self.world.workloads[wl].cq;
            self.usage.add_all(self.world, cq, &r.usage);
            self.by_cq[cq].insert(wl);
        }
    }

    /// Whether an admitted workload holds any of `frs` (Kueue's `WorkloadUsesResources`).
    pub fn uses_any(&self, wl: usize, frs: &[Fr]) -> bool {
        self.running[wl]
            .as_ref()
            .is_some_and(|r| frs.iter().any(|fr| r.usage.get(fr).is_some_and(|&v| v > 0)))
    }
}
