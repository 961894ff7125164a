//! Admission: can Kueue ever admit a workload through its ClusterQueue? (Seed 000's
//! troubleshooting table: "the workload stays pending".)
//!
//! The model, kept simple and on the safe side (it never reports a workload Kueue could admit):
//! - A workload's demand is every pod it creates, as Kueue counts them: the head, each worker
//!   group at `replicas × numOfHosts`, and in K8sJobMode the submitter pod (KubeRay's default
//!   500m CPU / 200Mi, or `submitter.resources`); SidecarMode adds the submitter container to
//!   the head instead, and an elastic workload adds the autoscaler sidecar (500m / 512Mi) to it.
//!   A `pods` quota counts one per pod.
//! - What a ClusterQueue can ever get of flavor F and resource R is its `nominalQuota` plus
//!   what it may borrow: nothing without a cohort; in a cohort, the lesser of its
//!   `borrowingLimit` (unlimited when unset) and what the other queues of the cohort can lend
//!   (each one's `lendingLimit`, or its whole `nominalQuota` when unset). Cohort objects with
//!   quota of their own are not part of a profile.
//! - Kueue gives each pod set one flavor per resource group. A pod set that fits no single
//!   flavor of a group is never admitted. For the whole workload, the sum over pod sets must fit
//!   the sum over the group's flavors; with one flavor per group (the seed's shape) these two
//!   checks are exact, with several they are necessary conditions only.

use super::{Ctx, RuleInfo};
use crate::admission::pods::{self, PodSet, cluster_queue_of, pod_sets};
use crate::admission::{Capacity, Quotas};
use crate::diagnostic::Severity::Error;
use crate::profile::{Quantity, ResourceGroup};

pub(super) const OVER_QUOTA: RuleInfo = RuleInfo {
    code: "RK140",
    severity: Error,
    title: "a workload needs more than its ClusterQueue can ever get (nominal quota + borrowing): it stays pending forever",
};
pub(super) const NOT_COVERED: RuleInfo = RuleInfo {
    code: "RK141",
    severity: Error,
    title: "a workload requests a resource its ClusterQueue does not cover: Kueue never admits it",
};

pub(super) const RULES: &[RuleInfo] = &[OVER_QUOTA, NOT_COVERED];

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(queues) = &p.queues else { return };
    let quotas = Quotas::new(queues);
    for (i, w) in p.workloads.iter().enumerate() {
        let Some((c, cq)) = cluster_queue_of(p, w) else {
            continue;
        };
        let sets: Vec<PodSet<'_>> = pod_sets(i, w).into_iter().filter(|s| s.count > 0).collect();
        let covers_pods = cq
            .resource_groups
            .iter()
            .any(|g| g.covered_resources.iter().any(|r| r.as_str() == "pods"));
        // Resources no group covers.
        for s in &sets {
            for (r, amount) in &s.requests {
                if amount.is_zero()
                    || cq
                        .resource_groups
                        .iter()
                        .any(|g| g.covered_resources.iter().any(|c| c.as_str() == r))
                {
                    continue;
                }
                ctx.report(
                    &NOT_COVERED,
                    &s.resource_pointer(r),
                    format!(
                        "{} requests `{r}`, which ClusterQueue `{}` does not cover: Kueue never admits the workload",
                        s.describe(),
                        cq.name
                    ),
                    Some(format!(
                        "add `{r}` to a resource group of ClusterQueue `{}` with a quota on a flavor, or remove the request",
                        cq.name
                    )),
                );
            }
        }
        for group in &cq.resource_groups {
            group_fit(ctx, &quotas, cq, c, group, &sets, covers_pods);
        }
    }
}

/// What pod set `s` needs in total of `resource` (all its pods).
fn demand(s: &PodSet<'_>, resource: &str, covers_pods: bool) -> Quantity {
    if resource == "pods" && covers_pods {
        return Quantity::from_units(s.count);
    }
    s.request(resource).times(s.count)
}

