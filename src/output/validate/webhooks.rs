//! What Kueue v0.19.2's validating webhooks refuse on create, beyond the CRD schemas and their
//! CEL rules (which `walk`/`cel` check): `pkg/webhooks/{clusterqueue,cohort,resourceflavor}_webhook.go`
//! and `pkg/webhooks/common.go` for the queue kinds, and for RayJob, RayCluster and RayService their webhooks in
//! `pkg/controller/jobs/{rayjob,raycluster,rayservice}/` with the shared job rules of
//! `pkg/controller/jobframework/{validation,tas_validation}.go`. LocalQueue and
//! WorkloadPriorityClass have no validating webhook at v0.19.2 (`pkg/webhooks/webhooks.go`).
//!
//! Feature gates are taken at their v0.19.2 defaults: `TopologyAwareScheduling`,
//! `TASMultiLayerTopology`, `ElasticJobsViaWorkloadSlices`, `AdmissionGatedBy` and
//! `WorkloadIdentifierAnnotations` on, `ConcurrentAdmission` off. A rule the CRD's CEL rules
//! already enforce (a ClusterQueue `borrowingLimit` without a cohort, `preference` with
//! fungibility other than TryNextFlavor, `reclaimWithinCohort: Never` with borrowing) is left to
//! them, so one mistake is reported once. KubeRay's own controller checks are `kuberay`'s.

use super::Check;
use super::meta::{dns1123_subdomain, label_value, qualified_name};
use super::walk::{Walker, short};
use crate::base::pointer::pointer_push;
use crate::profile::Quantity;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Label that hands a job to Kueue.
pub(crate) const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// Annotation that makes a Ray job elastic (in-tree autoscaling allowed).
const ELASTIC: &str = "kueue.x-k8s.io/elastic-job";
pub(crate) use crate::profile::{MAX_POD_SETS, max_worker_groups};

/// Whether a RayJob's spec gives Kueue a submitter PodSet: `submissionMode` K8sJobMode, the
/// default.
fn has_submitter_pod_set(spec: &Value) -> bool {
    spec.get("submissionMode")
        .and_then(Value::as_str)
        .is_none_or(|m| m == "K8sJobMode")
}

pub(crate) fn run(w: &mut Walker, kind: &str, root: &Map<String, Value>) {
    let spec = root.get("spec").filter(|s| s.is_object());
    match (kind, spec) {
        ("ClusterQueue", Some(spec)) => cluster_queue(w, spec),
        ("Cohort", Some(spec)) => cohort(w, spec),
        ("ResourceFlavor", Some(spec)) => resource_flavor(w, spec),
        ("RayJob", _) => ray_job(w, root),
        ("RayCluster", _) => {
            if managed(root)
                && let Some(spec) = spec
            {
                ray_cluster(w, root, spec);
            }
            job_on_create(w, root);
            topology_of_cluster(w, spec, "/spec");
        }
        ("RayService", _) => {
            let cluster = spec.and_then(|s| s.get("rayClusterConfig"));
            if managed(root)
                && let Some(cluster) = cluster
            {
                cluster_create(w, root, cluster, "/spec/rayClusterConfig", false);
            }
            job_on_create(w, root);
            topology_of_cluster(w, cluster, "/spec/rayClusterConfig");
        }
        _ => {}
    }
}

fn report(w: &mut Walker, at: &str, message: &str) {
    w.report(
        Check::Admission,
        at,
        format!("{message} (Kueue admission webhook)"),
        None,
    );
}

/// Kueue manages a Ray object when it names a LocalQueue (the default configuration,
/// `manageJobsWithoutQueueName: false`, leaves objects without the label alone).
fn managed(root: &Map<String, Value>) -> bool {
    labels(root).and_then(|l| l.get(QUEUE_LABEL)).is_some()
}

fn labels(root: &Map<String, Value>) -> Option<&Map<String, Value>> {
    root.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object)
}

fn quantity(v: &Value) -> Option<Result<Quantity, String>> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(Quantity::parse(&text).map_err(|e| e.to_string()))
}

fn items<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

/// Which queue kind holds the resource groups: the rules differ a little.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Holder {
    /// A ClusterQueue: limits need `cohortName`; `lendingLimit` ≤ `nominalQuota`.
    ClusterQueue,
    /// A Cohort: limits need `parentName`; a lending limit may exceed the quota.
    Cohort,
}

fn cluster_queue(w: &mut Walker, spec: &Value) {
    let has_cohort = spec
        .get("cohortName")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty());
    let groups = items(spec, "resourceGroups");
    resource_groups(w, groups, has_cohort, Holder::ClusterQueue);
    if let Some(selector) = spec.get("namespaceSelector") {
        label_selector(w, selector, "/spec/namespaceSelector");
    }
    fair_sharing(w, spec);
    let flavors: Vec<&str> = groups
        .iter()
        .flat_map(|g| items(g, "flavors"))
        .filter_map(|f| f.get("name").and_then(Value::as_str))
        .collect();
    let checks = spec
        .get("admissionChecksStrategy")
        .map_or(&[][..], |s| items(s, "admissionChecks"));
    for (i, check) in checks.iter().enumerate() {
        for (j, f) in items(check, "onFlavors").iter().enumerate() {
            if let Some(name) = f.as_str()
                && !flavors.contains(&name)
            {
                report(
                    w,
                    &format!("/spec/admissionChecksStrategy/admissionChecks/{i}/onFlavors/{j}"),
                    &format!(
                        "onFlavors names `{name}`, which is no flavor of this ClusterQueue (supported: {})",
                        flavors.join(", ")
                    ),
                );
            }
        }
    }
}

