//! Workload admission rules (RK110, RK120–RK139): what makes a RayJob, RayService or RayCluster
//! reach its LocalQueue and pass Kueue's webhooks (kueue@v0.19.2 `pkg/controller/jobs/*/…_webhook.go`), what each kind needs, and the local
//! script files packed next to it. KubeRay's own name, replica and image rules (RK3xx) and
//! capacity (RK2xx) are checked elsewhere.

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::{Pointer, ptr};
use crate::input::scripts::{self, MAX_CONFIGMAP_BYTES, ScriptError};
use crate::profile::{
    Admission, DEFAULT_LOCAL_QUEUE, Framework, MAX_POD_SETS, Resources, Serve, SubmissionMode,
    Workload, WorkloadKind, max_worker_groups,
};
// Kueue's PodSet limit, one definition with the output validation's.
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn run(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, w) in p.workloads.iter().enumerate() {
        let base = ptr!["workloads", i];
        if let Some(first) = seen.insert(w.name.as_str(), i) {
            ctx.report(
                &codes::DUPLICATE_WORKLOAD,
                &base.at("name"),
                format!(
                    "workload `{}` is defined twice (first as workloads[{first}])",
                    w.name
                ),
                Some(
                    "each workload gets its own `workloads/<name>/` folder: give it another name"
                        .into(),
                ),
            );
        }
        admission(ctx, &base, w);
        kind_fields(ctx, &base, w);
        groups(ctx, &base, w);
        image(ctx, &base, w);
        scripts_of(ctx, &base, i, w);
    }
    frameworks(ctx);
}

fn admission(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    let p = ctx.profile;
    let ns = w.namespace_in(p);
    if let Some(queue) = &w.queue {
        let local: Vec<(&str, &str)> = p
            .queues
            .iter()
            .flat_map(|q| &q.local_queues)
            .map(|lq| (lq.name.as_str(), lq.namespace_in(p)))
            .collect();
        if p.local_queue(queue, ns).is_none() {
            let here: Vec<&str> = local
                .iter()
                .filter(|(_, lns)| *lns == ns)
                .map(|(n, _)| *n)
                .collect();
            let pointer = base.at("queue");
            if let Some((_, other)) = local.iter().find(|(n, _)| *n == queue.as_str()) {
                ctx.report(
                    &codes::QUEUE_NOT_FOUND,
                    &pointer,
                    format!(
                        "LocalQueue `{queue}` is in namespace `{other}`, but workload `{}` runs in `{ns}`",
                        w.name
                    ),
                    Some(
                        "a workload can only use a LocalQueue of its own namespace: set the workload's `namespace`, or add a LocalQueue here"
                            .into(),
                    ),
                );
            } else {
                ctx.unknown_name(
                    &codes::QUEUE_NOT_FOUND,
                    &pointer,
                    &format!("LocalQueue in namespace `{ns}`"),
                    queue,
                    here.iter().copied(),
                );
            }
        }
    }
    match w.admission(p) {
        Admission::Queued { .. } => {
            if w.elastic
                && p.operators
                    .kueue
                    .as_ref()
                    .and_then(|k| k.feature_gates.get("ElasticJobsViaWorkloadSlices"))
                    == Some(&false)
            {
                ctx.report(
                    &codes::ELASTIC_GATE_OFF,
                    &base.at("elastic"),
                    format!(
                        "workload `{}` is elastic, but operators.kueue.featureGates turns ElasticJobsViaWorkloadSlices off: Kueue's webhook rejects in-tree autoscaling",
                        w.name
                    ),
                    Some(
                        "remove the feature gate override (on by default since Kueue 0.18), or set `elastic: false`"
                            .into(),
                    ),
                );
            }
        }
        Admission::PodByPod => ctx.report(
            &codes::POD_BY_POD,
            &base.at("name"),
            format!(
                "{} `{}` has no `queue`, and `{}` is not in Kueue's frameworks, but `pod` is and namespace `{ns}` has a LocalQueue `{DEFAULT_LOCAL_QUEUE}`: Kueue's pod webhook queues each of its pods on `{DEFAULT_LOCAL_QUEUE}` and admits them one by one, so a Ray cluster may start with only some of its pods",
                w.kind.as_str(),
                w.name,
                w.kind.framework().as_str(),
            ),
            Some(format!(
                "add `{}` to operators.kueue.frameworks (then the whole {} is admitted at once on `{DEFAULT_LOCAL_QUEUE}`), or run it in a namespace without a `{DEFAULT_LOCAL_QUEUE}` LocalQueue",
                w.kind.framework().as_str(),
                w.kind.as_str(),
            )),
        ),
        // RK145 tells what happens to a RayService whose RayClusters Kueue queues itself.
        Admission::Unmanaged if p.queues.is_some() && !clusters_queued_alone(p, w) => {
            let why = if has_default_local_queue(p, w) {
                format!(
                    "`{}` is not in Kueue's frameworks, so Kueue does not default it to the LocalQueue `{DEFAULT_LOCAL_QUEUE}`",
                    w.kind.framework().as_str()
                )
            } else {
                format!(
                    "namespace `{ns}` has no LocalQueue `{DEFAULT_LOCAL_QUEUE}` for Kueue to default it to"
                )
            };
            ctx.report(
                &codes::UNQUEUED,
                &base.at("name"),
                format!(
                    "workload `{}` has no `queue`, and {why}: Kueue leaves it alone, so it runs outside every quota",
                    w.name
                ),
                Some("set `queue` to one of the profile's LocalQueues".into()),
            );
        }
        Admission::Unmanaged => {}
    }
    if let Some(pc) = &w.priority_class
        && !p
            .priority_classes
            .iter()
            .any(|c| c.name.as_str() == pc.as_str())
    {
        ctx.unknown_name(
            &codes::PRIORITY_NOT_FOUND,
            &base.at("priorityClass"),
            "WorkloadPriorityClass",
            pc,
            p.priority_classes.iter().map(|c| c.name.as_str()),
        );
    }
}

