//! The provisioning part of the bundle (`infra/`): `up.sh`, `verify.sh`, `down.sh` and the Helm
//! values files, all from the same profile as the manifests.
//!
//! Scripts are rendered from `templates/infra/*.sh.j2`, where every `{{ value }}` is
//! single-quoted for bash. The templates put each profile value once into a `readonly` line at
//! the top and use `"$VAR"` below, so a reviewer sees every value in one place and no value is
//! ever parsed as shell syntax. This module prepares those values as plain strings.

use super::platform::{FILE_NAMESPACE, IDENTITY_PLACEHOLDER, platform_objects};
use crate::catalogue;
use crate::diagnostic::Diagnostic;
use crate::operators;
use crate::profile::{
    AZ_DEFAULT_NODE_COUNT, Framework, KubeRayOperator, KueueOperator, NodePool, PoolMode, Profile,
    ServiceAccount, Taint,
};
use crate::render;
use crate::yaml;
use serde::Serialize;
use serde_json::{Map, Value, json};

pub const FILE_UP: &str = "infra/up.sh";
pub const FILE_VERIFY: &str = "infra/verify.sh";
pub const FILE_DOWN: &str = "infra/down.sh";
pub const FILE_SMOKE: &str = "infra/smoke.sh";
pub const FILE_KUEUE_VALUES: &str = "infra/kueue-values.yaml";
pub const FILE_KUBERAY_VALUES: &str = "infra/kuberay-values.yaml";

/// The taint `criticalAddonsOnly` stands for (AKS's documented way to keep a system pool free
/// of application pods).
const CRITICAL_ADDONS_ONLY: &str = "CriticalAddonsOnly=true:NoSchedule";

/// Everything the three script templates read.
#[derive(Serialize)]
struct Context {
    azure: Option<AzureCtx>,
    kueue: Option<KueueCtx>,
    kuberay: Option<KubeRayCtx>,
    platform: PlatformCtx,
    /// NVIDIA GPU pools, whose nodes `verify.sh` checks.
    gpu_pools: Vec<GpuPoolCtx>,
    /// Set when the ServiceAccount is annotated for workload identity by `up.sh`.
    workload_identity: Option<WorkloadIdentityCtx>,
    /// The GPU smoke test's RayJob (`smoke.sh`, `verify.sh --smoke`).
    smoke: Option<super::smoke::SmokeJob>,
}

#[derive(Serialize)]
struct AzureCtx {
    subscription: Option<String>,
    location: String,
    resource_group: String,
    cluster: String,
    kubernetes_version: Option<String>,
    oidc_issuer: bool,
    workload_identity: bool,
    /// The pool created with the cluster (`None` only for a profile that bypassed the schema).
    system_pool: Option<PoolCtx>,
    /// Pools added with `az aks nodepool add`, in profile order.
    pools: Vec<PoolCtx>,
    identity: Option<IdentityCtx>,
    storage: Option<StorageCtx>,
    /// Some pool autoscales from zero: missing nodes are not a failure in `verify.sh`.
    scales_to_zero: bool,
}

#[derive(Serialize)]
struct PoolCtx {
    name: String,
    mode: &'static str,
    vm_size: String,
    count: Option<u32>,
    min: Option<u32>,
    max: Option<u32>,
    /// `--node-taints` / `--nodepool-taints`: comma-separated `key=value:Effect`.
    taints: Option<String>,
    /// `--labels` / `--nodepool-labels`: one `key=value` word each.
    labels: Vec<String>,
    /// An NVIDIA GPU VM size: `verify.sh` checks its nodes' allocatable `nvidia.com/gpu`.
    gpu: bool,
    /// The fewest nodes the pool may have (0 when it autoscales from zero).
    min_nodes: u32,
}

#[derive(Serialize)]
struct GpuPoolCtx {
    name: String,
    min_nodes: u32,
}

#[derive(Serialize)]
struct IdentityCtx {
    name: String,
    federated_credential: String,
    /// `system:serviceaccount:<ns>:<sa>`; no federated credential without a service account.
    subject: Option<String>,
}

#[derive(Serialize)]
struct StorageCtx {
    account: String,
    containers: Vec<String>,
    role: String,
}

