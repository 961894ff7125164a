//! The workloads part: per workload a ConfigMap of its scripts (when it names any) and the
//! Job, RayJob, RayService or RayCluster, set up for Kueue admission (kueue@v0.19.2
//! `pkg/controller/jobs/{job,rayjob,raycluster,rayservice}`): queue label, suspended until
//! admitted, autoscaling only when elastic, every replica count explicit.

use super::{MANAGED_BY, Object};
use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::input::scripts::{self, Script, ScriptError, ScriptFiles};
use crate::model::platform::toleration;
use crate::profile::{
    EnvName, HeadGroup, Profile, Resources, RuntimeEnv, Serve, WorkerGroup, Workload, WorkloadKind,
};
use serde_json::{Map, Value, json};

pub(crate) const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
pub(crate) const PRIORITY_LABEL: &str = "kueue.x-k8s.io/priority-class";
/// Flux's server-side-apply policy annotation: `IfNotPresent` creates, never overwrites.
pub(crate) const FLUX_SSA: &str = "kustomize.toolkit.fluxcd.io/ssa";
pub(crate) const ELASTIC_ANNOTATION: &str = "kueue.x-k8s.io/elastic-job";
/// The scheduling gate Kueue's RayCluster and RayService defaulters add to every pod template of
/// an elastic object (and their validators require); emitted so the object is stable under diff.
pub(crate) const ELASTIC_GATE: &str = "kueue.x-k8s.io/elastic-job";
const SCRIPTS_VOLUME: &str = "scripts";

/// The folder of a workload in the bundle.
pub(crate) fn folder(w: &Workload) -> String {
    format!("workloads/{}", w.name)
}

/// The file of a workload's Ray object: `rayjob.yaml`, `rayservice.yaml` or `raycluster.yaml`.
pub(crate) fn object_file_name(kind: WorkloadKind) -> String {
    format!("{}.yaml", kind.as_str().to_ascii_lowercase())
}

pub(crate) const CONFIGMAP_FILE: &str = "configmap.yaml";