fn cohort(w: &mut Walker, spec: &Value) {
    let has_parent = spec
        .get("parentName")
        .and_then(Value::as_str)
        .is_some_and(|p| !p.is_empty());
    resource_groups(w, items(spec, "resourceGroups"), has_parent, Holder::Cohort);
    fair_sharing(w, spec);
}

/// `validateFairSharing`: a weight is ≥ 0, and when not 0 larger than 1n.
fn fair_sharing(w: &mut Walker, spec: &Value) {
    let Some(weight) = spec.get("fairSharing").and_then(|f| f.get("weight")) else {
        return;
    };
    match quantity(weight) {
        Some(Err(e)) => report(
            w,
            "/spec/fairSharing/weight",
            &format!("fairSharing.weight: {e}; it must be >= 0"),
        ),
        Some(Ok(q)) if q.nanos() > 0 && q.nanos() <= 1 => report(
            w,
            "/spec/fairSharing/weight",
            &format!("fairSharing.weight {q}: when not 0, a weight must be larger than 1n"),
        ),
        _ => {}
    }
}

/// `validateResourceGroups` with the totals of `validateClusterQueueSpec`.
fn resource_groups(w: &mut Walker, groups: &[Value], has_parent: bool, holder: Holder) {
    let mut resource_group: BTreeMap<&str, usize> = BTreeMap::new();
    let mut flavor_group: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut total_flavors, mut total_covered) = (0, 0);
    for (g, group) in groups.iter().enumerate() {
        let gp = format!("/spec/resourceGroups/{g}");
        let covered: Vec<&str> = items(group, "coveredResources")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        total_covered += covered.len();
        for (i, r) in covered.iter().enumerate() {
            let at = format!("{gp}/coveredResources/{i}");
            if let Some(p) = qualified_name(r) {
                report(
                    w,
                    &at,
                    &format!("resource name `{r}` is not a qualified name: {p}"),
                );
            }
            if let Some(first) = resource_group.insert(r, g) {
                report(
                    w,
                    &at,
                    &format!(
                        "resource `{r}` is already covered by resourceGroups[{first}]; a resource may be covered once"
                    ),
                );
            }
        }
        let flavors = items(group, "flavors");
        total_flavors += flavors.len();
        let combinations: usize = flavors.iter().map(|f| items(f, "resources").len()).sum();
        if combinations > MAX_FLAVOR_RESOURCES_PER_GROUP {
            report(
                w,
                &gp,
                &format!(
                    "{combinations} flavor-resource combinations in one resource group; at most {MAX_FLAVOR_RESOURCES_PER_GROUP}"
                ),
            );
        }
        for (f, flavor) in flavors.iter().enumerate() {
            let fp = format!("{gp}/flavors/{f}");
            // A flavor twice in one group is the schema's (a list keyed by name).
            if let Some(name) = flavor.get("name").and_then(Value::as_str)
                && let Some(first) = flavor_group.insert(name, g)
                && first != g
            {
                report(
                    w,
                    &format!("{fp}/name"),
                    &format!(
                        "flavor `{name}` is already in resourceGroups[{first}]; a flavor may be in one group only"
                    ),
                );
            }
            for (i, res) in items(flavor, "resources").iter().enumerate() {
                // The webhook reads only as many resources as are covered; the CEL rule on the
                // group reports a different count.
                let Some(want) = covered.get(i) else { break };
                let rp = format!("{fp}/resources/{i}");
                let name = res.get("name").and_then(Value::as_str).unwrap_or_default();
                if *want != name {
                    report(
                        w,
                        &format!("{rp}/name"),
                        &format!(
                            "resource {} must be `{want}`: each flavor lists coveredResources in the same order",
                            short(&Value::from(name))
                        ),
                    );
                }
                resource_limits(w, res, &rp, has_parent, holder);
            }
        }
    }
    for (total, what) in [
        (total_flavors, "flavors"),
        (total_covered, "covered resources"),
    ] {
        if total > MAX_TOTAL_PER_QUEUE {
            report(
                w,
                "/spec/resourceGroups",
                &format!("{total} {what} across all resourceGroups; at most {MAX_TOTAL_PER_QUEUE}"),
            );
        }
    }
}

/// `validateTotalFlavors`, `validateTotalCoveredResources`.
const MAX_TOTAL_PER_QUEUE: usize = 256;
/// `validateFlavorResourceCombinations`.
const MAX_FLAVOR_RESOURCES_PER_GROUP: usize = 512;

