//! The provisioning part of the bundle (`infra/`): `up.sh`, `verify.sh`, `down.sh` and the Helm
//! values files, all from the same profile as the manifests.
//!
//! Scripts are rendered from `templates/infra/common/*.sh.j2` (the cloud-neutral steps), or from
//! the provider's `templates/infra/<section>/*.sh.j2`, which extend them with the cloud's
//! commands; every `{{ value }}` is single-quoted for bash. The templates put each profile value once into a `readonly` line at
//! the top and use `"$VAR"` below, so a reviewer sees every value in one place and no value is
//! ever parsed as shell syntax. This module prepares those values as plain strings.

use super::TextFile;
use super::platform::{FILE_NAMESPACE, IDENTITY_PLACEHOLDER, platform_objects};
use crate::base::diagnostic::Diagnostic;
use crate::base::yaml;
use crate::facts::operators;
use crate::profile::{Framework, KubeRayOperator, KueueOperator, NvidiaInstall, Profile};
use serde::Serialize;
use serde_json::{Map, Value, json};

pub(crate) const FILE_UP: &str = "infra/up.sh";
/// A fleet member's credentials script.
pub(crate) const FILE_KUBECONFIG: &str = "infra/kubeconfig.sh";
pub(crate) const FILE_VERIFY: &str = "infra/verify.sh";
pub(crate) const FILE_DOWN: &str = "infra/down.sh";
pub(crate) const FILE_SMOKE: &str = "infra/smoke.sh";
pub(crate) const FILE_KUEUE_VALUES: &str = "infra/kueue-values.yaml";
pub(crate) const FILE_KUBERAY_VALUES: &str = "infra/kuberay-values.yaml";

/// Everything the three script templates read.
#[derive(Serialize)]
struct Context {
    /// The provider's section name (`azure`), which is also its template folder; its values
    /// are added under that name.
    provider: Option<&'static str>,
    kueue: Option<KueueCtx>,
    kuberay: Option<KubeRayCtx>,
    platform: PlatformCtx,
    /// NVIDIA GPU pools, whose nodes `verify.sh` checks.
    gpu_pools: Vec<GpuPoolCtx>,
    /// Some pool autoscales from zero: missing nodes are not a failure in `verify.sh`.
    scales_to_zero: bool,
    /// Set when the ServiceAccount is annotated for workload identity by `up.sh`.
    workload_identity: Option<WorkloadIdentityCtx>,
    /// The GPU smoke test's RayJob (`smoke.sh`, `verify.sh --smoke`).
    smoke: Option<super::smoke::SmokeJob>,
    /// The NVIDIA device plugin or GPU Operator that `up.sh` installs (`operators::nvidia`).
    nvidia: Option<NvidiaCtx>,
    /// The label that names a node's pool (`verify.sh` lists a GPU pool's nodes by it).
    pool_label: Option<&'static str>,
    /// The Prometheus Operator stack and DCGM exporter `up.sh` installs (`null`: none).
    monitoring: Value,
}

#[derive(Serialize)]
struct NvidiaCtx {
    /// `devicePlugin` or `gpuOperator`.
    install: &'static str,
    repo: &'static str,
    repo_alias: &'static str,
    chart: &'static str,
    version: String,
    namespace: &'static str,
    release: &'static str,
    daemonset: &'static str,
    /// The values file's name, next to the script.
    values: &'static str,
}

#[derive(Serialize)]
struct GpuPoolCtx {
    name: String,
    min_nodes: u32,
    /// The GPUs each node advertises, from the catalogue (`None` for a size it lacks).
    gpus_per_node: Option<u32>,
}

#[derive(Serialize)]
struct WorkloadIdentityCtx {
    namespace: String,
    service_account: String,
    /// The provider's annotation values in order (Azure: client ID, tenant ID; GCP: the Google
    /// service account's e-mail): pinned in the profile, or `None` (queried and annotated).
    client_id: Option<String>,
    tenant_id: Option<String>,
    placeholder: &'static str,
    /// Some annotation is left to `up.sh` (not pinned in the profile).
    pending: bool,
}

#[derive(Serialize)]
struct KueueCtx {
    chart: String,
    version: String,
    namespace: String,
    release: String,
    deployment: String,
}

#[derive(Serialize)]
struct KubeRayCtx {
    /// Helm repository to add as `kuberay`; `None` when `chart` is itself a URL.
    repo: Option<String>,
    chart: String,
    version: String,
    namespace: String,
    release: String,
    deployment: String,
}

