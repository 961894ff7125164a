//! What `gcloud container clusters create` / `node-pools create` would refuse, or what GKE would
//! refuse only once the request reaches it (gcloud checks neither machine/accelerator pairs nor
//! autoscale ranges on the client), beyond the checks every cloud shares.

use super::section::Capacity;
use super::{DEFAULT_POOL, Gcp, catalogue};
use crate::base::codes;
use crate::base::diagnostic::Findings;
use crate::base::pointer::ptr;
use crate::cloud::{CLASS_GKE_QUEUED, Cloud};
use crate::profile::{Flavor, Profile};

/// RK473, RK474, RK475: queued-provisioning pools and the `queued-provisioning.gke.io` checks
/// that serve them. GKE gives such a pool nodes only for ProvisioningRequests (the Container
/// API's `NodePool.queuedProvisioning.enabled`: "nodes can be only obtained through queuing via
/// the Cluster Autoscaler ProvisioningRequest API"), and the pool must start at zero:
/// GoogleCloudPlatform/cluster-toolkit@0a497447 `docs/gke-consumption-options.md` ("Queued
/// provisioning does not work with `static_node_count`; requires
/// `autoscaling_total_min_nodes: 0`").
fn queued(g: &Gcp, p: &Profile, out: &mut Findings) {
    for (i, n) in g.node_pools.iter().enumerate() {
        if !n.queued_provisioning {
            continue;
        }
        let shape = match (&n.autoscale, n.count) {
            (None, _) => Some(("queuedProvisioning", "has no `autoscale` range".to_owned())),
            (Some(a), _) if a.min > 0 => {
                Some(("autoscale/min", format!("keeps {} node(s)", a.min)))
            }
            (_, Some(c)) if c > 0 => Some(("count", format!("starts with {c} node(s)"))),
            _ => None,
        };
        if let Some((field, what)) = shape {
            out.report(
                &codes::QUEUED_POOL_SHAPE,
                &ptr!["gcp", "nodePools", i, field],
                format!(
                    "queued-provisioning pool `{}` {what}: GKE adds its nodes only for ProvisioningRequests, from zero",
                    n.name
                ),
                Some("give it `autoscale: {min: 0, max: N}` and no `count`".into()),
            );
        }
    }
    let groups = g.node_groups();
    let backing = |f: &Flavor| -> Vec<(bool, String)> {
        groups
            .iter()
            .filter(|x| {
                f.node_labels
                    .iter()
                    .all(|(k, v)| x.labels.get(k.as_str()).is_some_and(|l| l == v.as_str()))
            })
            .map(|x| (g.queued_provisioning(x), x.name.to_owned()))
            .collect()
    };
    let Some(queues) = &p.queues else { return };
    for (c, cq) in queues.cluster_queues.iter().enumerate() {
        for (gi, group) in cq.resource_groups.iter().enumerate() {
            for (k, fq) in group.flavors.iter().enumerate() {
                let Some(f) = p.flavors.iter().find(|f| f.name == fq.name) else {
                    continue;
                };
                let pools = backing(f);
                let queued_check = cq.admission_checks.iter().any(|r| {
                    r.applies_to(&f.name)
                        && p.admission_checks.iter().any(|a| {
                            a.name.as_str() == r.name()
                                && a.provisioning_request.provisioning_class_name.as_str()
                                    == CLASS_GKE_QUEUED
                        })
                });
                let all_queued = !pools.is_empty() && pools.iter().all(|(q, _)| *q);
                let any_queued = pools.iter().any(|(q, _)| *q);
                if all_queued && !queued_check {
                    out.report(
                        &codes::QUEUED_POOL_WITHOUT_CHECK,
                        &ptr!["queues", "clusterQueues", c, "resourceGroups", gi, "flavors", k, "name"],
                        format!(
                            "flavor `{}` of ClusterQueue `{}` is backed only by queued-provisioning pools ({}), and no `{CLASS_GKE_QUEUED}` check of the queue applies to it: GKE gives those pools nodes only for ProvisioningRequests, so its pods wait for ever",
                            f.name,
                            cq.name,
                            pools.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join(", ")
                        ),
                        Some(format!("add an admission check with `provisioningRequest: {{provisioningClassName: {CLASS_GKE_QUEUED}}}` to the queue's `admissionChecks`")),
                    );
                }
                if queued_check && !any_queued {
                    out.report(
                        &codes::QUEUED_CLASS_WITHOUT_QUEUED_POOL,
                        &ptr!["queues", "clusterQueues", c, "resourceGroups", gi, "flavors", k, "name"],
                        format!(
                            "a `{CLASS_GKE_QUEUED}` check of ClusterQueue `{}` applies to flavor `{}`, whose pools ({}) are not queued-provisioning pools: GKE serves that class only from pools created with --enable-queued-provisioning",
                            cq.name,
                            f.name,
                            if pools.is_empty() { "none".to_owned() } else { pools.iter().map(|(_, n)| n.as_str()).collect::<Vec<_>>().join(", ") }
                        ),
                        Some("set `queuedProvisioning: true` on the GPU pool the flavor selects, or limit the check to the queued flavor with `onFlavors`".into()),
                    );
                }
            }
        }
    }
}

