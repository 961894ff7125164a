//! The monitoring part (`monitoring/`), for a monitored profile (`facts::monitoring`): what
//! its collector scrapes (Kueue, the KubeRay operator, the Ray heads and workers of the
//! profile's namespaces, the DCGM exporter), the alerts, and the Grafana dashboard made from
//! the profile's queues (`dashboard`). A Prometheus Operator stack gets ServiceMonitors,
//! PodMonitors, a PrometheusRule and the dashboard as a ConfigMap its Grafana sidecar loads;
//! a cloud's managed Prometheus gets what it reads (`managed`). Every query names only metrics
//! and labels of `facts::metrics`.

mod managed;

use super::dashboard;
use super::{MANAGED_BY, Object, k8s};
use crate::cloud::ManagedFlavour;
use crate::facts::monitoring::{self, Resolved};
use crate::profile::{Collector, GpuMetrics, Profile};
use serde_json::{Value, json};
use std::collections::BTreeSet;

pub(crate) use managed::{managed_texts, up_context};

pub(crate) const DIR: &str = "monitoring";
pub(crate) const DASHBOARDS: &str = "monitoring/dashboards";
const MONITORING_API: &str = "monitoring.coreos.com/v1";
/// The Grafana sidecar of kube-prometheus-stack loads ConfigMaps with this label
/// (grafana/helm-charts `charts/grafana/values.yaml`, `sidecar.dashboards.label` and
/// `labelValue`).
pub(crate) const GRAFANA_DASHBOARD_LABEL: (&str, &str) = ("grafana_dashboard", "1");
/// The DCGM exporter chart's name label (NVIDIA/dcgm-exporter@4.5.3-4.8.2
/// `deployment/templates/_helpers.tpl`, `dcgm-exporter.selectorLabels`), its Service's port
/// (`deployment/templates/service.yaml`), and where raykueue expects it: the monitoring
/// namespace.
pub(crate) const DCGM_NAME: &str = "dcgm-exporter";
const DCGM_PORT: &str = "metrics";

/// Which collector's objects `monitoring/` holds: a Prometheus Operator stack's, or a cloud's
/// managed Prometheus's; `None` when the profile is not monitored or its managed collector has
/// no cloud to name it.
pub(crate) fn collector(p: &Profile) -> Option<(Resolved, Option<ManagedFlavour>)> {
    let m = monitoring::resolve(p)?;
    match (m.collector, m.managed) {
        (Collector::PrometheusOperator, _) => Some((m, None)),
        (Collector::Managed, Some(f)) => Some((m, Some(f))),
        _ => None,
    }
}

/// The monitoring objects, in apply order; none when the profile is not monitored.
pub(crate) fn monitoring_objects(p: &Profile) -> Vec<Object> {
    let Some((m, flavour)) = collector(p) else {
        return Vec::new();
    };
    let family = match flavour {
        None => Family::Operator,
        Some(ManagedFlavour::AzureMonitor) => Family::Azure,
        Some(ManagedFlavour::Alibaba) => Family::Alibaba,
        Some(f) => return sorted(managed::objects(p, &m, f)),
    };
    let mut out = Vec::new();
    if family != Family::Operator {
        out.extend(managed::reader_objects(p, None));
    }
    if let Some(o) = kueue_monitor(p, &m, family) {
        out.push(o);
    }
    if let Some(o) = kuberay_monitor(p, &m, family) {
        out.push(o);
    }
    out.extend(ray_monitors(p, &m, family));
    if m.gpu_metrics == GpuMetrics::DcgmExporter {
        out.push(dcgm_monitor(&m, family));
    }
    match family {
        Family::Operator => {
            out.push(rules(p, &m, &m.namespace));
            out.extend(dashboard_configmaps(p, &m));
        }
        // ARMS reads PrometheusRules when its rule sync is on (`docs/monitoring.md`); they go
        // beside Kueue, whose namespace exists whatever else is installed.
        Family::Alibaba => {
            if let Some(k) = &p.operators.kueue {
                out.push(rules(p, &m, k.namespace.as_str()));
            }
        }
        Family::Azure => {}
    }
    sorted(out)
}