#[derive(Serialize)]
struct PlatformCtx {
    /// Platform files other than the namespace's, in reverse apply order (`down.sh`).
    delete_files: Vec<String>,
    namespace_file: &'static str,
    flavors: Vec<FlavorCtx>,
    cluster_queues: Vec<String>,
    /// `namespace/name`.
    local_queues: Vec<String>,
    /// The ProvisioningRequest admission checks.
    admission_checks: Vec<String>,
}

#[derive(Serialize)]
struct FlavorCtx {
    name: String,
    /// Label selector of the flavor's nodes (`accelerator=nvidia`), `None` for an empty flavor.
    selector: Option<String>,
}

/// All `infra/` files of a profile: the scripts as their templates' values (rendered by
/// `output::render`), the values files and the cloud's own files as text.
pub fn infra_files(p: &Profile) -> Result<Vec<TextFile>, Diagnostic> {
    let mut ctx = serde_json::to_value(context(p)).unwrap_or_default();
    let ctx_monitoring = ctx["monitoring"].clone();
    let provider = p.cloud();
    let folder = provider.map_or("common", |pr| pr.section());
    if let (Some(pr), Some(map)) = (provider, ctx.as_object_mut()) {
        map.insert(pr.section().into(), pr.script_context(p));
    }
    let mut out = Vec::new();
    for (file, script) in [
        (FILE_UP, "up.sh.j2"),
        (FILE_VERIFY, "verify.sh.j2"),
        (FILE_DOWN, "down.sh.j2"),
    ] {
        out.push(TextFile::template(
            file,
            format!("infra/{folder}/{script}"),
            ctx.clone(),
        ));
    }
    // A fleet member: its credentials, for `fleet/connect.sh` and `fleet/verify.sh`.
    if p.role.is_some() && provider.is_some() {
        out.push(TextFile::template(
            FILE_KUBECONFIG,
            format!("infra/{folder}/kubeconfig.sh.j2"),
            ctx.clone(),
        ));
    }
    if !ctx["smoke"].is_null() {
        out.push(TextFile::template(
            FILE_SMOKE,
            "infra/smoke.sh.j2".into(),
            ctx,
        ));
    }
    if let Some(pr) = provider {
        out.extend(
            pr.infra_files(p)?
                .into_iter()
                .map(|(path, text)| TextFile::written(path, text)),
        );
    }
    let yaml_header = crate::base::yaml::HEADER;
    if let Some(k) = &p.operators.kueue {
        let values = yaml::to_yaml(&kueue_values(p, k)?)?;
        out.push(TextFile::written(
            FILE_KUEUE_VALUES,
            format!("{yaml_header}{values}"),
        ));
    }
    if p.operators.kuberay.is_some() {
        let values = yaml::to_yaml(&kuberay_values(p))?;
        out.push(TextFile::written(
            FILE_KUBERAY_VALUES,
            format!("{yaml_header}{values}"),
        ));
    }
    if let Some(stack) = operators::nvidia(p) {
        let values = yaml::to_yaml(&nvidia_values(p, &stack))?;
        out.push(TextFile::written(
            stack.values_file,
            format!("{yaml_header}{values}"),
        ));
    }
    if !ctx_monitoring.is_null() {
        // A managed collector installs no stack.
        if ctx_monitoring["managed"].is_null() {
            let values = yaml::to_yaml(&stack_values(p))?;
            out.push(TextFile::written(
                FILE_STACK_VALUES,
                format!("{yaml_header}{values}"),
            ));
        }
        if !ctx_monitoring["gpu_monitoring"].is_null() {
            let values = yaml::to_yaml(&gpu_monitoring_values(p))?;
            out.push(TextFile::written(
                FILE_GPU_MONITORING_VALUES,
                format!("{yaml_header}{values}"),
            ));
        }
        if !ctx_monitoring["dcgm"].is_null() {
            let values = yaml::to_yaml(&dcgm_values(p))?;
            out.push(TextFile::written(
                FILE_DCGM_VALUES,
                format!("{yaml_header}{values}"),
            ));
        }
    }
    Ok(out)
}

