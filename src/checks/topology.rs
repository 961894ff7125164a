//! Topology-aware scheduling (TAS): the Topology objects as Kueue v0.19.2 accepts them (RK180,
//! RK181), the flavors that name them (RK182, RK183), what Kueue refuses to combine with TAS
//! (RK184 for a pod set spread over two topology-aware flavors, RK185 elastic workloads,
//! RK186 the feature gate), and, with a cloud section, the node pools behind each
//! topology-aware flavor: the level labels their nodes carry (RK206, RK207; the cloud's
//! `topology_labels`, sources there), whether a `required` level has a domain large enough for
//! the pod set (RK208), and pools at zero nothing would scale up (RK195).
//!
//! Which flavor a pod set's request can use is the simulator's flavor assignment
//! (`simulate::world::flavor_matches`), so RK184's main case comes from the admission rules
//! (`checks::admissible`); this module adds what that walk does not see.

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;
use crate::cloud::{CLASS_CHECK_CAPACITY, Carried, Cloud, NodeGroup, topology_labels};
use crate::facts::counted::QuotaView;
use crate::facts::pods::{PodSet, QueueIndex, Role, pod_sets};
use crate::profile::{ClusterQueue, Flavor, HOSTNAME_LABEL, Profile, Topology, TopologyRequest};
use std::collections::BTreeMap;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let names = ctx.profile.topologies.iter().map(|t| t.name.as_str());
    super::queues::duplicates(ctx, &ptr!["topologies"], "Topology", names);
    levels(ctx);
    flavors(ctx);
    gate(ctx);
    elastic(ctx);
    two_topology_flavors(ctx);
    if let Some(cloud) = ctx.profile.cloud() {
        nodes(ctx, cloud);
    }
}

/// RK180 (kueue@v0.19.2 `apis/kueue/v1beta2/topology_types.go`, CEL "must be unique" and "the
/// kubernetes.io/hostname label can only be used at the lowest level of topology") and RK181.
fn levels(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    for (t, topo) in p.topologies.iter().enumerate() {
        let at = |j: usize| ptr!["topologies", t, "levels", j];
        for (j, level) in topo.levels.iter().enumerate() {
            if topo.levels[..j].contains(level) {
                ctx.report(
                    &codes::TOPOLOGY_LEVELS,
                    &at(j),
                    format!(
                        "Topology `{}` names level `{level}` twice: the API server refuses it",
                        topo.name
                    ),
                    Some("keep each node label once".into()),
                );
            }
            if level.as_str() == HOSTNAME_LABEL && j + 1 != topo.levels.len() {
                ctx.report(
                    &codes::TOPOLOGY_LEVELS,
                    &at(j),
                    format!(
                        "Topology `{}` has `{HOSTNAME_LABEL}` above other levels: Kueue allows it only as the last (each node is its own domain)",
                        topo.name
                    ),
                    Some(format!("move `{HOSTNAME_LABEL}` to the end of `levels`")),
                );
            }
        }
        let mut broader: Option<(&str, u8)> = None;
        for (j, level) in topo.levels.iter().enumerate() {
            let Some(r) = crate::cloud::placement_rank(level) else {
                continue;
            };
            if let Some((above, ra)) = broader
                && ra >= r
                && level.as_str() != HOSTNAME_LABEL
            {
                ctx.report(
                    &codes::TOPOLOGY_ORDER,
                    &at(j),
                    format!(
                        "Topology `{}` puts `{level}` below `{above}`, which is no broader: levels go broadest first, and Kueue nests each level's domains inside the one above",
                        topo.name
                    ),
                    Some(format!("put `{level}` before `{above}`")),
                );
            }
            broader = Some((level.as_str(), r));
        }
    }
}