/// In the order `monitoring/kustomization.yaml` lists their files (the folder's files by name,
/// then `dashboards/`), so that `gen --only monitoring` prints the folder's stream.
fn sorted(mut out: Vec<Object>) -> Vec<Object> {
    out.sort_by(|a, b| {
        let key = |o: &Object| {
            let name = o.file.strip_prefix("monitoring/").unwrap_or(&o.file);
            (name.contains('/'), name.to_owned())
        };
        key(a).cmp(&key(b))
    });
    out
}

/// The collectors that read the Prometheus Operator's kinds, and how each wants them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// An in-cluster stack: every object in the monitoring namespace, labelled with the
    /// stack's `release` (what its Prometheus selects them by).
    Operator,
    /// Azure Monitor's add-on: its own API group (`azmonitoring.coreos.com/v1`), any
    /// namespace, no label asked for; the label limits its documentation says to set
    /// (learn.microsoft.com `azure-monitor/containers/prometheus-metrics-scrape-crd`).
    Azure,
    /// Alibaba's agent: the Prometheus Operator's kinds, any namespace, discovered when
    /// annotated `arms.prometheus.io/discovery: "true"` (its `CreateEnvServiceMonitor` API
    /// reference).
    Alibaba,
}

const AZURE_MONITORING_API: &str = "azmonitoring.coreos.com/v1";
const ARMS_DISCOVERY: (&str, &str) = ("arms.prometheus.io/discovery", "true");