fn resource_limits(w: &mut Walker, res: &Value, rp: &str, has_parent: bool, holder: Holder) {
    let mut parsed = BTreeMap::new();
    for field in ["nominalQuota", "borrowingLimit", "lendingLimit"] {
        match res.get(field).and_then(quantity) {
            Some(Ok(q)) => {
                parsed.insert(field, q);
            }
            Some(Err(e)) => report(
                w,
                &format!("{rp}/{field}"),
                &format!("{field}: {e}; it must be a quantity >= 0"),
            ),
            None => {}
        }
    }
    if holder == Holder::ClusterQueue
        && let (Some(lend), Some(nominal)) =
            (parsed.get("lendingLimit"), parsed.get("nominalQuota"))
        && lend > nominal
    {
        report(
            w,
            &format!("{rp}/lendingLimit"),
            &format!("lendingLimit {lend} is larger than nominalQuota {nominal}"),
        );
    }
    // A ClusterQueue's borrowingLimit without a cohort is refused by a CEL rule already.
    let limits: &[&str] = match holder {
        Holder::ClusterQueue => &["lendingLimit"],
        Holder::Cohort => &["borrowingLimit", "lendingLimit"],
    };
    let parent = match holder {
        Holder::ClusterQueue => "cohortName",
        Holder::Cohort => "parentName",
    };
    for field in limits {
        if !has_parent && res.get(*field).is_some_and(|v| !v.is_null()) {
            report(
                w,
                &format!("{rp}/{field}"),
                &format!("{field} is allowed only when {parent} is set"),
            );
        }
    }
}

/// `metav1validation.ValidateLabelSelector` (no options).
fn label_selector(w: &mut Walker, selector: &Value, at: &str) {
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            let kp = pointer_push(&format!("{at}/matchLabels"), k);
            if let Some(p) = qualified_name(k) {
                report(w, &kp, &format!("matchLabels key `{k}` is invalid: {p}"));
            }
            if let Some(p) = v.as_str().and_then(label_value) {
                report(
                    w,
                    &kp,
                    &format!("matchLabels value {} is invalid: {p}", short(v)),
                );
            }
        }
    }
    for (i, e) in items(selector, "matchExpressions").iter().enumerate() {
        let ep = format!("{at}/matchExpressions/{i}");
        let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
        if let Some(p) = qualified_name(key) {
            report(
                w,
                &format!("{ep}/key"),
                &format!("key `{key}` is invalid: {p}"),
            );
        }
        let values = items(e, "values");
        match e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "In" | "NotIn" if values.is_empty() => report(
                w,
                &format!("{ep}/values"),
                "values must be non-empty when operator is In or NotIn",
            ),
            "Exists" | "DoesNotExist" if !values.is_empty() => report(
                w,
                &format!("{ep}/values"),
                "values must be empty when operator is Exists or DoesNotExist",
            ),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => report(
                w,
                &format!("{ep}/operator"),
                &format!("operator `{op}` is not one of In, NotIn, Exists, DoesNotExist"),
            ),
        }
        for (j, v) in values.iter().enumerate() {
            if let Some(p) = v.as_str().and_then(label_value) {
                report(
                    w,
                    &format!("{ep}/values/{j}"),
                    &format!("value {} is invalid: {p}", short(v)),
                );
            }
        }
    }
}

/// `ValidateResourceFlavor`: node labels, taints and tolerations as the core API has them.
fn resource_flavor(w: &mut Walker, spec: &Value) {
    if let Some(labels) = spec.get("nodeLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            let kp = pointer_push("/spec/nodeLabels", k);
            if let Some(p) = qualified_name(k) {
                report(w, &kp, &format!("node label key `{k}` is invalid: {p}"));
            }
            if let Some(p) = v.as_str().and_then(label_value) {
                report(
                    w,
                    &kp,
                    &format!("node label value {} is invalid: {p}", short(v)),
                );
            }
        }
    }
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (i, t) in items(spec, "nodeTaints").iter().enumerate() {
        let tp = format!("/spec/nodeTaints/{i}");
        let key = t.get("key").and_then(Value::as_str).unwrap_or_default();
        let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
        if let Some(p) = qualified_name(key) {
            report(
                w,
                &format!("{tp}/key"),
                &format!("taint key `{key}` is invalid: {p}"),
            );
        }
        if let Some(v) = t.get("value").and_then(Value::as_str)
            && let Some(p) = label_value(v)
        {
            report(
                w,
                &format!("{tp}/value"),
                &format!("taint value `{v}` is invalid: {p}"),
            );
        }
        if seen.contains(&(key, effect)) {
            report(
                w,
                &tp,
                &format!(
                    "taint `{key}:{effect}` is there twice: taints must be unique by key and effect"
                ),
            );
        } else {
            seen.push((key, effect));
        }
    }
    for (i, t) in items(spec, "tolerations").iter().enumerate() {
        if let Some(key) = t
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            && let Some(p) = qualified_name(key)
        {
            report(
                w,
                &format!("/spec/tolerations/{i}/key"),
                &format!("toleration key `{key}` is invalid: {p}"),
            );
        }
    }
}

