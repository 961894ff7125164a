//! What the KubeRay controller refuses at reconcile (KubeRay v1.7.0
//! `ray-operator/controllers/ray/utils/validation.go`: `ValidateRayClusterMetadata`,
//! `ValidateRayClusterSpec`, `ValidateRayClusterUpgradeOptions`, `ValidateRayJobMetadata`,
//! `ValidateRayJobSpec`, `ValidateRayServiceMetadata`, `ValidateRayServiceSpec`).
//!
//! These objects pass the API server: `kubectl apply` says "created", and the controller
//! later marks them `ValidationFailed` (an event, a status), so this is its own layer and
//! code. The controller sees the object after the API server applied the CRD defaults
//! (`minReplicas: 0`, `maxReplicas: 2147483647`), and so do these checks. Feature gates are
//! taken at their v1.7.0 defaults (`pkg/features/features.go`): `RayJobDeletionPolicy` and
//! `RayServiceIncrementalUpgrade` on; `RayClusterNetworkPolicy`, `RayClusterMTLS`,
//! `RayClusterHistoryServer` and `GCSFaultToleranceEmbeddedStorage` off. The controller stops
//! at its first error; this reports every one it can see.
//!
//! The name limits and the `rayStartParams` facts live in `crate::facts::kuberay`, shared with the
//! profile rules (`rules::kuberay`), so a profile and a manifest are held to the same numbers.

use super::Check;
use super::meta::{dns1035_label, label_value, qualified_name};
use super::walk::{Walker, short};
use crate::base::pointer::pointer_push;
use serde_json::{Map, Value};

pub(crate) use crate::facts::kuberay::{
    FORBIDDEN_RAY_START_PARAM, MAX_RAY_CLUSTER_NAME, RAY_START_RESOURCE_PARAMS, max_name_len,
    replicas_out_of_order,
};

const RAY_CLUSTER_LABEL: &str = "ray.io/cluster";
const FT_ANNOTATION: &str = "ray.io/ft-enabled";
const EXTERNAL_STORAGE_NS: &str = "ray.io/external-storage-namespace";
const INITIALIZING_TIMEOUT: &str = "ray.io/initializing-timeout";
const ORIGINATED_FROM_CRD: &str = "ray.io/originated-from-crd";
const AUTOSCALER_V2_ENV: &str = "RAY_enable_autoscaler_v2";
const GEN_AUTOSCALER_START_CMD: &str = "KUBERAY_GEN_AUTOSCALER_START_CMD";
/// CRD defaults of a worker group's bounds, applied before the controller sees them.
const DEFAULT_MIN_REPLICAS: i64 = 0;
const DEFAULT_MAX_REPLICAS: i64 = 2_147_483_647;

pub(crate) fn run(w: &mut Walker, kind: &str, root: &Map<String, Value>) {
    let annotations = root
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object);
    match kind {
        "RayCluster" => {
            name(w, kind, root);
            if let Some(spec) = root.get("spec").filter(|s| s.is_object()) {
                cluster_spec(w, spec, annotations, "/spec");
                upgrade_strategy(w, root, spec);
            }
        }
        "RayJob" => {
            name(w, kind, root);
            if let Some(spec) = root.get("spec").filter(|s| s.is_object()) {
                let queued = root
                    .get("metadata")
                    .and_then(|m| m.get("labels"))
                    .and_then(|l| l.get(super::webhooks::QUEUE_LABEL))
                    .is_some();
                ray_job(w, spec, annotations, queued);
            }
        }
        "RayService" => {
            name(w, kind, root);
            initializing_timeout(w, annotations);
            if let Some(spec) = root.get("spec").filter(|s| s.is_object()) {
                ray_service(w, spec, annotations);
            }
        }
        _ => {}
    }
}

fn report(w: &mut Walker, at: &str, message: &str, hint: Option<&str>) {
    w.report(
        Check::KubeRay,
        at,
        format!("{message} (KubeRay controller, at reconcile: ValidationFailed)"),
        hint.map(str::to_owned),
    );
}

fn get<'v>(v: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

fn int(v: &Value, path: &[&str]) -> Option<i64> {
    get(v, path).and_then(Value::as_i64)
}

fn string<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    get(v, path).and_then(Value::as_str)
}

fn truthy(v: &Value, path: &[&str]) -> bool {
    get(v, path) == Some(&Value::Bool(true))
}

fn list<'v>(v: &'v Value, path: &[&str]) -> &'v [Value] {
    get(v, path)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

fn non_empty_map(v: &Value, path: &[&str]) -> bool {
    get(v, path)
        .and_then(Value::as_object)
        .is_some_and(|m| !m.is_empty())
}

fn annotation<'a>(annotations: Option<&'a Map<String, Value>>, key: &str) -> Option<&'a str> {
    annotations.and_then(|a| a.get(key)).and_then(Value::as_str)
}

/// The value of environment variable `name` in `container` (`Some("")` when it is set from a
/// source), or `None` when the container does not set it.
fn env<'v>(container: Option<&'v Value>, name: &str) -> Option<&'v str> {
    container
        .map(|c| list(c, &["env"]))
        .unwrap_or_default()
        .iter()
        .find(|e| string(e, &["name"]) == Some(name))
        .map(|e| string(e, &["value"]).unwrap_or(""))
}

