//! What a cloud's managed Prometheus reads (`monitoring.collector: managed`), per flavour
//! (`cloud::ManagedFlavour`; sources in each cloud's `PROMETHEUS` and in
//! `docs/monitoring.md`, "Managed Prometheus"):
//!
//! - Azure Monitor and Alibaba: ServiceMonitors and PodMonitors (`super::Family`), written by
//!   the same builders as the stack's;
//! - Google: PodMonitorings beside their pods and a ClusterRules (this file);
//! - Amazon: no Kubernetes object; a scrape configuration and a rules file that `up.sh` hands to
//!   `aws amp` (this file).
//!
//! Kueue's metrics endpoint answers only a caller whose bearer token may `get` `/metrics`
//! (kueue@v0.19.2 `cmd/kueue/main.go`, `filters.WithAuthenticationAndAuthorization`). The
//! stack's Prometheus has such a token of its own; a managed collector that reads secrets gets
//! raykueue's reader's (`reader_objects`), and Amazon's collector presents its own identity.

use super::{DCGM_NAME, DIR, Object, Resolved, alert_rules, k8s, workload_namespaces};
use crate::cloud::ManagedFlavour;
use crate::model::{MANAGED_BY, TextFile};
use crate::profile::{GpuMetrics, Profile};
use serde_json::{Value, json};
use std::fmt::Write as _;

/// The ServiceAccount whose token a managed collector scrapes Kueue with, its token Secret
/// (in Kueue's namespace: Azure's add-on and Google's collectors read a secret only from the
/// namespace of the object that names it), and the ClusterRole that lets it read `/metrics`.
pub(super) const READER: &str = "raykueue-metrics-reader";
pub(super) const READER_TOKEN: &str = "raykueue-metrics-reader-token";
/// The job of Kueue's series where raykueue names it (a PodMonitoring's name is its job:
/// prometheus-engine@v0.17.2 `pkg/operator/apis/monitoring/v1/pod_types.go`; the AWS
/// collector's `job_name`).
pub(crate) const KUEUE_JOB: &str = "kueue";
const GMP_API: &str = "monitoring.googleapis.com/v1";
/// Google's collectors run as this ServiceAccount, and read a secret only where a Role lets
/// them (prometheus-engine@v0.17.2 `examples/instrumentation/go-synthetic/go-synthetic-basic-auth.yaml`).
const GMP_COLLECTOR: (&str, &str) = ("gmp-system", "collector");
/// How often the managed collectors scrape: Amazon's shortest interval (its scraper
/// configuration reference), and Google's, which asks for one.
const INTERVAL: &str = "30s";
/// How often the managed flavours evaluate the rules.
const RULES_INTERVAL: &str = "1m";

pub(super) const FILE_AMP_SCRAPE: &str = "monitoring/amp-scrape-configuration.yaml";
pub(super) const FILE_AMP_RULES: &str = "monitoring/amp-rules.yaml";
pub(super) const FILE_AZURE_RULES: &str = "monitoring/azure-prometheus-rule-group.json";

/// Google's objects (PodMonitorings, ClusterRules, the reader) and Amazon's (none).
pub(super) fn objects(p: &Profile, m: &Resolved, flavour: ManagedFlavour) -> Vec<Object> {
    if flavour != ManagedFlavour::Google {
        return Vec::new();
    }
    let mut out = reader_objects(p, Some(GMP_COLLECTOR));
    out.extend(
        targets(p, m)
            .into_iter()
            .map(|t| pod_monitoring(&t, &t.namespace)),
    );
    out.extend(cluster_rules(p, m));
    out
}

/// A scrape target, as the managed flavours that select pods see it.
struct Target {
    /// The job: the PodMonitoring's name, the AWS collector's `job_name`.
    job: String,
    namespace: String,
    /// The pods' labels.
    selector: Vec<(&'static str, String)>,
    /// The pods' container ports, by name.
    ports: &'static [&'static str],
    /// Kueue's: HTTPS with a token.
    secured: bool,
    /// A pod label kept as a series label (`ray.io/cluster` → `ray_io_cluster`).
    from_pod: Option<(&'static str, &'static str)>,
    /// The node's name kept as `node` (the DCGM exporter's: the dashboard joins on it).
    node: bool,
}

