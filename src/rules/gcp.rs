//! GCP: what `gcloud container clusters create` / `node-pools create` would refuse, or what GKE
//! would refuse only once the request reaches it (gcloud checks neither machine/accelerator
//! pairs nor autoscale ranges on the client: `../shared/docs/CLOUDS.md` §2.4, §2.8). Name
//! shapes are the schema's job; these rules look across fields. Codes RK420–RK429.

use super::{Ctx, RuleInfo};
use crate::diagnostic::Severity::Error;
use crate::provider::gcp::{DEFAULT_POOL, catalogue};
use std::collections::BTreeMap;

pub(super) const POOL_NAME_TWICE: RuleInfo = RuleInfo {
    code: "RK420",
    severity: Error,
    title: "two GKE node pools share a name",
};
pub(super) const FIRST_POOL_NAME: RuleInfo = RuleInfo {
    code: "RK421",
    severity: Error,
    title: "the first GKE node pool is created with the cluster, which names it default-pool",
};
pub(super) const ACCELERATOR_MISMATCH: RuleInfo = RuleInfo {
    code: "RK422",
    severity: Error,
    title: "a GKE node pool's accelerator disagrees with the GPUs its machine type carries",
};
pub(super) const AUTOSCALE_RANGE: RuleInfo = RuleInfo {
    code: "RK423",
    severity: Error,
    title: "a GKE node pool's autoscale min is larger than its max, or its count lies outside the range",
};
pub(super) const TAINT_WITHOUT_VALUE: RuleInfo = RuleInfo {
    code: "RK424",
    severity: Error,
    title: "a GKE node pool taint needs a value (raykueue writes --node-taints key=value:Effect)",
};

pub(super) const RULES: &[RuleInfo] = &[
    POOL_NAME_TWICE,
    FIRST_POOL_NAME,
    ACCELERATOR_MISMATCH,
    AUTOSCALE_RANGE,
    TAINT_WITHOUT_VALUE,
];

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(g) = &p.gcp else { return };
    if let Some(first) = g.node_pools.first()
        && first.name.as_str() != DEFAULT_POOL
    {
        ctx.report(
            &FIRST_POOL_NAME,
            "/gcp/nodePools/0/name",
            format!(
                "node pool `{}` is the one `gcloud container clusters create` makes, and GKE names it `{DEFAULT_POOL}`: verify.sh and the operators' node selector would look for a pool that does not exist",
                first.name
            ),
            Some(format!("rename it `{DEFAULT_POOL}`, and add `{}` as a second pool if you want that name", first.name)),
        );
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, n) in g.node_pools.iter().enumerate() {
        if let Some(first) = seen.insert(n.name.as_str(), i) {
            ctx.report(
                &POOL_NAME_TWICE,
                &format!("/gcp/nodePools/{i}/name"),
                format!("node pool `{}` is also pool {first}", n.name),
                Some("give each pool its own name".into()),
            );
        }
        if let (Some(a), Some((kind, count))) =
            (&n.accelerator, catalogue::accelerator(&n.machine_type))
        {
            if a.kind.as_str() != kind {
                ctx.report(
                    &ACCELERATOR_MISMATCH,
                    &format!("/gcp/nodePools/{i}/accelerator/type"),
                    format!(
                        "machine type `{}` comes with {count} × `{kind}`, not `{}`: GKE refuses the pool",
                        n.machine_type, a.kind
                    ),
                    Some(format!("set `type: {kind}`, or pick a machine type that carries `{}`", a.kind)),
                );
            } else if a.count != count {
                ctx.report(
                    &ACCELERATOR_MISMATCH,
                    &format!("/gcp/nodePools/{i}/accelerator/count"),
                    format!(
                        "machine type `{}` comes with {count} × `{kind}`, not {}: the GPUs of G2, A2 and A3 types are fixed",
                        n.machine_type, a.count
                    ),
                    Some(format!("set `count: {count}`, or pick the machine type with {} GPUs", a.count)),
                );
            }
        }
        for (j, t) in n.taints.iter().enumerate() {
            if t.value.as_ref().is_none_or(|v| v.is_empty()) {
                ctx.report(
                    &TAINT_WITHOUT_VALUE,
                    &format!("/gcp/nodePools/{i}/taints/{j}"),
                    format!(
                        "taint `{}:{}` of node pool `{}` has no value",
                        t.key,
                        t.effect.as_str(),
                        n.name
                    ),
                    Some(format!(
                        "give it a value, e.g. {{key: {}, value: present, effect: {}}}",
                        t.key,
                        t.effect.as_str()
                    )),
                );
            }
        }
        if let Some(s) = &n.autoscale {
            if s.min > s.max {
                ctx.report(
                    &AUTOSCALE_RANGE,
                    &format!("/gcp/nodePools/{i}/autoscale/min"),
                    format!(
                        "node pool `{}` autoscales from {} to {}: min is larger than max (gcloud does not check; GKE refuses it)",
                        n.name, s.min, s.max
                    ),
                    Some("swap them, or lower min".into()),
                );
            } else if let Some(c) = n.count.filter(|c| !(s.min..=s.max).contains(c)) {
                ctx.report(
                    &AUTOSCALE_RANGE,
                    &format!("/gcp/nodePools/{i}/count"),
                    format!(
                        "node pool `{}` starts with {c} nodes, outside its autoscale range {}–{}",
                        n.name, s.min, s.max
                    ),
                    Some("pick a count inside the range, or drop it (up.sh then starts the pool at min when gcloud's default of 3 is outside the range)".into()),
                );
            }
        }
    }
}