fn name(w: &mut Walker, kind: &str, root: &Map<String, Value>) {
    let Some(n) = root
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
    else {
        return;
    };
    let max = max_name_len(kind).unwrap_or(MAX_RAY_CLUSTER_NAME);
    let len = n.chars().count();
    if len > max {
        let why = if kind == "RayCluster" {
            "KubeRay derives Service and Pod names from it"
        } else {
            "KubeRay names its RayCluster after it, with a 6-character suffix"
        };
        report(
            w,
            "/metadata/name",
            &format!("{kind} name has {len} characters; KubeRay allows at most {max} ({why})"),
            Some(&format!("shorten it by {} characters", len - max)),
        );
    }
    if let Some(p) = dns1035_label(n) {
        report(
            w,
            "/metadata/name",
            &format!(
                "{kind} name {} is not a DNS-1035 label: {p}",
                short(&Value::from(n))
            ),
            Some("start with a letter; use only lower-case letters, digits and '-'"),
        );
    }
}

/// `ValidateRayClusterSpec`, on a RayClusterSpec at `at`.
fn cluster_spec(w: &mut Walker, spec: &Value, annotations: Option<&Map<String, Value>>, at: &str) {
    let head = spec.get("headGroupSpec");
    let head_at = format!("{at}/headGroupSpec");
    let head_containers = head.map(|h| list(h, &["template", "spec", "containers"]));
    if head.is_some() && head_containers.is_some_and(<[Value]>::is_empty) {
        report(
            w,
            &format!("{head_at}/template/spec/containers"),
            "headGroupSpec must have at least one container",
            None,
        );
    }
    // The Ray container is the first one (`RayContainerIndex`).
    let head_ray = head_containers.and_then(<[Value]>::first);
    if let Some(h) = head {
        group(w, h, &head_at, "the head group");
    }
    let autoscaling = truthy(spec, &["enableInTreeAutoscaling"]);
    let v2_env = env(head_ray, AUTOSCALER_V2_ENV);
    let v2_option = string(spec, &["autoscalerOptions", "version"]) == Some("v2");
    let mode = Autoscaler {
        enabled: autoscaling,
        v2: v2_option || matches!(v2_env, Some("1" | "true")),
        v2_option,
    };
    for (i, g) in list(spec, &["workerGroupSpecs"]).iter().enumerate() {
        worker_group(w, spec, g, i, at, mode);
    }
    gcs(w, spec, head, head_ray, annotations, at);
    autoscaler(w, spec, head, head_ray, at, mode);
    gated_fields(w, spec, at);
    auth(w, spec, at);
}

/// How a RayCluster's autoscaler is set: on (`enableInTreeAutoscaling`), v2 by either switch
/// (`autoscalerOptions.version` or the head's env var), and v2 by `autoscalerOptions.version`
/// alone (`IsAutoscalingV2Enabled`, what some rules count).
#[derive(Clone, Copy)]
struct Autoscaler {
    enabled: bool,
    v2: bool,
    v2_option: bool,
}

/// `ValidateRayClusterSpec` on worker group `i` of the RayClusterSpec at `at`.
fn worker_group(w: &mut Walker, spec: &Value, g: &Value, i: usize, at: &str, mode: Autoscaler) {
    let Autoscaler {
        enabled: autoscaling,
        v2,
        v2_option,
    } = mode;
    let gp = format!("{at}/workerGroupSpecs/{i}");
    let gname = string(g, &["groupName"]).unwrap_or("?");
    let who = format!("worker group `{gname}`");
    if list(g, &["template", "spec", "containers"]).is_empty() {
        report(
            w,
            &format!("{gp}/template/spec/containers"),
            &format!("{who} must have at least one container"),
            None,
        );
    }
    let min = int(g, &["minReplicas"]).unwrap_or(DEFAULT_MIN_REPLICAS);
    let max = int(g, &["maxReplicas"]).unwrap_or(DEFAULT_MAX_REPLICAS);
    for (field, v) in [("minReplicas", min), ("maxReplicas", max)] {
        if v < 0 {
            report(
                w,
                &format!("{gp}/{field}"),
                &format!("{who} has negative {field} {v}"),
                None,
            );
        }
    }
    if replicas_out_of_order(min, max) {
        report(
            w,
            &format!("{gp}/minReplicas"),
            &format!("{who} has minReplicas {min} greater than maxReplicas {max}"),
            Some("make minReplicas ≤ maxReplicas (an unset maxReplicas is 2147483647)"),
        );
    }
    group(w, g, &gp, &who);
    if let Some(t) = int(g, &["idleTimeoutSeconds"]) {
        if t < 0 {
            report(
                w,
                &format!("{gp}/idleTimeoutSeconds"),
                &format!("{who}: idleTimeoutSeconds must be non-negative, got {t}"),
                None,
            );
        } else if !v2 {
            report(
                w,
                &format!("{gp}/idleTimeoutSeconds"),
                &format!("{who}: idleTimeoutSeconds is set, but autoscaler v2 is not enabled"),
                Some("set spec.autoscalerOptions.version: v2"),
            );
        }
    }
    if let Some(p) = int(g, &["priority"]).filter(|p| *p != 0) {
        priority(w, spec, &format!("{gp}/priority"), &who, p, v2);
    }
    if autoscaling && truthy(g, &["suspend"]) {
        report(
            w,
            &format!("{gp}/suspend"),
            &format!("{who} cannot be suspended with the autoscaler enabled"),
            None,
        );
    }
    // Only `autoscalerOptions.version` counts here (`IsAutoscalingV2Enabled`), not the env var.
    if autoscaling && v2_option {
        restart_policy_never(w, g, &gp, &who, "autoscaler v2");
    }
}

