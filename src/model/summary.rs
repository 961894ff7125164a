//! The reviewer summary (`SUMMARY.md` in the bundle): quotas per ClusterQueue, cohort totals,
//! node pools and which workloads go to which queue — what a reviewer checks in a pull request
//! — and the queue behaviour the standard scenarios of `simulate::standard` compute.

use super::moved;
use crate::profile::{Admission, DEFAULT_LOCAL_QUEUE, Profile, Quantity};
use crate::simulate::standard::Unreclaimable;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};

/// Cohort → (flavor, resource) → the nominal quotas of its ClusterQueues summed.
type CohortSums = BTreeMap<String, BTreeMap<(String, String), Quantity>>;

/// The template context of `SUMMARY.md`; `unreclaimable` is the checks' RK146 finding.
pub(crate) fn summary_context(p: &Profile, unreclaimable: &[Unreclaimable]) -> Value {
    let fair = p.fair_sharing().is_some();
    let (queues, cohorts) = cluster_queues(p, fair);
    let declared = p.queues.as_ref().is_some_and(|q| !q.cohorts.is_empty());
    let cohorts: Vec<Value> = if declared {
        // With Cohort objects: what each holds itself and its whole subtree holds (Kueue's
        // `SubtreeQuota`), rather than sums of cohortName.
        tree_cohorts(p, fair)
    } else {
        cohorts
            .into_iter()
            .map(|(name, totals)| {
                json!({
                    "name": name,
                    "subtree": false,
                    "rows": totals.into_iter().map(|((flavor, resource), q)| json!({
                        "flavor": flavor, "resource": resource, "nominal": q.canonical(),
                    })).collect::<Vec<_>>(),
                })
            })
            .collect()
    };
    let provider = p.cloud();
    let pools = node_pools(provider);
    let workloads = workload_queues(p);
    moved([
        ("name", json!(p.name)),
        ("description", json!(p.description)),
        ("behaviour", behaviour(p, unreclaimable)),
        ("queues", Value::Array(queues)),
        ("cohorts", Value::Array(cohorts)),
        ("tree", json!(declared.then(|| tree_graph(p, fair)))),
        ("fairSharing", fair_sharing(p)),
        ("pools", Value::Array(pools)),
        (
            "machineHeader",
            json!(provider.map_or("VM size", |pr| pr.words().machine)),
        ),
        ("workloads", Value::Array(workloads)),
        ("monitoring", super::monitoring::summary(p)),
    ])
}

/// Each ClusterQueue's section of the summary, and the nominal quotas summed per `cohortName`.
fn cluster_queues(p: &Profile, fair: bool) -> (Vec<Value>, CohortSums) {
    let mut queues = Vec::new();
    // cohort → resource → (nominal, borrowing limits known?)
    let mut cohorts = CohortSums::new();
    if let Some(q) = &p.queues {
        // Each ClusterQueue's LocalQueues, in profile order: one pass, not one per queue.
        let mut local: HashMap<&str, Vec<String>> = HashMap::new();
        for l in &q.local_queues {
            local
                .entry(l.cluster_queue.as_str())
                .or_default()
                .push(format!("{}/{}", l.namespace_in(p), l.name));
        }
        for cq in &q.cluster_queues {
            let mut rows = Vec::new();
            for rg in &cq.resource_groups {
                for f in &rg.flavors {
                    for r in &f.resources {
                        rows.push(json!({
                            "flavor": f.name,
                            "resource": r.name,
                            "nominal": r.nominal_quota.canonical(),
                            "borrowing": r.borrowing_limit.map_or_else(|| if cq.cohort_name.is_some() { "unlimited".to_owned() } else { "–".to_owned() }, Quantity::canonical),
                            "lending": r.lending_limit.map_or_else(|| if cq.cohort_name.is_some() { "all".to_owned() } else { "–".to_owned() }, Quantity::canonical),
                        }));
                        if let Some(c) = &cq.cohort_name {
                            let total = cohorts
                                .entry(c.to_string())
                                .or_default()
                                .entry((f.name.to_string(), r.name.to_string()))
                                .or_insert_with(Quantity::zero);
                            *total = total.plus(r.nominal_quota);
                        }
                    }
                }
            }
            let local = local.get(cq.name.as_str()).cloned().unwrap_or_default();
            let checks: Vec<Value> = cq
                .admission_checks
                .iter()
                .map(|c| {
                    let pr = p
                        .admission_checks
                        .iter()
                        .find(|a| a.name.as_str() == c.name())
                        .map(|a| &a.provisioning_request);
                    json!({
                        "name": c.name(),
                        "class": pr.map(|r| r.provisioning_class_name.as_str()),
                        "managed": pr.map(|r| r.managed_resources.iter().map(ToString::to_string).collect::<Vec<_>>()),
                        "onFlavors": c.on_flavors(),
                    })
                })
                .collect();
            queues.push(moved([
                ("name", json!(cq.name)),
                ("cohort", json!(cq.cohort_name)),
                (
                    "weight",
                    json!(fair.then(|| {
                        cq.fair_sharing_weight
                            .map_or_else(|| "1".to_owned(), Quantity::canonical)
                    })),
                ),
                ("strategy", json!(cq.queueing_strategy)),
                (
                    "preemption",
                    json!(cq.preemption.as_ref().map(|pr| format!(
                        "within queue: {:?}, reclaim in cohort: {:?}",
                        pr.within_cluster_queue, pr.reclaim_within_cohort
                    ))),
                ),
                ("localQueues", Value::from(local)),
                ("checks", Value::Array(checks)),
                ("rows", Value::Array(rows)),
            ]));
        }
    }
    (queues, cohorts)
}