fn kind_fields(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    wrong_kind_fields(ctx, base, w);
    required_fields(ctx, base, w);
    if let Some(serve) = &w.serve {
        serve_section(ctx, base, w, serve);
    }
}

/// Fields set that belong to another kind of workload (RK127).
fn wrong_kind_fields(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    let kind = w.kind.as_str();
    let one_shot = [
        (
            "ttlSecondsAfterFinished",
            w.ttl_seconds_after_finished.is_some(),
        ),
        ("activeDeadlineSeconds", w.active_deadline_seconds.is_some()),
        ("backoffLimit", w.backoff_limit.is_some()),
    ];
    let rayjob_only = [
        ("entrypoint", w.entrypoint.is_some()),
        ("runtimeEnv", w.runtime_env.is_some()),
        ("submissionMode", w.submission_mode.is_some()),
        ("submitter", w.submitter.is_some()),
    ];
    let job_only = [
        ("command", !w.command.is_empty()),
        ("parallelism", w.parallelism.is_some()),
        ("completions", w.completions.is_some()),
        ("completionMode", w.completion_mode.is_some()),
        ("pod", w.pod.is_some()),
    ];
    let ray_only = [
        ("head", w.head.is_some()),
        ("workers", !w.workers.is_empty()),
        ("rayVersion", w.ray_version.is_some()),
        ("elastic", w.elastic),
    ];
    let (wrong, owner): (Vec<(&str, bool)>, &str) = match w.kind {
        WorkloadKind::RayJob => (job_only.to_vec(), "a Job"),
        WorkloadKind::Job => (
            rayjob_only.iter().chain(&ray_only).copied().collect(),
            "a Ray kind",
        ),
        WorkloadKind::RayService | WorkloadKind::RayCluster => (
            rayjob_only
                .iter()
                .chain(&one_shot)
                .chain(&job_only)
                .copied()
                .collect(),
            "a RayJob or Job",
        ),
    };
    for (field, present) in wrong {
        if present {
            let owner = if rayjob_only.iter().any(|(f, _)| *f == field) {
                "a RayJob"
            } else if one_shot.iter().any(|(f, _)| *f == field) {
                "a RayJob or Job"
            } else {
                owner
            };
            ctx.report(
                &codes::WRONG_KIND_FIELD,
                &base.at(field),
                format!("`{field}` applies to {owner}; `{}` is a {kind}", w.name),
                Some(format!("remove `{field}`, or make the workload {owner}")),
            );
        }
    }
}