/// GCS fault tolerance and the Redis settings it replaces, on the RayClusterSpec at `at`.
fn gcs(
    w: &mut Walker,
    spec: &Value,
    head: Option<&Value>,
    head_ray: Option<&Value>,
    annotations: Option<&Map<String, Value>>,
    at: &str,
) {
    let head_at = format!("{at}/headGroupSpec");
    let ft_options = spec
        .get("gcsFaultToleranceOptions")
        .filter(|o| !o.is_null());
    let ft_annotation = annotation(annotations, FT_ANNOTATION);
    if ft_annotation.is_some_and(|v| !v.is_empty()) && ft_options.is_some() {
        report(
            w,
            &format!("{at}/gcsFaultToleranceOptions"),
            &format!("annotation `{FT_ANNOTATION}` and gcsFaultToleranceOptions are both set"),
            Some("configure GCS fault tolerance with gcsFaultToleranceOptions only"),
        );
    }
    let ft_enabled =
        ft_annotation.is_some_and(|v| v.eq_ignore_ascii_case("true")) || ft_options.is_some();
    let head_env_at = format!("{head_at}/template/spec/containers/0/env");
    if !ft_enabled && env(head_ray, "RAY_REDIS_ADDRESS").is_some() {
        report(
            w,
            &head_env_at,
            "RAY_REDIS_ADDRESS in the head container implies GCS fault tolerance, but gcsFaultToleranceOptions is not set",
            Some("set gcsFaultToleranceOptions.redisAddress instead"),
        );
    }
    if let Some(options) = ft_options {
        fault_tolerance(w, spec, options, head_ray, annotations, at);
    }
    let username_param = head.is_some_and(|h| {
        string(h, &["rayStartParams", "redis-username"]).is_some_and(|v| !v.is_empty())
    });
    if username_param || env(head_ray, "REDIS_USERNAME").is_some() {
        report(
            w,
            &if username_param {
                pointer_push(&format!("{head_at}/rayStartParams"), "redis-username")
            } else {
                head_env_at.clone()
            },
            "a redis username in rayStartParams or the REDIS_USERNAME env var is refused",
            Some("use gcsFaultToleranceOptions.redisUsername"),
        );
    }
}

/// The autoscaler's switches and options, on the RayClusterSpec at `at`.
fn autoscaler(
    w: &mut Walker,
    spec: &Value,
    head: Option<&Value>,
    head_ray: Option<&Value>,
    at: &str,
    mode: Autoscaler,
) {
    let Autoscaler {
        enabled: autoscaling,
        v2_option,
        ..
    } = mode;
    let head_at = format!("{at}/headGroupSpec");
    let head_env_at = format!("{head_at}/template/spec/containers/0/env");
    let v2_env = env(head_ray, AUTOSCALER_V2_ENV);
    if !autoscaling && matches!(v2_env, Some("1" | "true")) {
        report(
            w,
            &head_env_at,
            &format!(
                "{AUTOSCALER_V2_ENV} is `{}` but enableInTreeAutoscaling is not true",
                v2_env.unwrap_or_default()
            ),
            Some("set enableInTreeAutoscaling: true to use autoscaler v2"),
        );
    }
    if autoscaling {
        if get(spec, &["autoscalerOptions", "version"]).is_some_and(|v| !v.is_null())
            && v2_env.is_some()
        {
            report(
                w,
                &format!("{at}/autoscalerOptions/version"),
                &format!(
                    "autoscalerOptions.version and the head env var {AUTOSCALER_V2_ENV} are both set"
                ),
                Some("keep autoscalerOptions.version only"),
            );
        }
        if v2_option && let Some(h) = head {
            restart_policy_never(w, h, &head_at, "the head group", "autoscaler v2");
        }
    }
    if let Some(t) = int(spec, &["autoscalerOptions", "idleTimeoutSeconds"]).filter(|t| *t < 0) {
        report(
            w,
            &format!("{at}/autoscalerOptions/idleTimeoutSeconds"),
            &format!("autoscalerOptions.idleTimeoutSeconds must be non-negative, got {t}"),
            None,
        );
    }
    if env(spec.get("autoscalerOptions"), GEN_AUTOSCALER_START_CMD).is_some() {
        report(
            w,
            &format!("{at}/autoscalerOptions/env"),
            &format!(
                "autoscalerOptions.env must not set {GEN_AUTOSCALER_START_CMD}: KubeRay injects it"
            ),
            None,
        );
    }
}

/// Fields behind KubeRay feature gates that are off by default, on the RayClusterSpec at `at`.
fn gated_fields(w: &mut Walker, spec: &Value, at: &str) {
    for (field, gate) in [
        ("historyServerOptions", "RayClusterHistoryServer"),
        ("networkPolicy", "RayClusterNetworkPolicy"),
        ("tlsOptions", "RayClusterMTLS"),
    ] {
        if spec.get(field).is_some_and(|v| !v.is_null()) {
            report(
                w,
                &format!("{at}/{field}"),
                &format!(
                    "spec.{field} needs the {gate} feature gate, which is off by default in KubeRay v1.7.0"
                ),
                Some(&format!(
                    "remove it, or enable {gate} on the operator (then KubeRay checks more of it than raykueue does)"
                )),
            );
        }
    }
}