/// Kueue's controller, the KubeRay operator, the Ray pods of each namespace, the DCGM exporter:
/// what the stack's monitors scrape, by pod.
fn targets(p: &Profile, m: &Resolved) -> Vec<Target> {
    let mut out = Vec::new();
    if let Some(k) = &p.operators.kueue {
        // kueue@v0.19.2 `charts/kueue/templates/manager/manager.yaml`: the pod's labels
        // (`kueue.selectorLabels`) and its metrics port.
        out.push(Target {
            job: KUEUE_JOB.to_owned(),
            namespace: k.namespace.to_string(),
            selector: vec![
                ("app.kubernetes.io/name", "kueue".to_owned()),
                ("app.kubernetes.io/instance", k.release.to_string()),
                ("control-plane", "controller-manager".to_owned()),
            ],
            ports: &["metrics"],
            secured: true,
            from_pod: None,
            node: false,
        });
    }
    if let Some(k) = &p.operators.kuberay {
        // kuberay@v1.7.0 `helm-chart/kuberay-operator/templates/deployment.yaml`.
        out.push(Target {
            job: "kuberay-operator".to_owned(),
            namespace: k.namespace.to_string(),
            selector: vec![
                (
                    "app.kubernetes.io/name",
                    k.chart
                        .rsplit('/')
                        .next()
                        .unwrap_or("kuberay-operator")
                        .to_owned(),
                ),
                ("app.kubernetes.io/instance", k.release.to_string()),
            ],
            ports: &["http"],
            secured: false,
            from_pod: None,
            node: false,
        });
    }
    for ns in workload_namespaces(p) {
        for (job, node_type, ports) in [
            (
                "ray-head",
                "head",
                &["metrics", "as-metrics", "dash-metrics"][..],
            ),
            ("ray-workers", "worker", &["metrics"][..]),
        ] {
            out.push(Target {
                job: job.to_owned(),
                namespace: ns.clone(),
                selector: vec![("ray.io/node-type", node_type.to_owned())],
                ports,
                secured: false,
                from_pod: Some(("ray.io/cluster", "ray_io_cluster")),
                node: false,
            });
        }
    }
    if m.gpu_metrics == GpuMetrics::DcgmExporter {
        // NVIDIA/dcgm-exporter@4.5.3-4.8.2 `deployment/templates/daemonset.yaml`.
        out.push(Target {
            job: DCGM_NAME.to_owned(),
            namespace: m.namespace.clone(),
            selector: vec![("app.kubernetes.io/name", DCGM_NAME.to_owned())],
            ports: &["metrics"],
            secured: false,
            from_pod: None,
            node: true,
        });
    }
    out
}

fn metadata(name: &str, namespace: Option<&str>) -> Value {
    let mut meta = serde_json::Map::new();
    meta.insert("name".into(), name.into());
    if let Some(ns) = namespace {
        meta.insert("namespace".into(), ns.into());
    }
    meta.insert("labels".into(), json!({ MANAGED_BY.0: MANAGED_BY.1 }));
    Value::Object(meta)
}

