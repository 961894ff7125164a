//! What eksctl would refuse, or what would leave an EKS cluster without what the rest of the
//! profile relies on (a node group that never scales, GPUs the device plugin never
//! advertises), beyond the checks every cloud shares.

use super::{AUTOSCALER_CHARTS, Aws, autoscaler_app_version, taints_blocking_device_plugin};
use crate::base::codes;
use crate::base::diagnostic::Findings;
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
    match &a.autoscaler {
        None => out.report(
            &codes::PROVISIONING_NEEDS_AUTOSCALER,
            &format!("/admissionChecks/{i}/provisioningRequest"),
            format!(
                "ProvisioningRequest check `{name}` needs a Cluster Autoscaler that serves ProvisioningRequests, and EKS runs none: the check never becomes Ready"
            ),
            Some("add `autoscaler: {version: \"9.59.0\"}` under `aws`: up.sh installs the Cluster Autoscaler with --enable-provisioning-requests and the ProvisioningRequest CRD".into()),
        ),
        Some(ca) if autoscaler_app_version(&ca.version).is_none() => {
            let (min, app) = AUTOSCALER_CHARTS[AUTOSCALER_CHARTS.len() - 1];
            out.report(
                &codes::PROVISIONING_NEEDS_AUTOSCALER,
                "/aws/autoscaler/version",
                format!(
                    "Cluster Autoscaler chart {} ships a CA older than 1.31.1, which does not serve the autoscaling.x-k8s.io/v1 ProvisioningRequests Kueue 0.19 creates: check `{name}` never becomes Ready",
                    ca.version
                ),
                Some(format!(
                    "use chart {}.{}.{} (CA {app}) or later; 9.59.0 ships CA 1.35.0",
                    min.0, min.1, min.2
                )),
            );
        }
        Some(_) => {}
    }
}

pub(super) fn run(a: &Aws, p: &Profile, out: &mut Findings) {
    provisioning(a, p, out);
    for (i, g) in a.node_pools.iter().enumerate() {
        let base = format!("/aws/nodePools/{i}");
        if let Some(r) = &g.autoscale
            && r.min < r.max
            && a.autoscaler.is_none()
        {
            out.report(
                &codes::NO_AUTOSCALER,
                &format!("{base}/autoscale"),
                format!(
                    "node group `{}` autoscales {}–{}, but EKS runs no node autoscaler: without one it stays at {} node(s){}",
                    g.name,
                    r.min,
                    r.max,
                    g.count.unwrap_or(r.min),
                    if g.count.unwrap_or(r.min) == 0 { " and never gets a node" } else { "" }
                ),
                Some("add `autoscaler: {version: \"9.59.0\"}` under `aws` (the Cluster Autoscaler Helm chart)".into()),
            );
        }
        for t in taints_blocking_device_plugin(g) {
            let Some(j) = g.taints.iter().position(|own| *own == t) else {
                continue;
            };
            out.report(
                &codes::TAINT_BLOCKS_DEVICE_PLUGIN,
                &format!("{base}/taints/{j}"),
                format!(
                    "taint `{}` on GPU node group `{}` keeps eksctl's NVIDIA device plugin off its nodes (the DaemonSet tolerates only nvidia.com/gpu:NoSchedule), so they never advertise nvidia.com/gpu and GPU pods never schedule",
                    t.key, g.name
                ),
                Some("taint GPU nodes with `{key: nvidia.com/gpu, value: present, effect: NoSchedule}` (raykueue adds it; pods requesting GPUs tolerate it), or use `amiFamily: Bottlerocket`, whose device plugin runs on the host".into()),
            );
        }
    }
}
