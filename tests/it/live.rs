//! A live cluster's state (`--state`): the snapshot read as a `List`, a stream or a folder,
//! other Kueue versions refused, objects checked against the CRDs, `explain` of the pending
//! Workloads (goldens of both outputs), and drift against the profile in `check`.

use crate::common::{raykueue, repo, stderr, stdout};

const BUSY: &str = "tests/fixtures/state/team-busy/state.yaml";
const DRIFT: &str = "tests/fixtures/state/team-drift/state.yaml";

fn explain(args: &[&str]) -> std::process::Output {
    let mut all = vec!["explain", "--profile", "team", "--state"];
    all.extend_from_slice(args);
    raykueue(&all)
}

#[test]
fn explain_says_why_each_pending_workload_waits() {
    let out = explain(&[BUSY]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    insta::with_settings!({snapshot_path => "../../golden/live"}, {
        insta::assert_snapshot!("explain-team-busy", text);
    });
    let json = explain(&[BUSY, "--output", "json"]);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    insta::with_settings!({snapshot_path => "../../golden/live"}, {
        insta::assert_snapshot!("explain-team-busy-json", serde_json::to_string_pretty(&v).unwrap());
    });
    let by = |name: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|e| e["workload"] == name)
            .unwrap_or_else(|| panic!("{name} explained"))
            .clone()
    };
    // Admitted and finished Workloads are not explained.
    for gone in ["ray/a-train", "ray/b-train", "ray/a-old"] {
        assert!(
            v.as_array().unwrap().iter().all(|e| e["workload"] != gone),
            "{gone}"
        );
    }
    // Both GPU teams use their 4 GPUs: the cohort lends nothing; a-next waits on quota.
    let next = by("ray/a-next");
    assert_eq!(next["position"], 1);
    assert_eq!(next["blockers"][0]["kind"], "Quota");
    assert!(
        next["blockers"][0]["message"]
            .as_str()
            .unwrap()
            .contains("needs 2 nvidia.com/gpu on flavor `gpu`"),
        "{next}"
    );
    let later = by("ray/a-later");
    assert_eq!(later["position"], 2);
    assert_eq!(later["ahead"], serde_json::json!(["ray/a-next"]));
    // 12 GPUs against at most 8 (4 nominal + 4 borrowing limit): RK140's verdict.
    let huge = by("ray/a-huge");
    assert_eq!(huge["neverAdmissible"], "ExceedsMaxQuota");
    assert!(
        huge["unblock"][0].as_str().unwrap().contains("at most 8"),
        "{huge}"
    );
    assert_eq!(by("ray/b-cpu")["fitsNow"], true);
    assert_eq!(by("ray/b-paused")["blockers"][0]["kind"], "Inactive");
    let prov = by("ray/b-prov");
    assert_eq!(prov["position"], 0);
    assert_eq!(prov["blockers"][0]["kind"], "AdmissionCheck");
}