/// The RayJob webhook (`validateCreate`).
fn ray_job(w: &mut Walker, root: &Map<String, Value>) {
    let spec = root.get("spec").filter(|s| s.is_object());
    let cluster = spec
        .and_then(|s| s.get("rayClusterSpec"))
        .filter(|c| !c.is_null());
    if managed(root)
        && let Some(spec) = spec
    {
        let selector = spec
            .get("clusterSelector")
            .and_then(Value::as_object)
            .is_some_and(|s| !s.is_empty());
        match (selector, cluster) {
            (true, Some(_)) => {
                report(
                    w,
                    "/spec/clusterSelector",
                    "clusterSelector together with rayClusterSpec: a queued RayJob must not use an existing cluster",
                );
                return;
            }
            (true, None) => {
                // Accepted: Kueue leaves such a job alone (`Skip`), without checking more.
                w.report(
                    Check::Unmanaged,
                    "/spec/clusterSelector",
                    format!(
                        "Kueue accepts a RayJob with label `{QUEUE_LABEL}` and clusterSelector but does not manage it: its defaulting webhook suspends it, nothing ever admits it, and KubeRay refuses a suspended clusterSelector RayJob (ValidationFailed)"
                    ),
                    Some(format!(
                        "remove the `{QUEUE_LABEL}` label to run it on the existing cluster unqueued, or give it a rayClusterSpec (and no clusterSelector) to queue it"
                    )),
                );
                return;
            }
            (false, None) => {
                report(
                    w,
                    "/spec/rayClusterSpec",
                    &format!(
                        "a RayJob with label `{QUEUE_LABEL}` must have spec.rayClusterSpec (or use an existing cluster via clusterSelector, unqueued)"
                    ),
                );
                return;
            }
            (false, Some(cluster)) => {
                if spec.get("shutdownAfterJobFinishes") != Some(&Value::Bool(true)) {
                    report(
                        w,
                        "/spec/shutdownAfterJobFinishes",
                        "a RayJob queued by Kueue must set shutdownAfterJobFinishes: true",
                    );
                }
                cluster_create(
                    w,
                    root,
                    cluster,
                    "/spec/rayClusterSpec",
                    has_submitter_pod_set(spec),
                );
            }
        }
    }
    job_on_create(w, root);
    topology_of_cluster(w, cluster, "/spec/rayClusterSpec");
}

/// The RayCluster webhook: elastic clusters carry Kueue's scheduling gate; otherwise the
/// common `ValidateCreate` rules.
fn ray_cluster(w: &mut Walker, root: &Map<String, Value>, spec: &Value) {
    if elastic(root) {
        let gate = |template: Option<&Value>| {
            template
                .and_then(|t| t.get("spec"))
                .map_or(&[][..], |s| items(s, "schedulingGates"))
                .iter()
                .any(|g| g.get("name").and_then(Value::as_str) == Some(ELASTIC_GATE))
        };
        for (i, g) in items(spec, "workerGroupSpecs").iter().enumerate() {
            if !gate(g.get("template")) {
                report(
                    w,
                    &format!("/spec/workerGroupSpecs/{i}/template/spec/schedulingGates"),
                    &format!(
                        "an elastic RayCluster's pods must have the scheduling gate `{ELASTIC_GATE}`"
                    ),
                );
            }
        }
        if !gate(spec.get("headGroupSpec").and_then(|h| h.get("template"))) {
            report(
                w,
                "/spec/headGroupSpec/template/spec/schedulingGates",
                &format!(
                    "an elastic RayCluster's pods must have the scheduling gate `{ELASTIC_GATE}`"
                ),
            );
        }
        if spec.get("enableInTreeAutoscaling") == Some(&Value::Bool(true))
            && spec.get("managedBy").and_then(Value::as_str) == Some("kueue.x-k8s.io/multikueue")
        {
            report(
                w,
                "/spec/enableInTreeAutoscaling",
                "in-tree autoscaling is not supported for a MultiKueue-managed elastic RayCluster",
            );
        }
        group_rules(w, spec, "/spec", false);
    } else {
        cluster_create(w, root, spec, "/spec", false);
    }
}

/// Kueue's scheduling gate on the pods of an elastic job (`kueue.ElasticJobSchedulingGate`).
const ELASTIC_GATE: &str = "kueue.x-k8s.io/elastic-job";

fn elastic(root: &Map<String, Value>) -> bool {
    root.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(ELASTIC))
        .and_then(Value::as_str)
        == Some("true")
}

/// `raycluster.ValidateCreate` on a RayClusterSpec of a queued object.
fn cluster_create(
    w: &mut Walker,
    root: &Map<String, Value>,
    spec: &Value,
    at: &str,
    submitter: bool,
) {
    if spec.get("enableInTreeAutoscaling") == Some(&Value::Bool(true)) && !elastic(root) {
        report(
            w,
            &format!("{at}/enableInTreeAutoscaling"),
            &format!(
                "in-tree autoscaling is allowed only for elastic jobs (annotation `{ELASTIC}: \"true\"`)"
            ),
        );
    }
    group_rules(w, spec, at, submitter);
}

