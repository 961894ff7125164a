//! Admission checks and pods-ready timing: the AdmissionChecks ClusterQueues name (RK190,
//! RK191, RK192), what a ProvisioningRequest check provisions (RK193), whether the cloud's
//! autoscaler serves its class (RK470, RK471: the cloud's `provisioning`, sources there) and can
//! grow the pools behind it (RK209), whether the pods it provisions tolerate those pools' taints
//! (RK198), and Kueue's `waitForPodsReady` timeout against raykueue's
//! estimate of a pool's start from zero (RK194).
//!
//! Kueue v0.19.2 sources: a ClusterQueue naming a missing check is inactive
//! (`pkg/cache/scheduler/clusterqueue.go` `AdmissionCheckNotFound`); `onFlavors` must name the
//! queue's flavors (`pkg/webhooks/clusterqueue_webhook.go`
//! `validateAdmissionCheckOnFlavorsWithOld`); a workload none of whose pod sets requests a
//! managed resource passes the check at once (`pkg/controller/admissionchecks/provisioning/
//! controller.go` `reqIsNeeded`); WaitForPodsReady is on by default with a 30m timeout
//! (`apis/config/v1beta2/defaults.go`), its clock starting at admission
//! (`pkg/controller/core/workload_controller.go`).

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;
use crate::cloud::{CLASS_CHECK_CAPACITY, Cloud, GPU_RESOURCE, Provisioning};
use crate::facts::pods::{PodSet, QueueIndex, pod_sets};
use crate::profile::{
    AdmissionCheck, ClusterQueue, Flavor, Profile, QualifiedName, Taint, TaintEffect, Toleration,
};

/// Kueue's default `waitForPodsReady.timeout` (kueue@v0.19.2 `apis/config/v1beta2/defaults.go`
/// `DefaultWaitForPodsReadyTimeout`).
const DEFAULT_PODS_READY_SECONDS: f64 = 30.0 * 60.0;

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let names = ctx.profile.admission_checks.iter().map(|a| a.name.as_str());
    super::queues::duplicates(ctx, &ptr!["admissionChecks"], "AdmissionCheck", names);
    references(ctx);
    on_manager(ctx);
    managed_resources(ctx);
    if let Some(cloud) = ctx.profile.cloud() {
        classes(ctx, cloud);
        taints(ctx, cloud);
        pods_ready(ctx, cloud);
    }
}

/// The ClusterQueue's flavors, in order.
fn cq_flavors(cq: &ClusterQueue) -> Vec<&str> {
    cq.resource_groups
        .iter()
        .flat_map(|g| &g.flavors)
        .map(|f| f.name.as_str())
        .collect()
}

/// RK190, RK191, RK192.
fn references(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let defined: Vec<&str> = p.admission_checks.iter().map(|a| a.name.as_str()).collect();
    let mut named: Vec<&str> = Vec::new();
    for (c, cq) in p
        .queues
        .iter()
        .flat_map(|q| q.cluster_queues.iter().enumerate())
    {
        let flavors = cq_flavors(cq);
        for (k, check) in cq.admission_checks.iter().enumerate() {
            let base = ptr!["queues", "clusterQueues", c, "admissionChecks", k];
            named.push(check.name());
            if !defined.contains(&check.name()) {
                let at = if check.on_flavors().is_empty() {
                    base.clone()
                } else {
                    base.at("name")
                };
                ctx.unknown_name(
                    &codes::ADMISSION_CHECK_NOT_FOUND,
                    &at,
                    "AdmissionCheck (the ClusterQueue is inactive and admits nothing)",
                    check.name(),
                    defined.iter().copied(),
                );
            }
            for (j, f) in check.on_flavors().iter().enumerate() {
                if !flavors.contains(&f.as_str()) {
                    ctx.report(
                        &codes::ON_FLAVORS,
                        &ptr!(base; "onFlavors", j),
                        format!(
                            "`{f}` is no flavor of ClusterQueue `{}`: Kueue's webhook refuses the queue",
                            cq.name
                        ),
                        Some(format!("name flavors of its resource groups: {}", flavors.join(", "))),
                    );
                }
            }
        }
    }
    for (i, a) in p.admission_checks.iter().enumerate() {
        if !named.contains(&a.name.as_str()) {
            ctx.report(
                &codes::ADMISSION_CHECK_UNUSED,
                &ptr!["admissionChecks", i, "name"],
                format!("no ClusterQueue names AdmissionCheck `{}`: it checks nothing", a.name),
                Some(format!(
                    "add `admissionChecks: [{}]` to the ClusterQueues whose workloads need provisioning, or remove it",
                    a.name
                )),
            );
        }
    }
}

