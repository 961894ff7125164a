//! `simulate --scenario S --snapshot-at T`: the cluster a scenario leaves at second `T`, as
//! `kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`
//! prints it, so that `simulate --state` can start from it (and a test can check that it
//! forecasts the future the whole run has: `tests/it/live.rs`).
//!
//! The queue objects are the profile's, as `gen` writes them. Each Workload submitted by `T`
//! is written as Kueue v0.19.2 keeps it (kubernetes-sigs/kueue@v0.19.2
//! `apis/kueue/v1beta2/workload_types.go`; the shapes of `pkg/util/testing/v1beta2/wrappers.go`
//! `ReserveQuotaAt`, `AdmittedAt`, `FinishedAt`, `Evicted`): its pod sets with one container
//! asking what the pod asks, `maximumExecutionTimeSeconds` its run time (so a forecast knows
//! when it ends), and the conditions of where it stands at `T`: `QuotaReserved` and
//! `Admitted` with `status.admission` while it runs, `Evicted` after a preemption (it waits
//! again), `Finished` once done. Times count from 2026-01-01T00:00:00Z, the scenario's second 0.

use crate::model::Object;
use crate::profile::{Profile, Quantity};
use crate::simulate::events::Event;
use crate::simulate::scenario::{Scenario, ScenarioWorkload};
use crate::simulate::world::{self, RawPodSet, World};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// 2026-01-01T00:00:00Z: the scenario's second 0.
const EPOCH: u64 = 1_767_225_600;

/// An RFC 3339 time, `t` seconds into the scenario.
fn time(t: u64) -> String {
    super::rfc3339(EPOCH + t)
}

/// Where one workload stands at the snapshot's second.
#[derive(Default)]
struct Standing<'e> {
    /// Admitted and running: since when, and per pod set resource → flavor.
    admitted: Option<(u64, &'e [BTreeMap<usize, usize>])>,
    /// Preempted and waiting again: when, and why.
    evicted: Option<(u64, &'static str)>,
    finished: Option<u64>,
}

/// Where each workload stands after the events (those of a run up to the snapshot's second).
fn standings<'e>(world: &World, events: &'e [Event]) -> Vec<Standing<'e>> {
    let mut out: Vec<Standing<'e>> = (0..world.workloads.len())
        .map(|_| Standing::default())
        .collect();
    for e in events {
        match e {
            Event::Admitted {
                time,
                workload,
                flavors,
                ..
            } => {
                out[*workload].admitted = Some((*time, flavors.as_slice()));
            }
            Event::Preempted {
                time,
                workload,
                reason,
                ..
            } => {
                out[*workload].admitted = None;
                out[*workload].evicted = Some((*time, reason.as_str()));
            }
            Event::Finished { time, workload } => {
                out[*workload].admitted = None;
                out[*workload].finished = Some(*time);
            }
            Event::Submitted { .. } | Event::End { .. } => {}
        }
    }
    out
}

fn condition(kind: &str, status: bool, at: u64, reason: &str, message: &str) -> Value {
    json!({
        "type": kind,
        "status": if status { "True" } else { "False" },
        "lastTransitionTime": time(at),
        "reason": reason,
        "message": message,
    })
}

fn requests(map: &BTreeMap<String, Quantity>) -> Value {
    Value::Object(
        map.iter()
            .map(|(k, q)| (k.clone(), Value::String(q.canonical())))
            .collect(),
    )
}

/// One pod set of the Workload's spec: `count` pods of one container asking what a pod asks.
fn pod_set(ps: &RawPodSet) -> Value {
    let mut spec = Map::new();
    spec.insert("restartPolicy".into(), "Never".into());
    spec.insert(
        "containers".into(),
        json!([{"name": "main", "resources": {"requests": requests(&ps.requests)}}]),
    );
    if !ps.node_selector.is_empty() {
        spec.insert("nodeSelector".into(), json!(ps.node_selector));
    }
    if !ps.tolerations.is_empty() {
        spec.insert("tolerations".into(), json!(ps.tolerations));
    }
    json!({"name": ps.name, "count": ps.count, "template": {"spec": spec}})
}

/// `status.admission`: per pod set the flavor of each resource and what it uses, as counted.
fn admission(world: &World, wl: usize, flavors: &[BTreeMap<usize, usize>]) -> Value {
    let spec = &world.workloads[wl];
    let assignments: Vec<Value> = spec
        .pod_sets
        .iter()
        .zip(flavors)
        .map(|(ps, assigned)| {
            let flavors: Map<String, Value> = assigned
                .iter()
                .map(|(&r, &f)| {
                    (
                        world.resources[r].clone(),
                        world.flavors[f].name.clone().into(),
                    )
                })
                .collect();
            let usage: Map<String, Value> = ps
                .requests
                .iter()
                .map(|&(r, _)| {
                    let q = ps.spelling.get(&r).copied().unwrap_or_else(Quantity::zero);
                    (world.resources[r].clone(), q.canonical().into())
                })
                .collect();
            json!({"name": ps.name, "count": ps.count, "flavors": flavors, "resourceUsage": usage})
        })
        .collect();
    json!({"clusterQueue": world.cqs[spec.cq].name, "podSetAssignments": assignments})
}

