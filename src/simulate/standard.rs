//! The standard scenarios behind `SUMMARY.md`'s "Queue behaviour" section, built from a profile
//! in memory and run through the simulator (the issue's "seed 000's table is computed, not
//! written"). Per ClusterQueue: step 1, the queue alone asks all it can ever get (nominal +
//! borrowing limit, or what its cohort lends); step 2, each cohort peer claims its nominal
//! quota; step 3, the queue asks its nominal quota again: all busy. A queue without a cohort
//! gets step 1 only.
//!
//! And, with the profile's own queued workloads (`from:`), which of them are admitted only by
//! borrowing and therefore cannot reclaim their queue's quota from a borrowing peer (RK146).
//!
//! Synthetic workloads are one pod set of one pod that tolerates every taint, asking on each
//! resource group's first flavor that has quota for the resource; their names contain `/`, so
//! they never collide with a workload of the profile.

use super::events::Event;
use super::scenario::{Scenario, ScenarioKind, ScenarioWorkload};
use super::world::{self, Fr, FrMap, WorkloadSpec, World};
use crate::facts::cohorts::CohortTree;
use crate::facts::{Quotas, pods};
use crate::profile::{
    Admission, ApiVersion, Dns1123Subdomain, Profile, Quantity, Queues, Toleration,
    TolerationOperator, Workload,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// When each step's submissions happen, in seconds.
pub(crate) const STEPS: [u64; 3] = [0, 60, 120];
/// Where the chart's bars of workloads still running stop.
pub(crate) const END: u64 = 180;
/// Longer than the scenario: nothing finishes, every change is admission or preemption.
const RUN_FOR: u64 = 3600;
/// At most this many standard scenarios (the first ClusterQueues in profile order): the
/// section stays readable, and a profile of 1000 queues is not simulated 1000 times on `gen`.
pub(crate) const MAX_RUNS: usize = 16;
/// RK146's contested scenario and the summary's step 2 let at most this many peers (in profile
/// order) take their share: one peer without a borrowing limit already takes every lendable
/// quota, and the cost of a run grows with its workloads.
pub(crate) const MAX_PEERS: usize = 16;

/// One row of the table: one ClusterQueue after one step.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    pub(crate) step: usize,
    pub(crate) cq: String,
    pub(crate) holds: String,
    pub(crate) borrowed: String,
    pub(crate) happened: String,
    /// With fair sharing on: the queue's weighted share after the step (Kueue's
    /// `status.fairSharing.weightedShare`; `∞` for a weight-0 queue that borrows).
    pub(crate) share: Option<String>,
}

/// One bar of the chart: a workload holding quota from `start` to `end`.
#[derive(Clone, Debug)]
pub(crate) struct Bar {
    pub(crate) cq: String,
    pub(crate) workload: String,
    pub(crate) holds: String,
    pub(crate) start: u64,
    pub(crate) end: u64,
    /// Ended by preemption (else still running at [`END`]).
    pub(crate) preempted: bool,
}

/// The standard scenario of one ClusterQueue (`first`) and its cohort peers.
#[derive(Clone, Debug)]
pub(crate) struct Run {
    pub(crate) first: String,
    pub(crate) cohort: Option<String>,
    /// The resource the table counts: the first covered resource whose name has `gpu`, else
    /// the first resource `first` covers.
    pub(crate) resource: String,
    pub(crate) rows: Vec<Row>,
    /// In the order of the queues, then of admission.
    pub(crate) bars: Vec<Bar>,
    /// "Kueue preempts whole workloads" sentences, one per borrowing workload preempted.
    pub(crate) whole_workload: Vec<String>,
}

/// A queued workload of the profile admitted only by borrowing, which waits while a peer
/// borrows its queue's quota.
#[derive(Clone, Debug)]
pub(crate) struct Unreclaimable {
    /// Index in the profile's `workloads`.
    pub(crate) index: usize,
    pub(crate) name: String,
    pub(crate) cq: String,
    /// (resource, what it asks, its queue's nominal quota on the flavor it gets).
    pub(crate) over: Vec<(String, String, String)>,
    /// The peers that borrowed while it waited.
    pub(crate) peers: Vec<String>,
}

