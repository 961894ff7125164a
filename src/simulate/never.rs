//! Why a workload can never be admitted: its flavor assignment on an otherwise empty cluster
//! (`ExceedsMaxQuota` or `NoMatchingFlavor`, docs/simulate.md), pod set by pod set. `run` reports the first reason in
//! `End.neverAdmissible`; `check` asks for every finding (RK140, RK141), so the rules and the
//! simulator share one model of admission.
//!
//! The walk is `flavors::assign`'s without preemption (on an empty cluster nothing could be
//! preempted): pod sets in order, resources in order, each resource group once per pod set,
//! earlier pod sets' requests counting against later ones on the same flavor
//! (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/flavorassigner/flavorassigner.go`
//! `assignFlavors`). Kueue stops at the first pod set that fails; to report every finding this
//! walk goes on, without the usage of the pod sets that failed, so its first finding is
//! Kueue's reason.

use super::flavors::{NoFitReason, find_flavor};
use super::snapshot::{Snapshot, State};
use super::world::{Fr, FrMap, World, flavor_matches};

/// One reason a workload can never be admitted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Finding {
    /// Pod set `pod_set` requests `resource`, which no resource group of the ClusterQueue
    /// covers.
    NotCovered { pod_set: usize, resource: usize },
    /// No flavor of the resource group covering `resource` matches the pod set (taints,
    /// node selector).
    NoFlavorMatches { pod_set: usize, resource: usize },
    /// The pod set alone needs more of `fr` than the ClusterQueue can ever get of it: the
    /// first flavor of the group, in order, that falls short, and its first resource that does.
    PodSetExceeds { pod_set: usize, fr: Fr },
    /// The pod set fits a flavor alone, but not after the pod sets before it (Kueue gives
    /// each pod set one flavor per group, in order).
    TogetherExceed { pod_set: usize, group: usize },
}

impl Finding {
    /// The reason `End.neverAdmissible` gives.
    pub(crate) fn reason(&self) -> NoFitReason {
        match self {
            Self::NotCovered { .. } | Self::NoFlavorMatches { .. } => NoFitReason::NoMatchingFlavor,
            Self::PodSetExceeds { .. } | Self::TogetherExceed { .. } => {
                NoFitReason::ExceedsMaxQuota
            }
        }
    }
}

/// Per workload of the world, why it can never be admitted; empty when it can be. With `all`
/// false, each walk stops at the first finding (what `run` needs).
pub(crate) fn findings(world: &World, all: bool) -> Vec<Vec<Finding>> {
    let state = State::new(world);
    let mut snap = state.snapshot(world);
    (0..world.workloads.len())
        .map(|wl| explain(&mut snap, wl, all))
        .collect()
}

fn explain(snap: &mut Snapshot<'_>, wl: usize, all: bool) -> Vec<Finding> {
    let world = snap.world;
    let spec = &world.workloads[wl];
    let cq = &world.cqs[spec.cq];
    let none = FrMap::default();
    let mut assumed: FrMap<i128> = FrMap::default();
    let mut out = Vec::new();
    for (i, ps) in spec.pod_sets.iter().enumerate() {
        let mut failed = false;
        let mut usage: Vec<(Fr, i128)> = Vec::new();
        let mut groups_done: Vec<usize> = Vec::new();
        for &(resource, amount) in &ps.requests {
            let Some(&g) = cq.group_of.get(&resource) else {
                // Zero requests of resources the queue does not define are skipped (#8079).
                if amount != 0 {
                    failed = true;
                    out.push(Finding::NotCovered {
                        pod_set: i,
                        resource,
                    });
                    if !all {
                        return out;
                    }
                }
                continue;
            };
            if groups_done.contains(&g) {
                continue;
            }
            groups_done.push(g);
            let group = &cq.groups[g];
            let requests: Vec<(usize, i128)> = ps
                .requests
                .iter()
                .filter(|(r, _)| group.resources.contains(r))
                .copied()
                .collect();
            if let Ok(found) = find_flavor(snap, wl, i, &group.flavors, &requests, &assumed, false)
            {
                for &(r, v) in &requests {
                    if let Some(c) = found.get(&r) {
                        let fr = Fr {
                            flavor: c.flavor,
                            resource: r,
                        };
                        usage.push((fr, v));
                    }
                }
            } else {
                failed = true;
                let alone = find_flavor(snap, wl, i, &group.flavors, &requests, &none, false);
                out.push(if alone.is_ok() {
                    Finding::TogetherExceed {
                        pod_set: i,
                        group: g,
                    }
                } else {
                    shortfall(world, wl, i, &group.flavors, &requests)
                });
            }
            if failed && !all {
                return out;
            }
        }
        if !failed {
            for (fr, v) in usage {
                *assumed.entry(fr).or_insert(0) += v;
            }
        }
    }
    out
}

/// A pod set that fits no flavor of its group alone: the first matching flavor, in order,
/// with a resource the ClusterQueue can never get enough of, and that resource; else no flavor
/// matches it at all.
fn shortfall(
    world: &World,
    wl: usize,
    pod_set: usize,
    flavors: &[usize],
    requests: &[(usize, i128)],
) -> Finding {
    let spec = &world.workloads[wl];
    for &f in flavors {
        if !flavor_matches(&world.flavors[f], &spec.pod_sets[pod_set]) {
            continue;
        }
        for &(resource, amount) in requests {
            let fr = Fr {
                flavor: f,
                resource,
            };
            if amount > super::quota::potential(world, spec.cq, fr) {
                return Finding::PodSetExceeds { pod_set, fr };
            }
        }
    }
    Finding::NoFlavorMatches {
        pod_set,
        resource: requests.first().map_or(0, |r| r.0),
    }
}
