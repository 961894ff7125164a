//! KubeRay v1.7.0 facts that the profile rules (`checks::ray`) and the output validation
//! (`output::validate::reconcile`) share: one definition each, in a module both stages read
//! (ray-project/kuberay@v1.7.0 `ray-operator/controllers/ray/utils/validation.go`).

/// `MaxRayClusterNameLength`: KubeRay derives Service and Pod names from a RayCluster's name.
pub(crate) const MAX_RAY_CLUSTER_NAME: usize = 53;
/// `MaxRayJobNameLength` and `MaxRayServiceNameLength`: their RayCluster's name is theirs plus
/// a 6-character suffix.
pub(crate) const MAX_RAY_JOB_NAME: usize = MAX_RAY_CLUSTER_NAME - 6;

/// The longest name KubeRay accepts for a kind it reconciles.
pub(crate) fn max_name_len(kind: &str) -> Option<usize> {
    match kind {
        "RayCluster" => Some(MAX_RAY_CLUSTER_NAME),
        "RayJob" | "RayService" => Some(MAX_RAY_JOB_NAME),
        _ => None,
    }
}

/// The `rayStartParams` key KubeRay forbids (`validateRayGroupLabels`): node labels go in the
/// group's own `labels` field.
pub(crate) const FORBIDDEN_RAY_START_PARAM: &str = "labels";
/// `rayStartParams` keys that declare resources; with a non-empty `resources` field beside
/// them KubeRay refuses the group (`validateRayGroupResources`).
pub(crate) const RAY_START_RESOURCE_PARAMS: &[&str] =
    &["num-cpus", "num-gpus", "memory", "resources"];

/// Whether a worker group's bounds are out of order (`minReplicas > maxReplicas`).
pub(crate) fn replicas_out_of_order(min: i64, max: i64) -> bool {
    min > max
}
