//! `monitoring/` of every shipped profile (docs/monitoring.md): each object validates against
//! its Prometheus Operator CRD; every dashboard query and alert expression names only metrics
//! and labels of `raykueue::api::facts::metrics` (the table that cites kueue@v0.19.2
//! `pkg/metrics/metrics.go` and the DCGM exporter's counters); the dashboard is what Grafana
//! imports; and the rules pass `promtool check rules` (Debian's `prometheus` package).

use crate::common::{shipped, skip};
use raykueue::api::facts::metrics;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

fn compiled(name: &str) -> raykueue::api::output::bundle::Bundle {
    let resolved = raykueue::api::input::resolve::resolve(name).unwrap();
    raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle
}

/// The shipped profiles' bundles that have `monitoring/`.
fn monitored() -> Vec<(&'static str, raykueue::api::output::bundle::Bundle)> {
    shipped()
        .into_iter()
        .map(|n| (n, compiled(n)))
        .filter(|(_, b)| b.files.contains_key("monitoring/kustomization.yaml"))
        .collect()
}

/// The dashboard file's path and its JSON.
fn dashboard_file(b: &raykueue::api::output::bundle::Bundle) -> (&str, Value) {
    let (file, text) = b
        .files
        .iter()
        .find(|(f, _)| {
            f.starts_with("monitoring/dashboards/")
                && std::path::Path::new(f)
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        })
        .expect("a dashboard file");
    (file, serde_json::from_str(text).unwrap())
}

fn dashboard(b: &raykueue::api::output::bundle::Bundle) -> Value {
    dashboard_file(b).1
}

fn rules(b: &raykueue::api::output::bundle::Bundle) -> Vec<Value> {
    b.objects
        .iter()
        .filter(|w| w.object.kind == "PrometheusRule")
        .map(|w| w.object.value["spec"].clone())
        .collect()
}

/// PromQL words that are not metric or label names.
const WORDS: &[&str] = &[
    "sum",
    "avg",
    "max",
    "min",
    "count",
    "by",
    "on",
    "and",
    "or",
    "unless",
    "group_left",
    "group_right",
    "without",
    "ignoring",
    "rate",
    "increase",
    "absent",
    "histogram_quantile",
];

/// The metrics an expression names, each with the label names of its matchers, and every label
/// named in a `by`, `on` or `group_left` list.
fn parse(expr: &str) -> (Vec<(String, Vec<String>)>, BTreeSet<String>) {
    let b = expr.as_bytes();
    let mut metrics = Vec::new();
    let mut labels = BTreeSet::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += usize::from(b[i] == b'\\') + 1;
            }
            i += 1;
            continue;
        }
        if c == b'[' {
            while i < b.len() && b[i] != b']' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &expr[start..i];
            let rest = expr[i..].trim_start();
            if ["by", "on", "group_left", "without", "ignoring"].contains(&word) {
                if let Some(list) = rest.strip_prefix('(') {
                    let end = list.find(')').unwrap();
                    for l in list[..end]
                        .split(',')
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                    {
                        labels.insert(l.to_owned());
                    }
                    i = expr.len() - rest.len() + 1 + end + 1;
                }
            } else if WORDS.contains(&word) {
            } else if let Some(m) = rest.strip_prefix('{') {
                let end = m.find('}').unwrap();
                let names = m[..end]
                    .split(',')
                    .map(|x| {
                        x.trim()
                            .split(['=', '!', '~'])
                            .next()
                            .unwrap()
                            .trim()
                            .to_owned()
                    })
                    .collect();
                metrics.push((word.to_owned(), names));
                i = expr.len() - rest.len() + 1 + end + 1;
            } else if !rest.starts_with('(') {
                metrics.push((word.to_owned(), Vec::new()));
            }
            continue;
        }
        i += 1;
    }
    (metrics, labels)
}

/// Every label a metric carries, by the table; `label_*` of `kube_node_labels` by prefix.
fn known(metric: &str, label: &str) -> bool {
    metrics::labels(metric).is_some_and(|l| l.contains(&label))
        || (metric == metrics::KUBE_NODE_LABELS && label.starts_with("label_"))
}

