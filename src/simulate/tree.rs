//! What the Cohort tree's quotas come to, worked out once per world: each Cohort's subtree
//! quota and local quota, what each Cohort's children could ever borrow through it (the
//! denominator of the dominant resource share), and which flavor/resources count at each node.
//! Kueue v0.19.2 recomputes these when a ClusterQueue or Cohort changes
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/cache/scheduler/resource_node.go`
//! `updateCohortResourceNode`, `accumulateFromChild`; `fair_sharing.go` `calculateLendable`);
//! in a simulation the queues never change, so they are tables. `quota` reads them for
//! availability, `fair_sharing` for shares.

use super::keys::{Fr, FrMap, QuotaSpec};

const NO_QUOTA: QuotaSpec = QuotaSpec {
    nominal: 0,
    borrowing_limit: None,
    lending_limit: None,
};

/// Kueue's `localQuota`: what a node keeps from its parent, `subtree − lendingLimit`; nothing
/// without a lending limit.
pub(super) fn local_quota(subtree: i128, lending_limit: Option<i128>) -> i128 {
    lending_limit.map_or(0, |l| (subtree - l).max(0))
}

/// A ClusterQueue as the tables see it: its Cohort and its quotas.
pub(super) struct QueueNode<'a> {
    pub(super) parent: Option<usize>,
    pub(super) quotas: &'a FrMap<QuotaSpec>,
}

/// A Cohort as the tables see it.
pub(super) struct CohortNode<'a> {
    pub(super) parent: Option<usize>,
    pub(super) quotas: &'a FrMap<QuotaSpec>,
    pub(super) child_cohorts: &'a [usize],
    pub(super) child_cqs: &'a [usize],
    /// Kueue's `getNodeHeight`.
    pub(super) height: u32,
}

/// The static tables of a world's Cohort tree (see the module comment). Rows are Cohorts;
/// the column of (flavor, resource) is flavor × `width` + resource.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tables {
    pub(super) width: usize,
    pub(super) columns: usize,
    /// The quota each Cohort object holds itself.
    cohort_quota: Vec<QuotaSpec>,
    /// `SubtreeQuota` of each Cohort.
    cohort_st: Vec<i128>,
    /// `localQuota` of each Cohort.
    cohort_local: Vec<i128>,
    /// `potentialAvailable` of each Cohort.
    cohort_pot: Vec<i128>,
    /// Per Cohort, per resource: what its children could borrow through it over all flavors
    /// (`calculateLendable` at the Cohort: its `potentialAvailable`, summed per resource).
    lendable: Vec<Vec<i128>>,
    /// Per ClusterQueue, the flavor/resources of its quota (its `SubtreeQuota` keys).
    pub(super) cq_keys: Vec<Vec<Fr>>,
    /// Per Cohort, the flavor/resources of its subtree.
    pub(super) cohort_keys: Vec<Vec<Fr>>,
    /// Per ClusterQueue, the root of its tree.
    pub(super) cq_root: Vec<Option<usize>>,
}

impl Tables {
    pub(super) fn new(
        cqs: &[QueueNode<'_>],
        cohorts: &[CohortNode<'_>],
        width: usize,
        columns: usize,
    ) -> Self {
        let n = cohorts.len();
        let col = |fr: Fr| fr.flavor * width + fr.resource;
        let mut t = Self {
            width,
            columns,
            cohort_quota: vec![NO_QUOTA; n * columns],
            cohort_st: vec![0; n * columns],
            cohort_local: vec![0; n * columns],
            cohort_pot: vec![0; n * columns],
            lendable: vec![vec![0; width]; n],
            cq_keys: Vec::with_capacity(cqs.len()),
            cohort_keys: vec![Vec::new(); n],
            cq_root: Vec::with_capacity(cqs.len()),
        };
        for cq in cqs {
            let mut keys: Vec<Fr> = cq
                .quotas
                .keys()
                .copied()
                .filter(|fr| fr.resource < width)
                .collect();
            keys.sort_unstable();
            t.cq_keys.push(keys);
        }
        for (k, c) in cohorts.iter().enumerate() {
            for (fr, q) in c.quotas {
                if fr.resource < width {
                    t.cohort_quota[k * columns + col(*fr)] = *q;
                }
            }
        }
        // Children before parents: a Cohort's subtree quota needs its children's.
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&k| cohorts[k].height);
        for &k in &order {
            let c = &cohorts[k];
            let mut keys: Vec<Fr> = c
                .quotas
                .iter()
                .filter(|(fr, _)| fr.resource < width)
                .map(|(fr, q)| {
                    t.cohort_st[k * columns + col(*fr)] += q.nominal;
                    *fr
                })
                .collect();
            for &q in c.child_cqs {
                let spec = &cqs[q];
                for &fr in &t.cq_keys[q] {
                    let quota = spec.quotas.get(&fr).copied().unwrap_or(NO_QUOTA);
                    let stored = quota.nominal - local_quota(quota.nominal, quota.lending_limit);
                    t.cohort_st[k * columns + col(fr)] += stored;
                    keys.push(fr);
                }
            }
            for &child in c.child_cohorts {
                for i in 0..t.cohort_keys[child].len() {
                    let fr = t.cohort_keys[child][i];
                    let at = child * columns + col(fr);
                    let stored = t.cohort_st[at] - t.cohort_local[at];
                    t.cohort_st[k * columns + col(fr)] += stored;
                    keys.push(fr);
                }
            }
            keys.sort_unstable();
            keys.dedup();
            for &fr in &keys {
                let at = k * columns + col(fr);
                t.cohort_local[at] = local_quota(t.cohort_st[at], t.cohort_quota[at].lending_limit);
            }
            t.cohort_keys[k] = keys;
        }
        let root = |mut k: usize| {
            while let Some(p) = cohorts[k].parent {
                k = p;
            }
            k
        };
        // Parents before children (a parent is higher): a Cohort's potential needs its
        // parent's. Every pair of the tree counts, also those of other subtrees.
        for &k in order.iter().rev() {
            let keys = t.cohort_keys[root(k)].clone();
            for fr in keys {
                let at = k * columns + col(fr);
                let st = t.cohort_st[at];
                let v = match cohorts[k].parent {
                    None => st,
                    Some(p) => {
                        let up = t.cohort_local[at] + t.cohort_pot[p * columns + col(fr)];
                        t.cohort_quota[at]
                            .borrowing_limit
                            .map_or(up, |bl| up.min(st + bl))
                    }
                };
                t.cohort_pot[at] = v;
                t.lendable[k][fr.resource] += v;
            }
        }
        t.cq_root = cqs.iter().map(|cq| cq.parent.map(root)).collect();
        t
    }

    pub(super) fn col(&self, fr: Fr) -> usize {
        fr.flavor * self.width + fr.resource
    }

    fn cell(&self, k: usize, fr: Fr) -> Option<usize> {
        (fr.resource < self.width)
            .then(|| k * self.columns + self.col(fr))
            .filter(|&i| i < self.cohort_st.len())
    }

    /// `SubtreeQuota` of Cohort `k`.
    pub(super) fn st(&self, k: usize, fr: Fr) -> i128 {
        self.cell(k, fr).map_or(0, |i| self.cohort_st[i])
    }

    /// `localQuota` of Cohort `k`.
    pub(super) fn local(&self, k: usize, fr: Fr) -> i128 {
        self.cell(k, fr).map_or(0, |i| self.cohort_local[i])
    }

    /// The quota Cohort `k` holds itself.
    pub(super) fn quota(&self, k: usize, fr: Fr) -> QuotaSpec {
        self.cell(k, fr).map_or(NO_QUOTA, |i| self.cohort_quota[i])
    }

    /// What Cohort `k`'s children could borrow through it of `resource`, over all flavors.
    pub(super) fn lendable(&self, k: usize, resource: usize) -> i128 {
        self.lendable
            .get(k)
            .and_then(|l| l.get(resource))
            .copied()
            .unwrap_or(0)
    }

    /// `potentialAvailable` of Cohort `k`: what its subtree could ever use of `fr`, capped
    /// by its borrowing limit and by what its ancestors could ever use.
    pub(super) fn potential_cohort(&self, k: usize, fr: Fr) -> i128 {
        self.cell(k, fr).map_or(0, |i| self.cohort_pot[i])
    }
}