#[derive(Serialize)]
struct WorkloadIdentityCtx {
    namespace: String,
    service_account: String,
    /// IDs the profile pins (checked against Azure) or `None` (queried and annotated).
    client_id: Option<String>,
    tenant_id: Option<String>,
    placeholder: &'static str,
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
}

#[derive(Serialize)]
struct FlavorCtx {
    name: String,
    /// Label selector of the flavor's nodes (`accelerator=nvidia`), `None` for an empty flavor.
    selector: Option<String>,
}

/// All `infra/` files of a profile: path → content.
pub fn infra_files(p: &Profile) -> Result<Vec<(String, String)>, Diagnostic> {
    let ctx = serde_json::to_value(context(p)).unwrap_or_default();
    let mut out = Vec::new();
    for (file, template) in [
        (FILE_UP, "infra/up.sh.j2"),
        (FILE_VERIFY, "infra/verify.sh.j2"),
        (FILE_DOWN, "infra/down.sh.j2"),
    ] {
        out.push((file.to_owned(), render::render_text(template, &ctx)?));
    }
    if !ctx["smoke"].is_null() {
        out.push((
            FILE_SMOKE.to_owned(),
            render::render_text("infra/smoke.sh.j2", &ctx)?,
        ));
    }
    let yaml_header = crate::yaml::HEADER;
    if let Some(k) = &p.operators.kueue {
        let values = yaml::to_yaml(&kueue_values(p, k)?)?;
        out.push((FILE_KUEUE_VALUES.into(), format!("{yaml_header}{values}")));
    }
    if p.operators.kuberay.is_some() {
        let values = yaml::to_yaml(&kuberay_values(p))?;
        out.push((FILE_KUBERAY_VALUES.into(), format!("{yaml_header}{values}")));
    }
    Ok(out)
}

fn context(p: &Profile) -> Context {
    let identity = p.azure.as_ref().and_then(|a| a.identity.as_ref());
    let workload_identity = match (&p.service_account, identity) {
        (Some(sa), Some(id)) if sa.workload_identity => Some(WorkloadIdentityCtx {
            namespace: p.namespace.to_string(),
            service_account: sa.name.to_string(),
            client_id: id.client_id.as_ref().map(ToString::to_string),
            tenant_id: id.tenant_id.as_ref().map(ToString::to_string),
            placeholder: IDENTITY_PLACEHOLDER,
        }),
        _ => None,
    };
    Context {
        azure: p.azure.as_ref().map(|a| azure(p, a)),
        kueue: p.operators.kueue.as_ref().map(kueue),
        kuberay: p.operators.kuberay.as_ref().map(kuberay),
        platform: platform(p),
        gpu_pools: p
            .azure
            .iter()
            .flat_map(|a| &a.node_pools)
            .map(pool)
            .filter(|n| n.gpu)
            .map(|n| GpuPoolCtx {
                name: n.name,
                min_nodes: n.min_nodes,
            })
            .collect(),
        workload_identity,
        smoke: super::smoke::smoke_job(p).map(|(_, job)| job),
    }
}

fn azure(p: &Profile, a: &crate::profile::Azure) -> AzureCtx {
    // The cluster is created with the first System pool (AKS makes the create-time pool a
    // System pool); a profile without one gets its first pool there (rule RK451 reports it).
    let system_index = a
        .node_pools
        .iter()
        .position(|n| n.mode == PoolMode::System)
        .unwrap_or(0);
    let pools: Vec<PoolCtx> = a.node_pools.iter().map(pool).collect();
    let scales_to_zero = pools.iter().any(|n| n.min_nodes == 0);
    let mut system_pool = None;
    let mut extra = Vec::new();
    for (i, pc) in pools.into_iter().enumerate() {
        if i == system_index {
            system_pool = Some(pc);
        } else {
            extra.push(pc);
        }
    }
    let uses_identity = a.identity.is_some();
    AzureCtx {
        subscription: a.subscription.as_ref().map(ToString::to_string),
        location: a.location.to_string(),
        resource_group: a.resource_group.to_string(),
        cluster: a.cluster.name.to_string(),
        kubernetes_version: a
            .cluster
            .kubernetes_version
            .as_ref()
            .map(ToString::to_string),
        // Workload identity needs both features; an identity in the profile turns them on.
        oidc_issuer: a.cluster.oidc_issuer || uses_identity,
        workload_identity: a.cluster.workload_identity || uses_identity,
        system_pool,
        pools: extra,
        identity: a.identity.as_ref().map(|id| IdentityCtx {
            name: id.name.to_string(),
            federated_credential: id.federated_credential.to_string(),
            subject: p
                .service_account
                .as_ref()
                .map(|sa| subject(p.namespace.as_str(), sa)),
        }),
        storage: a.storage.as_ref().map(|s| StorageCtx {
            account: s.account.to_string(),
            containers: s.containers.iter().map(ToString::to_string).collect(),
            role: s.role.to_string(),
        }),
        scales_to_zero,
    }
}