/// The worker-group rules: no group named `head`, and no more groups than a Workload has
/// PodSets for.
fn group_rules(w: &mut Walker, spec: &Value, at: &str, submitter: bool) {
    let groups = items(spec, "workerGroupSpecs");
    let webhook_max = max_worker_groups(false);
    if groups.len() > webhook_max {
        report(
            w,
            &format!("{at}/workerGroupSpecs"),
            &format!(
                "{} worker groups; Kueue allows at most {webhook_max} (a Workload holds {MAX_POD_SETS} PodSets, one is the head's)",
                groups.len()
            ),
        );
    } else if groups.len() > max_worker_groups(submitter) {
        w.report(
            Check::KueueWorkload,
            &format!("{at}/workerGroupSpecs"),
            format!(
                "{} worker groups: Kueue's webhook accepts them, but with the head and the K8sJobMode submitter that is {} PodSets, more than the {MAX_POD_SETS} a Workload holds, so Kueue cannot create its Workload and the job stays suspended",
                groups.len(),
                groups.len() + 2
            ),
            Some(format!(
                "use at most {} worker groups, or submissionMode HTTPMode (no submitter pod)",
                max_worker_groups(true)
            )),
        );
    }
    for (i, g) in groups.iter().enumerate() {
        if g.get("groupName").and_then(Value::as_str) == Some("head") {
            report(
                w,
                &format!("{at}/workerGroupSpecs/{i}/groupName"),
                "a worker group must not be named `head`: that is the name of Kueue's head pod set",
            );
        }
    }
}

/// Label, or annotation (`WorkloadIdentifierAnnotations`, on by default), naming a prebuilt
/// Workload.
const PREBUILT_WORKLOAD: &str = "kueue.x-k8s.io/prebuilt-workload-name";
/// Annotation listing the gates that hold admission (`AdmissionGatedBy`, on by default).
const ADMISSION_GATED_BY: &str = "kueue.x-k8s.io/admission-gated-by";
/// `MaxGateNameLengthForAdmissionGatedBy`.
const MAX_GATE_NAME: usize = 63;
const MAX_EXEC_TIME_LABEL: &str = "kueue.x-k8s.io/max-exec-time-seconds";

/// `jobframework.ValidateJobOnCreate`: label and annotation values that must name objects, be
/// numbers, or list admission gates.
fn job_on_create(w: &mut Walker, root: &Map<String, Value>) {
    let annotations = root
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object);
    let annotation = |k: &str| annotations.and_then(|a| a.get(k)).and_then(Value::as_str);
    let label = |k: &str| labels(root).and_then(|l| l.get(k)).and_then(Value::as_str);
    let mut names = vec![("labels", QUEUE_LABEL, label(QUEUE_LABEL))];
    // A prebuilt Workload is named by the annotation when it is set, else by the label.
    match annotation(PREBUILT_WORKLOAD).filter(|v| !v.is_empty()) {
        Some(v) => names.push(("annotations", PREBUILT_WORKLOAD, Some(v))),
        None => names.push(("labels", PREBUILT_WORKLOAD, label(PREBUILT_WORKLOAD))),
    }
    for (field, key, value) in names {
        if let Some(v) = value
            && let Some(p) = dns1123_subdomain(v)
        {
            report(
                w,
                &pointer_push(&format!("/metadata/{field}"), key),
                &format!(
                    "`{key}` value {} must name an object: {p}",
                    short(&Value::from(v))
                ),
            );
        }
    }
    if let Some(v) = label(MAX_EXEC_TIME_LABEL) {
        let problem = match v.parse::<i64>() {
            Ok(n) if n <= 0 => Some("should be greater than 0"),
            Ok(_) => None,
            Err(_) => Some("is not an integer"),
        };
        if let Some(p) = problem {
            report(
                w,
                &pointer_push("/metadata/labels", MAX_EXEC_TIME_LABEL),
                &format!("label `{MAX_EXEC_TIME_LABEL}` value `{v}` {p}"),
            );
        }
    }
    if let Some(v) = annotation(ADMISSION_GATED_BY).filter(|v| !v.trim().is_empty()) {
        let at = pointer_push("/metadata/annotations", ADMISSION_GATED_BY);
        let mut seen = Vec::new();
        for gate in v.split(',').map(str::trim) {
            let problem = if gate.is_empty() {
                Some("an empty gate name".to_owned())
            } else if seen.contains(&gate) {
                Some(format!("gate `{gate}` twice"))
            } else if let Some(p) = domain_prefixed_path(gate) {
                Some(format!("gate `{gate}`: {p}"))
            } else if gate.len() > MAX_GATE_NAME {
                Some(format!(
                    "gate `{gate}` is longer than {MAX_GATE_NAME} characters"
                ))
            } else {
                None
            };
            seen.push(gate);
            if let Some(p) = problem {
                report(w, &at, &format!("`{ADMISSION_GATED_BY}` has {p}"));
            }
        }
    }
}

/// `validation.IsDomainPrefixedPath`: `example.com/path`, the domain an RFC 1123 subdomain.
fn domain_prefixed_path(s: &str) -> Option<String> {
    let Some((host, path)) = s
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        return Some("must be a domain-prefixed path (such as `acme.io/foo`)".to_owned());
    };
    if let Some(p) = dns1123_subdomain(host) {
        return Some(format!("domain {p}"));
    }
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    (!path.chars().all(path_char)).then(|| format!("`{path}` is not a valid path"))
}

const REQUIRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-required-topology";
const PREFERRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-preferred-topology";
const UNCONSTRAINED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-unconstrained-topology";
const SLICE_REQUIRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-slice-required-topology";
const SLICE_SIZE: &str = "kueue.x-k8s.io/podset-slice-size";
const POD_SET_GROUP_NAME: &str = "kueue.x-k8s.io/podset-group-name";
/// Multi-layer slices (`TASMultiLayerTopology`, on by default in v0.19.2).
const SLICE_CONSTRAINTS: &str = "kueue.x-k8s.io/podset-slice-required-topology-constraints";

/// `validateSliceRequiredTopologyConstraintsAnnotation` with the first layer's bound from
/// `ValidateSliceSizeAnnotationUpperBound`: a JSON list of 1 to 3 `{topology, size}` layers,
/// coarsest first, topologies distinct label names, sizes ≥ 1, each dividing the one above.
fn slice_constraints(w: &mut Walker, text: &str, at: &str, count: i64) {
    let layers: Result<Vec<(String, i64)>, String> = serde_json::from_str::<Value>(text)
        .map_err(|e| e.to_string())
        .and_then(|v| match v {
            Value::Array(items) => items
                .iter()
                .map(|item| {
                    let topology = match item.get("topology") {
                        None | Some(Value::Null) => String::new(),
                        Some(Value::String(s)) => s.clone(),
                        Some(_) => return Err("`topology` must be a string".to_owned()),
                    };
                    let size = match item.get("size") {
                        None | Some(Value::Null) => 0,
                        Some(n) => n
                            .as_i64()
                            .filter(|n| i32::try_from(*n).is_ok())
                            .ok_or("`size` must be a 32-bit integer")?,
                    };
                    if item.is_object() {
                        Ok((topology, size))
                    } else {
                        Err("each layer must be an object".to_owned())
                    }
                })
                .collect(),
            _ => Err("not a JSON array".to_owned()),
        });
    let layers = match layers {
        Ok(l) => l,
        Err(e) => {
            report(
                w,
                at,
                &format!("`{SLICE_CONSTRAINTS}` must be a valid JSON array: {e}"),
            );
            return;
        }
    };
    if layers.is_empty() || layers.len() > 3 {
        report(
            w,
            at,
            &format!(
                "`{SLICE_CONSTRAINTS}` must have 1 to 3 layers, not {}",
                layers.len()
            ),
        );
        return;
    }
    for (i, (topology, size)) in layers.iter().enumerate() {
        if let Some(p) = qualified_name(topology) {
            report(
                w,
                at,
                &format!("layer {i}: topology `{topology}` must be a label name: {p}"),
            );
        }
        if *size < 1 {
            report(
                w,
                at,
                &format!("layer {i}: size must be at least 1, not {size}"),
            );
        }
        if let Some(first) = layers[..i].iter().position(|l| l.0 == *topology) {
            report(
                w,
                at,
                &format!("layer {i}: topology `{topology}` is also layer {first}"),
            );
        }
        if i > 0 && *size > 0 && layers[i - 1].1 % size != 0 {
            report(
                w,
                at,
                &format!(
                    "layer {i}: size {size} must evenly divide the size {} of the layer above",
                    layers[i - 1].1
                ),
            );
        }
    }
    if layers[0].1 > count {
        report(
            w,
            at,
            &format!(
                "the first layer's size {} must not be greater than the pod count {count} of this template",
                layers[0].1
            ),
        );
    }
}

/// The topology annotations of every pod template of a RayClusterSpec at `at`, one by one and
/// then the PodSet groups they form.
fn topology_of_cluster(w: &mut Walker, spec: Option<&Value>, at: &str) {
    let Some(spec) = spec.filter(|s| s.is_object()) else {
        return;
    };
    // (PodSet count, template, its pointer) of the head and each worker group.
    let mut templates = Vec::new();
    if let Some(t) = spec.get("headGroupSpec").and_then(|h| h.get("template")) {
        templates.push((1, t, format!("{at}/headGroupSpec/template")));
    }
    for (i, g) in items(spec, "workerGroupSpecs").iter().enumerate() {
        if let Some(t) = g.get("template") {
            templates.push((
                pod_count(g),
                t,
                format!("{at}/workerGroupSpecs/{i}/template"),
            ));
        }
    }
    for (count, t, tp) in &templates {
        topology(w, t, tp, *count);
    }
    pod_set_groups(w, &templates);
}

fn annotations_of(template: &Value) -> Option<&Map<String, Value>> {
    template
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
}

/// A pod template that joins a PodSet group.
struct Member<'v> {
    group: &'v str,
    count: i64,
    /// The topology request: (required, preferred), one of them set.
    request: (Option<&'v str>, Option<&'v str>),
    annotations_at: String,
}

