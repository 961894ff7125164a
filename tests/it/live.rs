//! A live cluster's state (`--state`): the snapshot read as a `List`, a stream or a folder,
//! other Kueue versions refused, objects checked against the CRDs, `explain` of the pending
//! Workloads (goldens of both outputs), and drift against the profile in `check`.

use crate::common::{raykueue, repo, stderr, stdout};

const BUSY: &str = "tests/fixtures/state/team-busy/state.yaml";
const DRIFT: &str = "tests/fixtures/state/team-drift/state.yaml";
const DEACTIVATED: &str = "tests/fixtures/state/deactivated/state.yaml";

fn explain(args: &[&str]) -> std::process::Output {
    let mut all = vec!["explain", "--profile", "team", "--state"];
    all.extend_from_slice(args);
    raykueue(&all)
}

/// The `team-busy` fixture's text, to edit.
fn busy() -> String {
    std::fs::read_to_string(repo().join(BUSY)).unwrap()
}

/// A snapshot written to a file of its own (an edited fixture): the folder, kept alive by the
/// caller, and the file's path.
fn state_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.yaml");
    std::fs::write(&path, text).unwrap();
    let path = path.to_str().unwrap().to_owned();
    (dir, path)
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
    let by = |name: &str| explained(&v, name);
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

/// A deactivated Workload (`spec.active: false`) is in no queue (kueue@v0.19.2
/// pkg/workload/workload.go `IsAdmissible`): no position, nothing ahead of it, and it is not
/// ahead of the Workloads created after it.
#[test]
fn explain_gives_a_deactivated_workload_no_position_and_nothing_ahead() {
    let out = explain(&[DEACTIVATED, "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let by = |name: &str| explained(&v, name);
    let paused = by("ray/b-paused");
    assert_eq!(paused["position"], 0, "{paused}");
    assert_eq!(paused["ahead"], serde_json::json!([]), "{paused}");
    let kinds: Vec<&str> = paused["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["Inactive"], "{paused}");
    let last = by("ray/b-last");
    assert_eq!(last["position"], 2, "{last}");
    assert_eq!(last["ahead"], serde_json::json!(["ray/b-first"]), "{last}");
    let text = stdout(&explain(&[DEACTIVATED]));
    let block = text.split("ray/b-paused").nth(1).unwrap();
    assert!(
        block.contains("position: none (deactivated") && !block.contains("WorkloadsAhead"),
        "{text}"
    );
    assert!(
        block.contains("verdict: not queued until it is active again"),
        "{text}"
    );
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
    let text = busy();
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
    let text = busy();
    // A condition without its required `reason` (metav1.Condition), as no API server returns.
    let broken = text.replacen("      reason: QuotaReserved\n", "", 1);
    assert_ne!(broken, text);
    let (_dir, p) = state_file(&broken);
    let out = explain(&[&p]);
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
    // Drift fails the check, as a difference fails `kubectl diff` (docs/cli.md: exit 1 on drift
    // or errors).
    assert_eq!(out.status.code(), Some(1), "drift is an error");
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
    assert!(text.contains("error[RK812]"), "{text}");
    // The snapshot of the profile's own cluster has no drift: exit 0 (the profile's warnings
    // do not fail it).
    let clean = raykueue(&["check", "--profile", "team", "--state", BUSY]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(!stderr(&clean).contains("RK81"), "{}", stderr(&clean));
}

#[test]
fn simulate_state_forecasts_when_each_pending_workload_starts() {
    let out = raykueue(&["simulate", "--profile", "team", "--state", BUSY]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::with_settings!({snapshot_path => "../../golden/live"}, {
        insta::assert_snapshot!("forecast-team-busy", stdout(&out));
    });
    let doc_of = |args: &[&str]| -> serde_json::Value {
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
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let eta = |args: &[&str]| -> serde_json::Value {
        doc_of(args)["forecast"]
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
    let text = busy();
    let bounded = text.replacen(
        "  spec:\n    queueName: team-a\n",
        "  spec:\n    maximumExecutionTimeSeconds: 1500\n    queueName: team-a\n",
        1,
    );
    assert_ne!(bounded, text);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("state.yaml");
    std::fs::write(&p, &bounded).unwrap();
    assert_eq!(eta(&[p.to_str().unwrap()])["ray/a-next"], 360);
    // Time it ran before a re-admission counts against that maximum, as Kueue counts it.
    let ran_before = bounded.replacen(
        "  status:\n    admission:\n",
        "  status:\n    accumulatedPastExecutionTimeSeconds: 300\n    admission:\n",
        1,
    );
    assert_ne!(ran_before, bounded);
    std::fs::write(&p, ran_before).unwrap();
    assert_eq!(eta(&[p.to_str().unwrap()])["ray/a-next"], 60);
    // A run time per queue: a LocalQueue by name or namespace/name, or a ClusterQueue; a
    // queue's own run time wins over `--run-time SECONDS`, another queue's does not apply.
    for q in ["team-a", "ray/team-a", "team-a-cq"] {
        let arg = format!("{q}=1200");
        assert_eq!(
            eta(&[BUSY, "--run-time", &arg, "--run-time", "99999"])["ray/a-next"],
            60,
            "{q}"
        );
    }
    // team-b's run time moves only b-train's end: reserved at 09:02, done 1200 s later
    // (09:22, 120 s on), and a-next borrows the GPUs it frees.
    assert_eq!(eta(&[BUSY, "--run-time", "team-b=1200"])["ray/a-next"], 120);
    let bad = raykueue(&[
        "simulate",
        "--profile",
        "team",
        "--state",
        BUSY,
        "--run-time",
        "team-a=soon",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("`soon` is not a whole number of seconds"),
        "{}",
        stderr(&bad)
    );
    // A queue the profile does not have would apply to nothing: refused, not ignored.
    let typo = raykueue(&[
        "simulate",
        "--profile",
        "team",
        "--state",
        BUSY,
        "--run-time",
        "team-z=60",
    ]);
    assert_eq!(typo.status.code(), Some(2), "{}", stderr(&typo));
    assert!(
        stderr(&typo).contains("no LocalQueue or ClusterQueue `team-z`"),
        "{}",
        stderr(&typo)
    );
    assert!(stdout(&typo).is_empty());
    // The RayJob that owns a Workload bounds its run time (KubeRay fails it at
    // `activeDeadlineSeconds`) when the snapshot holds the RayJob too.
    let owned = text.replacen(
        "    name: a-train\n",
        "    name: a-train\n    ownerReferences:\n    - {apiVersion: ray.io/v1, kind: RayJob, name: a-train, uid: rj-1, controller: true}\n",
        1,
    ) + "- apiVersion: ray.io/v1\n  kind: RayJob\n  metadata: {name: a-train, namespace: ray}\n  spec:\n    activeDeadlineSeconds: 1500\n    entrypoint: python train.py\n    clusterSelector: {ray.io/cluster: shared}\n";
    assert!(owned.contains("ownerReferences"));
    std::fs::write(&p, &owned).unwrap();
    let v = eta(&[p.to_str().unwrap()]);
    assert_eq!(v["ray/a-next"], 360, "{v}");
    let doc = doc_of(&[p.to_str().unwrap()]);
    let a_next = doc["forecast"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["workload"] == "ray/a-next")
        .unwrap();
    assert_eq!(a_next["runForFrom"], "--run-time");
    assert_eq!(doc["snapshotTime"], "2026-01-05T09:20:00Z");
}

#[test]
fn a_stopped_cluster_queue_blocks_its_workloads_first() {
    let text = busy();
    // The first ClusterQueue of the snapshot is team-a-cq (kubectl's name order).
    let held = text.replacen("    stopPolicy: None\n", "    stopPolicy: Hold\n", 1);
    assert_ne!(held, text);
    let (_dir, p) = state_file(&held);
    let out = explain(&[&p, "a-next", "--output", "json"]);
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
    let drift = stderr(&raykueue(&["check", "--profile", "team", "--state", &p]));
    assert!(!drift.contains("RK812"), "{drift}");
}

/// A scenario's whole run, as JSON lines.
fn whole_run(profile: &str, scenario: &std::path::Path) -> String {
    let scn = scenario.to_string_lossy();
    let out = raykueue(&["simulate", "-p", profile, "-s", &scn, "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{scn}: {}", stderr(&out));
    stdout(&out)
}

/// The first `Admitted` time after `after` of each workload, from `simulate --output json`.
fn admissions_after(jsonl: &str, after: u64) -> std::collections::BTreeMap<String, u64> {
    let mut first = std::collections::BTreeMap::new();
    for line in jsonl.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let t = v["time"].as_u64().unwrap_or(0);
        if v["event"] == "Admitted" && t > after {
            let name = v["workload"].as_str().unwrap_or("").to_owned();
            first.entry(name).or_insert(t);
        }
    }
    first
}

/// One case of the property: the scenario run whole (`whole`, its JSON lines), and the same
/// scenario cut at second `t` (its snapshot, then the submissions after `t` on top of it)
/// agree on when every workload waiting at `t` or submitted later is next admitted. Returns
/// how many the whole run admits after `t`.
fn snapshot_forecasts_the_run(
    profile: &str,
    scenario: &std::path::Path,
    whole: &str,
    t: u64,
) -> Result<usize, String> {
    let scn = scenario.to_string_lossy();
    let expected = admissions_after(whole, t);
    let at = t.to_string();
    let snap = raykueue(&["simulate", "-p", profile, "-s", &scn, "--snapshot-at", &at]);
    if snap.status.code() != Some(0) {
        return Err(format!(
            "{scn}: --snapshot-at {t} failed: {}",
            stderr(&snap)
        ));
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let state = dir.path().join("state.yaml");
    std::fs::write(&state, stdout(&snap)).map_err(|e| e.to_string())?;
    let mut rest: serde_json::Value =
        serde_saphyr::from_str(&std::fs::read_to_string(scenario).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    // `t` is a second something happened at, so the snapshot's latest timestamp is `t`: the
    // forecast's clock and the later submissions count from it.
    let later: Vec<serde_json::Value> = rest["workloads"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| {
            let at = w["submitAt"].as_u64()?.checked_sub(t).filter(|&d| d > 0)?;
            let mut w = w.clone();
            w["submitAt"] = serde_json::json!(at);
            Some(w)
        })
        .collect();
    let state_s = state.to_string_lossy().into_owned();
    let rest_path = dir.path().join("rest.yaml");
    let rest_s = rest_path.to_string_lossy().into_owned();
    let mut args = vec![
        "simulate", "-p", profile, "--state", &state_s, "--output", "json",
    ];
    if !later.is_empty() {
        rest["workloads"] = serde_json::Value::Array(later);
        std::fs::write(&rest_path, rest.to_string()).map_err(|e| e.to_string())?;
        args.extend(["-s", rest_s.as_str()]);
    }
    let out = raykueue(&args);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out))
        .map_err(|e| format!("{scn}: forecast at {t}: {e}: {}", stderr(&out)))?;
    let now = seconds_of(doc["snapshotTime"].as_str().unwrap_or(""));
    if now != t {
        return Err(format!("{scn} cut at {t}s: the snapshot's time is {now}s"));
    }
    let mut seen = 0;
    let mut listed = std::collections::BTreeSet::new();
    for eta in doc["forecast"].as_array().into_iter().flatten() {
        let name = eta["workload"].as_str().unwrap_or("");
        let short = name.split_once('/').map_or(name, |(_, n)| n);
        listed.insert(short.to_owned());
        let got = eta["admittedIn"].as_u64().map(|d| now + d);
        let want = expected.get(short).copied();
        seen += usize::from(want.is_some());
        if got != want {
            return Err(format!(
                "{scn} cut at {t}s: {short} admitted at {got:?} by the forecast, at {want:?} in the whole run"
            ));
        }
    }
    // And the other way: every workload the whole run admits after `t` is listed, unless it
    // was running at `t` (then it is admitted again after a preemption, which the forecast,
    // listing waiting workloads only, does not list).
    let running = running_at(whole, t);
    if let Some(missing) = expected
        .keys()
        .find(|w| !listed.contains(*w) && !running.contains(*w))
    {
        return Err(format!(
            "{scn} cut at {t}s: the whole run admits {missing} after {t}s; the forecast does not list it"
        ));
    }
    Ok(seen)
}

/// The workloads holding quota after second `t` of a whole run's JSON lines.
fn running_at(jsonl: &str, t: u64) -> std::collections::BTreeSet<String> {
    let mut running = std::collections::BTreeSet::new();
    for line in jsonl.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        if v["time"].as_u64().unwrap_or(0) > t {
            break;
        }
        let name = v["workload"].as_str().unwrap_or("").to_owned();
        match v["event"].as_str() {
            Some("Admitted") => {
                running.insert(name);
            }
            Some("Preempted" | "Finished") => {
                running.remove(&name);
            }
            _ => {}
        }
    }
    running
}

/// Seconds since 2026-01-01T00:00:00Z, the second 0 of a scenario's snapshot.
fn seconds_of(rfc3339: &str) -> u64 {
    let parse = |r: std::ops::Range<usize>| {
        rfc3339
            .get(r)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Scenarios here stay within January 2026.
    assert!(rfc3339.starts_with("2026-01-"), "snapshot time {rfc3339}");
    (parse(8..10) - 1) * 86_400 + parse(11..13) * 3600 + parse(14..16) * 60 + parse(17..19)
}

/// Issue 29's property: a snapshot `simulate` makes of a scenario at second T, with the
/// scenario's later submissions on top, forecasts the future the whole run has. Every
/// scenario fixture (cases restated from Kueue's tests) and the fair-sharing example, each cut
/// at every second something happens.
#[test]
fn a_snapshot_at_t_forecasts_what_the_whole_run_does_after_t() {
    let root = repo().join("tests/fixtures/simulate");
    let mut cases: Vec<(String, std::path::PathBuf)> = std::fs::read_dir(&root)
        .expect("fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|d| d.join("profile.yaml").is_file())
        .map(|d| {
            (
                d.join("profile.yaml").to_string_lossy().into_owned(),
                d.join("scenario.yaml"),
            )
        })
        .collect();
    cases.sort();
    cases.push((
        "profiles/examples/fair-sharing.yaml".to_owned(),
        repo().join("profiles/examples/fair-sharing-scenario.yaml"),
    ));
    // Seconds something happens, at most three per case spread over the run: every such
    // second (some 300) would take minutes of debug binaries.
    let wholes: Vec<String> = cases.iter().map(|(p, scn)| whole_run(p, scn)).collect();
    let mut cuts: Vec<(&str, &std::path::Path, &str, u64)> = Vec::new();
    for ((profile, scenario), whole) in cases.iter().zip(&wholes) {
        let mut times: Vec<u64> = whole
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["event"] != "End")
            .filter_map(|v| v["time"].as_u64())
            .collect();
        times.dedup();
        let step = times.len().div_ceil(3).max(1);
        cuts.extend(
            times
                .iter()
                .step_by(step)
                .map(|&t| (profile.as_str(), scenario.as_path(), whole.as_str(), t)),
        );
    }
    assert!(
        cuts.len() > 100,
        "only {} cuts: the fixtures were not found",
        cuts.len()
    );
    let results: Vec<Result<usize, String>> = std::thread::scope(|s| {
        let halves: Vec<_> = cuts
            .chunks(cuts.len().div_ceil(2))
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|(p, scn, whole, t)| snapshot_forecasts_the_run(p, scn, whole, *t))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        halves
            .into_iter()
            .flat_map(|h| h.join().expect("a thread of cuts panicked"))
            .collect()
    });
    let compared: usize = results.iter().filter_map(|r| r.as_ref().ok()).sum();
    assert!(compared > 100, "only {compared} admissions compared");
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cuts differ:\n{}",
        failures.len(),
        cuts.len(),
        failures.join("\n")
    );
}

/// `explain`'s BorrowingLimit blocker: the cohort has room (the other ClusterQueue is idle),
/// but the queue's own `borrowingLimit` stops the Workload, and the fix named is that field.
/// The snapshot is the one `simulate --snapshot-at` makes of the fixture's scenario.
#[test]
fn explain_names_the_borrowing_limit_when_the_cohort_has_room() {
    let profile = "tests/fixtures/state/borrowing-limit/profile.yaml";
    let snap = raykueue(&[
        "simulate",
        "-p",
        profile,
        "-s",
        "tests/fixtures/state/borrowing-limit/scenario.yaml",
        "--snapshot-at",
        "10",
    ]);
    assert_eq!(snap.status.code(), Some(0), "{}", stderr(&snap));
    let (dir, state) = state_file(&stdout(&snap));
    let state = state.as_str();
    let out = raykueue(&["explain", "-p", profile, "--state", state]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::with_settings!({snapshot_path => "../../golden/live"}, {
        insta::assert_snapshot!("explain-borrowing-limit", stdout(&out));
    });
    let json = raykueue(&[
        "explain", "-p", profile, "--state", state, "--output", "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let kinds: Vec<&str> = v[0]["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["BorrowingLimit"], "{v}");
    // With the limit raised to 2, the same snapshot fits now.
    let raised = std::fs::read_to_string(repo().join(profile))
        .unwrap()
        .replace(r#""borrowingLimit": "1""#, r#""borrowingLimit": "2""#);
    let p2 = dir.path().join("profile.yaml");
    std::fs::write(&p2, raised).unwrap();
    let json = raykueue(&[
        "explain",
        "-p",
        p2.to_str().unwrap(),
        "--state",
        state,
        "--output",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v[0]["fitsNow"], true, "{v}");
}

/// A preemption from a snapshot takes the running Workload whose quota was reserved last
/// (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/preemption/common/ordering.go`
/// `CandidatesOrdering`), read from its `QuotaReserved` time: the fixture's `later` waits 850 s
/// for a-old, not 950 s for b-new. Every cut of the run agrees with the whole run.
#[test]
fn a_forecast_preempts_the_most_recently_admitted_first() {
    let profile = "tests/fixtures/state/victims/profile.yaml";
    let scenario = repo().join("tests/fixtures/state/victims/scenario.yaml");
    let whole = whole_run(profile, &scenario);
    for t in [0, 100, 150, 200, 250] {
        if let Err(e) = snapshot_forecasts_the_run(profile, &scenario, &whole, t) {
            panic!("{e}");
        }
    }
    assert_eq!(admissions_after(&whole, 150)["later"], 1000);
}

/// RK822: a scenario added to a snapshot may not reuse the name of a Workload the snapshot
/// holds in the profile's namespace; the error points at the submission's name, exit 1, and
/// nothing is printed on stdout.
#[test]
fn a_scenario_on_a_snapshot_may_not_reuse_a_live_name() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("more.yaml");
    std::fs::write(
        &scenario,
        "apiVersion: raykueue.io/v1alpha1\nkind: Scenario\nname: more\nworkloads:\n  - {name: fresh, queue: team-a, submitAt: 5, runFor: 60, podSets: [{name: main, count: 1, requests: {cpu: \"1\"}}]}\n  - {name: a-next, queue: team-a, submitAt: 5, runFor: 60, podSets: [{name: main, count: 1, requests: {cpu: \"1\"}}]}\n",
    )
    .unwrap();
    let scn = scenario.to_str().unwrap();
    let out = raykueue(&["simulate", "--profile", "team", "--state", BUSY, "-s", scn]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("RK822") && err.contains("more.yaml:6:"),
        "{err}"
    );
    // Renamed, the same scenario runs and lists both submissions.
    std::fs::write(
        &scenario,
        std::fs::read_to_string(&scenario)
            .unwrap()
            .replace("a-next", "b-new"),
    )
    .unwrap();
    let out = raykueue(&[
        "simulate",
        "--profile",
        "team",
        "--state",
        BUSY,
        "-s",
        scn,
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let submitted: Vec<&str> = doc["forecast"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["submittedIn"] == 5)
        .filter_map(|e| e["workload"].as_str())
        .collect();
    assert_eq!(submitted.len(), 2, "{doc}");
    assert!(
        submitted.contains(&"ray/fresh") && submitted.contains(&"ray/b-new"),
        "{doc}"
    );
}

/// `--snapshot-at` writes one cluster: a fleet is refused as a usage error, with nothing on
/// stdout.
#[test]
fn a_fleet_has_no_single_snapshot() {
    let out = raykueue(&[
        "simulate",
        "-p",
        "profiles/examples/fleet.yaml",
        "-s",
        "profiles/examples/fleet-scenario.yaml",
        "--snapshot-at",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert!(
        stderr(&out).contains("--snapshot-at writes one cluster's snapshot"),
        "{}",
        stderr(&out)
    );
}

/// A deactivated Workload (`spec.active: false`) is in no queue: the forecast never submits
/// it, even when it is older than the pending ones and would take the quota they wait for.
#[test]
fn a_deactivated_workload_takes_no_quota_in_the_forecast() {
    let text = busy();
    let at = text.find("    name: b-paused\n").unwrap();
    let (head, paused) = text.split_at(at);
    // Older than b-cpu (09:09) and asking all but 2 of the CPUs team-b could get.
    let paused = paused
        .replacen(
            "creationTimestamp: '2026-01-05T09:10:00Z'",
            "creationTimestamp: '2026-01-05T09:08:00Z'",
            1,
        )
        .replacen("cpu: '2'", "cpu: '54'", 1);
    let (_dir, p) = state_file(&format!("{head}{paused}"));
    let out = raykueue(&[
        "simulate",
        "--profile",
        "team",
        "--output",
        "json",
        "--state",
        &p,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let list = doc["forecast"].as_array().unwrap();
    let b_cpu = list.iter().find(|e| e["workload"] == "ray/b-cpu").unwrap();
    assert_eq!(b_cpu["admittedIn"], 0, "{doc}");
    assert!(
        list.iter().all(|e| e["workload"] != "ray/b-paused"),
        "{doc}"
    );
}

/// A deep queue: `position` counts every Workload ahead, `ahead` names the first 10 in
/// Kueue's order (priority, then creation time). Naming
/// every one would grow the output with the square of the queue.
#[test]
fn explain_names_the_first_ten_workloads_ahead_and_counts_them_all() {
    let text = busy();
    let start = text
        .find("- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: Workload\n  metadata:\n    name: a-later\n")
        .expect("a-later in the fixture");
    let len = text[start + 2..]
        .find("\n- ")
        .map_or(text.len() - start, |n| n + 3);
    let later = &text[start..start + len];
    let mut state = text.clone();
    for i in 0..15 {
        state.push_str(
            &later
                .replace("name: a-later", &format!("name: a-later-{i:02}"))
                // After a-huge (09:07:00): the order is by creation time, not the name tie-break.
                .replace(
                    "'2026-01-05T09:06:00Z'",
                    &format!("'2026-01-05T09:07:{:02}Z'", i + 1),
                )
                .replace("000000000004", &format!("0000000001{i:02}")),
        );
    }
    let (_dir, p) = state_file(&state);
    let p = p.as_str();
    let out = explain(&[p, "ray/a-later-14", "--output", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v[0];
    // The fixture's a-next, a-later and a-huge, then the 14 copies before it.
    assert_eq!(e["position"], 18, "{e}");
    let mut want: Vec<String> = ["ray/a-next", "ray/a-later", "ray/a-huge"]
        .map(str::to_owned)
        .into();
    want.extend((0..7).map(|i| format!("ray/a-later-{i:02}")));
    assert_eq!(e["ahead"], serde_json::json!(want));
    let human = stdout(&explain(&[p, "ray/a-later-14"]));
    assert!(
        human.contains("position: 18 in ClusterQueue team-a-cq"),
        "{human}"
    );
}

/// The explanation of Workload `name` in `explain --output json`'s list.
fn explained(list: &serde_json::Value, name: &str) -> serde_json::Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|e| e["workload"] == name)
        .unwrap_or_else(|| panic!("{name} explained"))
        .clone()
}