/// The node pools of the provider's node groups: per node, at their largest size, and how many.
fn node_pools(provider: Option<&dyn crate::cloud::Cloud>) -> Vec<Value> {
    provider
        .map(crate::cloud::Cloud::node_groups)
        .unwrap_or_default()
        .into_iter()
        .map(|g| {
            // Per node from the provider's catalogue, and the pool's total at its largest size.
            let size = g.instance;
            let per_node = size.map_or_else(
                || "unknown size".to_owned(),
                |s| {
                    let gpu = if s.gpus > 0 {
                        format!(", {} × {}", s.gpus, s.gpu_model)
                    } else {
                        String::new()
                    };
                    format!("{} vCPU, {} GiB{gpu}", s.vcpus, s.memory_gib)
                },
            );
            let max = g.size.max;
            let at_max = size.map_or_else(
                || "–".to_owned(),
                |s| {
                    let gpu = if s.gpus > 0 {
                        format!(", {} GPU", s.gpus * max)
                    } else {
                        String::new()
                    };
                    format!("{} vCPU, {} GiB{gpu}", s.vcpus * max, s.memory_gib * max)
                },
            );
            let n = g.size;
            let nodes = if n.autoscaled {
                format!("{}–{} (autoscaled)", n.min, n.max)
            } else if n.given {
                n.max.to_string()
            } else {
                format!(
                    "{} ({}'s default)",
                    n.max,
                    provider.map_or("the CLI", |pr| pr.words().cli)
                )
            };
            json!({
                "name": g.name,
                "mode": g.mode,
                "vmSize": g.machine,
                "perNode": per_node,
                "atMax": at_max,
                "nodes": nodes,
                "taints": g.own_taints.join(", "),
            })
        })
        .collect()
}

/// Each workload and the queue it is admitted through, if any.
fn workload_queues(p: &Profile) -> Vec<Value> {
    p.workloads
        .iter()
        .map(|w| {
            json!({
                "kind": w.kind.as_str(),
                "name": w.name,
                "queue": match w.admission(p) {
                    Admission::Queued { queue, defaulted: false } => Some(queue.to_owned()),
                    Admission::Queued { queue, defaulted: true } => {
                        Some(format!("{queue} (Kueue's default LocalQueue)"))
                    }
                    Admission::PodByPod => Some(format!(
                        "{DEFAULT_LOCAL_QUEUE}, pod by pod (its kind's integration is off)"
                    )),
                    Admission::Unmanaged => None,
                },
                "priority": w.priority_class,
            })
        })
        .collect()
}

