//! The operators as the cluster will run them: how wide Kueue's webhooks reach (RK147, RK148),
//! and what advertises `nvidia.com/gpu` on GPU nodes (RK460, RK461).

use super::{Ctx, RuleInfo};
use crate::diagnostic::Severity::{Error, Warning};
use crate::profile::{Framework, NvidiaInstall, Profile};
use crate::provider::Provider;
use std::collections::BTreeMap;

pub(super) const POD_WEBHOOK_EVERYWHERE: RuleInfo = RuleInfo {
    code: "RK147",
    severity: Warning,
    title: "a pod-based Kueue integration without managedJobsNamespaceSelector, on one Kueue replica: while Kueue is down no pod starts in any namespace",
};
pub(super) const MANAGED_NAMESPACES: RuleInfo = RuleInfo {
    code: "RK148",
    severity: Error,
    title: "managedJobsNamespaceSelector selects kube-system or Kueue's namespace (Kueue refuses to start), or misses a namespace with a LocalQueue (its jobs are never managed)",
};
pub(super) const NO_DEVICE_PLUGIN: RuleInfo = RuleInfo {
    code: "RK460",
    severity: Warning,
    title: "operators.nvidia.install is none on AKS GPU pools: AKS installs the driver only, so nothing advertises nvidia.com/gpu",
};
pub(super) const SECOND_DEVICE_PLUGIN: RuleInfo = RuleInfo {
    code: "RK461",
    severity: Error,
    title: "operators.nvidia installs a device plugin where the cloud or the node image already runs one, or the GPU Operator off AKS",
};

pub(super) const RULES: &[RuleInfo] = &[
    POD_WEBHOOK_EVERYWHERE,
    MANAGED_NAMESPACES,
    NO_DEVICE_PLUGIN,
    SECOND_DEVICE_PLUGIN,
];

/// The integrations whose webhooks the chart sets to `failurePolicy: Fail` only when they are
/// enabled, and which act on pods, Deployments or StatefulSets in every namespace the webhook
/// selects (kueue@v0.19.2 `charts/kueue/templates/webhook/manifests.yaml`, `mpod.kb.io`,
/// `vpod.kb.io` and the deployment and statefulset entries).
const POD_BASED: [Framework; 3] = [
    Framework::Pod,
    Framework::Deployment,
    Framework::StatefulSet,
];

pub(super) fn check(ctx: &mut Ctx<'_>) {
    webhook_scope(ctx);
    device_plugin(ctx);
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
                &POD_WEBHOOK_EVERYWHERE,
                &format!("/operators/kueue/frameworks/{at}"),
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
    let pointer = "/operators/kueue/configuration/managedJobsNamespaceSelector";
    // kueue@v0.19.2 pkg/config/validation.go `validateNamespaceSelectorForPodIntegration`: with
    // the pod integration on, the selector must not match a namespace labelled only with the
    // name of kube-system or of Kueue's own namespace.
    if !pod_based.is_empty() && pod_based.contains(&"pod") {
        for ns in ["kube-system", k.namespace.as_str()] {
            if selector.matches(&name_label(ns)) {
                ctx.report(
                    &MANAGED_NAMESPACES,
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
                &MANAGED_NAMESPACES,
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

/// RK460 and RK461: who advertises `nvidia.com/gpu`.
fn device_plugin(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(provider) = p.provider() else { return };
    let groups = provider.node_groups();
    let gpu_groups: Vec<_> = groups.iter().filter(|g| g.gpu).collect();
    let Some(n) = &p.operators.nvidia else { return };
    let pointer = "/operators/nvidia/install";
    match (n.install, provider) {
        (NvidiaInstall::None, Provider::Azure(_)) if !gpu_groups.is_empty() => ctx.report(
            &NO_DEVICE_PLUGIN,
            pointer,
            format!(
                "AKS installs the NVIDIA driver on GPU pool `{}`, not the device plugin: unless the node image brings one, its nodes advertise no nvidia.com/gpu and GPU pods stay Pending{}",
                gpu_groups[0].name,
                if p.operators.kueue.is_some() { " while Kueue holds their quota" } else { "" }
            ),
            Some("install: devicePlugin (NVIDIA's chart, the upstream Azure example's choice) or install: gpuOperator".into()),
        ),
        (NvidiaInstall::None, _) => {}
        (install, Provider::Gcp(_) | Provider::Alibaba(_)) => {
            let (service, who) = if matches!(provider, Provider::Gcp(_)) {
                ("GKE", "its managed nvidia-gpu-device-plugin DaemonSet on every pool with an accelerator")
            } else {
                ("ACK", "its ack-nvidia-device-plugin component on every GPU node, installed with the cluster")
            };
            ctx.report(
                &SECOND_DEVICE_PLUGIN,
                pointer,
                format!(
                    "{service} already runs a device plugin ({who}); {} would be a second one advertising the same GPUs",
                    what(install)
                ),
                Some("remove operators.nvidia (or set install: none): the cloud's plugin tolerates its GPU pools".into()),
            );
        }
        (NvidiaInstall::GpuOperator, Provider::Aws(_)) => ctx.report(
            &SECOND_DEVICE_PLUGIN,
            pointer,
            "raykueue installs the NVIDIA GPU Operator on AKS only (over the driver and container toolkit of AKS's node image); on EKS, eksctl's device plugin or NVIDIA's chart serve the GPU AMIs".into(),
            Some("install: devicePlugin, or none to keep eksctl's plugin".into()),
        ),
        (NvidiaInstall::DevicePlugin, Provider::Aws(a)) => {
            // Bottlerocket runs its own device plugin (eksctl-io/eksctl@v0.230.0
            // `pkg/eks/tasks.go`: only AmazonLinux node groups get eksctl's).
            if let Some(g) = a
                .node_pools
                .iter()
                .find(|g| g.ami_family == crate::provider::aws::AmiFamily::Bottlerocket && gpu_groups.iter().any(|x| x.name == g.name.as_str()))
            {
                ctx.report(
                    &SECOND_DEVICE_PLUGIN,
                    pointer,
                    format!(
                        "GPU node group `{}` runs Bottlerocket, which starts its own NVIDIA device plugin: the chart would be a second one on its nodes",
                        g.name
                    ),
                    Some("use amiFamily: AmazonLinux2023 for the group, or install: none".into()),
                );
            }
        }
        _ => {}
    }
}

fn what(install: NvidiaInstall) -> &'static str {
    match install {
        NvidiaInstall::GpuOperator => "the NVIDIA GPU Operator",
        _ => "NVIDIA's device plugin chart",
    }
}