impl Unreclaimable {
    pub(crate) fn message(&self) -> String {
        let over: Vec<String> = self
            .over
            .iter()
            .map(|(r, asks, nominal)| format!("{r}: asks {asks}, nominal quota {nominal}"))
            .collect();
        let peers: Vec<String> = self.peers.iter().map(|p| format!("`{p}`")).collect();
        format!(
            "`{}` fits `{}` only by borrowing ({}): under classic preemption Kueue reclaims cohort quota only for a workload that fits its queue's nominal quota, so while {} borrows `{}`'s quota, `{}` waits instead of reclaiming it",
            self.name,
            self.cq,
            over.join("; "),
            peers.join(", "),
            self.cq,
            self.name
        )
    }
}

/// The standard scenarios of the profile's first [`MAX_RUNS`] ClusterQueues (that cover some
/// resource), in ClusterQueue order, and how many queues were left out; empty without queues.
pub(crate) fn runs(profile: &Profile) -> (Vec<Run>, usize) {
    let Some(queues) = profile.queues.as_ref() else {
        return (Vec::new(), 0);
    };
    let quotas = Quotas::new(queues);
    let cqs = &queues.cluster_queues;
    // The profile's world is built once; each run adds its synthetic workloads to a copy.
    let base = world_with(profile, Vec::new());
    let one = |&c: &usize| {
        // Step 2 lets at most [`MAX_PEERS`] peers (in profile order) of its Cohort tree claim
        // their nominal quota: enough to show reclamation, and a large cohort stays cheap to
        // summarize (1,000 teams in one cohort would otherwise simulate 16 × 1,000 workloads).
        let peers: Vec<usize> = quotas.tree.peers(c).into_iter().take(MAX_PEERS).collect();
        run_one(profile, &base, &quotas, c, &peers)
    };
    // On other cores, the queues run [`MAX_RUNS`] at a time; one at a time, no run is made
    // that the limit then drops.
    let wide = crate::base::par::wide(profile.items());
    let batch = if wide { MAX_RUNS } else { 1 };
    let mut out = Vec::new();
    let all: Vec<usize> = (0..cqs.len()).collect();
    for (b, chunk) in all.chunks(batch).enumerate() {
        for (i, run) in crate::base::par::map(wide, chunk, one)
            .into_iter()
            .enumerate()
        {
            if out.len() == MAX_RUNS {
                return (out, cqs.len() - (b * batch + i));
            }
            out.extend(run);
        }
    }
    (out, 0)
}

