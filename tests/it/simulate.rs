//! `raykueue simulate`: every scenario fixture (`tests/fixtures/simulate/<case>/`: a profile,
//! a scenario, the expected JSON lines, and `source.md` naming the Kueue test or seed it
//! restates) runs through the binary and must print exactly the expected events (compared as
//! parsed JSON). The shared example cases in `../shared/scenarios` run too when present.

use crate::common::{raykueue, repo, stderr, stdout};
use serde_json::Value;
use std::path::Path;

/// Run one case directory; `Err` describes the difference.
fn run_case(dir: &Path) -> Result<(), String> {
    let profile = if dir.join("profile.yaml").is_file() {
        dir.join("profile.yaml").to_string_lossy().into_owned()
    } else {
        // A shipped profile, named in `profile-name`.
        std::fs::read_to_string(dir.join("profile-name"))
            .map_err(|e| format!("{}: no profile.yaml or profile-name: {e}", dir.display()))?
            .trim()
            .to_owned()
    };
    let scenario = dir.join("scenario.yaml").to_string_lossy().into_owned();
    let mut args = vec![
        "simulate".to_owned(),
        "--profile".to_owned(),
        profile,
        "--scenario".to_owned(),
        scenario,
        "--output".to_owned(),
        "json".to_owned(),
    ];
    if let Ok(extra) = std::fs::read_to_string(dir.join("args")) {
        args.extend(extra.split_whitespace().map(str::to_owned));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = raykueue(&refs);
    if out.status.code() != Some(0) {
        return Err(format!(
            "{}: exit {:?}\n{}",
            dir.display(),
            out.status.code(),
            stderr(&out)
        ));
    }
    let parse = |text: &str| -> Result<Vec<Value>, String> {
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).map_err(|e| format!("{l}: {e}")))
            .collect()
    };
    let got = parse(&stdout(&out))?;
    let expected = parse(
        &std::fs::read_to_string(dir.join("expected.jsonl"))
            .map_err(|e| format!("{}: expected.jsonl: {e}", dir.display()))?,
    )?;
    if got == expected {
        return Ok(());
    }
    let mut msg = format!("{}: events differ\n", dir.display());
    for i in 0..got.len().max(expected.len()) {
        let g = got.get(i).map_or_else(|| "-".to_owned(), Value::to_string);
        let e = expected
            .get(i)
            .map_or_else(|| "-".to_owned(), Value::to_string);
        if g == e {
            msg.push_str(&format!("    {g}\n"));
        } else {
            msg.push_str(&format!("got {g}\nexp {e}\n"));
        }
    }
    Err(msg)
}

fn case_dirs(root: &Path) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(root)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.join("scenario.yaml").is_file())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

