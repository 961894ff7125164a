//! Golden bundles: every file of every shipped profile, snapshotted in `golden/` and reviewed
//! by hand against the upstream examples the profiles follow (`cargo insta review`).

use crate::common::{bundle_text, shipped};

#[test]
fn shipped_profiles_match_their_golden_bundles() {
    for profile in shipped() {
        insta::with_settings!({
            snapshot_path => "../../golden",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            // A shipped example (`examples/tas-gke`) is `examples-tas-gke.snap`.
            insta::assert_snapshot!(profile.replace('/', "-"), bundle_text(profile));
        });
    }
}

#[test]
fn example_overlay_matches_its_golden_bundle() {
    insta::with_settings!({
        snapshot_path => "../../golden",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("examples-prod", bundle_text("profiles/examples/prod.yaml"));
    });
}

/// The fair-sharing example (issue 26): its bundle with the Cohort objects, the fair-sharing
/// Configuration and the summary's tree and shares.
#[test]
fn fair_sharing_example_matches_its_golden_bundle() {
    insta::with_settings!({
        snapshot_path => "../../golden",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(
            "examples-fair-sharing",
            bundle_text("profiles/examples/fair-sharing.yaml")
        );
    });
}

/// The fair-sharing example's scenario, in which fair-sharing preemption decides: team C's
/// second pair of GPUs is granted by `LessThanInitialShare` because production weighs twice
/// what research does.
#[test]
fn fair_sharing_example_simulation_matches_its_golden() {
    let run = |output: &str| {
        let out = crate::common::raykueue(&[
            "simulate",
            "--profile",
            "profiles/examples/fair-sharing.yaml",
            "--scenario",
            "profiles/examples/fair-sharing-scenario.yaml",
            "--until",
            "600",
            "--output",
            output,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            crate::common::stderr(&out)
        );
        crate::common::stdout(&out)
    };
    let json = run("json");
    assert!(
        json.contains(r#""workload":"a-2","clusterQueue":"team-a-cq","by":"c-2","reason":"InCohortFairSharing""#),
        "{json}"
    );
    insta::with_settings!({
        snapshot_path => "../../golden",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(
            "examples-fair-sharing-simulate",
            format!("$ raykueue simulate --output json\n{json}\n$ raykueue simulate\n{}", run("human"))
        );
    });
}

/// The upstream Azure example's GPU labs as scenarios on `gpu-autoscale`: who is admitted after
/// the provisioning check, who waits for quota, who never fits.
#[test]
fn gpu_lab_scenarios_match_their_goldens() {
    let run = |scenario: &str, output: &str| {
        let out = crate::common::raykueue(&[
            "simulate",
            "--profile",
            "gpu-autoscale",
            "--scenario",
            &format!("profiles/examples/gpu-lab-{scenario}-scenario.yaml"),
            "--output",
            output,
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            crate::common::stderr(&out)
        );
        crate::common::stdout(&out)
    };
    let training = run("training", "human");
    // The gang waits for the verification Job's GPUs, then is admitted whole after the check.
    assert!(
        training.contains("300s  Admitted after checks gpu-provisioning  multinode-training "),
        "{training}"
    );
    assert!(
        training.contains("never admissible: multinode-training-x8 (ExceedsMaxQuota)"),
        "{training}"
    );
    let contention = run("contention", "human");
    assert!(
        contention.contains("120s  Admitted after checks gpu-provisioning  contention-c "),
        "{contention}"
    );
    insta::with_settings!({
        snapshot_path => "../../golden",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        for scenario in ["training", "contention"] {
            insta::assert_snapshot!(
                format!("gpu-lab-{scenario}-simulate"),
                format!(
                    "$ raykueue simulate --output json\n{}\n$ raykueue simulate\n{}",
                    run(scenario, "json"),
                    run(scenario, "human")
                )
            );
        }
    });
}

/// `gen --profile autoscale` and `gen --profile gpu-autoscale` print the objects of the upstream
/// Azure example's options C and D field for field (Azure/AKS@a5bf7121
/// `examples/kueue-and-ray-on-aks/2-kueue-queues/manifests/40-autoscale-queue.yaml`,
/// Azure/AKS@3a60394e `…/50-gpu-autoscale-queue.yaml`; their values restated here): names,
/// namespaces and specs, besides raykueue's own `managed-by` label.
#[test]
fn autoscale_profiles_print_the_upstream_options_c_and_d() {
    use serde_json::json;
    let check = |name: &str| {
        let pr = |config: &str, resource: &str| {
            json!({"provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
                   "managedResources": [resource], "name": config})
        };
        let ac = |config: &str| {
            json!({"controllerName": "kueue.x-k8s.io/provisioning-request",
                   "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": config}})
        };
        let (ns, objects) = if name == "autoscale" {
            (
                "cas-kueue-demo",
                vec![
                    ("Namespace", "cas-kueue-demo", None),
                    (
                        "ResourceFlavor",
                        "scalepool",
                        Some(json!({"nodeLabels": {"agentpool": "scalepool"}})),
                    ),
                    (
                        "ProvisioningRequestConfig",
                        "cas-provreq-config",
                        Some(pr("cas-provreq-config", "cpu")),
                    ),
                    (
                        "AdmissionCheck",
                        "cas-provisioning",
                        Some(ac("cas-provreq-config")),
                    ),
                    (
                        "ClusterQueue",
                        "cas-cluster-queue",
                        Some(json!({
                    "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                    "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [{"name": "scalepool", "resources": [
                        {"name": "cpu", "nominalQuota": "100"}, {"name": "memory", "nominalQuota": "200Gi"}]}]}],
                    "admissionChecksStrategy": {"admissionChecks": [{"name": "cas-provisioning", "onFlavors": ["scalepool"]}]}})),
                    ),
                    (
                        "LocalQueue",
                        "cas-local-queue",
                        Some(json!({"clusterQueue": "cas-cluster-queue"})),
                    ),
                ],
            )
        } else {
            (
                "gpu-lab",
                vec![
                    ("Namespace", "gpu-lab", None),
                    (
                        "ResourceFlavor",
                        "gpu-a100",
                        Some(json!({"nodeLabels": {"agentpool": "gpupool"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}]})),
                    ),
                    (
                        "ProvisioningRequestConfig",
                        "gpu-provreq-config",
                        Some(pr("gpu-provreq-config", "nvidia.com/gpu")),
                    ),
                    (
                        "AdmissionCheck",
                        "gpu-provisioning",
                        Some(ac("gpu-provreq-config")),
                    ),
                    (
                        "ClusterQueue",
                        "gpu-cluster-queue",
                        Some(json!({
                    "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                    "resourceGroups": [{"coveredResources": ["nvidia.com/gpu", "cpu", "memory"], "flavors": [{"name": "gpu-a100", "resources": [
                        {"name": "nvidia.com/gpu", "nominalQuota": "16"}, {"name": "cpu", "nominalQuota": "200"},
                        {"name": "memory", "nominalQuota": "3000Gi"}]}]}],
                    "admissionChecksStrategy": {"admissionChecks": [{"name": "gpu-provisioning", "onFlavors": ["gpu-a100"]}]}})),
                    ),
                    (
                        "LocalQueue",
                        "gpu-local-queue",
                        Some(json!({"clusterQueue": "gpu-cluster-queue"})),
                    ),
                ],
            )
        };
        let out = crate::common::raykueue(&["gen", "--profile", name]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            crate::common::stderr(&out)
        );
        let docs = crate::cli::parse_stream(&crate::common::stdout(&out));
        let got: Vec<(String, String)> = docs
            .iter()
            .map(|d| {
                (
                    d["kind"].as_str().unwrap().to_owned(),
                    d["metadata"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let want: Vec<(String, String)> = objects
            .iter()
            .map(|(k, n, _)| ((*k).to_owned(), (*n).to_owned()))
            .collect();
        assert_eq!(got, want, "{name}: the same objects, in apply order");
        for ((kind, _, spec), doc) in objects.iter().zip(&docs) {
            if *kind == "LocalQueue" {
                assert_eq!(doc["metadata"]["namespace"], ns);
            }
            let mut spec_got = doc["spec"].clone();
            let mut spec_want = spec.clone().unwrap_or(serde_json::Value::Null);
            // The config's name is its metadata's, not a spec field.
            if *kind == "ProvisioningRequestConfig" {
                assert_eq!(Some(&doc["metadata"]["name"]), spec_want.get("name"));
                spec_want.as_object_mut().unwrap().remove("name");
            }
            if spec.is_none() {
                spec_got = serde_json::Value::Null;
            }
            assert_eq!(spec_got, spec_want, "{name}: {kind}");
        }
    };
    check("autoscale");
    check("gpu-autoscale");
}

/// The `team` profile's values (README, "Shipped profiles"), asserted directly so a wrongly accepted snapshot cannot hide them.
#[test]
fn team_stream_carries_the_spec_values() {
    let out = crate::common::raykueue(&["gen", "--profile", "team"]);
    assert_eq!(out.status.code(), Some(0));
    let docs: Vec<serde_json::Value> = crate::cli::parse_stream(&crate::common::stdout(&out));
    let cqs: Vec<&serde_json::Value> = docs
        .iter()
        .filter(|d| d["kind"] == "ClusterQueue")
        .collect();
    assert_eq!(cqs.len(), 2);
    for cq in cqs {
        assert_eq!(cq["apiVersion"], "kueue.x-k8s.io/v1beta2");
        let spec = &cq["spec"];
        assert_eq!(spec["cohortName"], "shared-cohort");
        assert_eq!(spec["namespaceSelector"], serde_json::json!({}));
        assert_eq!(spec["queueingStrategy"], "BestEffortFIFO");
        assert_eq!(spec["preemption"]["withinClusterQueue"], "LowerPriority");
        assert_eq!(spec["preemption"]["reclaimWithinCohort"], "Any");
        let rg = &spec["resourceGroups"];
        assert_eq!(
            rg[0]["coveredResources"],
            serde_json::json!(["cpu", "memory"])
        );
        assert_eq!(rg[0]["flavors"][0]["name"], "default");
        assert_eq!(rg[0]["flavors"][0]["resources"][0]["nominalQuota"], "48");
        assert_eq!(rg[0]["flavors"][0]["resources"][0]["borrowingLimit"], "48");
        assert_eq!(rg[0]["flavors"][0]["resources"][1]["nominalQuota"], "768Gi");
        assert_eq!(
            rg[0]["flavors"][0]["resources"][1]["borrowingLimit"],
            "768Gi"
        );
        assert_eq!(
            rg[1]["coveredResources"],
            serde_json::json!(["nvidia.com/gpu"])
        );
        assert_eq!(rg[1]["flavors"][0]["name"], "gpu");
        assert_eq!(rg[1]["flavors"][0]["resources"][0]["nominalQuota"], "4");
        assert_eq!(rg[1]["flavors"][0]["resources"][0]["borrowingLimit"], "4");
    }
    let lqs: Vec<(String, String)> = docs
        .iter()
        .filter(|d| d["kind"] == "LocalQueue")
        .map(|d| {
            assert_eq!(d["metadata"]["namespace"], "ray");
            (
                d["metadata"]["name"].as_str().unwrap().to_owned(),
                d["spec"]["clusterQueue"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        lqs,
        [
            ("team-a".into(), "team-a-cq".into()),
            ("team-b".into(), "team-b-cq".into())
        ]
    );
}

#[test]
fn single_stream_carries_the_spec_values() {
    let out = crate::common::raykueue(&["gen", "--profile", "single"]);
    assert_eq!(out.status.code(), Some(0));
    let docs = crate::cli::parse_stream(&crate::common::stdout(&out));
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "Namespace",
            "ServiceAccount",
            "ResourceFlavor",
            "ResourceFlavor",
            "ClusterQueue",
            "LocalQueue"
        ]
    );
    let sa = &docs[1];
    assert_eq!(sa["metadata"]["name"], "ray-workload");
    assert!(sa["metadata"]["annotations"]["azure.workload.identity/client-id"].is_string());
    assert!(sa["metadata"]["annotations"]["azure.workload.identity/tenant-id"].is_string());
    assert_eq!(docs[2]["metadata"]["name"], "default");
    assert_eq!(docs[2]["spec"], serde_json::json!({}));
    assert_eq!(
        docs[3]["spec"]["nodeLabels"],
        serde_json::json!({"accelerator": "nvidia"})
    );
    let cq = &docs[4];
    assert_eq!(cq["metadata"]["name"], "cluster-queue");
    assert!(cq["spec"].get("cohortName").is_none());
    assert!(cq["spec"].get("preemption").is_none());
    assert_eq!(cq["spec"]["namespaceSelector"], serde_json::json!({}));
    let rg = &cq["spec"]["resourceGroups"];
    assert_eq!(rg[0]["flavors"][0]["resources"][0]["nominalQuota"], "96");
    assert_eq!(rg[0]["flavors"][0]["resources"][1]["nominalQuota"], "768Gi");
    assert_eq!(rg[1]["flavors"][0]["resources"][0]["nominalQuota"], "8");
    assert_eq!(docs[5]["metadata"]["name"], "default");
    assert_eq!(docs[5]["spec"]["clusterQueue"], "cluster-queue");
}

#[test]
fn the_team_summary_computes_seed_000s_table() {
    let resolved = raykueue::api::input::resolve::resolve("team").unwrap();
    let bundle = raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle;
    let summary = &bundle.files["SUMMARY.md"];
    // Seed 000's rows: A alone holds 8 GPUs (4 borrowed); B claims its 4 and A's one
    // workload loses all 8; both busy at 4.
    for row in [
        "| 1 | team-a-cq | 8 nvidia.com/gpu | 4 nvidia.com/gpu | `team-a-cq/max` admitted, borrowing 4 nvidia.com/gpu |",
        "| 2 | team-a-cq | 0 nvidia.com/gpu | – | `team-a-cq/max` preempted by `team-b-cq/nominal` (InCohortReclamation): gives back all 8 nvidia.com/gpu, not just the 4 it borrowed |",
        "| 2 | team-b-cq | 4 nvidia.com/gpu | – | `team-b-cq/nominal` admitted |",
        "| 3 | team-a-cq | 4 nvidia.com/gpu | – | `team-a-cq/nominal` admitted; `team-a-cq/max` still waits |",
    ] {
        assert!(summary.contains(row), "{row}\n{summary}");
    }
    assert!(
        summary.contains("Kueue preempts whole workloads"),
        "{summary}"
    );
    assert!(summary.contains("```mermaid\ngantt\n"), "{summary}");
    assert!(
        summary.contains("    team-a-cq/max holds 8 nvidia.com/gpu :crit, 0, 60\n"),
        "{summary}"
    );
    // The shipped workloads are sized and queued so that the seed's row 2 holds for them.
    assert!(
        summary.contains("**The profile's workloads reclaim:** `aurora-finetune`, `aurora-serve` (`team-a-cq`); `llm-training`, `batch-inference` (`team-b-cq`) fit"),
        "{summary}"
    );
    assert!(!summary.contains("Cannot reclaim"), "{summary}");
    // The upstream example's llm-training (68.5 CPU) still cannot: its fixture's summary says so.
    let text = std::fs::read_to_string(
        crate::common::repo().join("tests/fixtures/bad/rk146-fits-only-by-borrowing/profile.yaml"),
    )
    .unwrap();
    let resolved = raykueue::api::input::resolve::resolve(
        crate::common::repo()
            .join("tests/fixtures/bad/rk146-fits-only-by-borrowing/profile.yaml")
            .to_str()
            .unwrap(),
    )
    .unwrap();
    assert!(text.contains("cpu: \"16\""));
    let summary = &raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle
        .files["SUMMARY.md"];
    assert!(
        summary.contains("**Cannot reclaim (warning RK146):** `llm-training` fits `team-b-cq` only by borrowing (cpu: asks 68500m, nominal quota 48)"),
        "{summary}"
    );
}

#[test]
fn the_reviewer_summary_adds_up_the_cohort() {
    let resolved = raykueue::api::input::resolve::resolve("team").unwrap();
    let bundle = raykueue::api::compile::compile(&resolved, false)
        .unwrap()
        .bundle;
    let summary = &bundle.files["SUMMARY.md"];
    assert!(summary.contains("## ClusterQueue `team-a-cq`"), "{summary}");
    assert!(
        summary.contains("| gpu | nvidia.com/gpu | 4 | 4 | all |"),
        "{summary}"
    );
    // The cohort's total is the seed's 8 GPUs that team A may use alone.
    assert!(
        summary.contains("| gpu | nvidia.com/gpu | 8 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| RayJob | llm-training | team-b | – |"),
        "{summary}"
    );
}

#[test]
fn queue_behaviour_shows_the_first_queues_and_says_how_many_it_leaves_out() {
    // 18 ClusterQueues in one cohort, 1 GPU each: 16 scenarios, 2 queues left out.
    let mut cqs = String::new();
    let mut lqs = String::new();
    for i in 0..18 {
        cqs.push_str(&format!(
            "    - name: cq-{i}\n      cohortName: all\n      resourceGroups:\n        - coveredResources: [cpu, nvidia.com/gpu]\n          flavors:\n            - name: default\n              resources:\n                - {{name: cpu, nominalQuota: \"8\"}}\n                - {{name: nvidia.com/gpu, nominalQuota: \"1\"}}\n"
        ));
        lqs.push_str(&format!("    - {{name: lq-{i}, clusterQueue: cq-{i}}}\n"));
    }
    let profile = format!(
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: many\nnamespace: ray\nflavors:\n  - name: default\nqueues:\n  mode: team\n  clusterQueues:\n{cqs}  localQueues:\n{lqs}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.yaml");
    std::fs::write(&path, profile).unwrap();
    let out = dir.path().join("out");
    let o = crate::common::raykueue(&[
        "gen",
        "--profile",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let summary = std::fs::read_to_string(out.join("SUMMARY.md")).unwrap();
    assert_eq!(summary.matches("```mermaid").count(), 16, "{summary}");
    // Alone, a queue gets its own GPU and the 17 its peers lend.
    assert!(
        summary.contains("| 1 | cq-15 | 18 nvidia.com/gpu | 17 nvidia.com/gpu | `cq-15/max` admitted, borrowing 17 nvidia.com/gpu |"),
        "{summary}"
    );
    assert!(!summary.contains("### `cq-16`"), "{summary}");
    assert!(summary.contains("2 more are not"), "{summary}");
}