fn file(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// The ServiceAccount, token and leave to read `/metrics` that a managed collector scrapes
/// Kueue with, in Kueue's namespace; with `collector`, also a Role that lets that collector's
/// ServiceAccount read the token.
pub(super) fn reader_objects(p: &Profile, collector: Option<(&str, &str)>) -> Vec<Object> {
    let Some(k) = &p.operators.kueue else {
        return Vec::new();
    };
    let ns = k.namespace.as_str();
    let path = file("metrics-reader.yaml");
    let rbac = "rbac.authorization.k8s.io/v1";
    let account = json!([{ "kind": "ServiceAccount", "name": READER, "namespace": ns }]);
    let mut token_meta = metadata(READER_TOKEN, Some(ns));
    token_meta["annotations"] = json!({ "kubernetes.io/service-account.name": READER });
    let mut out = vec![
        Object::data(
            "ServiceAccount",
            READER,
            Some(ns),
            &path,
            k8s("v1", "ServiceAccount", metadata(READER, Some(ns)), []),
        ),
        Object::data(
            "Secret",
            READER_TOKEN,
            Some(ns),
            &path,
            k8s(
                "v1",
                "Secret",
                token_meta,
                [("type", "kubernetes.io/service-account-token".into())],
            ),
        ),
        Object::data(
            "ClusterRole",
            READER,
            None,
            &path,
            k8s(
                rbac,
                "ClusterRole",
                metadata(READER, None),
                [(
                    "rules",
                    json!([{ "nonResourceURLs": ["/metrics"], "verbs": ["get"] }]),
                )],
            ),
        ),
        Object::data(
            "ClusterRoleBinding",
            READER,
            None,
            &path,
            k8s(
                rbac,
                "ClusterRoleBinding",
                metadata(READER, None),
                [
                    (
                        "roleRef",
                        json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": READER }),
                    ),
                    ("subjects", account),
                ],
            ),
        ),
    ];
    if let Some((collector_ns, collector_sa)) = collector {
        out.push(Object::data(
            "Role",
            READER_TOKEN,
            Some(ns),
            &path,
            k8s(
                rbac,
                "Role",
                metadata(READER_TOKEN, Some(ns)),
                [(
                    "rules",
                    json!([{
                        "apiGroups": [""],
                        "resources": ["secrets"],
                        "resourceNames": [READER_TOKEN],
                        "verbs": ["get", "list", "watch"],
                    }]),
                )],
            ),
        ));
        out.push(Object::data(
            "RoleBinding",
            READER_TOKEN,
            Some(ns),
            &path,
            k8s(
                rbac,
                "RoleBinding",
                metadata(READER_TOKEN, Some(ns)),
                [
                    (
                        "roleRef",
                        json!({ "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": READER_TOKEN }),
                    ),
                    (
                        "subjects",
                        json!([{ "kind": "ServiceAccount", "name": collector_sa, "namespace": collector_ns }]),
                    ),
                ],
            ),
        ));
    }
    out
}

/// A PodMonitoring (prometheus-engine@v0.17.2 `charts/operator/crds/monitoring.googleapis.com_podmonitorings.yaml`):
/// it selects pods of its own namespace only, so it goes beside them. Kueue's endpoint reads
/// the reader's token from that namespace; the DCGM exporter's targets keep the node's name as
/// `node` and the GPU's pod as `exported_pod` (their own `pod` label set aside, as Prometheus
/// does beside a target label).
fn pod_monitoring(t: &Target, namespace: &str) -> Object {
    let endpoints: Vec<Value> = t
        .ports
        .iter()
        .map(|port| {
            let mut e = serde_json::Map::new();
            e.insert("port".into(), (*port).into());
            e.insert("interval".into(), INTERVAL.into());
            if t.secured {
                e.insert("scheme".into(), "https".into());
                e.insert("tls".into(), json!({ "insecureSkipVerify": true }));
                e.insert(
                    "authorization".into(),
                    json!({ "type": "Bearer", "credentials": { "secret": { "name": READER_TOKEN, "key": "token" } } }),
                );
            }
            Value::Object(e)
        })
        .collect();
    let selector: serde_json::Map<String, Value> = t
        .selector
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone().into()))
        .collect();
    let mut spec = serde_json::Map::new();
    spec.insert("selector".into(), json!({ "matchLabels": selector }));
    spec.insert("endpoints".into(), endpoints.into());
    if let Some((from, to)) = t.from_pod {
        spec.insert(
            "targetLabels".into(),
            json!({ "fromPod": [{ "from": from, "to": to }] }),
        );
    } else if t.node {
        spec.insert(
            "targetLabels".into(),
            json!({ "metadata": ["container", "node", "pod"] }),
        );
    }
    let name = match t.job.as_str() {
        "ray-head" | "ray-workers" => "ray",
        other => other,
    };
    Object::data(
        "PodMonitoring",
        &t.job,
        Some(namespace),
        file(&format!("podmonitoring-{name}.yaml")),
        k8s(
            GMP_API,
            "PodMonitoring",
            metadata(&t.job, Some(namespace)),
            [("spec", Value::Object(spec))],
        ),
    )
}