/// The rules every group (head or worker) follows: resources in one place, labels valid.
fn group(w: &mut Walker, g: &Value, at: &str, who: &str) {
    let params = get(g, &["rayStartParams"]).and_then(Value::as_object);
    let in_params = RAY_START_RESOURCE_PARAMS.iter().find(|k| {
        params
            .and_then(|p| p.get(**k))
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    });
    if let Some(k) = in_params
        && non_empty_map(g, &["resources"])
    {
        report(
            w,
            &format!("{at}/resources"),
            &format!("{who} declares resources both in rayStartParams (`{k}`) and in `resources`"),
            Some("use only one of them"),
        );
    }
    if params.is_some_and(|p| p.contains_key(FORBIDDEN_RAY_START_PARAM)) {
        report(
            w,
            &pointer_push(&format!("{at}/rayStartParams"), FORBIDDEN_RAY_START_PARAM),
            &format!("rayStartParams['{FORBIDDEN_RAY_START_PARAM}'] is not supported for {who}"),
            Some("use the group's top-level `labels` field"),
        );
    }
    if let Some(labels) = get(g, &["labels"]).and_then(Value::as_object) {
        for (k, v) in labels {
            let lp = pointer_push(&format!("{at}/labels"), k);
            if let Some(p) = qualified_name(k) {
                report(
                    w,
                    &lp,
                    &format!(
                        "invalid Ray label key {} for {who}: {p}",
                        short(&Value::from(k.as_str()))
                    ),
                    None,
                );
            }
            if let Some(p) = v.as_str().and_then(label_value) {
                report(
                    w,
                    &lp,
                    &format!("invalid Ray label value {} for {who}: {p}", short(v)),
                    None,
                );
            }
        }
    }
}

fn restart_policy_never(w: &mut Walker, g: &Value, at: &str, who: &str, why: &str) {
    if let Some(p) = string(g, &["template", "spec", "restartPolicy"])
        && !p.is_empty()
        && p != "Never"
    {
        report(
            w,
            &format!("{at}/template/spec/restartPolicy"),
            &format!("restartPolicy of {who} must be Never or unset with {why}, not `{p}`"),
            None,
        );
    }
}

fn priority(w: &mut Walker, spec: &Value, at: &str, who: &str, p: i64, v2: bool) {
    match string(spec, &["rayVersion"]).map(parse_generic_version) {
        None => report(
            w,
            at,
            &format!(
                "{who}: priority is set, but rayVersion is not; Ray 2.56.0 or later is required"
            ),
            None,
        ),
        Some(None) => report(
            w,
            at,
            &format!("{who}: priority is set, but rayVersion is not a version"),
            None,
        ),
        Some(Some(v)) if v < vec![2, 56, 0] => report(
            w,
            at,
            &format!("{who}: priority needs Ray 2.56.0 or later"),
            None,
        ),
        Some(Some(_)) if !v2 => report(
            w,
            at,
            &format!("{who}: priority is {p}, but autoscaler v2 is not enabled"),
            Some("set spec.autoscalerOptions.version: v2"),
        ),
        Some(Some(_)) => {}
    }
}

fn fault_tolerance(
    w: &mut Walker,
    spec: &Value,
    options: &Value,
    head_ray: Option<&Value>,
    annotations: Option<&Map<String, Value>>,
    at: &str,
) {
    let fp = format!("{at}/gcsFaultToleranceOptions");
    let env_at = format!("{at}/headGroupSpec/template/spec/containers/0/env");
    if string(spec, &["headGroupSpec", "rayStartParams", "redis-password"])
        .is_some_and(|v| !v.is_empty())
    {
        report(
            w,
            &pointer_push(
                &format!("{at}/headGroupSpec/rayStartParams"),
                "redis-password",
            ),
            "`redis-password` in rayStartParams with gcsFaultToleranceOptions",
            Some("use gcsFaultToleranceOptions.redisPassword"),
        );
    }
    for (var, instead) in [
        ("REDIS_PASSWORD", "redisPassword"),
        ("RAY_REDIS_ADDRESS", "redisAddress"),
    ] {
        if env(head_ray, var).is_some() {
            report(
                w,
                &env_at,
                &format!("the head container sets {var} with gcsFaultToleranceOptions"),
                Some(&format!("use gcsFaultToleranceOptions.{instead}")),
            );
        }
    }
    if annotation(annotations, EXTERNAL_STORAGE_NS).is_some_and(|v| !v.is_empty()) {
        report(
            w,
            &pointer_push("/metadata/annotations", EXTERNAL_STORAGE_NS),
            &format!("annotation `{EXTERNAL_STORAGE_NS}` with gcsFaultToleranceOptions"),
            Some("use gcsFaultToleranceOptions.externalStorageNamespace"),
        );
    }
    match string(options, &["backend"]) {
        Some("rocksdb") => report(
            w,
            &format!("{fp}/backend"),
            "the rocksdb GCS fault tolerance backend needs the GCSFaultToleranceEmbeddedStorage feature gate, off by default in KubeRay v1.7.0",
            None,
        ),
        _ if options.get("storage").is_some_and(|s| !s.is_null()) => report(
            w,
            &format!("{fp}/storage"),
            "gcsFaultToleranceOptions.storage applies only to the rocksdb backend, not redis",
            None,
        ),
        _ => {}
    }
}

