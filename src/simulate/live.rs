//! The simulator's world from a live cluster's Workloads (`build`), and why each pending one
//! waits (`explain`): its place in its ClusterQueue, what it asks of each flavor against
//! what is free now, whether it could ever be admitted (the `never` walk the checks use for
//! RK140/RK141), and what would unblock it.
//!
//! The queues are the profile's, not the cluster's: `check --state` reports where the two
//! differ. Admitted Workloads hold the quota of the flavors in their `status.admission`
//! (kubernetes-sigs/kueue@v0.19.2 `apis/kueue/v1beta2/workload_types.go` `Admission`,
//! `PodSetAssignment.flavors`), counted as the simulator counts requests (count × per pod).

use super::flavors::{self, Mode};
use super::never::{self, Finding};
use super::scenario::Scenario;
use super::snapshot::{Running, State};
use super::world::{
    Adder, Fr, FrMap, Interner, PodSetSpec, Submissions, TasAsk, World, queues_world, totals,
};
use crate::facts::counted::QuotaView;
use crate::profile::{Profile, Quantity, Toleration};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// One pod set of a live Workload: `count` pods, each with `requests`.
#[derive(Clone, Debug)]
pub(crate) struct LivePodSet {
    pub(crate) name: String,
    pub(crate) count: u64,
    pub(crate) requests: BTreeMap<String, Quantity>,
    pub(crate) node_selector: BTreeMap<String, String>,
    pub(crate) tolerations: Vec<Toleration>,
}

/// A live Workload as the simulator needs it.
#[derive(Clone, Debug)]
pub(crate) struct LiveWorkload {
    pub(crate) namespace: String,
    pub(crate) name: String,
    /// `spec.queueName`: a LocalQueue in `namespace`.
    pub(crate) queue: String,
    pub(crate) priority: i64,
    /// Seconds of `metadata.creationTimestamp` since the earliest one of the snapshot.
    pub(crate) created: u64,
    pub(crate) pod_sets: Vec<LivePodSet>,
    /// When it holds quota (`QuotaReserved`): per pod set, resource → flavor.
    pub(crate) admitted: Option<BTreeMap<String, BTreeMap<String, String>>>,
    /// `spec.active` is not `false`: a deactivated Workload is not in any queue.
    pub(crate) active: bool,
    /// Seconds of run time the forecast assumes once admitted (`forecast`), and where that
    /// comes from.
    pub(crate) run_for: u64,
    pub(crate) run_source: String,
    /// For an admitted Workload, the seconds it still runs from the snapshot's time.
    pub(crate) remaining: Option<u64>,
    /// For an admitted Workload, when its quota was reserved, on the `created` clock.
    pub(crate) reserved_at: u64,
}

