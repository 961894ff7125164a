//! What the simulator runs on, built once from a checked profile and scenario: ClusterQueues
//! (resource groups, quotas, policies) and cohorts with names turned into indices, and the
//! workloads with their pod sets as Kueue counts them. A `from:` workload's pod sets come from
//! `facts::pods`, the model the admission rules use, so the two never disagree.

use super::scenario::{Scenario, ScenarioWorkload};
use crate::facts::cohorts::CohortTree;
use crate::facts::counted::QuotaView;
use crate::facts::pods;
use crate::profile::{
    BorrowWithinCohortPolicy, Dns1123Subdomain, FungibilityPolicy, FungibilityPreference,
    PreemptionStrategy, Profile, Quantity, QueueingStrategy, ReclaimWithinCohort, ResourceGroup,
    Taint, TaintEffect, Toleration, WithinClusterQueue, Workload,
};
use std::collections::{BTreeMap, HashMap};

pub(crate) use super::keys::{Fr, FrMap, QuotaSpec};
use super::tree::{CohortNode, QueueNode, Tables};

#[derive(Clone, Debug)]
pub struct Group {
    pub resources: Vec<usize>,
    pub flavors: Vec<usize>,
}

/// A ClusterQueue's `borrowWithinCohort` with a policy other than `Never`: it may preempt in
/// the cohort while it borrows, of workloads up to `maxPriorityThreshold` when one is set.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BorrowWhilePreempting {
    pub(crate) max_priority_threshold: Option<i32>,
}

#[derive(Clone, Debug)]
pub struct CqSpec {
    pub name: String,
    /// The Cohort the queue hangs in (its parent in the tree).
    pub cohort: Option<usize>,
    /// Its fair-sharing weight (Kueue's default 1 when unset).
    pub(crate) weight: f64,
    pub strategy: QueueingStrategy,
    pub(crate) within_cq: WithinClusterQueue,
    pub reclaim: ReclaimWithinCohort,
    /// `borrowWithinCohort` when its policy is not `Never`.
    pub(crate) borrow_within_cohort: Option<BorrowWhilePreempting>,
    pub(crate) when_can_borrow: FungibilityPolicy,
    pub(crate) when_can_preempt: FungibilityPolicy,
    pub preference: Option<FungibilityPreference>,
    pub groups: Vec<Group>,
    /// Resource → index in `groups`.
    pub(crate) group_of: HashMap<usize, usize>,
    pub(crate) quotas: FrMap<QuotaSpec>,
    /// `quotas` as a table, filled by `World::index` once the resources are known: every fit
    /// and preemption check reads it.
    pub table: QuotaTable,
    /// Topology-aware scheduling and admission checks.
    pub(crate) capacity: CqCapacity,
}

/// What of a ClusterQueue concerns capacity-aware admission: whether every flavor is
/// topology-aware (Kueue then implies TAS for pod sets that ask for none), and the admission
/// checks a workload waits for, each with the flavors it applies to (all when empty).
#[derive(Clone, Debug, Default)]
pub(crate) struct CqCapacity {
    pub(crate) tas_only: bool,
    pub(crate) admission_checks: Vec<(String, Vec<usize>)>,
}