impl Family {
    fn api(self) -> &'static str {
        match self {
            Family::Azure => AZURE_MONITORING_API,
            Family::Operator | Family::Alibaba => MONITORING_API,
        }
    }

    /// Where a monitor of targets in `target_ns` goes: the stack's namespace, or beside its
    /// targets (a managed collector reads every namespace, and the token Kueue's monitor
    /// reads must be in the monitor's own).
    fn namespace<'a>(self, m: &'a Resolved, target_ns: &'a str) -> &'a str {
        match self {
            Family::Operator => &m.namespace,
            Family::Azure | Family::Alibaba => target_ns,
        }
    }

    fn metadata(self, name: &str, namespace: &str, m: &Resolved) -> Value {
        match self {
            Family::Operator => json!({
                "name": name,
                "namespace": namespace,
                "labels": { MANAGED_BY.0: MANAGED_BY.1, "release": m.release },
            }),
            Family::Azure => json!({
                "name": name,
                "namespace": namespace,
                "labels": { MANAGED_BY.0: MANAGED_BY.1 },
            }),
            Family::Alibaba => json!({
                "name": name,
                "namespace": namespace,
                "labels": { MANAGED_BY.0: MANAGED_BY.1 },
                "annotations": { ARMS_DISCOVERY.0: ARMS_DISCOVERY.1 },
            }),
        }
    }

    /// The spec as the family wants it: Azure's label limits first.
    fn spec(self, spec: Value) -> Value {
        match (self, spec) {
            (Family::Azure, Value::Object(fields)) => {
                let mut out = serde_json::Map::new();
                out.insert("labelLimit".into(), 63.into());
                out.insert("labelNameLengthLimit".into(), 511.into());
                out.insert("labelValueLengthLimit".into(), 1023.into());
                out.extend(fields);
                Value::Object(out)
            }
            (_, spec) => spec,
        }
    }

    /// How Kueue's metrics endpoint is authenticated: the stack's Prometheus presents its own
    /// service account's token (kube-prometheus-stack grants it `get` on `/metrics`); a
    /// managed collector presents the token of raykueue's reader (`managed::reader_objects`).
    fn kueue_auth(self) -> (&'static str, Value) {
        match self {
            Family::Operator => (
                "bearerTokenFile",
                Value::from("/var/run/secrets/kubernetes.io/serviceaccount/token"),
            ),
            Family::Azure | Family::Alibaba => (
                "authorization",
                json!({
                    "type": "Bearer",
                    "credentials": { "name": managed::READER_TOKEN, "key": "token" },
                }),
            ),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn object(
    family: Family,
    kind: &'static str,
    name: &str,
    namespace: &str,
    file: &str,
    m: &Resolved,
    spec: Value,
) -> Object {
    Object::data(
        kind,
        name,
        Some(namespace),
        format!("{DIR}/{file}"),
        k8s(
            family.api(),
            kind,
            family.metadata(name, namespace, m),
            [("spec", family.spec(spec))],
        ),
    )
}

/// The Kueue chart's full name (kueue@v0.19.2 `charts/kueue/templates/_helpers.tpl`,
/// `kueue.fullname`: the release name when it contains `kueue`, else `<release>-kueue`).
pub(crate) fn kueue_fullname(release: &str) -> String {
    if release.contains("kueue") {
        release.to_owned()
    } else {
        format!("{release}-kueue")
    }
}

/// The Kueue controller's metrics Service, as the Kueue chart's own ServiceMonitor scrapes it
/// (kueue@v0.19.2 `charts/kueue/templates/prometheus/monitor.yaml`): HTTPS on port `https`,
/// authenticated with the Prometheus service account's token, the chart's default
/// `tlsConfig` (`metrics.serviceMonitor.tlsConfig: {insecureSkipVerify: true}` in
/// `charts/kueue/values.yaml`: the certificate is Kueue's self-signed one), and the Service
/// selected by its labels (`kueue.metricsService.labels`).
fn kueue_monitor(p: &Profile, m: &Resolved, family: Family) -> Option<Object> {
    let k = p.operators.kueue.as_ref()?;
    let (auth_key, auth) = family.kueue_auth();
    let mut endpoint = serde_json::Map::new();
    endpoint.insert("path".into(), "/metrics".into());
    endpoint.insert("port".into(), "https".into());
    endpoint.insert("scheme".into(), "https".into());
    endpoint.insert(auth_key.into(), auth);
    endpoint.insert("tlsConfig".into(), json!({ "insecureSkipVerify": true }));
    let spec = json!({
        "namespaceSelector": { "matchNames": [k.namespace.as_str()] },
        "selector": { "matchLabels": {
            "app.kubernetes.io/name": "kueue",
            "app.kubernetes.io/instance": k.release.as_str(),
            "app.kubernetes.io/component": "metrics-service",
        }},
        "endpoints": [Value::Object(endpoint)],
    });
    Some(object(
        family,
        "ServiceMonitor",
        "kueue",
        family.namespace(m, k.namespace.as_str()),
        "servicemonitor-kueue.yaml",
        m,
        spec,
    ))
}

/// The KubeRay operator's Service, as its chart's ServiceMonitor scrapes it
/// (ray-project/kuberay@v1.7.0 `helm-chart/kuberay-operator/templates/servicemonitor.yaml`:
/// `/metrics` on target port `http`, selected by `app.kubernetes.io/name`).
fn kuberay_monitor(p: &Profile, m: &Resolved, family: Family) -> Option<Object> {
    let k = p.operators.kuberay.as_ref()?;
    let spec = json!({
        "namespaceSelector": { "matchNames": [k.namespace.as_str()] },
        "selector": { "matchLabels": {
            "app.kubernetes.io/name": k.chart.rsplit('/').next().unwrap_or("kuberay-operator"),
            "app.kubernetes.io/instance": k.release.as_str(),
        }},
        "endpoints": [{ "path": "/metrics", "targetPort": "http" }],
    });
    Some(object(
        family,
        "ServiceMonitor",
        "kuberay-operator",
        family.namespace(m, k.namespace.as_str()),
        "servicemonitor-kuberay-operator.yaml",
        m,
        spec,
    ))
}

/// The namespaces the profile's Ray pods run in, sorted.
pub(super) fn workload_namespaces(p: &Profile) -> Vec<String> {
    let mut out: BTreeSet<String> = p
        .workloads
        .iter()
        .map(|w| w.namespace_in(p).to_owned())
        .collect();
    out.insert(p.namespace.to_string());
    out.into_iter().collect()
}

/// The Ray heads and workers, as KubeRay's example PodMonitors scrape them
/// (ray-project/kuberay@v1.7.0 `config/prometheus/podMonitor.yaml`): pods by
/// `ray.io/node-type`, Ray's metrics export port `metrics` (the head also the autoscaler's
/// `as-metrics` and the dashboard's `dash-metrics`), each series labelled with its RayCluster
/// (`ray_io_cluster`), in the profile's namespaces only: one pair in the stack's namespace,
/// or a pair beside the pods of each namespace.
fn ray_monitors(p: &Profile, m: &Resolved, family: Family) -> Vec<Object> {
    let namespaces = workload_namespaces(p);
    if family == Family::Operator {
        return ray_monitor_pair(&namespaces, &m.namespace, m, family);
    }
    namespaces
        .iter()
        .flat_map(|ns| ray_monitor_pair(std::slice::from_ref(ns), ns, m, family))
        .collect()
}

/// The heads' and the workers' PodMonitors in `namespace`, over the pods of `namespaces`.
fn ray_monitor_pair(
    namespaces: &[String],
    namespace: &str,
    m: &Resolved,
    family: Family,
) -> Vec<Object> {
    let relabel = || {
        json!([{
            "action": "replace",
            "sourceLabels": ["__meta_kubernetes_pod_label_ray_io_cluster"],
            "targetLabel": "ray_io_cluster",
        }])
    };
    let endpoints = |ports: &[&str]| -> Value {
        ports
            .iter()
            .map(|port| json!({ "port": port, "relabelings": relabel() }))
            .collect()
    };
    [
        (
            "ray-head",
            "head",
            &["metrics", "as-metrics", "dash-metrics"][..],
        ),
        ("ray-workers", "worker", &["metrics"][..]),
    ]
    .into_iter()
    .map(|(name, node_type, ports)| {
        let spec = json!({
            "jobLabel": name,
            "namespaceSelector": { "matchNames": namespaces },
            "selector": { "matchLabels": { "ray.io/node-type": node_type } },
            "podMetricsEndpoints": endpoints(ports),
        });
        object(
            family,
            "PodMonitor",
            name,
            namespace,
            "podmonitor-ray.yaml",
            m,
            spec,
        )
    })
    .collect()
}

/// The DCGM exporter's Service in the monitoring namespace. Its series keep the target's labels
/// (`honorLabels: false`, the chart's own ServiceMonitor default), so the GPU's pod appears as
/// `exported_namespace` and `exported_pod`; `node` is the node the exporter runs on, which the
/// dashboard joins with the node's pool label.
fn dcgm_monitor(m: &Resolved, family: Family) -> Object {
    let spec = json!({
        "namespaceSelector": { "matchNames": [m.namespace] },
        "selector": { "matchLabels": { "app.kubernetes.io/name": DCGM_NAME } },
        "endpoints": [{
            "port": DCGM_PORT,
            "path": "/metrics",
            "honorLabels": false,
            "relabelings": [{
                "action": "replace",
                "sourceLabels": ["__meta_kubernetes_endpoint_node_name"],
                "targetLabel": "node",
            }],
        }],
    });
    object(
        family,
        "ServiceMonitor",
        DCGM_NAME,
        &m.namespace,
        "servicemonitor-dcgm-exporter.yaml",
        m,
        spec,
    )
}

/// `a|b|c`, every name escaped for a PromQL regex in a double-quoted string.
fn alternatives<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| n.replace('.', "\\\\."))
        .collect::<Vec<_>>()
        .join("|")
}