fn auth(w: &mut Walker, spec: &Value, at: &str) {
    let ap = format!("{at}/authOptions");
    let k8s = truthy(spec, &["authOptions", "enableK8sTokenAuth"]);
    if string(spec, &["authOptions", "mode"]) == Some("token") {
        let min = if k8s { vec![2, 55, 0] } else { vec![2, 52, 0] };
        let shown = if k8s { "2.55.0" } else { "2.52.0" };
        match string(spec, &["rayVersion"])
            .filter(|v| !v.is_empty())
            .map(parse_generic_version)
        {
            None => report(
                w,
                &format!("{at}/rayVersion"),
                &format!(
                    "authOptions.mode is `token` but rayVersion is not set; Ray {shown} or later is required"
                ),
                None,
            ),
            Some(None) => report(
                w,
                &format!("{at}/rayVersion"),
                "authOptions.mode is `token` but rayVersion is not a version",
                None,
            ),
            Some(Some(v)) if v < min => report(
                w,
                &format!("{at}/rayVersion"),
                &format!("token authentication needs Ray {shown} or later"),
                None,
            ),
            Some(Some(_)) => {}
        }
        if k8s && string(spec, &["authOptions", "secretName"]).is_some_and(|s| !s.is_empty()) {
            report(
                w,
                &format!("{ap}/secretName"),
                "authOptions.enableK8sTokenAuth and authOptions.secretName are both set",
                None,
            );
        }
    } else if k8s {
        report(
            w,
            &format!("{ap}/enableK8sTokenAuth"),
            "authOptions.enableK8sTokenAuth is enabled but authOptions.mode is not `token`",
            None,
        );
    }
}

/// `ValidateRayClusterUpgradeOptions`: a RayCluster made by a RayJob or RayService has no
/// upgrade strategy of its own.
fn upgrade_strategy(w: &mut Walker, root: &Map<String, Value>, spec: &Value) {
    let origin = root
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(ORIGINATED_FROM_CRD))
        .and_then(Value::as_str);
    if let Some(creator @ ("RayJob" | "RayService")) = origin
        && string(spec, &["upgradeStrategy", "type"]).is_some()
    {
        report(
            w,
            "/spec/upgradeStrategy/type",
            &format!("upgradeStrategy cannot be set on a RayCluster created by a {creator}"),
            None,
        );
    }
}

/// `ValidateRayJobSpec`.
fn ray_job(w: &mut Walker, spec: &Value, annotations: Option<&Map<String, Value>>, queued: bool) {
    let suspend = truthy(spec, &["suspend"]);
    let shutdown = truthy(spec, &["shutdownAfterJobFinishes"]);
    let selector = spec
        .get("clusterSelector")
        .and_then(Value::as_object)
        .filter(|s| !s.is_empty());
    let cluster = spec.get("rayClusterSpec").filter(|c| !c.is_null());
    let mode = string(spec, &["submissionMode"]).unwrap_or("K8sJobMode");
    let backoff = int(spec, &["backoffLimit"]);
    suspend_and_ttl(w, spec, suspend, shutdown);
    deletion_strategy(w, spec, selector.is_some(), shutdown, cluster);
    if suspend && selector.is_some() {
        report(
            w,
            "/spec/suspend",
            "a RayJob on an existing cluster (clusterSelector) cannot be suspended",
            None,
        );
    }
    // A queued one is refused by Kueue's webhook first (`admission`): reported once, there.
    if cluster.is_none() && selector.is_none() && !queued {
        report(
            w,
            "/spec/rayClusterSpec",
            "a RayJob needs rayClusterSpec or clusterSelector",
            None,
        );
    }
    if let Some(sel) = selector {
        existing_cluster(w, sel, mode, backoff);
    }
    if mode == "InteractiveMode" && backoff.is_some_and(|b| b > 0) {
        report(
            w,
            "/spec/backoffLimit",
            "backoffLimit is incompatible with InteractiveMode",
            None,
        );
    }
    if mode == "SidecarMode" {
        sidecar_mode(w, spec, cluster);
    }
    if let Some(c) = cluster {
        embedded_cluster(w, c, annotations);
    }
    runtime_env_and_limits(w, spec, backoff);
}

/// A RayJob's `suspend` and `ttlSecondsAfterFinished` against `shutdownAfterJobFinishes`.
fn suspend_and_ttl(w: &mut Walker, spec: &Value, suspend: bool, shutdown: bool) {
    if suspend && !shutdown {
        report(
            w,
            "/spec/suspend",
            "a RayJob with shutdownAfterJobFinishes false may not be suspended",
            Some("set shutdownAfterJobFinishes: true"),
        );
    }
    let ttl = int(spec, &["ttlSecondsAfterFinished"]).unwrap_or(0);
    if ttl < 0 {
        report(
            w,
            "/spec/ttlSecondsAfterFinished",
            "ttlSecondsAfterFinished must be non-negative",
            None,
        );
    }
    if !shutdown && ttl > 0 {
        report(
            w,
            "/spec/ttlSecondsAfterFinished",
            "ttlSecondsAfterFinished without shutdownAfterJobFinishes: true",
            Some("set shutdownAfterJobFinishes: true, or remove ttlSecondsAfterFinished"),
        );
    }
}

