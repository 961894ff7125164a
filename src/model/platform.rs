//! The platform part (what `gen` prints): Namespace, ServiceAccount, ResourceFlavors,
//! WorkloadPriorityClasses, Cohorts, ClusterQueues and LocalQueues, in apply order.

use super::{MANAGED_BY, Object, k8s};
use crate::profile::{
    AdmissionCheck, ClusterQueue, ClusterQueueCheck, Cohort, Flavor, LocalQueue, PriorityClass,
    Profile, ResourceGroup, Role, Taint, Toleration, TolerationOperator, Topology,
};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// Placeholder for workload-identity IDs the profile does not pin: an obviously invalid value
/// (token exchange fails loudly) that `infra/up.sh` replaces with the identity's real IDs.
pub(super) const IDENTITY_PLACEHOLDER: &str = "set-by-infra-up.sh";

pub(super) const FILE_NAMESPACE: &str = "platform/00-namespace.yaml";
pub(super) const FILE_SERVICE_ACCOUNT: &str = "platform/01-serviceaccount.yaml";
pub(super) const FILE_TOPOLOGIES: &str = "platform/05-topologies.yaml";
pub(super) const FILE_FLAVORS: &str = "platform/10-resourceflavors.yaml";
pub(super) const FILE_PRIORITY: &str = "platform/15-workloadpriorityclasses.yaml";
pub(super) const FILE_PROVISIONING_CONFIGS: &str = "platform/17-provisioningrequestconfigs.yaml";
pub(super) const FILE_ADMISSION_CHECKS: &str = "platform/18-admissionchecks.yaml";
/// Before the ClusterQueues that name them (Kueue would make an empty Cohort up for a name
/// until the object comes).
pub(super) const FILE_COHORTS: &str = "platform/18-cohorts.yaml";
pub(super) const FILE_CLUSTER_QUEUES: &str = "platform/20-clusterqueues.yaml";
pub(super) const FILE_LOCAL_QUEUES: &str = "platform/30-localqueues.yaml";

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
pub(crate) fn platform_objects(p: &Profile) -> Vec<Object> {
    let ns = p.namespace.as_str();
    let mut ns_meta = meta(ns, None);
    // Kueue manages jobs only in namespaces its managedJobsNamespaceSelector selects: the
    // namespace raykueue creates carries the selector's labels (RK148 checks the rest).
    if let (Some(selector), Some(labels)) =
        (p.managed_jobs_selector(), ns_meta.labels.as_object_mut())
    {
        for (k, v) in &selector.match_labels {
            labels.insert(k.to_string(), json!(v));
        }
    }
    // The provider's identity wiring may need the namespace labelled (ACK's RRSA webhook).
    if let (Some(sa), Some(pr)) = (&p.service_account, p.cloud())
        && sa.workload_identity
        && pr.has_identity()
        && let Some(labels) = ns_meta.labels.as_object_mut()
    {
        for (k, v) in pr.identity_namespace_labels() {
            labels.insert((*k).to_owned(), json!(v));
        }
    }
    let mut out = vec![Object::data(
        "Namespace",
        ns,
        None,
        FILE_NAMESPACE,
        json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": ns_meta }),
    )];
    if let Some(sa) = &p.service_account {
        let mut m = meta(&sa.name, Some(ns));
        // The provider's workload-identity annotations: pinned values, or the placeholder
        // `up.sh` replaces.
        let ids = p
            .cloud()
            .map(crate::cloud::Cloud::identity_annotations)
            .unwrap_or_default();
        if sa.workload_identity && !ids.is_empty() {
            m.annotations = Some(
                ids.into_iter()
                    .map(|(k, v)| (k, v.unwrap_or_else(|| IDENTITY_PLACEHOLDER.to_owned())))
                    .collect(),
            );
        }
        out.push(Object::data(
            "ServiceAccount",
            sa.name.as_str(),
            Some(ns),
            FILE_SERVICE_ACCOUNT,
            json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": m }),
        ));
    }
    // Topologies before the flavors that name them, the checks' configurations before the
    // checks, and both before the ClusterQueues: each object finds what it refers to.
    out.extend(p.topologies.iter().map(topology));
    out.extend(p.flavors.iter().map(flavor));
    out.extend(p.priority_classes.iter().map(priority_class));
    out.extend(p.admission_checks.iter().map(provisioning_request_config));
    out.extend(p.admission_checks.iter().map(admission_check));
    if let Some(fleet) = p.managed_fleet() {
        out.extend(super::fleet::manager_objects(fleet));
    }
    if let Some(q) = &p.queues {
        let wide = crate::base::par::wide(p.items());
        out.extend(q.cohorts.iter().map(cohort));
        out.extend(crate::base::par::map(wide, &q.cluster_queues, |cq| {
            let mut o = cluster_queue(cq);
            if let Some(fleet) = p.managed_fleet() {
                super::fleet::dispatch(&mut o.value, fleet);
            }
            o
        }));
        out.extend(crate::base::par::map(wide, &q.local_queues, |lq| {
            local_queue(lq, ns)
        }));
    }
    if let Some(Role::Worker { frameworks, .. }) = &p.role {
        out.extend(super::fleet::worker_objects(p, frameworks));
    }
    out
}

