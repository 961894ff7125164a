//! Cohort trees and fair sharing: the rules on `queues.cohorts` and the weights. What Kueue
//! v0.19.2 refuses (a Cohort's limits without a parent: `pkg/webhooks/cohort_webhook.go`
//! `validateCohort`; a weight that collapses to zero: `pkg/webhooks/common.go`
//! `validateFairSharing`), what it accepts but cannot use (a cycle of `parentName`s deactivates
//! every ClusterQueue in or below it: `pkg/cache/hierarchy/cycle.go`, `ErrCohortHasCycle` in
//! `pkg/cache/scheduler/resource_node.go`; a `parentName` that names nothing makes an empty
//! Cohort up: `pkg/cache/hierarchy/manager.go`), and settings that do nothing (a weight with
//! fair sharing off; `borrowWithinCohort`, which the fair-sharing preemptor never reads:
//! `pkg/scheduler/preemption/preemption.go` `fairPreemptions`; quota nobody below can use).

use super::Ctx;
use crate::base::codes;
use crate::base::diagnostic::did_you_mean;
use crate::base::pointer::{Pointer, ptr};
use crate::facts::Quotas;
use crate::facts::cohorts::CohortTree;
use crate::profile::{BorrowWithinCohortPolicy, Quantity, Queues};
use std::collections::BTreeSet;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(q) = &p.queues else { return };
    let fair = p.fair_sharing().is_some();
    weights(ctx, q, fair);
    let tree = CohortTree::new(q);
    let names: Vec<&str> = q.cohorts.iter().map(|c| c.name.as_str()).collect();
    let declared = !q.cohorts.is_empty();
    for (i, c) in q.cohorts.iter().enumerate() {
        let base = ptr!["queues", "cohorts", i];
        if let Some(parent) = &c.parent_name
            && !names.contains(&parent.as_str())
        {
            ctx.unknown_name(
                &codes::COHORT_PARENT_UNKNOWN,
                &base.at("parentName"),
                "Cohort of `queues.cohorts`",
                parent,
                names.iter().copied(),
            );
        }
        if c.parent_name.is_none() {
            limits_without_parent(ctx, &base, c);
        }
    }
    cycles(ctx, q, &tree);
    for (i, cq) in q.cluster_queues.iter().enumerate() {
        let Some(cohort) = &cq.cohort_name else {
            continue;
        };
        let at = ptr!["queues", "clusterQueues", i, "cohortName"];
        if declared {
            if !names.contains(&cohort.as_str()) {
                ctx.unknown_name(
                    &codes::COHORT_UNDECLARED,
                    &at,
                    "Cohort of `queues.cohorts`",
                    cohort,
                    names.iter().copied(),
                );
            }
        } else if alone(&tree, i) {
            let others: BTreeSet<&str> = q
                .cluster_queues
                .iter()
                .filter_map(|c| c.cohort_name.as_deref())
                .filter(|n| *n != cohort.as_str())
                .collect();
            let hint = did_you_mean(cohort, others.iter().copied()).map_or_else(
                || {
                    "give it the cohortName of the queues it should share with, declare a Cohort with quota for it in `queues.cohorts`, or remove cohortName".to_owned()
                },
                |s| format!("did you mean `{s}`?"),
            );
            ctx.report(
                &codes::COHORT_OF_ONE,
                &at,
                format!(
                    "ClusterQueue `{}` is the only queue of cohort `{cohort}`, which is no Cohort object: it can neither borrow nor lend",
                    cq.name
                ),
                Some(hint),
            );
        }
    }
    for (k, node) in tree.cohorts.iter().enumerate() {
        let Some(i) = node.declared_at else { continue };
        if node.cyclic {
            continue;
        }
        if tree.subtree_cqs(k).is_empty() {
            ctx.report(
                &codes::COHORT_WITHOUT_QUEUES,
                &ptr!["queues", "cohorts", i, "name"],
                format!(
                    "no ClusterQueue hangs below Cohort `{}`: its quota and weight serve nobody",
                    node.name
                ),
                Some(
                    "name it in a ClusterQueue's cohortName or a Cohort's parentName, or remove it"
                        .into(),
                ),
            );
        } else {
            unusable_quota(ctx, q, &tree, k, i);
        }
    }
    if fair && !(0..q.cluster_queues.len()).any(|c| !tree.peers(c).is_empty()) {
        ctx.report(
            &codes::FAIR_SHARING_ALONE,
            &ptr!["operators", "kueue", "configuration", "fairSharing"],
            "fair sharing is on, but no two ClusterQueues share a Cohort tree: there is nothing to share".into(),
            Some("put the queues that share quota in one Cohort tree (`cohortName`), or remove `fairSharing`".into()),
        );
    }
    nothing_to_get(ctx, q, &tree);
}