fn subject(namespace: &str, sa: &ServiceAccount) -> String {
    format!("system:serviceaccount:{namespace}:{}", sa.name)
}

fn pool(n: &NodePool) -> PoolCtx {
    let size = n.size();
    let mut taints: Vec<String> = Vec::new();
    if n.critical_addons_only {
        taints.push(CRITICAL_ADDONS_ONLY.into());
    }
    taints.extend(n.taints.iter().map(taint));
    PoolCtx {
        name: n.name.to_string(),
        mode: match n.mode {
            PoolMode::System => "System",
            PoolMode::User => "User",
        },
        vm_size: n.vm_size.to_string(),
        // Without a count, az starts a pool at its default, which it refuses when that lies
        // outside the autoscaler range: then the count is written (seed 004's 0–3 keeps az's
        // default, and its command line).
        count: n.count.or_else(|| {
            (size.autoscaled && size.initial != AZ_DEFAULT_NODE_COUNT).then_some(size.initial)
        }),
        min: n.autoscale.as_ref().map(|s| s.min),
        max: n.autoscale.as_ref().map(|s| s.max),
        taints: (!taints.is_empty()).then(|| taints.join(",")),
        labels: n.labels.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        gpu: catalogue::has_nvidia_gpus(n.vm_size.as_str()),
        min_nodes: size.min,
    }
}

/// The az CLI taint syntax `key=value:Effect` (it requires a value; rule RK450).
fn taint(t: &Taint) -> String {
    format!(
        "{}={}:{}",
        t.key,
        t.value.as_ref().map_or("", |v| v.as_str()),
        t.effect.as_str()
    )
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

fn kueue(k: &KueueOperator) -> KueueCtx {
    KueueCtx {
        chart: k.chart.to_string(),
        version: k.version.to_string(),
        namespace: k.namespace.to_string(),
        release: k.release.to_string(),
        deployment: kueue_deployment(k.release.as_str()),
    }
}

fn kuberay(k: &KubeRayOperator) -> KubeRayCtx {
    let is_url = k.chart.contains("://");
    KubeRayCtx {
        repo: (!is_url).then(|| k.repo.to_string()),
        chart: k.chart.to_string(),
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
    }
}

/// Helm values for Kueue: only what the profile decides. `managerConfig.controllerManagerConfigYaml`
/// replaces the chart's whole Configuration, so it is the pinned chart's own Configuration with
/// the profile's `integrations.frameworks` (everything else stays the chart's default); feature
/// gates when the profile sets any; where the operators run (`operators::placement`).
/// The same values are embedded in the Argo CD and Flux objects.
pub fn kueue_values(p: &Profile, k: &KueueOperator) -> Result<Value, Diagnostic> {
    let frameworks: Vec<&str> = k
        .frameworks
        .iter()
        .map(|f: &Framework| f.as_str())
        .collect();
    let mut config = operators::kueue_default_configuration();
    config["integrations"]["frameworks"] = json!(frameworks);
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
    place(&mut manager, p);
    if !manager.is_empty() {
        values["controllerManager"] = Value::Object(manager);
    }
    Ok(values)
}

/// Helm values for the KubeRay operator: only where it runs (everything else is the chart's
/// default, `batchScheduler.enabled: false` among them: Kueue admits Ray workloads through the
/// queue label and `suspend`).
pub fn kuberay_values(p: &Profile) -> Value {
    let mut values = Map::new();
    place(&mut values, p);
    Value::Object(values)
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