impl LiveWorkload {
    /// `namespace/name`, how the world names it.
    pub(crate) fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

/// The world of the profile's queues with the live Workloads on them, and per live Workload
/// its index in the world (`None`: its LocalQueue is not the profile's). A scenario given
/// with the snapshot's time adds its submissions that many seconds on, named
/// `namespace/name` as the live ones are (`simulate --state --scenario`).
pub(crate) fn build(
    profile: &Profile,
    live: &[LiveWorkload],
    scenario: Option<(&Scenario, u64)>,
) -> (World, Vec<Option<usize>>) {
    let mut resources = Interner::default();
    let mut world = queues_world(profile, &mut resources);
    let mut adder = Adder::new(&mut resources);
    if let Some((scenario, now)) = scenario {
        let prefix = format!("{}/", profile.namespace);
        Submissions {
            queues_profile: profile,
            profile,
            scenario,
            offset: now,
            prefix: &prefix,
        }
        .add(&mut world, &mut adder, &mut resources);
    }
    // Kueue counts a live pod's requests as it counts a profile's: exclusions and
    // transformations first.
    let view = QuotaView::new(profile);
    let mut cq_of_local: HashMap<(&str, &str), usize> = HashMap::new();
    if let Some(q) = profile.queues.as_ref() {
        for l in &q.local_queues {
            let ns = l.namespace.as_ref().unwrap_or(&profile.namespace);
            if let Some(cq) = q
                .cluster_queues
                .iter()
                .position(|c| c.name == l.cluster_queue)
            {
                cq_of_local.insert((ns.as_str(), l.name.as_str()), cq);
            }
        }
    }
    for w in live {
        let Some(&cq) = cq_of_local.get(&(w.namespace.as_str(), w.queue.as_str())) else {
            continue;
        };
        let pod_sets = w
            .pod_sets
            .iter()
            .map(|ps| {
                let counted = view.apply(&ps.requests);
                let (requests, spelling) = totals(
                    &mut resources,
                    ps.count,
                    &mut counted.iter().map(|(k, v)| (k.as_str(), *v)),
                );
                PodSetSpec {
                    name: ps.name.clone(),
                    count: ps.count,
                    requests,
                    spelling,
                    node_selector: ps.node_selector.clone(),
                    tolerations: ps.tolerations.clone(),
                    // The snapshot does not read a Workload's `topologyRequest`: every flavor
                    // may serve it, so a live workload is never called inadmissible for TAS.
                    tas: TasAsk::Any,
                }
            })
            .collect();
        let spec = adder.spec(
            &world.cqs,
            w.key(),
            cq,
            w.priority,
            (w.created, w.run_for.max(1)),
            pod_sets,
        );
        world.workloads.push(spec);
    }
    world.workloads.sort_by(|a, b| a.name.cmp(&b.name));
    world.resources = resources.names;
    world.index();
    let index = world.by_name();
    let map = live
        .iter()
        .map(|w| index.get(w.key().as_str()).copied())
        .collect();
    (world, map)
}

/// The usage an admitted Workload holds: each pod set's totals on the flavors its admission
/// names (a resource its admission leaves out holds nothing).
fn held(
    world: &World,
    wl: usize,
    flavors: &BTreeMap<String, BTreeMap<String, String>>,
) -> FrMap<i128> {
    let mut usage = FrMap::default();
    for ps in &world.workloads[wl].pod_sets {
        let Some(assigned) = flavors.get(&ps.name) else {
            continue;
        };
        for &(resource, amount) in &ps.requests {
            let Some(f) = assigned
                .get(&world.resources[resource])
                .and_then(|name| world.flavors.iter().position(|f| &f.name == name))
            else {
                continue;
            };
            *usage
                .entry(Fr {
                    flavor: f,
                    resource,
                })
                .or_insert(0) += amount;
        }
    }
    usage
}

/// The state of the cluster: every admitted live Workload holding its quota.
pub(super) fn state_of(world: &World, live: &[LiveWorkload], map: &[Option<usize>]) -> State {
    let mut state = State::new(world);
    for (w, &i) in live.iter().zip(map) {
        if let (Some(wl), Some(flavors)) = (i, &w.admitted) {
            let usage = held(world, wl, flavors);
            state.admit(
                world,
                wl,
                Running {
                    admitted_at: w.reserved_at,
                    ends: u64::MAX,
                    usage,
                },
            );
        }
    }
    state
}

/// What a pending Workload asks of one resource, and what each flavor it may use has free.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Ask {
    pub(crate) pod_set: String,
    pub(crate) resource: String,
    /// count × per pod.
    pub(crate) request: String,
    pub(crate) flavors: Vec<FlavorRoom>,
}

/// One flavor's room for a request: quota, usage and what the ClusterQueue can take now.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FlavorRoom {
    pub(crate) flavor: String,
    pub(crate) nominal: String,
    pub(crate) used: String,
    /// What the ClusterQueue can use now, borrowing from its cohort included.
    pub(crate) available: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) borrowing_limit: Option<String>,
    /// Why the pod set may not use this flavor at all (taints, node selector).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mismatch: Option<String>,
    pub(crate) fits: bool,
}

/// One thing that keeps a Workload pending.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Blocker {
    /// `Quota`, `BorrowingLimit`, `WorkloadsAhead`, `NeverAdmissible`, `StoppedQueue`,
    /// `AdmissionCheck`, `Inactive`.
    pub(crate) kind: &'static str,
    pub(crate) message: String,
}

/// How many of the Workloads ahead an explanation names (`position` counts them all): every
/// one would make the explanations of a queue of n pending Workloads n²/2 names long (a queue
/// of 10,000: 50 million).
pub(crate) const AHEAD_LISTED: usize = 10;