/// Whether ClusterQueue `c` is alone in a made-up Cohort: the only child of a name no Cohort
/// declares.
pub(super) fn alone(tree: &CohortTree<'_>, c: usize) -> bool {
    tree.cq_parent[c].is_some_and(|k| {
        let n = &tree.cohorts[k];
        n.spec.is_none() && n.child_cqs.len() == 1 && n.child_cohorts.is_empty()
    })
}

/// RK160 (weights that do nothing), RK119 on Cohort weights, RK167.
fn weights(ctx: &mut Ctx<'_>, q: &Queues, fair: bool) {
    let cq_weights = q.cluster_queues.iter().enumerate().map(|(i, c)| {
        (
            ptr!["queues", "clusterQueues", i],
            "ClusterQueue",
            c.name.as_str(),
            c.fair_sharing_weight,
        )
    });
    let cohort_weights = q.cohorts.iter().enumerate().map(|(i, c)| {
        (
            ptr!["queues", "cohorts", i],
            "Cohort",
            c.name.as_str(),
            c.fair_sharing_weight,
        )
    });
    let all: Vec<(Pointer, &str, &str, Option<Quantity>)> =
        cq_weights.chain(cohort_weights).collect();
    for (base, kind, name, w) in all {
        let Some(w) = w else { continue };
        let at = base.at("fairSharingWeight");
        if !fair {
            ctx.report(
                &codes::WEIGHT_WITHOUT_FAIR_SHARING,
                &at,
                format!(
                    "{kind} `{name}` has fairSharingWeight {w}, but fair sharing is off in Kueue's configuration: the weight does nothing"
                ),
                Some("turn fair sharing on with `operators.kueue.configuration.fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}`, or remove the weight".into()),
            );
        }
        // The ClusterQueue side is `cq_limits`' (same webhook rule, same code).
        if kind == "Cohort" && !w.is_zero() && w <= Quantity::from_nanos(1) {
            ctx.report(
                &codes::FAIR_SHARING_WEIGHT,
                &at,
                format!(
                    "fairSharingWeight {w} is above 0 but not above 1n: Kueue refuses it because the share would collapse to zero"
                ),
                Some("use 0 (the subtree borrows only what nobody else wants) or a weight such as 1".into()),
            );
        }
    }
    if !fair {
        return;
    }
    for (i, cq) in q.cluster_queues.iter().enumerate() {
        if cq
            .preemption
            .as_ref()
            .and_then(|p| p.borrow_within_cohort.as_ref())
            .is_some_and(|b| b.policy != BorrowWithinCohortPolicy::Never)
        {
            ctx.report(
                &codes::BORROW_WITHIN_COHORT_FAIR_SHARING,
                &ptr!["queues", "clusterQueues", i, "preemption", "borrowWithinCohort"],
                format!(
                    "ClusterQueue `{}` sets borrowWithinCohort, but with fair sharing on Kueue's preemptor weighs shares instead and never reads it",
                    cq.name
                ),
                Some("remove borrowWithinCohort; with fair sharing, `reclaimWithinCohort` and the weights decide who may preempt while borrowing".into()),
            );
        }
    }
}

/// RK165: Kueue's webhook wants the limits of a root Cohort nil ("must be nil when parent is
/// empty").
fn limits_without_parent(ctx: &mut Ctx<'_>, base: &Pointer, c: &crate::profile::Cohort) {
    for (g, group) in c.resource_groups.iter().enumerate() {
        for (f, fq) in group.flavors.iter().enumerate() {
            for (r, res) in fq.resources.iter().enumerate() {
                for (field, present) in [
                    ("borrowingLimit", res.borrowing_limit.is_some()),
                    ("lendingLimit", res.lending_limit.is_some()),
                ] {
                    if present {
                        ctx.report(
                            &codes::COHORT_LIMIT_WITHOUT_PARENT,
                            &ptr!(base; "resourceGroups", g, "flavors", f, "resources", r, field),
                            format!(
                                "`{field}` on Cohort `{}`, which has no parentName: a root has nobody to borrow from or lend to, and Kueue's webhook refuses it",
                                c.name
                            ),
                            Some("set `parentName`, or remove the limit".into()),
                        );
                    }
                }
            }
        }
    }
}