/// RK425, RK426: the consumption option of each pool, against what Compute Engine offers for
/// its machine family (`catalogue::RESERVATION_FAMILIES`) and what the pool can take.
fn capacity(g: &Gcp, out: &mut Findings) {
    for (i, n) in g.node_pools.iter().enumerate() {
        let at = ptr!["gcp", "nodePools", i];
        let family = catalogue::reservation_family(&n.machine_type);
        let refuse = |out: &mut Findings, why: String, hint: &str| {
            out.report(
                &codes::CAPACITY_UNUSABLE,
                &at.at("capacity"),
                why,
                Some(hint.to_owned()),
            );
        };
        match &n.capacity {
            Capacity::OnDemand if n.queued_provisioning => {
                if let Some((family, false)) = family {
                    out.report(
                        &codes::CAPACITY_UNUSABLE,
                        &at.at("queuedProvisioning"),
                        format!(
                            "queued-provisioning pool `{}` is flex-start, and Compute Engine offers `{}` ({family}) only from a reservation",
                            n.name, n.machine_type
                        ),
                        Some("drop `queuedProvisioning` and add `capacity: {reservation: {name: RESERVATION}}`".into()),
                    );
                }
            }
            Capacity::OnDemand => {
                if let Some((family, others)) = family {
                    out.report(
                        &codes::RESERVATION_ONLY,
                        &at.at("machineType"),
                        format!(
                            "node pool `{}` runs `{}` ({family}), which Compute Engine offers only from a reservation{}: on demand, GKE cannot create its nodes",
                            n.name,
                            n.machine_type,
                            if others { ", as flex-start or as spot VMs" } else { "" }
                        ),
                        Some(if others {
                            "add `capacity: {reservation: {name: RESERVATION}}` (your reservation's name), `capacity: flexStart` or `capacity: spot` to the pool".into()
                        } else {
                            "add `capacity: {reservation: {name: RESERVATION}}` (your reservation's name) to the pool".into()
                        }),
                    );
                }
            }
            _ if i == 0 => refuse(
                out,
                format!(
                    "`{}` is created with the cluster (`gcloud container clusters create`), where raykueue sets no consumption option",
                    n.name
                ),
                "keep the first pool on demand, and put reserved, flex-start or spot capacity on a second pool",
            ),
            _ if n.queued_provisioning => refuse(
                out,
                format!(
                    "queued-provisioning pool `{}` is flex-start already: it takes no other consumption option",
                    n.name
                ),
                "drop `capacity`, or drop `queuedProvisioning`",
            ),
            Capacity::Spot | Capacity::FlexStart if family.is_some_and(|(_, others)| !others) => {
                refuse(
                    out,
                    format!(
                        "Compute Engine offers `{}` only from a reservation, not as flex-start or spot VMs",
                        n.machine_type
                    ),
                    "use `capacity: {reservation: {name: RESERVATION}}`",
                );
            }
            Capacity::FlexStart if n.autoscale.is_none() => refuse(
                out,
                format!(
                    "flex-start pool `{}` has no `autoscale` range: Compute Engine adds flex-start VMs only when the autoscaler asks for them",
                    n.name
                ),
                "give it `autoscale: {min: 0, max: N}`",
            ),
            _ => {}
        }
    }
}

pub(super) fn run(g: &Gcp, p: &Profile, out: &mut Findings) {
    queued(g, p, out);
    capacity(g, out);
    if let Some(first) = g.node_pools.first()
        && first.name.as_str() != DEFAULT_POOL
    {
        out.report(
            &codes::FIRST_POOL_NAME,
            &ptr!["gcp", "nodePools", "0", "name"],
            format!(
                "node pool `{}` is the one `gcloud container clusters create` makes, and GKE names it `{DEFAULT_POOL}`: verify.sh and the operators' node selector would look for a pool that does not exist",
                first.name
            ),
            Some(format!("rename it `{DEFAULT_POOL}`, and add `{}` as a second pool if you want that name", first.name)),
        );
    }
    for (i, n) in g.node_pools.iter().enumerate() {
        let Some((a, (kind, count))) = n
            .accelerator
            .as_ref()
            .zip(catalogue::accelerator(&n.machine_type))
        else {
            continue;
        };
        if a.kind.as_str() != kind {
            out.report(
                &codes::ACCELERATOR_MISMATCH,
                &ptr!["gcp", "nodePools", i, "accelerator", "type"],
                format!(
                    "machine type `{}` comes with {count} × `{kind}`, not `{}`: GKE refuses the pool",
                    n.machine_type, a.kind
                ),
                Some(format!("set `type: {kind}`, or pick a machine type that carries `{}`", a.kind)),
            );
        } else if a.count != count {
            out.report(
                &codes::ACCELERATOR_MISMATCH,
                &ptr!["gcp", "nodePools", i, "accelerator", "count"],
                format!(
                    "machine type `{}` comes with {count} × `{kind}`, not {}: the GPUs of G2, A2 and A3 types are fixed",
                    n.machine_type, a.count
                ),
                Some(format!("set `count: {count}`, or pick the machine type with {} GPUs", a.count)),
            );
        }
    }
}