/// Problems with one query: unknown metrics, matchers on labels the metric lacks, and list or
/// legend labels no metric of the query has.
fn check(expr: &str, legend: Option<&str>, problems: &mut Vec<String>) {
    let (named, lists) = parse(expr);
    assert!(!named.is_empty(), "no metric found in {expr}");
    for (metric, matchers) in &named {
        if metrics::labels(metric).is_none() {
            problems.push(format!("{metric} is in no table of facts::metrics: {expr}"));
        }
        for l in matchers {
            if !known(metric, l) {
                problems.push(format!("{metric} has no label {l}: {expr}"));
            }
        }
    }
    let mut used = lists;
    if let Some(legend) = legend {
        for part in legend.split("{{").skip(1) {
            used.insert(part.split("}}").next().unwrap().trim().to_owned());
        }
    }
    for l in used {
        if !named.iter().any(|(m, _)| known(m, &l)) {
            problems.push(format!("no metric of the query has label {l}: {expr}"));
        }
    }
}

#[test]
fn every_gpu_profile_is_monitored_and_every_monitoring_object_validates_against_its_crd() {
    let all = shipped();
    let monitored = monitored();
    assert!(
        monitored.len() >= all.len() - 1,
        "GPU profiles are monitored by default"
    );
    for (name, b) in &monitored {
        let kinds: BTreeSet<&str> = b
            .objects
            .iter()
            .filter(|w| w.object.file.starts_with("monitoring/"))
            .map(|w| w.object.kind)
            .collect();
        for kind in [
            "PodMonitor",
            "PrometheusRule",
            "ConfigMap",
            "ServiceMonitor",
        ] {
            assert!(kinds.contains(kind), "{name}: no {kind} in monitoring/");
        }
        for w in b
            .objects
            .iter()
            .filter(|w| w.object.file.starts_with("monitoring/"))
        {
            match raykueue::api::output::validate::object(&w.object.value) {
                raykueue::api::output::validate::Verdict::Checked(v) => {
                    assert!(v.is_empty(), "{name}: {}: {v:#?}", w.object.file);
                }
                raykueue::api::output::validate::Verdict::Unknown { message, .. } => {
                    panic!("{name}: {}: {message}", w.object.file)
                }
            }
        }
    }
}

#[test]
fn a_profile_without_gpus_is_not_monitored_unless_it_says_so() {
    let cpu = "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: cpu\nnamespace: ray\n";
    let b = crate::common::compile_text(cpu.as_bytes()).unwrap().bundle;
    assert!(!b.files.keys().any(|f| f.starts_with("monitoring/")));
    let on = format!("{cpu}monitoring: {{}}\n");
    let b = crate::common::compile_text(on.as_bytes()).unwrap().bundle;
    assert!(b.files.contains_key("monitoring/kustomization.yaml"));
    let off = "collector: none";
    let team = crate::common::shipped_text("team").to_owned() + "\nmonitoring:\n  " + off + "\n";
    let b = crate::common::compile_text(team.as_bytes()).unwrap().bundle;
    assert!(!b.files.keys().any(|f| f.starts_with("monitoring/")));
}