/// RK163, once per Cohort on a cycle (not those below one: their queues go inactive too, and
/// the message says so).
fn cycles(ctx: &mut Ctx<'_>, q: &Queues, tree: &CohortTree<'_>) {
    let index = |name: &str| q.cohorts.iter().position(|c| c.name.as_str() == name);
    for (i, c) in q.cohorts.iter().enumerate() {
        // Walk up by name (the tree cut the cycle): back at `i` means `i` is on it.
        let mut path = vec![c.name.as_str()];
        let mut at = i;
        let on_cycle = loop {
            let Some(next) = q.cohorts[at]
                .parent_name
                .as_ref()
                .and_then(|p| index(p.as_str()))
            else {
                break false;
            };
            if next == i {
                break true;
            }
            if path.contains(&q.cohorts[next].name.as_str()) {
                break false;
            }
            path.push(q.cohorts[next].name.as_str());
            at = next;
        };
        if !on_cycle {
            continue;
        }
        let queues: Vec<String> = (0..q.cluster_queues.len())
            .filter(|&cq| tree.cq_cyclic(cq))
            .map(|cq| format!("`{}`", q.cluster_queues[cq].name))
            .collect();
        let inactive = if queues.is_empty() {
            String::new()
        } else {
            format!(
                ": Kueue deactivates {} and admits nothing through them",
                queues.join(", ")
            )
        };
        path.push(c.name.as_str());
        ctx.report(
            &codes::COHORT_CYCLE,
            &ptr!["queues", "cohorts", i, "parentName"],
            format!(
                "Cohort `{}` is its own ancestor ({}){inactive}",
                c.name,
                path.join(" → ")
            ),
            Some("a Cohort tree has one root: remove a parentName on the cycle".into()),
        );
    }
}

/// RK166: a Cohort's own quota of a flavor/resource no ClusterQueue of its subtree has.
fn unusable_quota(ctx: &mut Ctx<'_>, q: &Queues, tree: &CohortTree<'_>, k: usize, i: usize) {
    let Some(spec) = tree.cohorts[k].spec else {
        return;
    };
    let members = tree.subtree_cqs(k);
    let covered = |flavor: &str, resource: &str| {
        members.iter().any(|&c| {
            q.cluster_queues[c]
                .resource_groups
                .iter()
                .flat_map(|g| &g.flavors)
                .any(|f| {
                    f.name.as_str() == flavor
                        && f.resources.iter().any(|r| r.name.as_str() == resource)
                })
        })
    };
    for (g, group) in spec.resource_groups.iter().enumerate() {
        for (f, fq) in group.flavors.iter().enumerate() {
            for (r, res) in fq.resources.iter().enumerate() {
                if res.nominal_quota.is_zero() || covered(fq.name.as_str(), res.name.as_str()) {
                    continue;
                }
                ctx.report(
                    &codes::COHORT_QUOTA_UNUSABLE,
                    &ptr!["queues", "cohorts", i, "resourceGroups", g, "flavors", f, "resources", r, "nominalQuota"],
                    format!(
                        "Cohort `{}` holds {} `{}` of flavor `{}`, but no ClusterQueue below it has quota on that flavor for `{}`: nobody can use it",
                        spec.name, res.nominal_quota, res.name, fq.name, res.name
                    ),
                    Some(format!(
                        "list `{}` on flavor `{}` (nominalQuota 0 is enough) in the ClusterQueues that should borrow it, or remove the quota",
                        res.name, fq.name
                    )),
                );
            }
        }
    }
}

/// RK170: a ClusterQueue in a Cohort tree that covers a resource of which it could never get
/// any, on any flavor.
fn nothing_to_get(ctx: &mut Ctx<'_>, q: &Queues, tree: &CohortTree<'_>) {
    let quotas = Quotas::new(q);
    for (c, cq) in q.cluster_queues.iter().enumerate() {
        if tree.cq_parent[c].is_none() || tree.cq_cyclic(c) {
            continue;
        }
        for (g, group) in cq.resource_groups.iter().enumerate() {
            for (r, res) in group.covered_resources.iter().enumerate() {
                let none = group
                    .flavors
                    .iter()
                    .all(|f| quotas.total(c, f.name.as_str(), res.as_str()).is_zero());
                if !none || group.flavors.is_empty() {
                    continue;
                }
                let explain = group
                    .flavors
                    .first()
                    .map(|f| quotas.capacity(c, f.name.as_str(), res.as_str()).explain)
                    .unwrap_or_default();
                ctx.report(
                    &codes::QUEUE_GETS_NOTHING,
                    &ptr!["queues", "clusterQueues", c, "resourceGroups", g, "coveredResources", r],
                    format!(
                        "ClusterQueue `{}` covers `{res}` but can never get any of it ({explain}): every workload asking for `{res}` waits forever",
                        cq.name
                    ),
                    Some(format!(
                        "give it a nominalQuota of `{res}`, or let its Cohort tree lend some (a lendingLimit above 0, a Cohort with quota)"
                    )),
                );
            }
        }
    }
}
