//! The bundle's monitoring against the real Kueue: a real Prometheus scrapes the control
//! plane's Kueue with the scrape job the bundle's ServiceMonitor gives (`harness::prometheus`),
//! a scenario runs, and every dashboard query and alert expression is put to that Prometheus.

use super::{Compiled, harness, one_at_a_time, toolchain};
use crate::common::{self, repo};
use harness::prometheus::{self, Prometheus};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// Metric families the tier has no source of, by prefix, and why: its nodes are kwok's, and it
/// runs neither kube-state-metrics nor Ray pods. A query naming one is still evaluated (the
/// real PromQL engine must accept it) but is not required to return a series.
const NO_SOURCE: [(&str, &str); 3] = [
    ("DCGM_", "the DCGM exporter (no GPUs)"),
    ("kube_", "kube-state-metrics"),
    ("ray_", "Ray pods"),
];

/// The ServiceAccount Prometheus scrapes as, with the rule kube-prometheus-stack gives its
/// Prometheus (prometheus-community/helm-charts `charts/kube-prometheus-stack/templates/
/// prometheus/clusterrole.yaml`: `nonResourceURLs: ["/metrics", …]`, `get`), which Kueue's
/// metrics server checks with a SubjectAccessReview (kubernetes-sigs/kueue@v0.19.2
/// `cmd/kueue/main.go`, `filters.WithAuthenticationAndAuthorization`); its token in a file.
fn reader_token(cluster: &harness::cluster::Cluster) -> Result<std::path::PathBuf, String> {
    let objects = [
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "monitoring"}}),
        json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "prometheus", "namespace": "monitoring"}}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "prometheus-metrics"},
               "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "prometheus-metrics"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                           "name": "prometheus-metrics"},
               "subjects": [{"kind": "ServiceAccount", "name": "prometheus",
                             "namespace": "monitoring"}]}),
    ];
    harness::operators::apply(cluster, &objects, "Prometheus's ServiceAccount")?;
    let t = cluster.kubectl().run(
        &[
            "create",
            "token",
            "prometheus",
            "--namespace=monitoring",
            "--duration=2h",
        ],
        None,
    );
    if !t.ok {
        return Err(format!("kubectl create token: {}", t.stderr));
    }
    let path = cluster.dir.join("prometheus-token");
    std::fs::write(&path, t.stdout.trim()).map_err(|e| e.to_string())?;
    Ok(path)
}

/// The Services of Kueue's chart rendered with the bundle's values, each with its namespace.
fn chart_services(
    cluster: &harness::cluster::Cluster,
    compiled: &Compiled,
) -> Result<Vec<Value>, String> {
    let kueue = compiled.profile.operators.kueue.as_ref();
    let namespace = kueue.map_or("kueue-system", |k| k.namespace.as_str());
    let release = kueue.map_or("kueue", |k| k.release.as_str());
    let values = cluster.dir.join("bundle/infra/kueue-values.yaml");
    let chart = harness::operators::KueueChart::render(
        cluster,
        values.is_file().then_some(values.as_path()),
        namespace,
        release,
    )?;
    Ok(chart
        .objects
        .into_iter()
        .filter(|o| o["kind"] == "Service")
        .map(|mut s| {
            if s["metadata"]["namespace"].is_null() {
                s["metadata"]["namespace"] = json!(namespace);
            }
            s
        })
        .collect())
}

/// The bundle's dashboard queries, each with its panel's title.
fn dashboard_queries(compiled: &Compiled) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, text) in &compiled.files {
        if !(path.starts_with("monitoring/dashboards/")
            && Path::new(path).extension().is_some_and(|e| e == "json"))
        {
            continue;
        }
        let dashboard: Value = serde_json::from_str(text).unwrap();
        for panel in dashboard["panels"].as_array().into_iter().flatten() {
            for target in panel["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = target["expr"].as_str() {
                    out.push((
                        panel["title"].as_str().unwrap_or_default().to_string(),
                        expr.to_string(),
                    ));
                }
            }
        }
    }
    out
}

/// The bundle's alerts: name and expression.
fn alerts(compiled: &Compiled) -> Vec<(String, String)> {
    let text = &compiled.files["monitoring/prometheusrule.yaml"];
    let rules = harness::operators::objects(text).unwrap();
    rules
        .iter()
        .flat_map(|r| r["spec"]["groups"].as_array().cloned().unwrap_or_default())
        .flat_map(|g| g["rules"].as_array().cloned().unwrap_or_default())
        .filter_map(|r| {
            Some((
                r["alert"].as_str()?.to_string(),
                r["expr"].as_str()?.trim().to_string(),
            ))
        })
        .collect()
}

/// What the tier has no source of among the metrics a query names, if anything.
fn no_source(expr: &str) -> Option<&'static str> {
    prometheus::selectors(expr).iter().find_map(|s| {
        NO_SOURCE
            .iter()
            .find(|(prefix, _)| s.starts_with(prefix))
            .map(|(_, why)| *why)
    })
}

