//! Azure: what `az aks create` / `az aks nodepool add` would refuse, or what would leave the
//! cluster without what the rest of the profile relies on. Name shapes (node pools, resource
//! group, cluster, storage account) are the schema's job; these rules look across fields.

use super::{Ctx, RuleInfo};
use crate::catalogue::REGIONS;
use crate::diagnostic::Severity::{Error, Warning};
use crate::profile::PoolMode;
use std::collections::BTreeMap;

pub const NO_SYSTEM_POOL: RuleInfo = RuleInfo {
    code: "RK401",
    severity: Error,
    title: "no node pool has mode System: AKS needs one to create the cluster",
};
pub const POOL_NAME_TWICE: RuleInfo = RuleInfo {
    code: "RK402",
    severity: Error,
    title: "two node pools share a name",
};
pub const SYSTEM_POOL_EMPTY: RuleInfo = RuleInfo {
    code: "RK403",
    severity: Error,
    title: "a System node pool that can have 0 nodes (AKS requires at least 1)",
};
pub const POOL_SIZE: RuleInfo = RuleInfo {
    code: "RK404",
    severity: Error,
    title: "a node pool gives neither or both of `count` and `autoscale`",
};
pub const AUTOSCALE_RANGE: RuleInfo = RuleInfo {
    code: "RK405",
    severity: Error,
    title: "a node pool's autoscale.min is larger than autoscale.max",
};
pub const WORKLOAD_IDENTITY_OIDC: RuleInfo = RuleInfo {
    code: "RK406",
    severity: Error,
    title: "cluster.workloadIdentity without cluster.oidcIssuer",
};
pub const SERVICE_ACCOUNT_IDENTITY: RuleInfo = RuleInfo {
    code: "RK407",
    severity: Error,
    title: "serviceAccount.workloadIdentity without azure.identity or without cluster.workloadIdentity",
};
pub const UNKNOWN_LOCATION: RuleInfo = RuleInfo {
    code: "RK408",
    severity: Warning,
    title: "an Azure location raykueue does not know",
};
pub const STORAGE_WITHOUT_IDENTITY: RuleInfo = RuleInfo {
    code: "RK409",
    severity: Warning,
    title: "a storage account without azure.identity: its role is granted to nobody",
};
pub const KUBERNETES_TOO_OLD: RuleInfo = RuleInfo {
    code: "RK410",
    severity: Error,
    title: "kubernetesVersion older than 1.29, which Kueue needs",
};

pub const RULES: &[RuleInfo] = &[
    NO_SYSTEM_POOL,
    POOL_NAME_TWICE,
    SYSTEM_POOL_EMPTY,
    POOL_SIZE,
    AUTOSCALE_RANGE,
    WORKLOAD_IDENTITY_OIDC,
    SERVICE_ACCOUNT_IDENTITY,
    UNKNOWN_LOCATION,
    STORAGE_WITHOUT_IDENTITY,
    KUBERNETES_TOO_OLD,
];