fn context(p: &Profile) -> Context {
    let provider = p.cloud();
    // Workload identity that up.sh may annotate on the service account and verify.sh checks
    // (Azure's client/tenant IDs, GKE's Google service account). EKS (Pod Identity) and ACK
    // (RRSA, the role name known at gen time) need neither; their templates check identity in
    // their own blocks.
    let workload_identity = match (&p.service_account, provider) {
        (Some(sa), Some(pr))
            if sa.workload_identity && pr.has_identity() && pr.annotates_identity() =>
        {
            let ids = pr.identity_annotations();
            let id = |i: usize| ids.get(i).and_then(|(_, v)| v.clone());
            Some(WorkloadIdentityCtx {
                namespace: p.namespace.to_string(),
                service_account: sa.name.to_string(),
                client_id: id(0),
                tenant_id: id(1),
                placeholder: IDENTITY_PLACEHOLDER,
                pending: ids.iter().any(|(_, v)| v.is_none()),
            })
        }
        _ => None,
    };
    let groups = provider
        .map(crate::cloud::Cloud::node_groups)
        .unwrap_or_default();
    Context {
        provider: provider.map(crate::cloud::Cloud::section),
        scales_to_zero: groups.iter().any(|g| g.size.min == 0),
        kueue: p.operators.kueue.as_ref().map(|k| kueue(p, k)),
        kuberay: p.operators.kuberay.as_ref().map(|k| kuberay(p, k)),
        platform: platform(p),
        gpu_pools: groups
            .into_iter()
            .filter(|g| g.gpu)
            .map(|g| GpuPoolCtx {
                name: g.name.to_owned(),
                min_nodes: g.size.min,
                gpus_per_node: g.instance.map(|i| i.gpus).filter(|n| *n > 0),
            })
            .collect(),
        workload_identity,
        smoke: super::smoke::smoke_job(p).map(|(_, job)| job),
        nvidia: operators::nvidia(p).map(|n| NvidiaCtx {
            install: match n.install {
                NvidiaInstall::GpuOperator => "gpuOperator",
                _ => "devicePlugin",
            },
            repo: n.repo,
            repo_alias: n.repo_alias,
            chart: n.chart,
            version: n.version,
            namespace: n.namespace,
            release: n.release,
            daemonset: n.daemonset,
            values: n.values_file.trim_start_matches("infra/"),
        }),
        pool_label: provider.map(|pr| pr.words().pool_label),
        monitoring: monitoring_context(p),
    }
}

/// The Deployment Kueue's chart creates: `<fullname>-controller-manager`, where fullname is the
/// release name when it contains the chart name `kueue`, else `<release>-kueue` (Helm's
/// standard `fullname` helper, 63 characters, no trailing `-`).
fn kueue_deployment(release: &str) -> String {
    let full = if release.contains("kueue") {
        release.to_owned()
    } else {
        format!("{release}-kueue")
    };
    let full: String = full.chars().take(63).collect();
    format!("{}-controller-manager", full.trim_end_matches('-'))
}

fn kueue(p: &Profile, k: &KueueOperator) -> KueueCtx {
    KueueCtx {
        chart: operators::kueue_chart(p, k),
        version: k.version.to_string(),
        namespace: k.namespace.to_string(),
        release: k.release.to_string(),
        deployment: kueue_deployment(k.release.as_str()),
    }
}

fn kuberay(p: &Profile, k: &KubeRayOperator) -> KubeRayCtx {
    let repo = operators::kuberay_repo(p, k);
    // Helm adds only HTTP repositories: an OCI registry's chart is installed by reference.
    let (repo, chart) = if k.chart.contains("://") {
        (None, k.chart.to_string())
    } else if repo.starts_with("oci://") {
        (None, format!("{}/{}", repo.trim_end_matches('/'), k.chart))
    } else {
        (Some(repo), k.chart.to_string())
    };
    KubeRayCtx {
        repo,
        chart,
        version: k.version.to_string(),
        namespace: k.namespace.to_string(),
        release: k.release.to_string(),
        // The chart's default values set `fullnameOverride: kuberay-operator`.
        deployment: "kuberay-operator".into(),
    }
}