/// RK197: a fleet manager's ClusterQueues all carry the fleet's MultiKueue check
/// (`model::fleet::dispatch`); Kueue makes a queue with a MultiKueue and a ProvisioningRequest
/// check inactive (kueue@v0.19.2 `pkg/cache/scheduler/clusterqueue.go` `updateQueueStatus`,
/// reason `MultiKueueWithProvisioningRequest`). The workers create the pods, so their queues
/// are where capacity is provisioned.
fn on_manager(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(fleet) = p.managed_fleet() else {
        return;
    };
    for (c, cq) in p
        .queues
        .iter()
        .flat_map(|q| q.cluster_queues.iter().enumerate())
    {
        for (k, check) in cq.admission_checks.iter().enumerate() {
            if !p
                .admission_checks
                .iter()
                .any(|a| a.name.as_str() == check.name())
            {
                continue; // RK190
            }
            ctx.report(
                &codes::PROVISIONING_ON_MANAGER,
                &ptr!["queues", "clusterQueues", c, "admissionChecks", k],
                format!(
                    "ClusterQueue `{}` of the manager of fleet `{}` names ProvisioningRequest check `{}`, and raykueue adds the fleet's MultiKueue check `{}` to it: Kueue makes a queue with both inactive, and it admits nothing",
                    cq.name,
                    fleet.name,
                    check.name(),
                    fleet.admission_check()
                ),
                Some("move the check to the workers' profiles: their queues admit the pods that need the nodes".into()),
            );
        }
    }
}

/// The ClusterQueues that name check `a`, with their index.
fn queues_of<'p>(p: &'p Profile, a: &AdmissionCheck) -> Vec<(usize, &'p ClusterQueue)> {
    p.queues
        .iter()
        .flat_map(|q| q.cluster_queues.iter().enumerate())
        .filter(|(_, cq)| {
            cq.admission_checks
                .iter()
                .any(|c| c.name() == a.name.as_str())
        })
        .collect()
}

/// The ClusterQueues that name check `a`, each with its entry for it.
fn checked_queues<'p>(
    p: &'p Profile,
    a: &AdmissionCheck,
) -> Vec<(&'p ClusterQueue, &'p crate::profile::ClusterQueueCheck)> {
    queues_of(p, a)
        .into_iter()
        .filter_map(|(_, cq)| {
            let check = cq
                .admission_checks
                .iter()
                .find(|c| c.name() == a.name.as_str())?;
            Some((cq, check))
        })
        .collect()
}

/// The flavors check `a` applies to on the queues that name it.
/// The node groups a flavor's node labels select.
fn backing<'g, 'a>(
    groups: &'g [crate::cloud::NodeGroup<'a>],
    f: &Flavor,
) -> Vec<&'g crate::cloud::NodeGroup<'a>> {
    groups
        .iter()
        .filter(|g| {
            f.node_labels
                .iter()
                .all(|(k, v)| g.labels.get(k.as_str()).is_some_and(|x| x == v.as_str()))
        })
        .collect()
}

fn covered_flavors<'p>(p: &'p Profile, a: &AdmissionCheck) -> Vec<&'p Flavor> {
    let mut out: Vec<&Flavor> = Vec::new();
    for (cq, check) in checked_queues(p, a) {
        for name in cq_flavors(cq) {
            if check.applies_to(name)
                && let Some(f) = p.flavors.iter().find(|f| f.name.as_str() == name)
                && !out.iter().any(|o| o.name == f.name)
            {
                out.push(f);
            }
        }
    }
    out
}

