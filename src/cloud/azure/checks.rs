//! What `az aks create` / `az aks nodepool add` would refuse, or what would leave an AKS cluster
//! without what the rest of the profile relies on, beyond the checks every cloud shares. Name
//! shapes (node pools, resource group, cluster, storage account) are the schema's job; these
//! look across fields.

use super::catalogue::REGIONS;
use super::{Azure, PoolMode};
use crate::base::codes;
use crate::base::diagnostic::{Findings, did_you_mean};
use crate::base::pointer::ptr;
use crate::profile::Profile;

pub(super) fn run(az: &Azure, p: &Profile, out: &mut Findings) {
    if !REGIONS.contains(&az.location.as_str()) {
        let hint = did_you_mean(&az.location, REGIONS.iter().copied()).map_or_else(
            || "use a region name as `az account list-locations --query [].name` prints it, e.g. eastus2".to_string(),
            |s| format!("did you mean `{s}`?"),
        );
        out.report(
            &codes::UNKNOWN_LOCATION,
            &ptr!["azure", "location"],
            format!(
                "`{}` is not an Azure region raykueue knows; `az group create` fails on a misspelt one",
                az.location
            ),
            Some(hint),
        );
    }
    if az.cluster.workload_identity && !az.cluster.oidc_issuer {
        out.report(
            &codes::WORKLOAD_IDENTITY_OIDC,
            &ptr!["azure", "cluster", "workloadIdentity"],
            "workload identity needs the cluster's OIDC issuer: `az aks create --enable-workload-identity` fails without `--enable-oidc-issuer`".into(),
            Some("set `oidcIssuer: true` under `azure.cluster`".into()),
        );
    }
    if az.storage.is_some() && az.identity.is_none() {
        out.report(
            &codes::STORAGE_WITHOUT_IDENTITY,
            &ptr!["azure", "storage"],
            "the storage role is granted to the managed identity in `azure.identity`, which is not set: Ray pods get no access to the account".into(),
            Some("add `identity: {name: ..., federatedCredential: ...}` under `azure`".into()),
        );
    }
    // RK407: the ServiceAccount is annotated with the identity's client ID, and the cluster must
    // run the workload identity webhook for the annotation to mean anything. (Without
    // azure.identity it is RK453's finding.)
    if let Some(sa) = &p.service_account
        && sa.workload_identity
        && az.identity.is_some()
        && !az.cluster.workload_identity
    {
        out.report(
            &codes::SERVICE_ACCOUNT_IDENTITY,
            &ptr!["serviceAccount", "workloadIdentity"],
            "the service account uses workload identity, but the cluster does not enable it: no token is injected into the pods".into(),
            Some("set `workloadIdentity: true` and `oidcIssuer: true` under `azure.cluster`".into()),
        );
    }
    if !az.node_pools.is_empty() && !az.node_pools.iter().any(|n| n.mode == PoolMode::System) {
        out.report(
            &codes::NO_SYSTEM_POOL,
            &ptr!["azure", "nodePools"],
            "no node pool has mode: System; AKS creates the cluster with a System pool and needs one for its own pods".into(),
            Some("set mode: System on the pool for system pods (e.g. Standard_D4ds_v6, count: 2)".into()),
        );
    }
    for (i, np) in az.node_pools.iter().enumerate() {
        if np.mode != PoolMode::System {
            continue;
        }
        let base = ptr!["azure", "nodePools", i];
        let empty = match (np.count, &np.autoscale) {
            (_, Some(a)) if a.min == 0 => Some(ptr!(base; "autoscale", "min")),
            (Some(0), None) => Some(base.at("count")),
            _ => None,
        };
        if let Some(pointer) = empty {
            out.report(
                &codes::SYSTEM_POOL_EMPTY,
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