/// A RayJob on an existing cluster (`clusterSelector` `sel`): the selector names the cluster,
/// and neither the submission mode nor retries need a cluster of the job's own.
fn existing_cluster(w: &mut Walker, sel: &Map<String, Value>, mode: &str, backoff: Option<i64>) {
    if sel
        .get(RAY_CLUSTER_LABEL)
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        report(
            w,
            "/spec/clusterSelector",
            &format!(
                "clusterSelector must name the cluster with a non-empty `{RAY_CLUSTER_LABEL}`"
            ),
            None,
        );
    }
    if mode == "SidecarMode" {
        report(
            w,
            "/spec/submissionMode",
            "clusterSelector is not supported in SidecarMode",
            None,
        );
    }
    if backoff.is_some_and(|b| b > 0) {
        report(
            w,
            "/spec/backoffLimit",
            "backoffLimit is incompatible with clusterSelector",
            None,
        );
    }
}

/// What `SidecarMode` does not support: a submitter of its own, a head that restarts.
fn sidecar_mode(w: &mut Walker, spec: &Value, cluster: Option<&Value>) {
    for field in ["submitterPodTemplate", "submitterConfig"] {
        if spec.get(field).is_some_and(|v| !v.is_null()) {
            report(
                w,
                &format!("/spec/{field}"),
                &format!("SidecarMode does not support {field}"),
                None,
            );
        }
    }
    if let Some(h) = cluster.and_then(|c| c.get("headGroupSpec")) {
        restart_policy_never(
            w,
            h,
            "/spec/rayClusterSpec/headGroupSpec",
            "the head group",
            "SidecarMode",
        );
    }
}

/// The RayJob's own `rayClusterSpec` `c`: its auth options, then the RayCluster rules.
fn embedded_cluster(w: &mut Walker, c: &Value, annotations: Option<&Map<String, Value>>) {
    if truthy(c, &["authOptions", "enableK8sTokenAuth"]) {
        report(
            w,
            "/spec/rayClusterSpec/authOptions/enableK8sTokenAuth",
            "Kubernetes token auth is not supported for a RayJob",
            None,
        );
    }
    if c.is_object() {
        cluster_spec(w, c, annotations, "/spec/rayClusterSpec");
    }
}

/// `runtimeEnvYAML`, the deadlines and `backoffLimit`, each on its own.
fn runtime_env_and_limits(w: &mut Walker, spec: &Value, backoff: Option<i64>) {
    if let Some(text) = string(spec, &["runtimeEnvYAML"])
        && let Some(e) = runtime_env_problem(text)
    {
        report(
            w,
            "/spec/runtimeEnvYAML",
            &format!("runtimeEnvYAML is not a YAML mapping: {e}"),
            None,
        );
    }
    for field in ["activeDeadlineSeconds", "preRunningDeadlineSeconds"] {
        if let Some(v) = int(spec, &[field]).filter(|v| *v <= 0) {
            report(
                w,
                &format!("/spec/{field}"),
                &format!("{field} must be positive, not {v}"),
                None,
            );
        }
    }
    if let Some(b) = backoff.filter(|b| *b < 0) {
        report(
            w,
            "/spec/backoffLimit",
            &format!("backoffLimit must be non-negative, not {b}"),
            None,
        );
    }
}

