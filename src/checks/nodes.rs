//! Nodes: can the pods run on the node pools the profile creates? Flavors whose node labels
//! no pool carries (seed 000's "ResourceFlavor does not match the nodes"), pool taints the pods
//! that need the pool do not tolerate, pods larger than any node, quotas and worker groups
//! larger than the pools at their maximum size. Only with a provider section (`azure`, …):
//! without one the node pools are unknown and these rules stay silent.
//!
//! What a pool's nodes carry, and what one node leaves allocatable, is the provider's answer
//! (`crate::cloud::NodeGroup`): the pool's own labels and taints plus the cloud's.
//!
//! What a pod tolerates: its own tolerations, those of the flavors Kueue assigns it (Kueue adds
//! them), and — because AKS and GKE enable the ExtendedResourceToleration admission plugin — a
//! toleration `{key: <resource>, operator: Exists, effect: NoSchedule}` for every extended
//! resource it requests (so a pod requesting `nvidia.com/gpu` tolerates the seed-004 taint
//! `nvidia.com/gpu=present:NoSchedule`).
//!
//! Which flavors a pod gets: one per resource group covering what it requests; every choice is
//! tried and the best one counts (a problem is reported only when no choice avoids it).
//!
//! A fleet's manager has only its own pools checked: its quota and its workloads are the
//! workers' business (`checks::fleet`).

use super::Ctx;
use crate::base::codes;
use crate::base::diagnostic::did_you_mean;
use crate::base::pointer::{Pointer, ptr};
use crate::cloud::{Allocatable, Cloud, GPU_RESOURCE, NodeGroup};
use crate::facts::operators;
use crate::facts::pods::{PodSet, QueueIndex, Role, pod_sets};
use crate::profile::{
    Flavor, Profile, Quantity, Taint, TaintEffect, Toleration, TolerationOperator,
};
use std::collections::{BTreeMap, BTreeSet};

/// A node pool as the scheduler sees its nodes, with the provider that describes it.
struct Pool<'a> {
    index: usize,
    group: NodeGroup<'a>,
    provider: &'a dyn Cloud,
    labels: BTreeMap<String, String>,
    taints: Vec<Taint>,
}

impl Pool<'_> {
    fn name(&self) -> &str {
        self.group.name
    }

    /// Whether every node carries `key=value`.
    fn carries(&self, key: &str, value: &str) -> bool {
        self.labels.get(key).is_some_and(|v| v == value)
    }

    fn carries_all<'k>(&self, labels: impl IntoIterator<Item = (&'k str, &'k str)>) -> bool {
        labels.into_iter().all(|(k, v)| self.carries(k, v))
    }

    fn has_gpus(&self) -> bool {
        self.group.gpu
    }

    /// The most nodes the pool can have (the CLI's default count when the profile gives
    /// neither `count` nor `autoscale`, which RK404 reports).
    fn max_nodes(&self) -> u32 {
        self.group.size.max
    }

    fn known(&self) -> bool {
        self.group.instance.is_some()
    }

    fn allocatable(&self) -> Option<Allocatable> {
        self.group.allocatable(self.provider)
    }

    /// `gpupool (Standard_NC16as_T4_v3: 16 vCPU, 110 GiB, 1 × T4)`.
    fn describe(&self) -> String {
        match self.group.instance {
            Some(s) if s.gpus > 0 => format!(
                "`{}` ({}: {} vCPU, {} GiB, {} × {})",
                self.name(),
                s.name,
                s.vcpus,
                s.memory_gib,
                s.gpus,
                s.gpu_model
            ),
            Some(s) => format!(
                "`{}` ({}: {} vCPU, {} GiB)",
                self.name(),
                s.name,
                s.vcpus,
                s.memory_gib
            ),
            None => format!("`{}` ({})", self.name(), self.group.machine),
        }
    }

    /// The profile key that sets the pool's largest size.
    fn size_key(&self) -> &'static str {
        if self.group.size.autoscaled {
            "autoscale.max"
        } else {
            "count"
        }
    }

    /// `autoscale.max` 3, or `count` 2: where the size in a message comes from.
    fn size_field(&self) -> String {
        let size = self.group.size;
        if size.autoscaled {
            "autoscale.max".into()
        } else if size.given {
            "count".into()
        } else {
            format!("count unset: {}'s default", self.provider.words().cli)
        }
    }
}