/// `jobframework.ValidatePodSetGroupingTopology`: a `podset-group-name` (counted only beside a
/// required or preferred topology) joins exactly two PodSets, one of them of a single pod,
/// that ask for the same topology the same way.
fn pod_set_groups(w: &mut Walker, templates: &[(i64, &Value, String)]) {
    let mut members = Vec::new();
    for (count, t, tp) in templates {
        let Some(a) = annotations_of(t) else { continue };
        let get = |k: &str| a.get(k).and_then(Value::as_str);
        // `Build` takes the required topology over the preferred one.
        let request = match (get(REQUIRED_TOPOLOGY), get(PREFERRED_TOPOLOGY)) {
            (Some(r), _) => (Some(r), None),
            (None, Some(p)) => (None, Some(p)),
            (None, None) => continue,
        };
        if let Some(group) = get(POD_SET_GROUP_NAME) {
            members.push(Member {
                group,
                count: *count,
                request,
                annotations_at: format!("{tp}/metadata/annotations"),
            });
        }
    }
    let mut done: Vec<&str> = Vec::new();
    for m in &members {
        let group = m.group;
        if done.contains(&group) {
            continue;
        }
        done.push(group);
        let in_group: Vec<&Member> = members.iter().filter(|o| o.group == group).collect();
        let name_at = |m: &Member| pointer_push(&m.annotations_at, POD_SET_GROUP_NAME);
        let [a, b] = in_group[..] else {
            for o in &in_group {
                report(
                    w,
                    &name_at(o),
                    &format!(
                        "PodSet group `{group}` has {} pod set(s); a group holds exactly 2",
                        in_group.len()
                    ),
                );
            }
            continue;
        };
        if a.count != 1 && b.count != 1 {
            for o in [a, b] {
                report(
                    w,
                    &name_at(o),
                    &format!(
                        "PodSet group `{group}` needs one pod set of a single pod, not {} and {}",
                        a.count, b.count
                    ),
                );
            }
        }
        if a.request != b.request {
            for o in [a, b] {
                report(
                    w,
                    &o.annotations_at,
                    &format!(
                        "the pod sets of group `{group}` must ask for the same topology with the same annotation (`{REQUIRED_TOPOLOGY}` or `{PREFERRED_TOPOLOGY}`)"
                    ),
                );
            }
        }
    }
}

/// A worker group's PodSet count (`effectiveWorkerCount`): `replicas` (the CRD defaults it to
/// 0) times `numOfHosts` when that is above 1.
fn pod_count(group: &Value) -> i64 {
    let replicas = group.get("replicas").and_then(Value::as_i64).unwrap_or(0);
    let hosts = group.get("numOfHosts").and_then(Value::as_i64).unwrap_or(1);
    if hosts > 1 {
        replicas.saturating_mul(hosts)
    } else {
        replicas
    }
}