/// All workload objects of a profile, in apply order: per workload its ConfigMap, then the Ray
/// object. Scripts are what the input read (the checks have already reported unreadable ones).
pub(crate) fn workload_objects(
    p: &Profile,
    scripts: &ScriptFiles,
) -> Result<Vec<Object>, Vec<Diagnostic>> {
    let wide = crate::base::par::wide(p.items());
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let indexed: Vec<(usize, &Workload)> = p.workloads.iter().enumerate().collect();
    for built in crate::base::par::map(wide, &indexed, |&(i, w)| workload(p, w, scripts.of(i))) {
        match built {
            Ok(objs) => out.extend(objs),
            Err(d) => errors.push(d),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The objects of one workload (its scripts' ConfigMap, then the Ray object), filed under
/// `workloads/<name>/`.
pub(crate) fn workload(
    p: &Profile,
    w: &Workload,
    read: &[Result<Script, ScriptError>],
) -> Result<Vec<Object>, Diagnostic> {
    let ns = w.namespace_in(p);
    let dir = folder(w);
    let image = w.image_in(p).ok_or_else(|| {
        Diagnostic::new(
            &codes::NO_IMAGE,
            format!("workload `{}` has no image", w.name),
        )
    })?;
    let mut out = Vec::new();

    let configmap = scripts_configmap(w, ns, &dir, read, &mut out)?;

    if !w.kind.is_ray() {
        out.push(job(p, w, ns, &dir, image.as_str(), configmap.as_deref()));
        return Ok(out);
    }
    // The workload rules stop a Ray kind without a head (RK152) before output.
    let head = w.head.clone().unwrap_or_default();
    let ray_version = w.ray_version_in(p).ok_or_else(|| {
        Diagnostic::new(
            &codes::NO_RAY_VERSION,
            format!(
                "workload `{}`: no rayVersion and none in the image tag",
                w.name
            ),
        )
    })?;
    // Queued also when Kueue's webhook will default it to the namespace's `default`
    // LocalQueue: the label is then written out, so the object says what the cluster does.
    let admission = w.admission(p);
    let queued = admission.is_queued();
    let pods = Pods {
        image: image.as_str(),
        service_account: service_account(p, w),
        identity_labels: p.cloud().map_or(&[][..], |c| c.identity_pod_labels()),
        configmap: configmap.as_deref(),
        mount_path: &w.scripts_mount_path,
        serve_port: w.serve.as_ref().map(|s| s.port),
        // A RayJob's cluster is created by KubeRay, not admitted on its own: only RayCluster and
        // RayService templates carry the gate.
        elastic_gate: w.elastic && queued && w.kind != WorkloadKind::RayJob,
    };
    let mut cluster = Map::new();
    cluster.insert("rayVersion".into(), json!(ray_version));
    // Kueue rejects in-tree autoscaling unless the workload is elastic; always explicit.
    cluster.insert("enableInTreeAutoscaling".into(), json!(w.elastic));
    if queued && w.kind != WorkloadKind::RayJob {
        // RayCluster: `suspend` only under Kueue. RayService: Kueue suspends and admits it
        // through `rayClusterConfig.suspend` (its `spec.suspend` is never touched by Kueue).
        cluster.insert("suspend".into(), json!(true));
    }
    cluster.insert("headGroupSpec".into(), head_group(&pods, &head));
    if !w.workers.is_empty() {
        cluster.insert(
            "workerGroupSpecs".into(),
            Value::Array(w.workers.iter().map(|g| worker(&pods, g)).collect()),
        );
    }

    let mut metadata = object_metadata(w, ns, admission);
    let mut annotations = Map::new();
    if w.elastic && queued {
        annotations.insert(ELASTIC_ANNOTATION.into(), json!("true"));
    }
    // Kueue flips `suspend` when it admits a queued workload; a Flux re-apply would flip it
    // back and evict it. Flux creates the workloads it syncs and then leaves them alone
    // (RayJobs are not synced: `WorkloadKind::is_one_shot`).
    if queued && !w.kind.is_one_shot() && p.gitops.as_ref().is_some_and(|g| g.flux.is_some()) {
        annotations.insert(FLUX_SSA.into(), json!("IfNotPresent"));
    }
    if !annotations.is_empty() {
        metadata["annotations"] = Value::Object(annotations);
    }

    let file = format!("{dir}/{}", object_file_name(w.kind));
    let cluster = Value::Object(cluster);
    let obj = match w.kind {
        WorkloadKind::RayJob => {
            let spec = ray_job_spec(p, w, image, queued, cluster)?;
            ray_object("RayJob", w, ns, file, metadata, spec)
        }
        WorkloadKind::RayService => {
            // Kueue manages a RayService as one job (ray.io/rayservice): the queue label on
            // the RayService, suspension through rayClusterConfig.suspend.
            let mut spec = Map::new();
            put(
                &mut spec,
                "serveConfigV2",
                w.serve
                    .as_ref()
                    .map(|s| serve_config(p, s))
                    .transpose()?
                    .as_ref(),
            );
            spec.insert("rayClusterConfig".into(), cluster);
            ray_object("RayService", w, ns, file, metadata, Value::Object(spec))
        }
        WorkloadKind::RayCluster | WorkloadKind::Job => {
            ray_object("RayCluster", w, ns, file, metadata, cluster)
        }
    };
    let mut obj = obj;
    if queued && p.managed_fleet().is_some() {
        // Dispatched by the fleet's manager (`model::fleet`): KubeRay leaves it alone here, and
        // the field is immutable, so it is set at creation.
        obj.value["spec"]["managedBy"] = json!(crate::profile::fleet::MULTIKUEUE_CONTROLLER);
    }
    out.push(obj);
    Ok(out)
}

/// The ConfigMap of a workload's scripts, when it has any, added to `out`; its name.
fn scripts_configmap(
    w: &Workload,
    ns: &str,
    dir: &str,
    read: &[Result<Script, ScriptError>],
    out: &mut Vec<Object>,
) -> Result<Option<String>, Diagnostic> {
    let scripts = read
        .iter()
        .cloned()
        .collect::<Result<Vec<Script>, _>>()
        .map_err(|e| {
            Diagnostic::new(
                &codes::SCRIPT_UNREADABLE,
                format!("workload `{}`: {e}", w.name),
            )
        })?;
    let configmap = if scripts.is_empty() {
        None
    } else {
        let name = format!("{}-scripts-{}", w.name, scripts::content_hash(&scripts));
        let data: Map<String, Value> = scripts
            .iter()
            .map(|s| (s.key.clone(), Value::String(s.text.clone())))
            .collect();
        // The name carries a hash of the content, so a changed script is a new ConfigMap and
        // the pods that mount it change too; immutable, as nothing edits it.
        out.push(Object::data(
            "ConfigMap",
            name.clone(),
            Some(ns),
            format!("{dir}/{CONFIGMAP_FILE}"),
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": { MANAGED_BY.0: MANAGED_BY.1 },
                },
                "immutable": true,
                "data": data,
            }),
        ));
        Some(name)
    };
    Ok(configmap)
}

/// A RayJob's `spec` around its cluster's (`rayClusterSpec`).
fn ray_job_spec(
    p: &Profile,
    w: &Workload,
    image: &crate::profile::Image,
    queued: bool,
    cluster: Value,
) -> Result<Value, Diagnostic> {
    let submitter = w.submitter.as_ref().map(|s| {
        json!({
            "spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "ray-job-submitter",
                    "image": image,
                    "resources": requests_limits(&s.resources),
                }],
            },
        })
    });
    // Kueue's RayJob webhook: queue label, rayClusterSpec without clusterSelector,
    // shutdownAfterJobFinishes true (the cluster goes when the job ends, and its quota
    // with it); Kueue flips `suspend` to false when it admits the job.
    let mut spec = Map::new();
    put(&mut spec, "entrypoint", w.entrypoint.as_ref());
    put(
        &mut spec,
        "runtimeEnvYAML",
        runtime_env_yaml(&with_storage(p, w.runtime_env.as_ref()))?.as_ref(),
    );
    spec.insert(
        "submissionMode".into(),
        json!(w.submission_mode.unwrap_or_default()),
    );
    put(&mut spec, "submitterPodTemplate", submitter.as_ref());
    spec.insert("shutdownAfterJobFinishes".into(), json!(true));
    put(
        &mut spec,
        "ttlSecondsAfterFinished",
        w.ttl_seconds_after_finished.as_ref(),
    );
    put(
        &mut spec,
        "activeDeadlineSeconds",
        w.active_deadline_seconds.as_ref(),
    );
    put(&mut spec, "backoffLimit", w.backoff_limit.as_ref());
    if queued {
        spec.insert("suspend".into(), json!(true));
    }
    spec.insert("rayClusterSpec".into(), cluster);
    Ok(Value::Object(spec))
}

