//! What a fleet adds to its members' bundles, as data. Facts from kueue@v0.19.2 (the object
//! set: `site/static/examples/multikueue/multikueue-setup.yaml`; types:
//! `apis/kueue/v1beta2/multikueue_types.go`, `admissioncheck_types.go`; the worker role:
//! `site/static/examples/multikueue/create-multikueue-kubeconfig.sh`, trimmed to the enabled
//! integrations as `pkg/controller/admissionchecks/multikueue/multikueuecluster.go` watches only
//! those).
//!
//! - the manager: one AdmissionCheck (controller `kueue.x-k8s.io/multikueue`) with its
//!   MultiKueueConfig listing every worker in fleet order, one MultiKueueCluster per worker
//!   reading the kubeconfig Secret `<worker>-kubeconfig` that `fleet/connect.sh` creates in
//!   Kueue's namespace; every ClusterQueue dispatches through the check; its Ray workloads
//!   carry `spec.managedBy: kueue.x-k8s.io/multikueue`, so they are created managed even when
//!   submitted before Kueue's webhook knows the queue (it sets the field only then, and KubeRay
//!   makes it immutable); Kueue's Configuration gets the `multiKueue` block.
//! - each worker: the manager's ServiceAccount in Kueue's namespace, a ClusterRole with only
//!   what MultiKueue does with the manager's integrations, its binding, and a long-lived token
//!   Secret (`kubernetes.io/service-account-token`: a token from `kubectl create token` expires
//!   and the worker drops out, kubernetes-sigs/kueue#9280).

use super::{MANAGED_BY, Object, k8s};
use crate::profile::fleet::{Dispatcher, Fleet, MANAGER_SERVICE_ACCOUNT, MULTIKUEUE_CONTROLLER};
use crate::profile::{Framework, Profile, Quantity};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const KUEUE_API: &str = "kueue.x-k8s.io/v1beta2";
const FILE_MANAGER: &str = "platform/18-multikueue.yaml";
const FILE_WORKER: &str = "platform/50-multikueue-access.yaml";

/// The Secret holding a worker's kubeconfig on the manager.
pub(crate) fn kubeconfig_secret(worker: &str) -> String {
    format!("{worker}-kubeconfig")
}

/// The token Secret on a worker.
pub(crate) const TOKEN_SECRET: &str = "multikueue-sa-token";

fn meta(name: &str, namespace: Option<&str>) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("name".into(), json!(name));
    if let Some(ns) = namespace {
        m.insert("namespace".into(), json!(ns));
    }
    m.insert("labels".into(), json!({ MANAGED_BY.0: MANAGED_BY.1 }));
    Value::Object(m)
}

/// The Kueue namespace of a profile (the chart's release namespace).
pub(crate) fn kueue_namespace(p: &Profile) -> &str {
    p.operators
        .kueue
        .as_ref()
        .map_or("kueue-system", |k| k.namespace.as_str())
}

