//! Kueue rules: references between flavors and queues, queue modes, cohort borrowing, and the
//! ClusterQueue/ResourceFlavor webhook and CEL rules (kueue@v0.19.2 `pkg/webhooks/` and the CRDs'
//! `x-kubernetes-validations`, `config/components/crd/bases/`).

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::{Pointer, ptr};
use crate::facts::cohorts::CohortTree;
use crate::profile::{
    ClusterQueue, FungibilityPolicy, QueueMode, Queues, ReclaimWithinCohort, ResourceGroup,
    TaintEffect, Toleration, TolerationOperator,
};
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    flavors_and_priority_classes(ctx);
    let Some(q) = &p.queues else { return };
    let flavor_names: Vec<&str> = p.flavors.iter().map(|f| f.name.as_str()).collect();
    let cq_names: Vec<&str> = q.cluster_queues.iter().map(|c| c.name.as_str()).collect();
    queue_duplicates(ctx, q, &cq_names);
    mode(ctx);
    let used_flavors = quota_holders(ctx, q, &flavor_names);
    unused_flavors(ctx, q, &used_flavors);
    local_queue_targets(ctx, q, &cq_names);
}

/// Names used twice among the flavors and the priority classes; each flavor's tolerations and
/// node taints.
fn flavors_and_priority_classes(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    duplicates(
        ctx,
        &ptr!["flavors"],
        "ResourceFlavor",
        p.flavors.iter().map(|f| f.name.as_str()),
    );
    duplicates(
        ctx,
        &ptr!["priorityClasses"],
        "WorkloadPriorityClass",
        p.priority_classes.iter().map(|c| c.name.as_str()),
    );
    for (i, f) in p.flavors.iter().enumerate() {
        tolerations(ctx, &ptr!["flavors", i, "tolerations"], &f.tolerations);
        let mut seen = BTreeSet::new();
        for (j, t) in f.node_taints.iter().enumerate() {
            if !seen.insert((t.key.as_str(), t.effect)) {
                ctx.report(
                    &codes::TAINT_DUPLICATE,
                    &ptr!["flavors", i, "nodeTaints", j],
                    format!("taint `{}:{}` is listed twice", t.key, t.effect.as_str()),
                    Some("keep one entry per key and effect".into()),
                );
            }
        }
    }
}

/// ClusterQueue and LocalQueue names used twice (a LocalQueue's name counts within its
/// namespace).
fn queue_duplicates(ctx: &mut Ctx<'_>, q: &Queues, cq_names: &[&str]) {
    let p = ctx.profile;
    duplicates(
        ctx,
        &ptr!["queues", "clusterQueues"],
        "ClusterQueue",
        cq_names.iter().copied(),
    );
    let ns = p.namespace.as_str();
    let lq_keys: Vec<String> = q
        .local_queues
        .iter()
        .map(|l| {
            format!(
                "{}/{}",
                l.namespace.as_ref().map_or(ns, |n| n.as_str()),
                l.name
            )
        })
        .collect();
    duplicates(
        ctx,
        &ptr!["queues", "localQueues"],
        "LocalQueue",
        lq_keys.iter().map(String::as_str),
    );
}

/// The resource groups of every ClusterQueue and Cohort, each ClusterQueue's preemption and
/// fungibility policies, and Cohort names used twice; the flavors the groups name.
fn quota_holders<'p>(ctx: &mut Ctx<'_>, q: &'p Queues, flavor_names: &[&str]) -> BTreeSet<&'p str> {
    let mut used_flavors = BTreeSet::new();
    for (i, cq) in q.cluster_queues.iter().enumerate() {
        let base = ptr!["queues", "clusterQueues", i];
        let holder = Holder::ClusterQueue {
            name: cq.name.as_str(),
            has_cohort: cq.cohort_name.is_some(),
        };
        resource_groups(
            ctx,
            &base,
            &cq.resource_groups,
            holder,
            flavor_names,
            &mut used_flavors,
        );
        policies(ctx, &base, cq);
    }
    duplicates(
        ctx,
        &ptr!["queues", "cohorts"],
        "Cohort",
        q.cohorts.iter().map(|c| c.name.as_str()),
    );
    for (i, c) in q.cohorts.iter().enumerate() {
        let base = ptr!["queues", "cohorts", i];
        resource_groups(
            ctx,
            &base,
            &c.resource_groups,
            Holder::Cohort,
            flavor_names,
            &mut used_flavors,
        );
    }
    used_flavors
}

