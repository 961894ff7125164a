//! The operators as the cluster will run them: where their charts come from (RK153), how wide
//! Kueue's webhooks reach (RK147, RK148), whether Kueue accepts its Configuration (RK149), and
//! what advertises `nvidia.com/gpu` on GPU nodes (RK460, RK461), and where the AKS AI
//! runtime's GPU monitoring runs (RK476).

use super::Ctx;
use crate::base::codes;
use crate::base::pointer::ptr;
use crate::profile::{
    ChartSource, Framework, KueueConfiguration, NvidiaInstall, PreemptionStrategy, Profile,
    QuotaCheckStrategy,
};
use std::collections::BTreeMap;

/// The integrations whose webhooks the chart sets to `failurePolicy: Fail` only when they are
/// enabled, and which act on pods, Deployments or StatefulSets in every namespace the webhook
/// selects (kueue@v0.19.2 `charts/kueue/templates/webhook/manifests.yaml`, `mpod.kb.io`,
/// `vpod.kb.io` and the deployment and statefulset entries).
const POD_BASED: [Framework; 3] = [
    Framework::Pod,
    Framework::Deployment,
    Framework::StatefulSet,
];

pub(super) fn run(ctx: &mut Ctx<'_>) {
    chart_source(ctx);
    webhook_scope(ctx);
    if let Some(c) = ctx
        .profile
        .operators
        .kueue
        .as_ref()
        .and_then(|k| k.configuration.as_ref())
    {
        configuration(ctx, c);
    }
    device_plugin(ctx);
    gpu_monitoring(ctx);
}

/// RK476: `gpuMetrics: aksGpuMonitoring` is an AKS chart (the AKS AI runtime's registry; it
/// reads the DCGM exporter AKS runs on its GPU nodes).
fn gpu_monitoring(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let chosen = p
        .monitoring
        .as_ref()
        .and_then(|m| m.gpu_metrics)
        .is_some_and(|g| g == crate::profile::GpuMetrics::AksGpuMonitoring);
    let Some(cloud) = p.cloud() else { return };
    if chosen && cloud.section() != "azure" {
        ctx.report(
            &codes::GPU_MONITORING_OFF_AKS,
            &ptr!["monitoring", "gpuMetrics"],
            format!(
                "`aksGpuMonitoring` is the AKS AI runtime's gpu-monitoring chart, which runs on AKS only; this profile's cluster is on {}",
                cloud.words().service
            ),
            Some("gpuMetrics: dcgmExporter (NVIDIA's DCGM exporter, on any cloud)".into()),
        );
    }
}

/// RK153: with `source: aksAiRuntime`, each chart is the AKS AI runtime's at the version it
/// publishes (the one raykueue holds the values file's keys to), from its registry.
fn chart_source(ctx: &mut Ctx<'_>) {
    use crate::facts::operators::{
        AKS_AI_RUNTIME_KUBERAY, AKS_AI_RUNTIME_KUEUE, AKS_AI_RUNTIME_REGISTRY,
    };
    let ops = &ctx.profile.operators;
    if ops.source != ChartSource::AksAiRuntime {
        return;
    }
    let mut found = Vec::new();
    if let Some(k) = &ops.kueue {
        found.push((
            "kueue",
            "Kueue",
            k.version.as_str(),
            AKS_AI_RUNTIME_KUEUE,
            "chart",
            k.chart.as_deref(),
        ));
    }
    if let Some(k) = &ops.kuberay {
        found.push((
            "kuberay",
            "KubeRay operator",
            k.version.as_str(),
            AKS_AI_RUNTIME_KUBERAY,
            "repo",
            k.repo.as_deref(),
        ));
    }
    for (key, what, version, published, field, reference) in found {
        if version != published {
            ctx.report(
                &codes::CHART_SOURCE,
                &ptr!["operators", key, "version"],
                format!(
                    "the AKS AI runtime publishes the {what} chart {published}, the version raykueue holds the values file's keys to; at {version} they are unchecked"
                ),
                Some(format!("set operators.{key}.version to {published}, or leave operators.source for upstream's charts")),
            );
        }
        if let Some(reference) = reference.filter(|r| !r.starts_with(AKS_AI_RUNTIME_REGISTRY)) {
            ctx.report(
                &codes::CHART_SOURCE,
                &ptr!["operators", key, field],
                format!(
                    "operators.source is aksAiRuntime, but operators.{key}.{field} names `{reference}`: the chart comes from there, not from the AKS AI runtime"
                ),
                Some(format!("remove operators.{key}.{field} (or set it to null over a parent profile) to take {AKS_AI_RUNTIME_REGISTRY}")),
            );
        }
    }
}