/// Name, namespace and labels of a workload's object: raykueue's, the queue Kueue admits it
/// through, its priority class.
fn object_metadata(w: &Workload, ns: &str, admission: crate::profile::Admission<'_>) -> Value {
    let mut labels = Map::new();
    labels.insert(MANAGED_BY.0.into(), json!(MANAGED_BY.1));
    if let Some(q) = admission.queue() {
        labels.insert(QUEUE_LABEL.into(), json!(q));
    }
    if let Some(pc) = &w.priority_class {
        labels.insert(PRIORITY_LABEL.into(), json!(pc));
    }
    json!({ "name": w.name, "namespace": ns, "labels": labels })
}

/// The container name of a Job's pods when the profile names none.
const JOB_CONTAINER: &str = "main";
const SHM_VOLUME: &str = "dshm";

/// A `batch/v1` Job set up for Kueue's `batch/job` integration (kueue@v0.19.2
/// `pkg/controller/jobs/job`): queue label, suspended until admitted (Kueue sets
/// `suspend: false` when it admits it, `RunWithPodSetsInfo`), one pod set of
/// `min(parallelism, completions)` pods (`podsCount`).
fn job(
    p: &Profile,
    w: &Workload,
    ns: &str,
    dir: &str,
    image: &str,
    configmap: Option<&str>,
) -> Object {
    let admission = w.admission(p);
    let pod = w.pod.clone().unwrap_or_default();
    let pods = Pods {
        image,
        service_account: service_account(p, w),
        identity_labels: p.cloud().map_or(&[][..], |c| c.identity_pod_labels()),
        configmap,
        mount_path: &w.scripts_mount_path,
        serve_port: None,
        elastic_gate: false,
    };
    let name = pod.container.as_ref().map_or(JOB_CONTAINER, |c| c.as_str());
    let mut template = pod_template(
        &pods,
        name,
        &Resources::new(),
        None,
        &pod.node_selector,
        &pod.tolerations,
        pod.topology.as_ref(),
    );
    let container = &mut template["spec"]["containers"][0];
    if !w.command.is_empty() {
        container["command"] = json!(w.command);
    }
    if !pod.env.is_empty() {
        let env: Vec<Value> = pod
            .env
            .iter()
            .map(|(name, value)| json!({ "name": name, "value": value }))
            .collect();
        container["env"] = Value::Array(env);
    }
    let mut resources = Map::new();
    if !pod.requests.is_empty() {
        resources.insert("requests".into(), json!(pod.requests));
    }
    if !pod.limits.is_empty() {
        resources.insert("limits".into(), json!(pod.limits));
    }
    if !resources.is_empty() {
        container["resources"] = Value::Object(resources);
    }
    if let Some(size) = &pod.shared_memory {
        let mount = json!({ "name": SHM_VOLUME, "mountPath": "/dev/shm" });
        push(&mut container["volumeMounts"], mount);
        let volume =
            json!({ "name": SHM_VOLUME, "emptyDir": { "medium": "Memory", "sizeLimit": size } });
        push(&mut template["spec"]["volumes"], volume);
    }
    template["spec"]["restartPolicy"] = json!("Never");

    let mut spec = Map::new();
    put(&mut spec, "parallelism", w.parallelism.as_ref());
    put(&mut spec, "completions", w.completions.as_ref());
    put(&mut spec, "completionMode", w.completion_mode.as_ref());
    put(&mut spec, "backoffLimit", w.backoff_limit.as_ref());
    put(
        &mut spec,
        "activeDeadlineSeconds",
        w.active_deadline_seconds.as_ref(),
    );
    put(
        &mut spec,
        "ttlSecondsAfterFinished",
        w.ttl_seconds_after_finished.as_ref(),
    );
    if admission.is_queued() {
        spec.insert("suspend".into(), json!(true));
    }
    spec.insert("template".into(), template);
    Object::data(
        "Job",
        w.name.as_str(),
        Some(ns),
        format!("{dir}/{}", object_file_name(w.kind)),
        super::k8s(
            "batch/v1",
            "Job",
            object_metadata(w, ns, admission),
            [("spec", Value::Object(spec))],
        ),
    )
}

