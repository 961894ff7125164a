//! The platform part (what `gen` prints): Namespace, ServiceAccount, ResourceFlavors,
//! WorkloadPriorityClasses, ClusterQueues and LocalQueues, in apply order.

use super::{MANAGED_BY, Object};
use crate::profile::{
    ClusterQueue, Flavor, LocalQueue, PriorityClass, Profile, Taint, Toleration, TolerationOperator,
};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Placeholder for workload-identity IDs the profile does not pin: an obviously invalid value
/// (token exchange fails loudly) that `infra/up.sh` replaces with the identity's real IDs.
pub const IDENTITY_PLACEHOLDER: &str = "set-by-infra-up.sh";

pub const FILE_NAMESPACE: &str = "platform/00-namespace.yaml";
pub const FILE_SERVICE_ACCOUNT: &str = "platform/01-serviceaccount.yaml";
pub const FILE_FLAVORS: &str = "platform/10-resourceflavors.yaml";
pub const FILE_PRIORITY: &str = "platform/15-workloadpriorityclasses.yaml";
pub const FILE_CLUSTER_QUEUES: &str = "platform/20-clusterqueues.yaml";
pub const FILE_LOCAL_QUEUES: &str = "platform/30-localqueues.yaml";

fn labels() -> Value {
    json!({ MANAGED_BY.0: MANAGED_BY.1 })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Meta<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    labels: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<BTreeMap<&'a str, String>>,
}

fn meta<'a>(name: &'a str, namespace: Option<&'a str>) -> Meta<'a> {
    Meta {
        name,
        namespace,
        labels: labels(),
        annotations: None,
    }
}

/// All platform objects of a profile, in the order `kubectl apply -f -` needs them.
pub fn platform_objects(p: &Profile) -> Vec<Object> {
    let ns = p.namespace.as_str();
    let mut out = vec![Object::with_context(
        "Namespace",
        ns,
        None,
        "platform/namespace.yaml.j2",
        FILE_NAMESPACE,
        json!({ "metadata": meta(ns, None) }),
    )];
    if let Some(sa) = &p.service_account {
        let mut m = meta(&sa.name, Some(ns));
        if sa.workload_identity {
            let id = p.azure.as_ref().and_then(|a| a.identity.as_ref());
            let client = id
                .and_then(|i| i.client_id.as_ref())
                .map_or(IDENTITY_PLACEHOLDER, |u| u.as_str());
            let tenant = id
                .and_then(|i| i.tenant_id.as_ref())
                .map_or(IDENTITY_PLACEHOLDER, |u| u.as_str());
            m.annotations = Some(BTreeMap::from([
                ("azure.workload.identity/client-id", client.to_owned()),
                ("azure.workload.identity/tenant-id", tenant.to_owned()),
            ]));
        }
        out.push(Object::with_context(
            "ServiceAccount",
            sa.name.as_str(),
            Some(ns),
            "platform/serviceaccount.yaml.j2",
            FILE_SERVICE_ACCOUNT,
            json!({ "metadata": m }),
        ));
    }
    out.extend(p.flavors.iter().map(flavor));
    out.extend(p.priority_classes.iter().map(priority_class));
    if let Some(q) = &p.queues {
        out.extend(q.cluster_queues.iter().map(cluster_queue));
        out.extend(q.local_queues.iter().map(|lq| local_queue(lq, ns)));
    }
    out
}

fn taint(t: &Taint) -> Value {
    let mut m = Map::new();
    m.insert("key".into(), json!(t.key));
    if let Some(v) = &t.value {
        m.insert("value".into(), json!(v));
    }
    m.insert("effect".into(), json!(t.effect.as_str()));
    Value::Object(m)
}

/// A toleration as Kubernetes writes it (`operator` always explicit).
pub fn toleration(t: &Toleration) -> Value {
    let mut m = Map::new();
    if let Some(k) = &t.key {
        m.insert("key".into(), json!(k));
    }
    m.insert(
        "operator".into(),
        json!(match t.operator {
            TolerationOperator::Equal => "Equal",
            TolerationOperator::Exists => "Exists",
        }),
    );
    if let Some(v) = &t.value {
        m.insert("value".into(), json!(v));
    }
    if let Some(e) = t.effect {
        m.insert("effect".into(), json!(e.as_str()));
    }
    if let Some(s) = t.toleration_seconds {
        m.insert("tolerationSeconds".into(), json!(s));
    }
    Value::Object(m)
}

fn flavor(f: &Flavor) -> Object {
    Object::with_context(
        "ResourceFlavor",
        f.name.as_str(),
        None,
        "platform/resourceflavor.yaml.j2",
        FILE_FLAVORS,
        json!({
            "metadata": meta(&f.name, None),
            "nodeLabels": f.node_labels,
            "nodeTaints": f.node_taints.iter().map(taint).collect::<Vec<_>>(),
            "tolerations": f.tolerations.iter().map(toleration).collect::<Vec<_>>(),
        }),
    )
}

fn priority_class(pc: &PriorityClass) -> Object {
    Object::with_context(
        "WorkloadPriorityClass",
        pc.name.as_str(),
        None,
        "platform/workloadpriorityclass.yaml.j2",
        FILE_PRIORITY,
        json!({
            "metadata": meta(&pc.name, None),
            "value": pc.value,
            "description": pc.description,
        }),
    )
}

fn cluster_queue(cq: &ClusterQueue) -> Object {
    let selector = cq.namespace_selector.clone().unwrap_or_default();
    let groups: Vec<Value> = cq
        .resource_groups
        .iter()
        .map(|rg| {
            json!({
                "coveredResources": rg.covered_resources,
                "flavors": rg.flavors.iter().map(|f| json!({
                    "name": f.name,
                    "resources": f.resources.iter().map(|r| json!({
                        "name": r.name,
                        "nominalQuota": r.nominal_quota,
                        "borrowingLimit": r.borrowing_limit,
                        "lendingLimit": r.lending_limit,
                    })).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Object::with_context(
        "ClusterQueue",
        cq.name.as_str(),
        None,
        "platform/clusterqueue.yaml.j2",
        FILE_CLUSTER_QUEUES,
        json!({
            "metadata": meta(&cq.name, None),
            "cohortName": cq.cohort_name,
            "namespaceSelector": selector,
            "queueingStrategy": cq.queueing_strategy,
            "preemption": cq.preemption,
            "flavorFungibility": cq.flavor_fungibility,
            "stopPolicy": cq.stop_policy,
            "fairSharingWeight": cq.fair_sharing_weight,
            "resourceGroups": groups,
        }),
    )
}

fn local_queue(lq: &LocalQueue, default_ns: &str) -> Object {
    let ns = lq.namespace.as_ref().map_or(default_ns, |n| n.as_str());
    Object::with_context(
        "LocalQueue",
        lq.name.as_str(),
        Some(ns),
        "platform/localqueue.yaml.j2",
        FILE_LOCAL_QUEUES,
        json!({
            "metadata": meta(&lq.name, Some(ns)),
            "clusterQueue": lq.cluster_queue,
        }),
    )
}
