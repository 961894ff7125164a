//! The real-control-plane tier (docs/development.md, "The e2e tier"): the bundles applied to a
//! real API server with the real Kueue and KubeRay, and `simulate` held to what the real Kueue
//! does. The harness is `xtask/src/e2e/` (included here by path: the same code `cargo run -p
//! xtask -- e2e …` runs). Without the toolchain (`cargo run -p xtask -- e2e tools`, which needs
//! Go) every test here prints `SKIPPED` and passes; under CI it fails instead.

use crate::common::{self, raykueue, repo, stderr, stdout};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

#[path = "../../xtask/src/e2e/mod.rs"]
mod harness;

use harness::Compiled;
use harness::cluster::Cluster;

mod live;
mod managed;
mod monitoring;
mod placement;
mod validate;

/// One control plane at a time: the KubeRay operator's webhook port is fixed, and control
/// planes side by side on two cores would starve each other's timing.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the toolchain is built; a skip (a failure under CI) when it is not.
fn toolchain(test: &str) -> bool {
    match harness::tools::Toolchain::cached() {
        Ok(_) => true,
        Err(missing) => {
            common::skip(
                test,
                &format!(
                    "the e2e toolchain lacks {} (`cargo run -p xtask -- e2e tools`, with Go)",
                    missing.join(", ")
                ),
            );
            false
        }
    }
}

/// A control plane for a compiled profile, stopped when dropped.
fn up(compiled: &Compiled, kuberay: bool) -> Result<(tempfile::TempDir, Cluster), String> {
    let dir = tempfile::Builder::new()
        .prefix("raykueue-e2e-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let mut cluster = harness::up_with(dir.path(), compiled, kuberay)?;
    cluster.owned = true;
    Ok((dir, cluster))
}

#[test]
fn the_toolchain_has_the_pinned_versions() {
    if !toolchain("the_toolchain_has_the_pinned_versions") {
        return;
    }
    let tools = harness::tools::Toolchain::cached().unwrap();
    assert_eq!(tools.get("kueue").version, "v0.19.2");
    let kube = &tools.get("kubernetes").version;
    assert!(
        kube.starts_with("v1.36."),
        "the API server is of the minor Kueue v0.19.2 builds against (k8s.io/api v0.36.x): {kube}"
    );
    for c in harness::tools::COMPONENTS {
        for b in c.binaries {
            assert!(tools.bin(c.name, b).is_file(), "{} has {b}", c.name);
        }
    }
}

/// The profiles whose bundles the tier applies: every shipped one and every example profile
/// (fleets apart: each member gets its own control plane).
fn bundle_profiles() -> Vec<String> {
    let mut out: Vec<String> = common::shipped().iter().map(|s| (*s).to_string()).collect();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(repo().join("profiles/examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            p.extension().is_some_and(|x| x == "yaml") && text.lines().any(|l| l == "kind: Profile")
        })
        .collect();
    examples.sort();
    out.extend(
        examples
            .iter()
            .map(|p| p.strip_prefix(repo()).unwrap().display().to_string()),
    );
    out
}

/// What kubectl's own kustomize prints for every `apply -k` of a kustomization with
/// `sortOptions` (sigs.k8s.io/kustomize/api@v0.21.1 `krusty/kustomizer.go` `applySortOrder`:
/// `kubectl apply` always passes its `--reorder` default): that the bundle's order wins, as it
/// should. The client's note, not the API server's warning.
const KUSTOMIZE_SORT_NOTE: &str = "Warning: Sorting order is set both in 'kustomization.yaml'";

/// kubectl's stderr without that note: the API server's warnings, or its errors.
fn complaints(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.contains(KUSTOMIZE_SORT_NOTE))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Applies a folder or file of the bundle server-side; kubectl's complaints and warnings.
fn apply(cluster: &Cluster, what: &Path) -> Vec<String> {
    let flag = if what.join("kustomization.yaml").is_file() {
        "-k"
    } else {
        "-f"
    };
    let a = cluster.kubectl().run(
        &[
            "apply",
            "--server-side",
            "--field-manager=raykueue-e2e",
            flag,
            &what.display().to_string(),
        ],
        None,
    );
    let said = complaints(&a.stderr);
    let mut out = Vec::new();
    if !a.ok {
        out.push(format!("{}: {}", what.display(), said.trim()));
    } else if !said.trim().is_empty() {
        out.push(format!("{} (warnings): {}", what.display(), said.trim()));
    }
    out
}

/// What `kubectl get … -o yaml` prints of the queue objects, as the README has users take a
/// snapshot.
fn snapshot(cluster: &Cluster, path: &Path) -> Result<(), String> {
    let a = cluster.kubectl().run(
        &[
            "get",
            "clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads",
            "-A",
            "-o",
            "yaml",
        ],
        None,
    );
    if !a.ok {
        return Err(a.stderr);
    }
    std::fs::write(path, a.stdout).map_err(|e| e.to_string())
}

/// One bundle on an emptied lane: platform, workloads and smoke test applied without a
/// complaint, then `check --state` on a snapshot reports no drift.
fn bundle_applies(
    lane: &mut harness::Lane,
    label: &str,
    profile_arg: Option<&str>,
    compiled: &Compiled,
) -> Vec<String> {
    if let Err(e) = lane.empty_and_start(compiled) {
        return vec![format!("{label}: e2e up: {e}")];
    }
    let cluster = &lane.cluster;
    let bundle = cluster.dir.join("bundle");
    let mut problems = apply(cluster, &bundle.join("platform"));
    if let Ok(entries) = std::fs::read_dir(bundle.join("workloads")) {
        let mut dirs: Vec<PathBuf> = entries
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            problems.extend(apply(cluster, &d));
        }
    }
    let smoke = bundle.join("infra/smoke");
    if smoke.is_dir() {
        problems.extend(apply(cluster, &smoke));
    }
    let queued = compiled.profile.queues.is_some();
    if let (Some(arg), true) = (profile_arg, queued) {
        let state = cluster.dir.join("state.yaml");
        match snapshot(cluster, &state) {
            Ok(()) => {
                let out = raykueue(&[
                    "check",
                    "--profile",
                    arg,
                    "--state",
                    &state.display().to_string(),
                ]);
                if !out.status.success() || stderr(&out).contains("drift") {
                    problems.push(format!(
                        "check --state right after the apply: exit {:?}\n{}",
                        out.status.code(),
                        stderr(&out)
                    ));
                }
            }
            Err(e) => problems.push(format!("snapshot: {e}")),
        }
    }
    problems
        .into_iter()
        .map(|p| format!("{label}: {p}"))
        .collect()
}

