//! Rules for the provisioning scripts (`infra/up.sh`): what the az CLI or AKS would refuse
//! half-way through a run, and workload-identity settings that could never take effect (RK453
//! and RK454 on every provider).
//! Codes RK450–RK459.

use super::{Ctx, RuleInfo};
use crate::diagnostic::Severity::{Error, Warning};
use crate::profile::PoolMode;

pub(super) const TAINT_WITHOUT_VALUE: RuleInfo = RuleInfo {
    code: "RK450",
    severity: Error,
    title: "an AKS node pool taint needs a value (the az CLI accepts only key=value:Effect)",
};
pub(super) const NO_SYSTEM_POOL: RuleInfo = RuleInfo {
    code: "RK451",
    severity: Error,
    title: "azure.nodePools needs a System pool: the cluster is created with it",
};
pub(super) const AUTOSCALE_RANGE: RuleInfo = RuleInfo {
    code: "RK452",
    severity: Error,
    title: "a node pool's autoscale min is larger than its max, or its count lies outside the range",
};
pub(super) const IDENTITY_WITHOUT_AZURE: RuleInfo = RuleInfo {
    code: "RK453",
    severity: Error,
    title: "serviceAccount.workloadIdentity needs the provider's identity (azure.identity, gcp.identity): nothing else sets the annotation",
};
pub(super) const IDENTITY_WITHOUT_SERVICE_ACCOUNT: RuleInfo = RuleInfo {
    code: "RK454",
    severity: Warning,
    title: "azure.identity or gcp.identity without a serviceAccount: up.sh creates the identity but nothing uses it",
};

pub(super) const RULES: &[RuleInfo] = &[
    TAINT_WITHOUT_VALUE,
    NO_SYSTEM_POOL,
    AUTOSCALE_RANGE,
    IDENTITY_WITHOUT_AZURE,
    IDENTITY_WITHOUT_SERVICE_ACCOUNT,
];

pub(super) fn check(ctx: &mut Ctx<'_>) {
    let p = ctx.profile;
    if let Some(sa) = &p.service_account {
        let has_identity = p
            .provider()
            .is_some_and(crate::provider::Provider::has_identity);
        if sa.workload_identity && !has_identity {
            let (message, hint) = if p.aws.is_some() {
                (
                    format!(
                        "service account `{}` is marked for workload identity, but the profile has no aws.identity: no Pod Identity association gives its pods AWS permissions",
                        sa.name
                    ),
                    "add aws.identity (permissionPolicyArns: the IAM policies eksctl attaches to the role it associates), or set workloadIdentity: false",
                )
            } else if p.alibaba.is_some() {
                (
                    format!(
                        "service account `{}` is marked for workload identity, but the profile has no alibaba.identity: no RAM role is named for RRSA",
                        sa.name
                    ),
                    "add alibaba.identity (roleName: the RAM role the pods assume), or set workloadIdentity: false",
                )
            } else if p.gcp.is_some() {
                (
                    format!(
                        "service account `{}` is marked for workload identity, but the profile has no gcp.identity: its iam.gke.io/gcp-service-account annotation would stay a placeholder",
                        sa.name
                    ),
                    "add gcp.identity (serviceAccount: the Google service account up.sh creates and binds), or set workloadIdentity: false",
                )
            } else {
                (
                    format!(
                        "service account `{}` is marked for workload identity, but the profile has no azure.identity: its client-id annotation would stay a placeholder",
                        sa.name
                    ),
                    "add azure.identity (name, federatedCredential, and clientId/tenantId if the identity exists already), or set workloadIdentity: false",
                )
            };
            ctx.report(
                &IDENTITY_WITHOUT_AZURE,
                "/serviceAccount/workloadIdentity",
                message,
                Some(hint.into()),
            );
        }
    }
    if p.gcp.as_ref().is_some_and(|g| g.identity.is_some()) && p.service_account.is_none() {
        ctx.report(
            &IDENTITY_WITHOUT_SERVICE_ACCOUNT,
            "/gcp/identity",
            "the Google service account has no Kubernetes service account to bind: up.sh creates it, but no pod can act as it".into(),
            Some("add serviceAccount: {name: ..., workloadIdentity: true}".into()),
        );
    }
    let Some(a) = &p.azure else { return };
    if a.identity.is_some() && p.service_account.is_none() {
        ctx.report(
            &IDENTITY_WITHOUT_SERVICE_ACCOUNT,
            "/azure/identity",
            "the managed identity has no service account to federate with: up.sh creates it, but no federated credential".into(),
            Some("add serviceAccount: {name: ..., workloadIdentity: true}".into()),
        );
    }
    if !a.node_pools.is_empty() && !a.node_pools.iter().any(|n| n.mode == PoolMode::System) {
        ctx.report(
            &NO_SYSTEM_POOL,
            "/azure/nodePools",
            "no node pool has mode: System; AKS creates the cluster with a System pool and needs one for its own pods".into(),
            Some("set mode: System on the pool for system pods (e.g. Standard_D4ds_v6, count: 2)".into()),
        );
    }
    for (i, n) in a.node_pools.iter().enumerate() {
        for (j, t) in n.taints.iter().enumerate() {
            if t.value.as_ref().is_none_or(|v| v.is_empty()) {
                ctx.report(
                    &TAINT_WITHOUT_VALUE,
                    &format!("/azure/nodePools/{i}/taints/{j}"),
                    format!(
                        "taint `{}:{}` of node pool `{}` has no value; az aks rejects it",
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
                    &format!("/azure/nodePools/{i}/autoscale/min"),
                    format!(
                        "node pool `{}` autoscales from {} to {}: min is larger than max",
                        n.name, s.min, s.max
                    ),
                    Some("swap them, or lower min".into()),
                );
            } else if let Some(c) = n.count.filter(|c| !(s.min..=s.max).contains(c)) {
                ctx.report(
                    &AUTOSCALE_RANGE,
                    &format!("/azure/nodePools/{i}/count"),
                    format!(
                        "node pool `{}` starts with {c} nodes, outside its autoscale range {}–{}",
                        n.name, s.min, s.max
                    ),
                    Some(
                        "drop count (up.sh then starts the pool at az's default of 3 nodes, or at min when 3 is outside the range), or pick a count inside the range"
                            .into(),
                    ),
                );
            }
        }
    }
}