/// RK193: managedResources no pod of the queues' workloads requests (the pod's own requests:
/// Kueue reads the containers, `podUses`).
fn managed_resources(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let by_name = QueueIndex::new(p);
    for (i, a) in p.admission_checks.iter().enumerate() {
        let managed = &a.provisioning_request.managed_resources;
        if managed.is_empty() {
            continue;
        }
        let queues: Vec<&str> = queues_of(p, a)
            .iter()
            .map(|(_, cq)| cq.name.as_str())
            .collect();
        let mut workloads = 0;
        let mut uses = false;
        for (j, w) in p.workloads.iter().enumerate() {
            let Some((_, cq)) = by_name.cluster_queue_of(w) else {
                continue;
            };
            if !queues.contains(&cq.name.as_str()) {
                continue;
            }
            workloads += 1;
            uses |= pod_sets(j, w).iter().any(|s| {
                managed
                    .iter()
                    .any(|m| s.requests.get(m.as_str()).is_some_and(|q| !q.is_zero()))
            });
        }
        if workloads > 0 && !uses {
            let list: Vec<&str> = managed.iter().map(QualifiedName::as_str).collect();
            ctx.report(
                &codes::MANAGED_RESOURCES_UNREQUESTED,
                &ptr!["admissionChecks", i, "provisioningRequest", "managedResources"],
                format!(
                    "no pod of the {workloads} workload(s) of ClusterQueue(s) {} requests any of [{}]: Kueue passes check `{}` at once (\"the provisioning request is not needed\") and asks the autoscaler for nothing",
                    queues.join(", "),
                    list.join(", "),
                    a.name
                ),
                Some("list the resources the pods that need new nodes request (nvidia.com/gpu), or leave managedResources empty (every pod set)".into()),
            );
        }
    }
}

/// RK470, RK471 and RK209.
fn classes(ctx: &mut Ctx<'_>, cloud: &dyn Cloud) {
    let p = ctx.profile;
    let groups = cloud.node_groups();
    for (i, a) in p.admission_checks.iter().enumerate() {
        if queues_of(p, a).is_empty() {
            continue; // RK192
        }
        let class = a.provisioning_request.provisioning_class_name.as_str();
        let at = ptr![
            "admissionChecks",
            i,
            "provisioningRequest",
            "provisioningClassName"
        ];
        match cloud.provisioning(p, class) {
            Provisioning::Refused(why) => {
                ctx.report(
                    &codes::PROVISIONING_CLASS_UNSUPPORTED,
                    &at,
                    format!("{why}: check `{}` never becomes Ready, and the workloads that wait for it are never admitted", a.name),
                    Some("use a class the cluster's autoscaler serves (docs/capacity.md lists them per cloud), or remove the check".into()),
                );
                continue;
            }
            Provisioning::Undocumented(why) => ctx.report(
                &codes::PROVISIONING_CLASS_UNDOCUMENTED,
                &at,
                format!("{why}: check `{}` may never become Ready", a.name),
                Some("test it on your cluster, or use the class the provider documents".into()),
            ),
            Provisioning::Served(_) => {}
        }
        if class == CLASS_CHECK_CAPACITY {
            continue; // checks capacity, scales nothing
        }
        for f in covered_flavors(p, a) {
            let backing = backing(&groups, f);
            if backing.is_empty() || backing.iter().any(|g| g.size.max > g.size.min) {
                continue;
            }
            let names: Vec<&str> = backing.iter().map(|g| g.name).collect();
            ctx.report(
                &codes::PROVISIONING_FIXED_POOLS,
                &at,
                format!(
                    "check `{}` asks the autoscaler to add nodes for flavor `{}`, but its {} ({}) cannot grow (no autoscale range): the ProvisioningRequest fails, and after its retries Kueue deactivates the workload",
                    a.name,
                    f.name,
                    cloud.words().pool,
                    names.join(", ")
                ),
                Some("give the pools an `autoscale` range (min 0 is fine), or use check-capacity.autoscaling.x-k8s.io to admit only what fits now".into()),
            );
        }
    }
}