/// A ClusterQueue's preemption and flavor fungibility settings that Kueue refuses together.
fn policies(ctx: &mut Ctx<'_>, base: &Pointer, cq: &ClusterQueue) {
    if let Some(pre) = &cq.preemption
        && pre
            .borrow_within_cohort
            .as_ref()
            .is_some_and(|b| b.policy != crate::profile::BorrowWithinCohortPolicy::Never)
        && pre.reclaim_within_cohort == ReclaimWithinCohort::Never
    {
        ctx.report(
            &codes::BORROW_WITHIN_COHORT,
            &ptr!(base; "preemption", "borrowWithinCohort"),
            "borrowWithinCohort is set while reclaimWithinCohort is Never".into(),
            Some("set reclaimWithinCohort to LowerPriority or Any".into()),
        );
    }
    if let Some(ff) = &cq.flavor_fungibility
        && ff.preference.is_some()
        && !(ff.when_can_borrow == Some(FungibilityPolicy::TryNextFlavor)
            && ff.when_can_preempt == Some(FungibilityPolicy::TryNextFlavor))
    {
        ctx.report(
            &codes::FUNGIBILITY,
            &ptr!(base; "flavorFungibility", "preference"),
            "preference is set but whenCanBorrow and whenCanPreempt are not both TryNextFlavor"
                .into(),
            Some("set both to TryNextFlavor, or remove preference".into()),
        );
    }
}

/// Flavors no ClusterQueue or Cohort gives quota on.
fn unused_flavors(ctx: &mut Ctx<'_>, q: &Queues, used_flavors: &BTreeSet<&str>) {
    let p = ctx.profile;
    for (i, f) in p.flavors.iter().enumerate() {
        if !used_flavors.contains(f.name.as_str()) {
            ctx.report(
                &codes::UNUSED_FLAVOR,
                &ptr!["flavors", i, "name"],
                if q.cohorts.is_empty() {
                    format!("ResourceFlavor `{}` is used by no ClusterQueue", f.name)
                } else {
                    format!(
                        "ResourceFlavor `{}` is used by no ClusterQueue or Cohort",
                        f.name
                    )
                },
                Some("remove it, or give a ClusterQueue quota on it".into()),
            );
        }
    }
}

/// LocalQueues that point at no ClusterQueue, and ClusterQueues no LocalQueue points at.
fn local_queue_targets(ctx: &mut Ctx<'_>, q: &Queues, cq_names: &[&str]) {
    let mut targeted = BTreeSet::new();
    for (i, lq) in q.local_queues.iter().enumerate() {
        targeted.insert(lq.cluster_queue.as_str());
        if !cq_names.contains(&lq.cluster_queue.as_str()) {
            ctx.unknown_name(
                &codes::LOCAL_QUEUE_TARGET,
                &ptr!["queues", "localQueues", i, "clusterQueue"],
                "ClusterQueue",
                &lq.cluster_queue,
                cq_names.iter().copied(),
            );
        }
    }
    for (i, cq) in q.cluster_queues.iter().enumerate() {
        if !targeted.contains(cq.name.as_str()) {
            ctx.report(
                &codes::UNREACHABLE_CLUSTER_QUEUE,
                &ptr!["queues", "clusterQueues", i, "name"],
                format!("no LocalQueue points at ClusterQueue `{}`", cq.name),
                Some("add a LocalQueue with `clusterQueue` set to it".into()),
            );
        }
    }
}