fn pools(provider: &dyn Cloud) -> Vec<Pool<'_>> {
    provider
        .node_groups()
        .into_iter()
        .map(|group| Pool {
            index: group.index,
            labels: group.labels.clone(),
            taints: group.taints.clone(),
            group,
            provider,
        })
        .collect()
}

/// Extended resources (`nvidia.com/gpu`): a domain-prefixed name outside `kubernetes.io`. The
/// ExtendedResourceToleration plugin adds tolerations for exactly these.
fn is_extended_resource(name: &str) -> bool {
    name.split_once('/').is_some_and(|(domain, _)| {
        domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io") && domain != "requests"
    })
}

/// Taints that keep pods away (PreferNoSchedule only discourages).
fn blocking(t: &Taint) -> bool {
    t.effect != TaintEffect::PreferNoSchedule
}

fn taint_text(t: &Taint) -> String {
    match &t.value {
        Some(v) if !v.is_empty() => format!("{}={}:{}", t.key, v, t.effect.as_str()),
        _ => format!("{}:{}", t.key, t.effect.as_str()),
    }
}

/// A pod's tolerations, with ExtendedResourceToleration's for what it requests.
fn effective_tolerations(s: &PodSet<'_>, flavors: &[&Flavor]) -> (Vec<Toleration>, Vec<String>) {
    let mut out: Vec<Toleration> = s.tolerations.to_vec();
    for f in flavors {
        out.extend(f.tolerations.iter().cloned());
    }
    let mut extended = Vec::new();
    for (r, q) in &s.requests {
        if !q.is_zero() && is_extended_resource(r) {
            extended.push(r.clone());
            out.push(Toleration {
                key: Some(crate::profile::QualifiedName(r.clone())),
                operator: TolerationOperator::Exists,
                value: None,
                effect: Some(TaintEffect::NoSchedule),
                toleration_seconds: None,
            });
        }
    }
    (out, extended)
}

fn untolerated<'t>(pool: &'t Pool<'_>, tolerations: &[Toleration]) -> Vec<&'t Taint> {
    pool.taints
        .iter()
        .filter(|t| blocking(t) && !tolerations.iter().any(|tol| tol.tolerates(t)))
        .collect()
}

/// The first resource of one pod that one node cannot hold: (resource, request, allocatable).
fn too_big(pool: &Pool<'_>, s: &PodSet<'_>) -> Option<(String, Quantity, Quantity)> {
    let alloc = pool.allocatable()?;
    s.requests.iter().find_map(|(r, q)| {
        let a = alloc.get(r)?;
        (*q > a).then(|| (r.clone(), *q, a))
    })
}

/// How many pods like `s` one node of `pool` holds, and the resource that limits it. `None`
/// when the size is unknown or the pod requests nothing the catalogue knows.
fn pods_per_node(pool: &Pool<'_>, s: &PodSet<'_>) -> Option<(u64, String)> {
    let alloc = pool.allocatable()?;
    s.requests
        .iter()
        .filter_map(|(r, q)| Some((alloc.get(r)?.fits(*q)?, r.clone())))
        // On a tie, name the GPUs: they are what a GPU pool is sized by.
        .min_by_key(|(n, r)| (*n, r != GPU_RESOURCE))
}

/// How far a pod got on one choice of flavors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    NoPoolMatches,
    TaintsBlock,
    TooBig,
    Fits,
}