/// The alerts as a ClusterRules: its queries see the whole cluster's series (a `Rules` sees
/// its own namespace's only, and the alerts join Kueue's with the DCGM exporter's). None
/// without alerts (a group needs one).
fn cluster_rules(p: &Profile, m: &Resolved) -> Option<Object> {
    let rules = alert_rules(p, m);
    if rules.is_empty() {
        return None;
    }
    let name = format!("raykueue-{}", p.name);
    Some(Object::data(
        "ClusterRules",
        &name,
        None,
        file("clusterrules.yaml"),
        k8s(
            GMP_API,
            "ClusterRules",
            metadata(&name, None),
            [(
                "spec",
                json!({ "groups": [{
                    "name": name,
                    "interval": RULES_INTERVAL,
                    "rules": rules,
                }]}),
            )],
        ),
    ))
}

/// The files of `monitoring/` that are not Kubernetes objects: Amazon's scrape configuration
/// and rules, Azure's rule group.
pub(crate) fn managed_texts(p: &Profile) -> Vec<TextFile> {
    let Some((m, Some(flavour))) = super::collector(p) else {
        return Vec::new();
    };
    let alerts = !alert_rules(p, &m).is_empty();
    match flavour {
        ManagedFlavour::Amazon => {
            let mut out = vec![TextFile::written(
                FILE_AMP_SCRAPE,
                amp_scrape_configuration(p, &m),
            )];
            if alerts {
                out.push(TextFile::written(FILE_AMP_RULES, rules_file(p, &m)));
            }
            out
        }
        ManagedFlavour::AzureMonitor if alerts => {
            vec![TextFile::written(FILE_AZURE_RULES, azure_rule_group(p, &m))]
        }
        _ => Vec::new(),
    }
}

/// YAML of a JSON value, as the bundle writes it, under the bundle's header.
fn yaml(v: &Value) -> String {
    let body = crate::base::yaml::to_yaml(v).unwrap_or_default();
    format!("{}{body}", crate::base::yaml::HEADER)
}

/// The alerts as a Prometheus rule file (`promtool check rules` reads it; so does
/// `aws amp create-rule-groups-namespace`).
fn rules_file(p: &Profile, m: &Resolved) -> String {
    yaml(&json!({ "groups": [{
        "name": format!("raykueue-{}", p.name),
        "interval": RULES_INTERVAL,
        "rules": alert_rules(p, m),
    }]}))
}

/// The AWS managed collector's scrape configuration: Prometheus's own format, within what
/// its scraper takes (docs.aws.amazon.com `prometheus/latest/userguide/AMP-collector-how-to.html`,
/// "Scraper configuration": Kubernetes service discovery only, intervals of 30 s or more, a
/// bearer token only from the service account token file, which is the collector's own EKS
/// identity). Each job keeps its pods by their labels and port name, as the stack's monitors
/// select them, and labels each series with its namespace and pod as they do.
fn amp_scrape_configuration(p: &Profile, m: &Resolved) -> String {
    // One job per target, over every namespace of its pods (the Ray pods' are several).
    let mut jobs: Vec<(Target, Vec<String>)> = Vec::new();
    for t in targets(p, m) {
        if let Some((_, namespaces)) = jobs
            .iter_mut()
            .find(|(a, _)| a.job == t.job && a.selector == t.selector)
        {
            namespaces.push(t.namespace);
        } else {
            let namespaces = vec![t.namespace.clone()];
            jobs.push((t, namespaces));
        }
    }
    let jobs: Vec<Value> = jobs.iter().map(|(t, ns)| scrape_job(t, ns)).collect();
    yaml(&json!({
        "global": { "scrape_interval": INTERVAL },
        "scrape_configs": jobs,
    }))
}