#[test]
fn explain_named_workloads_only_and_unknown_names_fail() {
    let out = explain(&[BUSY, "a-huge", "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(v[0]["workload"], "ray/a-huge");
    let out = explain(&[BUSY, "ray/nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no Workload `ray/nope`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_list_a_stream_and_a_folder_read_alike() {
    let text = std::fs::read_to_string(repo().join(BUSY)).unwrap();
    let list: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let items = list["items"].as_array().unwrap();
    let stream: Vec<String> = items
        .iter()
        .map(|i| serde_json::to_string(i).unwrap())
        .collect();
    let stream_path = dir.path().join("stream.yaml");
    std::fs::write(&stream_path, stream.join("\n---\n")).unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let (queues, workloads): (Vec<_>, Vec<_>) = stream
        .iter()
        .partition(|s| !s.contains("\"kind\":\"Workload\""));
    std::fs::write(
        folder.join("queues.yaml"),
        queues
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n---\n"),
    )
    .unwrap();
    std::fs::write(
        folder.join("workloads.json"),
        workloads
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n---\n"),
    )
    .unwrap();
    let want = stdout(&explain(&[BUSY, "--output", "json"]));
    for p in [&stream_path, &folder] {
        let out = explain(&[p.to_str().unwrap(), "--output", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(stdout(&out), want, "{}", p.display());
    }
}

#[test]
fn another_kueue_version_is_refused_with_its_place() {
    let out = explain(&["tests/fixtures/state/other-version/state.yaml"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("error[RK800]"), "{err}");
    assert!(err.contains("other-version/state.yaml:7:15"), "{err}");
    assert!(err.contains("kueue.x-k8s.io/v1beta1"), "{err}");
    assert!(stdout(&out).is_empty());
}

#[test]
fn workloads_are_checked_against_the_workload_crd() {
    let text = std::fs::read_to_string(repo().join(BUSY)).unwrap();
    // A condition without its required `reason` (metav1.Condition), as no API server returns.
    let broken = text.replacen("      reason: QuotaReserved\n", "", 1);
    assert_ne!(broken, text);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.yaml");
    std::fs::write(&p, broken).unwrap();
    let out = explain(&[p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("Workload/ray/a-train: status.conditions[0]"),
        "{err}"
    );
    assert!(err.contains("reason"), "{err}");
}

#[test]
fn check_reports_drift_located_in_the_profile() {
    let out = raykueue(&[
        "check",
        "--profile",
        "team",
        "--state",
        DRIFT,
        "--error-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "drift is a warning");
    let found: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let drift: Vec<(String, String)> = found
        .iter()
        .filter(|d| d["code"].as_str().unwrap().starts_with("RK81"))
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    insta::with_settings!({snapshot_path => "../../golden/live"}, {
        insta::assert_debug_snapshot!("drift-team", drift);
    });
    let text = stderr(&raykueue(&["check", "--profile", "team", "--state", DRIFT]));
    // The changed quota points at the profile's own nominalQuota of team-b-cq's GPU flavor.
    assert!(text.contains("profiles/team.yaml:111:56"), "{text}");
    // The extra LocalQueue is placed in the snapshot.
    assert!(text.contains("team-drift/state.yaml:139:11"), "{text}");
    let denied = raykueue(&[
        "check",
        "--profile",
        "team",
        "--state",
        DRIFT,
        "--deny-warnings",
    ]);
    assert_eq!(denied.status.code(), Some(1));
    // The snapshot of the profile's own cluster has no drift.
    let clean = stderr(&raykueue(&["check", "--profile", "team", "--state", BUSY]));
    assert!(!clean.contains("RK81"), "{clean}");
}

#[test]
fn simulate_state_forecasts_when_each_pending_workload_starts() {
    let out = raykueue(&["simulate", "--profile", "team", "--state", BUSY]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::with_settings!({snapshot_path => "../../golden/live"}, {
        insta::assert_snapshot!("forecast-team-busy", stdout(&out));
    });
    let eta = |args: &[&str]| -> serde_json::Value {
        let mut all = vec![
            "simulate",
            "--profile",
            "team",
            "--output",
            "json",
            "--state",
        ];
        all.extend_from_slice(args);
        let out = raykueue(&all);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["forecast"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["workload"].as_str().unwrap().to_owned(),
                    e["admittedIn"].clone(),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    // a-train reserved its 4 GPUs at 09:01; the snapshot's latest time is 09:20 (1140 s
    // later): with the default hour it frees them 2460 s on, and a-next and a-later take them.
    let v = eta(&[BUSY]);
    assert_eq!(v["ray/a-next"], 2460);
    assert_eq!(v["ray/a-later"], 2460);
    assert_eq!(v["ray/b-cpu"], 0);
    assert!(v["ray/a-huge"].is_null(), "never admissible: {v}");
    // The run-time assumption moves the forecast.
    assert_eq!(eta(&[BUSY, "--run-time", "1200"])["ray/a-next"], 60);
    // A Workload's own maximumExecutionTimeSeconds wins over the default.
    let text = std::fs::read_to_string(repo().join(BUSY)).unwrap();
    let bounded = text.replacen(
        "  spec:\n    queueName: team-a\n",
        "  spec:\n    maximumExecutionTimeSeconds: 1500\n    queueName: team-a\n",
        1,
    );
    assert_ne!(bounded, text);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.yaml");
    std::fs::write(&p, bounded).unwrap();
    assert_eq!(eta(&[p.to_str().unwrap()])["ray/a-next"], 360);
}

#[test]
fn a_stopped_cluster_queue_blocks_its_workloads_first() {
    let text = std::fs::read_to_string(repo().join(BUSY)).unwrap();
    // The first ClusterQueue of the snapshot is team-a-cq (kubectl's name order).
    let held = text.replacen("    stopPolicy: None\n", "    stopPolicy: Hold\n", 1);
    assert_ne!(held, text);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.yaml");
    std::fs::write(&p, held).unwrap();
    let out = explain(&[p.to_str().unwrap(), "a-next", "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["blockers"][0]["kind"], "StoppedQueue", "{v}");
    assert!(
        v[0]["unblock"][0]
            .as_str()
            .unwrap()
            .contains("stopPolicy: None"),
        "{v}"
    );
    // Drift does not report it: the profile does not write stopPolicy.
    let drift = stderr(&raykueue(&[
        "check",
        "--profile",
        "team",
        "--state",
        p.to_str().unwrap(),
    ]));
    assert!(!drift.contains("RK812"), "{drift}");
}
