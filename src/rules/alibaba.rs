//! Alibaba Cloud ACK: what the ACK and VPC APIs would refuse, or what would leave the cluster
//! without what the rest of the profile relies on. Name and CIDR shapes are the schema's job;
//! these rules look across fields.

use super::{Ctx, RuleInfo};
use crate::diagnostic::Severity::{Error, Warning};
use crate::provider::alibaba::{Alibaba, Ipv4Cidr};
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

pub(super) const POOL_NAME_TWICE: RuleInfo = RuleInfo {
    code: "RK440",
    severity: Error,
    title: "two ACK node pools share a name",
};
pub(super) const POOL_SIZE: RuleInfo = RuleInfo {
    code: "RK441",
    severity: Error,
    title: "an ACK node pool gives neither `count` nor `autoscale`",
};
pub(super) const COUNT_WITH_AUTOSCALE: RuleInfo = RuleInfo {
    code: "RK442",
    severity: Warning,
    title: "an ACK node pool gives both `count` and `autoscale`: with auto scaling, ACK sizes the pool and `count` is not sent",
};
pub(super) const IDENTITY_WITHOUT_SERVICE_ACCOUNT: RuleInfo = RuleInfo {
    code: "RK443",
    severity: Warning,
    title: "alibaba.identity without a serviceAccount: no service account carries the RAM role",
};
pub(super) const VSWITCH_OUTSIDE_VPC: RuleInfo = RuleInfo {
    code: "RK444",
    severity: Error,
    title: "the vSwitch CIDR is not inside the VPC CIDR",
};
pub(super) const CIDR_OVERLAP: RuleInfo = RuleInfo {
    code: "RK445",
    severity: Error,
    title: "the cluster's pod or service CIDR overlaps the VPC or the other",
};
pub(super) const KUBERNETES_TOO_OLD: RuleInfo = RuleInfo {
    code: "RK446",
    severity: Error,
    title: "alibaba.cluster.kubernetesVersion older than 1.29, which Kueue needs",
};

pub(super) const MIN_OVER_MAX: RuleInfo = RuleInfo {
    code: "RK447",
    severity: Error,
    title: "an ACK node pool's autoscale min is larger than its max",
};

pub(super) const RULES: &[RuleInfo] = &[
    POOL_NAME_TWICE,
    POOL_SIZE,
    COUNT_WITH_AUTOSCALE,
    IDENTITY_WITHOUT_SERVICE_ACCOUNT,
    VSWITCH_OUTSIDE_VPC,
    CIDR_OVERLAP,
    KUBERNETES_TOO_OLD,
    MIN_OVER_MAX,
];

/// First and last address of a CIDR block (the schema has checked its shape).
fn range(cidr: &Ipv4Cidr) -> Option<(u32, u32)> {
    let (addr, len) = cidr.split_once('/')?;
    let addr = u32::from(addr.parse::<Ipv4Addr>().ok()?);
    let len: u32 = len.parse().ok()?;
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    Some((addr & mask, (addr & mask) | !mask))
}

fn overlap(a: (u32, u32), b: (u32, u32)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(a) = &p.alibaba else { return };
    section(ctx, a);
}

fn section(ctx: &mut Ctx<'_>, a: &Alibaba) {
    let p = ctx.profile;
    if a.identity.is_some() && p.service_account.is_none() {
        ctx.report(
            &IDENTITY_WITHOUT_SERVICE_ACCOUNT,
            "/alibaba/identity",
            "`alibaba.identity` names the RAM role the Ray service account assumes (RRSA), but the profile has no `serviceAccount` to annotate".into(),
            Some("add `serviceAccount: {name: ...}` (the Ray pods run as it), or remove `alibaba.identity`".into()),
        );
    }
    if let Some(v) = &a.cluster.kubernetes_version
        && p.operators.kueue.is_some()
        && super::kubernetes_minor(v).is_some_and(|m| m < 29)
    {
        ctx.report(
            &KUBERNETES_TOO_OLD,
            "/alibaba/cluster/kubernetesVersion",
            format!("Kueue needs Kubernetes 1.29 or newer; the cluster runs {v}"),
            Some("use a current ACK version, e.g. \"1.34\"".into()),
        );
    }
    if let (Some(vpc), Some(vsw)) = (range(&a.vpc.cidr), range(&a.vpc.vswitch_cidr))
        && !(vpc.0 <= vsw.0 && vsw.1 <= vpc.1)
    {
        ctx.report(
            &VSWITCH_OUTSIDE_VPC,
            "/alibaba/vpc/vswitchCidr",
            format!(
                "vSwitch CIDR {} is not inside VPC CIDR {}: CreateVSwitch refuses it",
                a.vpc.vswitch_cidr, a.vpc.cidr
            ),
            Some(format!("pick a block inside {}", a.vpc.cidr)),
        );
    }
    let vpc = range(&a.vpc.cidr);
    let pods = range(&a.cluster.container_cidr);
    let services = range(&a.cluster.service_cidr);
    for (field, block, other, other_name) in [
        ("containerCidr", pods, vpc, a.vpc.cidr.as_str()),
        ("serviceCidr", services, vpc, a.vpc.cidr.as_str()),
        (
            "serviceCidr",
            services,
            pods,
            a.cluster.container_cidr.as_str(),
        ),
    ] {
        if let (Some(b), Some(o)) = (block, other)
            && overlap(b, o)
        {
            ctx.report(
                &CIDR_OVERLAP,
                &format!("/alibaba/cluster/{field}"),
                format!("`{field}` overlaps {other_name}: pod, service and VPC addresses must not collide"),
                Some("pick blocks that do not overlap, e.g. 172.20.0.0/16 for pods and 172.21.0.0/20 for services with a 192.168.0.0/16 VPC".into()),
            );
        }
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, np) in a.node_pools.iter().enumerate() {
        let base = format!("/alibaba/nodePools/{i}");
        if let Some(first) = seen.insert(np.name.as_str(), i) {
            ctx.report(
                &POOL_NAME_TWICE,
                &format!("{base}/name"),
                format!(
                    "node pool `{}` is defined twice (first at nodePools[{first}])",
                    np.name
                ),
                Some("pool names are unique within a cluster; rename or remove one".into()),
            );
        }
        if let Some(r) = &np.autoscale
            && r.min > r.max
        {
            ctx.report(
                &MIN_OVER_MAX,
                &format!("{base}/autoscale/min"),
                format!(
                    "node pool `{}` autoscales from {} to {}: min_instances above max_instances, which CreateClusterNodePool refuses",
                    np.name, r.min, r.max
                ),
                Some("swap them, or lower `min`".into()),
            );
        }
        match (np.count, &np.autoscale) {
            (None, None) => ctx.report(
                &POOL_SIZE,
                &format!("{base}/name"),
                format!("node pool `{}` gives neither `count` nor `autoscale`", np.name),
                Some("add `count: N`, or `autoscale: {min: A, max: B}`".into()),
            ),
            (Some(_), Some(_)) => ctx.report(
                &COUNT_WITH_AUTOSCALE,
                &format!("{base}/count"),
                format!(
                    "node pool `{}` autoscales; ACK sizes it between min and max and `count` is not sent",
                    np.name
                ),
                Some("remove `count`".into()),
            ),
            _ => {}
        }
    }
}