impl CqSpec {
    /// The admission checks a workload assigned `flavors` waits for (kueue@v0.19.2
    /// `pkg/workload/admissionchecks.go`: a check applies when one of the workload's flavors is
    /// in its `onFlavors`, or it has none).
    pub(crate) fn checks_for(&self, flavors: impl Fn(usize) -> bool) -> Vec<&str> {
        self.capacity
            .admission_checks
            .iter()
            .filter(|(_, on)| on.is_empty() || on.iter().any(|&f| flavors(f)))
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

/// No quota: what a ClusterQueue has of a flavor/resource it does not list.
const NO_QUOTA: QuotaSpec = QuotaSpec {
    nominal: 0,
    borrowing_limit: None,
    lending_limit: None,
};

/// A ClusterQueue's quotas by (flavor, resource): the cell of a pair is flavor × width +
/// resource.
#[derive(Clone, Debug, Default)]
pub struct QuotaTable {
    width: usize,
    cells: Vec<QuotaSpec>,
}

impl CqSpec {
    pub(crate) fn quota(&self, fr: Fr) -> QuotaSpec {
        if fr.resource < self.table.width
            && let Some(q) = self
                .table
                .cells
                .get(fr.flavor * self.table.width + fr.resource)
        {
            return *q;
        }
        self.quotas.get(&fr).copied().unwrap_or(NO_QUOTA)
    }
}

impl World {
    /// Each workload's index by its name.
    pub(crate) fn by_name(&self) -> HashMap<&str, usize> {
        self.workloads
            .iter()
            .enumerate()
            .map(|(i, w)| (w.name.as_str(), i))
            .collect()
    }

    /// Fill each ClusterQueue's quota table and the Cohort tree's tables; call once the
    /// world's resources are final.
    pub(crate) fn index(&mut self) {
        let width = self.resources.len();
        let flavors = self
            .cqs
            .iter()
            .flat_map(|c| c.quotas.keys())
            .chain(self.cohorts.iter().flat_map(|c| c.quotas.keys()))
            .map(|fr| fr.flavor + 1)
            .max()
            .unwrap_or(0)
            .max(self.flavors.len());
        for cq in &mut self.cqs {
            let mut cells = vec![NO_QUOTA; flavors * width];
            for (fr, q) in &cq.quotas {
                if fr.resource < width {
                    cells[fr.flavor * width + fr.resource] = *q;
                }
            }
            cq.table = QuotaTable { width, cells };
        }
        let cqs: Vec<QueueNode<'_>> = self
            .cqs
            .iter()
            .map(|c| QueueNode {
                parent: c.cohort,
                quotas: &c.quotas,
            })
            .collect();
        let cohorts: Vec<CohortNode<'_>> = self
            .cohorts
            .iter()
            .map(|c| CohortNode {
                parent: c.parent,
                quotas: &c.quotas,
                child_cohorts: &c.child_cohorts,
                child_cqs: &c.child_cqs,
                height: c.height,
            })
            .collect();
        let tree = Tables::new(&cqs, &cohorts, width, flavors * width);
        self.tree = tree;
    }
}

#[derive(Clone, Debug)]
pub struct FlavorSpec {
    pub name: String,
    pub(crate) node_labels: BTreeMap<String, String>,
    pub(crate) node_taints: Vec<Taint>,
    pub tolerations: Vec<Toleration>,
    /// Its Topology's name and levels, when it is topology-aware (no levels: the Topology is
    /// not defined).
    pub(crate) topology: Option<(String, Vec<String>)>,
}

/// What a pod set asks of topology-aware scheduling, as Kueue's flavor assigner reads it
/// (kueue@v0.19.2 `pkg/scheduler/flavorassigner/tas_flavorassigner.go`
/// `checkPodSetAndFlavorMatchForTAS`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) enum TasAsk {
    /// No request: topology-aware flavors are skipped.
    #[default]
    None,
    /// Every flavor matches: TAS implied on a queue whose flavors are all topology-aware, or
    /// raykueue's synthetic workloads.
    Any,
    /// A request (`None` level: unconstrained, Kueue's lowest level): a flavor matches when its
    /// Topology has the level, or when it is not topology-aware and its resource group covers
    /// none of the pod's own requests (`quota_only`, flavor names); `raw`: the resources the
    /// pod itself requests.
    Explicit {
        level: Option<String>,
        raw: Vec<usize>,
        quota_only: Vec<String>,
    },
}

/// A pod set: `count` pods; requests are totals (count × per pod), as Kueue sums them.
#[derive(Clone, Debug)]
pub struct PodSetSpec {
    pub name: String,
    pub count: u64,
    /// Resource → total request, in resource order; zero requests kept (Kueue skips them).
    pub requests: Vec<(usize, i128)>,
    /// The quantity as written, for printing amounts of this resource in its spelling.
    pub spelling: HashMap<usize, Quantity>,
    pub(crate) node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
    pub(crate) tas: TasAsk,
}

#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    pub name: String,
    pub cq: usize,
    pub priority: i64,
    pub(crate) submit_at: u64,
    pub run_for: u64,
    pub pod_sets: Vec<PodSetSpec>,
    /// The scheduling equivalence class (Kueue's `SchedulingHash`: priority and the pod
    /// sets' names, counts, requests and scheduling constraints). Workloads of one class
    /// fail alike, so Kueue parks them together.
    pub class: usize,
}