fn mode(ctx: &mut Ctx<'_>) {
    let Some(q) = &ctx.profile.queues else { return };
    match q.mode {
        QueueMode::Single => {
            if q.cluster_queues.len() != 1 {
                ctx.report(
                    &codes::QUEUE_MODE,
                    &ptr!["queues", "clusterQueues"],
                    format!(
                        "single-queue mode has exactly one ClusterQueue; this profile has {}",
                        q.cluster_queues.len()
                    ),
                    Some("use `mode: team` for several queues sharing a cohort".into()),
                );
            }
            for (i, cq) in q.cluster_queues.iter().enumerate() {
                if cq.cohort_name.is_some() {
                    ctx.report(
                        &codes::QUEUE_MODE,
                        &ptr!["queues", "clusterQueues", i, "cohortName"],
                        "single-queue mode has no cohort".into(),
                        Some("remove cohortName, or use `mode: team`".into()),
                    );
                }
            }
        }
        QueueMode::Team => {
            if q.cluster_queues.len() < 2 {
                ctx.report(
                    &codes::QUEUE_MODE,
                    &ptr!["queues", "clusterQueues"],
                    "team mode needs at least two ClusterQueues".into(),
                    Some("add a queue per team, or use `mode: single`".into()),
                );
            }
            // One Cohort tree: every queue's cohort leads to the same root (a bare
            // `cohortName` is a root of its own).
            let tree = CohortTree::new(q);
            // A queue alone in a made-up cohort is RK164's finding (likely a typo): it is
            // not a tree of its own here.
            let cohorts: BTreeSet<Option<&str>> = (0..q.cluster_queues.len())
                .filter(|&c| !super::cohorts::alone(&tree, c))
                .map(|c| tree.cq_root(c).map(|r| tree.cohorts[r].name))
                .collect();
            for (i, cq) in q.cluster_queues.iter().enumerate() {
                if cq.cohort_name.is_none() {
                    ctx.report(
                        &codes::QUEUE_MODE,
                        &ptr!["queues", "clusterQueues", i, "name"],
                        format!(
                            "team queue `{}` has no cohortName: it can neither borrow nor lend",
                            cq.name
                        ),
                        Some("give every team queue the same cohortName".into()),
                    );
                }
            }
            if cohorts.iter().flatten().count() > 1 {
                ctx.report(
                    &codes::QUEUE_MODE,
                    &ptr!["queues", "clusterQueues"],
                    format!(
                        "team queues are split across cohort trees (roots): {}",
                        cohorts
                            .iter()
                            .flatten()
                            .copied()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    Some("team mode shares one cohort tree; make the cohortName values equal, or give their Cohorts one root with `parentName`".into()),
                );
            }
        }
    }
}

pub(super) fn duplicates<'n>(
    ctx: &mut Ctx<'_>,
    list: &Pointer,
    kind: &str,
    names: impl Iterator<Item = &'n str>,
) {
    let mut seen = BTreeSet::new();
    for (i, name) in names.enumerate() {
        if !seen.insert(name) {
            ctx.report(
                &codes::DUPLICATE_NAME,
                &ptr!(list; i, "name"),
                format!("{kind} `{name}` is defined twice"),
                Some("names must be unique; rename or remove one".into()),
            );
        }
    }
}

/// Kueue's CEL rules on tolerations (ResourceFlavor), which Kubernetes applies to pods too.
pub(super) fn tolerations(ctx: &mut Ctx<'_>, base: &Pointer, list: &[Toleration]) {
    for (i, t) in list.iter().enumerate() {
        let p = base.at(i);
        if t.operator == TolerationOperator::Exists
            && t.value.as_ref().is_some_and(|v| !v.is_empty())
        {
            ctx.report(
                &codes::TOLERATION_SHAPE,
                &p.at("value"),
                "a toleration with operator Exists cannot have a value".into(),
                Some("remove `value`, or use operator Equal".into()),
            );
        }
        if t.key.is_none() && t.operator != TolerationOperator::Exists {
            ctx.report(
                &codes::TOLERATION_SHAPE,
                &p,
                "a toleration without a key must use operator Exists".into(),
                Some("add `key`, or set `operator: Exists` to tolerate every taint".into()),
            );
        }
        if t.toleration_seconds.is_some() && t.effect != Some(TaintEffect::NoExecute) {
            ctx.report(
                &codes::TOLERATION_SHAPE,
                &p.at("tolerationSeconds"),
                "tolerationSeconds applies only to effect NoExecute".into(),
                Some("set `effect: NoExecute`, or remove tolerationSeconds".into()),
            );
        }
    }
}