/// RK182 and RK183.
fn flavors(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    for (i, f) in p.flavors.iter().enumerate() {
        let Some(name) = &f.topology_name else {
            continue;
        };
        let at = ptr!["flavors", i, "topologyName"];
        if !p.topologies.iter().any(|t| t.name == *name) {
            let names: Vec<&str> = p.topologies.iter().map(|t| t.name.as_str()).collect();
            ctx.unknown_name(
                &codes::TOPOLOGY_NOT_FOUND,
                &at,
                "Topology (a ClusterQueue using this flavor is inactive: TopologyNotFound)",
                name,
                names,
            );
        }
        if f.node_labels.is_empty() {
            ctx.report(
                &codes::TOPOLOGY_FLAVOR_LABELS,
                &at,
                format!(
                    "flavor `{}` has a topologyName and no nodeLabels: the API server refuses it (the ResourceFlavor CRD: \"at least one nodeLabel is required when topology is set\")",
                    f.name
                ),
                Some("add the nodeLabels that select the pools whose nodes form this topology".into()),
            );
        }
    }
}

/// Whether the profile asks for TAS anywhere.
fn uses_tas(p: &Profile) -> bool {
    !p.topologies.is_empty()
        || p.flavors.iter().any(|f| f.topology_name.is_some())
        || p.workloads
            .iter()
            .any(|w| pod_sets(0, w).iter().any(|s| s.topology.is_some()))
}

/// RK186: `TopologyAwareScheduling` is beta and on in 0.19 (kueue@v0.19.2
/// `pkg/features/kube_features.go`); switched off, Kueue ignores Topologies and refuses TAS
/// flavors.
fn gate(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(k) = &p.operators.kueue else { return };
    if k.feature_gates.get("TopologyAwareScheduling") == Some(&false) && uses_tas(p) {
        ctx.report(
            &codes::TOPOLOGY_GATE_OFF,
            &ptr!["operators", "kueue", "featureGates", "TopologyAwareScheduling"],
            "the TopologyAwareScheduling feature gate is off, but the profile uses topology-aware scheduling: Kueue places nothing by topology, and ClusterQueues with topology-aware flavors admit nothing".into(),
            Some("remove the gate (it is on by default in Kueue 0.19), or remove topologies, topologyName and the topology requests".into()),
        );
    }
}

/// RK185: Kueue's docs list "No Topology-Aware Scheduling (TAS) support" for elastic workloads
/// (kueue@v0.19.2 `site/content/en/docs/concepts/elastic_workload.md`); with the alpha gate
/// `ElasticJobsViaWorkloadSlicesWithTAS` on, only unconstrained requests are accepted
/// (`pkg/scheduler/flavorassigner/tas_flavorassigner.go` `WorkloadsTopologyRequests`,
/// `ErrElasticRequiredTopologyNotSupported`).
fn elastic(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let gate = p
        .operators
        .kueue
        .as_ref()
        .and_then(|k| k.feature_gates.get("ElasticJobsViaWorkloadSlicesWithTAS"))
        == Some(&true);
    for (i, w) in p.workloads.iter().enumerate() {
        if !w.elastic {
            continue;
        }
        let head = w
            .head
            .iter()
            .map(|h| (ptr!["workloads", i, "head", "topology"], &h.topology));
        let workers = w
            .workers
            .iter()
            .enumerate()
            .map(|(j, g)| (ptr!["workloads", i, "workers", j, "topology"], &g.topology));
        for (at, t) in head.chain(workers) {
            let Some(t) = t else { continue };
            if gate && matches!(t, TopologyRequest::Unconstrained(_)) {
                continue;
            }
            ctx.report(
                &codes::TOPOLOGY_ELASTIC,
                &at,
                format!(
                    "{} `{}` is elastic and asks for `{}`: Kueue v0.19 admits elastic workloads without topology-aware scheduling{}",
                    w.kind.as_str(),
                    w.name,
                    t.describe(),
                    if gate { " (with ElasticJobsViaWorkloadSlicesWithTAS, only unconstrained requests)" } else { "" }
                ),
                Some("remove `topology`, or make the workload non-elastic (fixed replicas)".into()),
            );
        }
    }
}