/// The "Queue behaviour" section: per standard scenario its table rows, its Mermaid `gantt`
/// lines and the whole-workload sentences; then the workloads that cannot reclaim (RK146).
fn behaviour(p: &Profile, unreclaimable: &[Unreclaimable]) -> Value {
    let (runs, left_out) = crate::simulate::standard::runs(p);
    let runs: Vec<Value> = runs
        .into_iter()
        .map(|run| {
            let mut sections: Vec<Value> = Vec::new();
            for b in &run.bars {
                let tag = if b.preempted { "crit, " } else { "active, " };
                let line = format!(
                    "{} holds {} :{tag}{}, {}",
                    b.workload, b.holds, b.start, b.end
                );
                match sections.last_mut() {
                    Some(s) if s["name"] == b.cq.as_str() => {
                        if let Some(bars) = s["bars"].as_array_mut() {
                            bars.push(Value::String(line));
                        }
                    }
                    _ => sections.push(json!({"name": b.cq, "bars": [line]})),
                }
            }
            json!({
                "first": run.first,
                "cohort": run.cohort,
                "resource": run.resource,
                "rows": run.rows.iter().map(|r| json!({
                    "step": r.step, "cq": r.cq, "holds": r.holds, "borrowed": r.borrowed,
                    "happened": r.happened, "share": r.share,
                })).collect::<Vec<_>>(),
                "sections": sections,
                "wholeWorkload": run.whole_workload,
            })
        })
        .collect();
    // The profile's own queued workloads in a cohort that can reclaim: for them the table's
    // step 2 holds as it does for the synthetic workloads.
    let by_name = crate::facts::pods::QueueIndex::new(p);
    let mut reclaiming: Vec<(String, Vec<String>)> = Vec::new();
    for (i, w) in p.workloads.iter().enumerate() {
        let Some((c, cq)) = by_name.cluster_queue_of(w) else {
            continue;
        };
        if cq.cohort_name.is_none()
            || !w.admission(p).is_queued()
            || crate::simulate::standard::may_borrow(p, i, c)
        {
            continue;
        }
        let name = format!("`{}`", w.name);
        match reclaiming.iter_mut().find(|(c, _)| c == cq.name.as_str()) {
            Some((_, names)) => names.push(name),
            None => reclaiming.push((cq.name.to_string(), vec![name])),
        }
    }
    let reclaiming: Vec<String> = reclaiming
        .into_iter()
        .map(|(cq, names)| format!("{} (`{cq}`)", names.join(", ")))
        .collect();
    let unreclaimable: Vec<String> = unreclaimable
        .iter()
        .map(crate::simulate::standard::Unreclaimable::message)
        .collect();
    let shares = own_shares(&runs);
    moved([
        ("shares", shares),
        ("runs", Value::Array(runs)),
        ("steps", json!(crate::simulate::standard::STEPS)),
        ("end", json!(crate::simulate::standard::END)),
        ("unreclaimable", Value::from(unreclaimable)),
        ("reclaiming", Value::from(reclaiming)),
        ("leftOut", json!(left_out)),
        ("maxRuns", json!(crate::simulate::standard::MAX_RUNS)),
        ("maxPeers", json!(crate::simulate::standard::MAX_PEERS)),
    ])
}

/// Per ClusterQueue with a standard scenario of its own, its weighted share after step 1
/// (alone, asking all it can get) and after the last step (all busy), with fair sharing on.
fn own_shares(runs: &[Value]) -> Value {
    let mut out = Vec::new();
    for run in runs {
        let first = &run["first"];
        let rows: Vec<&Value> = run["rows"]
            .as_array()
            .map(|r| r.iter().filter(|row| row["cq"] == *first).collect())
            .unwrap_or_default();
        let (Some(alone), Some(busy)) = (rows.first(), rows.last()) else {
            continue;
        };
        if alone["share"].is_null() {
            continue;
        }
        out.push(json!({"cq": first, "alone": alone["share"], "busy": busy["share"], "steps": rows.len()}));
    }
    Value::Array(out)
}

/// The fair-sharing section's facts: whether it is on, and its strategies.
fn fair_sharing(p: &Profile) -> Value {
    p.fair_sharing().map_or(Value::Null, |f| {
        json!({
            "strategies": f.preemption_strategies.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        })
    })
}

