//! `monitoring.collector: managed` (docs/monitoring.md, "Managed Prometheus"): each cloud's
//! managed Prometheus gets the objects or files it reads, validated against the flavour's CRDs
//! (imported from the Go modules that carry them); the alerts pass `promtool check rules` and
//! Amazon's scrape configuration `promtool check config` (a promtool built with Kubernetes
//! discovery, from the e2e toolchain); and the scripts' cloud commands pass the real CLIs.

use crate::clouds::{SLEEP, cloud_sandbox};
use crate::common::{repo, skip};
use crate::infra::{Sandbox, text};
use raykueue::api::output::bundle::Bundle;
use raykueue::api::output::validate::{self, Verdict};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixtures: cloud → overlay of a shipped or example profile with `collector: managed`.
const FIXTURES: [&str; 4] = ["aks", "gke", "eks", "ack"];

fn fixture(cloud: &str) -> String {
    format!("tests/fixtures/monitoring/managed/{cloud}.yaml")
}

fn compiled(cloud: &str) -> Bundle {
    let resolved = raykueue::api::input::resolve::resolve(&fixture(cloud)).unwrap();
    raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle
}

/// `monitoring/`'s objects: kind → apiVersion.
fn monitoring_kinds(b: &Bundle) -> BTreeSet<(String, String)> {
    b.objects
        .iter()
        .filter(|w| w.object.file.starts_with("monitoring/"))
        .map(|w| {
            (
                w.object.kind.to_owned(),
                w.object.value["apiVersion"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn is_json(path: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

fn pair(kind: &str, api: &str) -> (String, String) {
    (kind.to_owned(), api.to_owned())
}

/// The files a reviewer reads for a managed collector: `monitoring/` but the dashboard (the
/// stack's, byte for byte: `the_dashboard_is_the_same_whatever_collects`), and the scripts.
fn reviewed(b: &Bundle) -> String {
    let mut out = String::new();
    for (name, content) in &b.files {
        let monitoring = name.starts_with("monitoring/") && !is_json(name)
            || name.ends_with("prometheus-rule-group.json");
        if monitoring || name == "infra/up.sh" || name == "infra/verify.sh" {
            out.push_str(&format!("# file: {name}\n{content}"));
        }
    }
    out
}

#[test]
fn managed_collectors_match_their_goldens() {
    for cloud in FIXTURES {
        insta::with_settings!({
            snapshot_path => "../../golden",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("monitoring-managed-{cloud}"), reviewed(&compiled(cloud)));
        });
    }
}

#[test]
fn each_flavour_gets_the_kinds_its_collector_reads_and_each_validates_against_its_crd() {
    let expected: [(&str, &[(&str, &str)]); 4] = [
        (
            "aks",
            &[
                ("ServiceMonitor", "azmonitoring.coreos.com/v1"),
                ("PodMonitor", "azmonitoring.coreos.com/v1"),
                ("Secret", "v1"),
                ("ClusterRole", "rbac.authorization.k8s.io/v1"),
            ],
        ),
        (
            "gke",
            &[
                ("PodMonitoring", "monitoring.googleapis.com/v1"),
                ("ClusterRules", "monitoring.googleapis.com/v1"),
                ("Role", "rbac.authorization.k8s.io/v1"),
                ("RoleBinding", "rbac.authorization.k8s.io/v1"),
            ],
        ),
        ("eks", &[]),
        (
            "ack",
            &[
                ("ServiceMonitor", "monitoring.coreos.com/v1"),
                ("PodMonitor", "monitoring.coreos.com/v1"),
            ],
        ),
    ];
    for (cloud, kinds) in expected {
        let b = compiled(cloud);
        let have = monitoring_kinds(&b);
        for (kind, api) in kinds {
            assert!(
                have.contains(&pair(kind, api)),
                "{cloud}: no {api} {kind}: {have:?}"
            );
        }
        // No managed collector reads the stack's dashboard ConfigMap.
        assert!(!have.iter().any(|(k, _)| k == "ConfigMap"), "{cloud}");
        if cloud == "eks" {
            assert!(have.is_empty(), "{have:?}");
            assert!(!b.files.contains_key("monitoring/kustomization.yaml"));
            for f in ["amp-scrape-configuration.yaml", "amp-rules.yaml"] {
                assert!(b.files.contains_key(&format!("monitoring/{f}")), "{f}");
            }
        }
        if cloud == "ack" {
            for w in b
                .objects
                .iter()
                .filter(|w| w.object.file.starts_with("monitoring/"))
            {
                assert_eq!(
                    w.object.value["metadata"]["annotations"]["arms.prometheus.io/discovery"],
                    "true",
                    "{}",
                    w.object.file
                );
            }
        }
        for w in b
            .objects
            .iter()
            .filter(|w| w.object.file.starts_with("monitoring/"))
        {
            match validate::object(&w.object.value) {
                Verdict::Checked(v) => assert!(v.is_empty(), "{cloud}: {}: {v:#?}", w.object.file),
                Verdict::Unknown { message, .. } => panic!("{cloud}: {}: {message}", w.object.file),
            }
        }
    }
}

/// The imported CRDs hold: an object each flavour's API server would refuse is refused here.
#[test]
fn the_flavours_crds_refuse_what_their_api_servers_refuse() {
    let gke = compiled("gke");
    let mut podmonitoring = gke
        .objects
        .iter()
        .find(|w| w.object.kind == "PodMonitoring")
        .unwrap()
        .object
        .value
        .clone();
    // `interval` is required of a GMP endpoint (prometheus-engine@v0.17.2 CRD).
    podmonitoring["spec"]["endpoints"][0]
        .as_object_mut()
        .unwrap()
        .remove("interval");
    let aks = compiled("aks");
    let mut monitor = aks
        .objects
        .iter()
        .find(|w| w.object.kind == "ServiceMonitor")
        .unwrap()
        .object
        .value
        .clone();
    // Azure's CRD is Prometheus Operator v0.84.0's: `scheme` is `http` or `https` only.
    monitor["spec"]["endpoints"][0]["scheme"] = "HTTPS".into();
    for v in [podmonitoring, monitor] {
        match validate::object(&v) {
            Verdict::Checked(found) => assert!(!found.is_empty(), "accepted: {v:#}"),
            Verdict::Unknown { message, .. } => panic!("{message}"),
        }
    }
}

/// A managed collector gets the same dashboard as the stack's Grafana: one definition.
#[test]
fn the_dashboard_is_the_same_whatever_collects() {
    let resolved = raykueue::api::input::resolve::resolve("team").unwrap();
    let stack = raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle;
    assert!(!dashboards(&stack).is_empty());
    assert_eq!(dashboards(&stack), dashboards(&compiled("aks")));
}

fn dashboards(b: &Bundle) -> Vec<(String, String)> {
    b.files
        .iter()
        .filter(|(f, _)| f.starts_with("monitoring/dashboards/") && is_json(f))
        .map(|(f, t)| (f.clone(), t.clone()))
        .collect()
}

fn promtool_rules(label: &str, rules_file: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rules.yml");
    std::fs::write(&file, rules_file).unwrap();
    let out = Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{label}: promtool check rules:\n{}",
        text(&out)
    );
}

/// Amazon's rules file, Google's ClusterRules, and Azure's rule group (its expressions and
/// durations put back into a rule file) pass `promtool check rules`, with the same alerts.
#[test]
fn every_managed_rule_set_passes_promtool() {
    if Command::new("promtool").arg("--version").output().is_err() {
        skip(
            "promtool check rules (managed)",
            "promtool is not installed (Debian's prometheus package)",
        );
        return;
    }
    let eks = compiled("eks");
    promtool_rules("eks", &eks.files["monitoring/amp-rules.yaml"]);
    let gke = compiled("gke");
    let rules = gke
        .objects
        .iter()
        .find(|w| w.object.kind == "ClusterRules")
        .unwrap();
    promtool_rules(
        "gke",
        &serde_json::to_string_pretty(&rules.object.value["spec"]).unwrap(),
    );
    let aks = compiled("aks");
    let group: Value =
        serde_json::from_str(&aks.files["monitoring/azure-prometheus-rule-group.json"]).unwrap();
    let back: Vec<Value> = group["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            serde_json::json!({
                "alert": r["alert"], "expr": r["expression"],
                "for": iso_to_go(r["for"].as_str().unwrap()),
                "labels": r["labels"], "annotations": r["annotations"],
            })
        })
        .collect();
    promtool_rules(
        "aks",
        &serde_json::json!({"groups": [{"name": "azure", "rules": back}]}).to_string(),
    );
    // The same alerts everywhere.
    let names = |rules: &[Value], key: &str| -> BTreeSet<String> {
        rules
            .iter()
            .map(|r| r[key].as_str().unwrap().to_owned())
            .collect()
    };
    let gke_rules = rules.object.value["spec"]["groups"][0]["rules"]
        .as_array()
        .unwrap();
    let azure_rules = group["rules"].as_array().unwrap();
    assert_eq!(names(gke_rules, "alert"), names(azure_rules, "alert"));
    assert_eq!(names(gke_rules, "alert").len(), 5);
    // Azure's severities: critical is 0, warning 2 (its rule group reference).
    for r in azure_rules {
        let sev = if r["labels"]["severity"] == "critical" {
            0
        } else {
            2
        };
        assert_eq!(r["severity"], sev, "{r:#}");
    }
}

/// `PT1H30M` → `1h30m` (the test's own inverse of raykueue's conversion).
fn iso_to_go(iso: &str) -> String {
    let body = iso.strip_prefix("PT").unwrap();
    let go = body.to_lowercase();
    if go == "0m" { "0s".into() } else { go }
}

/// promtool of the e2e toolchain (`cargo run -p xtask -- e2e tools`): Prometheus's own build,
/// with Kubernetes service discovery, which Debian's package leaves out.
fn full_promtool() -> Option<PathBuf> {
    let root = std::env::var_os("RAYKUEUE_E2E_CACHE")
        .map_or_else(|| PathBuf::from("/tmp/raykueue-e2e"), PathBuf::from);
    let mut found: Vec<PathBuf> = std::fs::read_dir(&root)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("promtool")))
        .filter(|p| {
            p.is_file()
                && p.parent()
                    .is_some_and(|d| d.to_string_lossy().contains("promtool-"))
        })
        .collect();
    found.sort();
    found.pop()
}