#[test]
fn every_scenario_fixture_prints_its_expected_events() {
    let dirs = case_dirs(&repo().join("tests/fixtures/simulate"));
    assert!(dirs.len() >= 4, "the fixture corpus is missing");
    let failures: Vec<String> = dirs.iter().filter_map(|d| run_case(d).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}

#[test]
fn every_fixture_cites_its_source() {
    for d in case_dirs(&repo().join("tests/fixtures/simulate")) {
        let source = std::fs::read_to_string(d.join("source.md")).unwrap_or_default();
        assert!(
            source.contains("**Restates:**"),
            "{}: source.md must say what it restates",
            d.display()
        );
    }
}

#[test]
fn the_shared_example_cases_pass_when_present() {
    let shared = repo().join("../shared/scenarios");
    if !shared.is_dir() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{} is required in CI",
            shared.display()
        );
        eprintln!("skipped: {} is absent", shared.display());
        return;
    }
    let dirs = case_dirs(&shared);
    let failures: Vec<String> = dirs.iter().filter_map(|d| run_case(d).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A scenario written to a temporary folder, run against `team`.
fn simulate_text(scenario: &str, extra: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.yaml");
    std::fs::write(&path, scenario).unwrap();
    let p = path.to_string_lossy().into_owned();
    let mut args = vec!["simulate", "--profile", "team", "--scenario", &p];
    args.extend_from_slice(extra);
    raykueue(&args)
}

const HEADER: &str = "apiVersion: raykueue.io/v1alpha1\nkind: Scenario\nname: t\nworkloads:\n";

#[test]
fn scenario_errors_are_located_and_exit_1() {
    for (body, code, line, needle) in [
        (
            "  - {name: a, queue: team-a, submitAt: 0, runFor: 10, podSet: []}\n",
            "RK010",
            5,
            "did you mean `podSets`?",
        ),
        (
            "  - {name: a, queue: team-c, submitAt: 0, runFor: 10, podSets: [{name: m, count: 1}]}\n",
            "RK601",
            5,
            "did you mean `team-a`?",
        ),
        (
            "  - name: a\n    queue: team-a\n    priorityClass: hihg\n    submitAt: 0\n    runFor: 10\n    podSets: [{name: m, count: 1}]\n",
            "RK602",
            7,
            "names no WorkloadPriorityClass",
        ),
        (
            "  - name: a\n    queue: team-a\n    submitAt: 0\n    runFor: 10\n    from: llm-trainin\n",
            "RK603",
            9,
            "did you mean `llm-training`?",
        ),
        (
            "  - {name: a, queue: team-a, submitAt: 0, runFor: 10, from: llm-training}\n  - {name: a, queue: team-a, submitAt: 0, runFor: 10, from: llm-training}\n",
            "RK604",
            6,
            "already in the scenario",
        ),
        (
            "  - {name: a, queue: team-a, submitAt: 0, runFor: 10}\n",
            "RK605",
            5,
            "exactly one of",
        ),
        (
            "  - {name: a, queue: team-a, priority: 5, priorityClass: x, submitAt: 0, runFor: 10, from: llm-training}\n",
            "RK606",
            5,
            "both `priority` and `priorityClass`",
        ),
        (
            "  - name: a\n    queue: team-a\n    submitAt: 0\n    runFor: 10\n    from: llm-training\n    podSets:\n      - {name: m, count: 1}\n      - {name: m, count: 2}\n",
            "RK604",
            12,
            "two pod sets of `a` are named `m`",
        ),
        (
            "  - {name: a, queue: team-a, submitAt: 0, runFor: 10, podSets: [{name: m, count: 1, requests: {cpu: 4GB}}]}\n",
            "RK012",
            5,
            "4GB",
        ),
    ] {
        let out = simulate_text(&format!("{HEADER}{body}"), &["--error-format", "json"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{code}: {err}");
        assert!(stdout(&out).is_empty(), "{code}: nothing on stdout");
        let found: Vec<Value> = err
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let d = found
            .iter()
            .find(|d| d["code"] == code)
            .unwrap_or_else(|| panic!("no {code} in {err}"));
        assert_eq!(d["line"], line, "{code}: {err}");
        assert!(err.contains(needle), "{code}: {err}");
    }
}

#[test]
fn a_missing_scenario_file_is_a_usage_error() {
    let out = raykueue(&[
        "simulate",
        "--profile",
        "team",
        "--scenario",
        "no/such/file.yaml",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = raykueue(&["simulate", "--profile", "team"]);
    assert_eq!(out.status.code(), Some(2), "--scenario is required");
}

#[test]
fn until_stops_the_clock_and_lists_what_runs_and_waits() {
    let body = "  - {name: a, queue: team-a, submitAt: 0, runFor: 100, podSets: [{name: m, count: 8, requests: {nvidia.com/gpu: \"1\"}}]}\n  - {name: b, queue: team-a, submitAt: 5, runFor: 100, podSets: [{name: m, count: 1, requests: {nvidia.com/gpu: \"1\"}}]}\n  - {name: c, queue: team-a, submitAt: 500, runFor: 100, podSets: [{name: m, count: 1, requests: {cpu: \"1\"}}]}\n";
    let out = simulate_text(
        &format!("{HEADER}{body}"),
        &["--output", "json", "--until", "50"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "End");
    assert_eq!(last["time"], 5, "the time of the last event");
    assert_eq!(last["running"], serde_json::json!(["a"]));
    assert_eq!(last["pending"], serde_json::json!(["b"]));
    assert!(!text.contains("\"c\""), "c is submitted after --until");
}

#[test]
fn human_output_is_a_table_with_usage() {
    let body = "  - {name: a-train, queue: team-a, submitAt: 0, runFor: 100, podSets: [{name: m, count: 8, requests: {nvidia.com/gpu: \"1\"}}]}\n";
    let out = simulate_text(&format!("{HEADER}{body}"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("TIME"), "{text}");
    assert!(text.contains("nvidia.com/gpu=4"), "borrowed column: {text}");
    assert!(
        text.contains("team-a-cq: nvidia.com/gpu 8/4 on gpu (4 borrowed)"),
        "{text}"
    );
    assert!(text.contains("End at 100s"), "{text}");
}

/// Preemptions that chase each other (a victim admitted again before its preemptor, which
/// preempts it again) bring the cycles of one second back to a state they were in: the
/// simulator stops cycling at the first repeat and warns, instead of running the cycle cap
/// (4 per workload) of preemptions and evictions that change nothing.
#[test]
fn preemptions_chasing_each_other_stop_at_the_first_repeated_state() {
    let out = raykueue(&[
        "simulate",
        "--profile",
        "tests/fixtures/simulate-loop/profile.yaml",
        "--scenario",
        "tests/fixtures/simulate-loop/scenario.yaml",
        "--output",
        "json",
        "--until",
        "40",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("preemptions kept chasing each other"),
        "{}",
        stderr(&out)
    );
    let preempted = stdout(&out)
        .lines()
        .filter(|l| l.contains("\"event\":\"Preempted\""))
        .count();
    // 126 workloads; the cap alone would let every looping second run 500-odd cycles.
    assert!(preempted < 126, "{preempted} preemptions");
}