/// The outcome of one choice of flavors for one pod set.
struct Placement {
    stage: Stage,
    flavors: Vec<String>,
    selector: BTreeMap<String, String>,
    /// Pools that pass labels (and GPUs), with the taints the pod does not tolerate.
    blocked: Vec<(usize, Vec<Taint>)>,
    /// Pools that pass labels and taints.
    tolerated: Vec<usize>,
    /// Pools where one pod fits.
    fitting: Vec<usize>,
    extended: Vec<String>,
}

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(provider) = p.cloud() else { return };
    let pools = pools(provider);
    let words = provider.words();
    for pool in &pools {
        if let Some(i) = pool.group.instance
            && let Some(r) = i.retired
        {
            let current: Vec<String> = provider
                .successors(i)
                .iter()
                .map(|t| {
                    format!(
                        "`{}` ({} × {}, {} vCPU, {} GiB)",
                        t.name, t.gpus, t.gpu_model, t.vcpus, t.memory_gib
                    )
                })
                .collect();
            let hint = if current.is_empty() {
                format!("pick a current {} ({})", words.machine, r.page)
            } else {
                format!(
                    "use a current {} with the same GPU count: {} ({})",
                    words.machine,
                    current.join(" or "),
                    r.page
                )
            };
            ctx.report(
                &codes::RETIRED_INSTANCE,
                &ptr![
                    provider.section(),
                    "nodePools",
                    pool.index,
                    words.machine_field
                ],
                format!(
                    "{} `{}` of node pool `{}` was retired on {} (the {} series): {} no longer creates it",
                    upper_first(words.machine),
                    pool.group.machine,
                    pool.name(),
                    r.date,
                    r.series,
                    words.service,
                ),
                Some(hint),
            );
        }
        if !pool.known() {
            ctx.report(
                &codes::UNKNOWN_INSTANCE_TYPE,
                &ptr![
                    provider.section(),
                    "nodePools",
                    pool.index,
                    words.machine_field
                ],
                format!(
                    "{} `{}` is not in raykueue's catalogue: node pool `{}` is not checked for capacity",
                    upper_first(words.machine),
                    pool.group.machine,
                    pool.name()
                ),
                Some(provider.unknown_instance_hint(pool.group.machine)),
            );
        }
    }
    // A fleet's manager runs no job pods: its flavors place nothing, its quota is the fleet's
    // and its workloads run on the workers, where `checks::fleet` places them.
    if p.managed_fleet().is_some() {
        return;
    }
    flavor_labels(ctx, &pools);
    quota_vs_pools(ctx, p, &pools);
    // Flavors whose labels no pool carries (RK142), once.
    let unmatched: BTreeSet<&str> = p
        .flavors
        .iter()
        .filter(|f| {
            !f.node_labels.is_empty()
                && !pools.iter().any(|pool| {
                    pool.carries_all(f.node_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                })
        })
        .map(|f| f.name.as_str())
        .collect();
    let by_name = QueueIndex::new(p);
    for (i, w) in p.workloads.iter().enumerate() {
        let cq = by_name.cluster_queue_of(w);
        for s in pod_sets(i, w) {
            place(ctx, p, &pools, &unmatched, cq.map(|(_, c)| c), &s);
        }
    }
}