/// Appends to a JSON array, creating it where there is none yet.
fn push(slot: &mut Value, item: Value) {
    match slot {
        Value::Array(items) => items.push(item),
        _ => *slot = json!([item]),
    }
}

/// A KubeRay object (`ray.io/v1`) as data.
fn ray_object(
    kind: &'static str,
    w: &Workload,
    ns: &str,
    file: String,
    metadata: Value,
    spec: Value,
) -> Object {
    Object::data(
        kind,
        w.name.as_str(),
        Some(ns),
        file,
        super::k8s("ray.io/v1", kind, metadata, [("spec", spec)]),
    )
}

/// `map[key] = value` unless the value is `None`.
fn put<T: serde::Serialize>(map: &mut Map<String, Value>, key: &str, value: Option<&T>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), json!(v));
    }
}

/// The service account of the pods, and whether it carries workload identity (only the
/// profile's own account is known to).
fn service_account<'a>(p: &'a Profile, w: &'a Workload) -> Option<(&'a str, bool)> {
    match (&w.service_account, &p.service_account) {
        (Some(own), Some(sa)) if own.as_str() == sa.name.as_str() => {
            Some((own.as_str(), sa.workload_identity))
        }
        (Some(own), _) => Some((own.as_str(), false)),
        (None, Some(sa)) => Some((sa.name.as_str(), sa.workload_identity)),
        (None, None) => None,
    }
}