/// Per Cohort of the tree (declared and made-up), what it holds itself and in its subtree.
fn tree_cohorts(p: &Profile, fair: bool) -> Vec<Value> {
    let Some(q) = &p.queues else {
        return Vec::new();
    };
    let quotas = crate::facts::Quotas::new(q);
    let tree = &quotas.tree;
    let mut order: Vec<usize> = (0..tree.cohorts.len()).collect();
    order.sort_by_key(|&k| {
        (
            tree.cohorts[k].declared_at.is_none(),
            tree.cohorts[k].declared_at,
            tree.cohorts[k].name,
        )
    });
    order
        .into_iter()
        .map(|k| {
            let node = &tree.cohorts[k];
            let parent = node.parent.map(|p| tree.cohorts[p].name);
            let weight = node
                .spec
                .and_then(|s| s.fair_sharing_weight)
                .map_or_else(|| "1".to_owned(), Quantity::canonical);
            json!({
                "name": node.name,
                "parent": parent,
                "weight": (fair && parent.is_some()).then_some(weight),
                "subtree": true,
                "rows": quotas.cohort_rows(k).into_iter().map(|(flavor, resource, own, st)| json!({
                    "flavor": flavor,
                    "resource": resource,
                    "own": own.map_or_else(|| "–".to_owned(), Quantity::canonical),
                    "subtree": st.canonical(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// The Cohort tree as the lines of a Mermaid flowchart: Cohorts as boxes (their own quota,
/// their weight with fair sharing on), ClusterQueues as rounded boxes (their nominal quota per
/// resource over all flavors), an edge from each parent to each child.
fn tree_graph(p: &Profile, fair: bool) -> Vec<String> {
    let Some(q) = &p.queues else {
        return Vec::new();
    };
    let tree = crate::facts::cohorts::CohortTree::new(q);
    let totals = |groups: &[crate::profile::ResourceGroup]| {
        let mut by: Vec<(String, Quantity)> = Vec::new();
        for f in groups.iter().flat_map(|g| &g.flavors) {
            for r in &f.resources {
                match by.iter_mut().find(|(n, _)| n == r.name.as_str()) {
                    Some((_, t)) => *t = t.plus(r.nominal_quota),
                    None => by.push((r.name.to_string(), r.nominal_quota)),
                }
            }
        }
        by.iter()
            .map(|(n, t)| format!("{} {n}", t.canonical()))
            .collect::<Vec<_>>()
            .join(" · ")
    };
    let weight = |w: Option<Quantity>| {
        fair.then(|| {
            format!(
                "weight {}",
                w.map_or_else(|| "1".to_owned(), Quantity::canonical)
            )
        })
    };
    let mut lines = vec!["graph TD".to_owned()];
    for (k, node) in tree.cohorts.iter().enumerate() {
        let mut parts = vec![format!("Cohort {}", node.name)];
        if node.spec.is_none() {
            parts.push("no Cohort object".to_owned());
        }
        if let Some(w) = node
            .parent
            .and_then(|_| weight(node.spec.and_then(|s| s.fair_sharing_weight)))
        {
            parts.push(w);
        }
        let own = node
            .spec
            .map(|s| totals(&s.resource_groups))
            .unwrap_or_default();
        if !own.is_empty() {
            parts.push(format!("holds {own}"));
        }
        lines.push(format!("    co{k}[\"{}\"]", parts.join("<br/>")));
        if let Some(parent) = node.parent {
            lines.push(format!("    co{parent} --> co{k}"));
        }
    }
    for (c, cq) in q.cluster_queues.iter().enumerate() {
        let Some(parent) = tree.cq_parent[c] else {
            continue;
        };
        let mut parts = vec![cq.name.to_string()];
        if let Some(w) = weight(cq.fair_sharing_weight) {
            parts.push(w);
        }
        parts.push(totals(&cq.resource_groups));
        lines.push(format!("    cq{c}([\"{}\"])", parts.join("<br/>")));
        lines.push(format!("    co{parent} --> cq{c}"));
    }
    lines
}