/// RK198: Kueue builds a ProvisioningRequest's pod templates from the pod set's template and the
/// tolerations of the flavors assigned to it (kueue@v0.19.2
/// `pkg/controller/admissionchecks/provisioning/controller.go` `createPodTemplate`,
/// `pkg/podset/podset.go` `FromAssignment`: `info.Tolerations = append(info.Tolerations,
/// flv.Spec.Tolerations...)`). The autoscaler makes pods of those templates without admission
/// (autoscaler@cluster-autoscaler-1.35.0 `cluster-autoscaler/provisioningrequest/pods/pods.go`
/// `PodsForProvisioningRequest`), so ExtendedResourceToleration's toleration never comes, and
/// fits them to template nodes that carry the pool's taints (`cloudprovider/aws/aws_manager.go`
/// `extractTaintsFromAsg`): "Capacity is not found", and the workload waits for ever. The pod
/// sets in the request are those that request a managed resource (all when there are none,
/// `requiredPodSets`). Topology-aware flavors are RK196's: TAS filters by the same tolerations.
fn taints(ctx: &mut Ctx<'_>, cloud: &dyn Cloud) {
    let p = ctx.profile;
    let groups = cloud.node_groups();
    let by_name = QueueIndex::new(p);
    let mut reported: Vec<&str> = Vec::new();
    for a in &p.admission_checks {
        let managed = &a.provisioning_request.managed_resources;
        for (cq, check) in checked_queues(p, a) {
            for (j, w) in p.workloads.iter().enumerate() {
                if by_name
                    .cluster_queue_of(w)
                    .is_none_or(|(_, q)| q.name != cq.name)
                {
                    continue;
                }
                for s in pod_sets(j, w) {
                    let provisioned = s.count > 0
                        && (managed.is_empty()
                            || managed.iter().any(|m| !s.request(m.as_str()).is_zero()));
                    if !provisioned {
                        continue;
                    }
                    for choice in super::nodes::flavor_choices(p, Some(cq), &s) {
                        // The toleration belongs on the flavor that selects the pools.
                        let mut applied = choice
                            .iter()
                            .filter(|f| check.applies_to(f.name.as_str()))
                            .copied();
                        let Some(f) = applied
                            .clone()
                            .find(|f| !f.node_labels.is_empty())
                            .or_else(|| applied.next())
                        else {
                            continue;
                        };
                        if reported.contains(&f.name.as_str()) {
                            continue;
                        }
                        if choice.iter().any(|f| f.topology_name.is_some()) {
                            continue;
                        }
                        let Some(blocked) = untolerated(&groups, &choice, &s) else {
                            continue;
                        };
                        reported.push(f.name.as_str());
                        report_untolerated(ctx, cloud, a, f, &s, &blocked);
                    }
                }
            }
        }
    }
}

/// The pools pod set `s` could get under the flavors of `choice`, each with the first taint
/// neither its template nor those flavors tolerate, when every one has such a taint.
fn untolerated<'g>(
    groups: &'g [crate::cloud::NodeGroup<'_>],
    choice: &[&Flavor],
    s: &PodSet<'_>,
) -> Option<Vec<(&'g str, &'g Taint)>> {
    let wants_gpu = !s.request(GPU_RESOURCE).is_zero();
    let carries =
        |g: &crate::cloud::NodeGroup<'_>, k: &str, v: &str| g.labels.get(k).is_some_and(|x| x == v);
    let pools: Vec<_> = groups
        .iter()
        .filter(|g| !wants_gpu || g.gpu)
        .filter(|g| s.node_selector.iter().all(|(k, v)| carries(g, k, v)))
        .filter(|g| {
            choice
                .iter()
                .flat_map(|f| &f.node_labels)
                .all(|(k, v)| carries(g, k.as_str(), v.as_str()))
        })
        .collect();
    let tolerations: Vec<&Toleration> = s
        .tolerations
        .iter()
        .chain(choice.iter().flat_map(|f| &f.tolerations))
        .collect();
    let blocked: Vec<(&str, &Taint)> = pools
        .iter()
        .filter_map(|g| {
            let t = g.taints.iter().find(|t| {
                t.effect != TaintEffect::PreferNoSchedule
                    && !tolerations.iter().any(|tol| tol.tolerates(t))
            })?;
            Some((g.name, t))
        })
        .collect();
    (!pools.is_empty() && blocked.len() == pools.len()).then_some(blocked)
}