/// Why one pending Workload waits.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Explanation {
    pub(crate) workload: String,
    pub(crate) local_queue: String,
    pub(crate) cluster_queue: String,
    pub(crate) priority: i64,
    /// 1 for the head of its ClusterQueue, in Kueue's order (priority, then creation time);
    /// 0 when it is in no queue: it holds quota and waits for its admission checks, or it is
    /// deactivated (an `Inactive` blocker).
    pub(crate) position: usize,
    /// The first `AHEAD_LISTED` Workloads ahead of it, in Kueue's order.
    pub(crate) ahead: Vec<String>,
    pub(crate) asks: Vec<Ask>,
    /// Whether its requests fit what is free now (on the flavors Kueue would assign).
    pub(crate) fits_now: bool,
    /// `ExceedsMaxQuota` / `NoMatchingFlavor` when it can never be admitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) never_admissible: Option<&'static str>,
    pub(crate) blockers: Vec<Blocker>,
    pub(crate) unblock: Vec<String>,
}

impl Explanation {
    /// Deactivated (`spec.active: false`): in no queue, whatever else it shows.
    fn is_inactive(&self) -> bool {
        self.blockers.iter().any(|b| b.kind == "Inactive")
    }
}

/// Where a ClusterQueue's quota of a flavor/resource is written in the profile.
fn quota_path(profile: &Profile, cq: usize, flavor: &str, resource: &str) -> String {
    let base = format!("queues.clusterQueues[{cq}]");
    let Some(spec) = profile
        .queues
        .as_ref()
        .and_then(|q| q.cluster_queues.get(cq))
    else {
        return base;
    };
    for (g, group) in spec.resource_groups.iter().enumerate() {
        for (j, f) in group.flavors.iter().enumerate() {
            if f.name.as_str() != flavor {
                continue;
            }
            if let Some(k) = f.resources.iter().position(|r| r.name.as_str() == resource) {
                return format!("{base}.resourceGroups[{g}].flavors[{j}].resources[{k}]");
            }
        }
    }
    base
}