/// RK184 for a pod set whose requests fall into two resource groups that offer only
/// topology-aware flavors: Kueue assigns it two TAS flavors and fails it
/// (`MultipleTASFlavorsAssignedError`, kueue@v0.19.2 `pkg/scheduler/flavorassigner/errors.go`).
fn two_topology_flavors(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let view = QuotaView::new(p);
    let by_name = QueueIndex::new(p);
    for (i, w) in p.workloads.iter().enumerate() {
        let Some((_, cq)) = by_name.cluster_queue_of(w) else {
            continue;
        };
        for s in pod_sets(i, w) {
            if s.topology.is_none() && !tas_only(p, cq) {
                continue;
            }
            let counted = view.apply(&s.requests);
            let groups: Vec<String> = cq
                .resource_groups
                .iter()
                .filter(|g| {
                    g.covered_resources
                        .iter()
                        .any(|r| counted.get(r.as_str()).is_some_and(|q| !q.is_zero()))
                })
                .filter(|g| {
                    g.flavors
                        .iter()
                        .all(|fq| flavor(p, &fq.name).is_some_and(|f| f.topology_name.is_some()))
                })
                .map(|g| {
                    g.covered_resources
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .collect();
            if groups.len() < 2 {
                continue;
            }
            ctx.report(
                &codes::TOPOLOGY_UNSERVED,
                &s.pointer,
                format!(
                    "{} asks for topology-aware placement, and ClusterQueue `{}` covers its resources in {} resource groups of topology-aware flavors ([{}]): Kueue would assign it two topology-aware flavors and never admits it",
                    s.describe(),
                    cq.name,
                    groups.len(),
                    groups.join("], [")
                ),
                Some("cover all the resources a topology-aware pod set requests in one resource group".into()),
            );
        }
    }
}

fn flavor<'p>(p: &'p Profile, name: &str) -> Option<&'p Flavor> {
    p.flavors.iter().find(|f| f.name.as_str() == name)
}

fn topology<'p>(p: &'p Profile, f: &Flavor) -> Option<&'p Topology> {
    let name = f.topology_name.as_ref()?;
    p.topologies.iter().find(|t| t.name == *name)
}

/// Every flavor of the queue is topology-aware (`isTASOnly`): Kueue implies TAS then.
fn tas_only(p: &Profile, cq: &ClusterQueue) -> bool {
    cq.resource_groups
        .iter()
        .flat_map(|g| &g.flavors)
        .all(|fq| flavor(p, &fq.name).is_some_and(|f| f.topology_name.is_some()))
}

/// A node pool with the level labels its nodes carry.
struct Pool<'a> {
    group: NodeGroup<'a>,
    levels: BTreeMap<String, Carried>,
}

impl Pool<'_> {
    fn carries_labels(&self, f: &Flavor) -> bool {
        f.node_labels.iter().all(|(k, v)| {
            self.group
                .labels
                .get(k.as_str())
                .is_some_and(|x| x == v.as_str())
        })
    }
}