/// RK149: what kueue@v0.19.2 `pkg/config/validation.go` refuses beyond the schema
/// (`validateFairSharing`, `validateAdmissionFairSharing`, `validateResourceTransformations`,
/// `validateQuotaCheckStrategy`, the last under the `QuotaCheckStrategy` gate, beta and on in
/// 0.19). A refused Configuration stops the controller at start-up.
fn configuration(ctx: &mut Ctx<'_>, c: &KueueConfiguration) {
    use PreemptionStrategy::{
        LessThanInitialShare as Initial, LessThanOrEqualToFinalShare as Final,
    };
    let at = ptr!["operators", "kueue", "configuration"];
    if let Some(fs) = &c.fair_sharing {
        let s = fs.preemption_strategies.as_slice();
        if !matches!(s, [Final | Initial] | [Final, Initial]) {
            let given: Vec<&str> = s.iter().map(|s| s.as_str()).collect();
            ctx.report(
                &codes::KUEUE_CONFIGURATION,
                &ptr!(at; "fairSharing", "preemptionStrategies"),
                format!(
                    "Kueue accepts three lists of fair-sharing preemption strategies, not [{}]",
                    given.join(", ")
                ),
                Some(
                    "write [LessThanOrEqualToFinalShare], [LessThanInitialShare], or [LessThanOrEqualToFinalShare, LessThanInitialShare] (tried in that order)"
                        .into(),
                ),
            );
        }
    }
    if let Some(afs) = &c.admission_fair_sharing
        && afs.usage_sampling_interval.seconds() <= 0.0
    {
        ctx.report(
            &codes::KUEUE_CONFIGURATION,
            &ptr!(at; "admissionFairSharing", "usageSamplingInterval"),
            "Kueue refuses a usage sampling interval of zero".into(),
            Some("leave it out for Kueue's 5m, or give a duration such as 1m".into()),
        );
    }
    let Some(r) = &c.resources else { return };
    let mut seen = std::collections::BTreeSet::new();
    for (i, t) in r.transformations.iter().enumerate() {
        if !seen.insert(t.input.as_str()) {
            ctx.report(
                &codes::KUEUE_CONFIGURATION,
                &ptr!(at; "resources", "transformations", i, "input"),
                format!(
                    "a second transformation of `{}`: Kueue allows one per input resource",
                    t.input
                ),
                Some("merge the two into one entry".into()),
            );
        }
    }
    if r.quota_check_strategy == Some(QuotaCheckStrategy::IgnoreUndeclared)
        && !r.exclude_resource_prefixes.is_empty()
    {
        ctx.report(
            &codes::KUEUE_CONFIGURATION,
            &ptr!(at; "resources", "excludeResourcePrefixes"),
            "Kueue refuses excludeResourcePrefixes with quotaCheckStrategy IgnoreUndeclared".into(),
            Some("drop excludeResourcePrefixes (IgnoreUndeclared already skips resources no ClusterQueue covers), or use BlockUndeclared".into()),
        );
    }
}