/// The Workload object of one submission, standing as it does at `at`.
fn workload(
    profile: &Profile,
    world: &World,
    wl: usize,
    w: &ScenarioWorkload,
    standing: &Standing<'_>,
) -> Value {
    let spec = &world.workloads[wl];
    let mut body = Map::new();
    body.insert("queueName".into(), w.queue.as_str().into());
    body.insert("priority".into(), spec.priority.into());
    if let Some(class) = world::priority_class_of(profile, w) {
        body.insert(
            "priorityClassRef".into(),
            json!({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": class}),
        );
    }
    body.insert("maximumExecutionTimeSeconds".into(), w.run_for.into());
    body.insert(
        "podSets".into(),
        world::raw_pod_sets(profile, w)
            .iter()
            .map(pod_set)
            .collect::<Vec<_>>()
            .into(),
    );
    let mut status = Map::new();
    let cq = &world.cqs[spec.cq].name;
    let conditions = match (standing.finished, standing.admitted, standing.evicted) {
        (Some(t), _, _) => vec![
            condition(
                "QuotaReserved",
                false,
                t,
                "Pending",
                "The workload has finished",
            ),
            condition(
                "Finished",
                true,
                t,
                "Succeeded",
                "Job finished successfully",
            ),
        ],
        (None, Some((t, flavors)), _) => {
            status.insert("admission".into(), admission(world, wl, flavors));
            vec![
                condition(
                    "QuotaReserved",
                    true,
                    t,
                    "QuotaReserved",
                    &format!("Quota reserved in ClusterQueue {cq}"),
                ),
                condition("Admitted", true, t, "Admitted", "The workload is admitted"),
            ]
        }
        (None, None, Some((t, reason))) => vec![
            condition(
                "QuotaReserved",
                false,
                t,
                "Preempted",
                "Preempted to accommodate a workload",
            ),
            condition(
                "Evicted",
                true,
                t,
                "Preempted",
                "Preempted to accommodate a workload",
            ),
            condition(
                "Preempted",
                true,
                t,
                reason,
                "Preempted to accommodate a workload",
            ),
        ],
        (None, None, None) => vec![condition(
            "QuotaReserved",
            false,
            spec.submit_at,
            "Pending",
            "Waiting for quota",
        )],
    };
    status.insert("conditions".into(), conditions.into());
    json!({
        "apiVersion": crate::input::state::KUEUE_API,
        "kind": "Workload",
        "metadata": {
            "name": w.name,
            "namespace": profile.namespace,
            "creationTimestamp": time(w.submit_at),
        },
        "spec": body,
        "status": status,
    })
}

/// The snapshot at second `at` of a run whose events (up to `at`) are given: the profile's
/// queue objects, then the Workloads submitted by then, by name; one `v1` `List`.
pub(crate) fn snapshot(
    profile: &Profile,
    scenario: &Scenario,
    world: &World,
    events: &[Event],
    platform: &[Object],
    at: u64,
) -> Value {
    let mut items: Vec<Value> = platform
        .iter()
        .filter(|o| super::DRIFT_KINDS.contains(&o.kind))
        .map(|o| o.value.clone())
        .collect();
    let standing = standings(world, events);
    let index = world.by_name();
    let mut submitted: Vec<(&ScenarioWorkload, usize)> = scenario
        .workloads
        .iter()
        .filter(|w| w.submit_at <= at)
        .filter_map(|w| Some((w, *index.get(w.name.as_str())?)))
        .collect();
    submitted.sort_by_key(|(_, wl)| *wl);
    items.extend(
        submitted
            .into_iter()
            .map(|(w, wl)| workload(profile, world, wl, w, &standing[wl])),
    );
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

/// One workload of a scenario as a real Kueue is given it: the pending Workload object in its
/// LocalQueue's namespace (no status, no creation time: the API server sets it), the
/// ClusterQueue its LocalQueue points at, and when it comes and for how long it runs once
/// admitted. The e2e tier's replay (`xtask e2e replay`) creates these on a real
/// Kueue, so the two runs start from the same objects.
#[derive(Debug, Clone)]
pub struct Submission {
    pub name: String,
    pub namespace: String,
    pub cluster_queue: String,
    pub submit_at: u64,
    pub run_for: u64,
    pub object: Value,
}

/// Every workload of the scenario, by submission time, then name. Without
/// `maximumExecutionTimeSeconds`: the replay ends each workload itself, `runFor` scenario
/// seconds after its admission.
pub fn submissions(profile: &Profile, scenario: &Scenario) -> Vec<Submission> {
    let world = world::build(profile, scenario);
    let index = world.by_name();
    let mut out: Vec<Submission> = scenario
        .workloads
        .iter()
        .filter_map(|w| {
            let wl = *index.get(w.name.as_str())?;
            let mut object = workload(profile, &world, wl, w, &Standing::default());
            if let Some(o) = object.as_object_mut() {
                o.remove("status");
            }
            let lq = profile.queues.as_ref().and_then(|q| {
                q.local_queues
                    .iter()
                    .find(|l| l.name.as_str() == w.queue.as_str())
            });
            let namespace = lq
                .and_then(|l| l.namespace.as_ref())
                .map_or_else(|| profile.namespace.to_string(), ToString::to_string);
            if let Some(m) = object["metadata"].as_object_mut() {
                m.remove("creationTimestamp");
                m.insert("namespace".into(), namespace.clone().into());
            }
            object["spec"]
                .as_object_mut()
                .map(|s| s.remove("maximumExecutionTimeSeconds"));
            Some(Submission {
                name: w.name.clone(),
                namespace,
                cluster_queue: world.cqs[world.workloads[wl].cq].name.clone(),
                submit_at: w.submit_at,
                run_for: w.run_for,
                object,
            })
        })
        .collect();
    out.sort_by(|a, b| (a.submit_at, &a.name).cmp(&(b.submit_at, &b.name)));
    out
}