/// A Cohort: its place in the tree, the quota it holds itself and its fair-sharing weight.
#[derive(Clone, Debug)]
pub(crate) struct CohortSpec {
    pub(crate) parent: Option<usize>,
    pub(crate) quotas: FrMap<QuotaSpec>,
    /// Kueue's default 1 for a Cohort object; 0 for an implicit one (always a root, where the
    /// weight plays no part).
    pub(crate) weight: f64,
    /// Children in name order (Kueue's order is a Go map's; see `docs/simulate.md`).
    pub(crate) child_cohorts: Vec<usize>,
    pub(crate) child_cqs: Vec<usize>,
    /// Kueue's `getNodeHeight`.
    pub(crate) height: u32,
}

#[derive(Clone, Debug)]
pub struct World {
    pub flavors: Vec<FlavorSpec>,
    pub resources: Vec<String>,
    pub cqs: Vec<CqSpec>,
    pub(crate) cohorts: Vec<CohortSpec>,
    /// Sorted by name, so that an index order is name order.
    pub workloads: Vec<WorkloadSpec>,
    /// Kueue's `fairSharing.preemptionStrategies` when fair sharing is on.
    pub(crate) fair_sharing: Option<Vec<PreemptionStrategy>>,
    /// What the tree's quotas come to, filled by `index`.
    pub(crate) tree: Tables,
}

#[derive(Default)]
pub(super) struct Interner {
    pub(super) names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Interner {
    pub(super) fn id(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_owned());
        self.index.insert(name.to_owned(), self.names.len() - 1);
        self.names.len() - 1
    }
}

/// The queues of a profile as the simulator sees them, before any workload: flavors,
/// ClusterQueues (in profile order, so an index is the profile's) and cohorts, with the
/// resources they name interned.
pub(super) fn queues_world(profile: &Profile, resources: &mut Interner) -> World {
    let flavors: Vec<FlavorSpec> = profile
        .flavors
        .iter()
        .map(|f| FlavorSpec {
            name: f.name.to_string(),
            node_labels: f
                .node_labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            node_taints: f.node_taints.clone(),
            tolerations: f.tolerations.clone(),
            topology: f.topology_name.as_ref().map(|t| {
                let levels = profile
                    .topologies
                    .iter()
                    .find(|x| x.name == *t)
                    .map(|x| x.levels.iter().map(ToString::to_string).collect())
                    .unwrap_or_default();
                (t.to_string(), levels)
            }),
        })
        .collect();
    let flavor_id: HashMap<&str, usize> = flavors
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    let mut cqs = Vec::new();
    let queues = profile.queues.as_ref();
    let tree = queues.map(CohortTree::new).unwrap_or_default();
    for (c, cq) in queues
        .map_or(&[][..], |q| q.cluster_queues.as_slice())
        .iter()
        .enumerate()
    {
        let (groups, group_of, quotas) =
            resource_groups(&cq.resource_groups, &flavor_id, resources);
        let preemption = cq.preemption.clone().unwrap_or_default();
        let ff = cq.flavor_fungibility.as_ref();
        let capacity = CqCapacity {
            tas_only: groups.iter().flat_map(|g: &Group| &g.flavors).count() > 0
                && groups
                    .iter()
                    .flat_map(|g| &g.flavors)
                    .all(|&f| flavors[f].topology.is_some()),
            admission_checks: cq
                .admission_checks
                .iter()
                .map(|c| {
                    let on = c
                        .on_flavors()
                        .iter()
                        .filter_map(|f| flavor_id.get(f.as_str()).copied())
                        .collect();
                    (c.name().to_owned(), on)
                })
                .collect(),
        };
        cqs.push(CqSpec {
            name: cq.name.to_string(),
            cohort: tree.cq_parent.get(c).copied().flatten(),
            weight: weight(cq.fair_sharing_weight),
            strategy: cq.queueing_strategy,
            within_cq: preemption.within_cluster_queue,
            reclaim: preemption.reclaim_within_cohort,
            borrow_within_cohort: preemption
                .borrow_within_cohort
                .as_ref()
                .filter(|b| b.policy != BorrowWithinCohortPolicy::Never)
                .map(|b| BorrowWhilePreempting {
                    max_priority_threshold: b.max_priority_threshold,
                }),
            // The ClusterQueue CRD's `flavorFungibility` defaults (kueue@v0.19.2
            // `config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml`).
            when_can_borrow: ff
                .and_then(|f| f.when_can_borrow)
                .unwrap_or(FungibilityPolicy::MayStopSearch),
            when_can_preempt: ff
                .and_then(|f| f.when_can_preempt)
                .unwrap_or(FungibilityPolicy::TryNextFlavor),
            preference: ff.and_then(|f| f.preference),
            groups,
            group_of,
            quotas,
            table: QuotaTable::default(),
            capacity,
        });
    }
    let cohorts = tree
        .cohorts
        .iter()
        .enumerate()
        .map(|(k, node)| {
            let (_, _, quotas) = resource_groups(
                node.spec.map_or(&[][..], |s| s.resource_groups.as_slice()),
                &flavor_id,
                resources,
            );
            CohortSpec {
                parent: node.parent,
                quotas,
                weight: node.spec.map_or(0.0, |s| weight(s.fair_sharing_weight)),
                child_cohorts: node.child_cohorts.clone(),
                child_cqs: node.child_cqs.clone(),
                height: tree.height(k),
            }
        })
        .collect();
    World {
        flavors,
        resources: Vec::new(),
        cqs,
        cohorts,
        workloads: Vec::new(),
        fair_sharing: profile
            .fair_sharing()
            .map(|f| f.preemption_strategies.clone()),
        tree: Tables::default(),
    }
}