/// Who holds resource groups: the rules differ a little between the two kinds.
#[derive(Clone, Copy)]
pub(super) enum Holder<'a> {
    ClusterQueue {
        name: &'a str,
        has_cohort: bool,
    },
    /// A Cohort: a lending limit may exceed its own quota (it caps the whole subtree), and
    /// limits need a `parentName` (RK165, from the checks of `cohorts`).
    Cohort,
}

/// The rules of one holder's resource groups (Kueue's `validateResourceGroups` and the CRD's
/// CEL rules): each resource and flavor in one group only, flavors that exist, each flavor
/// listing exactly the group's resources in order; a ClusterQueue's limits need a cohort and
/// its lending limit stays within its quota.
pub(super) fn resource_groups<'p>(
    ctx: &mut Ctx<'_>,
    base: &Pointer,
    groups: &'p [ResourceGroup],
    holder: Holder<'_>,
    flavor_names: &[&str],
    used_flavors: &mut BTreeSet<&'p str>,
) {
    let mut resources_seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut flavors_seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (g, group) in groups.iter().enumerate() {
        let gp = ptr!(base; "resourceGroups", g);
        for (r, res) in group.covered_resources.iter().enumerate() {
            if let Some(prev) = resources_seen.insert(res.as_str(), g) {
                ctx.report(
                    &codes::GROUP_OVERLAP,
                    &ptr!(gp; "coveredResources", r),
                    format!("resource `{res}` is already covered by resource group {prev}"),
                    Some("a resource may appear in one resource group only".into()),
                );
            }
        }
        for (f, fq) in group.flavors.iter().enumerate() {
            let fp = ptr!(gp; "flavors", f);
            used_flavors.insert(fq.name.as_str());
            if !flavor_names.contains(&fq.name.as_str()) {
                ctx.unknown_name(
                    &codes::FLAVOR_NOT_FOUND,
                    &fp.at("name"),
                    "ResourceFlavor",
                    &fq.name,
                    flavor_names.iter().copied(),
                );
            }
            if let Some(prev) = flavors_seen.insert(fq.name.as_str(), g) {
                ctx.report(
                    &codes::GROUP_OVERLAP,
                    &fp.at("name"),
                    format!(
                        "flavor `{}` is already used by resource group {prev}",
                        fq.name
                    ),
                    Some("a flavor may appear in one resource group only".into()),
                );
            }
            let listed: Vec<&str> = fq.resources.iter().map(|r| r.name.as_str()).collect();
            let covered: Vec<&str> = group
                .covered_resources
                .iter()
                .map(std::ops::Deref::deref)
                .collect::<Vec<&str>>();
            if listed != covered {
                ctx.report(
                    &codes::COVERED_RESOURCES,
                    &fp.at("resources"),
                    format!(
                        "flavor `{}` lists [{}] but the group covers [{}]",
                        fq.name,
                        listed.join(", "),
                        covered.join(", ")
                    ),
                    Some(format!(
                        "list exactly these resources, in this order: {}",
                        covered.join(", ")
                    )),
                );
            }
            let Holder::ClusterQueue { name, has_cohort } = holder else {
                continue;
            };
            for (r, res) in fq.resources.iter().enumerate() {
                let rp = ptr!(fp; "resources", r);
                if !has_cohort {
                    for (field, present) in [
                        ("borrowingLimit", res.borrowing_limit.is_some()),
                        ("lendingLimit", res.lending_limit.is_some()),
                    ] {
                        if present {
                            ctx.report(
                                &codes::LIMIT_WITHOUT_COHORT,
                                &rp.at(field),
                                format!(
                                    "`{field}` on ClusterQueue `{name}`, which has no cohortName"
                                ),
                                Some(
                                    "set `cohortName` on the ClusterQueue, or remove the limit"
                                        .into(),
                                ),
                            );
                        }
                    }
                }
                if let Some(lend) = res.lending_limit
                    && lend > res.nominal_quota
                {
                    ctx.report(
                        &codes::LENDING_OVER_NOMINAL,
                        &rp.at("lendingLimit"),
                        format!(
                            "lendingLimit {lend} exceeds nominalQuota {} for `{}`",
                            res.nominal_quota, res.name
                        ),
                        Some(format!(
                            "a queue can lend at most its nominal quota: use ≤ {}",
                            res.nominal_quota
                        )),
                    );
                }
            }
        }
    }
}
