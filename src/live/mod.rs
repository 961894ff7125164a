//! The pipeline for a live cluster's state (`--state`): the snapshot read
//! (`input::state`), every object checked against its CRD (output validation, as
//! `raykueue validate` checks a manifest), the Workloads read into the simulator's terms,
//! and then either `explain` (why each pending Workload waits) or drift (where the live queue
//! objects differ from what the profile compiles to, located in the profile).

pub(crate) mod snapshot;

pub(crate) use snapshot::snapshot;

use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::pointer::{Pointer, ptr};
use crate::compile;
use crate::input::load::Loaded;
use crate::input::state::{LiveObject, LiveState};
use crate::output::validate::{self, Origin, Place, Verdict};
use crate::profile::{Profile, Quantity, Toleration};
use crate::simulate::live::{self as sim_live, Blocker, Explanation, LivePodSet, LiveWorkload};
use crate::simulate::scenario::Scenario;
use serde_json::Value;
use std::collections::BTreeMap;

/// Metadata the API server sets on every object it returns; not part of what a user writes,
/// so not checked against the CRD's metadata rules.
const SERVER_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "ownerReferences",
    "finalizers",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Every object of the snapshot against its CRD: the findings, located in the snapshot.
pub(crate) fn validate_state(state: &LiveState) -> Vec<Diagnostic> {
    // 10,000 Workloads are a tenth of `explain`'s time on one core: the objects are
    // checked on all of them, their findings kept in snapshot order.
    let wide = crate::base::par::wide(state.objects.len());
    crate::base::par::map(wide, &state.objects, |o| validate_object(state, o))
        .into_iter()
        .flatten()
        .collect()
}

/// One object against its CRD, without the metadata the API server sets.
fn validate_object(state: &LiveState, o: &LiveObject) -> Vec<Diagnostic> {
    let value = &o.value;
    let Verdict::Checked(violations) = validate::object_skipping(value, SERVER_METADATA) else {
        return Vec::new();
    };
    let file = &state.files[o.file];
    let place = Place {
        source: &file.source,
        object: value,
        spans: &file.spans[o.doc],
        base: &o.base,
    };
    let name = validate::object_name(value);
    violations
        .iter()
        .map(|v| validate::diagnostic(Origin::Manifest, &name, v, Some(place)))
        .collect()
}

/// An RFC 3339 UTC time of `secs` seconds since 1970, as the API server writes times.
fn rfc3339(secs: u64) -> String {
    humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .to_string()
}

/// Seconds since 1970 of an RFC 3339 UTC time (`2026-01-02T03:04:05Z`, as the API server
/// writes `creationTimestamp`); `None` when it is not one.
fn epoch_seconds(text: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339(text).ok()?;
    let secs = t.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    i64::try_from(secs).ok()
}

fn condition(v: &Value, kind: &str) -> bool {
    v["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"].as_str() == Some(kind) && c["status"].as_str() == Some("True"))
    })
}