/// The profile's ClusterQueues: all, and those with GPU quota.
fn queues(p: &Profile) -> (Vec<&str>, Vec<&str>) {
    let Some(q) = &p.queues else {
        return (Vec::new(), Vec::new());
    };
    let all = q.cluster_queues.iter().map(|c| c.name.as_str()).collect();
    let gpu = q
        .cluster_queues
        .iter()
        .filter(|c| {
            c.resource_groups.iter().any(|rg| {
                rg.covered_resources
                    .iter()
                    .any(|r| r.as_str() == crate::cloud::GPU_RESOURCE)
            })
        })
        .map(|c| c.name.as_str())
        .collect();
    (all, gpu)
}

/// One alerting rule. The expression ends with a newline, so that it is written as a literal
/// block, as written here.
fn alert(name: &str, mut expr: String, for_: &str, severity: &str, summary: &str) -> Value {
    expr.push('\n');
    json!({
        "alert": name,
        "expr": Value::String(expr),
        "for": for_,
        "labels": { "severity": severity },
        "annotations": { "summary": summary },
    })
}

/// The alerts platform teams get paged for, over the profile's queues.
pub(crate) fn alert_rules(p: &Profile, m: &Resolved) -> Vec<Value> {
    let a = &m.alerts;
    let (all, gpu) = queues(p);
    let cqs = alternatives(all.iter().copied());
    let mut rules = Vec::new();
    if !all.is_empty() {
        // Pending although the cohort has nominal quota nobody uses: the workload asks for a
        // flavor or resource its queue does not give, or more than a borrowing limit allows.
        rules.push(alert(
            "KueuePendingWithUnusedCohortQuota",
            format!(
                "(sum by (cluster_queue, cohort) ((sum by (cluster_queue) (kueue_pending_workloads{{cluster_queue=~\"{cqs}\"}}) > 0) * on (cluster_queue) group_left (cohort) (max by (cluster_queue, cohort) (kueue_cluster_queue_nominal_quota{{cohort!=\"\"}}) * 0 + 1))) and on (cohort) (count by (cohort) ((sum by (cohort, flavor, resource) (kueue_cluster_queue_nominal_quota{{cohort!=\"\"}}) - sum by (cohort, flavor, resource) (kueue_cluster_queue_resource_usage{{cohort!=\"\"}})) > 0))"
            ),
            a.pending_for.as_str(),
            "warning",
            "{{ $labels.cluster_queue }} waits though cohort {{ $labels.cohort }} has unused quota",
        ));
        rules.push(alert(
            "KueueClusterQueueInactive",
            format!(
                "kueue_cluster_queue_status{{cluster_queue=~\"{cqs}\", status=\"active\"}} == 0"
            ),
            a.inactive_for.as_str(),
            "critical",
            "ClusterQueue {{ $labels.cluster_queue }} is inactive and admits nothing",
        ));
        rules.push(alert(
            "KueuePreemptionStorm",
            format!(
                "sum by (preempting_cluster_queue) (increase(kueue_preempted_workloads_total{{preempting_cluster_queue=~\"{cqs}\"}}[1h])) > {}",
                a.preemptions_per_hour
            ),
            "0m",
            "warning",
            "ClusterQueue {{ $labels.preempting_cluster_queue }} preempts too often",
        ));
    }
    if m.gpu_metrics == GpuMetrics::DcgmExporter && !gpu.is_empty() {
        rules.push(alert(
            "GpusIdleWhileWorkloadsWait",
            format!(
                "(avg by (node) (DCGM_FI_DEV_GPU_UTIL) < {}) and on () (sum(kueue_pending_workloads{{cluster_queue=~\"{}\"}}) > 0)",
                a.gpu_idle_below_percent,
                alternatives(gpu.iter().copied())
            ),
            a.gpu_idle_for.as_str(),
            "warning",
            "GPUs on {{ $labels.node }} are idle while GPU workloads wait",
        ));
    }
    if let Some(k) = &p.operators.kueue {
        // A ServiceMonitor's series carry the Service's name; a PodMonitoring's and the AWS
        // collector's jobs are named by raykueue (`managed::KUEUE_JOB`).
        let target = match m.managed {
            Some(ManagedFlavour::Google | ManagedFlavour::Amazon) => {
                format!("job=\"{}\"", managed::KUEUE_JOB)
            }
            _ => format!(
                "service=\"{}-controller-manager-metrics-service\"",
                kueue_fullname(k.release.as_str())
            ),
        };
        rules.push(alert(
            "KueueControllerDown",
            format!("absent(up{{namespace=\"{}\", {target}}} == 1)", k.namespace),
            a.controller_down_for.as_str(),
            "critical",
            "Kueue controller down, so nothing is admitted",
        ));
    }
    rules
}

