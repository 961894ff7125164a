//! What eksctl would refuse, or what would leave an EKS cluster without what the rest of the
//! profile relies on (a node group that never scales, GPUs the device plugin never
//! advertises), beyond the checks every cloud shares.

use super::{Aws, taints_blocking_device_plugin};
use crate::base::codes;
use crate::base::diagnostic::Findings;
use crate::profile::Profile;

pub(super) fn run(a: &Aws, _p: &Profile, out: &mut Findings) {
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