fn promtool_config(promtool: &Path, text_of: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scrape.yaml");
    std::fs::write(&file, text_of).unwrap();
    // --syntax-only: the token file is the collector's, not this machine's.
    Command::new(promtool)
        .args(["check", "config", "--syntax-only"])
        .arg(&file)
        .output()
        .unwrap()
}

#[test]
fn the_amp_scrape_configuration_passes_promtool() {
    let Some(promtool) = full_promtool() else {
        skip(
            "promtool check config (AMP)",
            "the e2e toolchain has no promtool (`cargo run -p xtask -- e2e tools`, with Go)",
        );
        return;
    };
    let eks = compiled("eks");
    let config = &eks.files["monitoring/amp-scrape-configuration.yaml"];
    let out = promtool_config(&promtool, config);
    assert!(out.status.success(), "{}", text(&out));
    // Within what the AWS collector takes: Kubernetes discovery only, 30 s or more, the token
    // file only.
    let v: Value = serde_saphyr::from_str(config).unwrap();
    assert_eq!(v["global"]["scrape_interval"], "30s");
    let jobs = v["scrape_configs"].as_array().unwrap();
    let names: BTreeSet<&str> = jobs
        .iter()
        .map(|j| j["job_name"].as_str().unwrap())
        .collect();
    for job in [
        "kueue",
        "kuberay-operator",
        "ray-head",
        "ray-workers",
        "dcgm-exporter",
    ] {
        assert!(names.contains(job), "{job}: {names:?}");
    }
    for j in jobs {
        for key in j.as_object().unwrap().keys() {
            assert!(
                [
                    "job_name",
                    "scheme",
                    "authorization",
                    "tls_config",
                    "kubernetes_sd_configs",
                    "relabel_configs"
                ]
                .contains(&key.as_str()),
                "{key}"
            );
        }
        if let Some(a) = j.get("authorization") {
            assert_eq!(
                a["credentials_file"],
                "/var/run/secrets/kubernetes.io/serviceaccount/token"
            );
        }
    }
    // And promtool refuses what Prometheus would.
    let bad = config.replace("kubernetes_sd_configs", "kubernetes_sd_config");
    assert!(!promtool_config(&promtool, &bad).status.success());
}