fn platform(p: &Profile) -> PlatformCtx {
    let mut files: Vec<String> = Vec::new();
    for o in platform_objects(p) {
        if !files.contains(&o.file) {
            files.push(o.file);
        }
    }
    let (cluster_queues, local_queues) = p.queues.as_ref().map_or_else(Default::default, |q| {
        (
            q.cluster_queues
                .iter()
                .map(|c| c.name.to_string())
                .collect(),
            q.local_queues
                .iter()
                .map(|l| format!("{}/{}", l.namespace_in(p), l.name))
                .collect(),
        )
    });
    files.retain(|f| f != FILE_NAMESPACE);
    files.reverse();
    PlatformCtx {
        delete_files: files,
        namespace_file: FILE_NAMESPACE,
        flavors: p
            .flavors
            .iter()
            .map(|f| FlavorCtx {
                name: f.name.to_string(),
                selector: (!f.node_labels.is_empty()).then(|| {
                    f.node_labels
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(",")
                }),
            })
            .collect(),
        cluster_queues,
        local_queues,
        admission_checks: p
            .admission_checks
            .iter()
            .map(|a| a.name.to_string())
            .collect(),
    }
}

/// Helm values for Kueue: only what the profile decides. `managerConfig.controllerManagerConfigYaml`
/// replaces the chart's whole Configuration, so it is the pinned chart's own Configuration with
/// the profile's `integrations.frameworks` and the fields of `operators.kueue.configuration`
/// (everything else stays the chart's default); feature
/// gates when the profile sets any; where the operators run (`operators::placement`).
/// The same values are embedded in the Argo CD and Flux objects.
pub(crate) fn kueue_values(p: &Profile, k: &KueueOperator) -> Result<Value, Diagnostic> {
    let frameworks: Vec<&str> = k
        .frameworks
        .iter()
        .map(|f: &Framework| f.as_str())
        .collect();
    let mut config = operators::kueue_default_configuration();
    config["integrations"]["frameworks"] = json!(frameworks);
    // Each top-level field the profile sets replaces the chart's (Kueue reads the
    // Configuration as one document; a field is not merged deeper, so what the profile writes
    // under `waitForPodsReady` is the whole of it, as in Kueue's own Configuration file).
    if let Some(Value::Object(fields)) = k.configuration.as_ref().map(|c| json!(c)) {
        for (key, value) in fields {
            config[key.as_str()] = value;
        }
    }
    if let Some(fleet) = p.managed_fleet() {
        config["multiKueue"] = super::fleet::configuration(fleet);
    }
    // A monitored profile's dashboard and alerts read the ClusterQueues' usage, nominal quota
    // and borrowing limit, which Kueue reports only with `metrics.enableClusterQueueResources`
    // (kueue@v0.19.2 `pkg/metrics/metrics.go`; off in the chart's Configuration, where
    // `charts/kueue/values.yaml` leaves it commented out). Unless the profile says otherwise.
    let monitored = crate::facts::monitoring::resolve(p);
    if monitored.is_some()
        && let Some(metrics) = config.get_mut("metrics").and_then(Value::as_object_mut)
    {
        metrics
            .entry("enableClusterQueueResources")
            .or_insert(Value::Bool(true));
    }
    // The chart writes the Configuration into its ConfigMap as is: a YAML string.
    let mut values = json!({
        "managerConfig": { "controllerManagerConfigYaml": yaml::to_yaml(&config)? },
    });
    let mut manager = Map::new();
    if !k.feature_gates.is_empty() {
        let gates: Vec<Value> = k
            .feature_gates
            .iter()
            .map(|(name, enabled)| json!({ "name": name, "enabled": enabled }))
            .collect();
        manager.insert("featureGates".into(), Value::Array(gates));
    }
    if k.replicas > 1 {
        // Every replica serves the webhooks; the PDB keeps one through a node drain
        // (kueue@v0.19.2 charts/kueue/values.yaml `controllerManager.replicas`,
        // `controllerManager.podDisruptionBudget`).
        manager.insert("replicas".into(), json!(k.replicas));
        manager.insert(
            "podDisruptionBudget".into(),
            json!({ "enabled": true, "minAvailable": 1 }),
        );
    }
    if let Some((repository, tag)) = operators::operator_image(p, "kueue", k.version.as_str()) {
        manager.insert(
            "manager".into(),
            json!({ "image": { "repository": repository, "tag": tag } }),
        );
    }
    place(&mut manager, p);
    if !manager.is_empty() {
        values["controllerManager"] = Value::Object(manager);
    }
    // KueueViz, Kueue's own dashboard (kueue@v0.19.2 charts/kueue/values.yaml `enableKueueViz`).
    if monitored.is_some_and(|m| m.kueue_viz) {
        values["enableKueueViz"] = Value::Bool(true);
    }
    Ok(values)
}

