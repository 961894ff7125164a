//! A fleet as a whole (RK700–RK716): what MultiKueue needs of a manager and its workers beyond
//! what each member's own checks see. Each finding is placed in the file that must change — the
//! fleet file, the manager's profile, or a worker's — so a worker without the LocalQueue the
//! manager dispatches to is an error in that worker's file.
//!
//! The checks restate kueue@v0.19.2's MultiKueue behaviour: the manager copies a Workload to
//! each worker under the same namespace and LocalQueue name
//! (`pkg/controller/admissionchecks/multikueue/workload.go` `cloneForCreate`); it watches every
//! enabled integration's kind on every worker and marks the cluster not connected when a watch
//! fails (`multikueuecluster.go`); Ray workloads with in-tree autoscaling are refused under
//! MultiKueue (`pkg/controller/jobs/raycluster/raycluster_webhook.go`); `spec.managedBy` exists
//! from KubeRay v1.3.0 (RayJob, RayCluster) and v1.6.0 (RayService)
//! (ray-project/kuberay@v1.3.0, @v1.6.0 `ray-operator/apis/ray/v1/*_types.go`).

use super::{findings as member_findings, place};
use crate::base::codes::{self, Code};
use crate::base::diagnostic::{Diagnostic, Finding};
use crate::base::pointer::{Pointer, ptr};
use crate::facts::pods::pod_sets;
use crate::input::load::Loaded;
use crate::input::scripts::ScriptFiles;
use crate::profile::fleet::{Dispatcher, Fleet};
use crate::profile::{Framework, Profile, Quantity, Workload, WorkloadKind};
use std::collections::{BTreeMap, BTreeSet};

/// One member as the fleet checks see it.
pub(crate) struct Member<'a> {
    /// `manager` or the worker's name.
    pub(crate) name: &'a str,
    /// Where the fleet file names the member's profile.
    pub(crate) pointer: &'a Pointer,
    /// The profile file's identity (a shipped name or a canonical path).
    pub(crate) identity: &'a str,
    pub(crate) loaded: &'a Loaded,
    pub(crate) profile: &'a Profile,
    pub(crate) scripts: &'a ScriptFiles,
}

/// Findings placed in the fleet file or in a member's profile.
struct Out<'a> {
    fleet: &'a Loaded,
    members: &'a [Member<'a>],
    diagnostics: Vec<Diagnostic>,
}

impl Out<'_> {
    fn fleet(&mut self, code: &'static Code, pointer: &Pointer, message: String, hint: &str) {
        self.push(self.fleet, code, pointer, message, hint);
    }

    fn member(
        &mut self,
        m: usize,
        code: &'static Code,
        pointer: &Pointer,
        message: String,
        hint: &str,
    ) {
        self.push(self.members[m].loaded, code, pointer, message, hint);
    }

    fn push(
        &mut self,
        at: &Loaded,
        code: &'static Code,
        pointer: &Pointer,
        message: String,
        hint: &str,
    ) {
        self.diagnostics.push(place(
            at,
            Finding {
                code,
                pointer: pointer.clone(),
                message,
                hint: Some(hint.to_owned()),
            },
        ));
    }
}