/// A toleration as Kubernetes writes it (`operator` always explicit).
pub(super) fn toleration(t: &Toleration) -> Value {
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

/// Kueue's API group and version of every queue object.
const KUEUE_API: &str = "kueue.x-k8s.io/v1beta2";

fn flavor(f: &Flavor) -> Object {
    let mut spec = Map::new();
    if !f.node_labels.is_empty() {
        spec.insert("nodeLabels".into(), json!(f.node_labels));
    }
    if !f.node_taints.is_empty() {
        spec.insert(
            "nodeTaints".into(),
            f.node_taints.iter().map(Taint::to_json).collect(),
        );
    }
    if !f.tolerations.is_empty() {
        spec.insert(
            "tolerations".into(),
            f.tolerations.iter().map(toleration).collect(),
        );
    }
    put(&mut spec, "topologyName", f.topology_name.as_ref());
    Object::data(
        "ResourceFlavor",
        f.name.as_str(),
        None,
        FILE_FLAVORS,
        k8s(
            KUEUE_API,
            "ResourceFlavor",
            json!(meta(&f.name, None)),
            [("spec", Value::Object(spec))],
        ),
    )
}

/// A Kueue Topology: its levels' node labels, broadest first.
fn topology(t: &Topology) -> Object {
    let levels: Vec<Value> = t.levels.iter().map(|l| json!({ "nodeLabel": l })).collect();
    Object::data(
        "Topology",
        t.name.as_str(),
        None,
        FILE_TOPOLOGIES,
        k8s(
            KUEUE_API,
            "Topology",
            json!(meta(&t.name, None)),
            [("spec", json!({ "levels": levels }))],
        ),
    )
}

/// The ProvisioningRequestConfig of a ProvisioningRequest check (named as the check unless
/// the profile names it).
fn provisioning_request_config(a: &AdmissionCheck) -> Object {
    let pr = &a.provisioning_request;
    let mut spec = Map::new();
    spec.insert(
        "provisioningClassName".into(),
        json!(pr.provisioning_class_name),
    );
    if !pr.parameters.is_empty() {
        spec.insert("parameters".into(), json!(pr.parameters));
    }
    if !pr.managed_resources.is_empty() {
        spec.insert("managedResources".into(), json!(pr.managed_resources));
    }
    if let Some(r) = &pr.retry_strategy {
        let mut m = Map::new();
        put(&mut m, "backoffLimitCount", r.backoff_limit_count.as_ref());
        put(
            &mut m,
            "backoffBaseSeconds",
            r.backoff_base_seconds.as_ref(),
        );
        put(&mut m, "backoffMaxSeconds", r.backoff_max_seconds.as_ref());
        spec.insert("retryStrategy".into(), Value::Object(m));
    }
    put(
        &mut spec,
        "podSetMergePolicy",
        pr.pod_set_merge_policy.as_ref(),
    );
    Object::data(
        "ProvisioningRequestConfig",
        a.config_name(),
        None,
        FILE_PROVISIONING_CONFIGS,
        k8s(
            KUEUE_API,
            "ProvisioningRequestConfig",
            json!(meta(a.config_name(), None)),
            [("spec", Value::Object(spec))],
        ),
    )
}

/// The AdmissionCheck, run by Kueue's ProvisioningRequest controller with its
/// ProvisioningRequestConfig as parameters (kueue@v0.19.2
/// `apis/kueue/v1beta2/provisioningrequestconfig_types.go` `ProvisioningRequestControllerName`;
/// any other parameters leave the check inactive: `BadParametersRef`).
fn admission_check(a: &AdmissionCheck) -> Object {
    Object::data(
        "AdmissionCheck",
        a.name.as_str(),
        None,
        FILE_ADMISSION_CHECKS,
        k8s(
            KUEUE_API,
            "AdmissionCheck",
            json!(meta(&a.name, None)),
            [(
                "spec",
                json!({
                    "controllerName": "kueue.x-k8s.io/provisioning-request",
                    "parameters": {
                        "apiGroup": "kueue.x-k8s.io",
                        "kind": "ProvisioningRequestConfig",
                        "name": a.config_name(),
                    },
                }),
            )],
        ),
    )
}

/// `admissionChecksStrategy.admissionChecks`: the v1beta2 ClusterQueue has no plain list
/// (kueue@v0.19.2 `apis/kueue/v1beta2/clusterqueue_types.go` `AdmissionChecksStrategy`); a
/// check without `onFlavors` applies to every flavor.
fn admission_checks_strategy(checks: &[ClusterQueueCheck]) -> Value {
    let rules: Vec<Value> = checks
        .iter()
        .map(|c| {
            let mut m = Map::new();
            m.insert("name".into(), json!(c.name()));
            if !c.on_flavors().is_empty() {
                m.insert("onFlavors".into(), json!(c.on_flavors()));
            }
            Value::Object(m)
        })
        .collect();
    json!({ "admissionChecks": rules })
}

fn priority_class(pc: &PriorityClass) -> Object {
    // A WorkloadPriorityClass has no spec: value and description are top-level.
    let mut v = json!({
        "apiVersion": KUEUE_API,
        "kind": "WorkloadPriorityClass",
        "metadata": meta(&pc.name, None),
        "value": pc.value,
    });
    if let Some(d) = &pc.description {
        v["description"] = json!(d);
    }
    Object::data(
        "WorkloadPriorityClass",
        pc.name.as_str(),
        None,
        FILE_PRIORITY,
        v,
    )
}

/// `map[key] = value` unless the value is `None`.
fn put<T: Serialize>(map: &mut Map<String, Value>, key: &str, value: Option<&T>) {
    if let Some(v) = value {
        map.insert(key.to_owned(), json!(v));
    }
}

/// Resource groups as Kueue writes them (a ClusterQueue's and a Cohort's have one shape).
fn resource_groups(groups: &[ResourceGroup]) -> Vec<Value> {
    groups
        .iter()
        .map(|rg| {
            json!({
                "coveredResources": rg.covered_resources,
                "flavors": rg.flavors.iter().map(|f| json!({
                    "name": f.name,
                    "resources": f.resources.iter().map(|r| {
                        let mut q = Map::new();
                        q.insert("name".into(), json!(r.name));
                        q.insert("nominalQuota".into(), json!(r.nominal_quota));
                        put(&mut q, "borrowingLimit", r.borrowing_limit.as_ref());
                        put(&mut q, "lendingLimit", r.lending_limit.as_ref());
                        Value::Object(q)
                    }).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            })
        })
        .collect()
}

/// A Cohort object: its parent, the quota it holds itself and its fair-sharing weight.
fn cohort(c: &Cohort) -> Object {
    let mut spec = Map::new();
    put(&mut spec, "parentName", c.parent_name.as_ref());
    if !c.resource_groups.is_empty() {
        spec.insert(
            "resourceGroups".into(),
            Value::Array(resource_groups(&c.resource_groups)),
        );
    }
    if let Some(w) = &c.fair_sharing_weight {
        spec.insert("fairSharing".into(), json!({ "weight": w }));
    }
    Object::data(
        "Cohort",
        c.name.as_str(),
        None,
        FILE_COHORTS,
        k8s(
            KUEUE_API,
            "Cohort",
            json!(meta(&c.name, None)),
            [("spec", Value::Object(spec))],
        ),
    )
}

fn cluster_queue(cq: &ClusterQueue) -> Object {
    let groups = resource_groups(&cq.resource_groups);
    let mut spec = Map::new();
    put(&mut spec, "cohortName", cq.cohort_name.as_ref());
    // Always present: a ClusterQueue without a selector admits from no namespace.
    spec.insert(
        "namespaceSelector".into(),
        json!(cq.namespace_selector.clone().unwrap_or_default()),
    );
    spec.insert("queueingStrategy".into(), json!(cq.queueing_strategy));
    put(&mut spec, "preemption", cq.preemption.as_ref());
    put(
        &mut spec,
        "flavorFungibility",
        cq.flavor_fungibility.as_ref(),
    );
    put(&mut spec, "stopPolicy", cq.stop_policy.as_ref());
    if let Some(w) = &cq.fair_sharing_weight {
        spec.insert("fairSharing".into(), json!({ "weight": w }));
    }
    if !cq.admission_checks.is_empty() {
        spec.insert(
            "admissionChecksStrategy".into(),
            admission_checks_strategy(&cq.admission_checks),
        );
    }
    spec.insert("resourceGroups".into(), Value::Array(groups));
    Object::data(
        "ClusterQueue",
        cq.name.as_str(),
        None,
        FILE_CLUSTER_QUEUES,
        k8s(
            KUEUE_API,
            "ClusterQueue",
            json!(meta(&cq.name, None)),
            [("spec", Value::Object(spec))],
        ),
    )
}

fn local_queue(lq: &LocalQueue, default_ns: &str) -> Object {
    let ns = lq.namespace.as_ref().map_or(default_ns, |n| n.as_str());
    Object::data(
        "LocalQueue",
        lq.name.as_str(),
        Some(ns),
        FILE_LOCAL_QUEUES,
        json!({
            "apiVersion": KUEUE_API,
            "kind": "LocalQueue",
            "metadata": meta(&lq.name, Some(ns)),
            "spec": { "clusterQueue": lq.cluster_queue },
        }),
    )
}
