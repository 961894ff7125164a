//! The metrics the generated dashboard and alerts query, with the labels each carries: one
//! table, which the tests hold every generated query to (a query naming a metric or a label
//! missing here is a bug). Upstream definitions:
//!
//! - Kueue: kubernetes-sigs/kueue@v0.19.2 `pkg/metrics/metrics.go` (subsystem `kueue`; the
//!   `cluster_queue_resource_*`, `*_nominal_quota` and `*_borrowing_limit` gauges only with
//!   the Configuration's `metrics.enableClusterQueueResources: true`). Every metric also has
//!   `replica_role`; histograms add `_bucket` (with `le`), `_sum` and `_count`.
//! - NVIDIA DCGM exporter: NVIDIA/dcgm-exporter@4.5.3-4.8.2 `etc/default-counters.csv` (labels
//!   `gpu`, `UUID`, `device`, `modelName`, `Hostname`, and with its Kubernetes pod mapping the
//!   GPU's pod as `namespace`, `pod`, `container`, which Prometheus renames `exported_*` beside
//!   the target's own labels); `node` is added by raykueue's ServiceMonitor.
//! - kube-state-metrics: kubernetes/kube-state-metrics (v2, the version kube-prometheus-stack pins)
//!   `docs/metrics/cluster/node-metrics.md` (`kube_node_labels`: `node` and one `label_<key>`
//!   per node label its `--metric-labels-allowlist` admits).
//! - Prometheus itself: `up` of every target, with the target's labels.

/// Kueue v0.19.2's metrics that raykueue queries: full name, labels.
pub(crate) const KUEUE: &[(&str, &[&str])] = &[
    ("kueue_pending_workloads", &["cluster_queue", "status"]),
    ("kueue_admitted_active_workloads", &["cluster_queue"]),
    ("kueue_reserving_active_workloads", &["cluster_queue"]),
    ("kueue_cluster_queue_status", &["cluster_queue", "status"]),
    (
        "kueue_admission_wait_time_seconds_bucket",
        &["cluster_queue", "priority_class", "le"],
    ),
    (
        "kueue_admission_checks_wait_time_seconds_bucket",
        &["cluster_queue", "priority_class", "le"],
    ),
    (
        "kueue_evicted_workloads_total",
        &[
            "cluster_queue",
            "reason",
            "underlying_cause",
            "priority_class",
        ],
    ),
    (
        "kueue_preempted_workloads_total",
        &["preempting_cluster_queue", "reason"],
    ),
    (
        "kueue_cluster_queue_resource_usage",
        &["cohort", "cluster_queue", "flavor", "resource"],
    ),
    (
        "kueue_cluster_queue_nominal_quota",
        &["cohort", "cluster_queue", "flavor", "resource"],
    ),
    (
        "kueue_cluster_queue_borrowing_limit",
        &["cohort", "cluster_queue", "flavor", "resource"],
    ),
    (
        "kueue_cohort_subtree_admitted_active_workloads",
        &["cohort"],
    ),
];

/// DCGM exporter metrics raykueue queries, with the labels its ServiceMonitor leaves on them.
pub(crate) const DCGM: &[(&str, &[&str])] = &[
    (
        "DCGM_FI_DEV_GPU_UTIL",
        &[
            "gpu",
            "UUID",
            "modelName",
            "Hostname",
            "node",
            "exported_namespace",
            "exported_pod",
        ],
    ),
    (
        "DCGM_FI_DEV_FB_USED",
        &[
            "gpu",
            "UUID",
            "modelName",
            "Hostname",
            "node",
            "exported_namespace",
            "exported_pod",
        ],
    ),
    (
        "DCGM_FI_DEV_FB_FREE",
        &[
            "gpu",
            "UUID",
            "modelName",
            "Hostname",
            "node",
            "exported_namespace",
            "exported_pod",
        ],
    ),
];

/// kube-state-metrics' node labels metric: `node`, plus `label_<key>` per allowed label.
pub const KUBE_NODE_LABELS: &str = "kube_node_labels";

/// Prometheus' own per-target metric.
pub(crate) const UP: (&str, &[&str]) = ("up", &["job", "namespace", "service", "pod", "endpoint"]);

/// The labels a metric carries, if raykueue knows the metric (`kube_node_labels`: its fixed
/// label only; the `label_*` ones are checked by prefix).
pub fn labels(metric: &str) -> Option<&'static [&'static str]> {
    if metric == KUBE_NODE_LABELS {
        return Some(&["node"]);
    }
    KUEUE
        .iter()
        .chain(DCGM)
        .chain(std::iter::once(&UP))
        .find(|(m, _)| *m == metric)
        .map(|(_, l)| *l)
}

/// The label kube-state-metrics gives a node label `key` (every character that may not be in
/// a Prometheus label name becomes `_`).
pub(crate) fn node_label(key: &str) -> String {
    let mut out = String::from("label_");
    out.extend(
        key.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    out
}