/// Every fleet-level finding, placed. `members[0]` is the manager.
pub(crate) fn run(fleet: &Fleet, fleet_loaded: &Loaded, members: &[Member<'_>]) -> Vec<Diagnostic> {
    let mut out = Out {
        fleet: fleet_loaded,
        members,
        diagnostics: Vec::new(),
    };
    names(fleet, &mut out);
    one_cluster_each(members, &mut out);
    if fleet
        .multi_kueue
        .as_ref()
        .is_some_and(|m| m.step_size.is_some())
        && fleet.dispatcher() != Dispatcher::Incremental
    {
        out.fleet(
            &codes::INCREMENTAL_STEP,
            &ptr!["multiKueue", "stepSize"],
            "`stepSize` is the Incremental dispatcher's: with AllAtOnce, Kueue refuses the Configuration and its controller does not start".into(),
            "add `dispatcher: Incremental`, or drop `stepSize`",
        );
    }
    let manager = members[0].profile;
    mirrored_queues(members, &mut out);
    for (i, w) in manager.workloads.iter().enumerate() {
        if w.queue.is_some() {
            workload_on_workers(i, w, members, &mut out);
        }
        manager_workload_shape(i, w, members, &mut out);
    }
    quota(members, &mut out);
    integrations(members, &mut out);
    versions(members, &mut out);
    if manager
        .operators
        .kueue
        .as_ref()
        .and_then(|k| k.feature_gates.get("MultiKueue"))
        == Some(&false)
    {
        out.member(
            0,
            &codes::MULTIKUEUE_GATE,
            &ptr!["operators", "kueue", "featureGates", "MultiKueue"],
            "the manager switches the MultiKueue gate off: its admission check never dispatches, and every queued job waits forever".into(),
            "remove `MultiKueue: false` (the gate is beta and on since Kueue 0.9)",
        );
    }
    out.diagnostics
}

/// RK701: worker names are the MultiKueueClusters' and the bundle's folders.
fn names(fleet: &Fleet, out: &mut Out<'_>) {
    let mut seen = BTreeSet::new();
    for (i, w) in fleet.workers.iter().enumerate() {
        let name = w.name.as_str();
        if matches!(name, "manager" | "fleet") {
            out.fleet(
                &codes::FLEET_NAMES,
                &ptr!["workers", i, "name"],
                format!("a worker cannot be named `{name}`: the bundle writes the manager's tree to `manager/` and the fleet's scripts to `fleet/`"),
                "pick another name, such as the cluster's region (`aks-east`)",
            );
        }
        if !seen.insert(name) {
            out.fleet(
                &codes::FLEET_NAMES,
                &ptr!["workers", i, "name"],
                format!("two workers are named `{name}`: each is a MultiKueueCluster of that name"),
                "give every worker its own name",
            );
        }
    }
}

/// RK702: the manager is not one of its workers, and no two members are one cluster.
fn one_cluster_each(members: &[Member<'_>], out: &mut Out<'_>) {
    for (j, b) in members.iter().enumerate().skip(1) {
        for a in &members[..j] {
            let same_file = a.identity == b.identity;
            let key = |m: &Member<'_>| m.profile.cloud().map(crate::cloud::Cloud::cluster_key);
            let same_cluster = key(a).is_some() && key(a) == key(b);
            if !same_file && !same_cluster {
                continue;
            }
            let what = if same_file {
                format!("the same profile as `{}`", a.name)
            } else {
                format!(
                    "the same cluster as `{}` ({})",
                    a.name,
                    key(b).unwrap_or_default()
                )
            };
            let why = if a.name == "manager" {
                "a MultiKueue manager cannot be its own worker"
            } else {
                "one cluster would be offered every job twice and counted twice in the manager's quota"
            };
            out.fleet(
                &codes::MANAGER_IS_WORKER,
                b.pointer,
                format!("worker `{}` is {what}: {why}", b.name),
                "give each member a profile of its own cluster",
            );
        }
    }
}

/// The namespace and name of each manager LocalQueue.
fn manager_queues(p: &Profile) -> Vec<(String, String)> {
    p.queues.as_ref().map_or_else(Vec::new, |q| {
        q.local_queues
            .iter()
            .map(|lq| {
                (
                    lq.namespace.as_deref().unwrap_or(&p.namespace).to_owned(),
                    lq.name.to_string(),
                )
            })
            .collect()
    })
}

/// The labels a namespace of `p` carries, as raykueue writes the profile's own namespace
/// (`model::platform`): its name, the managed-by label, and the labels of Kueue's
/// managedJobsNamespaceSelector. Another namespace is known only by its name.
fn namespace_labels(p: &Profile, ns: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([("kubernetes.io/metadata.name".to_owned(), ns.to_owned())]);
    if ns == p.namespace.as_str() {
        labels.insert(
            crate::facts::MANAGED_BY.0.to_owned(),
            crate::facts::MANAGED_BY.1.to_owned(),
        );
        if let Some(s) = p.managed_jobs_selector() {
            for (k, v) in &s.match_labels {
                labels.insert(k.to_string(), v.to_string());
            }
        }
    }
    labels
}

/// RK704, RK705: every worker serves every manager LocalQueue, and its ClusterQueue selects
/// the namespace.
fn mirrored_queues(members: &[Member<'_>], out: &mut Out<'_>) {
    let wanted = manager_queues(members[0].profile);
    for (m, worker) in members.iter().enumerate().skip(1) {
        let p = worker.profile;
        for (ns, name) in &wanted {
            let Some(lq) = p.local_queue(name, ns) else {
                let pointer = &if p.queues.is_some() {
                    ptr!["queues", "localQueues"]
                } else {
                    Pointer::root()
                };
                out.member(
                    m,
                    &codes::WORKER_MISSING_QUEUE,
                    pointer,
                    format!(
                        "worker `{}` has no LocalQueue `{name}` in namespace `{ns}`: the manager dispatches that queue's jobs to every worker under the same namespace and name, and here they would wait forever with nothing on the cluster saying why",
                        worker.name
                    ),
                    &format!("add `{{name: {name}, namespace: {ns}, clusterQueue: <a ClusterQueue of this profile>}}` to queues.localQueues"),
                );
                continue;
            };
            let Some((c, cq)) = p.queues.as_ref().and_then(|q| {
                q.cluster_queues
                    .iter()
                    .enumerate()
                    .find(|(_, c)| c.name == lq.cluster_queue)
            }) else {
                continue; // the worker's own checks name the missing ClusterQueue
            };
            if let Some(sel) = &cq.namespace_selector
                && !sel.matches(&namespace_labels(p, ns))
            {
                out.member(
                    m,
                    &codes::WORKER_QUEUE_SELECTOR,
                    &ptr!["queues", "clusterQueues", c, "namespaceSelector"],
                    format!(
                        "ClusterQueue `{}` of worker `{}` does not select namespace `{ns}`, where the manager's jobs for LocalQueue `{name}` arrive: Kueue never admits them",
                        cq.name, worker.name
                    ),
                    &format!("select it, e.g. `namespaceSelector: {{matchLabels: {{kubernetes.io/metadata.name: {ns}}}}}`, or `{{}}` for every namespace"),
                );
            }
        }
    }
}

/// RK706, RK707, RK708: a manager workload on each worker. The worker's own rules run on the
/// worker's profile with the workload added, in the namespace and LocalQueue MultiKueue
/// creates it in; what they find about the workload's admission and capacity (RK1xx, RK2xx)
/// is why it cannot run there.
fn workload_on_workers(i: usize, w: &Workload, members: &[Member<'_>], out: &mut Out<'_>) {
    let manager = members[0].profile;
    let ns = w
        .namespace
        .as_deref()
        .unwrap_or(&manager.namespace)
        .to_owned();
    let queue = w.queue.as_deref().unwrap_or_default();
    let requested: BTreeSet<String> = pod_sets(i, w)
        .iter()
        .flat_map(|s| {
            s.requests
                .iter()
                .filter(|(_, q)| !q.is_zero())
                .map(|(r, _)| r.clone())
        })
        .collect();
    let mut fits = Vec::new();
    let mut refused = Vec::new();
    for (m, worker) in members.iter().enumerate().skip(1) {
        let p = worker.profile;
        let Some(lq) = p.local_queue(queue, &ns) else {
            refused.push(format!("`{}` (no LocalQueue `{queue}`)", worker.name));
            continue;
        };
        if let Some((c, cq)) = p.queues.as_ref().and_then(|q| {
            q.cluster_queues
                .iter()
                .enumerate()
                .find(|(_, c)| c.name == lq.cluster_queue)
        }) {
            let covered: BTreeSet<&str> = cq
                .resource_groups
                .iter()
                .flat_map(|g| {
                    g.covered_resources
                        .iter()
                        .map(crate::profile::QualifiedName::as_str)
                })
                .collect();
            let missing: Vec<&str> = requested
                .iter()
                .map(String::as_str)
                .filter(|r| !covered.contains(r))
                .collect();
            if !missing.is_empty() {
                out.member(
                    m,
                    &codes::WORKER_UNCOVERED_RESOURCE,
                    &ptr!["queues", "clusterQueues", c, "resourceGroups"],
                    format!(
                        "manager workload `{}` requests {} that ClusterQueue `{}` of worker `{}` does not cover: Kueue counts every requested resource (BlockUndeclared), so the job is never admitted here",
                        w.name,
                        missing.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", "),
                        cq.name,
                        worker.name
                    ),
                    &format!("add {} to a resource group's coveredResources with a quota", missing.join(", ")),
                );
            }
        }
        if let Some(j) = p
            .workloads
            .iter()
            .position(|x| x.name == w.name && x.namespace.as_deref().unwrap_or(&p.namespace) == ns)
        {
            out.member(
                m,
                &codes::WORKER_NAME_CLASH,
                &ptr!["workloads", j, "name"],
                format!(
                    "worker `{}` runs its own `{}` in namespace `{ns}`, the name of a manager workload: MultiKueue creates its copy under the same name, and an object it did not create is never replaced, so the manager's job waits (kubernetes-sigs/kueue#12404)",
                    worker.name, w.name
                ),
                "rename one of them",
            );
        }
        let why = why_not_on(worker, w, &ns, members[0].scripts, i);
        match why {
            None => fits.push(worker.name),
            Some(reason) => refused.push(format!("`{}` ({reason})", worker.name)),
        }
    }
    let pointer = ptr!["workloads", i, "name"];
    if fits.is_empty() {
        out.member(
            0,
            &codes::FITS_NO_WORKER,
            &pointer,
            format!(
                "`{}` fits no worker of the fleet: MultiKueue dispatches it and no worker ever admits it — {}",
                w.name,
                refused.join("; ")
            ),
            "make it smaller, or give a worker the queue, quota and nodes it needs",
        );
    } else if !refused.is_empty() {
        out.member(
            0,
            &codes::FITS_SOME_WORKERS,
            &pointer,
            format!(
                "`{}` runs only on {}: not on {}",
                w.name,
                fits.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", "),
                refused.join("; ")
            ),
            "fine if intended; otherwise give the other workers the queue, quota and nodes it needs",
        );
    }
}

/// Why workload `w` (index `i` of the manager) can never be admitted or placed on `worker`, in
/// the worker's own rules' words; `None` when nothing stops it.
fn why_not_on(
    worker: &Member<'_>,
    w: &Workload,
    ns: &str,
    manager_scripts: &ScriptFiles,
    i: usize,
) -> Option<String> {
    let mut p = worker.profile.clone();
    p.role = None;
    // A worker job of the same name and namespace is RK717's finding; here the copy takes its
    // place, so the worker's own rules weigh the manager's job, not a duplicate name.
    let worker_ns = p.namespace.to_string();
    p.workloads
        .retain(|x| !(x.name == w.name && x.namespace.as_deref().unwrap_or(&worker_ns) == ns));
    let mut copy = w.clone();
    copy.namespace = Some(crate::profile::Dns1123Label(ns.to_owned()));
    p.workloads.push(copy);
    let at = p.workloads.len() - 1;
    let scripts = manager_scripts.moved(i, at);
    let prefix = ptr!["workloads", at];
    let (findings, _) = member_findings(&p, &scripts);
    let reasons: Vec<String> = findings
        .into_iter()
        .filter(|f| {
            f.code.severity == codes::Severity::Error
                && f.pointer.is_within(&prefix)
                // Admission and capacity: the rest (entrypoints, images) the manager's own
                // checks already report once.
                && (f.code.id.starts_with("RK1") || f.code.id.starts_with("RK2"))
        })
        .map(|f| format!("{}: {}", f.code.id, f.message))
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// RK712, RK713: what MultiKueue cannot carry of a manager workload.
fn manager_workload_shape(i: usize, w: &Workload, members: &[Member<'_>], out: &mut Out<'_>) {
    if w.elastic {
        out.member(
            0,
            &codes::MULTIKUEUE_ELASTIC,
            &ptr!["workloads", i, "elastic"],
            format!(
                "`{}` is elastic: Kueue 0.19 refuses Ray autoscaling through MultiKueue (an elastic RayCluster's webhook rejects it, elastic RayJobs are not supported)",
                w.name
            ),
            "set `elastic: false` with fixed replicas, or run it in a worker's own profile",
        );
    }
    let clouds: BTreeSet<&str> = members[1..]
        .iter()
        .filter_map(|m| m.profile.cloud().map(crate::cloud::Cloud::section))
        .collect();
    if clouds.len() < 2 {
        return;
    }
    let groups = w
        .head
        .iter()
        .map(|h| (ptr!["head"], &h.node_selector, h.tolerations.len()))
        .chain(
            w.pod
                .iter()
                .map(|p| (ptr!["pod"], &p.node_selector, p.tolerations.len())),
        )
        .chain(
            w.workers
                .iter()
                .enumerate()
                .map(|(g, wg)| (ptr!["workers", g], &wg.node_selector, wg.tolerations.len())),
        );
    for (at, selector, tolerations) in groups {
        let field = if !selector.is_empty() {
            "nodeSelector"
        } else if tolerations > 0 {
            "tolerations"
        } else {
            continue;
        };
        out.member(
            0,
            &codes::MANAGER_PLACEMENT,
            &ptr!["workloads", i].join(&at).at(field),
            format!(
                "`{}` sets {field}: MultiKueue copies the spec verbatim to every worker, and the workers run on {}",
                w.name,
                clouds.iter().copied().collect::<Vec<_>>().join(" and ")
            ),
            "put placement in each worker's ResourceFlavors (nodeLabels, tolerations), which Kueue applies on the worker that admits the job",
        );
    }
}

/// RK709: a written manager queue's quota against the workers' quota behind its LocalQueues.
/// Derived queues hold the workers' sum by construction.
fn quota(members: &[Member<'_>], out: &mut Out<'_>) {
    let manager = members[0].profile;
    let Some(q) = &manager.queues else { return };
    // Written queues only: derived ones are named after the fleet's LocalQueues and hold
    // exactly the sum.
    if members[0].loaded.value.get("queues").is_none() {
        return;
    }
    for (c, cq) in q.cluster_queues.iter().enumerate() {
        let lqs: Vec<(String, String)> = q
            .local_queues
            .iter()
            .filter(|lq| lq.cluster_queue == cq.name)
            .map(|lq| {
                (
                    lq.namespace
                        .as_deref()
                        .unwrap_or(&manager.namespace)
                        .to_owned(),
                    lq.name.to_string(),
                )
            })
            .collect();
        // Per resource: each worker's nominal quota behind these LocalQueues (a ClusterQueue
        // behind two of them counts once).
        let mut per_worker: BTreeMap<String, Vec<Quantity>> = BTreeMap::new();
        for worker in &members[1..] {
            let p = worker.profile;
            let mut behind = BTreeSet::new();
            let mut mine: BTreeMap<String, Quantity> = BTreeMap::new();
            for (ns, name) in &lqs {
                let Some(lq) = p.local_queue(name, ns) else {
                    continue;
                };
                if !behind.insert(lq.cluster_queue.as_str()) {
                    continue;
                }
                for (r, q) in p.nominal_behind(ns, name).unwrap_or_default() {
                    let e = mine.entry(r).or_insert_with(Quantity::zero);
                    *e = e.plus(q);
                }
            }
            for (r, qty) in mine {
                per_worker.entry(r).or_default().push(qty);
            }
        }
        for (g, group) in cq.resource_groups.iter().enumerate() {
            for (f, flavor) in group.flavors.iter().enumerate() {
                for (r, res) in flavor.resources.iter().enumerate() {
                    let Some(quotas) = per_worker.get(res.name.as_str()) else {
                        continue;
                    };
                    let sum = quotas.iter().fold(Quantity::zero(), |a, b| a.plus(*b));
                    let largest = quotas.iter().copied().max().unwrap_or_else(Quantity::zero);
                    let mine = res.nominal_quota;
                    let problem = if mine > sum {
                        format!(
                            "more than the workers hold behind its LocalQueues together ({}): the manager admits jobs that then wait on the workers while holding its quota",
                            sum.human()
                        )
                    } else if mine < largest {
                        format!(
                            "less than the largest worker holds behind them ({}): jobs wait on the manager while workers sit idle",
                            largest.human()
                        )
                    } else {
                        continue;
                    };
                    out.member(
                        0,
                        &codes::MANAGER_QUOTA,
                        &ptr!["queues", "clusterQueues", c, "resourceGroups", g, "flavors", f, "resources", r, "nominalQuota"],
                        format!(
                            "manager ClusterQueue `{}` gives `{}` a quota of {}, {problem}",
                            cq.name,
                            res.name,
                            mine.human()
                        ),
                        &format!("set it near the workers' sum, {} (or leave the manager's `queues` out and raykueue derives them)", sum.human()),
                    );
                }
            }
        }
    }
}

/// Integrations whose CRDs raykueue installs on a cluster: the built-in kinds, and Ray's when
/// the profile installs KubeRay.
fn crds_installed(p: &Profile, f: Framework) -> bool {
    match f {
        Framework::BatchJob | Framework::Pod | Framework::Deployment | Framework::StatefulSet => {
            true
        }
        Framework::RayJob | Framework::RayService | Framework::RayCluster => {
            p.operators.kuberay.is_some()
        }
        _ => false,
    }
}

/// RK710, RK711: every integration the manager enables is watched on every worker; every kind
/// it queues must be admitted there.
fn integrations(members: &[Member<'_>], out: &mut Out<'_>) {
    let manager = members[0].profile;
    let enabled: Vec<Framework> = manager
        .operators
        .kueue
        .as_ref()
        .map(|k| k.frameworks.clone())
        .unwrap_or_default();
    let queued: BTreeSet<Framework> = manager
        .workloads
        .iter()
        .filter(|w| w.queue.is_some())
        .map(|w| w.kind.framework())
        .collect();
    for (i, f) in enabled.iter().enumerate() {
        if !crds_installed(manager, *f)
            && !matches!(
                f,
                Framework::RayJob | Framework::RayService | Framework::RayCluster
            )
        {
            out.member(
                0,
                &codes::WORKER_CRDS,
                &ptr!["operators", "kueue", "frameworks", i],
                format!(
                    "the manager enables `{}`: MultiKueue watches its kind on every worker, and raykueue installs its CRDs nowhere — a worker without them is never connected",
                    f.as_str()
                ),
                "install the CRDs on every worker, or drop the integration from the manager (it needs only the kinds it queues)",
            );
        }
    }
    for (m, worker) in members.iter().enumerate().skip(1) {
        let p = worker.profile;
        let ray = enabled.iter().any(|f| {
            matches!(
                f,
                Framework::RayJob | Framework::RayService | Framework::RayCluster
            )
        });
        if ray && p.operators.kuberay.is_none() {
            out.member(
                m,
                &codes::WORKER_INTEGRATION,
                &ptr!["operators"],
                format!(
                    "worker `{}` installs no KubeRay: the manager watches Ray kinds on every worker, so without Ray's CRDs this worker is never connected",
                    worker.name
                ),
                "add operators.kuberay (the KubeRay operator runs the jobs the manager dispatches)",
            );
        }
        let Some(k) = &p.operators.kueue else {
            out.member(
                m,
                &codes::WORKER_INTEGRATION,
                &ptr!["operators"],
                format!(
                    "worker `{}` installs no Kueue: nothing admits the jobs the manager dispatches",
                    worker.name
                ),
                "add operators.kueue with the integrations the manager queues",
            );
            continue;
        };
        for f in &queued {
            if !k.frameworks.contains(f) {
                out.member(
                    m,
                    &codes::WORKER_INTEGRATION,
                    &ptr!["operators", "kueue", "frameworks"],
                    format!(
                        "worker `{}` does not enable `{}`, which the manager queues workloads of: they would run there unadmitted, outside every quota",
                        worker.name,
                        f.as_str()
                    ),
                    &format!("add `{}` to operators.kueue.frameworks", f.as_str()),
                );
            }
        }
    }
}

/// A chart version as numbers, for comparisons (`1.3.1` → `[1, 3, 1]`).
fn version(v: &str) -> Vec<u64> {
    v.split(['.', '-'])
        .take(3)
        .map(|p| p.parse().unwrap_or(0))
        .collect()
}

/// RK714, RK715: one Kueue and one KubeRay across the fleet, recent enough for MultiKueue.
fn versions(members: &[Member<'_>], out: &mut Out<'_>) {
    let manager = members[0].profile;
    let uses_service = manager
        .workloads
        .iter()
        .any(|w| w.queue.is_some() && w.kind == WorkloadKind::RayService);
    let (minimum, why) = if uses_service {
        (
            "1.6.0",
            "RayService has `spec.managedBy` from KubeRay 1.6.0",
        )
    } else {
        (
            "1.3.1",
            "RayJob and RayCluster have `spec.managedBy` from KubeRay 1.3.0, and Kueue recommends 1.3.1",
        )
    };
    if manager.operators.kuberay.is_none() {
        out.member(
            0,
            &codes::KUBERAY_FOR_MULTIKUEUE,
            &ptr!["operators"],
            "the manager installs no KubeRay: without Ray's CRDs the manager refuses RayJobs outright (the operator there ignores jobs MultiKueue manages)".into(),
            "add operators.kuberay to the manager's profile",
        );
    }
    let kueue_of = |p: &Profile| p.operators.kueue.as_ref().map(|k| k.version.to_string());
    let kuberay_of = |p: &Profile| p.operators.kuberay.as_ref().map(|k| k.version.to_string());
    for (m, member) in members.iter().enumerate() {
        if let Some(v) = kuberay_of(member.profile)
            && version(&v) < version(minimum)
        {
            out.member(
                m,
                &codes::KUBERAY_FOR_MULTIKUEUE,
                &ptr!["operators", "kuberay", "version"],
                format!(
                    "`{}` runs KubeRay {v}: MultiKueue needs at least {minimum} ({why})",
                    member.name
                ),
                &format!("set operators.kuberay.version to {minimum} or later"),
            );
        }
        if m == 0 {
            continue;
        }
        for (what, of, field) in [
            (
                "Kueue",
                &kueue_of as &dyn Fn(&Profile) -> Option<String>,
                "kueue",
            ),
            ("KubeRay", &kuberay_of, "kuberay"),
        ] {
            if let (Some(a), Some(b)) = (of(manager), of(member.profile))
                && a != b
            {
                out.member(
                    m,
                    &codes::VERSION_SKEW,
                    &ptr!["operators", field, "version"],
                    format!(
                        "worker `{}` runs {what} {b}, the manager {a}: MultiKueue compares the manager's Workload with the worker's copy, and versions that build them differently keep jobs from being admitted",
                        member.name
                    ),
                    &format!("run {what} {a} on every member"),
                );
            }
        }
    }
}