fn group_fit(
    ctx: &mut Ctx<'_>,
    quotas: &Quotas<'_>,
    cq: &crate::profile::ClusterQueue,
    c: usize,
    group: &ResourceGroup,
    sets: &[PodSet<'_>],
    covers_pods: bool,
) {
    let covered: Vec<&str> = group
        .covered_resources
        .iter()
        .map(crate::profile::QualifiedName::as_str)
        .collect();
    let touching: Vec<&PodSet<'_>> = sets
        .iter()
        .filter(|s| covered.iter().any(|r| !demand(s, r, covers_pods).is_zero()))
        .collect();
    if touching.is_empty() {
        return;
    }
    let mut any_alone_failed = false;
    for s in &touching {
        // Only what the pod set asks for can fail: a zero demand always fits.
        let wanted: Vec<(&str, Quantity)> = covered
            .iter()
            .map(|r| (*r, demand(s, r, covers_pods)))
            .filter(|(_, d)| !d.is_zero())
            .collect();
        let fits_some = group.flavors.iter().any(|f| {
            wanted
                .iter()
                .all(|(r, d)| *d <= quotas.total(c, &f.name, r))
        });
        if fits_some {
            continue;
        }
        any_alone_failed = true;
        // Name the first flavor's first shortfall: with one flavor (the usual shape) it is the
        // whole story.
        let Some(f) = group.flavors.first() else {
            continue;
        };
        let Some((r, need, cap)) = covered.iter().find_map(|r| {
            let need = demand(s, r, covers_pods);
            let cap = quotas.capacity(c, &f.name, r);
            (need > cap.total).then_some((*r, need, cap))
        }) else {
            continue;
        };
        let per_pod = if r == "pods" {
            "1 pod".to_string()
        } else {
            format!("{} `{r}`", s.request(r))
        };
        let others = if group.flavors.len() > 1 {
            " (and no other flavor of its resource group fits it either)"
        } else {
            ""
        };
        ctx.report(
            &OVER_QUOTA,
            &s.resource_pointer(r),
            format!(
                "{} needs {} × {per_pod} = {need}, but ClusterQueue `{}` can never get more than {} of flavor `{}` ({}){others}: the workload stays pending forever",
                s.describe(),
                s.count,
                cq.name,
                cap.total,
                f.name,
                cap.explain
            ),
            Some(format!(
                "raise `{r}` of flavor `{}` in ClusterQueue `{}` (nominalQuota, or borrowingLimit in a cohort) to at least {need}, or request less",
                f.name, cq.name
            )),
        );
    }
    if any_alone_failed {
        return;
    }
    // The whole workload against the whole group.
    let Some(first) = touching.first() else {
        return;
    };
    let w = first.workload;
    for r in &covered {
        let total = touching.iter().fold(Quantity::zero(), |acc, s| {
            acc.plus(demand(s, r, covers_pods))
        });
        if total.is_zero() {
            continue;
        }
        let cap_total = group.flavors.iter().fold(Quantity::zero(), |acc, f| {
            acc.plus(quotas.total(c, &f.name, r))
        });
        if total <= cap_total {
            continue;
        }
        let caps: Vec<(String, Capacity)> = group
            .flavors
            .iter()
            .map(|f| (f.name.to_string(), quotas.capacity(c, &f.name, r)))
            .collect();
        let breakdown: Vec<String> = touching
            .iter()
            .filter(|s| !demand(s, r, covers_pods).is_zero())
            .map(|s| {
                let name = match s.role {
                    pods::Role::Head => "head".to_string(),
                    pods::Role::Worker(j) => w
                        .workers
                        .get(j)
                        .map_or("?", |g| g.name.as_str())
                        .to_string(),
                    pods::Role::Submitter => "submitter".to_string(),
                };
                if *r == "pods" {
                    format!("{name} {}", s.count)
                } else {
                    format!("{name} {} × {}", s.count, s.request(r))
                }
            })
            .collect();
        let flavors: Vec<String> = caps
            .iter()
            .map(|(f, cap)| format!("flavor `{f}`: {}", cap.explain))
            .collect();
        ctx.report(
            &OVER_QUOTA,
            &format!("/workloads/{}/name", first.index),
            format!(
                "{} `{}` needs {total} `{r}` in total ({}), but ClusterQueue `{}` can never get more than {cap_total} ({}): the workload stays pending forever",
                w.kind.as_str(),
                w.name,
                breakdown.join(", "),
                cq.name,
                flavors.join("; ")
            ),
            Some(format!(
                "raise the `{r}` quota of ClusterQueue `{}` to at least {total}, or make the workload smaller",
                cq.name
            )),
        );
    }
}
