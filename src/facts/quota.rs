//! Per-flavor quotas of ClusterQueues and of the Cohort tree they hang in: what a queue can ever
//! get of a flavor and resource (its nominal quota plus what it may borrow up the tree), with
//! the words that explain it. A plain index over the profile, shared by the rules (messages)
//! and the simulator's standard scenarios (what a synthetic workload asks).
//!
//! The arithmetic is Kueue v0.19.2's resource nodes (kubernetes-sigs/kueue@v0.19.2
//! `pkg/cache/scheduler/resource_node.go`): a node keeps `localQuota` = its subtree quota minus
//! its `lendingLimit` (nothing without one) for itself; a Cohort's subtree quota is its own
//! nominal quota plus what each child stores in it (the child's subtree quota less its local
//! quota); what a ClusterQueue could ever use (`potentialAvailable`) is its local quota plus
//! what its parent could ever use, capped by its subtree quota plus its `borrowingLimit`, and
//! so on up to the root, whose subtree quota is the whole tree's. The simulator keeps the same
//! numbers in its own tables (`simulate::quota`); a test holds the two to each other.

use super::cohorts::CohortTree;
use crate::profile::{Quantity, Queues, ResourceQuota};
use std::collections::HashMap;
use std::fmt::Write as _;

/// What one ClusterQueue can ever use of one flavor and resource, and how that comes about.
pub(crate) struct Capacity {
    pub(crate) total: Quantity,
    pub(crate) explain: String,
}

type Key<'q> = (usize, &'q str, &'q str);

/// The quotas of all ClusterQueues and Cohorts, indexed once so that each lookup is cheap
/// whatever the size of the profile.
pub(crate) struct Quotas<'q> {
    pub(crate) tree: CohortTree<'q>,
    /// Per (ClusterQueue, flavor, resource): its quota.
    own: HashMap<Key<'q>, &'q ResourceQuota>,
    /// Per (Cohort, flavor, resource): the quota the Cohort object holds itself.
    cohort_own: HashMap<Key<'q>, &'q ResourceQuota>,
    /// Per (Cohort, flavor, resource): its subtree quota (`SubtreeQuota`), in nano-units.
    subtree: HashMap<Key<'q>, i128>,
}

/// What a node keeps from its parent: `subtree − lendingLimit`, nothing without a limit.
fn local(subtree: i128, lending_limit: Option<Quantity>) -> i128 {
    lending_limit.map_or(0, |l| (subtree - l.nanos()).max(0))
}

impl<'q> Quotas<'q> {
    pub(crate) fn new(queues: &'q Queues) -> Self {
        let tree = CohortTree::new(queues);
        let mut own = HashMap::new();
        for (c, cq) in queues.cluster_queues.iter().enumerate() {
            for f in cq.resource_groups.iter().flat_map(|g| &g.flavors) {
                for r in &f.resources {
                    // The first entry wins, as in a lookup by scan (duplicates are RK107/RK109).
                    own.entry((c, f.name.as_str(), r.name.as_str()))
                        .or_insert(r);
                }
            }
        }
        let mut cohort_own = HashMap::new();
        for (k, node) in tree.cohorts.iter().enumerate() {
            for f in node
                .spec
                .iter()
                .flat_map(|s| &s.resource_groups)
                .flat_map(|g| &g.flavors)
            {
                for r in &f.resources {
                    cohort_own
                        .entry((k, f.name.as_str(), r.name.as_str()))
                        .or_insert(r);
                }
            }
        }
        let mut q = Self {
            tree,
            own,
            cohort_own,
            subtree: HashMap::new(),
        };
        // Children before parents: a Cohort's subtree quota needs its children's.
        let mut order: Vec<usize> = (0..q.tree.cohorts.len()).collect();
        order.sort_by_key(|&k| q.tree.height(k));
        for k in order {
            let mut st: HashMap<(&'q str, &'q str), i128> = HashMap::new();
            for (&(n, f, r), rq) in &q.cohort_own {
                if n == k {
                    *st.entry((f, r)).or_insert(0) += rq.nominal_quota.nanos();
                }
            }
            for &c in &q.tree.cohorts[k].child_cqs {
                for (&(n, f, r), rq) in &q.own {
                    if n == c {
                        let nominal = rq.nominal_quota.nanos();
                        *st.entry((f, r)).or_insert(0) +=
                            nominal - local(nominal, rq.lending_limit);
                    }
                }
            }
            for &child in &q.tree.cohorts[k].child_cohorts {
                let stored: Vec<((&'q str, &'q str), i128)> = q
                    .subtree
                    .iter()
                    .filter(|((n, _, _), _)| *n == child)
                    .map(|(&(_, f, r), &v)| ((f, r), v - q.cohort_local(child, f, r)))
                    .collect();
                for (fr, v) in stored {
                    *st.entry(fr).or_insert(0) += v;
                }
            }
            for ((f, r), v) in st {
                q.subtree.insert((k, f, r), v);
            }
        }
        q
    }

    fn cohort_st(&self, k: usize, flavor: &str, resource: &str) -> i128 {
        self.subtree
            .get(&(k, flavor, resource))
            .copied()
            .unwrap_or(0)
    }

    fn cohort_local(&self, k: usize, flavor: &str, resource: &str) -> i128 {
        let ll = self
            .cohort_own
            .get(&(k, flavor, resource))
            .and_then(|r| r.lending_limit);
        local(self.cohort_st(k, flavor, resource), ll)
    }