/// The fields a workload's kind cannot do without: a template, an entrypoint, a `serve`.
fn required_fields(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    let kind = w.kind.as_str();
    if w.kind.is_ray() && w.head.is_none() {
        ctx.report(
            &codes::TEMPLATE_REQUIRED,
            &base.at("kind"),
            format!("{kind} `{}` has no `head`", w.name),
            Some("add `head: {resources: {cpu: \"2\", memory: 8Gi}}`".into()),
        );
    }
    if w.kind == WorkloadKind::Job && w.pod.is_none() {
        ctx.report(
            &codes::TEMPLATE_REQUIRED,
            &base.at("kind"),
            format!("Job `{}` has no `pod`", w.name),
            Some("add `pod: {requests: {cpu: \"1\", memory: 1Gi}}`".into()),
        );
    }
    match w.kind {
        WorkloadKind::RayJob => {
            let mode = w.submission_mode.unwrap_or_default();
            if w.entrypoint.as_deref().is_none_or(|e| e.trim().is_empty())
                && mode != SubmissionMode::InteractiveMode
            {
                ctx.report(
                    &codes::ENTRYPOINT_REQUIRED,
                    &base.at("kind"),
                    format!("RayJob `{}` has no `entrypoint`", w.name),
                    Some(
                        "add the command the job runs, e.g. `entrypoint: python /home/ray/scripts/train.py`"
                            .into(),
                    ),
                );
            }
            if w.submitter.is_some() && mode != SubmissionMode::K8sJobMode {
                ctx.report(
                    &codes::WRONG_KIND_FIELD,
                    &base.at("submitter"),
                    format!(
                        "`submitter` sizes the submitter pod of K8sJobMode; RayJob `{}` uses {mode:?}",
                        w.name
                    ),
                    Some("remove `submitter`, or use `submissionMode: K8sJobMode`".into()),
                );
            }
        }
        WorkloadKind::RayService => {
            if w.serve.is_none() {
                ctx.report(
                    &codes::SERVE_REQUIRED,
                    &base.at("kind"),
                    format!("RayService `{}` has no `serve` section", w.name),
                    Some("add `serve: {applications: [{name, routePrefix, importPath}]}`".into()),
                );
            }
        }
        WorkloadKind::RayCluster | WorkloadKind::Job => {}
    }
}

/// A `serve` section: on a RayService only, its applications' names and route prefixes unique.
fn serve_section(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload, serve: &Serve) {
    let kind = w.kind.as_str();
    if w.kind != WorkloadKind::RayService {
        ctx.report(
            &codes::WRONG_KIND_FIELD,
            &base.at("serve"),
            format!(
                "`serve` applies to RayServices only; `{}` is a {kind}",
                w.name
            ),
            Some("remove `serve`, or make the workload a RayService".into()),
        );
    }
    let mut names = BTreeSet::new();
    let mut prefixes = BTreeSet::new();
    for (a, app) in serve.applications.iter().enumerate() {
        let ap = ptr!(base; "serve", "applications", a);
        if !names.insert(app.name.as_str()) {
            ctx.report(
                &codes::SERVE_APPS,
                &ap.at("name"),
                format!("Serve application `{}` is listed twice", app.name),
                Some("application names must be unique".into()),
            );
        }
        if !app.route_prefix.starts_with('/') {
            ctx.report(
                &codes::SERVE_APPS,
                &ap.at("routePrefix"),
                format!(
                    "route prefix `{}` does not start with `/`",
                    app.route_prefix
                ),
                Some(format!("write `/{}`", app.route_prefix)),
            );
        } else if !prefixes.insert(app.route_prefix.as_str()) {
            ctx.report(
                &codes::SERVE_APPS,
                &ap.at("routePrefix"),
                format!("route prefix `{}` is used twice", app.route_prefix),
                Some("each application needs its own route prefix".into()),
            );
        }
    }
}

