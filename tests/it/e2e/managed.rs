//! `monitoring/` of the managed collectors (docs/monitoring.md, "Managed Prometheus") against
//! a real API server: with the flavours' CRDs installed from the Go modules that carry them,
//! every object of the AKS, GKE and ACK overlays applies without an error or a warning (the
//! API server runs the CRDs' schemas and CEL rules); and the token of raykueue's metrics
//! reader gets the real Kueue's metrics, which a token without its ClusterRole does not.

use super::{Compiled, apply, harness, one_at_a_time, toolchain, up};
use crate::common;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

/// The CRDs each flavour's objects need, from the Go module proxy: Azure's (Prometheus
/// Operator v0.84.0's ServiceMonitor and PodMonitor under the group its add-on is built with,
/// as `xtask/src/import.rs` `MANAGED` says), Google's (prometheus-engine v0.17.2), and the
/// Prometheus Operator's own for Alibaba's (v0.93.0, the version of the offline check).
fn flavour_crds() -> Result<String, String> {
    let module = |m: &str, v: &str| {
        common::go_module(m, v).ok_or_else(|| format!("{m}@{v}: not served (or no Go)"))
    };
    let read = |p: &Path| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()));
    let mut out = String::new();
    let old = module(
        "github.com/prometheus-operator/prometheus-operator",
        "v0.84.0",
    )?;
    let new = module(
        "github.com/prometheus-operator/prometheus-operator",
        "v0.93.0",
    )?;
    for kind in ["servicemonitors", "podmonitors"] {
        let file = format!("example/prometheus-operator-crd/monitoring.coreos.com_{kind}.yaml");
        out.push_str(
            &read(&old.join(&file))?.replace("monitoring.coreos.com", "azmonitoring.coreos.com"),
        );
        out.push_str("\n---\n");
    }
    for kind in ["servicemonitors", "podmonitors", "prometheusrules"] {
        let file = format!("example/prometheus-operator-crd/monitoring.coreos.com_{kind}.yaml");
        out.push_str(&read(&new.join(&file))?);
        out.push_str("\n---\n");
    }
    let gmp = module(
        "github.com/GoogleCloudPlatform/prometheus-engine",
        "v0.17.2",
    )?;
    out.push_str(&harness::operators::yaml_text(
        &gmp.join("charts/operator/crds"),
    )?);
    Ok(out)
}

fn is_yaml(path: &str) -> bool {
    Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml"))
}

/// A Namespace object for every namespace the monitoring objects name that is not there yet
/// (the DCGM exporter's, made by its Helm install on a real cluster).
fn namespaces(compiled: &Compiled) -> Vec<Value> {
    let mut names = std::collections::BTreeSet::new();
    for (path, text) in &compiled.files {
        if path.starts_with("monitoring/") && is_yaml(path) {
            for o in harness::operators::objects(text).unwrap_or_default() {
                if let Some(ns) = o["metadata"]["namespace"].as_str() {
                    names.insert(ns.to_owned());
                }
            }
        }
    }
    names
        .into_iter()
        .map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}))
        .collect()
}

/// The token a Secret of type service-account-token holds, once the controller manager has
/// filled it in.
fn token(
    cluster: &harness::cluster::Cluster,
    namespace: &str,
    secret: &str,
) -> Result<String, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let a = cluster.kubectl().run(
            &[
                "get",
                "secret",
                secret,
                "--namespace",
                namespace,
                "--output",
                "go-template={{if .data.token}}{{.data.token | base64decode}}{{end}}",
            ],
            None,
        );
        if a.ok && !a.stdout.trim().is_empty() {
            return Ok(a.stdout.trim().to_owned());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "secret {namespace}/{secret} has no token: {}",
                a.stderr
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Kueue's metrics endpoint with a bearer token: HTTP status and body.
fn scrape(cluster: &harness::cluster::Cluster, token: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    let out = std::process::Command::new("curl")
        .args(["--silent", "--insecure", "--max-time", "10", "--output"])
        .arg(&body)
        .args(["--write-out", "%{http_code}", "--header"])
        .arg(format!("Authorization: Bearer {token}"))
        .arg(format!(
            "https://127.0.0.1:{}/metrics",
            cluster.ports.kueue_metrics
        ))
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        std::fs::read_to_string(&body).unwrap_or_default(),
    )
}

#[test]
fn managed_monitoring_applies_with_the_flavours_crds_and_its_reader_reads_kueue() {
    let test = "managed_monitoring_applies_with_the_flavours_crds_and_its_reader_reads_kueue";
    if !toolchain(test) {
        return;
    }
    let crds = match flavour_crds() {
        Ok(c) => c,
        Err(e) => {
            common::skip(test, &e);
            return;
        }
    };
    let _one = one_at_a_time();
    let fixture = |c: &str| format!("tests/fixtures/monitoring/managed/{c}.yaml");
    let aks = Compiled::profile(&fixture("aks")).unwrap();
    let (_dir, cluster) = up(&aks, false).unwrap();
    harness::operators::apply_text(&cluster, &crds, "the managed flavours' CRDs").unwrap();
    harness::operators::wait_established(&cluster).unwrap();

    let mut problems = Vec::new();
    let mut applied = 0;
    for cloud in ["aks", "gke", "ack"] {
        let compiled = Compiled::profile(&fixture(cloud)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        compiled.write(dir.path()).unwrap();
        harness::operators::apply(&cluster, &namespaces(&compiled), "namespaces").unwrap();
        let complaints = apply(&cluster, &dir.path().join("monitoring"));
        problems.extend(complaints.into_iter().map(|c| format!("{cloud}: {c}")));
        applied += compiled
            .files
            .iter()
            .filter(|(p, _)| {
                p.starts_with("monitoring/") && is_yaml(p) && !p.ends_with("kustomization.yaml")
            })
            .count();
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // The reader's token, as the collectors read it from its Secret, passes Kueue's
    // authentication and authorization.
    let reader = token(&cluster, "kueue-system", "raykueue-metrics-reader-token").unwrap();
    let (status, body) = scrape(&cluster, &reader);
    assert_eq!(status, "200", "{body}");
    assert!(body.contains("kueue_"), "{body}");
    // Without the ClusterRole: refused. The rule is what lets the reader in.
    let stranger = [json!({"apiVersion": "v1", "kind": "ServiceAccount",
               "metadata": {"name": "stranger", "namespace": "kueue-system"}})];
    harness::operators::apply(&cluster, &stranger, "a ServiceAccount without the rule").unwrap();
    let t = cluster.kubectl().run(
        &[
            "create",
            "token",
            "stranger",
            "--namespace=kueue-system",
            "--duration=10m",
        ],
        None,
    );
    assert!(t.ok, "{}", t.stderr);
    let (status, _) = scrape(&cluster, t.stdout.trim());
    assert_eq!(status, "403");
    {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "e2e managed monitoring: {applied} files of 3 flavours applied; the reader's token reads Kueue's metrics (200), another's is refused (403)"
        );
    }
}