/// What every Ray pod of one workload shares.
struct Pods<'a> {
    image: &'a str,
    service_account: Option<(&'a str, bool)>,
    /// Labels the pods of a workload-identity service account carry (the provider's).
    identity_labels: &'static [(&'static str, &'static str)],
    configmap: Option<&'a str>,
    mount_path: &'a str,
    serve_port: Option<u16>,
    elastic_gate: bool,
}

fn requests_limits(r: &Resources) -> Value {
    json!({ "requests": r, "limits": r })
}

fn head_group(pods: &Pods<'_>, h: &HeadGroup) -> Value {
    let mut spec = Map::new();
    if !h.ray_start_params.is_empty() {
        spec.insert("rayStartParams".into(), json!(h.ray_start_params));
    }
    // The Serve proxy's port, named `serve` as KubeRay looks it up for the serve Service.
    let ports = pods
        .serve_port
        .map(|port| json!([{ "name": "serve", "containerPort": port }]));
    spec.insert(
        "template".into(),
        pod_template(
            pods,
            "ray-head",
            &h.resources,
            ports,
            &h.node_selector,
            &h.tolerations,
            h.topology.as_ref(),
        ),
    );
    Value::Object(spec)
}

fn worker(pods: &Pods<'_>, g: &WorkerGroup) -> Value {
    let mut spec = Map::new();
    spec.insert("groupName".into(), json!(g.name));
    // Always explicit: the CRD defaults an omitted `replicas` to 0 and Kueue counts it.
    spec.insert("replicas".into(), json!(g.replicas));
    spec.insert("minReplicas".into(), json!(g.min()));
    spec.insert("maxReplicas".into(), json!(g.max()));
    if g.num_of_hosts != 1 {
        spec.insert("numOfHosts".into(), json!(g.num_of_hosts));
    }
    if !g.ray_start_params.is_empty() {
        spec.insert("rayStartParams".into(), json!(g.ray_start_params));
    }
    spec.insert(
        "template".into(),
        pod_template(
            pods,
            "ray-worker",
            &g.resources,
            None,
            &g.node_selector,
            &g.tolerations,
            g.topology.as_ref(),
        ),
    );
    Value::Object(spec)
}

