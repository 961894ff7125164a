//! `raykueue validate` held to the real cluster: every manifest `validate`'s tests use gets
//! the verdict of the API server (its schemas, CEL rules and admission, Kueue's and KubeRay's
//! webhooks included) and, for KubeRay's objects, of the KubeRay operator, whose checks run in
//! its controllers rather than at admission (ray-project/kuberay@v1.6.2
//! `ray-operator/controllers/ray/raycluster_controller.go`, `rayjob_controller.go`,
//! `rayservice_controller.go`: a Warning event of reason `Invalid…`).

use super::harness::{self, Compiled, operators};
use super::{one_at_a_time, toolchain};
use crate::common::{raykueue, repo};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The KubeRay kinds whose checks run in the operator.
const RAY_KINDS: [&str; 3] = ["RayCluster", "RayJob", "RayService"];

/// How long the operator gets to reconcile a created object before its silence is a failure.
const OPERATOR_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    Accepted,
    Refused(String),
}

impl Verdict {
    fn refused(&self) -> bool {
        matches!(self, Verdict::Refused(_))
    }
}

/// Every manifest `validate`'s tests read: the upstream corpus and the valid and broken
/// objects.
fn fixtures() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["validate", "valid-objects", "invalid-objects"] {
        let dir = repo().join("tests/fixtures").join(dir);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        paths.sort();
        out.extend(paths);
    }
    out
}

/// What raykueue says of a file: exit 0 accepts (warnings included), exit 1 refuses.
fn ours(path: &Path) -> Verdict {
    let rel = path.strip_prefix(repo()).unwrap().display().to_string();
    let out = raykueue(&["validate", &rel]);
    match out.status.code() {
        Some(0) => Verdict::Accepted,
        Some(1) => Verdict::Refused(String::from_utf8_lossy(&out.stderr).into_owned()),
        other => panic!("{rel}: validate exited {other:?}"),
    }
}

/// A fixture's declaration that the cluster accepts what raykueue refuses (`# cluster:
/// accepts`, with the why in its comment): an object the cluster takes and then misbehaves on.
/// The test holds the declaration true.
fn declared_stricter(text: &str) -> bool {
    text.lines().any(|l| l.trim() == "# cluster: accepts")
}

/// A KubeRay case the proxy's KubeRay cannot judge: the fixture restates a v1.7.0 test case
/// (`# source: ray-project/kuberay@v1.7.0 PATH TEST "CASE"`) that the served version's test
/// file does not hold, so the rule is newer than the operator running here.
fn newer_than_served_kuberay(text: &str, kuberay_module: &Path) -> Option<String> {
    let source = text.lines().find_map(|l| l.strip_prefix("# source: "))?;
    let rest = source.strip_prefix("ray-project/kuberay@v1.7.0 ")?;
    let (path, case) = rest.split_once(' ')?;
    let case = case.split_once('"')?.1.rsplit_once('"')?.0;
    let local = path.strip_prefix("ray-operator/")?;
    let served = std::fs::read_to_string(kuberay_module.join(local)).unwrap_or_default();
    (!served.contains(&format!("\"{case}\""))).then(|| format!("{path} \"{case}\""))
}

/// The objects of a fixture moved into namespaces of their own (`PREFIX-NAME`), so that files
/// never meet; KubeRay objects always get one (they are created for the operator to judge).
fn isolate(objects: &mut [Value], prefix: &str) -> Vec<String> {
    let mut namespaces = Vec::new();
    for o in objects.iter_mut() {
        let kind = o["kind"].as_str().unwrap_or_default().to_string();
        let meta = &mut o["metadata"];
        let own = if kind == "Namespace" {
            meta.get("name")
        } else {
            meta.get("namespace")
        };
        let name = match own.and_then(Value::as_str) {
            Some(n) => format!("{prefix}-{n}"),
            None if RAY_KINDS.contains(&kind.as_str()) => format!("{prefix}-default"),
            None => continue,
        };
        let field = if kind == "Namespace" {
            "name"
        } else {
            "namespace"
        };
        meta[field] = Value::String(name.clone());
        if !namespaces.contains(&name) {
            namespaces.push(name);
        }
    }
    namespaces
}

/// The API server's verdict (a server-side dry run), then, for what it accepts of KubeRay's,
/// the operator's on the created object.
fn clusters(
    cluster: &harness::cluster::Cluster,
    objects: &[Value],
    namespaces: &[String],
) -> Verdict {
    let k = cluster.kubectl();
    for ns in namespaces {
        let a = k.run(&["create", "namespace", ns], None);
        assert!(a.ok, "creating namespace {ns}: {}", a.stderr);
    }
    let yaml = operators::stream(objects);
    let dry = k.apply(&yaml, &["--dry-run=server"]);
    if !dry.ok {
        return Verdict::Refused(dry.stderr);
    }
    let ray: Vec<&Value> = objects
        .iter()
        .filter(|o| RAY_KINDS.contains(&o["kind"].as_str().unwrap_or_default()))
        .collect();
    if ray.is_empty() {
        return Verdict::Accepted;
    }
    let created = k.apply(
        &operators::stream(&ray.iter().map(|o| (*o).clone()).collect::<Vec<_>>()),
        &[],
    );
    assert!(
        created.ok,
        "creating what the dry run accepted: {}",
        created.stderr
    );
    ray.iter()
        .map(|o| operators_verdict(cluster, o))
        .find(Verdict::refused)
        .unwrap_or(Verdict::Accepted)
}