/// A pod's requests as Kueue counts them: the containers' sum, or an init container's when
/// larger (the pod's effective request); overhead added.
fn pod_requests(pod_spec: &Value) -> BTreeMap<String, Quantity> {
    let requests_of = |c: &Value| -> BTreeMap<String, Quantity> {
        c["resources"]["requests"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| {
                        let text = match v {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            _ => return None,
                        };
                        Some((k.clone(), Quantity::parse(&text).ok()?))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut sum: BTreeMap<String, Quantity> = BTreeMap::new();
    for c in pod_spec["containers"].as_array().into_iter().flatten() {
        for (k, q) in requests_of(c) {
            let e = sum.entry(k).or_insert_with(Quantity::zero);
            *e = e.plus(q);
        }
    }
    for c in pod_spec["initContainers"].as_array().into_iter().flatten() {
        for (k, q) in requests_of(c) {
            let e = sum.entry(k).or_insert_with(Quantity::zero);
            if q.nanos() > e.nanos() {
                *e = q;
            }
        }
    }
    if let Some(over) = pod_spec["overhead"].as_object() {
        for (k, v) in over {
            if let Some(q) = v.as_str().and_then(|s| Quantity::parse(s).ok()) {
                let e = sum.entry(k.clone()).or_insert_with(Quantity::zero);
                *e = e.plus(q);
            }
        }
    }
    sum
}

/// What the live state says about one Workload beyond its requests.
#[derive(Clone, Debug, Default)]
pub(crate) struct LiveFacts {
    pub(crate) finished: bool,
    /// Holds quota (`QuotaReserved`) but is not `Admitted`: its admission checks decide.
    pub(crate) reserved_only: bool,
    pub(crate) inactive: bool,
    /// Admission checks not `Ready`: (name, state, message).
    pub(crate) checks: Vec<(String, String, String)>,
}

/// When a condition of a Workload last changed, in epoch seconds.
fn condition_time(v: &Value, kind: &str) -> Option<i64> {
    v["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"].as_str() == Some(kind))?["lastTransitionTime"]
        .as_str()
        .and_then(epoch_seconds)
}

/// The snapshot's time: the latest creation or condition change of its Workloads (kubectl
/// prints no time of its own), as an offset from the earliest creation.
fn snapshot_time(state: &LiveState, first: i64) -> u64 {
    let latest = state
        .of_kind("Workload")
        .flat_map(|o| {
            let v = &o.value;
            let conds = v["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["lastTransitionTime"].as_str().and_then(epoch_seconds));
            v["metadata"]["creationTimestamp"]
                .as_str()
                .and_then(epoch_seconds)
                .into_iter()
                .chain(conds)
        })
        .max()
        .unwrap_or(first);
    u64::try_from(latest - first).unwrap_or(0)
}

/// Where a run time comes from when the Workload bounds it itself.
const MAX_EXEC: &str = "spec.maximumExecutionTimeSeconds";

/// How long a Workload runs once admitted, where the snapshot does not say: Kueue knows no
/// run time, so the forecast needs one (`simulate --state --run-time`).
#[derive(Clone, Debug)]
pub(crate) struct RunTimes {
    /// `--run-time SECONDS`.
    pub(crate) default: u64,
    /// `--run-time QUEUE=SECONDS`: a LocalQueue (`name` or `namespace/name`) or a ClusterQueue.
    pub(crate) per_queue: BTreeMap<String, u64>,
}

impl RunTimes {
    pub(crate) fn flat(default: u64) -> Self {
        Self {
            default,
            per_queue: BTreeMap::new(),
        }
    }

    /// The run time of a Workload of LocalQueue `namespace/queue` (of ClusterQueue `cq`),
    /// and where it comes from; the most specific name wins.
    fn of(&self, namespace: &str, queue: &str, cq: Option<&str>) -> (u64, String) {
        let names = [
            Some(format!("{namespace}/{queue}")),
            Some(queue.to_owned()),
            cq.map(str::to_owned),
        ];
        names
            .into_iter()
            .flatten()
            .find_map(|n| {
                let t = *self.per_queue.get(&n)?;
                Some((t, format!("--run-time {n}={t}")))
            })
            .unwrap_or((self.default, "--run-time".to_owned()))
    }
}

/// The snapshot's Workloads in the simulator's terms, with their live facts. A Workload runs
/// for its `spec.maximumExecutionTimeSeconds` when set, else for its RayJob's
/// `spec.activeDeadlineSeconds` when the snapshot holds the RayJob that owns it (KubeRay fails
/// the RayJob at that deadline: ray-project/kuberay@v1.7.0
/// `ray-operator/controllers/ray/rayjob_controller.go` `checkActiveDeadlineAndUpdateStatusIfNeeded`),
/// else for the time `run_times` gives its queue.
pub(crate) fn workloads<'s>(
    state: &'s LiveState,
    run_times: &RunTimes,
) -> (Vec<(LiveWorkload, LiveFacts, &'s LiveObject)>, Clock) {
    let classes: BTreeMap<&str, i64> = state
        .of_kind("WorkloadPriorityClass")
        .map(|o| (o.name.as_str(), o.value["value"].as_i64().unwrap_or(0)))
        .collect();
    let deadlines = by_name(state, "RayJob", |spec| {
        spec["activeDeadlineSeconds"].as_u64()
    });
    let cq_of = by_name(state, "LocalQueue", |spec| spec["clusterQueue"].as_str());
    let run_of = |o: &LiveObject| -> (u64, String) {
        let v = &o.value;
        let ns = o.namespace.as_deref().unwrap_or("");
        if let Some(t) = v["spec"]["maximumExecutionTimeSeconds"].as_u64() {
            return (t, MAX_EXEC.to_owned());
        }
        let owner = v["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["kind"].as_str() == Some("RayJob"))
            .and_then(|r| r["name"].as_str());
        if let Some((name, &t)) = owner.and_then(|n| Some((n, deadlines.get(&(ns, n))?))) {
            return (t, format!("RayJob {ns}/{name} spec.activeDeadlineSeconds"));
        }
        let queue = v["spec"]["queueName"].as_str().unwrap_or("");
        run_times.of(ns, queue, cq_of.get(&(ns, queue)).copied())
    };
    let objs: Vec<&LiveObject> = state.of_kind("Workload").collect();
    let times: Vec<Option<i64>> = objs
        .iter()
        .map(|o| {
            o.value["metadata"]["creationTimestamp"]
                .as_str()
                .and_then(epoch_seconds)
        })
        .collect();
    let first = times.iter().flatten().min().copied().unwrap_or(0);
    let now = snapshot_time(state, first);
    // Each Workload is read on its own: on all cores (10,000 of them were a tenth of
    // `explain`'s time on one).
    let each: Vec<(&LiveObject, Option<i64>)> = objs.into_iter().zip(times).collect();
    let wide = crate::base::par::wide(each.len());
    let list = crate::base::par::map(wide, each, |(o, t)| {
        let v = &o.value;
        let spec = &v["spec"];
        let priority = spec["priority"].as_i64().unwrap_or_else(|| {
            spec["priorityClassRef"]["name"]
                .as_str()
                .and_then(|c| classes.get(c).copied())
                .unwrap_or(0)
        });
        let pod_sets = spec["podSets"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|ps| {
                let pod = &ps["template"]["spec"];
                LivePodSet {
                    name: ps["name"].as_str().unwrap_or("main").to_owned(),
                    count: ps["count"].as_u64().unwrap_or(1),
                    requests: pod_requests(pod),
                    node_selector: pod["nodeSelector"]
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                                .collect()
                        })
                        .unwrap_or_default(),
                    tolerations: pod["tolerations"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|t| serde_json::from_value::<Toleration>(t.clone()).ok())
                        .collect(),
                }
            })
            .collect();
        let reserved = condition(v, "QuotaReserved");
        let admitted = reserved.then(|| {
            v["status"]["admission"]["podSetAssignments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| {
                    let flavors = a["flavors"]
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .filter_map(|(k, f)| Some((k.clone(), f.as_str()?.to_owned())))
                                .collect()
                        })
                        .unwrap_or_default();
                    (a["name"].as_str().unwrap_or("main").to_owned(), flavors)
                })
                .collect()
        });
        let checks = v["status"]["admissionChecks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["state"].as_str() != Some("Ready"))
            .map(|c| {
                (
                    c["name"].as_str().unwrap_or("").to_owned(),
                    c["state"].as_str().unwrap_or("Pending").to_owned(),
                    c["message"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        let (run_for, run_source) = run_of(o);
        let mut w = LiveWorkload {
            namespace: o.namespace.clone().unwrap_or_default(),
            name: o.name.clone(),
            queue: spec["queueName"].as_str().unwrap_or("").to_owned(),
            priority,
            created: t.map_or(0, |t| u64::try_from(t - first).unwrap_or(0)),
            pod_sets,
            admitted,
            active: spec["active"].as_bool() != Some(false),
            run_for,
            run_source,
            remaining: None,
            reserved_at: 0,
        };
        if reserved {
            let clock = |kind: &str| {
                condition_time(v, kind).map_or(0, |t| u64::try_from(t - first).unwrap_or(0))
            };
            // Preemption orders by the time quota was reserved; the run starts once the
            // Workload is admitted (its admission checks passed): Kueue's maximum
            // execution time counts from `Admitted`, with the time a re-admitted Workload
            // ran before (kubernetes-sigs/kueue@v0.19.2 `pkg/controller/core/
            // workload_controller.go` `reconcileMaxExecutionTime`). Not admitted yet: it
            // has all its run ahead.
            w.reserved_at = clock("QuotaReserved");
            let ran = if condition(v, "Admitted") {
                let past = if w.run_source == MAX_EXEC {
                    v["status"]["accumulatedPastExecutionTimeSeconds"]
                        .as_u64()
                        .unwrap_or(0)
                } else {
                    0
                };
                past + now.saturating_sub(clock("Admitted"))
            } else {
                0
            };
            w.remaining = Some(w.run_for.saturating_sub(ran).max(1));
        }
        let facts = LiveFacts {
            finished: condition(v, "Finished"),
            reserved_only: reserved && !condition(v, "Admitted"),
            inactive: spec["active"].as_bool() == Some(false),
            checks,
        };
        (w, facts, o)
    });
    (list, Clock { first, now })
}

/// A field of the `spec` of each object of a namespaced kind that has it, by
/// (namespace, name).
fn by_name<'s, T>(
    state: &'s LiveState,
    kind: &'s str,
    field: impl Fn(&'s Value) -> Option<T>,
) -> BTreeMap<(&'s str, &'s str), T> {
    state
        .of_kind(kind)
        .filter_map(|o| {
            let key = (o.namespace.as_deref().unwrap_or(""), o.name.as_str());
            Some((key, field(&o.value["spec"])?))
        })
        .collect()
}

/// The snapshot's clock: its earliest creation time (epoch seconds), the workloads' second 0,
/// and its own time on that clock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    first: i64,
    pub(crate) now: u64,
}

impl Clock {
    /// The snapshot's time, RFC 3339.
    pub(crate) fn at(self) -> String {
        rfc3339(u64::try_from(self.first).unwrap_or(0) + self.now)
    }
}

/// `simulate --state`: when each pending Workload would be admitted, from the snapshot's
/// time on, each running as long as `run_times` says unless it says itself; a scenario's
/// submissions count their `submitAt` from the snapshot's time.
pub(crate) fn forecast(
    profile: &Profile,
    state: &LiveState,
    run_times: &RunTimes,
    scenario: Option<&Scenario>,
    until: Option<u64>,
) -> (Vec<sim_live::Eta>, Clock, Vec<Diagnostic>) {
    let (all, clock) = workloads(state, run_times);
    let now = clock.now;
    let kept: Vec<&(LiveWorkload, LiveFacts, &LiveObject)> =
        all.iter().filter(|(_, f, _)| !f.finished).collect();
    let live: Vec<LiveWorkload> = kept.iter().map(|(w, _, _)| w.clone()).collect();
    let (world, map) = sim_live::build(profile, &live, scenario.map(|s| (s, now)));
    let diags = unknown_queues(state, &kept, &map);
    (
        sim_live::forecast(&world, &live, &map, now, until),
        clock,
        diags,
    )
}

/// RK822 for each submission of a scenario added to a snapshot whose name is a Workload the
/// snapshot holds in the profile's namespace (where the scenario's Workloads go): the two
/// would be one Workload to Kueue, and to the forecast.
pub(crate) fn name_clashes(
    profile: &Profile,
    state: &LiveState,
    loaded: &Loaded,
    scenario: &Scenario,
) -> Vec<Diagnostic> {
    let live: std::collections::BTreeSet<&str> = state
        .of_kind("Workload")
        .filter(|o| o.namespace.as_deref() == Some(profile.namespace.as_str()))
        .map(|o| o.name.as_str())
        .collect();
    scenario
        .workloads
        .iter()
        .enumerate()
        .filter(|(_, w)| live.contains(w.name.as_str()))
        .map(|(i, w)| {
            let pointer = ptr!["workloads", i, "name"];
            loaded
                .at_value(
                    Diagnostic::new(
                        &codes::SCENARIO_LIVE_NAME_CLASH,
                        format!(
                            "submission `{}` has the name of Workload `{}/{}` in the snapshot",
                            w.name, profile.namespace, w.name
                        ),
                    ),
                    &pointer,
                )
                .path(crate::base::pointer::field_path(&pointer))
                .hint("rename the submission: the scenario adds Workloads to those the snapshot holds")
        })
        .collect()
}

/// RK821 for each Workload whose LocalQueue the profile does not define.
fn unknown_queues(
    state: &LiveState,
    kept: &[&(LiveWorkload, LiveFacts, &LiveObject)],
    map: &[Option<usize>],
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for ((w, _, o), i) in kept.iter().map(|k| (&k.0, &k.1, &k.2)).zip(map) {
        if i.is_none() {
            diags.push(
                state
                    .at(
                        o,
                        Diagnostic::new(
                            &codes::LIVE_UNKNOWN_QUEUE,
                            format!(
                                "Workload `{}` is queued to LocalQueue `{}`, which the profile does not define in namespace `{}`: left out",
                                w.key(),
                                w.queue,
                                w.namespace
                            ),
                        ),
                        "/spec/queueName",
                    )
                    .hint("check `--profile`: it should be the profile this cluster was built from"),
            );
        }
    }
    diags
}

/// `explain`: the pending Workloads (or the ones named, `namespace/name` or `name`), each
/// with why it waits; diagnostics for names that match nothing and Workloads whose
/// LocalQueue the profile does not define.
pub(crate) fn explain(
    profile: &Profile,
    state: &LiveState,
    names: &[String],
) -> (Vec<Explanation>, Vec<Diagnostic>) {
    // Run times do not matter to `explain`: only the forecast runs forward.
    let (all, _) = workloads(state, &RunTimes::flat(1));
    let mut diags = Vec::new();
    let live: Vec<LiveWorkload> = all
        .iter()
        .filter(|(_, f, _)| !f.finished)
        .map(|(w, _, _)| w.clone())
        .collect();
    let kept: Vec<&(LiveWorkload, LiveFacts, &LiveObject)> =
        all.iter().filter(|(_, f, _)| !f.finished).collect();
    let (world, map) = sim_live::build(profile, &live, None);
    diags.extend(unknown_queues(state, &kept, &map));
    for n in names {
        let found = live.iter().any(|w| w.key() == *n || w.name == *n);
        if !found {
            diags.push(
                Diagnostic::new(
                    &codes::EXPLAIN_UNKNOWN_WORKLOAD,
                    format!("no Workload `{n}` in the live state"),
                )
                .hint(
                    "name it as `namespace/name` or `name`, as `kubectl get workloads -A` lists it",
                ),
            );
        }
    }
    let mut pending = Vec::new();
    let mut facts_of = Vec::new();
    let mut reserved = Vec::new();
    for ((w, facts, _), i) in kept.iter().zip(&map) {
        let Some(wl) = *i else { continue };
        if !names.is_empty() && !names.iter().any(|n| *n == w.key() || *n == w.name) {
            continue;
        }
        if facts.reserved_only {
            reserved.push(reserved_only(&world, wl, w, facts));
            continue;
        }
        if w.admitted.is_some() {
            continue;
        }
        pending.push(wl);
        facts_of.push((w, facts));
    }
    let mut list = sim_live::explain(profile, &world, &live, &map, &pending);
    let cq_stop: BTreeMap<&str, &str> = state
        .of_kind("ClusterQueue")
        .filter_map(|o| Some((o.name.as_str(), o.value["spec"]["stopPolicy"].as_str()?)))
        .collect();
    let lq_stop: BTreeMap<(String, &str), &str> = state
        .of_kind("LocalQueue")
        .filter_map(|o| {
            Some((
                (o.namespace.clone().unwrap_or_default(), o.name.as_str()),
                o.value["spec"]["stopPolicy"].as_str()?,
            ))
        })
        .collect();
    for (e, (w, facts)) in list.iter_mut().zip(facts_of) {
        e.local_queue.clone_from(&w.queue);
        if let Some(p) = cq_stop
            .get(e.cluster_queue.as_str())
            .filter(|p| **p != "None")
        {
            e.blockers.insert(
                0,
                Blocker {
                    kind: "StoppedQueue",
                    message: format!(
                        "ClusterQueue `{}` has stopPolicy {p}: it admits nothing",
                        e.cluster_queue
                    ),
                },
            );
            e.unblock.insert(
                0,
                format!(
                    "set `stopPolicy: None` on ClusterQueue `{}`",
                    e.cluster_queue
                ),
            );
        }
        if let Some(p) = lq_stop
            .get(&(w.namespace.clone(), w.queue.as_str()))
            .filter(|p| **p != "None")
        {
            e.blockers.insert(
                0,
                Blocker {
                    kind: "StoppedQueue",
                    message: format!(
                        "LocalQueue `{}/{}` has stopPolicy {p}: it admits nothing",
                        w.namespace, w.queue
                    ),
                },
            );
            e.unblock.insert(
                0,
                format!(
                    "set `stopPolicy: None` on LocalQueue `{}/{}`",
                    w.namespace, w.queue
                ),
            );
        }
        if facts.inactive {
            e.blockers.insert(
                0,
                Blocker {
                    kind: "Inactive",
                    message: "`spec.active: false`: Kueue does not queue a deactivated Workload"
                        .into(),
                },
            );
            e.unblock
                .insert(0, "set `spec.active: true` on the Workload".into());
        }
        for (name, st, msg) in &facts.checks {
            let msg = if msg.is_empty() {
                String::new()
            } else {
                format!(": {msg}")
            };
            e.blockers.push(Blocker {
                kind: "AdmissionCheck",
                message: format!("admission check `{name}` is {st}{msg}"),
            });
        }
    }
    list.extend(reserved);
    list.sort_by(|a, b| a.workload.cmp(&b.workload));
    (list, diags)
}

/// A Workload that holds quota but is not admitted: only its admission checks stand between
/// it and its pods (Kueue sets `Admitted` once every check is `Ready`).
fn reserved_only(
    world: &crate::simulate::world::World,
    wl: usize,
    w: &LiveWorkload,
    facts: &LiveFacts,
) -> Explanation {
    let spec = &world.workloads[wl];
    let mut blockers = Vec::new();
    let mut unblock = Vec::new();
    for (name, st, msg) in &facts.checks {
        let msg = if msg.is_empty() {
            String::new()
        } else {
            format!(": {msg}")
        };
        blockers.push(Blocker {
            kind: "AdmissionCheck",
            message: format!("quota is reserved; admission check `{name}` is {st}{msg}"),
        });
        unblock.push(format!("admission check `{name}` becoming Ready"));
    }
    Explanation {
        workload: spec.name.clone(),
        local_queue: w.queue.clone(),
        cluster_queue: world.cqs[spec.cq].name.clone(),
        priority: spec.priority,
        position: 0,
        ahead: Vec::new(),
        asks: Vec::new(),
        fits_now: true,
        never_admissible: None,
        blockers,
        unblock,
    }
}

/// The queue kinds drift compares.
const DRIFT_KINDS: &[&str] = &[
    "ClusterQueue",
    "LocalQueue",
    "Cohort",
    "ResourceFlavor",
    "WorkloadPriorityClass",
];

/// Where an object of the profile's output is written in the profile.
fn profile_pointer(profile: &Profile, kind: &str, ns: Option<&str>, name: &str) -> Pointer {
    let q = profile.queues.as_ref();
    let found = match kind {
        "ResourceFlavor" => profile
            .flavors
            .iter()
            .position(|f| f.name.as_str() == name)
            .map(|i| ptr!["flavors", i]),
        "WorkloadPriorityClass" => profile
            .priority_classes
            .iter()
            .position(|c| c.name.as_str() == name)
            .map(|i| ptr!["priorityClasses", i]),
        "ClusterQueue" => q
            .and_then(|q| {
                q.cluster_queues
                    .iter()
                    .position(|c| c.name.as_str() == name)
            })
            .map(|i| ptr!["queues", "clusterQueues", i]),
        "LocalQueue" => q
            .and_then(|q| {
                q.local_queues
                    .iter()
                    .position(|l| l.name.as_str() == name && Some(l.namespace_in(profile)) == ns)
            })
            .map(|i| ptr!["queues", "localQueues", i]),
        _ => None,
    };
    found.unwrap_or_else(|| ptr!["queues"])
}

/// Every leaf of a value by JSON pointer.
fn leaves(v: &Value, at: String, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                leaves(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                leaves(x, format!("{at}/{i}"), out);
            }
        }
        _ => {
            out.insert(at, v.clone());
        }
    }
}

/// Two leaves are the same when equal, or when both are the same quantity (`"1000m"` and
/// `"1"`, `16` and `"16"`: the API server rewrites quantities in canonical form).
fn same(left: &Value, right: &Value) -> bool {
    if left == right {
        return true;
    }
    let quantity = |v: &Value| match v {
        Value::String(text) => Quantity::parse(text).ok(),
        Value::Number(n) => Quantity::parse(&n.to_string()).ok(),
        _ => None,
    };
    matches!((quantity(left), quantity(right)), (Some(x), Some(y)) if x.nanos() == y.nanos())
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "absent".into(),
        Some(Value::String(s)) => s.clone(),
        Some(x) => x.to_string(),
    }
}