/// RK147 and RK148.
fn webhook_scope(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(k) = &p.operators.kueue else { return };
    let selector = k
        .configuration
        .as_ref()
        .and_then(|c| c.managed_jobs_namespace_selector.as_ref());
    let pod_based: Vec<&str> = k
        .frameworks
        .iter()
        .filter(|f| POD_BASED.contains(f))
        .map(|f| f.as_str())
        .collect();
    let Some(selector) = selector else {
        if let Some(first) = pod_based.first()
            && k.replicas < 2
        {
            let at = k
                .frameworks
                .iter()
                .position(|f| f.as_str() == *first)
                .unwrap_or(0);
            let namespaces = managed_namespaces(p)
                .into_keys()
                .collect::<Vec<_>>()
                .join(", ");
            ctx.report(
                &codes::POD_WEBHOOK_EVERYWHERE,
                &ptr!["operators", "kueue", "frameworks", at],
                format!(
                    "with `{}` enabled, Kueue's {} webhook has failurePolicy Fail in every namespace but kube-system and `{}`: while its one replica is down (an upgrade, a drained node), no pod is created anywhere — Argo CD, Flux, KubeRay and Ray included",
                    pod_based.join("`, `"),
                    if pod_based.contains(&"pod") { "pod" } else { pod_based[0] },
                    k.namespace
                ),
                Some(format!(
                    "confine Kueue to the namespaces with LocalQueues: operators.kueue.configuration.managedJobsNamespaceSelector: {{matchExpressions: [{{key: kubernetes.io/metadata.name, operator: In, values: [{namespaces}]}}]}} (the chart makes it the webhooks' namespaceSelector); or run operators.kueue.replicas: 2, which also enables the chart's PodDisruptionBudget"
                )),
            );
        }
        return;
    };
    let pointer = &ptr![
        "operators",
        "kueue",
        "configuration",
        "managedJobsNamespaceSelector"
    ];
    // kueue@v0.19.2 pkg/config/validation.go `validateNamespaceSelectorForPodIntegration`: with
    // the pod integration on, the selector must not match a namespace labelled only with the
    // name of kube-system or of Kueue's own namespace.
    if !pod_based.is_empty() && pod_based.contains(&"pod") {
        for ns in ["kube-system", k.namespace.as_str()] {
            if selector.matches(&name_label(ns)) {
                ctx.report(
                    &codes::MANAGED_NAMESPACES,
                    pointer,
                    format!(
                        "managedJobsNamespaceSelector selects namespace `{ns}`: with the pod integration on, Kueue refuses this configuration and its controller does not start"
                    ),
                    Some(
                        "select only the namespaces of your workloads, e.g. matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [...]}]"
                            .into(),
                    ),
                );
            }
        }
    }
    for (ns, labels) in managed_namespaces(p) {
        if !selector.matches(&labels) {
            ctx.report(
                &codes::MANAGED_NAMESPACES,
                pointer,
                format!(
                    "managedJobsNamespaceSelector does not select namespace `{ns}`, where the profile has a LocalQueue: Kueue's webhooks skip it, so its jobs start unsuspended and outside every quota"
                ),
                Some(format!(
                    "add `{ns}` to the selector (raykueue writes the selector's matchLabels onto the namespaces it creates; label others yourself)"
                )),
            );
        }
    }
}

/// The namespaces the profile's LocalQueues (and workloads) live in, with the labels they will
/// carry: the API server's name label, plus the selector's `matchLabels`, which raykueue writes
/// onto the namespace it creates and a user puts on the others.
fn managed_namespaces(p: &Profile) -> BTreeMap<String, BTreeMap<String, String>> {
    let extra: BTreeMap<String, String> = p
        .managed_jobs_selector()
        .map(|s| {
            s.match_labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut out = BTreeMap::new();
    let queues = p.queues.iter().flat_map(|q| &q.local_queues);
    for ns in std::iter::once(p.namespace.as_str()).chain(queues.map(|lq| lq.namespace_in(p))) {
        let mut labels = name_label(ns);
        labels.extend(extra.clone());
        out.insert(ns.to_owned(), labels);
    }
    out
}

/// The label the API server puts on every namespace (`kubernetes.io/metadata.name`).
fn name_label(ns: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("kubernetes.io/metadata.name".to_owned(), ns.to_owned())])
}

/// RK460 and RK461: who advertises `nvidia.com/gpu` (the cloud's answer, `Cloud::device_plugin`
/// and `Cloud::refuses`).
fn device_plugin(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(cloud) = p.cloud() else { return };
    let Some(n) = &p.operators.nvidia else { return };
    let pointer = &ptr!["operators", "nvidia", "install"];
    if n.install == NvidiaInstall::None && cloud.device_plugin().is_none() {
        let groups = cloud.node_groups();
        if let Some(gpu) = groups.iter().find(|g| g.gpu) {
            ctx.report(
                &codes::NO_DEVICE_PLUGIN,
                pointer,
                format!(
                    "{} installs the NVIDIA driver on GPU {} `{}`, not the device plugin: unless the node image brings one, its nodes advertise no nvidia.com/gpu and GPU pods stay Pending{}",
                    cloud.words().service,
                    cloud.words().pool_short,
                    gpu.name,
                    if p.operators.kueue.is_some() { " while Kueue holds their quota" } else { "" }
                ),
                Some("install: devicePlugin (NVIDIA's chart, the upstream Azure example's choice) or install: gpuOperator".into()),
            );
        }
    }
    if let Some(why) = cloud.refuses(n.install) {
        ctx.report(
            &codes::SECOND_DEVICE_PLUGIN,
            pointer,
            why,
            Some("remove operators.nvidia (or set install: none): the cloud's plugin tolerates its GPU pools".into()),
        );
    }
}