/// RK206, RK207, RK208 and RK195.
fn nodes(ctx: &mut Ctx<'_>, cloud: &dyn Cloud) {
    let p = ctx.profile;
    let pools: Vec<Pool<'_>> = cloud
        .node_groups()
        .into_iter()
        .map(|group| Pool {
            levels: topology_labels(cloud, &group),
            group,
        })
        .collect();
    let words = cloud.words();
    for f in &p.flavors {
        let Some(topo) = topology(p, f) else { continue };
        let t = p
            .topologies
            .iter()
            .position(|x| x.name == topo.name)
            .unwrap_or(0);
        let backing: Vec<&Pool<'_>> = pools.iter().filter(|x| x.carries_labels(f)).collect();
        if backing.is_empty() {
            continue; // RK142
        }
        for (j, level) in topo.levels.iter().enumerate() {
            let mut missing = Vec::new();
            let mut uncertain = Vec::new();
            for pool in &backing {
                match pool.levels.get(level.as_str()) {
                    None => missing.push(pool.group.name),
                    Some(Carried::Uncertain(why)) => uncertain.push((pool.group.name, *why)),
                    Some(_) => {}
                }
            }
            let at = ptr!["topologies", t, "levels", j];
            let carried_by_all: Vec<&str> = backing
                .iter()
                .flat_map(|x| x.levels.keys())
                .filter(|k| {
                    backing
                        .iter()
                        .all(|x| matches!(x.levels.get(k.as_str()), Some(c) if !matches!(c, Carried::Uncertain(_))))
                })
                .map(String::as_str)
                .filter(|k| crate::cloud::placement_rank(k).is_some() || *k == words.pool_label)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let hint = format!(
                "use levels the nodes carry ({}: {}), or back the flavor with a {} whose machines carry `{level}`",
                words.service,
                carried_by_all.join(", "),
                words.pool
            );
            if missing.len() == backing.len() {
                ctx.report(
                    &codes::TOPOLOGY_LABEL_NOT_CARRIED,
                    &at,
                    format!(
                        "no node of the {} behind flavor `{}` ({}) carries level `{level}` of Topology `{}`: Kueue drops nodes that lack a level, so the flavor has no nodes to place on and its workloads wait for ever",
                        words.pool,
                        f.name,
                        missing.join(", "),
                        topo.name
                    ),
                    Some(hint),
                );
            } else if !missing.is_empty() || !uncertain.is_empty() {
                let mut parts = Vec::new();
                if !missing.is_empty() {
                    parts.push(format!(
                        "{} `{}` {}",
                        words.pool,
                        missing.join("`, `"),
                        if missing.len() == 1 {
                            "lacks it"
                        } else {
                            "lack it"
                        }
                    ));
                }
                for (name, why) in &uncertain {
                    parts.push(format!("`{name}`: {why}"));
                }
                ctx.report(
                    &codes::TOPOLOGY_LABEL_SOME_POOLS,
                    &at,
                    format!(
                        "not every node behind flavor `{}` surely carries level `{level}` of Topology `{}` ({}): topology-aware scheduling leaves the nodes without it out",
                        f.name,
                        topo.name,
                        parts.join("; ")
                    ),
                    Some(hint),
                );
            }
        }
    }
    required_domains(ctx, &pools);
    from_zero(ctx, cloud, &pools);
    taints(ctx, &pools);
}

/// RK196: Kueue's TAS filters nodes by the taints the pod set does not tolerate, with the pod
/// template's tolerations and the flavor's (kueue@v0.19.2
/// `pkg/cache/scheduler/tas_flavor_snapshot.go`, `requirements.podRequirements.Tolerations =
/// append(info.Tolerations, s.tolerations...)`; `scheduling_simulator_default.go`
/// `FindMatchingUntoleratedTaint`). The toleration the ExtendedResourceToleration admission
/// plugin gives a pod that requests `nvidia.com/gpu` is added when the pod is created, after
/// Kueue placed it: it does not count.
fn taints(ctx: &mut Ctx<'_>, pools: &[Pool<'_>]) {
    let p = ctx.profile;
    let by_name = QueueIndex::new(p);
    let mut reported: Vec<&str> = Vec::new();
    for (i, w) in p.workloads.iter().enumerate() {
        let Some((_, cq)) = by_name.cluster_queue_of(w) else {
            continue;
        };
        let implied = tas_only(p, cq);
        for s in pod_sets(i, w) {
            if s.topology.is_none() && !implied {
                continue;
            }
            for name in cq
                .resource_groups
                .iter()
                .flat_map(|g| &g.flavors)
                .map(|f| &f.name)
            {
                let Some((fi, f)) = p
                    .flavors
                    .iter()
                    .enumerate()
                    .find(|(_, f)| f.name == *name && f.topology_name.is_some())
                else {
                    continue;
                };
                if reported.contains(&f.name.as_str()) {
                    continue;
                }
                let backing: Vec<&Pool<'_>> =
                    pools.iter().filter(|x| x.carries_labels(f)).collect();
                let blocked: Vec<(&str, &crate::profile::Taint)> = backing
                    .iter()
                    .filter_map(|x| {
                        let t = x.group.taints.iter().find(|t| {
                            t.effect != crate::profile::TaintEffect::PreferNoSchedule
                                && !s
                                    .tolerations
                                    .iter()
                                    .chain(&f.tolerations)
                                    .any(|tol| tol.tolerates(t))
                        })?;
                        Some((x.group.name, t))
                    })
                    .collect();
                if backing.is_empty() || blocked.len() < backing.len() {
                    continue;
                }
                reported.push(f.name.as_str());
                let (_, first) = blocked[0];
                let list: Vec<String> = blocked
                    .iter()
                    .map(|(pool, t)| format!("`{pool}`: {}:{}", t.key, t.effect.as_str()))
                    .collect();
                let at = if f.tolerations.is_empty() {
                    ptr!["flavors", fi, "topologyName"]
                } else {
                    ptr!["flavors", fi, "tolerations"]
                };
                ctx.report(
                    &codes::TAS_TAINT_NOT_TOLERATED,
                    &at,
                    format!(
                        "topology-aware flavor `{}` has only nodes with a taint {} does not tolerate ({}): Kueue's TAS counts the tolerations of the pod template and the flavor, so it finds no node and never admits the workload",
                        f.name,
                        s.describe(),
                        list.join("; ")
                    ),
                    Some(format!(
                        "add `{{key: {}, operator: Exists, effect: {}}}` to the tolerations of flavor `{}` (Kueue adds them to the pods it admits)",
                        first.key,
                        first.effect.as_str(),
                        f.name
                    )),
                );
            }
        }
    }
}