fn groups(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    // Kueue's limits apply to the objects it manages, i.e. queued ones.
    if w.admission(ctx.profile).is_queued() {
        let max = max_worker_groups(w.has_submitter_pod_set());
        if w.workers.len() > max {
            let why = if w.has_submitter_pod_set() {
                "head, submitter and worker groups"
            } else {
                "head and worker groups"
            };
            ctx.report(
                &codes::TOO_MANY_GROUPS,
                &base.at("workers"),
                format!(
                    "{} `{}` has {} worker groups; a Kueue Workload holds {MAX_POD_SETS} PodSets ({why}), so at most {max}",
                    w.kind.as_str(),
                    w.name,
                    w.workers.len()
                ),
                Some("merge worker groups with the same pod shape".into()),
            );
        }
    }
    // Ray needs cpu and memory on every pod; a Job's pod needs some request (a GPU Job may ask
    // for GPUs alone, as the upstream Azure example's labs do).
    let job_pod = w
        .pod
        .as_ref()
        .map(crate::profile::JobPod::effective_requests)
        .filter(Resources::is_empty);
    let pods = w
        .head
        .iter()
        .map(|h| (ptr!(base; "head", "resources"), "the head", &h.resources))
        .chain(job_pod.iter().map(|r| (base.at("pod"), "the pod", r)))
        .chain(w.workers.iter().enumerate().map(|(g, group)| {
            (
                ptr!(base; "workers", g, "resources"),
                "a worker group",
                &group.resources,
            )
        }));
    for (pointer, what, resources) in pods {
        let missing: Vec<&str> = ["cpu", "memory"]
            .into_iter()
            .filter(|r| !resources.keys().any(|k| k.as_str() == *r))
            .collect();
        if !missing.is_empty() {
            ctx.report(
                &codes::NO_REQUESTS,
                &pointer,
                format!("{what} of `{}` requests no {}", w.name, missing.join(" and ")),
                Some(if w.kind.is_ray() {
                    "give every Ray pod cpu and memory (requests equal limits), e.g. `resources: {cpu: \"4\", memory: 16Gi}`; without them Kueue assigns no flavor and the pod lands on any node"
                        .into()
                } else {
                    "give the Job's pod its requests, e.g. `pod: {requests: {cpu: \"1\", memory: 1Gi}}`; without them Kueue assigns no flavor and the pod lands on any node".into()
                }),
            );
        }
    }
    let mut names = BTreeSet::new();
    for (g, group) in w.workers.iter().enumerate() {
        let gp = ptr!(base; "workers", g, "name");
        if group.name.as_str() == "head" {
            ctx.report(
                &codes::HEAD_GROUP_NAME,
                &gp,
                "a worker group cannot be named `head`: Kueue names the head PodSet so and rejects the object".into(),
                Some("rename the group, e.g. `workers` or `gpu-workers`".into()),
            );
        }
        if !names.insert(group.name.as_str()) {
            ctx.report(
                &codes::DUPLICATE_GROUP,
                &gp,
                format!(
                    "worker group `{}` appears twice in `{}`",
                    group.name, w.name
                ),
                Some("group names must be unique within a workload".into()),
            );
        }
    }
}