/// Helm values for the KubeRay operator: where it runs, and from the AKS AI runtime its MCR
/// image with the wait-for-GCS init container injected, as the Azure AKS example sets them.
/// KubeRay injects it unless `ENABLE_INIT_CONTAINER_INJECTION` is `false`
/// (ray-project/kuberay@v1.6.1 `ray-operator/controllers/ray/common/pod.go`
/// `getEnableInitContainerInjection`); the values say `true` so that no default of the
/// registry's chart turns off what the MCR Ray images rely on. Everything else
/// is the chart's default, `batchScheduler.enabled: false` among them: Kueue admits Ray
/// workloads through the queue label and `suspend`.
pub(crate) fn kuberay_values(p: &Profile) -> Value {
    let mut values = Map::new();
    if let Some(k) = &p.operators.kuberay
        && let Some((repository, tag)) =
            operators::operator_image(p, "kuberay-operator", k.version.as_str())
    {
        values.insert(
            "image".into(),
            json!({ "repository": repository, "tag": tag }),
        );
        values.insert(
            "env".into(),
            json!([{ "name": "ENABLE_INIT_CONTAINER_INJECTION", "value": "true" }]),
        );
    }
    place(&mut values, p);
    Value::Object(values)
}

/// `base` (a chart's default tolerations, which a values file that sets `tolerations` replaces),
/// then a toleration of every taint of the profile's GPU pools `base` does not cover: a
/// DaemonSet that cannot land on a GPU node leaves that node out.
pub(crate) fn gpu_pool_tolerations(p: &Profile, mut tolerations: Vec<Value>) -> Vec<Value> {
    let groups = p
        .cloud()
        .map(crate::cloud::Cloud::node_groups)
        .unwrap_or_default();
    let defaults: Vec<crate::profile::Toleration> = tolerations
        .iter()
        .filter_map(|t| serde_json::from_value(t.clone()).ok())
        .collect();
    for taint in groups.iter().filter(|g| g.gpu).flat_map(|g| &g.taints) {
        if defaults.iter().any(|t| t.tolerates(taint)) {
            continue;
        }
        let t = match &taint.value {
            Some(v) => {
                json!({ "key": taint.key, "operator": "Equal", "value": v, "effect": taint.effect.as_str() })
            }
            None => {
                json!({ "key": taint.key, "operator": "Exists", "effect": taint.effect.as_str() })
            }
        };
        if !tolerations.contains(&t) {
            tolerations.push(t);
        }
    }
    tolerations
}

/// A node affinity for the cloud's NVIDIA GPU nodes (by the label it puts on them).
pub(crate) fn gpu_node_affinity(p: &Profile) -> Value {
    let (key, value) = p
        .cloud()
        .map_or(("nvidia.com/gpu.present", Some("true")), |pr| {
            pr.words().gpu_label
        });
    let expression = match value {
        Some(v) => json!({ "key": key, "operator": "In", "values": [v] }),
        None => json!({ "key": key, "operator": "Exists" }),
    };
    json!({ "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{ "matchExpressions": [expression] }],
    } } })
}