/// The workload a synthetic submission asks for: (resource → total, spelling) over each
/// resource group's first flavor with quota for the resource.
fn synthetic(
    profile: &Profile,
    world: &World,
    quotas: &Quotas<'_>,
    c: usize,
    max: bool,
) -> Vec<(usize, Quantity)> {
    let Some(cq) = profile
        .queues
        .as_ref()
        .and_then(|q| q.cluster_queues.get(c))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for g in &cq.resource_groups {
        for r in &g.covered_resources {
            let quota = g.flavors.iter().find_map(|f| {
                f.resources
                    .iter()
                    .find(|q| q.name == *r)
                    .map(|q| (f.name.as_str(), q))
            });
            let Some((flavor, q)) = quota else { continue };
            let amount = if max {
                quotas.total(c, flavor, r)
            } else {
                q.nominal_quota
            };
            let Some(id) = world.resources.iter().position(|n| n == r.as_str()) else {
                continue;
            };
            if !amount.is_zero() && !out.iter().any(|(i, _)| *i == id) {
                out.push((id, amount));
            }
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out
}

fn push_synthetic(
    world: &mut World,
    name: String,
    cq: usize,
    submit_at: u64,
    requests: &[(usize, Quantity)],
) {
    let class = world
        .workloads
        .iter()
        .map(|w| w.class + 1)
        .max()
        .unwrap_or(0);
    world.workloads.push(WorkloadSpec {
        name,
        cq,
        priority: 0,
        submit_at,
        run_for: RUN_FOR,
        pod_sets: vec![world::PodSetSpec {
            name: "main".to_owned(),
            count: 1,
            requests: requests.iter().map(|(r, q)| (*r, q.nanos())).collect(),
            spelling: requests.iter().copied().collect(),
            node_selector: BTreeMap::new(),
            // A stand-in for "a workload of this queue": it may use every flavor.
            tolerations: vec![Toleration {
                key: None,
                operator: TolerationOperator::Exists,
                value: None,
                effect: None,
                toleration_seconds: None,
            }],
            tas: world::TasAsk::Any,
        }],
        class,
    });
}

/// The world of the profile with `workloads` (from the profile) and no synthetic one yet.
fn world_with(profile: &Profile, workloads: Vec<ScenarioWorkload>) -> World {
    let scenario = Scenario {
        api_version: ApiVersion::V1Alpha1,
        kind: ScenarioKind::Scenario,
        name: "standard".to_owned(),
        description: None,
        workloads,
    };
    world::build(profile, &scenario)
}

/// Kept name order after synthetic workloads are added (the simulator relies on it).
fn sort(world: &mut World) {
    world.workloads.sort_by(|a, b| a.name.cmp(&b.name));
}

/// A workload's total request of resource `r`, in nano-units.
fn total_of(world: &World, wl: usize, r: usize) -> i128 {
    world.workloads[wl]
        .pod_sets
        .iter()
        .flat_map(|p| &p.requests)
        .filter(|(res, _)| *res == r)
        .map(|(_, n)| n)
        .sum()
}

/// An amount of resource `r` in the spelling one of the world's workloads wrote it in.
fn show(world: &World, r: usize, nanos: i128) -> String {
    world
        .workloads
        .iter()
        .find_map(|w| w.pod_sets.iter().find_map(|p| p.spelling.get(&r)))
        .copied()
        .unwrap_or_else(Quantity::zero)
        .with_nanos(nanos)
        .canonical()
}

/// ClusterQueue `cq`'s nominal quota of resource `r`, over all its flavors.
fn nominal_of(world: &World, cq: usize, r: usize) -> i128 {
    (0..world.flavors.len())
        .map(|f| {
            world.cqs[cq]
                .quota(Fr {
                    flavor: f,
                    resource: r,
                })
                .nominal
        })
        .sum()
}

fn run_one(
    profile: &Profile,
    base: &World,
    quotas: &Quotas<'_>,
    first: usize,
    peers: &[usize],
) -> Option<Run> {
    let mut world = base.clone();
    let cq_name = |c: usize| world.cqs[c].name.clone();
    let first_name = cq_name(first);
    let max = synthetic(profile, &world, quotas, first, true);
    if max.is_empty() {
        return None;
    }
    // The resource the table counts.
    let members: Vec<usize> = std::iter::once(first)
        .chain(peers.iter().copied())
        .collect();
    let covered: Vec<usize> = members
        .iter()
        .flat_map(|&c| world.cqs[c].groups.iter().flat_map(|g| g.resources.clone()))
        .collect();
    let resource = covered
        .iter()
        .copied()
        .find(|&r| world.resources[r].contains("gpu"))
        .unwrap_or(max[0].0);
    let mut nominals = Vec::new();
    for &p in peers {
        nominals.push((p, synthetic(profile, &world, quotas, p, false)));
    }
    let own_nominal = synthetic(profile, &world, quotas, first, false);
    push_synthetic(
        &mut world,
        format!("{first_name}/max"),
        first,
        STEPS[0],
        &max,
    );
    for (p, req) in &nominals {
        if !req.is_empty() {
            let name = format!("{}/nominal", world.cqs[*p].name);
            push_synthetic(&mut world, name, *p, STEPS[1], req);
        }
    }
    let steps = if peers.is_empty() { 1 } else { 3 };
    if steps == 3 && !own_nominal.is_empty() {
        let name = format!("{first_name}/nominal");
        push_synthetic(&mut world, name, first, STEPS[2], &own_nominal);
    }
    sort(&mut world);
    let outcome = super::run(&world, Some(END));
    Some(tabulate(
        &world,
        &outcome.events,
        &members,
        steps,
        resource,
        first_name,
        cohort_of(profile, quotas, first),
    ))
}

/// The cohort a standard scenario is about: the queue's own `cohortName`, or with Cohort
/// objects the root of its tree (its peers may hang anywhere below it).
fn cohort_of(profile: &Profile, quotas: &Quotas<'_>, c: usize) -> Option<String> {
    let queues = profile.queues.as_ref()?;
    if queues.cohorts.is_empty() {
        return queues.cluster_queues[c]
            .cohort_name
            .as_ref()
            .map(ToString::to_string);
    }
    quotas
        .tree
        .cq_root(c)
        .map(|r| quotas.tree.cohorts[r].name.to_owned())
}

/// Walk the events step by step: rows per queue after each step, bars, and the nuance.
fn tabulate(
    world: &World,
    events: &[Event],
    members: &[usize],
    steps: usize,
    resource: usize,
    first: String,
    cohort: Option<String>,
) -> Run {
    let amount = |n: i128| format!("{} {}", show(world, resource, n), world.resources[resource]);
    // Running workload → (since, borrowed of `resource` at admission).
    let mut running: BTreeMap<usize, (u64, i128)> = BTreeMap::new();
    let mut pending: BTreeSet<usize> = BTreeSet::new();
    let mut bars = Vec::new();
    let mut rows = Vec::new();
    let mut whole_workload = Vec::new();
    // What each running workload holds, for the shares.
    let mut held: BTreeMap<usize, FrMap<i128>> = BTreeMap::new();
    for (step, &t) in STEPS.iter().enumerate().take(steps) {
        let mut notes: HashMap<usize, Vec<String>> = HashMap::new();
        let mut touched = BTreeSet::new();
        for e in events.iter().filter(|e| e.time() == t) {
            match e {
                Event::Submitted { workload, .. } => {
                    pending.insert(*workload);
                }
                Event::Admitted {
                    workload,
                    borrowed,
                    flavors,
                    ..
                } => {
                    held.insert(*workload, usage_of(world, *workload, flavors));
                    let b = borrowed.get(&resource).copied().unwrap_or(0);
                    let again = touched.contains(workload);
                    pending.remove(workload);
                    touched.insert(*workload);
                    running.insert(*workload, (t, b));
                    let mut s = format!(
                        "`{}` {}",
                        world.workloads[*workload].name,
                        if again { "admitted again" } else { "admitted" }
                    );
                    if b > 0 {
                        let _ = write!(s, ", borrowing {}", amount(b));
                    }
                    notes
                        .entry(world.workloads[*workload].cq)
                        .or_default()
                        .push(s);
                }
                Event::Preempted {
                    workload,
                    by,
                    reason,
                    ..
                } => {
                    held.remove(workload);
                    let held = total_of(world, *workload, resource);
                    let (since, b) = running.remove(workload).unwrap_or((t, 0));
                    pending.insert(*workload);
                    touched.insert(*workload);
                    let name = &world.workloads[*workload].name;
                    let by_name = &world.workloads[*by].name;
                    let mut s = format!(
                        "`{name}` preempted by `{by_name}` ({}): gives back all {}",
                        reason.as_str(),
                        amount(held)
                    );
                    if b > 0 && b < held {
                        let _ =
                            write!(s, ", not just the {} it borrowed", show(world, resource, b));
                        whole_workload.push(format!(
                            "Kueue preempts whole workloads: `{name}` held {}, {} of them borrowed, and lost all {} when `{by_name}` claimed `{}`'s nominal quota — not just the {} it borrowed.",
                            amount(held),
                            show(world, resource, b),
                            show(world, resource, held),
                            world.cqs[world.workloads[*by].cq].name,
                            show(world, resource, b),
                        ));
                    }
                    let cq = world.workloads[*workload].cq;
                    notes.entry(cq).or_default().push(s);
                    bars.push(Bar {
                        cq: world.cqs[cq].name.clone(),
                        workload: name.clone(),
                        holds: amount(held),
                        start: since,
                        end: t,
                        preempted: true,
                    });
                }
                Event::Finished { .. } | Event::End { .. } => {}
            }
        }
        for &wl in &pending {
            // A workload preempted in this step: its line says so already.
            if touched.contains(&wl) {
                continue;
            }
            let what = if world.workloads[wl].submit_at == t {
                "submitted, waits"
            } else {
                "still waits"
            };
            notes
                .entry(world.workloads[wl].cq)
                .or_default()
                .push(format!("`{}` {what}", world.workloads[wl].name));
        }
        let shares = world
            .fair_sharing
            .is_some()
            .then(|| shares_of(world, &held));
        for &c in members {
            let holds: i128 = running
                .keys()
                .filter(|&&wl| world.workloads[wl].cq == c)
                .map(|&wl| total_of(world, wl, resource))
                .sum();
            let borrowed = (holds - nominal_of(world, c, resource)).max(0);
            rows.push(Row {
                step: step + 1,
                cq: world.cqs[c].name.clone(),
                holds: amount(holds),
                borrowed: if borrowed > 0 {
                    amount(borrowed)
                } else {
                    "–".to_owned()
                },
                happened: notes
                    .remove(&c)
                    .map_or_else(|| "–".to_owned(), |n| n.join("; ")),
                share: shares.as_ref().map(|s| s[c].clone()),
            });
        }
    }
    for (&wl, &(since, _)) in &running {
        let cq = world.workloads[wl].cq;
        bars.push(Bar {
            cq: world.cqs[cq].name.clone(),
            workload: world.workloads[wl].name.clone(),
            holds: amount(total_of(world, wl, resource)),
            start: since,
            end: END,
            preempted: false,
        });
    }
    let order = |c: &str| members.iter().position(|&m| world.cqs[m].name == c);
    bars.sort_by(|a, b| {
        (order(&a.cq), a.start, &a.workload).cmp(&(order(&b.cq), b.start, &b.workload))
    });
    Run {
        first,
        cohort,
        resource: world.resources[resource].clone(),
        rows,
        bars,
        whole_workload,
    }
}

/// What a workload holds once admitted on `flavors` (per pod set: resource → flavor).
fn usage_of(world: &World, wl: usize, flavors: &[BTreeMap<usize, usize>]) -> FrMap<i128> {
    let mut out = FrMap::default();
    for (ps, map) in world.workloads[wl].pod_sets.iter().zip(flavors) {
        for &(resource, amount) in &ps.requests {
            if let Some(&flavor) = map.get(&resource) {
                *out.entry(Fr { flavor, resource }).or_insert(0) += amount;
            }
        }
    }
    out
}

/// Each ClusterQueue's weighted share with the workloads of `held` admitted.
fn shares_of(world: &World, held: &BTreeMap<usize, FrMap<i128>>) -> Vec<String> {
    let mut state = super::snapshot::State::new(world);
    for (&wl, usage) in held {
        state.usage.add_all(world, world.workloads[wl].cq, usage);
    }
    let snap = state.snapshot(world);
    (0..world.cqs.len())
        .map(
            |c| match super::fair_sharing::weighted_share(&snap, super::quota::Node::Cq(c)) {
                i64::MAX => "∞".to_owned(),
                v => v.to_string(),
            },
        )
        .collect()
}

/// A resource total over a profile workload's pod sets is above every flavor's nominal quota
/// of its ClusterQueue: only those can need borrowing, so only those are simulated.
pub(crate) fn may_borrow(profile: &Profile, index: usize, c: usize) -> bool {
    let Some(cq) = profile
        .queues
        .as_ref()
        .and_then(|q| q.cluster_queues.get(c))
    else {
        return false;
    };
    let mut totals: BTreeMap<String, Quantity> = BTreeMap::new();
    for ps in pods::pod_sets(index, &profile.workloads[index]) {
        for (r, q) in &ps.requests {
            let t = totals.entry(r.clone()).or_insert_with(Quantity::zero);
            *t = t.plus(q.times(ps.count));
        }
    }
    totals.iter().any(|(r, total)| {
        let best = cq
            .resource_groups
            .iter()
            .flat_map(|g| &g.flavors)
            .flat_map(|f| &f.resources)
            .filter(|q| q.name.as_str() == r)
            .map(|q| q.nominal_quota)
            .max()
            .unwrap_or_else(Quantity::zero);
        *total > best
    })
}

/// The profile's queued workloads that are admitted only by borrowing and wait, instead of
/// reclaiming, while their cohort peers borrow their queue's quota.
///
/// Kueue v0.19.2 with classic preemption considers preemption for a flavor only when the
/// request fits the queue's nominal quota, unless `borrowWithinCohort` allows preempting while
/// borrowing (kubernetes-sigs/kueue@v0.19.2
/// `pkg/scheduler/flavorassigner/flavorassigner.go` `fitsResourceQuota`:
/// `rQuota.Nominal.Cmp(val) >= 0 || mayReclaimInHierarchy || a.canPreemptWhileBorrowing()`).
/// The simulator implements
/// that; this runs two scenarios per candidate: the workload alone (does it borrow?), then the
/// workload after each peer took all it can get (is it admitted?).
pub(crate) fn unreclaimable(profile: &Profile) -> Vec<Unreclaimable> {
    let Some(queues) = profile.queues.as_ref() else {
        return Vec::new();
    };
    // Each candidate runs on the profile trimmed to its queue and peers, with itself as the
    // only workload: the cost of a run does not grow with the rest of the profile.
    let mut base = profile.clone();
    base.workloads.clear();
    base.queues = None;
    let mut out = Vec::new();
    let by_name = pods::QueueIndex::new(profile);
    let tree = CohortTree::new(queues);
    // The scenario submits through a LocalQueue of the profile's namespace: per
    // ClusterQueue, the first such.
    let mut submit_via = std::collections::HashMap::new();
    for l in &queues.local_queues {
        if l.namespace.as_ref().is_none_or(|n| *n == profile.namespace) {
            submit_via.entry(l.cluster_queue.as_str()).or_insert(l);
        }
    }
    for (index, pw) in profile.workloads.iter().enumerate() {
        if !matches!(pw.admission(profile), Admission::Queued { .. }) {
            continue;
        }
        let Some((c, cq)) = by_name.cluster_queue_of(pw) else {
            continue;
        };
        if cq.cohort_name.is_none() {
            continue;
        }
        let Some(&lq) = submit_via.get(cq.name.as_str()) else {
            continue;
        };
        if !may_borrow(profile, index, c) {
            continue;
        }
        let mut members: Vec<usize> = tree.peers(c).into_iter().take(MAX_PEERS).collect();
        members.push(c);
        members.sort_unstable();
        let trimmed = trimmed_to(&base, queues, &members, pw);
        let submission = |at: u64| ScenarioWorkload {
            name: pw.name.to_string(),
            queue: Dns1123Subdomain(lq.name.to_string()),
            priority_class: None,
            priority: None,
            submit_at: at,
            run_for: RUN_FOR,
            pod_sets: None,
            from: Some(Dns1123Subdomain(pw.name.to_string())),
        };
        let tc = members.iter().position(|&m| m == c).unwrap_or(0);
        let Some((over, peers)) =
            waits_while_peers_borrow(&trimmed, tc, pw.name.as_str(), &submission)
        else {
            continue;
        };
        out.push(Unreclaimable {
            index,
            name: pw.name.to_string(),
            cq: cq.name.to_string(),
            over,
            peers,
        });
    }
    out
}

/// The profile `base` with only the ClusterQueues `members` (their LocalQueues, every Cohort)
/// and the one workload `pw`.
fn trimmed_to(base: &Profile, queues: &Queues, members: &[usize], pw: &Workload) -> Profile {
    let cqs = &queues.cluster_queues;
    let names: BTreeSet<&str> = members.iter().map(|&m| cqs[m].name.as_str()).collect();
    let mut trimmed = base.clone();
    trimmed.queues = Some(Queues {
        mode: queues.mode,
        cluster_queues: members.iter().map(|&m| cqs[m].clone()).collect(),
        local_queues: queues
            .local_queues
            .iter()
            .filter(|l| names.contains(l.cluster_queue.as_str()))
            .cloned()
            .collect(),
        // Every Cohort stays: the quota they hold is part of what the queue can borrow.
        cohorts: queues.cohorts.clone(),
    });
    trimmed.workloads = vec![pw.clone()];
    trimmed
}

/// The two scenarios on the `trimmed` profile, whose ClusterQueue `tc` holds the workload
/// `name` (`submission` at a time): alone, is it admitted by borrowing; contested, after every
/// peer took all it can get, does it wait while peers borrow? Then what it asks beyond its
/// queue's nominal quota, and the peers that borrow.
#[allow(clippy::type_complexity)]
fn waits_while_peers_borrow(
    trimmed: &Profile,
    tc: usize,
    name: &str,
    submission: &dyn Fn(u64) -> ScenarioWorkload,
) -> Option<(Vec<(String, String, String)>, Vec<String>)> {
    let tq = trimmed.queues.as_ref()?;
    let quotas = Quotas::new(tq);
    let peers: Vec<usize> = (0..tq.cluster_queues.len()).filter(|&i| i != tc).collect();
    // Alone: admitted, and borrowing?
    let alone = world_with(trimmed, vec![submission(0)]);
    let wl = alone.workloads.iter().position(|w| w.name == name)?;
    let events = super::run(&alone, Some(0)).events;
    // Never admitted: RK140's finding.
    let (flavors, borrowed) = events.iter().find_map(|e| match e {
        Event::Admitted {
            workload,
            flavors,
            borrowed,
            ..
        } if *workload == wl => Some((flavors.clone(), borrowed.clone())),
        _ => None,
    })?;
    if borrowed.is_empty() {
        return None;
    }
    // Contested: every peer first takes all it can get, then the workload comes.
    let mut world = world_with(trimmed, vec![submission(STEPS[1])]);
    for &p in &peers {
        let req = synthetic(trimmed, &world, &quotas, p, true);
        if !req.is_empty() {
            let name = format!("{}/max", world.cqs[p].name);
            push_synthetic(&mut world, name, p, STEPS[0], &req);
        }
    }
    sort(&mut world);
    let wl2 = world.workloads.iter().position(|w| w.name == name)?;
    let events = super::run(&world, Some(STEPS[1])).events;
    let Some(Event::End { running, .. }) = events.last() else {
        return None;
    };
    if running.contains(&wl2) {
        return None;
    }
    let borrowing = borrowing_peers(&world, &peers, running);
    if borrowing.is_empty() {
        return None;
    }
    let over = borrowed
        .keys()
        .map(|&r| {
            let flavor = flavors.iter().find_map(|m| m.get(&r).copied());
            let nominal = flavor.map_or(0, |f| {
                alone.cqs[tc]
                    .quota(Fr {
                        flavor: f,
                        resource: r,
                    })
                    .nominal
            });
            (
                alone.resources[r].clone(),
                show(&alone, r, total_of(&alone, wl, r)),
                show(&alone, r, nominal),
            )
        })
        .collect();
    Some((over, borrowing))
}

/// The peers that borrow at the end (the `running` workloads hold more than their nominal
/// quota of some resource): the quota the workload waits for.
fn borrowing_peers(world: &World, peers: &[usize], running: &[usize]) -> Vec<String> {
    peers
        .iter()
        .filter(|&&p| {
            world.resources.iter().enumerate().any(|(r, _)| {
                let held: i128 = running
                    .iter()
                    .filter(|&&w| world.workloads[w].cq == p)
                    .map(|&w| total_of(world, w, r))
                    .sum();
                held > nominal_of(world, p, r)
            })
        })
        .map(|&p| world.cqs[p].name.clone())
        .collect()
}