/// `validateDeletionConfiguration`, beyond what the CRD's CEL rules already refuse (both kinds
/// of condition in one rule; legacy policies beside rules; a strategy with neither).
fn deletion_strategy(
    w: &mut Walker,
    spec: &Value,
    selector: bool,
    shutdown: bool,
    cluster: Option<&Value>,
) {
    let Some(ds) = spec.get("deletionStrategy").filter(|d| d.is_object()) else {
        return;
    };
    let at = "/spec/deletionStrategy";
    let autoscaling = cluster.is_some_and(|c| truthy(c, &["enableInTreeAutoscaling"]));
    let rules = list(ds, &["deletionRules"]);
    let legacy = ["onSuccess", "onFailure"].map(|k| ds.get(k).filter(|v| !v.is_null()));
    if !rules.is_empty() && shutdown {
        report(
            w,
            "/spec/shutdownAfterJobFinishes",
            "shutdownAfterJobFinishes and deletionStrategy.deletionRules are mutually exclusive",
            Some("set shutdownAfterJobFinishes: false, or use the legacy onSuccess/onFailure"),
        );
    }
    if let [Some(on_success), Some(on_failure)] = legacy
        && rules.is_empty()
    {
        for (field, p) in [("onSuccess", on_success), ("onFailure", on_failure)] {
            let pp = format!("{at}/{field}/policy");
            match string(p, &["policy"]) {
                None => report(
                    w,
                    &pp,
                    &format!("deletionStrategy.{field}.policy must be set"),
                    None,
                ),
                Some(policy @ ("DeleteCluster" | "DeleteWorkers")) if selector => report(
                    w,
                    &pp,
                    &format!("{policy} is not supported with clusterSelector"),
                    None,
                ),
                Some("DeleteWorkers") if autoscaling => report(
                    w,
                    &pp,
                    "DeleteWorkers is not supported with autoscaling enabled",
                    None,
                ),
                Some("DeleteNone") if shutdown => report(
                    w,
                    &pp,
                    "shutdownAfterJobFinishes: true with deletion policy DeleteNone",
                    None,
                ),
                Some(_) => {}
            }
        }
    }
    // Per condition (jobStatus or jobDeploymentStatus value): one rule per policy, and TTLs
    // that do not decrease along DeleteWorkers → DeleteCluster → DeleteSelf.
    let mut seen: Vec<((&str, &str), &str, i64, usize)> = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let rp = format!("{at}/deletionRules/{i}");
        let status = string(rule, &["condition", "jobStatus"]).map(|s| ("JobStatus", s));
        let deployment =
            string(rule, &["condition", "jobDeploymentStatus"]).map(|s| ("JobDeploymentStatus", s));
        let ((Some(cond), None) | (None, Some(cond))) = (status, deployment) else {
            continue; // both or neither: the CRD's CEL rules refuse it
        };
        let policy = string(rule, &["policy"]).unwrap_or("");
        if selector && matches!(policy, "DeleteCluster" | "DeleteWorkers") {
            report(
                w,
                &format!("{rp}/policy"),
                &format!("{policy} is not supported with clusterSelector"),
                None,
            );
            continue;
        }
        if autoscaling && policy == "DeleteWorkers" {
            report(
                w,
                &format!("{rp}/policy"),
                "DeleteWorkers is not supported with autoscaling enabled",
                None,
            );
            continue;
        }
        if let Some((_, _, _, first)) = seen.iter().find(|(c, p, _, _)| *c == cond && *p == policy)
        {
            report(
                w,
                &rp,
                &format!(
                    "duplicate rule for {policy} and {} `{}` (also deletionRules[{first}])",
                    cond.0, cond.1
                ),
                None,
            );
            continue;
        }
        let ttl = int(rule, &["condition", "ttlSeconds"]).unwrap_or(0);
        seen.push((cond, policy, ttl, i));
    }
    let order = ["DeleteWorkers", "DeleteCluster", "DeleteSelf"];
    let mut conditions: Vec<(&str, &str)> = seen.iter().map(|s| s.0).collect();
    conditions.sort_unstable();
    conditions.dedup();
    for cond in conditions {
        let mut prev: Option<(&str, i64)> = None;
        for policy in order {
            let Some((_, _, ttl, i)) = seen.iter().find(|s| s.0 == cond && s.1 == policy) else {
                continue;
            };
            if let Some((p, t)) = prev
                && *ttl < t
            {
                report(
                    w,
                    &format!("{at}/deletionRules/{i}/condition/ttlSeconds"),
                    &format!(
                        "for {} `{}`: {policy} TTL ({ttl}) must be >= {p} TTL ({t})",
                        cond.0, cond.1
                    ),
                    Some("workers go first, then the cluster, then the RayJob"),
                );
            }
            prev = Some((policy, *ttl));
        }
    }
}

/// `ValidateRayServiceMetadata`'s annotation: a Go duration or whole seconds, positive.
fn initializing_timeout(w: &mut Walker, annotations: Option<&Map<String, Value>>) {
    let Some(v) = annotation(annotations, INITIALIZING_TIMEOUT).filter(|v| !v.is_empty()) else {
        return;
    };
    let seconds = v.parse::<i64>().ok().map(i128::from);
    let Some(nanos) = go_duration_nanos(v).or(seconds) else {
        report(
            w,
            &pointer_push("/metadata/annotations", INITIALIZING_TIMEOUT),
            &format!(
                "annotation `{INITIALIZING_TIMEOUT}` is neither a duration nor whole seconds: {}",
                short(&Value::from(v))
            ),
            Some("write a duration such as `5m` or `1h`, or a number of seconds"),
        );
        return;
    };
    let positive = nanos > 0;
    if !positive {
        report(
            w,
            &pointer_push("/metadata/annotations", INITIALIZING_TIMEOUT),
            &format!("annotation `{INITIALIZING_TIMEOUT}` must be positive, not `{v}`"),
            None,
        );
    }
}