/// How many pods like `s` one node of the pool holds (`None`: unknown size, or the pod requests
/// nothing the catalogue measures). TAS fits the pod's own requests, not what Kueue counts
/// (kueue@v0.19.2 `pkg/scheduler/flavorassigner/tas_flavorassigner.go`, "Use PodSpec directly
/// for TAS placement").
fn pods_per_node(pool: &Pool<'_>, cloud: &dyn Cloud, s: &PodSet<'_>) -> Option<u64> {
    let alloc = pool.group.allocatable(cloud)?;
    s.requests
        .iter()
        .filter(|(_, q)| !q.is_zero())
        .filter_map(|(r, q)| alloc.get(r)?.fits(*q))
        .min()
}

/// The most pods like `s` one domain of `level` can hold among `pools` (every one carrying
/// all of the Topology's levels), at the pools' largest size: a node for a per-node level, the
/// pools sharing one value of a per-pool label, and all of them together where raykueue
/// cannot know the values (an upper bound). `None` when a size is unknown.
fn largest_domain(
    pools: &[&Pool<'_>],
    cloud: &dyn Cloud,
    s: &PodSet<'_>,
    level: &str,
) -> Option<u64> {
    let mut shared: BTreeMap<String, u64> = BTreeMap::new();
    let mut best = 0_u64;
    for (i, pool) in pools.iter().enumerate() {
        let per_node = pods_per_node(pool, cloud, s)?;
        let nodes = u64::from(pool.group.size.max);
        if nodes == 0 {
            continue;
        }
        let all = per_node.saturating_mul(nodes);
        let key = match pool.levels.get(level) {
            Some(Carried::PerNode) => {
                best = best.max(per_node);
                continue;
            }
            Some(Carried::PerPool) => pool
                .group
                .labels
                .get(level)
                .map_or_else(|| format!("pool {i}"), |v| format!("value {v}")),
            _ => "all".to_owned(),
        };
        let e = shared.entry(key).or_default();
        *e = e.saturating_add(all);
    }
    Some(shared.into_values().fold(best, u64::max))
}

/// RK208: a `required` level none of whose domains can hold the pod set.
fn required_domains(ctx: &mut Ctx<'_>, pools: &[Pool<'_>]) {
    let p = ctx.profile;
    let Some(cloud) = p.cloud() else { return };
    let view = QuotaView::new(p);
    let by_name = QueueIndex::new(p);
    for (i, w) in p.workloads.iter().enumerate() {
        let Some((_, cq)) = by_name.cluster_queue_of(w) else {
            continue;
        };
        for s in pod_sets(i, w) {
            let Some(TopologyRequest::Required(level)) = s.topology else {
                continue;
            };
            let counted = view.apply(&s.requests);
            let mut sizes = Vec::new();
            let mut unknown = false;
            for g in &cq.resource_groups {
                if !g
                    .covered_resources
                    .iter()
                    .any(|r| counted.get(r.as_str()).is_some_and(|q| !q.is_zero()))
                {
                    continue;
                }
                for fq in &g.flavors {
                    let Some(f) = flavor(p, &fq.name) else {
                        continue;
                    };
                    let Some(topo) = topology(p, f) else { continue };
                    if !topo.levels.iter().any(|l| l == level) {
                        continue;
                    }
                    let usable: Vec<&Pool<'_>> = pools
                        .iter()
                        .filter(|x| x.carries_labels(f))
                        .filter(|x| {
                            topo.levels
                                .iter()
                                .all(|l| x.levels.contains_key(l.as_str()))
                        })
                        .collect();
                    if usable.is_empty() {
                        unknown = true; // RK206, RK142
                        continue;
                    }
                    match largest_domain(&usable, cloud, &s, level) {
                        Some(n) => sizes.push((f.name.as_str(), n)),
                        None => unknown = true,
                    }
                }
            }
            if unknown || sizes.is_empty() || sizes.iter().any(|(_, n)| *n >= s.count) {
                continue;
            }
            let per: Vec<String> = sizes
                .iter()
                .map(|(f, n)| format!("flavor `{f}`: at most {n}"))
                .collect();
            let Role::Worker(j) = s.role else {
                continue;
            };
            ctx.report(
                &codes::TOPOLOGY_DOMAIN_TOO_SMALL,
                &ptr!["workloads", i, "workers", j, "topology"],
                format!(
                    "{} requires its {} pods in one domain of `{level}`, but no such domain can hold them ({}; node allocatable × the pools' largest size): Kueue never admits the workload",
                    s.describe(),
                    s.count,
                    per.join("; ")
                ),
                Some(format!(
                    "ask for a broader level, or `preferred: {level}`; or make the pods smaller or fewer"
                )),
            );
        }
    }
}