fn pod_template(
    pods: &Pods<'_>,
    container_name: &str,
    resources: &Resources,
    ports: Option<Value>,
    node_selector: &std::collections::BTreeMap<crate::profile::QualifiedName, String>,
    tolerations: &[crate::profile::Toleration],
    topology: Option<&crate::profile::TopologyRequest>,
) -> Value {
    // KubeRay runs Ray in the container at index 0: it is the only one.
    let mut container = Map::new();
    container.insert("name".into(), json!(container_name));
    container.insert("image".into(), json!(pods.image));
    if let Some(ports) = ports {
        container.insert("ports".into(), ports);
    }
    if !resources.is_empty() {
        container.insert("resources".into(), requests_limits(resources));
    }
    if pods.configmap.is_some() {
        container.insert(
            "volumeMounts".into(),
            json!([{ "name": SCRIPTS_VOLUME, "mountPath": pods.mount_path, "readOnly": true }]),
        );
    }
    let mut spec = Map::new();
    let mut template = Map::new();
    if let Some((sa, identity)) = pods.service_account {
        let labels = pods.identity_labels;
        if identity && !labels.is_empty() {
            let labels: Map<String, Value> = labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), json!(v)))
                .collect();
            template.insert("metadata".into(), json!({ "labels": labels }));
        }
        spec.insert("serviceAccountName".into(), json!(sa));
    }
    // Kueue reads a pod set's topology request from its template's annotations (kueue@v0.19.2
    // `pkg/controller/jobs/raycluster/common.go` `BuildPodSets`, the head and each worker group).
    if let Some(t) = topology {
        let (key, value) = t.annotation();
        let metadata = template.entry("metadata").or_insert_with(|| json!({}));
        metadata["annotations"] = json!({ key: value });
    }
    if !node_selector.is_empty() {
        spec.insert("nodeSelector".into(), json!(node_selector));
    }
    if !tolerations.is_empty() {
        spec.insert(
            "tolerations".into(),
            Value::Array(tolerations.iter().map(toleration).collect()),
        );
    }
    if pods.elastic_gate {
        spec.insert("schedulingGates".into(), json!([{ "name": ELASTIC_GATE }]));
    }
    spec.insert("containers".into(), json!([container]));
    if let Some(cm) = pods.configmap {
        spec.insert(
            "volumes".into(),
            json!([{ "name": SCRIPTS_VOLUME, "configMap": { "name": cm } }]),
        );
    }
    template.insert("spec".into(), Value::Object(spec));
    Value::Object(template)
}

/// A Ray `runtime_env` as data (Ray's own key names), or `None` when empty.
fn runtime_env(env: &RuntimeEnv) -> Option<Value> {
    let mut m = Map::new();
    if let Some(dir) = &env.working_dir {
        m.insert("working_dir".into(), json!(dir));
    }
    if !env.pip.is_empty() {
        m.insert("pip".into(), json!(env.pip));
    }
    if !env.env_vars.is_empty() {
        m.insert("env_vars".into(), json!(env.env_vars));
    }
    (!m.is_empty()).then_some(Value::Object(m))
}

/// `runtimeEnvYAML`: the runtime environment serialized as YAML text, never spliced.
fn runtime_env_yaml(env: &RuntimeEnv) -> Result<Option<String>, Diagnostic> {
    runtime_env(env)
        .map(|v| crate::base::yaml::to_yaml(&v))
        .transpose()
}

/// A runtime environment with what the provider section gives every workload (`azure.storage`
/// as environment variables, so the programs find the profile's storage without a copy of its
/// name); the workload's own values win.
fn with_storage(p: &Profile, env: Option<&RuntimeEnv>) -> RuntimeEnv {
    let mut env = env.cloned().unwrap_or_default();
    for (name, value) in p
        .cloud()
        .map(crate::cloud::Cloud::workload_env)
        .unwrap_or_default()
    {
        env.env_vars
            .entry(EnvName(name.to_owned()))
            .or_insert(value);
    }
    env
}

/// `serveConfigV2`: Ray Serve's config file, built as data and serialized as YAML text.
fn serve_config(p: &Profile, serve: &Serve) -> Result<String, Diagnostic> {
    let mut cfg = Map::new();
    if serve.port != 8000 {
        // Serve listens on 8000 unless told otherwise; the head's `serve` port follows it.
        cfg.insert("http_options".into(), json!({ "port": serve.port }));
    }
    let apps: Vec<Value> = serve
        .applications
        .iter()
        .map(|a| {
            let mut app = Map::new();
            app.insert("name".into(), json!(a.name));
            app.insert("route_prefix".into(), json!(a.route_prefix));
            app.insert("import_path".into(), json!(a.import_path));
            if let Some(env) = runtime_env(&with_storage(p, a.runtime_env.as_ref())) {
                app.insert("runtime_env".into(), env);
            }
            Value::Object(app)
        })
        .collect();
    cfg.insert("applications".into(), Value::Array(apps));
    crate::base::yaml::to_yaml(&Value::Object(cfg))
}