/// The KubeRay operator's verdict on one created object: a Warning event `Invalid…` refuses
/// it; a status written or any other event of its means it passed the checks.
fn operators_verdict(cluster: &harness::cluster::Cluster, o: &Value) -> Verdict {
    let k = cluster.kubectl();
    let kind = o["kind"].as_str().unwrap();
    let name = o["metadata"]["name"].as_str().unwrap();
    let ns = o["metadata"]["namespace"].as_str().unwrap();
    let selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
    let deadline = Instant::now() + OPERATOR_TIMEOUT;
    loop {
        let events = k
            .items(&["events", "-n", ns, "--field-selector", &selector])
            .unwrap_or_default();
        if let Some(e) = events.iter().find(|e| {
            e["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("Invalid"))
        }) {
            return Verdict::Refused(format!("{}: {}", e["reason"], e["message"]));
        }
        let object = k
            .get_json(&[&kind.to_lowercase(), name, "-n", ns])
            .unwrap_or_default();
        let status = object["status"].as_object().is_some_and(|s| !s.is_empty());
        if !events.is_empty() || status {
            return Verdict::Accepted;
        }
        assert!(
            Instant::now() < deadline,
            "the KubeRay operator said nothing of {kind} {ns}/{name} in {OPERATOR_TIMEOUT:?}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// What a fixture needs that the cluster does not serve (Argo CD's and Flux's kinds): such a
/// file is judged offline only.
fn unserved(objects: &[Value], served: &[String]) -> Option<String> {
    objects
        .iter()
        .filter_map(|o| o["apiVersion"].as_str())
        .find(|v| !served.iter().any(|s| s == v))
        .map(str::to_owned)
}

/// `team` with Kueue's webhooks on for every kind and namespace `validate` holds to them: its
/// RayCluster integration too, which the shipped profile leaves off (kueue@v0.19.2
/// `pkg/controller/jobframework/setup.go`: a framework's webhook is set up only when enabled),
/// and every namespace but the operators' managed, where `team` confines Kueue to `ray` (the
/// chart makes `managedJobsNamespaceSelector` the webhooks' `namespaceSelector`:
/// `charts/kueue/templates/webhook/manifests.yaml`), since each fixture gets its own namespace.
fn every_integration() -> String {
    let team = crate::common::shipped_text("team");
    let frameworks = "frameworks: [batch/job, pod, ray.io/rayjob, ray.io/rayservice]";
    let selector = "- {key: kubernetes.io/metadata.name, operator: In, values: [ray]}";
    assert!(
        team.contains(frameworks) && team.contains(selector),
        "team's Kueue"
    );
    team.replace(
        frameworks,
        "frameworks: [batch/job, pod, ray.io/rayjob, ray.io/rayservice, ray.io/raycluster]",
    )
    .replace(
        selector,
        "- {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system, kueue-system, kuberay-system]}",
    )
}

#[test]
fn validate_gives_the_verdict_of_the_real_api_server_and_operators() {
    if !toolchain("validate_gives_the_verdict_of_the_real_api_server_and_operators") {
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::Builder::new()
        .prefix("raykueue-e2e-validate-")
        .tempdir()
        .unwrap();
    let mut lane = harness::Lane::start(dir.path(), true).unwrap();
    let profile = dir.path().join("every-integration.yaml");
    std::fs::write(&profile, every_integration()).unwrap();
    lane.empty_and_start(&Compiled::profile(&profile.display().to_string()).unwrap())
        .unwrap();
    let cluster = &lane.cluster;
    let served: Vec<String> = cluster
        .kubectl()
        .run(&["api-versions"], None)
        .stdout
        .lines()
        .map(str::to_owned)
        .collect();
    let kuberay = cluster.tools.get("kuberay-operator").module_dir.clone();
    let (mut agree, mut newer, mut offline) = (0, Vec::new(), Vec::new());
    let mut disagreements = Vec::new();
    for (i, path) in fixtures().iter().enumerate() {
        let rel = path.strip_prefix(repo()).unwrap().display().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        let mut objects = operators::objects(&text).unwrap();
        if let Some(v) = unserved(&objects, &served) {
            offline.push(format!("{rel} ({v})"));
            continue;
        }
        if let Some(case) = newer_than_served_kuberay(&text, &kuberay) {
            newer.push(format!("{rel}: {case}"));
            continue;
        }
        let namespaces = isolate(&mut objects, &format!("v{i}"));
        let theirs = clusters(cluster, &objects, &namespaces);
        let ours = ours(path);
        let stricter = declared_stricter(&text);
        let fine = match (&ours, &theirs) {
            (Verdict::Refused(_), Verdict::Accepted) => stricter,
            (a, b) => a.refused() == b.refused() && !stricter,
        };
        if fine {
            agree += 1;
        } else {
            disagreements.push(format!(
                "{rel}{}:\n  raykueue: {ours:?}\n  cluster:  {theirs:?}",
                if stricter {
                    " (declared `# cluster: accepts`)"
                } else {
                    ""
                }
            ));
        }
    }
    eprintln!(
        "validate: {agree} of {} manifests get the cluster's verdict; {} restate KubeRay \
         v1.7.0 cases the served operator lacks; {} need kinds the cluster does not serve \
         (judged offline only)",
        agree + disagreements.len(),
        newer.len(),
        offline.len()
    );
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(agree > 100, "the corpus was judged: {agree}");
}