/// RK198 at flavor `f`'s tolerations (or, without the key, the flavor's item).
fn report_untolerated(
    ctx: &mut Ctx<'_>,
    cloud: &dyn Cloud,
    a: &AdmissionCheck,
    f: &Flavor,
    s: &PodSet<'_>,
    blocked: &[(&str, &Taint)],
) {
    let fi = ctx
        .profile
        .flavors
        .iter()
        .position(|x| x.name == f.name)
        .unwrap_or_default();
    let list: Vec<String> = blocked
        .iter()
        .map(|(pool, t)| format!("`{pool}`: {}:{}", t.key, t.effect.as_str()))
        .collect();
    let first = blocked[0].1;
    ctx.report(
        &codes::PROVISIONING_TAINT_NOT_TOLERATED,
        &ptr!["flavors", fi, "tolerations"],
        format!(
            "flavor `{}` of ProvisioningRequest check `{}` has only {}s with a taint {} does not tolerate ({}): Kueue writes the request's pod templates with the tolerations of the pod template and the flavors, and the autoscaler simulates those pods without admission (no ExtendedResourceToleration), so it finds no capacity and the workload is never admitted",
            f.name,
            a.name,
            cloud.words().pool,
            s.describe(),
            list.join("; ")
        ),
        Some(format!(
            "add `{{key: {}, operator: Exists, effect: {}}}` to the tolerations of flavor `{}` (Kueue adds them to the request's pod templates and to the pods it admits)",
            first.key,
            first.effect.as_str(),
            f.name
        )),
    );
}

/// RK194: workloads whose pods land only on pools that may be at zero wait for a new node,
/// which raykueue estimates (`estimates`); Kueue evicts a workload whose pods are not ready
/// within `waitForPodsReady.timeout` of admission.
fn pods_ready(ctx: &mut Ctx<'_>, cloud: &dyn Cloud) {
    let p = ctx.profile;
    let Some(k) = &p.operators.kueue else { return };
    if k.feature_gates.get("DisableWaitForPodsReady") == Some(&true) {
        return;
    }
    let configured = k
        .configuration
        .as_ref()
        .and_then(|c| c.wait_for_pods_ready.as_ref());
    let timeout = configured.map_or(DEFAULT_PODS_READY_SECONDS, |w| w.timeout.seconds());
    let estimates = p.estimates.clone().unwrap_or_default();
    let cold = estimates.cold_start_seconds();
    if timeout >= cold {
        return;
    }
    let groups = cloud.node_groups();
    let by_name = QueueIndex::new(p);
    let mut cold_flavors: Vec<String> = Vec::new();
    for w in &p.workloads {
        let Some((_, cq)) = by_name.cluster_queue_of(w) else {
            continue;
        };
        for name in cq_flavors(cq) {
            let Some(f) = p.flavors.iter().find(|f| f.name.as_str() == name) else {
                continue;
            };
            if f.node_labels.is_empty() {
                continue;
            }
            let backing = backing(&groups, f);
            if !backing.is_empty()
                && backing.iter().all(|g| g.size.min == 0)
                && !cold_flavors.contains(&f.name.to_string())
            {
                let names: Vec<&str> = backing.iter().map(|g| g.name).collect();
                cold_flavors.push(format!("{} ({})", f.name, names.join(", ")));
            }
        }
    }
    cold_flavors.sort();
    cold_flavors.dedup();
    if cold_flavors.is_empty() {
        return;
    }
    let at = &if configured.is_some() {
        ptr![
            "operators",
            "kueue",
            "configuration",
            "waitForPodsReady",
            "timeout"
        ]
    } else {
        ptr!["operators", "kueue"]
    };
    let secs = |s: f64| {
        if s >= 60.0 && s % 60.0 == 0.0 {
            format!("{}m", s / 60.0)
        } else {
            format!("{s}s")
        }
    };
    ctx.report(
        &codes::PODS_READY_TIMEOUT,
        at,
        format!(
            "Kueue evicts an admitted workload whose pods are not all ready within {}{}, but the pods of flavors {} land only on {}s that may be at zero nodes, and raykueue estimates a node's start from zero at {} ({} node start-up + {} image pull; an estimate, not a measurement): workloads would be evicted and requeued while their nodes boot",
            secs(timeout),
            if configured.is_none() { " (Kueue's default)" } else { "" },
            cold_flavors.join(", "),
            cloud.words().pool,
            secs(cold),
            estimates.node_startup,
            estimates.image_pull,
        ),
        Some(format!(
            "raise waitForPodsReady.timeout to at least {} (operators.kueue.configuration), keep a node in the pools (autoscale.min), or set `estimates` to what your cluster measures",
            secs(cold)
        )),
    );
}
