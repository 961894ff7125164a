//! Live state from a real cluster: a replay stopped part-way, its snapshot taken as the README
//! has users take one (`kubectl get … -o yaml`), then `explain` and the forecast of `simulate
//! --state` read from it and held to what the real Kueue says and then does.

use super::{Case, cases, harness, replay, snapshot};
use crate::common::{raykueue, stderr, stdout};
use serde_json::Value;
use std::collections::BTreeMap;

/// The cases, the scenario second the snapshot is taken at (something pending behind quota)
/// and the run time every Workload of the scenario has (`--run-time`).
const CASES: [(&str, u64, u64); 2] = [
    // train-1 holds the 8 GPUs; train-2 waits for quota.
    ("45-seed-000-single-backpressure", 90, 1800),
    // r1 runs; `big` waits for quota and `small` behind it (StrictFIFO).
    ("51-strict-fifo-head-blocks", 30, 100),
];

/// The kinds of blocker `explain` may name for what a Workload's `QuotaReserved=False`
/// condition says (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/flavorassigner/
/// flavorassigner.go`: "insufficient unused quota for R in flavor F, N more needed" when the
/// quota is taken, "insufficient quota for R in flavor F, … maximum capacity" when it never
/// fits; `pkg/scheduler/scheduler.go` for a stopped or inactive ClusterQueue), or None where
/// the message is one this test does not know.
fn kinds_for(message: &str) -> Option<&'static [&'static str]> {
    if message.contains("insufficient unused quota") {
        Some(&["Quota", "BorrowingLimit"])
    } else if message.contains("insufficient quota") {
        Some(&["NeverAdmissible"])
    } else if message.contains("is inactive") || message.contains("stopped") {
        Some(&["StoppedQueue"])
    } else {
        None
    }
}

/// The resource a quota message names: "… quota for RESOURCE in flavor …".
fn resource_in(message: &str) -> Option<&str> {
    message.split(" quota for ").nth(1)?.split(' ').next()
}

