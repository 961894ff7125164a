//! Per-flavor quotas of ClusterQueues and what their cohort lends: what a queue can ever get of
//! a flavor and resource (nominal quota plus what it may borrow), with the words that explain
//! it. A plain index over the profile, shared by the rules (messages) and the simulator's
//! standard scenarios (what a synthetic workload asks).

use crate::profile::{Quantity, Queues, ResourceQuota};
use std::collections::HashMap;

/// What one ClusterQueue can ever use of one flavor and resource, and how that comes about.
pub(crate) struct Capacity {
    pub(crate) total: Quantity,
    pub(crate) explain: String,
}

/// The quotas of all ClusterQueues, indexed once so that each lookup is cheap whatever the
/// size of the profile.
pub(crate) struct Quotas<'q> {
    queues: &'q Queues,
    own: HashMap<(usize, &'q str, &'q str), &'q ResourceQuota>,
    /// Per (cohort, flavor, resource): what all its queues together can lend.
    lendable: HashMap<(&'q str, &'q str, &'q str), Quantity>,
}

fn lendable(r: &ResourceQuota) -> Quantity {
    r.lending_limit.unwrap_or(r.nominal_quota)
}

impl<'q> Quotas<'q> {
    pub(crate) fn new(queues: &'q Queues) -> Self {
        let mut own = HashMap::new();
        let mut lend: HashMap<(&str, &str, &str), Quantity> = HashMap::new();
        for (c, cq) in queues.cluster_queues.iter().enumerate() {
            for f in cq.resource_groups.iter().flat_map(|g| &g.flavors) {
                for r in &f.resources {
                    // The first entry wins, as in a lookup by scan (duplicates are RK107/RK109).
                    if own.contains_key(&(c, f.name.as_str(), r.name.as_str())) {
                        continue;
                    }
                    own.insert((c, f.name.as_str(), r.name.as_str()), r);
                    if let Some(cohort) = &cq.cohort_name {
                        let e = lend
                            .entry((cohort.as_str(), f.name.as_str(), r.name.as_str()))
                            .or_insert_with(Quantity::zero);
                        *e = e.plus(lendable(r));
                    }
                }
            }
        }
        Self {
            queues,
            own,
            lendable: lend,
        }
    }

    /// What ClusterQueue `c` can ever use of (`flavor`, `resource`); see the module comment.
    pub(crate) fn total(&self, c: usize, flavor: &str, resource: &str) -> Quantity {
        self.parts(c, flavor, resource).0
    }

    /// (total, nominal, borrow, borrowing limit, what the others lend, cohort).
    #[allow(clippy::type_complexity)]
    fn parts(
        &self,
        c: usize,
        flavor: &str,
        resource: &str,
    ) -> (
        Quantity,
        Quantity,
        Quantity,
        Option<Quantity>,
        Quantity,
        Option<&'q str>,
    ) {
        let own = self.own.get(&(c, flavor, resource)).copied();
        let nominal = own.map_or_else(Quantity::zero, |r| r.nominal_quota);
        let cohort = self
            .queues
            .cluster_queues
            .get(c)
            .and_then(|cq| cq.cohort_name.as_ref());
        let Some(cohort) = cohort else {
            return (
                nominal,
                nominal,
                Quantity::zero(),
                None,
                Quantity::zero(),
                None,
            );
        };
        let all = self
            .lendable
            .get(&(cohort.as_str(), flavor, resource))
            .copied()
            .unwrap_or_else(Quantity::zero);
        // What the others lend: the cohort's total less this queue's own share.
        let others =
            Quantity::from_nanos((all.nanos() - own.map_or(0, |r| lendable(r).nanos())).max(0));
        let limit = own.and_then(|r| r.borrowing_limit);
        let borrow = limit.map_or(others, |b| b.min(others));
        (
            nominal.plus(borrow),
            nominal,
            borrow,
            limit,
            others,
            Some(cohort.as_str()),
        )
    }

    /// The total with the words that explain it, for messages.
    pub(crate) fn capacity(&self, c: usize, flavor: &str, resource: &str) -> Capacity {
        let (total, nominal, borrow, limit, others, cohort) = self.parts(c, flavor, resource);
        let Some(cohort) = cohort else {
            return Capacity {
                total,
                explain: format!("nominalQuota {nominal}; no cohort to borrow from"),
            };
        };
        let limit_text = limit.map_or_else(
            || "no borrowingLimit".to_string(),
            |b| format!("borrowingLimit {b}"),
        );
        Capacity {
            total,
            explain: format!(
                "nominalQuota {nominal} + borrowing {borrow}: {limit_text}, the other queues of cohort `{cohort}` lend at most {others}"
            ),
        }
    }
}
