//! What Kueue's validating webhooks reject on create, beyond the CRD schemas (FACTS.md §3 and
//! §7; Kueue v0.19.2 `pkg/webhooks/clusterqueue_webhook.go` and
//! `pkg/controller/jobs/{rayjob,raycluster,rayservice}`): a ClusterQueue whose flavors list
//! their resources in another order than `coveredResources`, and Ray objects sent to a
//! LocalQueue that Kueue cannot manage. Only rules of the API path are here; KubeRay's own
//! controller checks (names, replicas) belong to the profile rules.

use super::Check;
use super::walk::{Walker, short};
use crate::profile::Quantity;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Label that hands a job to Kueue.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// Annotation that makes a Ray job elastic (in-tree autoscaling allowed).
const ELASTIC: &str = "kueue.x-k8s.io/elastic-job";
/// The Kueue webhook allows at most this many worker groups (`jobframework.MaxPodSets - 1`).
const MAX_WORKER_GROUPS: usize = 17;

pub fn check(w: &mut Walker, kind: &str, root: &Map<String, Value>) {
    match kind {
        "ClusterQueue" => cluster_queue(w, root),
        "RayJob" if managed(root) => ray_job(w, root),
        "RayCluster" if managed(root) => {
            if let Some(spec) = root.get("spec") {
                ray_cluster(w, root, spec, "/spec");
            }
        }
        "RayService" if managed(root) => {
            if let Some(spec) = root.get("spec").and_then(|s| s.get("rayClusterConfig")) {
                ray_cluster(w, root, spec, "/spec/rayClusterConfig");
            }
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

/// Kueue manages a Ray object when it names a LocalQueue (the default configuration leaves
/// objects without the label alone).
fn managed(root: &Map<String, Value>) -> bool {
    root.get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(QUEUE_LABEL))
        .is_some()
}

fn quantity(v: &Value) -> Option<Result<Quantity, String>> {
    let text = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    Some(Quantity::parse(&text).map_err(|e| e.to_string()))
}

fn cluster_queue(w: &mut Walker, root: &Map<String, Value>) {
    let Some(spec) = root.get("spec") else {
        return;
    };
    let has_cohort = spec.get("cohortName").is_some_and(|c| !c.is_null());
    let groups = spec
        .get("resourceGroups")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let mut resource_group: BTreeMap<&str, usize> = BTreeMap::new();
    let mut flavor_group: BTreeMap<&str, usize> = BTreeMap::new();
    for (g, group) in groups.iter().enumerate() {
        let gp = format!("/spec/resourceGroups/{g}");
        let covered: Vec<&str> = group
            .get("coveredResources")
            .and_then(Value::as_array)
            .map(|c| c.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (i, r) in covered.iter().enumerate() {
            if let Some(first) = resource_group.insert(r, g)
                && first != g
            {
                report(
                    w,
                    &format!("{gp}/coveredResources/{i}"),
                    &format!(
                        "resource `{r}` is already covered by resourceGroups[{first}]; a resource may be in one group only"
                    ),
                );
            }
        }
        let flavors = group
            .get("flavors")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (f, flavor) in flavors.iter().enumerate() {
            let fp = format!("{gp}/flavors/{f}");
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
            let resources = flavor
                .get("resources")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            for (i, res) in resources.iter().enumerate() {
                let rp = format!("{fp}/resources/{i}");
                let name = res.get("name").and_then(Value::as_str).unwrap_or_default();
                if let Some(want) = covered.get(i)
                    && *want != name
                {
                    report(
                        w,
                        &format!("{rp}/name"),
                        &format!(
                            "resource {} must be `{want}`: each flavor lists coveredResources in the same order",
                            short(&Value::from(name))
                        ),
                    );
                }
                resource_limits(w, res, &rp, has_cohort);
            }
        }
    }
}

fn resource_limits(w: &mut Walker, res: &Value, rp: &str, has_cohort: bool) {
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
    if let (Some(lend), Some(nominal)) = (parsed.get("lendingLimit"), parsed.get("nominalQuota"))
        && lend > nominal
    {
        report(
            w,
            &format!("{rp}/lendingLimit"),
            &format!("lendingLimit {lend} is larger than nominalQuota {nominal}"),
        );
    }
    if !has_cohort && res.get("lendingLimit").is_some() {
        report(
            w,
            &format!("{rp}/lendingLimit"),
            "lendingLimit is allowed only when cohortName is set",
        );
    }
}

fn ray_job(w: &mut Walker, root: &Map<String, Value>) {
    let Some(spec) = root.get("spec") else {
        return;
    };
    match spec.get("rayClusterSpec") {
        None => {
            let also = if spec.get("clusterSelector").is_some() {
                " (a RayJob on an existing cluster via clusterSelector cannot be queued)"
            } else {
                ""
            };
            report(
                w,
                "/spec/rayClusterSpec",
                &format!("a RayJob with label `{QUEUE_LABEL}` must have spec.rayClusterSpec{also}"),
            );
        }
        Some(cluster) => {
            if spec.get("clusterSelector").is_some() {
                report(
                    w,
                    "/spec/clusterSelector",
                    "clusterSelector together with rayClusterSpec: a queued RayJob must not use an existing cluster",
                );
            }
            ray_cluster(w, root, cluster, "/spec/rayClusterSpec");
        }
    }
    if spec.get("shutdownAfterJobFinishes") != Some(&Value::Bool(true)) {
        report(
            w,
            "/spec/shutdownAfterJobFinishes",
            "a RayJob queued by Kueue must set shutdownAfterJobFinishes: true",
        );
    }
}

/// Rules on a RayClusterSpec of a queued object.
fn ray_cluster(w: &mut Walker, root: &Map<String, Value>, spec: &Value, at: &str) {
    if spec.get("enableInTreeAutoscaling") == Some(&Value::Bool(true)) {
        let elastic = root
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| a.get(ELASTIC))
            .and_then(Value::as_str)
            == Some("true");
        if !elastic {
            report(
                w,
                &format!("{at}/enableInTreeAutoscaling"),
                &format!(
                    "in-tree autoscaling is allowed only for elastic jobs (annotation `{ELASTIC}: \"true\"`)"
                ),
            );
        }
    }
    let groups = spec
        .get("workerGroupSpecs")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if groups.len() > MAX_WORKER_GROUPS {
        report(
            w,
            &format!("{at}/workerGroupSpecs"),
            &format!(
                "{} worker groups; Kueue allows at most {MAX_WORKER_GROUPS}",
                groups.len()
            ),
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