fn argcheck(tool: &str) -> Option<PathBuf> {
    let t = repo().join(format!("../shared/tools/{tool}"));
    if t.exists() {
        Some(t)
    } else {
        skip(tool, &format!("../shared/tools/{tool} is absent"));
        None
    }
}

/// up.sh with `DIR` a plain assignment, so that the tool's static pass finds the files the
/// commands hand over (`fileb://$DIR/../monitoring/…`).
fn with_plain_dir(infra: &Path, script: &str) -> PathBuf {
    let text = std::fs::read_to_string(infra.join(script)).unwrap();
    let fixed: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("DIR=\"$(cd ") {
                format!("DIR={}", infra.display())
            } else {
                l.to_owned()
            }
        })
        .collect();
    let out = infra.join(format!("plain-{script}"));
    std::fs::write(&out, fixed.join("\n") + "\n").unwrap();
    out
}

/// The gcloud and aws commands of the GKE and EKS scripts through the real CLIs.
#[test]
fn gke_and_eks_managed_scripts_pass_cloud_argcheck() {
    let Some(tool) = argcheck("cloud-argcheck") else {
        return;
    };
    for (cloud, wanted) in [
        ("gke", &["--enable-managed-prometheus"][..]),
        (
            "eks",
            &[
                "amp create-workspace",
                "amp create-scraper",
                "amp update-scraper",
                "amp create-rule-groups-namespace",
                "amp put-rule-groups-namespace",
            ][..],
        ),
    ] {
        let sb = Sandbox::new(&fixture(cloud));
        let infra = sb.bundle().join("infra");
        let out = Command::new(&tool)
            .arg(with_plain_dir(&infra, "up.sh"))
            .arg(infra.join("verify.sh"))
            .output()
            .unwrap();
        let t = text(&out);
        if out.status.code() == Some(2) {
            skip("cloud-argcheck (managed)", t.trim());
            return;
        }
        assert_eq!(out.status.code(), Some(0), "{cloud}\n{t}");
        assert!(
            t.trim_end().ends_with(" 0 failed") || t.contains(" 0 failed,"),
            "{cloud}\n{t}"
        );
        for w in wanted {
            assert!(
                t.lines().any(|l| l.starts_with("ok ") && l.contains(w)),
                "{cloud}: `{w}` not checked\n{t}"
            );
        }
    }
}