/// A fair-sharing weight as Kueue reads it (`parseFairWeight`): 1 when unset; a quantity
/// turned into the nearest float (an exact ratio of two integers, as `AsFloat64Slow` gives
/// for decimal weights).
fn weight(w: Option<Quantity>) -> f64 {
    #[allow(clippy::cast_precision_loss)] // weights are small decimals
    w.map_or(1.0, |q| q.nanos() as f64 / 1e9)
}

/// Resource groups as the simulator keeps them: groups of resource and flavor indices,
/// resource → group, and the quota of each flavor/resource.
fn resource_groups(
    list: &[ResourceGroup],
    flavor_id: &HashMap<&str, usize>,
    resources: &mut Interner,
) -> (Vec<Group>, HashMap<usize, usize>, FrMap<QuotaSpec>) {
    let mut groups = Vec::new();
    let mut group_of = HashMap::new();
    let mut quotas = FrMap::default();
    for g in list {
        let res: Vec<usize> = g
            .covered_resources
            .iter()
            .map(|r| resources.id(r))
            .collect();
        let mut fl = Vec::new();
        for f in &g.flavors {
            // An unknown flavor is RK102; Kueue admits nothing through it.
            let Some(&fid) = flavor_id.get(f.name.as_str()) else {
                continue;
            };
            fl.push(fid);
            for r in &f.resources {
                let fr = Fr {
                    flavor: fid,
                    resource: resources.id(&r.name),
                };
                quotas.entry(fr).or_insert(QuotaSpec {
                    nominal: r.nominal_quota.nanos(),
                    borrowing_limit: r.borrowing_limit.map(Quantity::nanos),
                    lending_limit: r.lending_limit.map(Quantity::nanos),
                });
            }
        }
        for &r in &res {
            group_of.entry(r).or_insert(groups.len());
        }
        groups.push(Group {
            resources: res,
            flavors: fl,
        });
    }
    (groups, group_of, quotas)
}

/// Workloads of one world: equivalence classes and the `pods` resource they may count.
pub(super) struct Adder {
    classes: HashMap<String, usize>,
    pods_resource: usize,
}

impl Adder {
    pub(super) fn new(resources: &mut Interner) -> Self {
        Self {
            classes: HashMap::new(),
            pods_resource: resources.id("pods"),
        }
    }