/// `jobframework.ValidateTASPodSetRequest` (and `ValidateSliceSizeAnnotationUpperBound`, with
/// the template's PodSet `count`) on one pod template (TopologyAwareScheduling is on
/// by default in v0.19.2), with the multi-layer slice annotation.
fn topology(w: &mut Walker, template: &Value, at: &str, count: i64) {
    let Some(a) = template
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object)
    else {
        return;
    };
    let ap = format!("{at}/metadata/annotations");
    let get = |k: &str| a.get(k).and_then(Value::as_str);
    let has = |k: &str| a.contains_key(k);
    let kp = |k: &str| pointer_push(&ap, k);
    let levels = [
        REQUIRED_TOPOLOGY,
        PREFERRED_TOPOLOGY,
        UNCONSTRAINED_TOPOLOGY,
    ];
    if levels.iter().filter(|k| has(k)).count() > 1 {
        report(
            w,
            &ap,
            &format!(
                "a pod template may carry one topology annotation only: `{REQUIRED_TOPOLOGY}`, `{PREFERRED_TOPOLOGY}` or `{UNCONSTRAINED_TOPOLOGY}`"
            ),
        );
    }
    for key in [
        REQUIRED_TOPOLOGY,
        PREFERRED_TOPOLOGY,
        SLICE_REQUIRED_TOPOLOGY,
    ] {
        if let Some(v) = get(key)
            && let Some(p) = qualified_name(v)
        {
            report(
                w,
                &kp(key),
                &format!("`{key}` must name a node label, not `{v}`: {p}"),
            );
        }
    }
    if let Some(group) = get(POD_SET_GROUP_NAME) {
        let gp = kp(POD_SET_GROUP_NAME);
        if group.parse::<u64>().is_ok() {
            report(
                w,
                &gp,
                &format!("`{POD_SET_GROUP_NAME}` must not be a number"),
            );
        }
        for other in [SLICE_SIZE, SLICE_REQUIRED_TOPOLOGY] {
            if has(other) {
                report(
                    w,
                    &gp,
                    &format!("`{POD_SET_GROUP_NAME}` may not be set when `{other}` is"),
                );
            }
        }
        if !has(REQUIRED_TOPOLOGY) && !has(PREFERRED_TOPOLOGY) {
            report(
                w,
                &gp,
                &format!(
                    "`{POD_SET_GROUP_NAME}` needs `{REQUIRED_TOPOLOGY}` or `{PREFERRED_TOPOLOGY}`"
                ),
            );
        }
    }
    if let Some(v) = get(UNCONSTRAINED_TOPOLOGY)
        && !matches!(
            v,
            "1" | "t"
                | "T"
                | "TRUE"
                | "true"
                | "True"
                | "0"
                | "f"
                | "F"
                | "FALSE"
                | "false"
                | "False"
        )
    {
        report(
            w,
            &kp(UNCONSTRAINED_TOPOLOGY),
            &format!("`{UNCONSTRAINED_TOPOLOGY}` must be a boolean, not `{v}`"),
        );
    }
    if let Some(v) = get(SLICE_SIZE) {
        match v.parse::<i32>() {
            Err(_) => report(
                w,
                &kp(SLICE_SIZE),
                &format!("`{SLICE_SIZE}` must be a number, not `{v}`"),
            ),
            Ok(n) if i64::from(n) > count => report(
                w,
                &kp(SLICE_SIZE),
                &format!(
                    "`{SLICE_SIZE}` {n} must not be greater than the pod count {count} of this template"
                ),
            ),
            Ok(n) if n < 1 => report(
                w,
                &kp(SLICE_SIZE),
                &format!("`{SLICE_SIZE}` must be at least 1, not {n}"),
            ),
            Ok(_) => {}
        }
    }
    if let Some(v) = get(SLICE_CONSTRAINTS) {
        slice_constraints(w, v, &kp(SLICE_CONSTRAINTS), count);
        for other in [SLICE_REQUIRED_TOPOLOGY, SLICE_SIZE] {
            if has(other) {
                report(
                    w,
                    &kp(SLICE_CONSTRAINTS),
                    &format!("`{SLICE_CONSTRAINTS}` may not be set when `{other}` is"),
                );
            }
        }
        if has(POD_SET_GROUP_NAME) {
            report(
                w,
                &kp(POD_SET_GROUP_NAME),
                &format!("`{POD_SET_GROUP_NAME}` may not be set when `{SLICE_CONSTRAINTS}` is"),
            );
        }
    }
    match (has(SLICE_REQUIRED_TOPOLOGY), has(SLICE_SIZE)) {
        (true, false) => report(
            w,
            &kp(SLICE_SIZE),
            &format!("`{SLICE_SIZE}` must be set when `{SLICE_REQUIRED_TOPOLOGY}` is"),
        ),
        (false, true) => report(
            w,
            &kp(SLICE_SIZE),
            &format!("`{SLICE_SIZE}` may not be set without `{SLICE_REQUIRED_TOPOLOGY}`"),
        ),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::validate::{Check, Verdict, object};
    use serde_json::json;

    fn checks(v: &Value) -> Vec<(Check, String)> {
        match object(v) {
            Verdict::Checked(found) => found.into_iter().map(|f| (f.check, f.pointer)).collect(),
            Verdict::Unknown { message, .. } => panic!("{message}"),
        }
    }

    fn queued_job(groups: usize, mode: Option<&str>) -> Value {
        let container = json!({"name": "ray", "image": "rayproject/ray:2.52.0"});
        let workers: Vec<Value> = (0..groups)
            .map(|i| {
                json!({"groupName": format!("g{i}"), "replicas": 1, "minReplicas": 1, "maxReplicas": 1,
                       "template": {"spec": {"containers": [container.clone()]}}})
            })
            .collect();
        let mut job = json!({
            "apiVersion": "ray.io/v1", "kind": "RayJob",
            "metadata": {"name": "job", "namespace": "ns", "labels": {QUEUE_LABEL: "team-a"}},
            "spec": {"entrypoint": "python main.py", "shutdownAfterJobFinishes": true,
                     "rayClusterSpec": {"headGroupSpec": {"template": {"spec": {"containers": [container]}}},
                                        "workerGroupSpecs": workers}},
        });
        if let Some(m) = mode {
            job["spec"]["submissionMode"] = json!(m);
        }
        job
    }

    /// Kueue counts the submitter PodSet of a K8sJobMode RayJob (the default mode): 17 worker
    /// groups pass its webhook but make 19 PodSets, one more than a Workload holds. A flat
    /// limit of 17 worker groups let this through.
    #[test]
    fn a_k8s_job_mode_rayjob_with_17_worker_groups_gets_no_workload() {
        assert_eq!(max_worker_groups(true), 16);
        assert_eq!(max_worker_groups(false), 17);
        let at = "/spec/rayClusterSpec/workerGroupSpecs".to_owned();
        assert_eq!(
            checks(&queued_job(17, None)),
            vec![(Check::KueueWorkload, at.clone())]
        );
        assert_eq!(
            checks(&queued_job(17, Some("K8sJobMode"))),
            vec![(Check::KueueWorkload, at.clone())]
        );
        assert_eq!(checks(&queued_job(17, Some("HTTPMode"))), vec![]);
        assert_eq!(checks(&queued_job(16, None)), vec![]);
        assert_eq!(
            checks(&queued_job(18, Some("HTTPMode"))),
            vec![(Check::Admission, at)]
        );
    }
}