/// `ValidateRayServiceSpec` (and `ValidateClusterUpgradeOptions`).
fn ray_service(w: &mut Walker, spec: &Value, annotations: Option<&Map<String, Value>>) {
    let at = "/spec/rayClusterConfig";
    let cluster = spec.get("rayClusterConfig").filter(|c| c.is_object());
    if let Some(c) = cluster {
        if truthy(c, &["authOptions", "enableK8sTokenAuth"]) {
            report(
                w,
                &format!("{at}/authOptions/enableK8sTokenAuth"),
                "Kubernetes token auth is not supported for a RayService",
                None,
            );
        }
        cluster_spec(w, c, annotations, at);
        if string(c, &["headGroupSpec", "headService", "metadata", "name"])
            .is_some_and(|n| !n.is_empty())
        {
            report(
                w,
                &format!("{at}/headGroupSpec/headService/metadata/name"),
                "a RayService's head service must not be named: KubeRay names it",
                None,
            );
        }
    }
    if let Some(d) = int(spec, &["rayClusterDeletionDelaySeconds"]).filter(|d| *d < 0) {
        report(
            w,
            "/spec/rayClusterDeletionDelaySeconds",
            &format!("rayClusterDeletionDelaySeconds must be non-negative, got {d}"),
            None,
        );
    }
    if string(spec, &["upgradeStrategy", "type"]) != Some("NewClusterWithIncrementalUpgrade") {
        return;
    }
    let up = "/spec/upgradeStrategy";
    if !cluster.is_some_and(|c| truthy(c, &["enableInTreeAutoscaling"])) {
        report(
            w,
            &format!("{up}/type"),
            "NewClusterWithIncrementalUpgrade needs the Ray autoscaler (enableInTreeAutoscaling: true)",
            None,
        );
    }
    let Some(options) =
        get(spec, &["upgradeStrategy", "clusterUpgradeOptions"]).filter(|o| o.is_object())
    else {
        report(
            w,
            &format!("{up}/clusterUpgradeOptions"),
            "NewClusterWithIncrementalUpgrade needs clusterUpgradeOptions",
            None,
        );
        return;
    };
    let op = format!("{up}/clusterUpgradeOptions");
    let surge = int(options, &["maxSurgePercent"]).unwrap_or(100);
    if !(0..=100).contains(&surge) {
        report(
            w,
            &format!("{op}/maxSurgePercent"),
            "maxSurgePercent must be between 0 and 100",
            None,
        );
    }
    match int(options, &["stepSizePercent"]) {
        Some(s) if !(0..=100).contains(&s) || s > surge => report(
            w,
            &format!("{op}/stepSizePercent"),
            &format!(
                "stepSizePercent must be between 0 and 100 and at most maxSurgePercent ({surge})"
            ),
            None,
        ),
        None => report(
            w,
            &format!("{op}/stepSizePercent"),
            "stepSizePercent must be set",
            None,
        ),
        Some(_) => {}
    }
    if int(options, &["intervalSeconds"]).is_none_or(|s| s <= 0) {
        report(
            w,
            &format!("{op}/intervalSeconds"),
            "intervalSeconds must be set and greater than 0",
            None,
        );
    }
    if string(options, &["gatewayClassName"]).is_none_or(str::is_empty) {
        report(
            w,
            &format!("{op}/gatewayClassName"),
            "gatewayClassName is required for NewClusterWithIncrementalUpgrade",
            None,
        );
    }
}

/// `version.ParseGeneric`: an optional `v`, then at least two dot-separated numbers; what
/// follows them (`-rc1`) is ignored. `None` when it is not a version.
pub(crate) fn parse_generic_version(s: &str) -> Option<Vec<u64>> {
    let s = s.trim().strip_prefix('v').unwrap_or(s.trim());
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (numbers, rest) = s.split_at(end);
    if !(rest.is_empty() || rest.starts_with(['-', '+'])) {
        return None;
    }
    let parts: Option<Vec<u64>> = numbers.split('.').map(|p| p.parse().ok()).collect();
    let mut parts = parts.filter(|p| p.len() >= 2)?;
    parts.resize(parts.len().max(3), 0);
    Some(parts)
}

/// Go's `time.ParseDuration`, in nanoseconds (`None` when it is not a duration): a sign, then
/// one or more decimal numbers each with a unit (`ns`, `us`, `µs`, `ms`, `s`, `m`, `h`); `0`
/// alone is allowed.
pub(crate) fn go_duration_nanos(s: &str) -> Option<i128> {
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..n];
        if number.is_empty() || number == "." {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..u] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += value * scale;
        rest = &rest[u..];
    }
    let nanos = total as i128;
    Some(if neg { -nanos } else { nanos })
}

/// Why a `runtimeEnvYAML` does not decode into a mapping (as KubeRay unmarshals it), if it
/// does not.
fn runtime_env_problem(text: &str) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    match serde_saphyr::from_str::<Value>(text) {
        Ok(Value::Object(_) | Value::Null) => None,
        Ok(other) => Some(format!("it is {}", super::walk::describe(&other))),
        Err(e) => Some(e.to_string().lines().next().unwrap_or_default().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_durations_read_as_go_reads_them() {
        assert_eq!(parse_generic_version("2.56.0"), Some(vec![2, 56, 0]));
        assert_eq!(parse_generic_version("v2.52"), Some(vec![2, 52, 0]));
        assert_eq!(parse_generic_version("2.55.0-rc1"), Some(vec![2, 55, 0]));
        assert_eq!(parse_generic_version("2"), None);
        assert_eq!(parse_generic_version("latest"), None);
        assert_eq!(go_duration_nanos("5m"), Some(300_000_000_000));
        assert_eq!(go_duration_nanos("1h30m"), Some(5_400_000_000_000));
        assert_eq!(go_duration_nanos("0"), Some(0));
        assert_eq!(go_duration_nanos("-1s"), Some(-1_000_000_000));
        assert_eq!(go_duration_nanos("300"), None);
        assert_eq!(go_duration_nanos("5 minutes"), None);
        assert_eq!(runtime_env_problem("pip: [requests]\n"), None);
        assert_eq!(runtime_env_problem(""), None);
        assert!(runtime_env_problem("pip: [requests").is_some());
        assert!(runtime_env_problem("just text").is_some());
    }
}
