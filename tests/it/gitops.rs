//! GitOps wiring: Argo CD and Flux objects of the prod example, and the committed tree as
//! `kubectl kustomize` builds it.

use crate::common::{raykueue, skip, stderr, stdout};
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
            // The NVIDIA device plugin first, as up.sh installs it: AKS does not.
            ("prod-nvidia-device-plugin".to_owned(), -3),
            ("prod-kuberay-operator".to_owned(), -2),
            ("prod-kueue".to_owned(), -1),
            // The monitoring stack as up.sh installs it (prod has GPUs: monitored by default).
            ("prod-kube-prometheus-stack".to_owned(), -3),
            ("prod-dcgm-exporter".to_owned(), -3),
            ("prod-platform".to_owned(), 0),
            ("prod-monitoring".to_owned(), 1),
            ("prod-workloads".to_owned(), 1)
        ]
    );
    let by_name = |name: &str| apps.iter().find(|a| a["metadata"]["name"] == name).unwrap();
    let dir_apps = ["prod-platform", "prod-monitoring", "prod-workloads"].map(by_name);
    for app in dir_apps {
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
    // The prod example syncs one workload, team A's queued RayService: Kueue flips its
    // `rayClusterConfig.suspend` on admission, which Argo CD must leave alone.
    let [platform, monitoring, workloads] = dir_apps;
    assert_eq!(
        workloads["spec"]["ignoreDifferences"][0]["jsonPointers"],
        serde_json::json!(["/spec/rayClusterConfig/suspend"]),
        "{workloads}"
    );
    assert_eq!(platform["spec"]["source"]["path"], "deploy/prod/platform");
    assert_eq!(
        workloads["spec"]["source"]["path"],
        "deploy/prod/gitops/workloads"
    );
    assert_eq!(
        monitoring["spec"]["source"]["path"],
        "deploy/prod/monitoring"
    );
    assert_eq!(monitoring["spec"]["destination"]["namespace"], "monitoring");
    // The stack's values are up.sh's values file, its chart the one up.sh pins.
    let stack = &by_name("prod-kube-prometheus-stack")["spec"]["source"];
    assert_eq!(stack["chart"], "kube-prometheus-stack");
    assert_eq!(stack["targetRevision"], "88.3.0");
    let values_file: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(dir.path().join("infra/kube-prometheus-stack-values.yaml"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(stack["helm"]["valuesObject"], values_file);
    // The Kueue chart is OCI: registry and chart name apart, the repository registered with OCI.
    assert_eq!(
        apps[2]["spec"]["source"]["repoURL"],
        "registry.k8s.io/kueue/charts"
    );
    assert_eq!(apps[2]["spec"]["source"]["chart"], "kueue");
    assert_eq!(apps[2]["spec"]["source"]["targetRevision"], "0.19.2");
    let config = apps[2]["spec"]["source"]["helm"]["valuesObject"]["managerConfig"]["controllerManagerConfigYaml"]
        .as_str()
        .unwrap();
    assert!(config.contains("ray.io/rayjob"));
    let repo = &docs(&dir.path().join("gitops/argocd/00-repositories.yaml"))[0];
    assert_eq!(repo["stringData"]["enableOCI"], "true");
    // The repository Secret is synced before every Application (a Secret without a wave is
    // wave 0: the Kueue Application's first fetch of its OCI chart would fail).
    let secret_wave: i64 = repo["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        waves.iter().all(|(_, w)| secret_wave < *w),
        "{secret_wave} {waves:?}"
    );
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
            ),
            // monitoring/ needs the Prometheus Operator's CRDs, which the operators bring.
            (
                "prod-monitoring".to_owned(),
                Some("prod-operators".to_owned())
            )
        ]
    );
    assert_eq!(ks[1]["spec"]["path"], "./deploy/prod/platform");
    let sources = docs(&dir.path().join("gitops/flux/00-sources.yaml"));
    let kinds: Vec<&str> = sources
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    // Git, the NVIDIA and KubeRay charts, Kueue's OCI chart, then the monitoring charts.
    assert_eq!(
        kinds,
        [
            "GitRepository",
            "HelmRepository",
            "HelmRepository",
            "OCIRepository",
            "HelmRepository",
            "HelmRepository"
        ]
    );
    assert_eq!(ks[3]["spec"]["path"], "./deploy/prod/monitoring");
    assert_eq!(
        sources[1]["spec"]["url"],
        "https://nvidia.github.io/k8s-device-plugin"
    );
    assert_eq!(
        sources[3]["spec"]["url"],
        "oci://registry.k8s.io/kueue/charts/kueue"
    );
    assert_eq!(sources[3]["spec"]["ref"]["tag"], "0.19.2");
    let releases = docs(&dir.path().join("gitops/flux/operators/helmreleases.yaml"));
    assert_eq!(
        releases[0]["spec"]["chart"]["spec"]["chart"],
        "nvidia-device-plugin"
    );
    assert_eq!(releases[0]["spec"]["chart"]["spec"]["version"], "0.17.0");
    assert_eq!(releases[0]["spec"]["targetNamespace"], "kube-system");
    assert_eq!(releases[1]["spec"]["chart"]["spec"]["version"], "1.7.0");
    assert_eq!(releases[2]["spec"]["chartRef"]["kind"], "OCIRepository");
    assert_eq!(releases[2]["spec"]["targetNamespace"], "kueue-system");
    assert_eq!(ks[2]["spec"]["path"], "./deploy/prod/gitops/workloads");
    // RayJobs are not synced, so Flux's create-only policy would mean nothing on them.
    let job = &docs(&dir.path().join("workloads/llm-training/rayjob.yaml"))[0];
    assert!(
        job["metadata"]["annotations"]
            .get("kustomize.toolkit.fluxcd.io/ssa")
            .is_none(),
        "{job}"
    );
}