/// Explain the pending Workloads `pending` (world indices) of the live state.
pub(crate) fn explain(
    profile: &Profile,
    world: &World,
    live: &[LiveWorkload],
    map: &[Option<usize>],
    pending: &[usize],
) -> Vec<Explanation> {
    let state = state_of(world, live, map);
    let explainer = Explainer::new(profile, world, live, map, &state);
    // Each pending Workload is explained on its own against the same state: on all cores
    // (10,000 of them were a fifth of `explain`'s time on one), each task with its own copy
    // of the state (its preemption memo is not shared between threads).
    if !crate::base::par::wide(pending.len()) {
        return pending
            .iter()
            .map(|&wl| explainer.one(&state, wl))
            .collect();
    }
    let size = pending.len().div_ceil(4 * rayon::current_num_threads());
    let tasks: Vec<(State, &[usize])> = pending
        .chunks(size)
        .map(|chunk| (state.clone(), chunk))
        .collect();
    crate::base::par::map(true, tasks, |(state, chunk)| {
        chunk
            .iter()
            .map(|&wl| explainer.one(&state, wl))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// A waiting Workload's place in Kueue's order: priority, then creation time; the world is
/// sorted by name, so an index breaks ties by name.
fn queue_order(world: &World, wl: usize) -> (std::cmp::Reverse<i64>, u64, usize) {
    let w = &world.workloads[wl];
    (std::cmp::Reverse(w.priority), w.submit_at, wl)
}

/// What every pending Workload's explanation reads, worked out once for all of them.
struct Explainer<'a> {
    profile: &'a Profile,
    world: &'a World,
    never: Vec<Vec<Finding>>,
    /// Per Workload, whether it is active (`spec.active`).
    active: Vec<bool>,
    /// Each ClusterQueue's waiting Workloads in Kueue's order (`queue_order`).
    queue_of: Vec<Vec<usize>>,
}

impl<'a> Explainer<'a> {
    fn new(
        profile: &'a Profile,
        world: &'a World,
        live: &[LiveWorkload],
        map: &[Option<usize>],
        state: &State,
    ) -> Self {
        let never = never::findings(world, true);
        let mut active = vec![true; world.workloads.len()];
        for (w, &i) in live.iter().zip(map) {
            if let Some(wl) = i {
                active[wl] = w.active;
            }
        }
        let waiting: Vec<usize> = (0..world.workloads.len())
            .filter(|&wl| state.running[wl].is_none() && active[wl])
            .collect();
        // A Workload's position is its place in its queue's list, found once, not by
        // comparing with every other.
        let mut queue_of: Vec<Vec<usize>> = vec![Vec::new(); world.cqs.len()];
        for &wl in &waiting {
            queue_of[world.workloads[wl].cq].push(wl);
        }
        for q in &mut queue_of {
            q.sort_by_key(|&wl| queue_order(world, wl));
        }
        Explainer {
            profile,
            world,
            never,
            active,
            queue_of,
        }
    }

    /// `n` nanounits of resource `r`, spelled as Workload `wl` requests it.
    fn amount(&self, wl: usize, r: usize, n: i128) -> String {
        self.world.workloads[wl]
            .pod_sets
            .iter()
            .find_map(|p| p.spelling.get(&r))
            .copied()
            .unwrap_or_else(Quantity::zero)
            .with_nanos(n)
            .canonical()
    }

    /// Why Workload `wl` waits in `state`, and what would unblock it.
    fn one(&self, state: &State, wl: usize) -> Explanation {
        let world = self.world;
        let active = &self.active;
        let amount = |wl: usize, r: usize, n: i128| self.amount(wl, r, n);
        let spec = &world.workloads[wl];
        let cq = &world.cqs[spec.cq];
        let queue = &self.queue_of[spec.cq];
        // A deactivated Workload is in no queue, so nothing is ahead of it: Kueue's queue
        // manager refuses a Workload that is not admissible, and `spec.active: false` is not
        // (kueue@v0.19.2 pkg/cache/queue/manager.go `AddOrUpdateWorkloadWithoutLock`,
        // pkg/workload/workload.go `IsAdmissible` / `IsActive`).
        let ahead: &[usize] = if active[wl] {
            &queue[..queue.partition_point(|&o| queue_order(world, o) < queue_order(world, wl))]
        } else {
            &[]
        };
        let mut snap = state.snapshot(world);
        let assignment = flavors::assign(&mut snap, wl, false);
        let fits_now = assignment.mode == Mode::Fit;
        let asks = self.asks(state, wl);
        let mut blockers = Vec::new();
        let mut unblock = Vec::new();
        let findings = &self.never[wl];
        let never_admissible = findings.first().map(|f| f.reason().as_str());
        for f in findings {
            let (message, fix) = describe_finding(self.profile, world, wl, f, &amount);
            blockers.push(Blocker {
                kind: "NeverAdmissible",
                message,
            });
            unblock.push(fix);
        }
        if findings.is_empty() && !fits_now {
            quota_blockers(
                self.profile,
                world,
                (state, wl),
                &asks,
                &amount,
                (&mut blockers, &mut unblock),
            );
        }
        if !ahead.is_empty()
            && (fits_now || cq.strategy == crate::profile::QueueingStrategy::StrictFIFO)
        {
            blockers.push(self.workloads_ahead(spec.cq, ahead, fits_now));
        }
        if fits_now && ahead.is_empty() && active[wl] {
            unblock.push(
                "nothing in the queues: it fits what is free now; Kueue admits it in its next cycle (the snapshot may predate that)".into(),
            );
        }
        Explanation {
            workload: spec.name.clone(),
            local_queue: String::new(),
            cluster_queue: cq.name.clone(),
            priority: spec.priority,
            position: if active[wl] { ahead.len() + 1 } else { 0 },
            ahead: ahead
                .iter()
                .take(AHEAD_LISTED)
                .map(|&o| world.workloads[o].name.clone())
                .collect(),
            asks,
            fits_now,
            never_admissible,
            blockers,
            unblock,
        }
    }

    /// Per pod set and requested resource, each flavor's room for Workload `wl` in `state`.
    fn asks(&self, state: &State, wl: usize) -> Vec<Ask> {
        let world = self.world;
        let amount = |wl: usize, r: usize, n: i128| self.amount(wl, r, n);
        let spec = &world.workloads[wl];
        let cq = &world.cqs[spec.cq];
        let mut asks = Vec::new();
        for ps in &spec.pod_sets {
            for &(r, req) in &ps.requests {
                let Some(&g) = cq.group_of.get(&r) else {
                    continue;
                };
                let mut rooms = Vec::new();
                for &f in &cq.groups[g].flavors {
                    let fr = Fr {
                        flavor: f,
                        resource: r,
                    };
                    let q = cq.quota(fr);
                    let used = state.usage.of(spec.cq, fr);
                    let available = state.usage.available(world, spec.cq, fr);
                    let mismatch = super::world::flavor_mismatch(&world.flavors[f], ps);
                    let fits = mismatch.is_none() && req <= available;
                    rooms.push(FlavorRoom {
                        flavor: world.flavors[f].name.clone(),
                        nominal: amount(wl, r, q.nominal),
                        used: amount(wl, r, used),
                        available: amount(wl, r, available),
                        borrowing_limit: q.borrowing_limit.map(|b| amount(wl, r, b)),
                        mismatch,
                        fits,
                    });
                }
                asks.push(Ask {
                    pod_set: ps.name.clone(),
                    resource: world.resources[r].clone(),
                    request: amount(wl, r, req),
                    flavors: rooms,
                });
            }
        }
        asks
    }

    /// The `WorkloadsAhead` blocker: the Workloads `ahead` in ClusterQueue `cq`, and why they
    /// come first.
    fn workloads_ahead(&self, cq: usize, ahead: &[usize], fits_now: bool) -> Blocker {
        let world = self.world;
        let cq = &world.cqs[cq];
        let names: Vec<&str> = ahead
            .iter()
            .take(5)
            .map(|&o| world.workloads[o].name.as_str())
            .collect();
        let more = if ahead.len() > names.len() {
            format!(" and {} more", ahead.len() - names.len())
        } else {
            String::new()
        };
        let why = if fits_now {
            "Kueue admits them first"
        } else {
            "the ClusterQueue is StrictFIFO: its head blocks everything behind it"
        };
        Blocker {
            kind: "WorkloadsAhead",
            message: format!(
                "{} workload(s) ahead in ClusterQueue `{}`: {}{more} ({why})",
                ahead.len(),
                cq.name,
                names.join(", ")
            ),
        }
    }
}

/// The quota that is short now: per request, the flavor closest to fitting, and whether the
/// borrowing limit (not the cohort) is what stops it.
fn quota_blockers(
    profile: &Profile,
    world: &World,
    (state, wl): (&State, usize),
    asks: &[Ask],
    amount: &dyn Fn(usize, usize, i128) -> String,
    (blockers, unblock): (&mut Vec<Blocker>, &mut Vec<String>),
) {
    let spec = &world.workloads[wl];
    let cq = &world.cqs[spec.cq];
    for ps in &spec.pod_sets {
        for &(r, req) in &ps.requests {
            let Some(&g) = cq.group_of.get(&r) else {
                continue;
            };
            let usable: Vec<usize> = cq.groups[g]
                .flavors
                .iter()
                .copied()
                .filter(|&f| super::world::flavor_matches(&world.flavors[f], ps))
                .collect();
            let frs: Vec<(Fr, i128)> = usable
                .iter()
                .map(|&f| {
                    let fr = Fr {
                        flavor: f,
                        resource: r,
                    };
                    (fr, state.usage.available(world, spec.cq, fr))
                })
                .collect();
            if frs.iter().any(|&(_, a)| a >= req) || frs.is_empty() {
                continue;
            }
            let Some(&(fr, available)) = frs.iter().max_by_key(|(_, a)| *a) else {
                continue;
            };
            let flavor = &world.flavors[fr.flavor].name;
            let resource = &world.resources[r];
            let q = cq.quota(fr);
            let used = state.usage.of(spec.cq, fr);
            let without_limit = state.usage.available_with(
                world,
                spec.cq,
                fr,
                &super::world::QuotaSpec {
                    borrowing_limit: None,
                    ..q
                },
                used,
            );
            let short = req - available;
            let holders: Vec<&str> = state.by_cq[spec.cq]
                .iter()
                .filter(|&&o| {
                    state.running[o]
                        .as_ref()
                        .is_some_and(|run| run.usage.get(&fr).is_some_and(|&v| v > 0))
                })
                .take(5)
                .map(|&o| world.workloads[o].name.as_str())
                .collect();
            let path = quota_path(profile, spec.cq, flavor, resource);
            if q.borrowing_limit.is_some() && without_limit >= req {
                blockers.push(Blocker {
                    kind: "BorrowingLimit",
                    message: format!(
                        "pod set `{}` needs {} {resource} on flavor `{flavor}`; ClusterQueue `{}` uses {} of nominal {} and its borrowingLimit {} leaves {} (the cohort has more)",
                        ps.name,
                        amount(wl, r, req),
                        cq.name,
                        amount(wl, r, used),
                        amount(wl, r, q.nominal),
                        amount(wl, r, q.borrowing_limit.unwrap_or(0)),
                        amount(wl, r, available),
                    ),
                });
                unblock.push(format!(
                    "raise `{path}.borrowingLimit` by {} (or wait for its own workloads to finish)",
                    amount(wl, r, short)
                ));
            } else {
                let by = if holders.is_empty() {
                    " (held by other ClusterQueues of the cohort)".to_owned()
                } else {
                    format!(" (held by {})", holders.join(", "))
                };
                blockers.push(Blocker {
                    kind: "Quota",
                    message: format!(
                        "pod set `{}` needs {} {resource} on flavor `{flavor}`; ClusterQueue `{}` has {} free now: {} in use of nominal {}{by}",
                        ps.name,
                        amount(wl, r, req),
                        cq.name,
                        amount(wl, r, available),
                        amount(wl, r, used),
                        amount(wl, r, q.nominal),
                    ),
                });
                unblock.push(format!(
                    "{} more {resource} free on flavor `{flavor}`: when admitted workloads finish, or raise `{path}.nominalQuota`",
                    amount(wl, r, short)
                ));
            }
        }
    }
    let _ = asks;
}

/// A `never` finding in words, with its fix.
fn describe_finding(
    profile: &Profile,
    world: &World,
    wl: usize,
    f: &Finding,
    amount: &dyn Fn(usize, usize, i128) -> String,
) -> (String, String) {
    let spec = &world.workloads[wl];
    let cq = &world.cqs[spec.cq];
    let ps_name = |i: usize| spec.pod_sets.get(i).map_or("", |p| p.name.as_str());
    match f {
        Finding::NotCovered { pod_set, resource } => (
            format!(
                "pod set `{}` requests {}, which no resource group of ClusterQueue `{}` covers",
                ps_name(*pod_set),
                world.resources[*resource],
                cq.name
            ),
            format!(
                "add {} to a resource group of `queues.clusterQueues[{}]`, or drop the request",
                world.resources[*resource], spec.cq
            ),
        ),
        Finding::NoFlavorMatches { pod_set, resource } => (
            format!(
                "no flavor of ClusterQueue `{}` for {} matches pod set `{}` (taints, node selector)",
                cq.name,
                world.resources[*resource],
                ps_name(*pod_set)
            ),
            "tolerate the flavor's taints or fix the pod set's node selector".into(),
        ),
        Finding::PodSetExceeds { pod_set, fr } => {
            let request = spec.pod_sets[*pod_set]
                .requests
                .iter()
                .find(|(r, _)| *r == fr.resource)
                .map_or(0, |(_, v)| *v);
            let most = super::quota::potential(world, spec.cq, *fr);
            let flavor = &world.flavors[fr.flavor].name;
            let resource = &world.resources[fr.resource];
            (
                format!(
                    "pod set `{}` needs {} {resource} on flavor `{flavor}`; ClusterQueue `{}` can never get more than {}",
                    ps_name(*pod_set),
                    amount(wl, fr.resource, request),
                    cq.name,
                    amount(wl, fr.resource, most)
                ),
                format!(
                    "ask for at most {}, or raise `{}.nominalQuota` (and borrowingLimit) by {}",
                    amount(wl, fr.resource, most),
                    quota_path(profile, spec.cq, flavor, resource),
                    amount(wl, fr.resource, request - most)
                ),
            )
        }
        Finding::TogetherExceed { pod_set, .. } => (
            format!(
                "pod set `{}` fits a flavor alone but not beside the pod sets before it (Kueue gives each pod set one flavor per resource group)",
                ps_name(*pod_set)
            ),
            format!(
                "raise the quota of ClusterQueue `{}`, or make the workload smaller",
                cq.name
            ),
        ),
    }
}

/// The explanations as people read them.
pub(crate) fn render_human(list: &[Explanation]) -> String {
    let mut s = String::new();
    if list.is_empty() {
        s.push_str("no pending workloads\n");
    }
    for e in list {
        let _ = writeln!(
            s,
            "{}  (LocalQueue {}, ClusterQueue {}, priority {})",
            e.workload, e.local_queue, e.cluster_queue, e.priority
        );
        if e.is_inactive() {
            let _ = writeln!(
                s,
                "  position: none (deactivated, `spec.active: false`: in no queue)"
            );
        } else if e.position == 0 {
            let _ = writeln!(
                s,
                "  position: holds its quota (QuotaReserved), not yet Admitted"
            );
        } else {
            let _ = writeln!(
                s,
                "  position: {} in ClusterQueue {}",
                e.position, e.cluster_queue
            );
        }
        if !e.asks.is_empty() {
            let _ = writeln!(s, "  asks:");
        }
        for a in &e.asks {
            let rooms: Vec<String> = a
                .flavors
                .iter()
                .map(|f| match &f.mismatch {
                    Some(m) => format!("{}: not usable ({m})", f.flavor),
                    None => format!(
                        "{}: {} free ({} used of {}{}){}",
                        f.flavor,
                        f.available,
                        f.used,
                        f.nominal,
                        f.borrowing_limit
                            .as_ref()
                            .map_or_else(String::new, |b| format!(", borrowingLimit {b}")),
                        if f.fits { " fits" } else { "" }
                    ),
                })
                .collect();
            let _ = writeln!(
                s,
                "    {} {} ({}): {}",
                a.request,
                a.resource,
                a.pod_set,
                rooms.join("; ")
            );
        }
        let verdict = match e.never_admissible {
            Some(r) => format!("never admissible ({r})"),
            None if e.is_inactive() => "not queued until it is active again".into(),
            None if e.position == 0 => "waits for its admission checks".into(),
            None if e.fits_now => "fits what is free now".into(),
            None => "admissible once quota frees up".into(),
        };
        let _ = writeln!(s, "  verdict: {verdict}");
        if !e.blockers.is_empty() {
            let _ = writeln!(s, "  blocked by:");
            for b in &e.blockers {
                let _ = writeln!(s, "    [{}] {}", b.kind, b.message);
            }
        }
        if !e.unblock.is_empty() {
            let _ = writeln!(s, "  would unblock it:");
            for u in &e.unblock {
                let _ = writeln!(s, "    - {u}");
            }
        }
        s.push('\n');
    }
    s
}

/// Per resource, the flavor a pod set was admitted on (an `Admitted` event's).
type PodSetFlavors = BTreeMap<usize, usize>;

/// One pending Workload's forecast.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Eta {
    pub(crate) workload: String,
    pub(crate) cluster_queue: String,
    /// Seconds from the snapshot's time until Kueue would admit it (0: now); absent when it
    /// is not admitted within the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) admitted_in: Option<u64>,
    /// Resource → flavor of that admission.
    pub(crate) flavors: BTreeMap<String, String>,
    /// `ExceedsMaxQuota` / `NoMatchingFlavor`: it never will be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) never_admissible: Option<&'static str>,
    /// The run time assumed for it once admitted, in seconds, and where it comes from (a
    /// field of the Workload or its RayJob, `--run-time`, the scenario).
    pub(crate) run_for: u64,
    pub(crate) run_for_from: String,
    /// For a scenario's submission: seconds from the snapshot's time until it is submitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) submitted_in: Option<u64>,
}

/// Forecast from the snapshot: admitted Workloads hold their quota until their remaining run
/// time is over; pending ones are all in their queues at the snapshot's time, in Kueue's
/// order (priority, then creation time); a scenario's submissions come after; and the
/// simulator runs forward. `now` is the snapshot's time, in the workloads' clock (seconds
/// since the earliest creation).
pub(crate) fn forecast(
    world: &World,
    live: &[LiveWorkload],
    map: &[Option<usize>],
    now: u64,
    until: Option<u64>,
) -> Vec<Eta> {
    let mut start = super::Start {
        held: Vec::new(),
        at: now,
        absent: Vec::new(),
    };
    let mut pending = Vec::new();
    let mut source: HashMap<usize, &str> = HashMap::new();
    let mut is_live = vec![false; world.workloads.len()];
    for (w, &i) in live.iter().zip(map) {
        let Some(wl) = i else { continue };
        is_live[wl] = true;
        source.insert(wl, &w.run_source);
        match &w.admitted {
            Some(flavors) => {
                let left = w.remaining.unwrap_or(w.run_for).max(1);
                start.held.push(super::Held {
                    workload: wl,
                    usage: held(world, wl, flavors),
                    admitted_at: w.reserved_at,
                    ends: now + left,
                });
            }
            None if w.active => pending.push((wl, None)),
            None => start.absent.push(wl),
        }
    }
    // The scenario's submissions: every workload of the world no live one stands for.
    pending.extend(
        (0..world.workloads.len())
            .filter(|&wl| !is_live[wl])
            .map(|wl| (wl, Some(world.workloads[wl].submit_at.saturating_sub(now)))),
    );
    let outcome = super::run_from(world, &start, until.map(|u| now + u));
    let never = never::findings(world, false);
    let mut first: HashMap<usize, (u64, &[PodSetFlavors])> = HashMap::new();
    for e in &outcome.events {
        if let super::events::Event::Admitted {
            time,
            workload,
            flavors,
            ..
        } = e
        {
            first
                .entry(*workload)
                .or_insert((*time, flavors.as_slice()));
        }
    }
    let mut out: Vec<Eta> = pending
        .into_iter()
        .map(|(wl, submitted_in)| {
            let spec = &world.workloads[wl];
            let admitted = first.get(&wl);
            let mut flavors = BTreeMap::new();
            if let Some((_, per_set)) = admitted {
                for ps in *per_set {
                    for (&r, &f) in ps {
                        flavors.insert(world.resources[r].clone(), world.flavors[f].name.clone());
                    }
                }
            }
            Eta {
                workload: spec.name.clone(),
                cluster_queue: world.cqs[spec.cq].name.clone(),
                admitted_in: admitted.map(|(t, _)| t.saturating_sub(now)),
                flavors,
                never_admissible: never[wl].first().map(|f| f.reason().as_str()),
                run_for: spec.run_for,
                run_for_from: source
                    .get(&wl)
                    .copied()
                    .unwrap_or("scenario runFor")
                    .to_owned(),
                submitted_in,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        (a.admitted_in.is_none(), a.admitted_in, &a.workload).cmp(&(
            b.admitted_in.is_none(),
            b.admitted_in,
            &b.workload,
        ))
    });
    out
}

/// The forecast as a table: when each waiting Workload would be admitted, on which flavors,
/// and the run time assumed once it is (with where that comes from).
pub(crate) fn render_forecast(list: &[Eta], assumption: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "assumption: {assumption}");
    let _ = writeln!(
        s,
        "{:<32} {:<20} {:>12}  {:<48}  RUNS FOR",
        "WORKLOAD", "CLUSTERQUEUE", "ADMITTED IN", "FLAVORS"
    );
    for e in list {
        let when = match (e.admitted_in, e.never_admissible) {
            (_, Some(r)) => format!("never ({r})"),
            (Some(0), None) => "now".to_owned(),
            (Some(t), None) => format!("{t}s"),
            (None, None) => "not in run".to_owned(),
        };
        let fl: Vec<String> = e.flavors.iter().map(|(r, f)| format!("{r}={f}")).collect();
        let submitted = e
            .submitted_in
            .map_or_else(String::new, |t| format!(", submitted in {t}s"));
        let _ = writeln!(
            s,
            "{:<32} {:<20} {:>12}  {:<48}  {}s ({}{submitted})",
            e.workload,
            e.cluster_queue,
            when,
            fl.join(", "),
            e.run_for,
            e.run_for_from,
        );
    }
    s
}