/// Replays the scenario with Prometheus scraping; the problems found (none: every query the
/// tier can answer returns a series).
fn scrape_and_query(
    cluster: &harness::cluster::Cluster,
    compiled: &Compiled,
    bin: &Path,
) -> Result<Vec<String>, String> {
    let token = reader_token(cluster)?;
    let services = chart_services(cluster, compiled)?;
    let monitor =
        harness::operators::objects(&compiled.files["monitoring/servicemonitor-kueue.yaml"])?;
    let address = format!("127.0.0.1:{}", cluster.ports.kueue_metrics);
    let job = prometheus::scrape_job(&monitor[0], 0, &services, &address, &token)?;
    let prom = Prometheus::start(cluster, bin, &[job])?;
    prom.wait_up(Duration::from_secs(60))?;
    let scenario = repo().join("tests/fixtures/monitoring/scenario.yaml");
    harness::replay(
        cluster,
        compiled,
        &scenario.display().to_string(),
        None,
        None,
    )?;
    // Three scrapes after the last change, so every rate() has two samples of it.
    std::thread::sleep(Duration::from_secs(3));
    let mut problems = Vec::new();
    let (mut answered, mut unsourced) = (0, 0);
    for (title, expr) in dashboard_queries(compiled) {
        match (prom.query(&expr), no_source(&expr)) {
            (Err(e), _) => problems.push(format!("panel {title}: {e}")),
            (Ok(_), Some(_)) => unsourced += 1,
            (Ok(r), None) if r.is_empty() => {
                problems.push(format!("panel {title}: {expr} returns no series"));
            }
            (Ok(_), None) => answered += 1,
        }
    }
    // An alert's expression returns a series only while it fires: each selector in it must.
    let mut selectors = 0;
    for (alert, expr) in alerts(compiled) {
        if let Err(e) = prom.query(&expr) {
            problems.push(format!("alert {alert}: {e}"));
        }
        for s in prometheus::selectors(&expr) {
            if no_source(&s).is_some() {
                continue;
            }
            selectors += 1;
            match prom.query(&s) {
                Err(e) => problems.push(format!("alert {alert}: {e}")),
                Ok(r) if r.is_empty() => {
                    problems.push(format!("alert {alert}: {s} selects no series"));
                }
                Ok(_) => {}
            }
        }
    }
    {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "e2e monitoring: {answered} dashboard queries return series, {unsourced} name metrics \
             the tier has no source of; {selectors} alert selectors checked"
        );
    }
    Ok(problems)
}

#[test]
fn every_dashboard_query_and_alert_finds_its_series_on_the_real_kueue() {
    const NAME: &str = "every_dashboard_query_and_alert_finds_its_series_on_the_real_kueue";
    if !toolchain(NAME) {
        return;
    }
    let Some(bin) = prometheus::binary() else {
        common::skip(NAME, "no prometheus on PATH (Debian's prometheus package)");
        return;
    };
    let _one = one_at_a_time();
    let compiled = Compiled::profile("team").unwrap();
    let dir = tempfile::Builder::new()
        .prefix("raykueue-e2e-monitoring-")
        .tempdir()
        .unwrap();
    let mut lane = harness::Lane::start(dir.path(), false).unwrap();
    lane.load(&compiled).unwrap();
    let problems = scrape_and_query(&lane.cluster, &compiled, &bin).unwrap();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_selectors_of_a_query_are_its_metrics_with_their_matchers() {
    assert_eq!(
        prometheus::selectors(
            r#"sum by (cluster_queue) (rate(kueue_x_bucket{a="b}", c=~"d|e"}[5m])) and on (cohort) up"#
        ),
        ["kueue_x_bucket{a=\"b}\", c=~\"d|e\"}", "up"]
    );
    assert_eq!(
        prometheus::selectors("histogram_quantile(0.9, sum by (le) (m)) > 0.5 unless n offset 5m"),
        ["m", "n"]
    );
}

#[test]
fn a_service_monitor_is_scraped_as_the_prometheus_operator_would_scrape_it() {
    let monitor = json!({
        "metadata": {"name": "kueue", "namespace": "monitoring"},
        "spec": {
            "namespaceSelector": {"matchNames": ["kueue-system"]},
            "selector": {"matchLabels": {"app": "kueue"}},
            "endpoints": [{"port": "https", "scheme": "https", "path": "/metrics",
                           "bearerTokenFile": "/var/run/secrets/token",
                           "tlsConfig": {"insecureSkipVerify": true}}],
        },
    });
    let service = |ns: &str, port: &str| {
        json!({"metadata": {"name": "kueue-metrics", "namespace": ns, "labels": {"app": "kueue"}},
               "spec": {"ports": [{"name": port, "port": 8443}]}})
    };
    let token = Path::new("/t/token");
    let job = prometheus::scrape_job(
        &monitor,
        0,
        &[service("kueue-system", "https")],
        "127.0.0.1:1",
        token,
    )
    .unwrap();
    assert_eq!(job["job_name"], "serviceMonitor/monitoring/kueue/0");
    assert_eq!(job["scheme"], "https");
    assert_eq!(job["authorization"]["credentials_file"], "/t/token");
    assert_eq!(job["tls_config"]["insecure_skip_verify"], true);
    assert_eq!(
        job["static_configs"][0]["labels"],
        json!({"namespace": "kueue-system", "service": "kueue-metrics", "job": "kueue-metrics", "endpoint": "https"})
    );
    let elsewhere = prometheus::scrape_job(&monitor, 0, &[service("default", "https")], "a", token);
    assert!(elsewhere.unwrap_err().contains("selects no Service"));
    let no_port =
        prometheus::scrape_job(&monitor, 0, &[service("kueue-system", "http")], "a", token);
    assert!(no_port.unwrap_err().contains("lacks"));
}
