//! Admission: can Kueue ever admit a workload through its ClusterQueue? (Seed 000's
//! troubleshooting table: "the workload stays pending".) The rules ask the simulator: each
//! queued workload alone on an otherwise empty cluster (the profile's queues), and its
//! findings (`simulate::never`) are the diagnostics, so `check` and `raykueue simulate`
//! (`End.neverAdmissible`) never disagree. This module only words them.
//!
//! The model behind them (`admission::pods`, `admission::Quotas`, the simulator's flavor
//! assignment):
//! - A workload's demand is every pod it creates, as Kueue counts them: the head, each worker
//!   group at `replicas × numOfHosts`, and in K8sJobMode the submitter pod (KubeRay's default
//!   500m CPU / 200Mi, or `submitter.resources`); SidecarMode adds the submitter container to
//!   the head instead, and an elastic workload adds the autoscaler sidecar (500m / 512Mi) to it.
//!   A `pods` quota counts one per pod.
//! - What a ClusterQueue can ever get of flavor F and resource R is its `nominalQuota` plus
//!   what it may borrow: nothing without a cohort; in a Cohort tree, what the tree can lend it
//!   (each queue's `lendingLimit`, or its whole `nominalQuota` when unset, and the quota the
//!   Cohort objects hold themselves), capped by its `borrowingLimit` and by the borrowing and
//!   lending limits of the Cohorts on its way up (`facts::Quotas`, Kueue's
//!   `potentialAvailable`).
//! - Kueue gives each pod set one flavor per resource group, trying the group's flavors in
//!   order and skipping those whose taints the pod set does not tolerate or whose node labels
//!   its node selector contradicts; earlier pod sets' requests count against later ones on the
//!   same flavor. A pod set that fits no flavor is never admitted.

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;
use crate::facts::Quotas;
use crate::facts::counted::QuotaView;
use crate::facts::pods::{PodSet, pod_sets};
use crate::profile::{Quantity, Workload};
use crate::simulate::never::{Finding, findings};
use crate::simulate::world::{Fr, World, flavor_mismatch, only_tas_mismatch, profile_world};

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(queues) = &p.queues else { return };
    let (world, index) = profile_world(p);
    let quotas = Quotas::new(queues);
    // Requests as Kueue counts them: excluded resources dropped, transformations applied.
    let view = QuotaView::new(p);
    for (wl, found) in findings(&world, true).into_iter().enumerate() {
        // A queue in (or below) a cycle of Cohorts admits nothing: RK163 says why.
        if found.is_empty() || quotas.tree.cq_cyclic(world.workloads[wl].cq) {
            continue;
        }
        let i = index[wl];
        let w = &p.workloads[i];
        let sets: Vec<PodSet<'_>> = pod_sets(i, w)
            .into_iter()
            .map(|mut s| {
                s.requests = view.apply(&s.requests);
                s
            })
            .collect();
        let mut together_reported = Vec::new();
        for f in found {
            let words = Words {
                world: &world,
                quotas: &quotas,
                wl,
                w,
                sets: &sets,
            };
            match f {
                Finding::NotCovered { pod_set, resource } => {
                    words.not_covered(ctx, pod_set, resource);
                }
                Finding::NoFlavorMatches { pod_set, resource } => {
                    words.no_flavor_matches(ctx, pod_set, resource);
                }
                Finding::PodSetExceeds { pod_set, fr } => words.pod_set_exceeds(ctx, pod_set, fr),
                Finding::TogetherExceed { pod_set, group } => {
                    if !together_reported.contains(&group) {
                        together_reported.push(group);
                        words.together_exceed(ctx, pod_set, group);
                    }
                }
            }
        }
    }
}

/// What the messages of one workload's findings are made of.
struct Words<'a> {
    world: &'a World,
    quotas: &'a Quotas<'a>,
    /// The workload in the simulator's world, and in the profile.
    wl: usize,
    w: &'a Workload,
    sets: &'a [PodSet<'a>],
}

