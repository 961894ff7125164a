//! Azure: what `az aks create` / `az aks nodepool add` would refuse, or what would leave the
//! cluster without what the rest of the profile relies on. Name shapes (node pools, resource
//! group, cluster, storage account) are the schema's job; these rules look across fields.

use super::{Ctx, RuleInfo};
use crate::diagnostic::Severity::{Error, Warning};
use crate::profile::PoolMode;
use crate::provider::azure::catalogue::REGIONS;
use std::collections::BTreeMap;

pub(super) const POOL_NAME_TWICE: RuleInfo = RuleInfo {
    code: "RK402",
    severity: Error,
    title: "two node pools share a name",
};
pub(super) const SYSTEM_POOL_EMPTY: RuleInfo = RuleInfo {
    code: "RK403",
    severity: Error,
    title: "a System node pool that can have 0 nodes (AKS requires at least 1)",
};
pub(super) const POOL_SIZE: RuleInfo = RuleInfo {
    code: "RK404",
    severity: Error,
    title: "a node pool gives neither `count` nor `autoscale` (its size would be az's default, unknown to the profile)",
};
pub(super) const WORKLOAD_IDENTITY_OIDC: RuleInfo = RuleInfo {
    code: "RK406",
    severity: Error,
    title: "cluster.workloadIdentity without cluster.oidcIssuer",
};
pub(super) const SERVICE_ACCOUNT_IDENTITY: RuleInfo = RuleInfo {
    code: "RK407",
    severity: Error,
    title: "serviceAccount.workloadIdentity on a cluster without workloadIdentity: no token reaches the pods",
};
pub(super) const UNKNOWN_LOCATION: RuleInfo = RuleInfo {
    code: "RK408",
    severity: Warning,
    title: "an Azure location raykueue does not know",
};
pub(super) const STORAGE_WITHOUT_IDENTITY: RuleInfo = RuleInfo {
    code: "RK409",
    severity: Warning,
    title: "a storage account without azure.identity: its role is granted to nobody",
};
pub(super) const KUBERNETES_TOO_OLD: RuleInfo = RuleInfo {
    code: "RK410",
    severity: Error,
    title: "kubernetesVersion older than 1.29, which Kueue needs",
};

pub(super) const RULES: &[RuleInfo] = &[
    POOL_NAME_TWICE,
    SYSTEM_POOL_EMPTY,
    POOL_SIZE,
    WORKLOAD_IDENTITY_OIDC,
    SERVICE_ACCOUNT_IDENTITY,
    UNKNOWN_LOCATION,
    STORAGE_WITHOUT_IDENTITY,
    KUBERNETES_TOO_OLD,
];

pub(super) fn check(ctx: &mut Ctx<'_>) {
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
        if np.count.is_none() && np.autoscale.is_none() {
            ctx.report(
                &POOL_SIZE,
                &format!("{base}/name"),
                format!("node pool `{}` gives neither `count` nor `autoscale`", np.name),
                Some("add `count: N`, or `autoscale: {min: A, max: B}`; az would pick 3 nodes silently".into()),
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
    // Without azure.identity it is RK453's finding (infra rules).
    if let Some(az) = &p.azure
        && sa.workload_identity
        && az.identity.is_some()
        && !az.cluster.workload_identity
    {
        ctx.report(
            &SERVICE_ACCOUNT_IDENTITY,
            "/serviceAccount/workloadIdentity",
            "the service account uses workload identity, but the cluster does not enable it: no token is injected into the pods".into(),
            Some("set `workloadIdentity: true` and `oidcIssuer: true` under `azure.cluster`".into()),
        );
    }
}