/// Drift: the live queue objects against what the profile compiles to. Missing and changed
/// objects are located in the profile, extra ones in the snapshot. A field the profile does
/// not write is not compared: the API server fills defaults the profile leaves out.
pub(crate) fn drift(
    profile: &Profile,
    loaded: &Loaded,
    objects: &[crate::model::Object],
    state: &LiveState,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let key = |kind: &str, ns: Option<&str>, name: &str| {
        format!(
            "{kind}/{}{name}",
            ns.map_or_else(String::new, |n| format!("{n}/"))
        )
    };
    let live: BTreeMap<String, &LiveObject> = state
        .objects
        .iter()
        .filter(|o| DRIFT_KINDS.contains(&o.kind))
        .map(|o| (key(o.kind, o.namespace.as_deref(), &o.name), o))
        .collect();
    let mut wanted = std::collections::BTreeSet::new();
    for obj in objects.iter().filter(|o| DRIFT_KINDS.contains(&o.kind)) {
        let k = key(obj.kind, obj.namespace.as_deref(), &obj.name);
        wanted.insert(k.clone());
        let base = profile_pointer(profile, obj.kind, obj.namespace.as_deref(), &obj.name);
        let Some(o) = live.get(&k) else {
            out.push(
                loaded
                    .at_value(
                        Diagnostic::new(
                            &codes::DRIFT_MISSING,
                            format!("{k} is in the profile but not in the cluster"),
                        ),
                        &base,
                    )
                    .path(crate::base::pointer::field_path(&base))
                    .hint("apply the profile (`raykueue gen --profile P | kubectl apply -f -`), or remove it from the profile"),
            );
            continue;
        };
        let (mut want, mut have) = (BTreeMap::new(), BTreeMap::new());
        for part in ["spec", "value", "description", "preemptionPolicy"] {
            if let Some(v) = obj.value.get(part) {
                leaves(v, format!("/{part}"), &mut want);
            }
            if let Some(v) = o.value.get(part) {
                leaves(v, format!("/{part}"), &mut have);
            }
        }
        for (p, w) in &want {
            let h = have.get(p);
            if h.is_some_and(|h| same(h, w)) {
                continue;
            }
            // The profile mirrors Kueue's shape under the object (`resourceGroups/0/...`):
            // point at the same field in the profile when it is there.
            let rel = p.strip_prefix("/spec").unwrap_or(p);
            let at = base.join(&Pointer::from_escaped(rel));
            let at = if loaded.spans.has(&at) {
                at
            } else {
                base.clone()
            };
            out.push(
                loaded
                    .at_value(
                        Diagnostic::new(
                            &codes::DRIFT_CHANGED,
                            format!(
                                "{k}: `{}` is {} in the cluster, {} in the profile",
                                crate::base::pointer::field_path(p),
                                show(h),
                                show(Some(w))
                            ),
                        ),
                        &at,
                    )
                    .path(crate::base::pointer::field_path(&at))
                    .hint("apply the profile to put the cluster back, or change the profile to what the cluster runs"),
            );
        }
    }
    for (k, o) in &live {
        if wanted.contains(k) {
            continue;
        }
        out.push(
            state
                .at(
                    o,
                    Diagnostic::new(
                        &codes::DRIFT_EXTRA,
                        format!("{k} is in the cluster but not in the profile"),
                    ),
                    "/metadata/name",
                )
                .hint("add it to the profile, or delete it from the cluster if nothing uses it"),
        );
    }
    out
}

/// `check --state`: the profile's own diagnostics, the snapshot's, and the drift between them.
pub(crate) fn check(
    resolved: &crate::input::resolve::Resolved,
    state_path: &str,
    deny_warnings: bool,
) -> Result<Vec<Diagnostic>, String> {
    let state = match crate::input::state::read(state_path) {
        Ok(s) => s,
        Err(crate::input::state::ReadError::Io(m)) => return Err(m),
        Err(crate::input::state::ReadError::Invalid(d)) => return Ok(d),
    };
    let mut diags = validate_state(&state);
    let (admitted, loaded) = match compile::admitted_with_loaded(resolved, deny_warnings) {
        Ok(a) => a,
        Err(d) => {
            diags.extend(d);
            return Ok(diags);
        }
    };
    let objects = match compile::validated_objects(&admitted) {
        Ok(o) => o,
        Err(d) => {
            diags.extend(d);
            return Ok(diags);
        }
    };
    diags.extend(admitted.warnings.iter().cloned());
    diags.extend(drift(&admitted.profile, &loaded, &objects.platform, &state));
    Ok(diags)
}