/// The objects a kustomization folder of the bundle builds, following `resources` into other
/// folders as kustomize does: (kind, name) in order.
fn reachable(
    files: &std::collections::BTreeMap<String, String>,
    dir: &str,
) -> Vec<(String, String)> {
    fn normalize(path: &str) -> String {
        let mut parts: Vec<&str> = Vec::new();
        for p in path.split('/') {
            match p {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                other => parts.push(other),
            }
        }
        parts.join("/")
    }
    let k: Value = serde_saphyr::from_str(&files[&format!("{dir}/kustomization.yaml")]).unwrap();
    let mut out = Vec::new();
    for r in k["resources"].as_array().unwrap() {
        let path = normalize(&format!("{dir}/{}", r.as_str().unwrap()));
        if files.contains_key(&format!("{path}/kustomization.yaml")) {
            out.extend(reachable(files, &path));
        } else {
            for d in crate::cli::parse_stream(&files[&path]) {
                out.push((
                    d["kind"].as_str().unwrap().to_owned(),
                    d["metadata"]["name"].as_str().unwrap().to_owned(),
                ));
            }
        }
    }
    out
}

/// A RayJob with `ttlSecondsAfterFinished` is deleted after it finishes; an automated,
/// self-healing Argo CD Application or a Flux Kustomization that owned it would create it again
/// and the GPU job would run for ever. No GitOps source of the bundle reaches a RayJob; the
/// long-running RayService is synced.
#[test]
fn gitops_never_syncs_a_one_shot_rayjob() {
    let text = crate::common::shipped_text("team").to_owned()
        + "gitops:\n  repoURL: https://example.com/ray.git\n  path: deploy/team\n  argocd: {}\n  flux: {}\n";
    let c = crate::common::compile_text(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}"));
    let files = &c.bundle.files;
    let mut sources = Vec::new();
    for r in &c.bundle.objects {
        let v = &r.object.value;
        let path = match v["kind"].as_str() {
            Some("Application") => v["spec"]["source"]["path"].as_str(),
            Some("Kustomization")
                if v["apiVersion"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("kustomize.toolkit.fluxcd.io")) =>
            {
                v["spec"]["path"].as_str()
            }
            _ => None,
        };
        if let Some(path) = path {
            let sub = path
                .trim_start_matches("./")
                .trim_start_matches("deploy/team/")
                .to_owned();
            if files.contains_key(&format!("{sub}/kustomization.yaml")) {
                sources.push(sub);
            }
        }
    }
    assert!(
        sources.len() >= 6,
        "Argo CD and Flux directory sources: {sources:?}"
    );
    let mut synced = Vec::new();
    for s in &sources {
        synced.extend(reachable(files, s));
    }
    assert!(!synced.iter().any(|(k, _)| k == "RayJob"), "{synced:?}");
    assert!(
        synced.contains(&("RayService".to_owned(), "aurora-serve".to_owned())),
        "{synced:?}"
    );
    // The RayJobs are still in the bundle, to be submitted per run.
    for job in ["aurora-finetune", "llm-training", "batch-inference"] {
        assert!(files.contains_key(&format!("workloads/{job}/rayjob.yaml")));
        assert!(
            reachable(files, &format!("workloads/{job}"))
                .iter()
                .any(|(k, n)| k == "RayJob" && n == job)
        );
    }
}