/// The PrometheusRule with the alerts, in one group.
fn rules(p: &Profile, m: &Resolved, namespace: &str) -> Object {
    let spec = json!({
        "groups": [{
            "name": format!("raykueue-{}", p.name),
            "rules": alert_rules(p, m),
        }],
    });
    let family = if m.managed.is_some() {
        Family::Alibaba
    } else {
        Family::Operator
    };
    object(
        family,
        "PrometheusRule",
        &format!("raykueue-{}", p.name),
        namespace,
        "prometheusrule.yaml",
        m,
        spec,
    )
}

/// The file of a dashboard in `monitoring/dashboards/`, by its uid.
fn dashboard_file(uid: &str) -> String {
    format!("{DASHBOARDS}/{uid}.json")
}

/// The dashboards' JSON files (`monitoring/dashboards/raykueue-<profile>.json`, numbered when
/// there are several), for a Grafana that imports dashboards rather than reading the
/// ConfigMaps: the same texts.
pub(crate) fn dashboard_json(p: &Profile) -> Vec<super::TextFile> {
    let Some((m, _)) = collector(p) else {
        return Vec::new();
    };
    dashboard::texts(p, &m)
        .into_iter()
        .map(|(uid, text)| super::TextFile::written(dashboard_file(&uid), text))
        .collect()
}

