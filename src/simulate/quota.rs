//! Quota and usage of ClusterQueues and their cohorts: what is available now, what could ever
//! be, and who is borrowing. This is Kueue v0.19.2's resource-node model
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/scheduler/resource_node.go`,
//! `clusterqueue_snapshot.go`, `cohort_snapshot.go`) for one level of cohort: a ClusterQueue
//! keeps `nominal − lendingLimit` for itself (nothing without a lending limit) and stores the
//! rest in its cohort; the cohort's quota is what its queues store there, and its usage what
//! they use beyond what they keep. Amounts are nano-units (`Quantity::nanos`).

use super::world::{Fr, FrMap, QuotaSpec, World};

/// Usage of every ClusterQueue and cohort: the state a scheduling cycle snapshots. Dense
/// tables (one row per queue or cohort, one column per flavor/resource): a cycle copies them
/// and every fit check reads them, so they are plain arrays rather than maps.
#[derive(Clone, Debug)]
pub(super) struct Usage {
    /// Resources of the world: the column of (flavor, resource) is flavor × this + resource.
    width: usize,
    /// Columns per row.
    columns: usize,
    cq: Vec<i128>,
    cohort: Vec<i128>,
    /// Per cohort: the quota its queues store in it.
    cohort_quota: Vec<i128>,
}

impl Usage {
    pub(super) fn new(world: &World) -> Self {
        let width = world.resources.len();
        let flavors = world
            .cqs
            .iter()
            .flat_map(|c| c.quotas.keys().map(|fr| fr.flavor + 1))
            .max()
            .unwrap_or(0)
            .max(world.flavors.len());
        let columns = flavors * width;
        let mut cohort_quota = vec![0; world.cohorts.len() * columns];
        for cq in &world.cqs {
            if let Some(c) = cq.cohort {
                for (fr, q) in &cq.quotas {
                    let local = local_quota(q.nominal, q.lending_limit);
                    cohort_quota[c * columns + fr.flavor * width + fr.resource] +=
                        q.nominal - local;
                }
            }
        }
        Self {
            width,
            columns,
            cq: vec![0; world.cqs.len() * columns],
            cohort: vec![0; world.cohorts.len() * columns],
            cohort_quota,
        }
    }

    fn at(&self, row: usize, fr: Fr) -> usize {
        row * self.columns + fr.flavor * self.width + fr.resource
    }

    pub(super) fn of(&self, cq: usize, fr: Fr) -> i128 {
        self.cq[self.at(cq, fr)]
    }

    fn cohort_usage(&self, c: usize, fr: Fr) -> i128 {
        self.cohort[self.at(c, fr)]
    }

    fn cohort_quota(&self, c: usize, fr: Fr) -> i128 {
        self.cohort_quota[self.at(c, fr)]
    }

    /// What the queue keeps of `fr` and has not used.
    fn local_available(&self, w: &World, cq: usize, fr: Fr) -> i128 {
        let q = w.cqs[cq].quota(fr);
        (local_quota(q.nominal, q.lending_limit) - self.of(cq, fr)).max(0)
    }

    /// What the queue can use of `fr` now, borrowing included (`Available`).
    pub(super) fn available(&self, w: &World, cq: usize, fr: Fr) -> i128 {
        self.available_with(w, cq, fr, &w.cqs[cq].quota(fr), self.of(cq, fr))
    }

    /// `available`, given the queue's quota and usage of `fr` (for callers that need them too).
    pub(super) fn available_with(
        &self,
        w: &World,
        cq: usize,
        fr: Fr,
        q: &QuotaSpec,
        used: i128,
    ) -> i128 {
        let Some(c) = w.cqs[cq].cohort else {
            return (q.nominal - used).max(0);
        };
        let local = local_quota(q.nominal, q.lending_limit);
        let mut parent = self.cohort_quota(c, fr) - self.cohort_usage(c, fr);
        if let Some(limit) = q.borrowing_limit {
            let stored = q.nominal - local;
            let used_in_parent = (used - local).max(0);
            parent = parent.min(stored - used_in_parent + limit);
        }
        // `local_available`, with the quota already at hand.
        ((local - used).max(0) + parent).max(0)
    }

    /// The most the queue could ever use of `fr` (`PotentialAvailable`).
    pub(super) fn potential(&self, w: &World, cq: usize, fr: Fr) -> i128 {
        let spec = &w.cqs[cq];
        let q = spec.quota(fr);
        let Some(c) = spec.cohort else {
            return q.nominal;
        };
        let mut most = local_quota(q.nominal, q.lending_limit) + self.cohort_quota(c, fr);
        if let Some(limit) = q.borrowing_limit {
            most = most.min(q.nominal + limit);
        }
        most
    }

    /// Whether using `val` more of `fr` takes the queue over its nominal quota.
    pub(super) fn borrowing_with(&self, w: &World, cq: usize, fr: Fr, val: i128) -> bool {
        w.cqs[cq].quota(fr).nominal < self.of(cq, fr) + val
    }

    /// Whether the queue uses more than its nominal quota of any of `frs`.
    pub(super) fn over_nominal(&self, w: &World, cq: usize, frs: &[Fr]) -> bool {
        frs.iter().any(|&fr| self.borrowing_with(w, cq, fr, 0))
    }

    /// Kueue's `FindHeightOfLowestSubtreeThatFits` for one level of cohort: the borrowing
    /// level (0 within nominal or without a cohort, 1 from the cohort) and whether the request
    /// fits a subtree smaller than the whole cohort (then reclaiming may help).
    pub(super) fn borrow_level(&self, w: &World, cq: usize, fr: Fr, val: i128) -> (u32, bool) {
        let has_cohort = w.cqs[cq].cohort.is_some();
        if !self.borrowing_with(w, cq, fr, val) || !has_cohort {
            return (0, has_cohort);
        }
        (1, false)
    }

    /// Whether `requests` fit within the queue's nominal quota on top of its usage
    /// (`QuantitiesFitInQuota` of a ClusterQueue): the preemptor then reclaims with a
    /// "hierarchical advantage", whatever the priorities.
    pub(super) fn fits_in_nominal(&self, w: &World, cq: usize, requests: &FrMap<i128>) -> bool {
        requests
            .iter()
            .all(|(&fr, &v)| w.cqs[cq].quota(fr).nominal >= self.of(cq, fr) + v)
    }

    pub(super) fn add(&mut self, w: &World, cq: usize, fr: Fr, val: i128) {
        let local_available = self.local_available(w, cq, fr);
        let i = self.at(cq, fr);
        self.cq[i] += val;
        if let Some(c) = w.cqs[cq].cohort
            && val > local_available
        {
            let i = self.at(c, fr);
            self.cohort[i] += val - local_available;
        }
    }

    pub(super) fn remove(&mut self, w: &World, cq: usize, fr: Fr, val: i128) {
        let q = w.cqs[cq].quota(fr);
        let stored_in_parent = self.of(cq, fr) - local_quota(q.nominal, q.lending_limit);
        let i = self.at(cq, fr);
        self.cq[i] -= val;
        if let Some(c) = w.cqs[cq].cohort
            && stored_in_parent > 0
        {
            let i = self.at(c, fr);
            self.cohort[i] -= val.min(stored_in_parent);
        }
    }

    pub(super) fn add_all(&mut self, w: &World, cq: usize, usage: &FrMap<i128>) {
        for (&fr, &v) in usage {
            self.add(w, cq, fr, v);
        }
    }

    pub(super) fn remove_all(&mut self, w: &World, cq: usize, usage: &FrMap<i128>) {
        for (&fr, &v) in usage {
            self.remove(w, cq, fr, v);
        }
    }
}

/// What a queue keeps for itself: `nominal − lendingLimit`, nothing without a lending limit.
fn local_quota(nominal: i128, lending_limit: Option<i128>) -> i128 {
    lending_limit.map_or(0, |l| (nominal - l).max(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{
        FungibilityPolicy, QueueingStrategy, ReclaimWithinCohort, WithinClusterQueue,
    };
    use crate::simulate::world::{CqSpec, Group, QuotaSpec};
    use std::collections::HashMap;

    const GPU: Fr = Fr {
        flavor: 0,
        resource: 0,
    };

    fn world(quotas: &[(i128, Option<i128>, Option<i128>)]) -> World {
        let cqs = quotas
            .iter()
            .enumerate()
            .map(|(i, &(nominal, borrowing_limit, lending_limit))| CqSpec {
                name: format!("cq-{i}"),
                cohort: Some(0),
                strategy: QueueingStrategy::BestEffortFIFO,
                within_cq: WithinClusterQueue::Never,
                reclaim: ReclaimWithinCohort::Never,
                borrow_within_cohort: None,
                when_can_borrow: FungibilityPolicy::MayStopSearch,
                when_can_preempt: FungibilityPolicy::TryNextFlavor,
                preference: None,
                groups: vec![Group {
                    resources: vec![0],
                    flavors: vec![0],
                }],
                group_of: HashMap::from([(0, 0)]),
                quotas: std::iter::once((
                    GPU,
                    QuotaSpec {
                        nominal,
                        borrowing_limit,
                        lending_limit,
                    },
                ))
                .collect(),
                table: crate::simulate::world::QuotaTable::default(),
                capacity: crate::simulate::world::CqCapacity::default(),
            })
            .collect();
        let mut world = World {
            flavors: Vec::new(),
            resources: vec!["gpu".into()],
            cqs,
            cohorts: vec!["c".into()],
            workloads: Vec::new(),
        };
        world.index();
        world
    }

    #[test]
    fn borrowing_limit_caps_what_the_cohort_gives() {
        let w = world(&[(4, Some(2), None), (4, None, None)]);
        let mut u = Usage::new(&w);
        assert_eq!(u.available(&w, 0, GPU), 6);
        assert_eq!(u.potential(&w, 0, GPU), 6);
        assert_eq!(u.available(&w, 1, GPU), 8);
        u.add(&w, 1, GPU, 3);
        assert_eq!(u.available(&w, 0, GPU), 5, "queue 1 used 3 of the 8");
        assert!(!u.borrowing_with(&w, 0, GPU, 4));
        assert!(u.borrowing_with(&w, 0, GPU, 5));
        u.remove(&w, 1, GPU, 3);
        assert_eq!(u.available(&w, 0, GPU), 6);
    }

    #[test]
    fn lending_limit_keeps_the_rest_for_the_queue() {
        // Queue 1 lends at most 1 of its 4: queue 0 can reach 4 + 1.
        let w = world(&[(4, None, None), (4, None, Some(1))]);
        let mut u = Usage::new(&w);
        assert_eq!(u.potential(&w, 0, GPU), 5);
        u.add(&w, 0, GPU, 5);
        assert_eq!(u.available(&w, 0, GPU), 0);
        assert_eq!(
            u.available(&w, 1, GPU),
            3,
            "what queue 1 keeps is still its own"
        );
    }
}