/// A queued RayService is synced; Kueue admits it through `rayClusterConfig.suspend`, which
/// Argo CD then ignores and Flux never re-applies. Nothing is said about kinds Kueue does not
/// manage here.
#[test]
fn a_queued_rayservice_is_synced_with_its_suspend_left_to_kueue() {
    // The shipped team profile queues its RayService (with ray.io/rayservice enabled).
    let text = crate::common::shipped_text("team").to_owned()
        + "gitops:\n  repoURL: https://example.com/ray.git\n  path: deploy/team\n  argocd: {}\n  flux: {}\n";
    let c = crate::common::compile_text(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}"));
    let app = c
        .bundle
        .objects
        .iter()
        .find(|r| {
            r.object.value["metadata"]["name"] == "team-workloads"
                && r.object.value["kind"] == "Application"
        })
        .expect("the workloads Application");
    let ignored = app.object.value["spec"]["ignoreDifferences"]
        .as_array()
        .unwrap();
    assert_eq!(ignored.len(), 1, "{ignored:?}");
    assert_eq!(ignored[0]["kind"], "RayService");
    assert_eq!(
        ignored[0]["jsonPointers"][0],
        "/spec/rayClusterConfig/suspend"
    );
    let service = c
        .bundle
        .objects
        .iter()
        .find(|r| r.object.value["kind"] == "RayService")
        .unwrap();
    assert_eq!(
        service.object.value["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/ssa"],
        "IfNotPresent"
    );
}