#[test]
fn every_query_names_only_metrics_and_labels_that_exist_upstream() {
    let mut problems = Vec::new();
    let mut queries = 0;
    for (_, b) in monitored() {
        for panel in dashboard(&b)["panels"].as_array().unwrap() {
            for t in panel["targets"].as_array().into_iter().flatten() {
                queries += 1;
                check(
                    t["expr"].as_str().unwrap(),
                    t["legendFormat"].as_str(),
                    &mut problems,
                );
            }
        }
        for spec in rules(&b) {
            for g in spec["groups"].as_array().unwrap() {
                for r in g["rules"].as_array().unwrap() {
                    queries += 1;
                    check(r["expr"].as_str().unwrap(), None, &mut problems);
                }
            }
        }
    }
    assert!(queries > 50, "{queries} queries");
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn the_query_check_catches_unknown_metrics_and_labels() {
    let mut p = Vec::new();
    check(
        "sum by (cluster_queue) (kueue_pending_workloads{cluster_queue=\"a\"})",
        Some("{{status}}"),
        &mut p,
    );
    assert!(p.is_empty(), "{p:?}");
    check("kueue_no_such_metric{x=\"1\"}", None, &mut p);
    check("sum by (flavour) (kueue_pending_workloads)", None, &mut p);
    check(
        "kueue_admitted_active_workloads{status=\"active\"}",
        None,
        &mut p,
    );
    assert_eq!(p.len(), 4, "{p:#?}");
}

#[test]
fn the_dashboard_is_what_grafana_imports() {
    for (name, b) in monitored() {
        let (file, d) = dashboard_file(&b);
        assert!(d["schemaVersion"].as_u64().unwrap() >= 36, "{name}");
        assert!(
            d["uid"]
                .as_str()
                .is_some_and(|u| !u.is_empty() && u.len() <= 40)
        );
        let vars = d["templating"]["list"].as_array().unwrap();
        let ds = vars
            .iter()
            .find(|v| v["type"] == "datasource" && v["query"] == "prometheus")
            .unwrap_or_else(|| panic!("{name}: no Prometheus datasource variable"));
        let uid = format!("${{{}}}", ds["name"].as_str().unwrap());
        let panels = d["panels"].as_array().unwrap();
        let mut ids = BTreeMap::new();
        for p in panels {
            let id = p["id"].as_u64().unwrap();
            assert!(
                ids.insert(id, p["title"].clone()).is_none(),
                "{name}: id {id} twice"
            );
            assert!(p["gridPos"]["w"].as_u64().unwrap() <= 24);
            if p["type"] != "row" {
                assert_eq!(
                    p["datasource"]["uid"],
                    uid.as_str(),
                    "{name}: {}",
                    p["title"]
                );
                for t in p["targets"].as_array().unwrap() {
                    assert_eq!(t["datasource"]["uid"], uid.as_str());
                }
            }
        }
        // One row per ClusterQueue and per cohort of the profile.
        let rows: Vec<&str> = panels
            .iter()
            .filter(|p| p["type"] == "row")
            .map(|p| p["title"].as_str().unwrap())
            .collect();
        let cm = b
            .objects
            .iter()
            .find(|w| w.object.file == "monitoring/dashboards/configmap.yaml")
            .unwrap();
        assert_eq!(
            cm.object.value["metadata"]["labels"]["grafana_dashboard"],
            "1"
        );
        let data = cm.object.value["data"].as_object().unwrap();
        assert_eq!(
            data.values().next().unwrap().as_str().unwrap(),
            b.files[file],
            "{name}: the ConfigMap holds the dashboard file"
        );
        let queues = b.objects.iter().filter(|w| w.object.kind == "ClusterQueue");
        for q in queues {
            let row = format!("ClusterQueue {}", q.object.name);
            assert!(rows.contains(&row.as_str()), "{name}: no row {row}");
            if let Some(c) = q.object.value["spec"]["cohortName"].as_str() {
                let row = format!("Cohort {c}");
                assert!(rows.contains(&row.as_str()), "{name}: no row {row}");
            }
        }
    }
}

#[test]
fn every_rule_file_passes_promtool() {
    let Ok(version) = Command::new("promtool").arg("--version").output() else {
        skip(
            "promtool check rules",
            "promtool is not installed (Debian's prometheus package)",
        );
        return;
    };
    assert!(version.status.success());
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (name, b) in monitored() {
        for (i, spec) in rules(&b).into_iter().enumerate() {
            let file = dir
                .path()
                .join(format!("{}-{i}.rules.yml", name.replace('/', "-")));
            // JSON is YAML: promtool reads the PrometheusRule's `spec` as a rules file.
            std::fs::write(&file, serde_json::to_string_pretty(&spec).unwrap()).unwrap();
            let out = Command::new("promtool")
                .args(["check", "rules"])
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}: promtool check rules:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// `simulate`'s human output ends with the Kueue metric to watch for each kind of blocker the
/// run reports (pending, never admissible, preempted, waiting for admission checks), and every
/// one names a metric and labels of kueue@v0.19.2 (the table of `facts::metrics`).
#[test]
fn simulate_names_the_metric_to_watch_for_each_blocker() {
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    let cases = std::fs::read_dir(crate::common::repo().join("tests/fixtures/simulate")).unwrap();
    for case in cases {
        let dir = case.unwrap().path();
        if !dir.join("scenario.yaml").is_file() {
            continue;
        }
        // A case's profile is its own file, or a shipped one named in `profile-name`.
        let profile = std::fs::read_to_string(dir.join("profile-name")).map_or_else(
            |_| dir.join("profile.yaml").to_string_lossy().into_owned(),
            |name| name.trim().to_owned(),
        );
        let scenario = dir.join("scenario.yaml");
        let mut args = vec!["simulate", "-p", &profile, "-s", scenario.to_str().unwrap()];
        let extra = std::fs::read_to_string(dir.join("args")).unwrap_or_default();
        args.extend(extra.split_whitespace());
        let out = crate::common::raykueue(&args);
        assert_eq!(out.status.code(), Some(0), "{}", dir.display());
        let text = crate::common::stdout(&out);
        let end = text
            .lines()
            .find(|l| l.starts_with("End at "))
            .unwrap_or("");
        let watch: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("Watch on the cluster"))
            .skip(1)
            .collect();
        let kinds: BTreeSet<&str> = watch
            .iter()
            .filter_map(|l| l.trim().split_once(": ").map(|(k, _)| k))
            .collect();
        // What the timeline reports has its line, and nothing else does.
        let reported = [
            ("pending", !end.contains("pending: -;")),
            ("never admissible", !end.ends_with("never admissible: -")),
            ("preempted", text.contains(" Preempted by ")),
            (
                "waits for admission checks",
                text.contains(" Admitted after checks "),
            ),
        ];
        for (kind, present) in reported {
            assert_eq!(
                kinds.contains(kind),
                present,
                "{}: {kind}\n{text}",
                dir.display()
            );
            if present {
                seen.insert(kind);
            }
        }
        for line in &watch {
            let expr = line.trim().split_once(": ").unwrap().1;
            check(expr, None, &mut problems);
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert_eq!(seen.len(), 4, "the fixtures exercise every kind: {seen:?}");
}

/// A profile with more queues than one dashboard holds gets several, each a ConfigMap small
/// enough for the API server (1 MiB) and for `kubectl apply`'s last-applied annotation
/// (256 KiB), every ClusterQueue's row in exactly one of them, ids unique in each.
#[test]
fn many_queues_are_spread_over_dashboards_that_fit_a_configmap() {
    let n = 200;
    let mut text = String::from(
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: many\nnamespace: ray\n\
         operators:\n  kueue: {version: 0.19.2, frameworks: [ray.io/rayjob]}\n  kuberay: {version: 1.7.0}\n\
         monitoring: {collector: prometheusOperator}\nflavors:\n  - name: default\n\
         queues:\n  mode: team\n  clusterQueues:\n",
    );
    for i in 0..n {
        text.push_str(&format!(
            "    - name: cq-{i}\n      cohortName: shared\n      resourceGroups:\n        - coveredResources: [cpu, memory]\n          flavors:\n            - name: default\n              resources:\n                - {{name: cpu, nominalQuota: \"8\"}}\n                - {{name: memory, nominalQuota: 32Gi}}\n"
        ));
    }
    text.push_str("  localQueues:\n");
    for i in 0..n {
        text.push_str(&format!("    - {{name: lq-{i}, clusterQueue: cq-{i}}}\n"));
    }
    let compiled = crate::common::compile_text(text.as_bytes()).expect("compiles");
    let dashboards: Vec<(&String, Value)> = compiled
        .bundle
        .files
        .iter()
        .filter(|(f, _)| f.starts_with("monitoring/dashboards/") && !f.ends_with("configmap.yaml"))
        .map(|(f, t)| (f, serde_json::from_str(t).unwrap()))
        .collect();
    assert!(dashboards.len() > 1, "{} dashboards", dashboards.len());
    let mut rows = Vec::new();
    let mut uids = BTreeSet::new();
    for (file, d) in &dashboards {
        assert!(uids.insert(d["uid"].as_str().unwrap().to_owned()), "{file}");
        let ids: Vec<u64> = d["panels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_u64().unwrap())
            .collect();
        assert_eq!(
            ids.len(),
            ids.iter().collect::<BTreeSet<_>>().len(),
            "{file}"
        );
        rows.extend(
            d["panels"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| p["type"] == "row")
                .map(|p| p["title"].as_str().unwrap().to_owned()),
        );
    }
    for i in 0..n {
        let title = format!("ClusterQueue cq-{i}");
        assert_eq!(rows.iter().filter(|r| **r == title).count(), 1, "{title}");
    }
    let configmaps: Vec<&raykueue::api::model::Object> = compiled
        .bundle
        .objects
        .iter()
        .map(|w| &w.object)
        .filter(|o| o.kind == "ConfigMap" && o.file.starts_with("monitoring/dashboards/"))
        .collect();
    assert_eq!(configmaps.len(), dashboards.len());
    for cm in configmaps {
        let size = serde_json::to_string(&cm.value).unwrap().len();
        assert!(size < 256 * 1024, "{}: {size} bytes", cm.name);
    }
}

/// `gpuMetrics: aksGpuMonitoring` installs the AKS AI runtime's `gpu-monitoring` chart as the
/// upstream Azure example does (Azure/AKS@45621c42 `examples/kueue-and-ray-on-aks/
/// 1-infrastructure/terraform/main.tf` `helm_release "gpu_monitoring"`: chart 0.1.1 from
/// `oci://mcr.microsoft.com/aks/ai-runtime/helm`, namespace `gpu-monitoring`, values
/// `gpuSkus.a100 = {instanceTypes = [Standard_ND96amsr_A100_v4], num_gpus = 8}` with the
/// defaults of its `variables.tf`), in `up.sh` and both GitOps trees; `verify.sh` checks its
/// DaemonSet; and, as the chart exports no DCGM series, no GPU panel or idle-GPU alert reads
/// one.
#[test]
fn aks_gpu_monitoring_installs_the_examples_chart() {
    let b = compiled("tests/fixtures/monitoring/aks-gpu-monitoring.yaml");
    let values: Value =
        serde_saphyr::from_str(&b.files["infra/gpu-monitoring-values.yaml"]).unwrap();
    assert_eq!(
        values,
        serde_json::json!({"gpuSkus": {"a100": {
            "instanceTypes": ["Standard_ND96amsr_A100_v4"], "num_gpus": 8}}})
    );
    let up = &b.files["infra/up.sh"];
    for line in [
        "readonly GPU_MONITORING_CHART='oci://mcr.microsoft.com/aks/ai-runtime/helm/gpu-monitoring'",
        "readonly GPU_MONITORING_VERSION='0.1.1'",
        "readonly GPU_MONITORING_NAMESPACE='gpu-monitoring'",
        "helm upgrade --install \"$GPU_MONITORING_RELEASE\" \"$GPU_MONITORING_CHART\" \\",
    ] {
        assert!(up.lines().any(|l| l == line), "{line}");
    }
    assert!(!b.files.contains_key("infra/dcgm-exporter-values.yaml"));
    assert!(
        !b.files
            .contains_key("monitoring/servicemonitor-dcgm-exporter.yaml")
    );
    let text = serde_json::to_string(&dashboard(&b)).unwrap();
    assert!(!text.contains("DCGM_"), "a GPU panel without its series");
    assert!(
        !rules(&b)[0]
            .to_string()
            .contains("GpusIdleWhileWorkloadsWait")
    );

    // verify.sh fails while the chart's DaemonSet is not rolled out, naming it.
    let sb = crate::infra::Sandbox::new("tests/fixtures/monitoring/aks-gpu-monitoring.yaml");
    let (out, _) = sb.run("verify.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", crate::infra::text(&out));
    let (out, calls) = sb.run("verify.sh", &[], &[("STUB_ROLLOUT_FAILS", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(crate::infra::text(&out).contains("gpu-monitoring-a100 is not rolled out"));
    assert!(calls.iter().any(|c| {
        c.join(" ")
            .contains("--namespace gpu-monitoring rollout status daemonset/gpu-monitoring-a100")
    }));

    // GitOps: Argo CD reads the OCI chart through a repository registered with enableOCI,
    // Flux through an OCI HelmRepository.
    let g = compiled("tests/fixtures/monitoring/aks-gpu-monitoring-gitops.yaml");
    let object = |kind: &str, name: &str| -> Value {
        g.objects
            .iter()
            .find(|w| w.object.kind == kind && w.object.name == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
            .object
            .value
            .clone()
    };
    let app = object("Application", "prod-gpu-monitoring");
    assert_eq!(
        app["spec"]["source"]["repoURL"],
        "mcr.microsoft.com/aks/ai-runtime/helm"
    );
    assert_eq!(app["spec"]["source"]["chart"], "gpu-monitoring");
    assert_eq!(app["spec"]["source"]["helm"]["valuesObject"], values);
    let secret = object("Secret", "prod-monitoring-chart-repository");
    assert_eq!(secret["stringData"]["enableOCI"], "true");
    assert_eq!(
        secret["stringData"]["url"],
        "mcr.microsoft.com/aks/ai-runtime/helm"
    );
    let repo = object("HelmRepository", "gpu-monitoring");
    assert_eq!(repo["spec"]["type"], "oci");
    assert_eq!(
        object("HelmRelease", "gpu-monitoring")["spec"]["values"],
        values
    );
}
