//! What eksctl would refuse, or what would leave an EKS cluster without what the rest of the
//! profile relies on (a node group that never scales, GPUs the device plugin never
//! advertises), beyond the checks every cloud shares.

use super::{
    AUTOSCALER_CHARTS, AUTOSCALER_RELEASES, Aws, autoscaler_app_version, autoscaler_release,
    serves_provisioning_v1, taints_blocking_device_plugin,
};
use crate::base::codes;
use crate::base::diagnostic::Findings;
use crate::base::pointer::ptr;
use crate::profile::Profile;

/// RK472: Kueue v0.19.2 creates `autoscaling.x-k8s.io/v1` ProvisioningRequests (its
/// `cmd/kueue/main.go` imports that version) and starts the check's controller only if the CRD
/// exists when it starts (`provisioning.ServerSupportsProvisioningRequest`). On EKS nothing
/// serves them but the Cluster Autoscaler raykueue installs (`aws.autoscaler`), with
/// `--enable-provisioning-requests` (kubernetes/autoscaler@cluster-autoscaler-1.35.0
/// `cluster-autoscaler/FAQ.md`), from a chart whose CA serves v1 (`AUTOSCALER_CHARTS`).
fn provisioning(a: &Aws, p: &Profile, out: &mut Findings) {
    let used = p.admission_checks.iter().position(|c| {
        p.queues.iter().flat_map(|q| &q.cluster_queues).any(|cq| {
            cq.admission_checks
                .iter()
                .any(|r| r.name() == c.name.as_str())
        })
    });
    let Some(i) = used else { return };
    let name = &p.admission_checks[i].name;
    let Some(ca) = &a.autoscaler else {
        out.report(
            &codes::PROVISIONING_NEEDS_AUTOSCALER,
            &ptr!["admissionChecks", i, "provisioningRequest"],
            format!(
                "ProvisioningRequest check `{name}` needs a Cluster Autoscaler that serves ProvisioningRequests, and EKS runs none: the check never becomes Ready"
            ),
            Some(format!("add `autoscaler: {{}}` under `aws`: {ADD_AUTOSCALER}, with --enable-provisioning-requests and the ProvisioningRequest CRD")),
        );
        return;
    };
    let Some(install) = a.autoscaler_install() else {
        return; // RK438
    };
    if install.ca.is_some_and(serves_provisioning_v1) {
        return;
    }
    let (min, app) = AUTOSCALER_CHARTS
        .iter()
        .rev()
        .find(|(_, app)| serves_provisioning_v1(app))
        .copied()
        .unwrap_or(AUTOSCALER_CHARTS[0]);
    let (at, what, hint) = match &ca.version {
        Some(pinned) => (
            &ptr!["aws", "autoscaler", "version"],
            format!("Cluster Autoscaler chart {pinned} ships a CA older than 1.31.1"),
            format!(
                "use chart {}.{}.{} (CA {app}) or later, or drop `version` so that raykueue picks the release for the cluster's Kubernetes minor",
                min.0, min.1, min.2
            ),
        ),
        None => (
            &ptr!["aws", "cluster", "kubernetesVersion"],
            format!(
                "the Cluster Autoscaler of the cluster's Kubernetes minor is CA {}, older than 1.31.1",
                install.ca.unwrap_or("?")
            ),
            "run Kubernetes 1.31 or newer on the cluster".to_owned(),
        ),
    };
    out.report(
        &codes::PROVISIONING_NEEDS_AUTOSCALER,
        at,
        format!(
            "{what}, which does not serve the autoscaling.x-k8s.io/v1 ProvisioningRequests Kueue 0.19 creates: check `{name}` never becomes Ready"
        ),
        Some(hint),
    );
}

/// What the hints say `autoscaler: {}` does.
const ADD_AUTOSCALER: &str =
    "up.sh installs the Cluster Autoscaler release for the cluster's Kubernetes minor";