#[test]
fn no_gitops_objects_unless_asked() {
    let resolved = raykueue::api::input::resolve::resolve("team").unwrap();
    let bundle = raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle;
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
        skip("kubectl kustomize", "kubectl is not installed");
        return;
    }
    let dir = prod_tree();
    for sub in [
        "platform",
        "workloads",
        "gitops/workloads",
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

/// A HelmRelease `v2` schema of one helm-controller release, closed as the API server closes a
/// CRD (`tests/fixtures/flux/`: descriptions stripped; README there names the commits).
fn helmrelease_schema(version: &str) -> jsonschema::Validator {
    fn close(node: &mut Value) {
        if let Value::Object(m) = node {
            let open = m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
            if m.contains_key("properties") && !open && !m.contains_key("additionalProperties") {
                m.insert("additionalProperties".into(), Value::Bool(false));
            }
            m.values_mut().for_each(close);
        } else if let Value::Array(items) = node {
            items.iter_mut().for_each(close);
        }
    }
    let path =
        crate::common::repo().join(format!("tests/fixtures/flux/helmrelease-v2-{version}.json"));
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    close(&mut schema);
    jsonschema::validator_for(&schema).unwrap()
}

/// Flux 2.7 is the oldest Flux that accepts the HelmReleases raykueue writes: their
/// `install.strategy` / `upgrade.strategy` (`RetryOnFailure`) first appear in helm-controller
/// v1.4.0 (fluxcd/helm-controller@v1.4.0 `config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml`;
/// v1.3.0 has no such field), and Flux v2.7.0 is the first release that ships helm-controller
/// v1.4.0 (fluxcd/flux2@v2.7.0 `manifests/bases/helm-controller/kustomization.yaml`; v2.6.x
/// ship v1.3.0).
#[test]
fn flux_helmreleases_need_flux_2_7() {
    let dir = prod_tree();
    let releases = docs(&dir.path().join("gitops/flux/operators/helmreleases.yaml"));
    // The operators and the monitoring stack (kube-prometheus-stack, the DCGM exporter).
    assert_eq!(releases.len(), 5);
    let v14 = helmrelease_schema("v1.4.0");
    let v13 = helmrelease_schema("v1.3.0");
    for r in &releases {
        let errors: Vec<String> = v14
            .iter_errors(r)
            .map(|e| format!("{} {e}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "helm-controller v1.4.0 refuses {}: {errors:?}",
            r["metadata"]["name"]
        );
        // v1.3.0 refuses exactly the strategies (and would prune them on an older CRD).
        let mut refused: Vec<String> = v13
            .iter_errors(r)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        refused.sort();
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(
            refused[0].starts_with("/spec/install:") && refused[0].contains("'strategy'"),
            "{refused:?}"
        );
        assert!(
            refused[1].starts_with("/spec/upgrade:") && refused[1].contains("'strategy'"),
            "{refused:?}"
        );
    }
    let gitops_md = std::fs::read_to_string(crate::common::repo().join("docs/gitops.md")).unwrap();
    assert!(
        gitops_md.contains("Needs Flux 2.7 or later"),
        "docs/gitops.md states the minimum"
    );
}

/// From the AKS AI runtime's registry (`operators.source: aksAiRuntime`), Argo CD and Flux
/// fetch both operator charts from that OCI registry: one repository Secret with OCI enabled
/// serves both Applications (Argo CD names an OCI Helm repository without its scheme), Flux
/// reads KubeRay's chart through an `oci` HelmRepository and Kueue's through an OCIRepository.
#[test]
fn gitops_installs_the_ai_runtime_charts_from_its_oci_registry() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.yaml");
    std::fs::write(
        &profile,
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: examples/aks-ai-runtime\n\
         name: air\ngitops: {repoURL: 'https://github.com/example/ray-platform.git', revision: main, \
         path: deploy/air, argocd: {}, flux: {}}\n",
    )
    .unwrap();
    let out_dir = dir.path().join("out");
    let out = raykueue(&[
        "gen",
        "--profile",
        profile.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let registry = "mcr.microsoft.com/aks/ai-runtime/helm";
    let repos = docs(&out_dir.join("gitops/argocd/00-repositories.yaml"));
    assert_eq!(repos.len(), 1, "one Secret for the one registry: {repos:?}");
    assert_eq!(repos[0]["stringData"]["url"], registry);
    assert_eq!(repos[0]["stringData"]["enableOCI"], "true");
    let apps = docs(&out_dir.join("gitops/argocd/10-applications.yaml"));
    let source = |name: &str| {
        apps.iter()
            .find(|a| a["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("Application {name}"))["spec"]["source"]
            .clone()
    };
    for (app, chart, version) in [
        ("air-kuberay-operator", "kuberay-operator", "1.6.1"),
        ("air-kueue", "kueue", "0.17.1"),
    ] {
        let s = source(app);
        assert_eq!(s["repoURL"], registry, "{app}");
        assert_eq!(s["chart"], chart, "{app}");
        assert_eq!(s["targetRevision"], version, "{app}");
    }
    let kuberay_values = &source("air-kuberay-operator")["helm"]["valuesObject"];
    assert_eq!(
        kuberay_values["env"][0]["name"],
        "ENABLE_INIT_CONTAINER_INJECTION"
    );
    assert_eq!(kuberay_values["image"]["tag"], "v1.6.1");
    let flux: Vec<Value> = std::fs::read_dir(out_dir.join("gitops/flux"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .flat_map(|p| docs(&p))
        .collect();
    let kind = |k: &str, name: &str| {
        flux.iter()
            .find(|o| o["kind"] == k && o["metadata"]["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{k} {name}"))
    };
    let helm_repo = kind("HelmRepository", "kuberay");
    assert_eq!(helm_repo["spec"]["type"], "oci");
    assert_eq!(helm_repo["spec"]["url"], format!("oci://{registry}"));
    assert_eq!(
        kind("OCIRepository", "kueue")["spec"]["url"],
        format!("oci://{registry}/kueue")
    );
}