/// Helm values of the NVIDIA component raykueue installs (`operators::nvidia`): where its
/// DaemonSets run and which taints they tolerate. The chart's tolerations are replaced whole by
/// a values file that sets them, so its defaults are listed again, then every taint of the
/// profile's GPU pools they do not cover: a plugin that cannot land on a GPU node leaves it
/// without `nvidia.com/gpu`.
pub(crate) fn nvidia_values(p: &Profile, stack: &operators::NvidiaStack) -> Value {
    let tolerations = gpu_pool_tolerations(p, operators::device_plugin_default_tolerations());
    if stack.install == NvidiaInstall::DevicePlugin {
        json!({
            "affinity": gpu_node_affinity(p),
            "tolerations": tolerations,
        })
    } else {
        // NVIDIA's GPU Operator on AKS, over the driver and container toolkit the AKS node image
        // already has (docs.nvidia.com gpu-operator "Microsoft AKS", "GPU Operator with
        // Preinstalled Driver and Container Toolkit": driver.enabled=false,
        // toolkit.enabled=false, operator.runtimeClass=nvidia-container-runtime). Its node
        // feature discovery labels GPU nodes, and its operands tolerate what the device plugin
        // would (NVIDIA/gpu-operator@v25.10.1 values.yaml `daemonsets.tolerations`,
        // `node-feature-discovery.worker.tolerations`).
        let nfd: Vec<Value> = [
                json!({ "key": "node-role.kubernetes.io/master", "operator": "Equal", "value": "", "effect": "NoSchedule" }),
                json!({ "key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "value": "", "effect": "NoSchedule" }),
            ]
            .into_iter()
            .chain(tolerations.iter().skip(1).cloned())
            .collect();
        json!({
            "driver": { "enabled": false },
            "toolkit": { "enabled": false },
            "operator": { "runtimeClass": "nvidia-container-runtime" },
            "daemonsets": { "tolerations": tolerations.iter().skip(1).cloned().collect::<Vec<_>>() },
            "node-feature-discovery": { "worker": { "tolerations": nfd } },
        })
    }
}

/// The operator pod's `nodeSelector` and `tolerations` (`operators::placement`).
fn place(pod: &mut Map<String, Value>, p: &Profile) {
    if let Some(placement) = operators::placement(p) {
        pod.insert("nodeSelector".into(), placement.node_selector());
        if let Some(t) = placement.tolerations() {
            pod.insert("tolerations".into(), t);
        }
    }
}

/// The Prometheus Operator stack `infra/up.sh` installs: prometheus-community's
/// kube-prometheus-stack 88.3.0, the last release on Prometheus Operator v0.93.0, whose CRDs
/// raykueue validates against (prometheus-community/helm-charts@kube-prometheus-stack-88.3.0
/// `charts/kube-prometheus-stack/Chart.yaml`, `appVersion: v0.93.0`).
pub(crate) const STACK_REPO: &str = "https://prometheus-community.github.io/helm-charts";
pub(crate) const STACK_CHART: &str = "kube-prometheus-stack";
pub(crate) const STACK_VERSION: &str = "88.3.0";
pub(crate) const FILE_STACK_VALUES: &str = "infra/kube-prometheus-stack-values.yaml";
/// NVIDIA's DCGM exporter chart (NVIDIA/dcgm-exporter@4.5.3-4.8.2 `deployment/Chart.yaml`,
/// `version: "4.8.2"`; repository from its `README.md`), released as `dcgm-exporter` so that
/// its DaemonSet and Service are named `dcgm-exporter` (the chart's `fullname` helper).
pub(crate) const DCGM_REPO: &str = "https://nvidia.github.io/dcgm-exporter/helm-charts";
pub(crate) const DCGM_CHART: &str = "dcgm-exporter";
pub(crate) const DCGM_VERSION: &str = "4.8.2";
pub(crate) const FILE_DCGM_VALUES: &str = "infra/dcgm-exporter-values.yaml";

/// kube-prometheus-stack's values: only what the dashboard needs. kube-state-metrics exports
/// the cloud's pool label of every node (`metricLabelsAllowlist`, kube-state-metrics chart
/// 8.2.0 `values.yaml`), which the dashboard's GPU pool rows join DCGM metrics with. The
/// stack's Prometheus selects objects labelled `release: <release>` (its default
/// `*SelectorNilUsesHelmValues: true`) and its Grafana sidecar loads `grafana_dashboard: "1"`
/// ConfigMaps from every namespace (`grafana.sidecar.dashboards`, `searchNamespace: ALL`):
/// both defaults, left as they are.
pub(crate) fn stack_values(p: &Profile) -> Value {
    match p.cloud() {
        Some(c) => json!({ "kube-state-metrics": {
            "metricLabelsAllowlist": [format!("nodes=[{}]", c.words().pool_label)],
        }}),
        None => json!({}),
    }
}

/// The DCGM exporter's values: on the GPU nodes only, tolerating the GPU pools' taints (the
/// chart's own toleration of control-plane nodes kept, `deployment/values.yaml`), without the
/// chart's ServiceMonitor (raykueue writes its own in `monitoring/`).
pub(crate) fn dcgm_values(p: &Profile) -> Value {
    let base = vec![json!({
        "key": "node-role.kubernetes.io/control-plane",
        "operator": "Exists",
        "effect": "NoSchedule",
    })];
    json!({
        "serviceMonitor": { "enabled": false },
        "affinity": gpu_node_affinity(p),
        "tolerations": gpu_pool_tolerations(p, base),
    })
}

/// The AKS AI runtime's `gpu-monitoring` chart, as the upstream Azure example installs it
/// (Azure/AKS@45621c42829b8e5c15a0aa121dc895cf91766231
/// `examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf`, `helm_release
/// "gpu_monitoring"`, and `variables.tf`, `gpu_monitoring_chart_version`): release and namespace
/// `gpu-monitoring`, from the AI runtime's registry.
pub(crate) const GPU_MONITORING_CHART: &str = "gpu-monitoring";
pub(crate) const GPU_MONITORING_VERSION: &str = "0.1.1";
pub(crate) const GPU_MONITORING_NAMESPACE: &str = "gpu-monitoring";
pub(crate) const FILE_GPU_MONITORING_VALUES: &str = "infra/gpu-monitoring-values.yaml";

/// The GPU SKUs of the profile's GPU pools, as the chart keys them (`a100`, `t4`: the GPU
/// model's first word, as the example's `gpu_monitoring_sku_name` is `a100` for its A100
/// pool): each with its pools' VM sizes and GPUs per node.
fn gpu_skus(p: &Profile) -> std::collections::BTreeMap<String, (Vec<String>, u32)> {
    let mut out: std::collections::BTreeMap<String, (Vec<String>, u32)> =
        std::collections::BTreeMap::new();
    let Some(cloud) = p.cloud() else {
        return out;
    };
    for g in cloud.node_groups().iter().filter(|g| g.gpu) {
        let Some(t) = g.instance else {
            continue;
        };
        let sku = t
            .gpu_model
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_lowercase();
        let entry = out.entry(sku).or_default();
        if !entry.0.iter().any(|s| s == t.name) {
            entry.0.push(t.name.to_owned());
        }
        entry.1 = entry.1.max(t.gpus);
    }
    out
}

/// The chart's values: what the example sets, `gpuSkus.<sku>.{instanceTypes, num_gpus}`, one
/// entry per GPU SKU of the profile's pools.
pub(crate) fn gpu_monitoring_values(p: &Profile) -> Value {
    let skus: serde_json::Map<String, Value> = gpu_skus(p)
        .into_iter()
        .map(|(sku, (types, gpus))| (sku, json!({ "instanceTypes": types, "num_gpus": gpus })))
        .collect();
    json!({ "gpuSkus": skus })
}

/// What `infra/up.sh` installs for monitoring and `verify.sh` checks, for the scripts.
pub(crate) fn monitoring_context(p: &Profile) -> Value {
    let Some((m, _)) = super::monitoring::collector(p) else {
        return Value::Null;
    };
    let dcgm = (m.gpu_metrics == crate::profile::GpuMetrics::DcgmExporter).then(|| {
        json!({
            "repo": DCGM_REPO,
            "chart": DCGM_CHART,
            "version": DCGM_VERSION,
            "release": super::monitoring::DCGM_NAME,
            "daemonset": super::monitoring::DCGM_NAME,
            "values": FILE_DCGM_VALUES.trim_start_matches("infra/"),
        })
    });
    // Its DaemonSets are named `gpu-monitoring-<sku>` (learn.microsoft.com
    // `aks/deploy-ray-infrastructure`, the example's expected `gpu-monitoring-a100`).
    let gpu_monitoring = (m.gpu_metrics == crate::profile::GpuMetrics::AksGpuMonitoring).then(|| {
        json!({
            "chart": format!("{}/{GPU_MONITORING_CHART}", crate::facts::operators::AKS_AI_RUNTIME_REGISTRY),
            "version": GPU_MONITORING_VERSION,
            "namespace": GPU_MONITORING_NAMESPACE,
            "release": GPU_MONITORING_CHART,
            "values": FILE_GPU_MONITORING_VALUES.trim_start_matches("infra/"),
            "daemonsets": gpu_skus(p).keys().map(|sku| format!("{GPU_MONITORING_CHART}-{sku}")).collect::<Vec<_>>(),
        })
    });
    json!({
        "namespace": m.namespace,
        "release": m.release,
        "repo": STACK_REPO,
        "chart": STACK_CHART,
        "version": STACK_VERSION,
        "values": FILE_STACK_VALUES.trim_start_matches("infra/"),
        "dcgm": dcgm,
        "gpu_monitoring": gpu_monitoring,
        "managed": super::monitoring::up_context(p),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kueue_deployment_follows_the_charts_fullname_rule() {
        assert_eq!(kueue_deployment("kueue"), "kueue-controller-manager");
        assert_eq!(kueue_deployment("my-kueue"), "my-kueue-controller-manager");
        assert_eq!(
            kueue_deployment("queues"),
            "queues-kueue-controller-manager"
        );
    }
}
