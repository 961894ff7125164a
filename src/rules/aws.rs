//! AWS EKS: what eksctl would refuse, or what would leave the cluster without what the rest of
//! the profile relies on (a node group that never scales, GPUs the device plugin never
//! advertises). Name shapes are the schema's job; these rules look across fields.

use super::{Ctx, RuleInfo};
use crate::diagnostic::Severity::{Error, Warning};
use crate::provider::aws::{self, Aws};
use std::collections::BTreeMap;

pub(super) const GROUP_NAME_TWICE: RuleInfo = RuleInfo {
    code: "RK430",
    severity: Error,
    title: "two EKS node groups share a name",
};
pub(super) const GROUP_SIZE: RuleInfo = RuleInfo {
    code: "RK431",
    severity: Error,
    title: "an EKS node group gives neither `count` nor `autoscale` (its size would be eksctl's default, unknown to the profile)",
};
pub(super) const COUNT_OUTSIDE_RANGE: RuleInfo = RuleInfo {
    code: "RK432",
    severity: Error,
    title: "an EKS node group's autoscale min is larger than its max, or its `count` (desiredCapacity) lies outside the range",
};
pub(super) const NO_AUTOSCALER: RuleInfo = RuleInfo {
    code: "RK433",
    severity: Warning,
    title: "an autoscaled EKS node group without `aws.autoscaler`: EKS runs no node autoscaler, so the group stays at its starting size",
};
pub(super) const TAINT_BLOCKS_DEVICE_PLUGIN: RuleInfo = RuleInfo {
    code: "RK434",
    severity: Error,
    title: "a taint on an AmazonLinux2023 GPU node group that eksctl's NVIDIA device plugin does not tolerate: its nodes never advertise nvidia.com/gpu",
};
pub(super) const IDENTITY_WITHOUT_SERVICE_ACCOUNT: RuleInfo = RuleInfo {
    code: "RK435",
    severity: Warning,
    title: "aws.identity without a serviceAccount: the Pod Identity association has no service account to name",
};
pub(super) const KUBERNETES_TOO_OLD: RuleInfo = RuleInfo {
    code: "RK436",
    severity: Error,
    title: "aws.cluster.kubernetesVersion older than 1.29, which Kueue needs",
};

pub(super) const RULES: &[RuleInfo] = &[
    GROUP_NAME_TWICE,
    GROUP_SIZE,
    COUNT_OUTSIDE_RANGE,
    NO_AUTOSCALER,
    TAINT_BLOCKS_DEVICE_PLUGIN,
    IDENTITY_WITHOUT_SERVICE_ACCOUNT,
    KUBERNETES_TOO_OLD,
];

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(a) = &p.aws else { return };
    section(ctx, a);
}

fn section(ctx: &mut Ctx<'_>, a: &Aws) {
    let p = ctx.profile;
    if a.identity.is_some() && p.service_account.is_none() {
        ctx.report(
            &IDENTITY_WITHOUT_SERVICE_ACCOUNT,
            "/aws/identity",
            "`aws.identity` gives the Ray service account AWS permissions, but the profile has no `serviceAccount`: eksctl would have nothing to associate the role with".into(),
            Some("add `serviceAccount: {name: ...}` (the Ray pods run as it), or remove `aws.identity`".into()),
        );
    }
    if let Some(v) = &a.cluster.kubernetes_version
        && p.operators.kueue.is_some()
        && super::kubernetes_minor(v).is_some_and(|m| m < 29)
    {
        ctx.report(
            &KUBERNETES_TOO_OLD,
            "/aws/cluster/kubernetesVersion",
            format!("Kueue needs Kubernetes 1.29 or newer; the cluster runs {v}"),
            Some("use a current EKS version, e.g. \"1.34\"".into()),
        );
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in a.node_pools.iter().enumerate() {
        let base = format!("/aws/nodePools/{i}");
        if let Some(first) = seen.insert(g.name.as_str(), i) {
            ctx.report(
                &GROUP_NAME_TWICE,
                &format!("{base}/name"),
                format!(
                    "node group `{}` is defined twice (first at nodePools[{first}])",
                    g.name
                ),
                Some("node group names are unique within a cluster; rename or remove one".into()),
            );
        }
        if let Some(r) = &g.autoscale
            && r.min > r.max
        {
            ctx.report(
                &COUNT_OUTSIDE_RANGE,
                &format!("{base}/autoscale/min"),
                format!(
                    "node group `{}` autoscales from {} to {}: minSize above maxSize, which eksctl refuses",
                    g.name, r.min, r.max
                ),
                Some("swap them, or lower `min`".into()),
            );
        }
        match (g.count, &g.autoscale) {
            (None, None) => ctx.report(
                &GROUP_SIZE,
                &format!("{base}/name"),
                format!("node group `{}` gives neither `count` nor `autoscale`", g.name),
                Some("add `count: N`, or `autoscale: {min: A, max: B}`".into()),
            ),
            (Some(c), Some(r)) if r.min <= r.max && (c < r.min || c > r.max) => ctx.report(
                &COUNT_OUTSIDE_RANGE,
                &format!("{base}/count"),
                format!(
                    "node group `{}` starts with {c} node(s), outside its autoscale range {}–{}; eksctl refuses a desiredCapacity outside minSize..maxSize",
                    g.name, r.min, r.max
                ),
                Some(format!("use a `count` from {} to {}", r.min, r.max)),
            ),
            _ => {}
        }
        if let Some(r) = &g.autoscale
            && r.min < r.max
            && a.autoscaler.is_none()
        {
            ctx.report(
                &NO_AUTOSCALER,
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
        for t in aws::taints_blocking_device_plugin(g) {
            let Some(j) = g.taints.iter().position(|own| *own == t) else {
                continue;
            };
            ctx.report(
                &TAINT_BLOCKS_DEVICE_PLUGIN,
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