/// AKS: up.sh run against stubs records the workspace, the add-on and the rule group as it
/// would send them; each goes through the real Azure CLI (`az-argcheck --cmd`), and the rule
/// group carries the workspace, the cluster and every alert.
#[test]
fn aks_managed_calls_pass_az_argcheck() {
    let Some(tool) = argcheck("az-argcheck") else {
        return;
    };
    if std::env::var_os("RAYKUEUE_SKIP_AZ_ARGCHECK").is_some() {
        skip("az-argcheck (managed)", "RAYKUEUE_SKIP_AZ_ARGCHECK is set");
        return;
    }
    let sb = Sandbox::new(&fixture("aks"));
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let managed: Vec<&Vec<String>> = calls
        .iter()
        .filter(|c| {
            c[0] == "az"
                && (c[1..3] == ["monitor", "account"] && c[3] == "create"
                    || c.iter().any(|w| w == "--enable-azure-monitor-metrics")
                    || c[1..3] == ["resource", "create"])
        })
        .collect();
    assert_eq!(managed.len(), 3, "{managed:?}");
    let group = managed
        .iter()
        .find(|c| c[1] == "resource")
        .and_then(|c| {
            c.iter()
                .position(|w| w == "--properties")
                .map(|i| &c[i + 1])
        })
        .unwrap();
    let group: Value = serde_json::from_str(group).unwrap();
    assert_eq!(group["scopes"].as_array().unwrap().len(), 2, "{group:#}");
    assert!(
        group["scopes"][0]
            .as_str()
            .unwrap()
            .contains("Microsoft.Monitor/accounts/")
    );
    assert_eq!(group["clusterName"], "kueue-and-ray-on-aks");
    assert_eq!(group["rules"].as_array().unwrap().len(), 5);
    // Exit 2: the tool has no Azure CLI to run (its venv is not installed).
    let probe = Command::new(&tool)
        .args(["--cmd", "az group list"])
        .output()
        .unwrap();
    if probe.status.code() == Some(2) {
        skip("az-argcheck (managed)", text(&probe).trim());
        return;
    }
    for call in managed {
        crate::infra::assert_az_call_passes(&tool, "aks managed", call);
    }
    // verify.sh checks the add-on and raykueue's monitors.
    let (out, calls) = sb.run("verify.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let asked: Vec<String> = calls.iter().map(|c| c.join(" ")).collect();
    assert!(
        asked
            .iter()
            .any(|c| c.contains("rollout status deployment/ama-metrics")),
        "{asked:#?}"
    );
    assert!(
        asked
            .iter()
            .any(|c| c.contains("servicemonitors.azmonitoring.coreos.com --all-namespaces"))
    );
}

/// EKS and ACK up.sh against stubs: the collector is created once and waited for, the rules go
/// up; ACK installs its `arms-prometheus` component, with the body its API reference gives.
#[test]
fn eks_and_ack_managed_set_ups_run_offline() {
    if Command::new("jq").arg("--version").output().is_err() {
        skip("EKS/ACK managed runs", "jq is not installed");
        return;
    }
    let sb = cloud_sandbox(&fixture("eks"));
    sb.add_stub("sleep", SLEEP);
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let amp: Vec<String> = calls
        .iter()
        .filter(|c| c[0] == "aws" && c[1] == "amp")
        .map(|c| c[2].clone())
        .collect();
    for op in [
        "create-workspace",
        "create-scraper",
        "describe-scraper",
        "create-rule-groups-namespace",
    ] {
        assert!(amp.iter().any(|a| a == op), "{op}: {amp:?}");
    }
    let scraper = calls
        .iter()
        .find(|c| c.get(2).is_some_and(|w| w == "create-scraper"))
        .unwrap();
    let source = scraper
        .iter()
        .position(|w| w == "--source")
        .map(|i| &scraper[i + 1])
        .unwrap();
    assert_eq!(
        source,
        "eksConfiguration={clusterArn=arn:aws:eks:us-west-2:123456789012:cluster/stub,subnetIds=[subnet-a,subnet-b],securityGroupIds=[sg-stub]}"
    );
    // A cluster that admits no access entries stops before a collector that could not read it.
    let (out, calls) = sb.run("up.sh", &[], &[("STUB_AUTH_MODE", "CONFIG_MAP")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("authenticationMode=API_AND_CONFIG_MAP"),
        "{}",
        text(&out)
    );
    assert!(
        !calls
            .iter()
            .any(|c| c.get(2).is_some_and(|w| w == "create-scraper"))
    );

    let sb = cloud_sandbox(&fixture("ack"));
    sb.add_stub("sleep", SLEEP);
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let install = calls
        .iter()
        .find(|c| {
            c.get(3)
                .is_some_and(|w| w == "/clusters/c-stub/components/install")
        })
        .expect("the component is installed");
    let body = install
        .iter()
        .position(|w| w == "--body")
        .map(|i| &install[i + 1])
        .unwrap();
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body, serde_json::json!([{"name": "arms-prometheus"}]));
    // Installed already: not installed again.
    let (out, calls) = sb.run("up.sh", &[], &[("STUB_EXISTS", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !calls
            .iter()
            .any(|c| c.get(3).is_some_and(|w| w.ends_with("/components/install")))
    );
}

/// shellcheck on every managed bundle's scripts.
#[test]
fn managed_scripts_pass_shellcheck() {
    if Command::new("shellcheck")
        .arg("--version")
        .output()
        .is_err()
    {
        skip("shellcheck (managed)", "shellcheck is not installed");
        return;
    }
    for cloud in FIXTURES {
        let sb = Sandbox::new(&fixture(cloud));
        let infra = sb.bundle().join("infra");
        let out = Command::new("shellcheck")
            .args(["up.sh", "verify.sh", "down.sh"].map(|f| infra.join(f)))
            .output()
            .unwrap();
        assert!(out.status.success(), "{cloud}\n{}", text(&out));
    }
}