/// Per pending Workload of the snapshot, its QuotaReserved=False message.
fn pending_messages(state: &str) -> BTreeMap<String, String> {
    let doc: Value = serde_saphyr::from_str(state).unwrap();
    let mut out = BTreeMap::new();
    for wl in doc["items"].as_array().into_iter().flatten() {
        if wl["kind"] != "Workload" {
            continue;
        }
        let conditions = wl["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let reserved = conditions.iter().find(|c| c["type"] == "QuotaReserved");
        if let Some(c) = reserved.filter(|c| c["status"] == "False") {
            let name = wl["metadata"]["name"].as_str().unwrap_or_default();
            out.insert(
                name.to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            );
        }
    }
    out
}

/// `explain`'s blockers, per Workload name (without its namespace).
fn explained(profile: &str, state: &str) -> BTreeMap<String, Vec<(String, String)>> {
    let out = raykueue(&[
        "explain",
        "--profile",
        profile,
        "--state",
        state,
        "--output",
        "json",
    ]);
    assert!(out.status.success(), "explain: {}", stderr(&out));
    let list: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    list.iter()
        .map(|e| {
            let name = e["workload"].as_str().unwrap_or_default();
            let name = name.rsplit('/').next().unwrap_or(name).to_string();
            let blockers = e["blockers"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|b| {
                    (
                        b["kind"].as_str().unwrap_or_default().to_string(),
                        b["message"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect();
            (name, blockers)
        })
        .collect()
}

/// The forecast's admissions, in groups of one second each, every group sorted: (name,
/// flavors).
fn forecast(profile: &str, state: &str, run_for: u64) -> Vec<Vec<String>> {
    let run_time = run_for.to_string();
    let out = raykueue(&[
        "simulate",
        "--profile",
        profile,
        "--state",
        state,
        "--run-time",
        &run_time,
        "--output",
        "json",
    ]);
    assert!(out.status.success(), "simulate --state: {}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut timed: Vec<(u64, String)> = doc["forecast"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let name = e["workload"].as_str()?;
            let name = name.rsplit('/').next().unwrap_or(name);
            Some((
                e["admittedIn"].as_u64()?,
                format!("{name} {}", e["flavors"]),
            ))
        })
        .collect();
    timed.sort();
    grouped(timed)
}

/// What the full replay admits after second `t`, grouped the same way.
fn admitted_after(events: &[Value], t: u64) -> Vec<Vec<String>> {
    let timed: Vec<(u64, String)> = events
        .iter()
        .filter(|e| e["event"] == "Admitted")
        .filter_map(|e| {
            let at = e["time"].as_u64().filter(|at| *at > t)?;
            let name = e["workload"].as_str()?;
            Some((at, format!("{name} {}", e["flavors"])))
        })
        .collect();
    grouped(timed)
}

fn grouped(timed: Vec<(u64, String)>) -> Vec<Vec<String>> {
    let mut out: Vec<(u64, Vec<String>)> = Vec::new();
    for (t, what) in timed {
        match out.last_mut() {
            Some((last, group)) if *last == t => group.push(what),
            _ => out.push((t, vec![what])),
        }
    }
    out.into_iter()
        .map(|(_, mut g)| {
            g.sort();
            g
        })
        .collect()
}

/// The replay of a case to its end, and the snapshot of a replay stopped at second `at`,
/// both on one lane (emptied in between).
fn replays(case: &Case, at: u64) -> Result<(Vec<Value>, String), String> {
    let dir = tempfile::Builder::new()
        .prefix("raykueue-e2e-live-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let mut lane = harness::Lane::start(dir.path(), false)?;
    let full = replay(&mut lane, case)?;
    let stopped = Case {
        name: case.name.clone(),
        profile: case.profile.clone(),
        scenario: case.scenario.clone(),
        until: Some(at),
    };
    replay(&mut lane, &stopped)?;
    let path = dir.path().join("state.yaml");
    snapshot(&lane.cluster, &path)?;
    let state = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    Ok((full, state))
}

/// One case: its problems.
fn check_case(case: &Case, at: u64, run_for: u64) -> Vec<String> {
    let (full, text) = match replays(case, at) {
        Ok(r) => r,
        Err(e) => return vec![format!("{}: {e}", case.name)],
    };
    let kept = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(kept.path(), &text).unwrap();
    let state = kept.path().display().to_string();
    let mut problems = Vec::new();
    let messages = pending_messages(&text);
    if messages.is_empty() {
        problems.push(format!(
            "{}: nothing waits for quota at second {at}",
            case.name
        ));
    }
    let explanations = explained(&case.profile, &state);
    for (wl, message) in &messages {
        let Some(kinds) = kinds_for(message) else {
            problems.push(format!(
                "{}: {wl}: Kueue's message is one this test does not know: {message}",
                case.name
            ));
            continue;
        };
        let blockers = explanations.get(wl).cloned().unwrap_or_default();
        let named = blockers.iter().any(|(kind, text)| {
            kinds.contains(&kind.as_str()) && resource_in(message).is_none_or(|r| text.contains(r))
        });
        if !named {
            problems.push(format!(
                "{}: {wl}: Kueue says \"{message}\"; explain names {blockers:?}",
                case.name
            ));
        }
    }
    let forecast = forecast(&case.profile, &state, run_for);
    let then = admitted_after(&full, at);
    {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "e2e live {} at second {at}: Kueue's pending conditions {messages:?}; forecast {forecast:?}",
            case.name
        );
    }
    if forecast != then {
        problems.push(format!(
            "{}: from second {at}, simulate --state forecasts {forecast:?}; the real Kueue then admitted {then:?}",
            case.name
        ));
    }
    problems
}

#[test]
fn explain_and_the_forecast_read_a_real_clusters_snapshot_as_kueue_does() {
    if !super::toolchain("explain_and_the_forecast_read_a_real_clusters_snapshot_as_kueue_does") {
        return;
    }
    let _one = super::one_at_a_time();
    let all = cases();
    let mut problems = Vec::new();
    for (name, at, run_for) in CASES {
        let case = all
            .iter()
            .find(|c| c.name == name)
            .expect("a scenario case");
        problems.extend(check_case(case, at, run_for));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