/// Each dashboard as a ConfigMap the Grafana sidecar loads, all in one file.
fn dashboard_configmaps(p: &Profile, m: &Resolved) -> Vec<Object> {
    dashboard::texts(p, m)
        .into_iter()
        .map(|(uid, text)| dashboard_configmap(&uid, &text, m))
        .collect()
}

fn dashboard_configmap(uid: &str, text: &str, m: &Resolved) -> Object {
    let name = format!("{uid}-dashboard");
    let key = format!("{uid}.json");
    Object::data(
        "ConfigMap",
        name.clone(),
        Some(&m.namespace),
        format!("{DASHBOARDS}/configmap.yaml"),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name,
                "namespace": m.namespace,
                "labels": {
                    MANAGED_BY.0: MANAGED_BY.1,
                    GRAFANA_DASHBOARD_LABEL.0: GRAFANA_DASHBOARD_LABEL.1,
                },
            },
            "data": { key: text },
        }),
    )
}

/// The summary's "Monitoring" section: what is scraped, the alerts and where the dashboard is;
/// `null` when the profile is not monitored.
pub(crate) fn summary(p: &Profile) -> Value {
    let Some(m) = monitoring::resolve(p) else {
        return Value::Null;
    };
    let Some((_, flavour)) = collector(p) else {
        return json!({
            "managed": "a managed Prometheus, which the profile names no cloud for: `monitoring/` is not written",
            "unwritten": true,
        });
    };
    let mut scraped = Vec::new();
    if let Some(k) = &p.operators.kueue {
        let token = match flavour {
            None => "the Prometheus service account's token",
            Some(ManagedFlavour::Amazon) => "the collector's own EKS identity",
            Some(_) => "the token of ServiceAccount `raykueue-metrics-reader`",
        };
        scraped.push(format!(
            "Kueue's controller (`{}`, HTTPS with {token})",
            k.namespace
        ));
    }
    if let Some(k) = &p.operators.kuberay {
        scraped.push(format!("the KubeRay operator (`{}`)", k.namespace));
    }
    scraped.push(format!(
        "Ray heads and workers (port `metrics`) in {}",
        workload_namespaces(p)
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if m.gpu_metrics == GpuMetrics::DcgmExporter {
        scraped.push(format!("NVIDIA's DCGM exporter (`{}`)", m.namespace));
    }
    if m.gpu_metrics == GpuMetrics::AksGpuMonitoring {
        scraped.push(
            "no GPU series: the AKS AI runtime's gpu-monitoring chart (`gpu-monitoring`) reports GPU health as node conditions (`kubectl describe node`)"
                .to_owned(),
        );
    }
    let alerts: Vec<Value> = alert_rules(p, &m)
        .into_iter()
        .map(|r| json!({ "name": r["alert"], "for": r["for"], "summary": r["annotations"]["summary"] }))
        .collect();
    let dashboard = dashboard::uids(p, &m)
        .iter()
        .map(|uid| format!("`{}`", dashboard_file(uid)))
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(f) = flavour {
        let (service, how) = managed::summary_words(p, f);
        return json!({
            "managed": service,
            "how": how,
            "scraped": scraped,
            "alerts": alerts,
            "dashboard": dashboard,
        });
    }
    json!({
        "managed": null,
        "namespace": m.namespace,
        "release": m.release,
        "scraped": scraped,
        "alerts": alerts,
        "dashboard": dashboard,
        "configmap": format!("{DASHBOARDS}/configmap.yaml"),
    })
}