pub fn check(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    service_account(ctx);
    let Some(az) = &p.azure else { return };
    if !REGIONS.contains(&az.location.as_str()) {
        let hint = crate::diagnostic::did_you_mean(&az.location, REGIONS.iter().copied())
            .map_or_else(
                || "use a region name as `az account list-locations --query [].name` prints it, e.g. eastus2".to_string(),
                |s| format!("did you mean `{s}`?"),
            );
        ctx.report(
            &UNKNOWN_LOCATION,
            "/azure/location",
            format!(
                "`{}` is not an Azure region raykueue knows; `az group create` fails on a misspelt one",
                az.location
            ),
            Some(hint),
        );
    }
    if az.cluster.workload_identity && !az.cluster.oidc_issuer {
        ctx.report(
            &WORKLOAD_IDENTITY_OIDC,
            "/azure/cluster/workloadIdentity",
            "workload identity needs the cluster's OIDC issuer: `az aks create --enable-workload-identity` fails without `--enable-oidc-issuer`".into(),
            Some("set `oidcIssuer: true` under `azure.cluster`".into()),
        );
    }
    if let Some(v) = &az.cluster.kubernetes_version
        && p.operators.kueue.is_some()
    {
        let minor = v
            .strip_prefix("1.")
            .and_then(|rest| rest.split('.').next())
            .and_then(|m| m.parse::<u32>().ok());
        if minor.is_some_and(|m| m < 29) {
            ctx.report(
                &KUBERNETES_TOO_OLD,
                "/azure/cluster/kubernetesVersion",
                format!("Kueue needs Kubernetes 1.29 or newer; the cluster runs {v}"),
                Some("use a current AKS version, e.g. \"1.35\"".into()),
            );
        }
    }
    if az.storage.is_some() && az.identity.is_none() {
        ctx.report(
            &STORAGE_WITHOUT_IDENTITY,
            "/azure/storage",
            "the storage role is granted to the managed identity in `azure.identity`, which is not set: Ray pods get no access to the account".into(),
            Some("add `identity: {name: ..., federatedCredential: ...}` under `azure`".into()),
        );
    }
    if !az.node_pools.iter().any(|n| n.mode == PoolMode::System) {
        ctx.report(
            &NO_SYSTEM_POOL,
            "/azure/nodePools",
            "no node pool has `mode: System`: AKS creates the cluster with a System pool and requires one at all times".into(),
            Some("set `mode: System` on the pool for CoreDNS and the operators (e.g. a Standard_D4ds_v6 pool with count 2)".into()),
        );
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, np) in az.node_pools.iter().enumerate() {
        let base = format!("/azure/nodePools/{i}");
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
        match (np.count, &np.autoscale) {
            (Some(_), Some(_)) => ctx.report(
                &POOL_SIZE,
                &format!("{base}/autoscale"),
                format!(
                    "node pool `{}` gives both `count` and `autoscale`",
                    np.name
                ),
                Some("keep `count` for a fixed size or `autoscale: {min, max}` for the cluster autoscaler, not both".into()),
            ),
            (None, None) => ctx.report(
                &POOL_SIZE,
                &format!("{base}/name"),
                format!("node pool `{}` gives neither `count` nor `autoscale`", np.name),
                Some("add `count: N`, or `autoscale: {min: A, max: B}`".into()),
            ),
            _ => {}
        }
        if let Some(a) = &np.autoscale
            && a.min > a.max
        {
            ctx.report(
                &AUTOSCALE_RANGE,
                &format!("{base}/autoscale/min"),
                format!(
                    "node pool `{}` has autoscale.min {} > autoscale.max {}",
                    np.name, a.min, a.max
                ),
                Some("make min ≤ max".into()),
            );
        }
        if np.mode == PoolMode::System {
            let empty = match (np.count, &np.autoscale) {
                (_, Some(a)) if a.min == 0 => Some(format!("{base}/autoscale/min")),
                (Some(0), None) => Some(format!("{base}/count")),
                _ => None,
            };
            if let Some(pointer) = empty {
                ctx.report(
                    &SYSTEM_POOL_EMPTY,
                    &pointer,
                    format!(
                        "System node pool `{}` may have 0 nodes; AKS requires at least 1 node in a System pool",
                        np.name
                    ),
                    Some("use at least 1 (2 or more for system add-ons to survive a node upgrade)".into()),
                );
            }
        }
    }
}

/// RK407: the ServiceAccount is annotated with the identity's client ID, and the cluster must
/// run the workload identity webhook for the annotation to mean anything.
fn service_account(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    let Some(sa) = &p.service_account else { return };
    if !sa.workload_identity {
        return;
    }
    let pointer = "/serviceAccount/workloadIdentity";
    match &p.azure {
        Some(az) if az.identity.is_some() => {
            if !az.cluster.workload_identity {
                ctx.report(
                    &SERVICE_ACCOUNT_IDENTITY,
                    pointer,
                    "the service account uses workload identity, but the cluster does not enable it: no token is injected into the pods".into(),
                    Some("set `workloadIdentity: true` and `oidcIssuer: true` under `azure.cluster`".into()),
                );
            }
        }
        _ => ctx.report(
            &SERVICE_ACCOUNT_IDENTITY,
            pointer,
            "the service account uses workload identity, but `azure.identity` names no managed identity to federate it with".into(),
            Some("add `identity: {name: ..., federatedCredential: ...}` under `azure`, or set `workloadIdentity: false`".into()),
        ),
    }
}