/// The manager's MultiKueue objects.
pub(crate) fn manager_objects(fleet: &Fleet) -> Vec<Object> {
    let check = fleet.admission_check();
    let mut out = vec![
        Object::data(
            "AdmissionCheck",
            check.as_str(),
            None,
            FILE_MANAGER,
            k8s(
                KUEUE_API,
                "AdmissionCheck",
                meta(&check, None),
                [(
                    "spec",
                    json!({
                        "controllerName": MULTIKUEUE_CONTROLLER,
                        "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": fleet.name},
                    }),
                )],
            ),
        ),
        Object::data(
            "MultiKueueConfig",
            fleet.name.as_str(),
            None,
            FILE_MANAGER,
            k8s(
                KUEUE_API,
                "MultiKueueConfig",
                meta(&fleet.name, None),
                [(
                    "spec",
                    json!({"clusters": fleet.workers.iter().map(|w| w.name.as_str()).collect::<Vec<_>>()}),
                )],
            ),
        ),
    ];
    for w in &fleet.workers {
        out.push(Object::data(
            "MultiKueueCluster",
            w.name.as_str(),
            None,
            FILE_MANAGER,
            k8s(
                KUEUE_API,
                "MultiKueueCluster",
                meta(&w.name, None),
                [(
                    "spec",
                    json!({"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret(&w.name)}}}),
                )],
            ),
        ));
    }
    // The Secrets live in Kueue's namespace; they hold credentials, so `fleet/connect.sh`
    // makes them and the bundle never holds them.
    out
}

/// Route a manager ClusterQueue through the fleet's MultiKueue check: exactly one, on every
/// flavor (kueue@v0.19.2 `pkg/cache/scheduler/clusterqueue.go`: a MultiKueue check with
/// `onFlavors`, or two of them, make the ClusterQueue inactive).
pub(crate) fn dispatch(cluster_queue: &mut Value, fleet: &Fleet) {
    let rule = json!({ "name": fleet.admission_check() });
    let spec = &mut cluster_queue["spec"];
    match spec
        .pointer_mut("/admissionChecksStrategy/admissionChecks")
        .and_then(Value::as_array_mut)
    {
        Some(list) => list.push(rule),
        None => spec["admissionChecksStrategy"] = json!({ "admissionChecks": [rule] }),
    }
}

/// The manager's Kueue Configuration `multiKueue` block: the dispatcher and origin, written
/// out even where they are Kueue's defaults, so a reviewer sees them.
pub(crate) fn configuration(fleet: &Fleet) -> Value {
    let mut block = json!({
        "origin": fleet.origin(),
        "dispatcherName": fleet.dispatcher().kueue_name(),
    });
    if fleet.dispatcher() == Dispatcher::Incremental {
        block["incrementalDispatcherConfig"] = json!({ "stepSize": fleet.step() });
    }
    block
}

/// API group, resource and the verbs beyond MultiKueue's `create, delete, get, list, watch`
/// of each integration with a MultiKueue adapter (kueue@v0.19.2: `MultiKueueAdapter` in
/// `pkg/controller/jobs/*`; `deployment` has none). RayCluster and RayService are patched too:
/// elastic replica sync (kueue CHANGELOG-0.19, #13653) and `serveConfigV2` forwarding
/// (`pkg/controller/jobs/rayservice/rayservice_multikueue_adapter.go`, gate
/// `MultiKueueRemoteSpecSync`, beta and on in 0.19).
fn adapter(f: Framework) -> Option<(&'static str, &'static str, &'static [&'static str])> {
    Some(match f {
        Framework::BatchJob => ("batch", "jobs", &[]),
        Framework::Pod => ("", "pods", &[]),
        Framework::StatefulSet => ("apps", "statefulsets", &[]),
        Framework::MpiJob => ("kubeflow.org", "mpijobs", &[]),
        Framework::JobSet => ("jobset.x-k8s.io", "jobsets", &[]),
        Framework::AppWrapper => ("workload.codeflare.dev", "appwrappers", &[]),
        Framework::TrainJob => ("trainer.kubeflow.org", "trainjobs", &[]),
        Framework::LeaderWorkerSet => ("leaderworkerset.x-k8s.io", "leaderworkersets", &[]),
        Framework::RayJob => ("ray.io", "rayjobs", &[]),
        Framework::RayCluster => ("ray.io", "rayclusters", &["update", "patch"]),
        Framework::RayService => ("ray.io", "rayservices", &["update", "patch"]),
        Framework::Deployment => return None,
    })
}

/// The ClusterRole's rules: Kueue's Workloads (created, updated, status patched, deleted), the
/// queues (read, for quota automation), and per enabled integration its kind and status.
pub(crate) fn manager_role_rules(frameworks: &[Framework]) -> Vec<Value> {
    let mut rules = vec![
        json!({"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads"], "verbs": ["create", "delete", "get", "list", "watch", "update", "patch"]}),
        json!({"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "update", "patch"]}),
        json!({"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": ["get", "list", "watch"]}),
    ];
    let mut kinds: Vec<_> = frameworks.iter().filter_map(|f| adapter(*f)).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for (group, resource, extra) in kinds {
        let mut verbs = vec!["create", "delete", "get", "list", "watch"];
        verbs.extend_from_slice(extra);
        rules.push(json!({"apiGroups": [group], "resources": [resource], "verbs": verbs}));
        rules.push(json!({"apiGroups": [group], "resources": [format!("{resource}/status")], "verbs": ["get"]}));
    }
    rules
}

/// A worker's objects: what the manager acts as there.
pub(crate) fn worker_objects(p: &Profile, frameworks: &[Framework]) -> Vec<Object> {
    let ns = kueue_namespace(p);
    let role = format!("{MANAGER_SERVICE_ACCOUNT}-role");
    let mut token_meta = meta(TOKEN_SECRET, Some(ns));
    token_meta["annotations"] =
        json!({ "kubernetes.io/service-account.name": MANAGER_SERVICE_ACCOUNT });
    vec![
        Object::data(
            "ServiceAccount",
            MANAGER_SERVICE_ACCOUNT,
            Some(ns),
            FILE_WORKER,
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(MANAGER_SERVICE_ACCOUNT, Some(ns))}),
        ),
        Object::data(
            "ClusterRole",
            role.as_str(),
            None,
            FILE_WORKER,
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": meta(&role, None),
                "rules": manager_role_rules(frameworks),
            }),
        ),
        Object::data(
            "ClusterRoleBinding",
            role.as_str(),
            None,
            FILE_WORKER,
            json!({
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": meta(&role, None),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [{"kind": "ServiceAccount", "name": MANAGER_SERVICE_ACCOUNT, "namespace": ns}],
            }),
        ),
        Object::data(
            "Secret",
            TOKEN_SECRET,
            Some(ns),
            FILE_WORKER,
            json!({
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": token_meta,
                "type": "kubernetes.io/service-account-token",
            }),
        ),
    ]
}