fn image(ctx: &mut Ctx<'_>, base: &Pointer, w: &Workload) {
    let p = ctx.profile;
    let Some(img) = w.image_in(p) else {
        let hint = if w.kind.is_ray() {
            "set `image` on the workload, or `ray.image` for every workload"
        } else {
            "set the Job's `image` (`ray.image` is for Ray workloads)"
        };
        ctx.report(
            &codes::NO_IMAGE,
            &base.at("kind"),
            format!("workload `{}` has no image", w.name),
            Some(hint.into()),
        );
        return;
    };
    if w.kind.is_ray() && w.ray_version_in(p).is_none() {
        let pointer = if w.image.is_some() {
            base.at("image")
        } else {
            ptr!["ray", "image"]
        };
        ctx.report(
            &codes::NO_RAY_VERSION,
            &pointer,
            format!(
                "the tag of `{img}` names no Ray version, and workload `{}` gives no rayVersion",
                w.name
            ),
            Some("pin an image tag with the Ray version (e.g. `rayproject/ray:2.57.0-gpu`), or set `rayVersion`".into()),
        );
    }
}

fn scripts_of(ctx: &mut Ctx<'_>, base: &Pointer, i: usize, w: &Workload) {
    if !w.scripts.is_empty() && !w.scripts_mount_path.starts_with('/') {
        ctx.report(
            &codes::MOUNT_PATH,
            &base.at("scriptsMountPath"),
            format!(
                "scriptsMountPath `{}` is not an absolute path",
                w.scripts_mount_path
            ),
            Some("use an absolute path such as `/home/ray/scripts`".into()),
        );
    }
    let mut keys: BTreeMap<&str, usize> = BTreeMap::new();
    let mut read = Vec::new();
    for (s, rel) in w.scripts.iter().enumerate() {
        let pointer = ptr!(base; "scripts", s);
        if let Some(first) = keys.insert(scripts::key(rel), s) {
            ctx.report(
                &codes::SCRIPT_KEY_CLASH,
                &pointer,
                format!(
                    "`{rel}` and `{}` are both mounted as `{}`",
                    w.scripts[first],
                    scripts::key(rel)
                ),
                Some("scripts are mounted by file name: rename one of the files".into()),
            );
        }
        match ctx.scripts.of(i).get(s) {
            Some(Ok(script)) => read.push(script.clone()),
            None => {}
            Some(Err(e)) => {
                let hint = match e {
                    ScriptError::NoBaseDir(_) => {
                        "`raykueue init DIR` writes the profile and its scripts into DIR; name yours there and pass `--profile DIR/profile.yaml`"
                    }
                    ScriptError::Escapes(_) => {
                        "name a file in the profile's folder or below it, without `..`"
                    }
                    ScriptError::Unreadable { .. } => {
                        "scripts are read relative to the profile file's folder"
                    }
                    ScriptError::NotUtf8(_) => "pack text files only (scripts, configs)",
                    ScriptError::TooLarge(_) => {
                        "ship large files in the image or in storage, not in a ConfigMap"
                    }
                };
                ctx.report(
                    &codes::SCRIPT_UNREADABLE,
                    &pointer,
                    e.to_string(),
                    Some(hint.into()),
                );
            }
        }
    }
    let total = scripts::total_bytes(&read);
    if total > MAX_CONFIGMAP_BYTES {
        ctx.report(
            &codes::SCRIPTS_TOO_LARGE,
            &base.at("scripts"),
            format!(
                "the scripts of `{}` take {total} bytes; a ConfigMap holds at most {MAX_CONFIGMAP_BYTES}",
                w.name
            ),
            Some("ship large files in the image or in storage, not in a ConfigMap".into()),
        );
    }
}