/// `__meta_kubernetes_pod_label_<name>`: Prometheus's name of a pod label.
fn pod_label(key: &str) -> String {
    let mut out = String::from("__meta_kubernetes_pod_label_");
    out.extend(
        key.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    out
}

fn scrape_job(t: &Target, namespaces: &[String]) -> Value {
    let mut keep_labels: Vec<String> = t.selector.iter().map(|(k, _)| pod_label(k)).collect();
    keep_labels.push("__meta_kubernetes_pod_container_port_name".into());
    let mut keep_values: Vec<String> = t.selector.iter().map(|(_, v)| regex_escape(v)).collect();
    keep_values.push(t.ports.join("|"));
    let mut relabel = vec![
        json!({ "source_labels": keep_labels, "regex": keep_values.join(";"), "action": "keep" }),
        json!({ "source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace" }),
        json!({ "source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod" }),
    ];
    if let Some((from, to)) = t.from_pod {
        relabel.push(json!({ "source_labels": [pod_label(from)], "target_label": to }));
    }
    if t.node {
        relabel.push(
            json!({ "source_labels": ["__meta_kubernetes_pod_node_name"], "target_label": "node" }),
        );
    }
    let mut job = serde_json::Map::new();
    job.insert("job_name".into(), t.job.clone().into());
    if t.secured {
        job.insert("scheme".into(), "https".into());
        job.insert(
            "authorization".into(),
            json!({ "type": "Bearer", "credentials_file": "/var/run/secrets/kubernetes.io/serviceaccount/token" }),
        );
        job.insert("tls_config".into(), json!({ "insecure_skip_verify": true }));
    }
    job.insert(
        "kubernetes_sd_configs".into(),
        json!([{ "role": "pod", "namespaces": { "names": namespaces } }]),
    );
    job.insert("relabel_configs".into(), relabel.into());
    Value::Object(job)
}

/// A label value as a regular expression matching exactly it.
fn regex_escape(v: &str) -> String {
    let mut out = String::new();
    for c in v.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Azure's rule group (`Microsoft.AlertsManagement/prometheusRuleGroups`, API 2023-03-01:
/// learn.microsoft.com `azure-monitor/metrics/prometheus-rule-groups`), its `properties`
/// without `scopes` and `clusterName`, which `up.sh` adds once it knows the workspace's and
/// the cluster's IDs. Durations are ISO 8601; severities 0 (critical) to 4.
fn azure_rule_group(p: &Profile, m: &Resolved) -> String {
    let rules: Vec<Value> = alert_rules(p, m)
        .into_iter()
        .map(|r| {
            let severity = match r["labels"]["severity"].as_str() {
                Some("critical") => 0,
                _ => 2,
            };
            json!({
                "alert": r["alert"],
                "expression": r["expr"].as_str().unwrap_or_default().trim_end(),
                "for": iso8601(r["for"].as_str().unwrap_or("0m")),
                "severity": severity,
                "labels": r["labels"],
                "annotations": r["annotations"],
                "enabled": true,
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({
        "description": format!("raykueue's alerts for the queues of profile {}", p.name),
        "enabled": true,
        "interval": iso8601(RULES_INTERVAL),
        "rules": rules,
    }))
    .unwrap_or_default();
    text.push('\n');
    text
}

/// A Go duration (`15m`, `1h30m`, `90s`) as ISO 8601 (`PT15M`, `PT1H30M`, `PT1M30S`).
fn iso8601(go: &str) -> String {
    let seconds = crate::profile::GoDuration(go.to_owned()).seconds().round() as u64;
    let (h, rest) = (seconds / 3600, seconds % 3600);
    let (min, s) = (rest / 60, rest % 60);
    let mut out = String::from("PT");
    if h > 0 {
        let _ = write!(out, "{h}H");
    }
    if min > 0 || (h == 0 && s == 0) {
        let _ = write!(out, "{min}M");
    }
    if s > 0 {
        let _ = write!(out, "{s}S");
    }
    out
}

/// What `infra/up.sh` does for a managed collector, for the scripts: the flavour, the names
/// of the resources it creates, and the files it hands over.
pub(crate) fn up_context(p: &Profile) -> Value {
    let Some((m, Some(flavour))) = super::collector(p) else {
        return Value::Null;
    };
    let name = format!("raykueue-{}", p.name);
    let kind = match flavour {
        ManagedFlavour::AzureMonitor => "azure",
        ManagedFlavour::Google => "google",
        ManagedFlavour::Amazon => "amazon",
        ManagedFlavour::Alibaba => "alibaba",
    };
    // What verify.sh looks for: each kind of scrape or rule object `monitoring/` holds.
    let mut kinds: Vec<String> = super::monitoring_objects(p)
        .iter()
        .filter_map(|o| {
            let group = o.value["apiVersion"].as_str()?.split('/').next()?;
            let plural = match o.kind {
                "ServiceMonitor" => "servicemonitors",
                "PodMonitor" => "podmonitors",
                "PrometheusRule" => "prometheusrules",
                "PodMonitoring" => "podmonitorings",
                "ClusterRules" => "clusterrules",
                _ => return None,
            };
            Some(format!("{plural}.{group}"))
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    json!({
        "flavour": kind,
        "kinds": kinds,
        "ksm_labels": p.cloud().map(|c| format!("nodes=[{}]", c.words().pool_label)),
        "workspace": name,
        "rule_group": name,
        "objects": flavour != ManagedFlavour::Amazon,
        "scrape": FILE_AMP_SCRAPE.trim_start_matches("monitoring/"),
        "rules": match flavour {
            _ if alert_rules(p, &m).is_empty() => None,
            ManagedFlavour::Amazon => Some(FILE_AMP_RULES.trim_start_matches("monitoring/")),
            ManagedFlavour::AzureMonitor => {
                Some(FILE_AZURE_RULES.trim_start_matches("monitoring/"))
            }
            ManagedFlavour::Google | ManagedFlavour::Alibaba => None,
        },
        "namespace": m.namespace,
    })
}

/// The summary's words for a managed collector: the service, and how `monitoring/` reaches it
/// (objects, the alerts, the dashboard).
pub(super) fn summary_words(p: &Profile, flavour: ManagedFlavour) -> (String, String) {
    let service = p
        .cloud()
        .map_or("the cloud's managed Prometheus", |c| c.prometheus().managed)
        .to_owned();
    let how = match flavour {
        ManagedFlavour::AzureMonitor => format!(
            "its AKS add-on reads the `azmonitoring.coreos.com/v1` ServiceMonitors and PodMonitors of `monitoring/` (`kubectl apply -k monitoring`); `infra/up.sh` creates the Azure Monitor workspace `raykueue-{0}`, turns the add-on on and creates the alerts as the Prometheus rule group `raykueue-{0}` (`{1}`); import the dashboard into your Azure Managed Grafana (`az grafana dashboard import --definition`)",
            p.name, FILE_AZURE_RULES
        ),
        ManagedFlavour::Google => format!(
            "its collectors read the PodMonitorings and the ClusterRules `raykueue-{}` of `monitoring/` (`kubectl apply -k monitoring`), after `infra/up.sh` turns managed collection on; import the dashboard into a Grafana that queries it (`docs/monitoring.md`)",
            p.name
        ),
        ManagedFlavour::Amazon => format!(
            "`infra/up.sh` creates its workspace `raykueue-{0}`, an AWS managed collector `raykueue-{0}` with the scrape configuration `{1}`, and the rule groups namespace `raykueue-{0}` from `{2}`; import the dashboard into your Amazon Managed Grafana",
            p.name, FILE_AMP_SCRAPE, FILE_AMP_RULES
        ),
        ManagedFlavour::Alibaba => "its agent reads the ServiceMonitors and PodMonitors of `monitoring/` annotated `arms.prometheus.io/discovery: \"true\"` (`kubectl apply -k monitoring`), after `infra/up.sh` installs the `arms-prometheus` component; the alerts are a PrometheusRule, which it reads once its rule sync is on, or which you import as an alert template; import the dashboard into its Grafana".to_owned(),
    };
    (service, how)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_become_iso_8601() {
        for (go, iso) in [
            ("15m", "PT15M"),
            ("0m", "PT0M"),
            ("1h", "PT1H"),
            ("1h30m", "PT1H30M"),
            ("90s", "PT1M30S"),
            ("45s", "PT45S"),
        ] {
            assert_eq!(iso8601(go), iso, "{go}");
        }
    }

    #[test]
    fn label_values_are_matched_exactly() {
        assert_eq!(regex_escape("kuberay-operator"), "kuberay-operator");
        assert_eq!(regex_escape("a.b+c"), "a\\.b\\+c");
    }
}