    /// `potentialAvailable` of a Cohort: what its subtree could ever use of the pair.
    fn cohort_potential(&self, k: usize, flavor: &str, resource: &str) -> i128 {
        let st = self.cohort_st(k, flavor, resource);
        let Some(p) = self.tree.cohorts[k].parent else {
            return st;
        };
        let mut v =
            self.cohort_local(k, flavor, resource) + self.cohort_potential(p, flavor, resource);
        if let Some(bl) = self
            .cohort_own
            .get(&(k, flavor, resource))
            .and_then(|r| r.borrowing_limit)
        {
            v = v.min(st + bl.nanos());
        }
        v
    }

    /// What ClusterQueue `c` can ever use of (`flavor`, `resource`); see the module comment.
    pub(crate) fn total(&self, c: usize, flavor: &str, resource: &str) -> Quantity {
        self.capacity(c, flavor, resource).total
    }

    /// The Cohort `c` hangs in, if any.
    fn parent(&self, c: usize) -> Option<usize> {
        self.tree.cq_parent.get(c).copied().flatten()
    }

    /// A tree that is one Cohort without quota of its own, as every profile without
    /// `queues.cohorts` has: its words stay those of a flat cohort.
    fn flat(&self, k: usize) -> bool {
        let n = &self.tree.cohorts[k];
        n.parent.is_none() && !self.cohort_own.keys().any(|&(m, _, _)| m == k)
    }

    /// The total with the words that explain it, for messages.
    pub(crate) fn capacity(&self, c: usize, flavor: &str, resource: &str) -> Capacity {
        let own = self.own.get(&(c, flavor, resource)).copied();
        let nominal = own.map_or_else(Quantity::zero, |r| r.nominal_quota);
        let Some(k) = self.parent(c) else {
            return Capacity {
                total: nominal,
                explain: format!("nominalQuota {nominal}; no cohort to borrow from"),
            };
        };
        let n = nominal.nanos();
        let kept = local(n, own.and_then(|r| r.lending_limit));
        let mut most = kept + self.cohort_potential(k, flavor, resource);
        let limit = own.and_then(|r| r.borrowing_limit);
        if let Some(bl) = limit {
            most = most.min(n + bl.nanos());
        }
        let total = nominal.with_nanos(most.max(0));
        let borrow = nominal.with_nanos((most - n).max(0));
        let limit_text = limit.map_or_else(
            || "no borrowingLimit".to_string(),
            |b| format!("borrowingLimit {b}"),
        );
        let cohort = self.tree.cohorts[k].name;
        if self.flat(k) {
            // What the others lend: the cohort's quota less what this queue stores in it.
            let others =
                nominal.with_nanos((self.cohort_st(k, flavor, resource) - (n - kept)).max(0));
            return Capacity {
                total,
                explain: format!(
                    "nominalQuota {nominal} + borrowing {borrow}: {limit_text}, the other queues of cohort `{cohort}` lend at most {others}"
                ),
            };
        }
        let path: Vec<String> = self
            .tree
            .path_to_root(k)
            .map(|a| self.describe(a, flavor, resource, nominal))
            .collect();
        Capacity {
            total,
            explain: format!(
                "nominalQuota {nominal} + borrowing {borrow}: {limit_text}; up its Cohort tree, {}",
                path.join(", ")
            ),
        }
    }

    /// Cohort `k`'s quotas for the summary: per (flavor, resource) of its subtree, in name
    /// order, what it holds itself (when it does) and its subtree quota, written like the
    /// first quota of that pair in the profile.
    pub(crate) fn cohort_rows(
        &self,
        k: usize,
    ) -> Vec<(&'q str, &'q str, Option<Quantity>, Quantity)> {
        let mut rows: Vec<(&'q str, &'q str, Option<Quantity>, Quantity)> = self
            .subtree
            .iter()
            .filter(|((n, _, _), _)| *n == k)
            .map(|(&(_, f, r), &v)| {
                let own = self.cohort_own.get(&(k, f, r)).map(|q| q.nominal_quota);
                let like = own
                    .or_else(|| {
                        self.own
                            .iter()
                            .find(|((_, of, or), _)| *of == f && *or == r)
                            .map(|(_, q)| q.nominal_quota)
                    })
                    .unwrap_or_else(Quantity::zero);
                (f, r, own, like.with_nanos(v))
            })
            .collect();
        rows.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        rows
    }

    /// One Cohort on a path up the tree, for messages: what its subtree pools, its own quota,
    /// and its limits towards its parent.
    fn describe(&self, k: usize, flavor: &str, resource: &str, like: Quantity) -> String {
        let node = &self.tree.cohorts[k];
        let q = |n: i128| like.with_nanos(n);
        let mut s = format!(
            "`{}` pools {}",
            node.name,
            q(self.cohort_st(k, flavor, resource))
        );
        if let Some(r) = self.cohort_own.get(&(k, flavor, resource)) {
            let _ = write!(s, " (its own quota {})", r.nominal_quota);
            if let Some(bl) = r.borrowing_limit {
                let _ = write!(s, ", borrowingLimit {bl}");
            }
            if let Some(ll) = r.lending_limit {
                let _ = write!(s, ", lendingLimit {ll}");
            }
        }
        s
    }
}