/// The example profiles a fleet file names.
fn fleet_members() -> Vec<String> {
    let dir = repo().join("profiles/examples");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
        if text.lines().any(|l| l == "kind: Fleet") {
            out.extend(
                text.split_whitespace()
                    .filter(|w| {
                        Path::new(w)
                            .extension()
                            .is_some_and(|x| x.eq_ignore_ascii_case("yaml"))
                    })
                    .map(|w| w.trim_matches(['"', '\'', ',', '}']).to_string()),
            );
        }
    }
    out
}

#[test]
fn every_bundle_applies_to_a_real_api_server_without_error_or_warning() {
    if !toolchain("every_bundle_applies_to_a_real_api_server_without_error_or_warning") {
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::Builder::new()
        .prefix("raykueue-e2e-apply-")
        .tempdir()
        .unwrap();
    let mut lane = harness::Lane::start(dir.path(), true).unwrap();
    let members = fleet_members();
    let mut problems = Vec::new();
    for profile in bundle_profiles() {
        match Compiled::profile(&profile) {
            Ok(c) => problems.extend(bundle_applies(&mut lane, &profile, Some(&profile), &c)),
            // A fleet's manager is complete only inside its fleet (applied below).
            Err(_) if members.iter().any(|m| profile.ends_with(m.as_str())) => {}
            Err(e) => problems.push(e),
        }
    }
    for fleet in ["profiles/examples/fleet.yaml"] {
        for (member, c) in Compiled::fleet(fleet).unwrap() {
            let label = format!("{fleet} member {member}");
            problems.extend(bundle_applies(&mut lane, &label, None, &c));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// A scenario case for the agreement check: where its profile and scenario are.
struct Case {
    name: String,
    profile: String,
    scenario: PathBuf,
    until: Option<u64>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let root = repo().join("tests/fixtures/simulate");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("scenario.yaml").is_file())
        .collect();
    dirs.sort();
    for d in dirs {
        let profile = if d.join("profile.yaml").is_file() {
            d.join("profile.yaml").display().to_string()
        } else {
            std::fs::read_to_string(d.join("profile-name"))
                .unwrap()
                .trim()
                .to_string()
        };
        let args = std::fs::read_to_string(d.join("args")).unwrap_or_default();
        let mut words = args.split_whitespace();
        let mut until = None;
        while let Some(w) = words.next() {
            if w == "--until" {
                until = words.next().and_then(|n| n.parse().ok());
            }
        }
        out.push(Case {
            name: d.file_name().unwrap().to_string_lossy().into_owned(),
            profile,
            scenario: d.join("scenario.yaml"),
            until,
        });
    }
    out.push(Case {
        name: "examples/fair-sharing-scenario".into(),
        profile: repo()
            .join("profiles/examples/fair-sharing.yaml")
            .display()
            .to_string(),
        scenario: repo().join("profiles/examples/fair-sharing-scenario.yaml"),
        until: None,
    });
    out
}

/// Each workload's class: workloads alike in all but their names (queue, priority, pod sets,
/// submission time and run time) are the same to Kueue, which tells them apart only by their
/// UIDs (kubernetes-sigs/kueue@v0.19.2 `pkg/scheduler/preemption/common/ordering.go`
/// `CandidatesOrdering` ends with the UID; `pkg/cache/queue` orders equal heads by it too),
/// random on a real cluster, where simulate takes names. Agreement is judged per class.
pub(crate) fn classes(scenario: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(scenario).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap();
    let mut out = BTreeMap::new();
    for w in doc["workloads"].as_array().into_iter().flatten() {
        let name = w["name"].as_str().unwrap_or_default().to_string();
        let mut key = w.clone();
        if let Some(o) = key.as_object_mut() {
            o.remove("name");
        }
        out.insert(name, key.to_string());
    }
    out
}

/// Per workload, its events as the agreement compares them: name, ClusterQueue, flavors.
fn per_workload(events: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::default();
    for e in events {
        let kind = e["event"].as_str().unwrap_or_default();
        if !matches!(kind, "Admitted" | "Preempted" | "Evicted" | "Finished") {
            continue;
        }
        let wl = e["workload"].as_str().unwrap_or_default().to_string();
        let mut line = format!("{kind} {}", e["clusterQueue"].as_str().unwrap_or_default());
        if kind == "Admitted" {
            line.push_str(&format!(" {}", e["flavors"]));
        }
        out.entry(wl).or_default().push(line);
    }
    out
}

/// Per class, the sorted list of its workloads' event sequences.
fn per_class(
    events: &[Value],
    classes: &BTreeMap<String, String>,
) -> BTreeMap<String, Vec<Vec<String>>> {
    let by_workload = per_workload(events);
    let mut out: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::default();
    for (wl, class) in classes {
        out.entry(class.clone())
            .or_default()
            .push(by_workload.get(wl).cloned().unwrap_or_default());
    }
    for seqs in out.values_mut() {
        seqs.sort();
    }
    out
}

/// The Admitted events in order, each second's set sorted: ties within one scenario second
/// aside. Workloads are named by their class.
fn admission_order(
    events: &[Value],
    classes: &BTreeMap<String, String>,
) -> Vec<(u64, Vec<String>)> {
    let mut out: Vec<(u64, Vec<String>)> = Vec::new();
    for e in events.iter().filter(|e| e["event"] == "Admitted") {
        let t = e["time"].as_u64().unwrap_or_default();
        let wl = e["workload"].as_str().unwrap_or_default();
        let class = classes.get(wl).cloned().unwrap_or_else(|| wl.to_string());
        match out.last_mut() {
            Some((last, names)) if *last == t => names.push(class),
            _ => out.push((t, vec![class])),
        }
    }
    for (_, names) in &mut out {
        names.sort();
    }
    out
}

/// Whether a replay agrees with simulate (docs/simulate.md, "Held to the real Kueue"): per workload the
/// same sequence of events with the same ClusterQueue and flavors, and the Admitted events in
/// the same order but for ties within one scenario second; workloads alike in all but their
/// names are interchangeable (`classes`).
pub(crate) fn agree(
    simulated: &[Value],
    replayed: &[Value],
    classes: &BTreeMap<String, String>,
) -> Result<(), String> {
    let same_classes = per_class(simulated, classes) == per_class(replayed, classes);
    let order = |e: &[Value]| {
        admission_order(e, classes)
            .into_iter()
            .flat_map(|(_, n)| n)
            .collect::<Vec<_>>()
    };
    if same_classes && order(simulated) == order(replayed) {
        return Ok(());
    }
    let (a, b) = (per_workload(simulated), per_workload(replayed));
    let mut diff = Vec::new();
    for wl in a.keys().chain(b.keys()).collect::<BTreeSet<_>>() {
        let (x, y) = (a.get(wl), b.get(wl));
        if x != y {
            diff.push(format!(
                "  {wl}: simulate {:?}\n  {wl}: Kueue    {:?}",
                x.cloned().unwrap_or_default(),
                y.cloned().unwrap_or_default()
            ));
        }
    }
    if same_classes {
        let names = |e: &[Value]| {
            let mut out = Vec::new();
            for ev in e.iter().filter(|ev| ev["event"] == "Admitted") {
                out.push(format!(
                    "{}@{}",
                    ev["workload"].as_str().unwrap_or_default(),
                    ev["time"]
                ));
            }
            out
        };
        diff.push(format!(
            "  admission order: simulate {:?}\n  admission order: Kueue    {:?}",
            names(simulated),
            names(replayed)
        ));
    }
    Err(diff.join("\n"))
}

fn simulate(case: &Case) -> Vec<Value> {
    let scenario = case.scenario.display().to_string();
    let mut args = vec![
        "simulate",
        "--profile",
        &case.profile,
        "--scenario",
        &scenario,
        "--output",
        "json",
    ];
    let until = case.until.map(|u| u.to_string());
    if let Some(u) = &until {
        args.extend(["--until", u]);
    }
    let out = raykueue(&args);
    assert!(
        out.status.success(),
        "simulate {}: {}",
        case.name,
        stderr(&out)
    );
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The cases docs/simulate.md lists where the real Kueue does otherwise, by name: the lines
/// `- \`CASE\`` of its section "Where the real Kueue differs".
fn documented_limits() -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/simulate.md")).unwrap();
    let Some(section) = doc.split("\n## Where the real Kueue differs").nth(1) else {
        return Vec::new();
    };
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect()
}

fn replay(lane: &mut harness::Lane, case: &Case) -> Result<Vec<Value>, String> {
    let compiled = Compiled::profile(&case.profile)?;
    lane.load(&compiled)?;
    harness::replay(
        &lane.cluster,
        &compiled,
        &case.scenario.display().to_string(),
        None,
        case.until,
    )
}

/// How many control planes the replays share out (`RAYKUEUE_E2E_LANES`, default 2): a replay
/// mostly waits for Kueue, so two run side by side on two cores.
fn lanes() -> usize {
    std::env::var("RAYKUEUE_E2E_LANES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(2)
}

/// Each case's verdict: agreement, or the difference.
fn replay_all(cases: &[Case]) -> Vec<(String, Result<(), String>)> {
    let n = lanes().min(cases.len().max(1));
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|lane_index| {
                scope.spawn(move || {
                    let dir = tempfile::Builder::new()
                        .prefix("raykueue-e2e-lane-")
                        .tempdir()
                        .unwrap();
                    let mut lane = match harness::Lane::start(dir.path(), false) {
                        Ok(l) => l,
                        Err(e) => {
                            return cases
                                .iter()
                                .skip(lane_index)
                                .step_by(n)
                                .map(|c| (c.name.clone(), Err(format!("lane: {e}"))))
                                .collect::<Vec<_>>();
                        }
                    };
                    let mut out = Vec::new();
                    for case in cases.iter().skip(lane_index).step_by(n) {
                        let simulated = simulate(case);
                        let started = std::time::Instant::now();
                        let outcome = replay(&mut lane, case).and_then(|replayed| {
                            agree(&simulated, &replayed, &classes(&case.scenario))
                        });
                        {
                            use std::io::Write;
                            let _ = writeln!(
                                std::io::stderr(),
                                "e2e replay {}: {} in {:.1} s",
                                case.name,
                                if outcome.is_ok() { "agrees" } else { "differs" },
                                started.elapsed().as_secs_f64()
                            );
                        }
                        out.push((case.name.clone(), outcome));
                    }
                    out
                })
            })
            .collect();
        let mut all: Vec<(String, Result<(), String>)> = handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    })
}

#[test]
fn simulate_agrees_with_the_real_kueue_on_every_scenario() {
    if !toolchain("simulate_agrees_with_the_real_kueue_on_every_scenario") {
        return;
    }
    let only = std::env::var("RAYKUEUE_E2E_CASES").ok();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|p| c.name.starts_with(p)))
        })
        .collect();
    let limits = documented_limits();
    let all: Vec<String> = self::cases().into_iter().map(|c| c.name).collect();
    for l in &limits {
        assert!(
            all.contains(l),
            "docs/simulate.md lists `{l}`, which is no scenario case"
        );
    }
    let verdicts = replay_all(&cases);
    let mut agree_count = 0;
    let mut problems = Vec::new();
    for (name, outcome) in verdicts {
        match outcome {
            Ok(()) => agree_count += 1,
            // A listed case may agree in a run: where UIDs decide, Kueue's choice is random.
            Err(_) if limits.contains(&name) => {}
            Err(d) => problems.push(format!("{name}:\n{d}")),
        }
    }
    let line = format!("{agree_count} of {} scenarios agree", cases.len());
    {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    assert!(problems.is_empty(), "{line}\n{}", problems.join("\n\n"));
}