impl Words<'_> {
    fn cq(&self) -> usize {
        self.world.workloads[self.wl].cq
    }

    fn cq_name(&self) -> &str {
        &self.world.cqs[self.cq()].name
    }

    fn covers_pods(&self) -> bool {
        let cq = &self.world.cqs[self.cq()];
        cq.group_of
            .keys()
            .any(|&r| self.world.resources[r] == "pods")
    }

    /// What pod set `s` needs in total of `resource` (all its pods).
    fn demand(&self, s: &PodSet<'_>, resource: &str) -> Quantity {
        if resource == "pods" && self.covers_pods() {
            return Quantity::from_units(s.count);
        }
        s.request(resource).times(s.count)
    }

    fn not_covered(&self, ctx: &mut Ctx<'_>, pod_set: usize, resource: usize) {
        let Some(s) = self.sets.get(pod_set) else {
            return;
        };
        let r = &self.world.resources[resource];
        let cq = self.cq_name();
        ctx.report(
            &codes::NOT_COVERED,
            &s.resource_pointer(r),
            format!(
                "{} requests `{r}`, which ClusterQueue `{cq}` does not cover: Kueue never admits the workload",
                s.describe(),
            ),
            Some(format!(
                "add `{r}` to a resource group of ClusterQueue `{cq}` with a quota on a flavor, or remove the request"
            )),
        );
    }

    fn no_flavor_matches(&self, ctx: &mut Ctx<'_>, pod_set: usize, resource: usize) {
        let Some(s) = self.sets.get(pod_set) else {
            return;
        };
        let r = &self.world.resources[resource];
        let cq = &self.world.cqs[self.cq()];
        let spec = &self.world.workloads[self.wl].pod_sets[pod_set];
        let Some(&g) = cq.group_of.get(&resource) else {
            return;
        };
        // A group without a known flavor is RK102's finding: Kueue admits nothing through a
        // flavor that does not exist, and the cause is said there.
        if cq.groups[g].flavors.is_empty() {
            return;
        }
        let why: Vec<String> = cq.groups[g]
            .flavors
            .iter()
            .map(|&f| {
                let flavor = &self.world.flavors[f];
                let reason = flavor_mismatch(flavor, spec).unwrap_or_default();
                format!("flavor `{}`: {reason}", flavor.name)
            })
            .collect();
        let flavors = why.join("; ");
        // Topology-aware scheduling alone keeps every flavor from the pod set: RK184.
        if cq.groups[g]
            .flavors
            .iter()
            .all(|&f| only_tas_mismatch(&self.world.flavors[f], spec))
        {
            let asks = s.topology.map_or_else(
                || "asks for no topology".to_owned(),
                |t| format!("asks for `{}`", t.describe()),
            );
            let pointer = if s.topology.is_some() {
                s.pointer.at("topology")
            } else {
                s.pointer.clone()
            };
            ctx.report(
                &codes::TOPOLOGY_UNSERVED,
                &pointer,
                format!(
                    "{} {asks}, and no flavor of ClusterQueue `{}` for `{r}` can serve that ({flavors}): Kueue never admits the workload",
                    s.describe(),
                    cq.name,
                ),
                Some(
                    "give every resource the pod set requests (cpu and memory too) one topology-aware flavor whose Topology has the level, in one resource group; or ask for no topology on a queue whose flavors are not topology-aware"
                        .to_owned(),
                ),
            );
            return;
        }
        ctx.report(
            &codes::NOT_COVERED,
            &s.pointer,
            format!(
                "{} matches no flavor of ClusterQueue `{}` for `{r}` ({flavors}): Kueue never admits the workload",
                s.describe(),
                cq.name,
            ),
            Some(
                "tolerate the flavor's nodeTaints, or drop the nodeSelector entries that contradict its nodeLabels"
                    .to_owned(),
            ),
        );
    }

    fn pod_set_exceeds(&self, ctx: &mut Ctx<'_>, pod_set: usize, fr: Fr) {
        let Some(s) = self.sets.get(pod_set) else {
            return;
        };
        let r = self.world.resources[fr.resource].as_str();
        let flavor = &self.world.flavors[fr.flavor].name;
        let c = self.cq();
        let cq = self.cq_name();
        let need = self.demand(s, r);
        let cap = self.quotas.capacity(c, flavor, r);
        let per_pod = if r == "pods" {
            "1 pod".to_string()
        } else {
            format!("{} `{r}`", s.request(r))
        };
        let group = self.world.cqs[c].group_of.get(&fr.resource).copied();
        // Flavors Kueue skips for this pod set only because of topology-aware scheduling (a
        // TAS flavor on a queue that also has plain ones, and no request): say so, as raising
        // the quota of the flavor named would not be the fix.
        let spec = &self.world.workloads[self.wl].pod_sets[pod_set];
        let skipped: Vec<&str> = group
            .map(|g| self.world.cqs[c].groups[g].flavors.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|&f| &self.world.flavors[f])
            .filter(|f| only_tas_mismatch(f, spec))
            .map(|f| f.name.as_str())
            .collect();
        let others = if !skipped.is_empty() {
            format!(
                " (Kueue skips flavor(s) `{}` of its resource group: topology-aware, and the pod set asks for no topology on a queue that also has plain flavors)",
                skipped.join("`, `")
            )
        } else if group.is_some_and(|g| self.world.cqs[c].groups[g].flavors.len() > 1) {
            " (and no other flavor of its resource group fits it either)".to_owned()
        } else {
            String::new()
        };
        ctx.report(
            &codes::OVER_QUOTA,
            &s.resource_pointer(r),
            format!(
                "{} needs {} × {per_pod} = {need}, but ClusterQueue `{cq}` can never get more than {} of flavor `{flavor}` ({}){others}: the workload stays pending forever",
                s.describe(),
                s.count,
                cap.total,
                cap.explain
            ),
            Some(format!(
                "raise `{r}` of flavor `{flavor}` in ClusterQueue `{cq}` (nominalQuota, or borrowingLimit in a cohort) to at least {need}, or request less"
            )),
        );
    }

    /// The pod sets of one resource group that fit alone but not together: each resource of
    /// the group whose total over the workload exceeds what the group's flavors can ever give
    /// together, or, when none does (several flavors), the order Kueue assigns them in.
    fn together_exceed(&self, ctx: &mut Ctx<'_>, pod_set: usize, group: usize) {
        let c = self.cq();
        let cq_name = self.cq_name();
        let g = &self.world.cqs[c].groups[group];
        let w = self.w;
        let pointer = ptr![
            "workloads",
            self.sets.first().map_or(0, |s| s.index),
            "name"
        ];
        let mut reported = false;
        for &rid in &g.resources {
            let r = self.world.resources[rid].as_str();
            let touching: Vec<&PodSet<'_>> = self
                .sets
                .iter()
                .filter(|s| !self.demand(s, r).is_zero())
                .collect();
            let total = touching
                .iter()
                .fold(Quantity::zero(), |acc, s| acc.plus(self.demand(s, r)));
            let flavors: Vec<&str> = g
                .flavors
                .iter()
                .map(|&f| self.world.flavors[f].name.as_str())
                .collect();
            let cap_total = flavors.iter().fold(Quantity::zero(), |acc, f| {
                acc.plus(self.quotas.total(c, f, r))
            });
            if total.is_zero() || total <= cap_total {
                continue;
            }
            reported = true;
            let breakdown: Vec<String> = touching
                .iter()
                .map(|s| {
                    let name = s.kueue_name();
                    if r == "pods" {
                        format!("{name} {}", s.count)
                    } else {
                        format!("{name} {} × {}", s.count, s.request(r))
                    }
                })
                .collect();
            let explained: Vec<String> = flavors
                .iter()
                .map(|f| format!("flavor `{f}`: {}", self.quotas.capacity(c, f, r).explain))
                .collect();
            ctx.report(
                &codes::OVER_QUOTA,
                &pointer,
                format!(
                    "{} `{}` needs {total} `{r}` in total ({}), but ClusterQueue `{cq_name}` can never get more than {cap_total} ({}): the workload stays pending forever",
                    w.kind.as_str(),
                    w.name,
                    breakdown.join(", "),
                    explained.join("; ")
                ),
                Some(format!(
                    "raise the `{r}` quota of ClusterQueue `{cq_name}` to at least {total}, or make the workload smaller"
                )),
            );
        }
        if reported {
            return;
        }
        let Some(s) = self.sets.get(pod_set) else {
            return;
        };
        let flavors: Vec<String> = g
            .flavors
            .iter()
            .map(|&f| format!("`{}`", self.world.flavors[f].name))
            .collect();
        ctx.report(
            &codes::OVER_QUOTA,
            &s.pointer,
            format!(
                "{} fits a flavor of ClusterQueue `{cq_name}` alone, but Kueue gives each pod set one flavor of {} in pod-set order, and after the pod sets before it none has room left for it: the workload stays pending forever",
                s.describe(),
                flavors.join(", ")
            ),
            Some(format!(
                "raise the quotas of ClusterQueue `{cq_name}`, or make the pod sets smaller"
            )),
        );
    }
}