/// The fleet's own files: `fleet/connect.sh`, `fleet/verify.sh` and the fleet's `SUMMARY.md`.
/// `members` are the manager first, then the workers, each with its profile as compiled.
pub(crate) fn texts(fleet: &Fleet, members: &[(&str, &Profile)]) -> Vec<super::TextFile> {
    let Some(((_, manager), workers)) = members.split_first() else {
        return Vec::new();
    };
    let frameworks = manager
        .operators
        .kueue
        .as_ref()
        .map(|k| k.frameworks.clone())
        .unwrap_or_default();
    let mut watched: Vec<String> = vec!["workloads.kueue.x-k8s.io".into()];
    let mut job_kinds: Vec<String> = Vec::new();
    let mut kinds: Vec<_> = frameworks.iter().filter_map(|f| adapter(*f)).collect();
    kinds.sort_unstable();
    kinds.dedup();
    for (group, resource, _) in kinds {
        let full = if group.is_empty() {
            resource.to_owned()
        } else {
            format!("{resource}.{group}")
        };
        watched.push(full.clone());
        job_kinds.push(full);
    }
    let cluster_queues: Vec<&str> = manager
        .queues
        .iter()
        .flat_map(|q| &q.cluster_queues)
        .map(|c| c.name.as_str())
        .collect();
    let member_json = |name: &str, p: &Profile| {
        json!({
            "name": name,
            "kueue_namespace": kueue_namespace(p),
            "cluster": p.cloud().map_or_else(|| "(no cloud section: the current kubectl context)".to_owned(), crate::cloud::Cloud::cluster_key),
        })
    };
    let workers_json: Vec<Value> = workers.iter().map(|(n, p)| member_json(n, p)).collect();
    let queues: Vec<Value> = manager
        .queues
        .iter()
        .flat_map(|q| &q.local_queues)
        .map(|lq| {
            let ns = lq.namespace.as_deref().unwrap_or(&manager.namespace);
            let mine = manager.nominal_behind(ns, &lq.name).unwrap_or_default();
            let theirs: Vec<_> = workers
                .iter()
                .map(|(_, p)| p.nominal_behind(ns, &lq.name))
                .collect();
            let mut resources: Vec<&String> = mine.keys().collect();
            for r in theirs.iter().flatten().flat_map(|m| m.keys()) {
                if !resources.contains(&r) {
                    resources.push(r);
                }
            }
            resources.sort();
            let cell = |m: Option<&BTreeMap<String, Quantity>>, r: &str| match m {
                None => "no LocalQueue".to_owned(),
                Some(m) => m.get(r).map_or_else(|| "—".to_owned(), |q| q.human()),
            };
            let rows: Vec<Value> = resources
                .iter()
                .map(|r| {
                    json!({
                        "resource": r,
                        "manager": cell(Some(&mine), r),
                        "workers": theirs.iter().map(|t| cell(t.as_ref(), r)).collect::<Vec<_>>(),
                    })
                })
                .collect();
            json!({
                "namespace": ns,
                "name": lq.name,
                "manager_cq": lq.cluster_queue,
                "rows": rows,
            })
        })
        .collect();
    let context = json!({
        "fleet": fleet.name,
        "description": fleet.description,
        "check": fleet.admission_check(),
        "dispatcher": match fleet.dispatcher() { Dispatcher::AllAtOnce => "AllAtOnce", Dispatcher::Incremental => "Incremental" },
        "step": (fleet.dispatcher() == Dispatcher::Incremental).then(|| fleet.step()),
        "origin": fleet.origin(),
        "manager": member_json("manager", manager),
        "workers": workers_json,
        "service_account": MANAGER_SERVICE_ACCOUNT,
        "token_secret": TOKEN_SECRET,
        "access_file": FILE_WORKER,
        "cluster_queues": cluster_queues,
        "watched": watched,
        "job_kinds": job_kinds,
        "queues": queues,
        "gantt": gantt(fleet, manager, workers),
    });
    vec![
        super::TextFile::template(FILE_CONNECT, "fleet/connect.sh.j2".into(), context.clone()),
        super::TextFile::template(FILE_VERIFY, "fleet/verify.sh.j2".into(), context.clone()),
        super::TextFile::template("SUMMARY.md", "fleet/SUMMARY.md.j2".into(), context),
    ]
}