    /// The workload as the simulator keeps it: its pod sets count `pods` when the queue
    /// covers it, and its class is its priority and shape.
    pub(super) fn spec(
        &mut self,
        cqs: &[CqSpec],
        name: String,
        cq: usize,
        priority: i64,
        (submit_at, run_for): (u64, u64),
        mut pod_sets: Vec<PodSetSpec>,
    ) -> WorkloadSpec {
        let pods_resource = self.pods_resource;
        if cqs[cq].group_of.contains_key(&pods_resource) {
            for ps in &mut pod_sets {
                ps.requests
                    .push((pods_resource, i128::from(ps.count) * 1_000_000_000));
                ps.spelling
                    .insert(pods_resource, Quantity::from_units(ps.count));
            }
        }
        let shape = format!(
            "{priority}|{:?}",
            pod_sets
                .iter()
                .map(|p| (
                    &p.name,
                    p.count,
                    &p.requests,
                    &p.node_selector,
                    &p.tolerations,
                    &p.tas
                ))
                .collect::<Vec<_>>()
        );
        let next = self.classes.len();
        let class = *self.classes.entry(shape).or_insert(next);
        WorkloadSpec {
            name,
            cq,
            priority,
            submit_at,
            run_for,
            pod_sets,
            class,
        }
    }
}

/// A pod set's topology request as Kueue reads it on its ClusterQueue: no request on a queue
/// whose flavors are all topology-aware is an implied one; an explicit request accepts a flavor
/// without a Topology only if its resource group covers none of the pod's own requests
/// (`hasOverlapWithPodRequestedResources`: a quota-only resource such as a transformation's
/// output).
fn settle_tas(cq: &CqSpec, ps: &mut PodSetSpec, flavors: &[FlavorSpec]) {
    match &mut ps.tas {
        TasAsk::None if cq.capacity.tas_only => ps.tas = TasAsk::Any,
        TasAsk::Explicit {
            raw, quota_only, ..
        } => {
            *quota_only = cq
                .groups
                .iter()
                .filter(|g| !g.resources.iter().any(|r| raw.contains(r)))
                .flat_map(|g| &g.flavors)
                .filter(|&&f| flavors[f].topology.is_none())
                .map(|&f| flavors[f].name.clone())
                .collect();
        }
        _ => {}
    }
}

/// Build the world. The profile and scenario have passed their checks, so every name
/// resolves; a name that does not is skipped rather than panicking.
pub fn build(profile: &Profile, scenario: &Scenario) -> World {
    build_on(profile, profile, scenario)
}

/// The world of `queues`' ClusterQueues with the scenario's workloads as `workloads` (the
/// profile the scenario was written for) defines them: their `from` pod sets and priority
/// classes are that profile's, their LocalQueues `queues`' of the same name in the namespace
/// of `workloads`. A fleet's worker runs the manager's workloads so (`simulate::fleet`): the
/// manager resolves a job's priority, and MultiKueue copies it under the same namespace and
/// LocalQueue name.
pub(crate) fn build_on(queues_profile: &Profile, profile: &Profile, scenario: &Scenario) -> World {
    let mut resources = Interner::default();
    let mut world = queues_world(queues_profile, &mut resources);
    let mut adder = Adder::new(&mut resources);
    let submissions = Submissions {
        queues_profile,
        profile,
        scenario,
        offset: 0,
        prefix: "",
    };
    submissions.add(&mut world, &mut adder, &mut resources);
    world.workloads.sort_by(|a, b| a.name.cmp(&b.name));
    world.resources = resources.names;
    world.index();
    world
}

/// A scenario's submissions to add to a world: `queues_profile`'s LocalQueues in the namespace
/// of `profile`, which resolves `from` and priority classes; each submitted `offset` seconds
/// later than the scenario says, its name after `prefix` (`simulate --state` adds a scenario
/// to a live cluster's Workloads, named `namespace/name`).
pub(super) struct Submissions<'a> {
    pub(super) queues_profile: &'a Profile,
    pub(super) profile: &'a Profile,
    pub(super) scenario: &'a Scenario,
    pub(super) offset: u64,
    pub(super) prefix: &'a str,
}

