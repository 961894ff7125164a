//! Quota and usage of ClusterQueues and the Cohorts above them: what is available now, what
//! could ever be, and who is borrowing. This is Kueue v0.19.2's resource-node model
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/scheduler/resource_node.go`,
//! `clusterqueue_snapshot.go`, `cohort_snapshot.go`) through a tree of Cohorts: a node keeps
//! its `localQuota` (subtree quota − lendingLimit; nothing without a lending limit) for
//! itself and stores the rest in its parent; a Cohort's usage is what its children use beyond
//! what they keep; what a node can use now is what it keeps and has not used plus what its
//! parent can give it, capped by its borrowing limit, up to the root. Amounts are nano-units
//! (`Quantity::nanos`); the static side (subtree and local quotas) is `tree::Tables`.

use super::tree::local_quota;
use super::world::{Fr, FrMap, QuotaSpec, World};

/// A node of the tree: a ClusterQueue or a Cohort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Node {
    Cq(usize),
    Cohort(usize),
}

/// Usage of every ClusterQueue and Cohort: the state a scheduling cycle snapshots. Dense
/// tables (one row per queue or Cohort, one column per flavor/resource): a cycle copies them
/// and every fit check reads them, so they are plain arrays rather than maps.
#[derive(Clone, Debug)]
pub(super) struct Usage {
    /// Resources of the world: the column of (flavor, resource) is flavor × this + resource.
    width: usize,
    /// Columns per row.
    columns: usize,
    cq: Vec<i128>,
    cohort: Vec<i128>,
}

impl Usage {
    pub(super) fn new(world: &World) -> Self {
        let (width, columns) = (world.tree.width, world.tree.columns);
        Self {
            width,
            columns,
            cq: vec![0; world.cqs.len() * columns],
            cohort: vec![0; world.cohorts.len() * columns],
        }
    }

    fn at(&self, row: usize, fr: Fr) -> usize {
        row * self.columns + fr.flavor * self.width + fr.resource
    }

    pub(super) fn of(&self, cq: usize, fr: Fr) -> i128 {
        self.cq[self.at(cq, fr)]
    }

    /// The usage of a node (for a Cohort: what its children use beyond what they keep).
    pub(super) fn node(&self, n: Node, fr: Fr) -> i128 {
        match n {
            Node::Cq(c) => self.cq[self.at(c, fr)],
            Node::Cohort(k) => self.cohort[self.at(k, fr)],
        }
    }

    /// What the node keeps of `fr` and has not used (`LocalAvailable`).
    pub(super) fn local_available(&self, w: &World, n: Node, fr: Fr) -> i128 {
        (local(w, n, fr) - self.node(n, fr)).max(0)
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
        let mut parent = self.available_node(w, Node::Cohort(c), fr);
        if let Some(limit) = q.borrowing_limit {
            let stored = q.nominal - local;
            let used_in_parent = (used - local).max(0);
            parent = parent.min(stored - used_in_parent + limit);
        }
        // `local_available`, with the quota already at hand.
        ((local - used).max(0) + parent).max(0)
    }

    /// Kueue's `available` of a node (may be negative after over-admission).
    fn available_node(&self, w: &World, n: Node, fr: Fr) -> i128 {
        let used = self.node(n, fr);
        let Some(p) = parent(w, n) else {
            return subtree(w, n, fr) - used;
        };
        let mut pa = self.available_node(w, Node::Cohort(p), fr);
        if let Some(bl) = own_quota(w, n, fr).borrowing_limit {
            let lq = local(w, n, fr);
            let stored = subtree(w, n, fr) - lq;
            let used_in_parent = (used - lq).max(0);
            pa = pa.min(stored - used_in_parent + bl);
        }
        self.local_available(w, n, fr) + pa
    }

    /// Whether using `val` more of `fr` takes the queue over its nominal quota.
    pub(super) fn borrowing_with(&self, w: &World, cq: usize, fr: Fr, val: i128) -> bool {
        w.cqs[cq].quota(fr).nominal < self.of(cq, fr) + val
    }

    /// Whether using `val` more of `fr` takes the node over its subtree quota.
    pub(super) fn node_borrowing_with(&self, w: &World, n: Node, fr: Fr, val: i128) -> bool {
        subtree(w, n, fr) < self.node(n, fr) + val
    }

    /// Whether the queue uses more than its nominal quota of any of `frs`.
    pub(super) fn over_nominal(&self, w: &World, cq: usize, frs: &[Fr]) -> bool {
        frs.iter().any(|&fr| self.borrowing_with(w, cq, fr, 0))
    }

    /// Kueue's `IsWithinNominalInResources` of a node.
    pub(super) fn within_nominal(&self, w: &World, n: Node, frs: &[Fr]) -> bool {
        frs.iter().all(|&fr| !self.node_borrowing_with(w, n, fr, 0))
    }

    /// Kueue's `FindHeightOfLowestSubtreeThatFits`: the borrowing level (0 within nominal or
    /// without a cohort, else the height of the smallest subtree whose quota holds the
    /// request) and whether that subtree is smaller than the whole tree (then reclaiming in it
    /// may help).
    pub(super) fn borrow_level(&self, w: &World, cq: usize, fr: Fr, val: i128) -> (u32, bool) {
        let Some(first) = w.cqs[cq].cohort else {
            return (0, false);
        };
        if !self.borrowing_with(w, cq, fr, val) {
            return (0, true);
        }
        let mut remaining = val - self.local_available(w, Node::Cq(cq), fr);
        let mut at = Some(first);
        let mut root = first;
        while let Some(k) = at {
            let n = Node::Cohort(k);
            if !self.node_borrowing_with(w, n, fr, remaining) {
                return (w.cohorts[k].height, w.cohorts[k].parent.is_some());
            }
            remaining -= self.local_available(w, n, fr);
            root = k;
            at = w.cohorts[k].parent;
        }
        (w.cohorts[root].height, false)
    }

    /// Kueue's `QuantitiesFitInQuota`: whether `requests` fit the node's quota on top of its
    /// usage, and what is left of them beyond what the node keeps for itself.
    pub(super) fn fit_in_quota(
        &self,
        w: &World,
        n: Node,
        requests: &FrMap<i128>,
    ) -> (bool, FrMap<i128>) {
        let mut fits = true;
        let mut remaining = FrMap::default();
        for (&fr, &v) in requests {
            if subtree(w, n, fr) < self.node(n, fr) + v {
                fits = false;
            }
            remaining.insert(fr, (v - self.local_available(w, n, fr)).max(0));
        }
        (fits, remaining)
    }

    /// Kueue's `addUsage`: the node's usage grows, and what it cannot keep for itself goes up
    /// to its parent.
    pub(super) fn add(&mut self, w: &World, cq: usize, fr: Fr, val: i128) {
        let mut n = Node::Cq(cq);
        let mut val = val;
        loop {
            let local_available = self.local_available(w, n, fr);
            let i = self.slot(n, fr);
            self.cq_or_cohort(n)[i] += val;
            match parent(w, n) {
                Some(p) if val > local_available => {
                    val -= local_available;
                    n = Node::Cohort(p);
                }
                _ => return,
            }
        }
    }

    /// Kueue's `removeUsage`: the node's usage falls, and so does what it stored in its parent.
    pub(super) fn remove(&mut self, w: &World, cq: usize, fr: Fr, val: i128) {
        let mut n = Node::Cq(cq);
        let mut val = val;
        loop {
            let stored_in_parent = self.node(n, fr) - local(w, n, fr);
            let i = self.slot(n, fr);
            self.cq_or_cohort(n)[i] -= val;
            match parent(w, n) {
                Some(p) if stored_in_parent > 0 => {
                    val = val.min(stored_in_parent);
                    n = Node::Cohort(p);
                }
                _ => return,
            }
        }
    }

    fn slot(&self, n: Node, fr: Fr) -> usize {
        match n {
            Node::Cq(c) => self.at(c, fr),
            Node::Cohort(k) => self.at(k, fr),
        }
    }

    fn cq_or_cohort(&mut self, n: Node) -> &mut Vec<i128> {
        match n {
            Node::Cq(_) => &mut self.cq,
            Node::Cohort(_) => &mut self.cohort,
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

/// The parent Cohort of a node.
pub(super) fn parent(w: &World, n: Node) -> Option<usize> {
    match n {
        Node::Cq(c) => w.cqs[c].cohort,
        Node::Cohort(k) => w.cohorts[k].parent,
    }
}

/// A node's `SubtreeQuota` (a ClusterQueue's is its nominal quota).
pub(super) fn subtree(w: &World, n: Node, fr: Fr) -> i128 {
    match n {
        Node::Cq(c) => w.cqs[c].quota(fr).nominal,
        Node::Cohort(k) => w.tree.st(k, fr),
    }
}

/// A node's `localQuota`.
fn local(w: &World, n: Node, fr: Fr) -> i128 {
    match n {
        Node::Cq(c) => {
            let q = w.cqs[c].quota(fr);
            local_quota(q.nominal, q.lending_limit)
        }
        Node::Cohort(k) => w.tree.local(k, fr),
    }
}

/// The quota a node declares itself (a ClusterQueue's, or a Cohort object's own).
fn own_quota(w: &World, n: Node, fr: Fr) -> QuotaSpec {
    match n {
        Node::Cq(c) => w.cqs[c].quota(fr),
        Node::Cohort(k) => w.tree.quota(k, fr),
    }
}

/// `PotentialAvailable` of a ClusterQueue: what it could ever use of `fr`, on an empty
/// cluster.
pub(super) fn potential(w: &World, cq: usize, fr: Fr) -> i128 {
    let q = w.cqs[cq].quota(fr);
    let Some(c) = w.cqs[cq].cohort else {
        return q.nominal;
    };
    let mut most = local_quota(q.nominal, q.lending_limit) + w.tree.potential_cohort(c, fr);
    if let Some(limit) = q.borrowing_limit {
        most = most.min(q.nominal + limit);
    }
    most
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
                weight: 1.0,
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
        let n = quotas.len();
        let mut world = World {
            flavors: Vec::new(),
            resources: vec!["gpu".into()],
            cqs,
            cohorts: vec![crate::simulate::world::CohortSpec {
                parent: None,
                quotas: crate::simulate::world::FrMap::default(),
                weight: 0.0,
                child_cohorts: Vec::new(),
                child_cqs: (0..n).collect(),
                height: 1,
            }],
            workloads: Vec::new(),
            fair_sharing: None,
            tree: crate::simulate::tree::Tables::default(),
        };
        world.index();
        world
    }

    #[test]
    fn borrowing_limit_caps_what_the_cohort_gives() {
        let w = world(&[(4, Some(2), None), (4, None, None)]);
        let mut u = Usage::new(&w);
        assert_eq!(u.available(&w, 0, GPU), 6);
        assert_eq!(potential(&w, 0, GPU), 6);
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
        assert_eq!(potential(&w, 0, GPU), 5);
        u.add(&w, 0, GPU, 5);
        assert_eq!(u.available(&w, 0, GPU), 0);
        assert_eq!(
            u.available(&w, 1, GPU),
            3,
            "what queue 1 keeps is still its own"
        );
    }
}