/// The fleet's scripts, at the top of the fleet's tree.
pub(crate) const FILE_CONNECT: &str = "fleet/connect.sh";
pub(crate) const FILE_VERIFY: &str = "fleet/verify.sh";

/// How long each of the manager's workloads runs in the summary's dispatch simulation.
const SUMMARY_RUN_SECONDS: u64 = 3600;

/// The summary's dispatch, simulated: every queued workload of the manager submitted at once
/// (in profile order, a second apart so the order is the profile's), each running an hour; which
/// worker ran it, and a Gantt chart per worker.
fn gantt(fleet: &Fleet, manager: &Profile, workers: &[(&str, &Profile)]) -> Value {
    let submissions: Vec<Value> = manager
        .workloads
        .iter()
        .filter(|w| w.queue.is_some())
        .enumerate()
        .map(|(i, w)| {
            json!({"name": w.name, "queue": w.queue, "from": w.name, "submitAt": i, "runFor": SUMMARY_RUN_SECONDS})
        })
        .collect();
    if submissions.is_empty() {
        return Value::Null;
    }
    let Ok(scenario) = serde_json::from_value::<crate::simulate::scenario::Scenario>(json!({
        "apiVersion": "raykueue.io/v1alpha1", "kind": "Scenario", "name": "summary", "workloads": submissions,
    })) else {
        return Value::Null;
    };
    let worlds = crate::simulate::fleet::worlds(manager, workers, &scenario);
    let outcome = crate::simulate::fleet::run(&worlds, fleet.dispatcher(), fleet.step(), None);
    let rows: Vec<Value> = manager
        .workloads
        .iter()
        .filter(|w| w.queue.is_some())
        .map(|w| {
            let placed = outcome.placements.iter().find(|p| p.workload == w.name.as_str());
            json!({
                "workload": w.name,
                "queue": w.queue,
                "reserved": placed.map_or_else(|| "no".to_owned(), |_| "yes".to_owned()),
                "worker": placed.map_or_else(|| "none (pending)".to_owned(), |p| format!("`{}`", p.worker)),
                "start": placed.map_or_else(|| "—".to_owned(), |p| p.start.to_string()),
                "end": placed.and_then(|p| p.end).map_or_else(|| "—".to_owned(), |e| e.to_string()),
            })
        })
        .collect();
    let per_worker: Vec<Value> = workers
        .iter()
        .map(|(name, _)| {
            let tasks: Vec<Value> = outcome
                .placements
                .iter()
                .filter(|p| p.worker == *name)
                .map(|p| {
                    json!({
                        "name": p.workload,
                        "start": p.start,
                        "end": p.end.unwrap_or(p.start + SUMMARY_RUN_SECONDS),
                    })
                })
                .collect();
            json!({"name": name, "tasks": tasks})
        })
        .filter(|w| w["tasks"].as_array().is_some_and(|t| !t.is_empty()))
        .collect();
    json!({
        "note": format!(
            "Computed, not written: the manager's queued workloads submitted one second apart in profile order, each running {SUMMARY_RUN_SECONDS} s, through raykueue's Kueue v0.19 admission simulator on every cluster of the fleet (`raykueue simulate --profile FLEET --scenario FILE` runs your own)."
        ),
        "rows": rows,
        "workers": per_worker,
    })
}