impl Submissions<'_> {
    pub(super) fn add(&self, world: &mut World, adder: &mut Adder, resources: &mut Interner) {
        let namespace = &self.profile.namespace;
        let cq_of_local: HashMap<&str, usize> = self
            .queues_profile
            .queues
            .as_ref()
            .map(|q| {
                q.local_queues
                    .iter()
                    .filter(|l| {
                        l.namespace
                            .as_ref()
                            .unwrap_or(&self.queues_profile.namespace)
                            == namespace
                    })
                    .filter_map(|l| {
                        let cq = q
                            .cluster_queues
                            .iter()
                            .position(|c| c.name == l.cluster_queue)?;
                        Some((l.name.as_str(), cq))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for w in &self.scenario.workloads {
            let Some(&cq) = cq_of_local.get(w.queue.as_str()) else {
                continue;
            };
            let mut pod_sets = pod_sets_of(self.profile, w, resources);
            for ps in &mut pod_sets {
                settle_tas(&world.cqs[cq], ps, &world.flavors);
            }
            let priority = priority_of(self.profile, w);
            let spec = adder.spec(
                &world.cqs,
                format!("{}{}", self.prefix, w.name),
                cq,
                priority,
                (w.submit_at + self.offset, w.run_for),
                pod_sets,
            );
            world.workloads.push(spec);
        }
    }
}

/// The world of the profile's own queued workloads, one per workload Kueue queues as a whole
/// (`Workload::admission`), on the ClusterQueue its LocalQueue names; with each its index in
/// the profile's `workloads`. The order is the profile's, not by name: this world is for
/// asking about workloads one by one (`never::explain`), not for a run.
pub(crate) fn profile_world(profile: &Profile) -> (World, Vec<usize>) {
    let mut resources = Interner::default();
    let mut world = queues_world(profile, &mut resources);
    let mut adder = Adder::new(&mut resources);
    let mut index = Vec::new();
    let by_name = pods::QueueIndex::new(profile);
    let view = QuotaView::new(profile);
    for (i, pw) in profile.workloads.iter().enumerate() {
        let Some((cq, _)) = by_name.cluster_queue_of(pw) else {
            continue;
        };
        let mut pod_sets = profile_pod_sets(view, i, pw, &mut resources);
        for ps in &mut pod_sets {
            settle_tas(&world.cqs[cq], ps, &world.flavors);
        }
        let spec = adder.spec(&world.cqs, pw.name.to_string(), cq, 0, (0, 0), pod_sets);
        world.workloads.push(spec);
        index.push(i);
    }
    world.resources = resources.names;
    world.index();
    (world, index)
}

/// `priority`, else the value of `priorityClass`, else the priority class of the `from`
/// workload (Kueue reads it from the object's label), else 0.
fn priority_of(profile: &Profile, w: &ScenarioWorkload) -> i64 {
    if let Some(p) = w.priority {
        return i64::from(p);
    }
    priority_class_of(profile, w)
        .and_then(|c| {
            profile
                .priority_classes
                .iter()
                .find(|p| p.name.as_str() == c)
        })
        .map_or(0, |p| i64::from(p.value))
}

/// The WorkloadPriorityClass a submission names, itself or through its `from` workload; none
/// when it gives a plain `priority`.
pub(crate) fn priority_class_of<'p>(
    profile: &'p Profile,
    w: &'p ScenarioWorkload,
) -> Option<&'p str> {
    if w.priority.is_some() {
        return None;
    }
    w.priority_class
        .as_ref()
        .map(Dns1123Subdomain::as_str)
        .or_else(|| {
            let from = w.from.as_ref()?;
            let pw = profile
                .workloads
                .iter()
                .find(|p| p.name.as_str() == from.as_str())?;
            pw.priority_class.as_ref().map(Dns1123Subdomain::as_str)
        })
}

/// Per resource, the total of `count` pods (sorted by resource), and its spelling.
pub(super) fn totals(
    res: &mut Interner,
    count: u64,
    per_pod: &mut dyn Iterator<Item = (&str, Quantity)>,
) -> (Vec<(usize, i128)>, HashMap<usize, Quantity>) {
    let mut requests = Vec::new();
    let mut spelling = HashMap::new();
    for (name, q) in per_pod {
        let id = res.id(name);
        let total = q.times(count);
        requests.push((id, total.nanos()));
        spelling.insert(id, total);
    }
    requests.sort_unstable();
    (requests, spelling)
}

fn pod_sets_of(profile: &Profile, w: &ScenarioWorkload, res: &mut Interner) -> Vec<PodSetSpec> {
    let view = QuotaView::new(profile);
    if let Some(sets) = &w.pod_sets {
        return sets
            .iter()
            .map(|ps| {
                let count = u64::from(ps.count);
                let per_pod = ps
                    .requests
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect();
                let counted = view.apply(&per_pod);
                let (requests, spelling) = totals(
                    res,
                    count,
                    &mut counted.iter().map(|(k, v)| (k.as_str(), *v)),
                );
                PodSetSpec {
                    name: ps.name.clone(),
                    count,
                    requests,
                    spelling,
                    node_selector: BTreeMap::new(),
                    tolerations: Vec::new(),
                    tas: TasAsk::None,
                }
            })
            .collect();
    }
    let Some(from) = &w.from else {
        return Vec::new();
    };
    let Some((index, pw)) = profile
        .workloads
        .iter()
        .enumerate()
        .find(|(_, p)| p.name.as_str() == from.as_str())
    else {
        return Vec::new();
    };
    profile_pod_sets(view, index, pw, res)
}

/// The pod sets Kueue builds for workload `index` of the profile (`facts::pods`), in its
/// order: head, worker groups, submitter; their requests as Kueue counts them (`view`).
fn profile_pod_sets(
    view: QuotaView<'_>,
    index: usize,
    pw: &Workload,
    res: &mut Interner,
) -> Vec<PodSetSpec> {
    pods::pod_sets(index, pw)
        .into_iter()
        .map(|ps| {
            let name = ps.kueue_name();
            let counted = view.apply(&ps.requests);
            let (requests, spelling) = totals(
                res,
                ps.count,
                &mut counted.iter().map(|(k, v)| (k.as_str(), *v)),
            );
            let tas = match ps.topology {
                None => TasAsk::None,
                Some(t) => TasAsk::Explicit {
                    level: t.level().map(str::to_owned),
                    raw: ps
                        .requests
                        .iter()
                        .filter(|(_, q)| !q.is_zero())
                        .map(|(r, _)| res.id(r))
                        .collect(),
                    quota_only: Vec::new(),
                },
            };
            PodSetSpec {
                name,
                count: ps.count,
                requests,
                spelling,
                node_selector: ps.node_selector.clone(),
                tolerations: ps.tolerations.to_vec(),
                tas,
            }
        })
        .collect()
}

/// One pod set of a submission as its pods ask, before Kueue's exclusions and
/// transformations: what the pod template of its Workload object carries.
#[derive(Clone, Debug)]
pub(crate) struct RawPodSet {
    pub(crate) name: String,
    pub(crate) count: u64,
    pub(crate) requests: BTreeMap<String, Quantity>,
    pub(crate) node_selector: BTreeMap<String, String>,
    pub(crate) tolerations: Vec<Toleration>,
}

/// The pod sets of a scenario's submission as its pods ask (`podSets`, or those Kueue builds
/// for the profile's `from` workload).
pub(crate) fn raw_pod_sets(profile: &Profile, w: &ScenarioWorkload) -> Vec<RawPodSet> {
    if let Some(sets) = &w.pod_sets {
        return sets
            .iter()
            .map(|ps| RawPodSet {
                name: ps.name.clone(),
                count: u64::from(ps.count),
                requests: ps
                    .requests
                    .iter()
                    .map(|(k, v)| (k.to_string(), *v))
                    .collect(),
                node_selector: BTreeMap::new(),
                tolerations: Vec::new(),
            })
            .collect();
    }
    let Some((index, pw)) = w.from.as_ref().and_then(|from| {
        profile
            .workloads
            .iter()
            .enumerate()
            .find(|(_, p)| p.name.as_str() == from.as_str())
    }) else {
        return Vec::new();
    };
    pods::pod_sets(index, pw)
        .into_iter()
        .map(|ps| RawPodSet {
            name: ps.kueue_name(),
            count: ps.count,
            requests: ps.requests.clone(),
            node_selector: ps.node_selector.clone(),
            tolerations: ps.tolerations.to_vec(),
        })
        .collect()
}

/// Whether a pod set may use a flavor: no NoSchedule/NoExecute taint of the flavor left
/// untolerated (the pod's tolerations plus the flavor's own), and the pod's node selector,
/// restricted to the flavor's label keys, matches the flavor's labels (Kueue's
/// `checkFlavorForPodSets`, without node affinity terms, which profiles do not have).
pub(crate) fn flavor_matches(flavor: &FlavorSpec, ps: &PodSetSpec) -> bool {
    untolerated(flavor, ps).is_none()
        && contradicted(flavor, ps).is_none()
        && tas_mismatch(flavor, ps).is_none()
}

/// Why a topology-aware flavor does not suit the pod set's topology request, or a flavor
/// without a Topology its request (`checkPodSetAndFlavorMatchForTAS`).
fn tas_mismatch(flavor: &FlavorSpec, ps: &PodSetSpec) -> Option<String> {
    match (&ps.tas, &flavor.topology) {
        (TasAsk::Any, _) | (TasAsk::None, None) => None,
        (TasAsk::None, Some((topology, _))) => Some(format!(
            "it is topology-aware (Topology `{topology}`) and the pod set asks for no topology, while other flavors of the ClusterQueue are not topology-aware (Kueue then implies none)"
        )),
        (TasAsk::Explicit { quota_only, .. }, None) => {
            (!quota_only.contains(&flavor.name)).then(|| {
                "it has no topologyName, and the pod set asks for a topology: Kueue takes all of a topology-aware pod set's resources from one topology-aware flavor".to_owned()
            })
        }
        (TasAsk::Explicit { level, .. }, Some((topology, levels))) => {
            if levels.is_empty() {
                Some(format!("its Topology `{topology}` is not defined"))
            } else {
                level
                    .as_ref()
                    .filter(|l| !levels.contains(l))
                    .map(|l| format!("its Topology `{topology}` has no level `{l}`"))
            }
        }
    }
}

/// Whether the only reason the pod set may not use the flavor is topology-aware scheduling.
pub(crate) fn only_tas_mismatch(flavor: &FlavorSpec, ps: &PodSetSpec) -> bool {
    untolerated(flavor, ps).is_none()
        && contradicted(flavor, ps).is_none()
        && tas_mismatch(flavor, ps).is_some()
}

fn untolerated<'f>(flavor: &'f FlavorSpec, ps: &PodSetSpec) -> Option<&'f Taint> {
    flavor.node_taints.iter().find(|t| {
        matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            && !ps
                .tolerations
                .iter()
                .chain(&flavor.tolerations)
                .any(|tol| tol.tolerates(t))
    })
}

/// The first node selector entry the flavor's labels contradict, with the flavor's value.
fn contradicted<'a>(
    flavor: &'a FlavorSpec,
    ps: &'a PodSetSpec,
) -> Option<(&'a str, &'a str, &'a str)> {
    ps.node_selector.iter().find_map(|(k, v)| {
        let have = flavor.node_labels.get(k)?;
        (have != v).then_some((k.as_str(), v.as_str(), have.as_str()))
    })
}

/// Why a pod set may not use a flavor (`flavor_matches`), in words: the first untolerated
/// taint, else the first node selector entry the flavor's labels contradict.
pub(crate) fn flavor_mismatch(flavor: &FlavorSpec, ps: &PodSetSpec) -> Option<String> {
    if let Some(t) = untolerated(flavor, ps) {
        let value = t
            .value
            .as_ref()
            .map_or_else(String::new, |v| format!("={v}"));
        return Some(format!(
            "untolerated taint `{}{value}:{}`",
            t.key,
            t.effect.as_str()
        ));
    }
    contradicted(flavor, ps)
        .map(|(k, v, have)| format!("nodeSelector `{k}: {v}` against its label `{k}: {have}`"))
        .or_else(|| tas_mismatch(flavor, ps))
}