/// RK142: flavor node labels no pool carries.
fn flavor_labels(ctx: &mut Ctx<'_>, pools: &[Pool<'_>]) {
    let p = ctx.profile;
    for (i, f) in p.flavors.iter().enumerate() {
        if f.node_labels.is_empty()
            || pools.iter().any(|pool| {
                pool.carries_all(f.node_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            })
        {
            continue;
        }
        // Point at the first label no pool carries at all, else at the whole map.
        let lonely = f
            .node_labels
            .iter()
            .find(|(k, v)| !pools.iter().any(|pool| pool.carries(k, v)));
        let (pointer, what) = match lonely {
            Some((k, v)) => (
                ptr!["flavors", i, "nodeLabels", k.as_str()],
                format!("`{k}={v}`"),
            ),
            None => (
                ptr!["flavors", i, "nodeLabels"],
                format!(
                    "all of {}",
                    f.node_labels
                        .iter()
                        .map(|(k, v)| format!("`{k}={v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        };
        let hint = match lonely {
            Some((k, v)) => {
                let keys: Vec<&str> = pools
                    .iter()
                    .flat_map(|pool| pool.labels.keys().map(String::as_str))
                    .collect();
                let values: Vec<String> = pools
                    .iter()
                    .filter_map(|pool| {
                        pool.labels
                            .get(k.as_str())
                            .map(|val| format!("`{}` has {k}={val}", pool.name()))
                    })
                    .collect();
                let provider = pools.first().map(|pool| pool.provider);
                let cloud = provider.and_then(|pr| {
                    pr.cloud_label_hint(
                        k,
                        v,
                        &pools.iter().map(Pool::describe).collect::<Vec<_>>().join(", "),
                    )
                });
                // The values pools do carry come first: they name the fix. Then what the cloud
                // says about its own labels (AKS's `accelerator=nvidia`, GKE's accelerator type).
                if !values.is_empty() {
                    format!("{}; use one of these values", values.join(", "))
                } else if let Some(hint) = cloud {
                    hint
                } else if let Some(s) = did_you_mean(k, keys) {
                    format!("did you mean the label `{s}`?")
                } else {
                    let words = provider.map(crate::cloud::Cloud::words);
                    format!(
                        "add `{k}: {v}` to the `labels` of the node pool these pods belong on, or select a label {} sets, e.g. `{}: {}`",
                        words.map_or("the cloud", |w| w.service),
                        words.map_or("<label>", |w| w.pool_label),
                        pools.first().map_or("<pool>", Pool::name)
                    )
                }
            }
            None => "no single pool carries them together; add the missing labels to one pool's `labels`".into(),
        };
        ctx.report(
            &codes::FLAVOR_LABELS_UNMATCHED,
            &pointer,
            format!(
                "no node pool carries {what}: pods Kueue admits on flavor `{}` would stay Pending",
                f.name
            ),
            Some(hint),
        );
    }
}

/// Pools a flavor's quota can be backed by: they carry its labels, and their taints are
/// tolerated by the flavor or are extended-resource taints the pods using them tolerate.
fn backing_pools<'a, 'p>(pools: &'a [Pool<'p>], f: &Flavor) -> Vec<&'a Pool<'p>> {
    pools
        .iter()
        .filter(|pool| {
            pool.carries_all(f.node_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        })
        .filter(|pool| {
            pool.taints.iter().filter(|t| blocking(t)).all(|t| {
                f.tolerations.iter().any(|tol| tol.tolerates(t))
                    || (is_extended_resource(&t.key) && t.effect == TaintEffect::NoSchedule)
            })
        })
        .collect()
}

/// RK202: per flavor and resource, the nominal quota of all ClusterQueues and Cohorts
/// together (a Cohort's own quota is admitted against like a queue's) against what the backing
/// pools hold at their maximum size.
/// Total nominal quota of one flavor and resource, the queues' shares, the first quota's pointer.
type QuotaSum = (Quantity, Vec<String>, Pointer);

fn quota_vs_pools(ctx: &mut Ctx<'_>, p: &Profile, pools: &[Pool<'_>]) {
    let Some(queues) = &p.queues else { return };
    // One pass over every quota: (flavor, resource) → (total nominal, per-queue parts,
    // pointer of the first quota).
    let mut by_flavor: BTreeMap<&str, BTreeMap<String, QuotaSum>> = BTreeMap::new();
    // Cohorts first: where they add quota, the finding points at theirs.
    let holders = queues
        .cohorts
        .iter()
        .enumerate()
        .map(|(c, co)| {
            (
                ptr!["queues", "cohorts", c],
                format!("Cohort {}", co.name),
                &co.resource_groups,
            )
        })
        .chain(queues.cluster_queues.iter().enumerate().map(|(c, cq)| {
            (
                ptr!["queues", "clusterQueues", c],
                cq.name.to_string(),
                &cq.resource_groups,
            )
        }));
    for (base, name, groups) in holders {
        for (g, group) in groups.iter().enumerate() {
            for (k, fq) in group.flavors.iter().enumerate() {
                let totals = by_flavor.entry(fq.name.as_str()).or_default();
                for (m, rq) in fq.resources.iter().enumerate() {
                    let e = totals.entry(rq.name.to_string()).or_insert_with(|| {
                        (
                            Quantity::zero(),
                            Vec::new(),
                            ptr!(base; "resourceGroups", g, "flavors", k, "resources", m, "nominalQuota"),
                        )
                    });
                    e.0 = e.0.plus(rq.nominal_quota);
                    if e.1.len() < 8 {
                        e.1.push(format!("{name} {}", rq.nominal_quota));
                    } else if e.1.len() == 8 {
                        e.1.push("...".into());
                    }
                }
            }
        }
    }
    for f in &p.flavors {
        if !f.node_labels.is_empty()
            && !pools.iter().any(|pool| {
                pool.carries_all(f.node_labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            })
        {
            continue; // RK142
        }
        let backing = backing_pools(pools, f);
        if backing.is_empty() || backing.iter().any(|pool| !pool.known()) {
            // No pool it can use: taints are RK143's finding, from the pods' side. A pool of
            // unknown size: capacity unknown (RK201).
            continue;
        }
        let Some(totals) = by_flavor.remove(f.name.as_str()) else {
            continue;
        };
        for (r, (total, parts, pointer)) in totals {
            let mut cap = Quantity::zero();
            let mut known = true;
            let mut from = Vec::new();
            for pool in &backing {
                let Some(a) = pool.allocatable().and_then(|a| a.get(&r)) else {
                    known = false;
                    break;
                };
                let nodes = u64::from(pool.max_nodes());
                cap = cap.plus(a.times(nodes));
                from.push(format!(
                    "{} node{} ({}) × {} of pool {}",
                    nodes,
                    if nodes == 1 { "" } else { "s" },
                    pool.size_field(),
                    a.human(),
                    pool.describe(),
                ));
            }
            // The operators' pods run on the System pool (`operators::placement`): what they
            // request there is not left for the queues' workloads.
            let mut operators_text = String::new();
            if backing.iter().any(|pool| pool.group.hosts_operators)
                && operators::placement(p).is_some()
            {
                let pods = operators::operator_pods(p);
                let taken = pods.iter().fold(Quantity::zero(), |sum, (_, cpu, mem)| {
                    sum.plus(match r.as_str() {
                        "cpu" => *cpu,
                        "memory" => *mem,
                        _ => Quantity::zero(),
                    })
                });
                if taken > Quantity::zero() {
                    cap = cap.minus(taken);
                    let names: Vec<&str> = pods.iter().map(|(n, _, _)| *n).collect();
                    operators_text = format!(
                        " − {} for the operators on {} ({})",
                        taken.human(),
                        pools
                            .first()
                            .map_or("their pool", |pool| pool.provider.words().operators_pool),
                        names.join(", ")
                    );
                }
            }
            if !known || total <= cap {
                continue;
            }
            let pools_text = format!(
                "the node pools it can use have {}{operators_text}",
                from.join(" + ")
            );
            ctx.report(
                &codes::QUOTA_BEYOND_POOLS,
                &pointer,
                format!(
                    "the ClusterQueues{} give flavor `{}` a nominal quota of {total} `{r}` ({}), but {pools_text} = {} allocatable: workloads admitted against the rest stay Pending",
                    // Cohort parts are named `Cohort x` (a queue's name has no space).
                    if parts.iter().any(|part| part.starts_with("Cohort ")) {
                        " and Cohorts"
                    } else {
                        ""
                    },
                    f.name,
                    parts.join(", "),
                    cap.human()
                ),
                Some(format!(
                    "lower the `{r}` quota of flavor `{}` to at most {}, or add nodes to its pools (count or autoscale.max); {} reserves part of each node for the kubelet and system",
                    f.name,
                    cap.human(),
                    service(pools)
                )),
            );
        }
    }
}

/// Every choice of one flavor per resource group the pod set touches, in Kueue's order (at
/// most 16 choices, so that a hostile profile stays fast; queues have one or two flavors per
/// group in practice, and a choice past the 16th is not tried).
const MAX_CHOICES: usize = 16;

pub(super) fn flavor_choices<'p>(
    p: &'p Profile,
    cq: Option<&'p crate::profile::ClusterQueue>,
    s: &PodSet<'_>,
) -> Vec<Vec<&'p Flavor>> {
    let mut choices: Vec<Vec<&Flavor>> = vec![Vec::new()];
    let Some(cq) = cq else { return choices };
    for group in &cq.resource_groups {
        let touches = group
            .covered_resources
            .iter()
            .any(|r| r.as_str() == "pods" || !s.request(r).is_zero());
        if !touches {
            continue;
        }
        let options: Vec<&Flavor> = group
            .flavors
            .iter()
            .filter_map(|fq| p.flavors.iter().find(|f| f.name == fq.name))
            .collect();
        if options.is_empty() {
            continue; // RK102
        }
        let mut next = Vec::new();
        for c in &choices {
            for f in &options {
                if next.len() >= MAX_CHOICES {
                    break;
                }
                let mut c2 = c.clone();
                c2.push(*f);
                next.push(c2);
            }
        }
        choices = next;
    }
    choices
}

fn evaluate(
    pools: &[Pool<'_>],
    unmatched: &BTreeSet<&str>,
    s: &PodSet<'_>,
    flavors: &[&Flavor],
) -> Option<Placement> {
    let mut selector = s.node_selector.clone();
    for f in flavors {
        // A flavor whose labels no pool carries is RK142's finding, not this pod's.
        if unmatched.contains(f.name.as_str()) {
            return None;
        }
        for (k, v) in &f.node_labels {
            selector.insert(k.to_string(), v.to_string());
        }
    }
    let wants_gpu = !s.request(GPU_RESOURCE).is_zero();
    let (tolerations, extended) = effective_tolerations(s, flavors);
    let mut blocked = Vec::new();
    let mut tolerated = Vec::new();
    let mut fitting = Vec::new();
    for pool in pools {
        if !pool.carries_all(selector.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            || (wants_gpu && !pool.has_gpus())
        {
            continue;
        }
        let bad = untolerated(pool, &tolerations);
        if !bad.is_empty() {
            blocked.push((pool.index, bad.into_iter().cloned().collect()));
            continue;
        }
        tolerated.push(pool.index);
        if pool.max_nodes() != 0 && too_big(pool, s).is_none() {
            fitting.push(pool.index);
        }
    }
    let stage = if !fitting.is_empty() {
        Stage::Fits
    } else if !tolerated.is_empty() {
        Stage::TooBig
    } else if !blocked.is_empty() {
        Stage::TaintsBlock
    } else {
        Stage::NoPoolMatches
    };
    Some(Placement {
        stage,
        flavors: flavors.iter().map(|f| f.name.to_string()).collect(),
        selector,
        blocked,
        tolerated,
        fitting,
        extended,
    })
}

/// RK143, RK144, RK203 and RK204 for one pod set.
fn place(
    ctx: &mut Ctx<'_>,
    p: &Profile,
    pools: &[Pool<'_>],
    unmatched: &BTreeSet<&str>,
    cq: Option<&crate::profile::ClusterQueue>,
    s: &PodSet<'_>,
) {
    if s.max_count == 0 {
        return;
    }
    let outcomes: Vec<Placement> = flavor_choices(p, cq, s)
        .iter()
        .filter_map(|choice| evaluate(pools, unmatched, s, choice))
        .collect();
    let Some(best) = outcomes.iter().max_by_key(|o| {
        let cap = capacity(pools, s, &o.fitting).map_or(u64::MAX, |(n, _)| n);
        (o.stage, cap)
    }) else {
        return;
    };
    let via = flavors_clause(best);
    match best.stage {
        Stage::NoPoolMatches => report_no_pool_matches(ctx, pools, s, best, &via),
        Stage::TaintsBlock => report_taints_block(ctx, p, pools, s, best, &via),
        Stage::TooBig => report_too_big(ctx, pools, s, best, &via),
        Stage::Fits => report_beyond_pools(ctx, pools, s, best),
    }
}

/// The clause naming the flavors a message's pods run with (" (with flavors `a`, `b`)"), or
/// nothing when they run with none.
fn flavors_clause(best: &Placement) -> String {
    if best.flavors.is_empty() {
        String::new()
    } else {
        format!(
            " (with flavor{} {})",
            if best.flavors.len() == 1 { "" } else { "s" },
            best.flavors
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// RK144 for a pod set no node pool matches: a GPU request no GPU pool serves, or labels no
/// pool carries.
fn report_no_pool_matches(
    ctx: &mut Ctx<'_>,
    pools: &[Pool<'_>],
    s: &PodSet<'_>,
    best: &Placement,
    via: &str,
) {
    let wants_gpu = !s.request(GPU_RESOURCE).is_zero();
    let label_ok = pools
        .iter()
        .any(|pool| pool.carries_all(best.selector.iter().map(|(k, v)| (k.as_str(), v.as_str()))));
    if wants_gpu && label_ok {
        ctx.report(
            &codes::NO_POOL_MATCHES,
            &s.resource_pointer(GPU_RESOURCE),
            format!(
                "{} requests `{GPU_RESOURCE}`, but no node pool it may run on{via} has NVIDIA GPUs (pools: {}): its pods stay Pending",
                s.describe(),
                pools.iter().map(Pool::describe).collect::<Vec<_>>().join(", ")
            ),
            Some(format!(
                "add a GPU node pool (e.g. {}), or remove the GPU request",
                pools.first().map_or("a GPU instance type", |pool| pool.provider.words().gpu_example)
            )),
        );
    } else {
        // Name the labels no pool carries at all; else the set no one pool carries.
        let lonely: Vec<String> = best
            .selector
            .iter()
            .filter(|(k, v)| !pools.iter().any(|pool| pool.carries(k, v)))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let what = if lonely.is_empty() {
            format!(
                "no single node pool carries all of {}",
                best.selector
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            format!("no node pool carries {}", lonely.join(", "))
        };
        let pointer = if s.node_selector.is_empty() {
            s.pointer.clone()
        } else {
            s.pointer.at("nodeSelector")
        };
        ctx.report(
            &codes::NO_POOL_MATCHES,
            &pointer,
            format!(
                "{} cannot be placed{via}: {what}; its pods stay Pending",
                s.describe(),
            ),
            Some("fix the nodeSelector, or add the labels to the `labels` of the node pool these pods belong on".into()),
        );
    }
}

/// RK143 for a pod set whose matching pools all carry a taint it does not tolerate.
fn report_taints_block(
    ctx: &mut Ctx<'_>,
    p: &Profile,
    pools: &[Pool<'_>],
    s: &PodSet<'_>,
    best: &Placement,
    via: &str,
) {
    let pool_by = |i: usize| pools.iter().find(|pool| pool.index == i);
    let wants_gpu = !s.request(GPU_RESOURCE).is_zero();
    let why = if !s.node_selector.is_empty() || !best.flavors.is_empty() {
        format!("its node selection{via} leaves only")
    } else if wants_gpu {
        "it requests GPUs, and the only GPU node pools are".to_string()
    } else {
        "it could run on".to_string()
    };
    let blocked: Vec<String> = best
        .blocked
        .iter()
        .filter_map(|(i, taints)| {
            Some(format!(
                "{} with taint {}",
                pool_by(*i)?.describe(),
                taints.iter().map(taint_text).collect::<Vec<_>>().join(", ")
            ))
        })
        .collect();
    let first = best.blocked.first().and_then(|(_, t)| t.first());
    let ert_relevant = best.blocked.iter().any(|(_, taints)| {
        taints
            .iter()
            .any(|t| best.extended.iter().any(|r| r == t.key.as_str()))
    });
    let ert = if ert_relevant {
        format!(
            "; {}'s ExtendedResourceToleration adds only `{{key: <resource>, operator: Exists, effect: NoSchedule}}` for {}",
            service(pools),
            best.extended.join(", ")
        )
    } else {
        String::new()
    };
    let hint = first.map_or_else(String::new, |t| {
        let value = t
            .value
            .as_ref()
            .filter(|v| !v.is_empty())
            .map_or_else(String::new, |v| format!(", operator: Equal, value: {v}"));
        format!(
            "add `tolerations: [{{key: {}{value}, effect: {}}}]` to this pod group{}{ert}",
            t.key,
            t.effect.as_str(),
            if best.flavors.is_empty() {
                String::new()
            } else {
                // The flavor that selects the nodes is the natural home of the toleration.
                let selecting: Vec<&str> = best
                    .flavors
                    .iter()
                    .filter(|f| {
                        p.flavors
                            .iter()
                            .any(|pf| pf.name.as_str() == f.as_str() && !pf.node_labels.is_empty())
                    })
                    .map(String::as_str)
                    .collect();
                let named = if selecting.is_empty() {
                    best.flavors.join("`/`")
                } else {
                    selecting.join("`/`")
                };
                format!(
                    ", or to the tolerations of flavor `{named}` (Kueue adds them to the pods it admits)"
                )
            }
        )
    });
    let pointer = if s.tolerations.is_empty() {
        s.pointer.clone()
    } else {
        s.pointer.at("tolerations")
    };
    ctx.report(
        &codes::TAINT_NOT_TOLERATED,
        &pointer,
        format!(
            "{} does not tolerate the taints of the node pools {why}: {}; its pods stay Pending",
            s.describe(),
            blocked.join("; ")
        ),
        Some(hint),
    );
}

/// RK203 for a pod set larger than a node of every pool it tolerates.
fn report_too_big(
    ctx: &mut Ctx<'_>,
    pools: &[Pool<'_>],
    s: &PodSet<'_>,
    best: &Placement,
    via: &str,
) {
    let pool_by = |i: usize| pools.iter().find(|pool| pool.index == i);
    let parts: Vec<String> = best
        .tolerated
        .iter()
        .filter_map(|i| {
            let pool = pool_by(*i)?;
            if pool.max_nodes() == 0 {
                return Some(format!("pool {} has at most 0 nodes", pool.describe()));
            }
            let (resource, request, alloc) = too_big(pool, s)?;
            Some(format!(
                "`{resource}` {request} > {} allocatable on a node of pool {}",
                alloc.human(),
                pool.describe()
            ))
        })
        .collect();
    let (pointer, hint) = match best
        .tolerated
        .iter()
        .filter_map(|i| pool_by(*i))
        .find_map(|pool| Some((pool, too_big(pool, s)?)))
    {
        Some((pool, (r, _, a))) => (
            s.resource_pointer(&r),
            format!(
                "request at most {} `{r}` per pod, or use a larger {} for node pool `{}`",
                a.human(),
                pool.provider.words().machine_field,
                pool.name()
            ),
        ),
        None => (
            s.resources_pointer.clone(),
            "give the node pool a `count` or `autoscale.max` of at least 1".to_string(),
        ),
    };
    ctx.report(
        &codes::POD_FITS_NO_NODE,
        &pointer,
        format!(
            "{} fits on no node{via}: {}; its pods stay Pending (allocatable is the {} minus {}'s kubelet and eviction reservations)",
            s.describe(),
            parts.join("; "),
            pools.first().map_or("machine", |pool| pool.provider.words().machine),
            service(pools)
        ),
        Some(hint),
    );
}

/// RK204 for a worker group that fits a node but may scale beyond what its pools hold.
fn report_beyond_pools(ctx: &mut Ctx<'_>, pools: &[Pool<'_>], s: &PodSet<'_>, best: &Placement) {
    let Role::Worker(j) = s.role else { return };
    let Some((cap, per_pool)) = capacity(pools, s, &best.fitting) else {
        return;
    };
    if s.max_count <= cap {
        return;
    }
    let Some(group) = s.workload.workers.get(j) else {
        return;
    };
    let field = if group.max_replicas.is_some() {
        "maxReplicas"
    } else {
        "replicas"
    };
    let hosts = if group.num_of_hosts > 1 {
        format!(" × {} hosts", group.num_of_hosts)
    } else {
        String::new()
    };
    let first = per_pool.first();
    let hint = match (first, best.fitting.len()) {
        (Some((pool, per_node, _)), 1) if *per_node > 0 => {
            let needed = s.max_count.div_ceil(*per_node);
            format!(
                "raise {} of node pool `{}` to {needed}, or lower {field} to {}",
                pool.size_key(),
                pool.name(),
                cap / u64::from(group.num_of_hosts.max(1))
            )
        }
        _ => format!(
            "add nodes to the pools, or lower {field} to {}",
            cap / u64::from(group.num_of_hosts.max(1))
        ),
    };
    let pools_text: Vec<String> = per_pool
        .iter()
        .map(|(pool, per_node, r)| {
            format!(
                "node pool {} holds {per_node} per node (`{r}`: {} per pod, {} allocatable per node) and has at most {} nodes ({})",
                pool.describe(),
                s.request(r),
                pool.allocatable().and_then(|a| a.get(r)).map_or_else(String::new, Quantity::human),
                pool.max_nodes(),
                pool.size_field()
            )
        })
        .collect();
    ctx.report(
        &codes::GROUP_BEYOND_POOLS,
        &s.pointer.at(field),
        format!(
            "{} may scale to {} pods ({field} {}{hosts}), but {}: at most {cap} fit, the other {} stay Pending",
            s.describe(),
            s.max_count,
            group.max(),
            pools_text.join("; "),
            s.max_count - cap
        ),
        Some(hint),
    );
}

/// Pods like `s` that the `fitting` pools hold at their maximum size, with each pool's share:
/// (pool, pods per node, limiting resource). `None` when a pool's size is unknown or the pod
/// requests nothing the catalogue measures.
#[allow(clippy::type_complexity)]
fn capacity<'a, 'p>(
    pools: &'a [Pool<'p>],
    s: &PodSet<'_>,
    fitting: &[usize],
) -> Option<(u64, Vec<(&'a Pool<'p>, u64, String)>)> {
    let mut total = 0_u64;
    let mut parts = Vec::new();
    for i in fitting {
        let pool = pools.iter().find(|pool| pool.index == *i)?;
        let (per_node, r) = pods_per_node(pool, s)?;
        let nodes = pool.max_nodes();
        total = total.saturating_add(per_node.saturating_mul(u64::from(nodes)));
        parts.push((pool, per_node, r));
    }
    Some((total, parts))
}

/// The managed Kubernetes service the pools belong to, for messages.
fn service(pools: &[Pool<'_>]) -> &'static str {
    pools
        .first()
        .map_or("the cloud", |pool| pool.provider.words().service)
}

/// `VM size` → `VM size`, `machine type` → `Machine type`: a phrase that opens a sentence.
fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}