/// RK437, RK438: the Cluster Autoscaler simulates the scheduler of its own Kubernetes minor, and
/// its README asks for the newest release of the cluster's minor (`AUTOSCALER_RELEASES`). A
/// pinned chart of another minor is a warning; no pin and no known minor leaves nothing to pick.
fn autoscaler_release_matches(a: &Aws, out: &mut Findings) {
    let Some(ca) = &a.autoscaler else { return };
    let kubernetes = a.cluster.kubernetes_version.as_deref();
    let release = kubernetes.and_then(autoscaler_release);
    let known = || {
        let first = AUTOSCALER_RELEASES[0].0;
        let last = AUTOSCALER_RELEASES[AUTOSCALER_RELEASES.len() - 1].0;
        format!("1.{first}–1.{last}")
    };
    match (&ca.version, release) {
        (None, None) => out.report(
            &codes::AUTOSCALER_RELEASE_UNKNOWN,
            &ptr!["aws", "autoscaler"],
            match kubernetes {
                None => "`aws.autoscaler` pins no chart `version`, and the cluster names no `kubernetesVersion`: raykueue picks the Cluster Autoscaler for the cluster's Kubernetes minor, and eksctl's default minor changes with eksctl".to_owned(),
                Some(v) => format!(
                    "raykueue knows no Cluster Autoscaler release for Kubernetes {v} (it knows {})",
                    known()
                ),
            },
            Some("set `kubernetesVersion` under `aws.cluster` (e.g. \"1.35\"), or pin the chart: `autoscaler: {version: \"9.59.0\"}`".into()),
        ),
        (Some(pinned), Some((minor, chart, want))) => {
            let Some(app) = autoscaler_app_version(pinned) else {
                return;
            };
            if app.split('.').nth(1).and_then(|m| m.parse::<u32>().ok()) == Some(minor) {
                return;
            }
            out.report(
                &codes::AUTOSCALER_OTHER_MINOR,
                &ptr!["aws", "autoscaler", "version"],
                format!(
                    "Cluster Autoscaler chart {pinned} runs CA {app}, while the cluster runs Kubernetes 1.{minor}: the autoscaler simulates the scheduler of its own minor, and its README asks for the newest release of the cluster's"
                ),
                Some(format!(
                    "drop `version`: raykueue then installs chart {chart} running CA v{want}, the newest release for Kubernetes 1.{minor}"
                )),
            );
        }
        _ => {}
    }
}

pub(super) fn run(a: &Aws, p: &Profile, out: &mut Findings) {
    provisioning(a, p, out);
    autoscaler_release_matches(a, out);
    for (i, g) in a.node_pools.iter().enumerate() {
        let base = ptr!["aws", "nodePools", i];
        if let Some(r) = &g.autoscale
            && r.min < r.max
            && a.autoscaler.is_none()
        {
            out.report(
                &codes::NO_AUTOSCALER,
                &base.at("autoscale"),
                format!(
                    "node group `{}` autoscales {}–{}, but EKS runs no node autoscaler: without one it stays at {} node(s){}",
                    g.name,
                    r.min,
                    r.max,
                    g.count.unwrap_or(r.min),
                    if g.count.unwrap_or(r.min) == 0 { " and never gets a node" } else { "" }
                ),
                Some(format!("add `autoscaler: {{}}` under `aws`: {ADD_AUTOSCALER}, from its Helm chart")),
            );
        }
        for t in taints_blocking_device_plugin(g) {
            let Some(j) = g.taints.iter().position(|own| *own == t) else {
                continue;
            };
            out.report(
                &codes::TAINT_BLOCKS_DEVICE_PLUGIN,
                &ptr!(base; "taints", j),
                format!(
                    "taint `{}` on GPU node group `{}` keeps eksctl's NVIDIA device plugin off its nodes (the DaemonSet tolerates only nvidia.com/gpu:NoSchedule), so they never advertise nvidia.com/gpu and GPU pods never schedule",
                    t.key, g.name
                ),
                Some("taint GPU nodes with `{key: nvidia.com/gpu, value: present, effect: NoSchedule}` (raykueue adds it; pods requesting GPUs tolerate it), or use `amiFamily: Bottlerocket`, whose device plugin runs on the host".into()),
            );
        }
    }
}