/// Kueue manages a kind only when its integration is listed; a queued object of an unlisted
/// kind is ignored by Kueue: suspended, nobody ever admits it.
fn frameworks(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(kueue) = &p.operators.kueue else {
        return;
    };
    let mut reported = BTreeSet::new();
    for w in p.workloads.iter().filter(|w| w.queue.is_some()) {
        let fw = w.kind.framework();
        if kueue.frameworks.contains(&fw) || !reported.insert(fw) {
            continue;
        }
        let count = p
            .workloads
            .iter()
            .filter(|o| o.kind == w.kind && o.queue.is_some())
            .count();
        let who = if count == 1 {
            format!("queued {} `{}` relies on it", w.kind.as_str(), w.name)
        } else {
            format!(
                "{count} queued {}s (first `{}`) rely on it",
                w.kind.as_str(),
                w.name
            )
        };
        ctx.report(
            &codes::FRAMEWORK_MISSING,
            &ptr!["operators", "kueue", "frameworks"],
            format!(
                "`{}` is not in Kueue's integration frameworks, but {who}: Kueue would never admit it, so it would stay suspended",
                fw.as_str(),
            ),
            Some(format!("add `{}` to operators.kueue.frameworks", fw.as_str())),
        );
    }
    integration_clash(ctx);
}

/// RK145. Kueue's chart enables `ray.io/raycluster` and `ray.io/rayservice` together, and with
/// both on a RayService's RayCluster is its child job, not a second Workload (kueue@v0.19.2
/// `pkg/controller/jobframework/defaults.go` `defaultLocalQueueApplies`: no defaulting for an
/// object whose owner Kueue manages). With `ray.io/raycluster` on and `ray.io/rayservice` off,
/// the RayService is not Kueue's, so each RayCluster it creates — a new one on every upgrade,
/// while the old one still serves — is queued as a standalone RayCluster (KubeRay copies the
/// RayService's labels, the queue label among them, to its RayClusters: ray-project/kuberay@v1.7.0
/// `rayservice_controller.go` `constructRayClusterForRayService`; an unlabelled one is
/// defaulted to a `default` LocalQueue) and competes for quota with its predecessor.
fn integration_clash(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    for (i, w) in p.workloads.iter().enumerate() {
        if !clusters_queued_alone(p, w) {
            continue;
        }
        ctx.report(
            &codes::INTEGRATION_CLASH,
            &ptr!["workloads", i, "name"],
            format!(
                "RayService `{}` is queued{}, and Kueue's frameworks have `ray.io/raycluster` without `ray.io/rayservice`: Kueue queues each RayCluster the RayService creates as a job of its own, so an upgrade's new cluster waits for quota while the old one holds it",
                w.name,
                if w.queue.is_none() { " through its RayClusters (Kueue defaults them to the `default` LocalQueue of its namespace)" } else { "" },
            ),
            Some(
                "add `ray.io/rayservice` to operators.kueue.frameworks (Kueue's chart enables both; then the RayCluster is the RayService's child, not a second Workload)"
                    .into(),
            ),
        );
    }
}

/// Whether the namespace of `w` has a LocalQueue named `default`.
fn has_default_local_queue(p: &crate::profile::Profile, w: &Workload) -> bool {
    p.local_queue(DEFAULT_LOCAL_QUEUE, w.namespace_in(p))
        .is_some()
}

/// A RayService whose RayClusters Kueue queues as standalone jobs: `ray.io/raycluster` on,
/// `ray.io/rayservice` off, and the RayService labelled with a queue (KubeRay copies it to its
/// RayClusters) or in a namespace with a `default` LocalQueue (Kueue defaults them to it).
fn clusters_queued_alone(p: &crate::profile::Profile, w: &Workload) -> bool {
    let Some(kueue) = &p.operators.kueue else {
        return false;
    };
    w.kind == WorkloadKind::RayService
        && kueue.frameworks.contains(&Framework::RayCluster)
        && !kueue.frameworks.contains(&Framework::RayService)
        && (w.queue.is_some() || has_default_local_queue(p, w))
}
