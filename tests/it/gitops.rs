//! GitOps wiring: Argo CD and Flux objects of the prod example, and the committed tree as
//! `kubectl kustomize` builds it.

use crate::common::{raykueue, stderr, stdout};
use serde_json::Value;
use std::process::Command;

fn prod_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = raykueue(&[
        "gen",
        "--profile",
        "profiles/examples/prod.yaml",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

fn docs(path: &std::path::Path) -> Vec<Value> {
    crate::cli::parse_stream(&std::fs::read_to_string(path).unwrap())
}

#[test]
fn argo_cd_installs_operators_before_platform_and_workloads() {
    let dir = prod_tree();
    let apps = docs(&dir.path().join("gitops/argocd/10-applications.yaml"));
    let waves: Vec<(String, i64)> = apps
        .iter()
        .map(|a| {
            (
                a["metadata"]["name"].as_str().unwrap().to_owned(),
                a["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
                    .as_str()
                    .unwrap()
                    .parse()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(
        waves,
        [
            ("prod-kuberay-operator".to_owned(), -2),
            ("prod-kueue".to_owned(), -1),
            ("prod-platform".to_owned(), 0),
            ("prod-workloads".to_owned(), 1)
        ]
    );
    for app in &apps[2..] {
        let opts = app["spec"]["syncPolicy"]["syncOptions"].as_array().unwrap();
        assert!(
            opts.contains(&Value::from("SkipDryRunOnMissingResource=true")),
            "{app}"
        );
        assert_eq!(
            app["spec"]["source"]["repoURL"],
            "https://github.com/example/ray-platform.git"
        );
    }
    // Kueue admits a workload by un-suspending it: Argo CD must not suspend it again.
    let ignored = &apps[3]["spec"]["ignoreDifferences"];
    assert_eq!(ignored[0]["kind"], "RayJob");
    assert_eq!(ignored[0]["jsonPointers"][0], "/spec/suspend");
    assert!(
        apps[3]["spec"]["syncPolicy"]["syncOptions"]
            .as_array()
            .unwrap()
            .contains(&Value::from("RespectIgnoreDifferences=true"))
    );
    assert_eq!(apps[2]["spec"]["source"]["path"], "deploy/prod/platform");
    assert_eq!(apps[3]["spec"]["source"]["path"], "deploy/prod/workloads");
    // The Kueue chart is OCI: registry and chart name apart, the repository registered with OCI.
    assert_eq!(
        apps[1]["spec"]["source"]["repoURL"],
        "registry.k8s.io/kueue/charts"
    );
    assert_eq!(apps[1]["spec"]["source"]["chart"], "kueue");
    assert_eq!(apps[1]["spec"]["source"]["targetRevision"], "0.19.2");
    let config = apps[1]["spec"]["source"]["helm"]["valuesObject"]["managerConfig"]["controllerManagerConfigYaml"]
        .as_str()
        .unwrap();
    assert!(config.contains("ray.io/rayjob"));
    let repo = &docs(&dir.path().join("gitops/argocd/00-repositories.yaml"))[0];
    assert_eq!(repo["stringData"]["enableOCI"], "true");
    let root = &docs(&dir.path().join("gitops/argocd-root.yaml"))[0];
    assert_eq!(root["spec"]["source"]["path"], "deploy/prod/gitops/argocd");
}

#[test]
fn flux_kustomizations_depend_on_each_other_in_order() {
    let dir = prod_tree();
    let ks = docs(&dir.path().join("gitops/flux/10-kustomizations.yaml"));
    let chain: Vec<(String, Option<String>)> = ks
        .iter()
        .map(|k| {
            (
                k["metadata"]["name"].as_str().unwrap().to_owned(),
                k["spec"]["dependsOn"][0]["name"]
                    .as_str()
                    .map(str::to_owned),
            )
        })
        .collect();
    assert_eq!(
        chain,
        [
            ("prod-operators".to_owned(), None),
            (
                "prod-platform".to_owned(),
                Some("prod-operators".to_owned())
            ),
            (
                "prod-workloads".to_owned(),
                Some("prod-platform".to_owned())
            )
        ]
    );
    assert_eq!(ks[1]["spec"]["path"], "./deploy/prod/platform");
    let sources = docs(&dir.path().join("gitops/flux/00-sources.yaml"));
    let kinds: Vec<&str> = sources
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["GitRepository", "HelmRepository", "OCIRepository"]);
    assert_eq!(
        sources[2]["spec"]["url"],
        "oci://registry.k8s.io/kueue/charts/kueue"
    );
    assert_eq!(sources[2]["spec"]["ref"]["tag"], "0.19.2");
    let releases = docs(&dir.path().join("gitops/flux/operators/helmreleases.yaml"));
    assert_eq!(releases[0]["spec"]["chart"]["spec"]["version"], "1.7.0");
    assert_eq!(releases[1]["spec"]["chartRef"]["kind"], "OCIRepository");
    assert_eq!(releases[1]["spec"]["targetNamespace"], "kueue-system");
    // Flux creates queued workloads and leaves them to Kueue afterwards (no re-suspend).
    let job = &docs(&dir.path().join("workloads/llm-training/rayjob.yaml"))[0];
    assert_eq!(
        job["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/ssa"],
        "IfNotPresent"
    );
}

#[test]
fn no_gitops_objects_unless_asked() {
    let resolved = raykueue::resolve::resolve("team").unwrap();
    let bundle = raykueue::compile::compile(&resolved, false).unwrap().bundle;
    assert!(bundle.files.keys().all(|f| !f.starts_with("gitops/")));
}

/// `kubectl kustomize` builds every kustomization of the tree, and the platform's objects are
/// exactly `gen`'s stream. Skipped (with a note) where kubectl is not installed.
#[test]
fn kubectl_kustomize_builds_the_tree_and_matches_the_stream() {
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        eprintln!("note: kubectl not installed; kustomize check skipped");
        return;
    }
    let dir = prod_tree();
    for sub in [
        "platform",
        "workloads",
        "gitops/argocd",
        "gitops/flux",
        "gitops/flux/operators",
    ] {
        let out = Command::new("kubectl")
            .args(["kustomize", dir.path().join(sub).to_str().unwrap()])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sub}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new("kubectl")
        .args(["kustomize", dir.path().join("platform").to_str().unwrap()])
        .output()
        .unwrap();
    let built = crate::cli::parse_stream(&String::from_utf8(out.stdout).unwrap());
    let stream = crate::cli::parse_stream(&stdout(&raykueue(&[
        "gen",
        "--profile",
        "profiles/examples/prod.yaml",
    ])));
    assert_eq!(
        built, stream,
        "kustomize keeps the objects and their order (sortOptions fifo)"
    );
}

/// A pull request that drops a team: `--check` on the committed tree lists the team's files
/// as orphaned (and fails), and regenerating removes exactly those.
#[test]
fn check_reports_orphans_when_a_team_is_dropped() {
    let dir = prod_tree();
    let prod = crate::common::repo().join("profiles/examples/prod.yaml");
    let overlay = dir.path().join("without-team-b.yaml");
    std::fs::write(
        &overlay,
        format!(
            "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: {}\nname: prod\n\
             queues:\n  clusterQueues:\n    - {{name: team-b-cq, $patch: delete}}\n  localQueues:\n    - {{name: team-b, $patch: delete}}\n\
             workloads:\n  - {{name: llm-training, $patch: delete}}\n  - {{name: batch-inference, $patch: delete}}\n",
            prod.display()
        ),
    )
    .unwrap();
    let tree = dir.path().to_str().unwrap();
    let check = raykueue(&[
        "gen",
        "--profile",
        overlay.to_str().unwrap(),
        "--check",
        tree,
    ]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let diff = stdout(&check);
    for orphan in [
        "workloads/llm-training/rayjob.yaml",
        "workloads/batch-inference/rayjob.yaml",
    ] {
        assert!(
            diff.contains(&format!("--- a/{orphan}\n+++ /dev/null")),
            "{orphan}\n{diff}"
        );
    }
    assert!(diff.contains("-  name: team-b-cq"), "{diff}");
    // Each dropped workload's object, scripts ConfigMap and kustomization.
    assert!(stderr(&check).contains("6 orphaned"), "{}", stderr(&check));
    let regen = raykueue(&["gen", "--profile", overlay.to_str().unwrap(), "--out", tree]);
    assert_eq!(regen.status.code(), Some(0), "{}", stderr(&regen));
    assert!(
        !dir.path().join("workloads/llm-training").exists(),
        "emptied folders go too"
    );
    let again = raykueue(&[
        "gen",
        "--profile",
        overlay.to_str().unwrap(),
        "--check",
        tree,
    ]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}