/// RK195: TAS assigns pods only to nodes that exist (its cache holds Ready nodes), so a
/// topology-aware flavor whose pools may all be at zero gets no nodes unless a
/// ProvisioningRequest check applies to it: then Kueue delays the topology assignment until
/// the nodes are provisioned (kueue@v0.19.2 `pkg/scheduler/flavorassigner/tas_flavorassigner.go`
/// `podSetTopologyRequest`, `HasProvRequestAdmissionCheck`).
fn from_zero(ctx: &mut Ctx<'_>, cloud: &dyn Cloud, pools: &[Pool<'_>]) {
    let p = ctx.profile;
    let Some(queues) = &p.queues else { return };
    for (c, cq) in queues.cluster_queues.iter().enumerate() {
        for (g, group) in cq.resource_groups.iter().enumerate() {
            for (k, fq) in group.flavors.iter().enumerate() {
                let Some(f) = flavor(p, &fq.name).filter(|f| f.topology_name.is_some()) else {
                    continue;
                };
                let backing: Vec<&Pool<'_>> =
                    pools.iter().filter(|x| x.carries_labels(f)).collect();
                if backing.is_empty() || backing.iter().any(|x| x.group.size.min > 0) {
                    continue;
                }
                // A check-capacity request only looks for room on the nodes there are
                // ("Determines if sufficient capacity exists in the cluster",
                // kubernetes/autoscaler@cluster-autoscaler-1.35.0 `cluster-autoscaler/FAQ.md`):
                // it adds none, so it does not count here.
                let provisioned = cq.admission_checks.iter().any(|check| {
                    check.applies_to(&f.name)
                        && p.admission_checks.iter().any(|a| {
                            a.name.as_str() == check.name()
                                && a.provisioning_request.provisioning_class_name.as_str()
                                    != CLASS_CHECK_CAPACITY
                        })
                });
                if provisioned {
                    continue;
                }
                let names: Vec<&str> = backing.iter().map(|x| x.group.name).collect();
                ctx.report(
                    &codes::TAS_FROM_ZERO,
                    &ptr!["queues", "clusterQueues", c, "resourceGroups", g, "flavors", k, "name"],
                    format!(
                        "ClusterQueue `{}` places flavor `{}` by topology, and its {} ({}) may be at zero nodes: topology-aware scheduling assigns pods only to nodes that exist, so Kueue admits nothing there and no pod asks {}'s autoscaler for a node",
                        cq.name,
                        f.name,
                        cloud.words().pool,
                        names.join(", "),
                        cloud.words().service
                    ),
                    Some("add a ProvisioningRequest admission check of a class that scales up (not check-capacity) that applies to this flavor (admissionChecks), or keep nodes in the pools (autoscale.min or count)".into()),
                );
            }
        }
    }
}
