//! What `raykueue simulate` costs (`cargo bench --bench simulate`): the scenario of N
//! workloads over 100 ClusterQueues in one cohort (`synthetic::teams_profile(100)`: each queue
//! 8 CPU / 64Gi / 1 GPU of nominal quota, as much again of borrowing limit), built in memory
//! and simulated (world built from profile and scenario, then the run). Criterion times 100 and
//! 1,000 workloads; then the curve is printed as a table (median of three runs): 100 and 1,000
//! workloads, and 10,000 (one run) with `RAYKUEUE_SIMULATE_BENCH_10K=1`, because it takes minutes
//! (70 s of CPU at the last measurement: the requeued backlog grows with the scenario, so the
//! cost is about quadratic; see `docs/simulate.md`, "Cost").
//!
//! The scenario is deterministic: workload i goes to queue i mod 100, four are submitted per
//! second, each asks 1 or 2 GPUs with 1–4 CPUs and 4–16Gi per GPU, and runs 5–20 minutes, so far
//! more is asked than the cohort's 100 GPUs hold and the backlog grows: the parked
//! (inadmissible) workloads are what the simulator spends its time on.
//!
//! The same runs then go again with fair sharing on (issue 26), both preemption strategies:
//! first the same profile with nothing else changed (the 100 queues in one cohort, equal
//! weights: `flat_fair_profile_text`), then the 100 queues under ten Cohorts
//! `group-0`…`group-9` below a root `org`, queue weights 1, 2, 3 in turn
//! (`fair_profile_text`), so every cycle orders heads by dominant resource share through a
//! two-level tree and preempts by share.
//!
//! `RAYKUEUE_SIMULATE_BENCH_DUMP=DIR` writes the profile and the scenarios there instead, to run
//! them through the CLI (`raykueue simulate --profile DIR/profile.yaml --scenario
//! DIR/scenario-1000.yaml`).

#![allow(clippy::unwrap_used)]

// The binary's allocator (see `Cargo.toml`): the bench measures what `raykueue` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{Criterion, criterion_group, criterion_main};
use raykueue::api::simulate::{self, scenario, world};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::{Duration, Instant};

const QUEUES: usize = 100;
const SIZES: [usize; 3] = [100, 1_000, 10_000];

fn scenario_text(workloads: usize) -> String {
    let mut s = format!(
        "apiVersion: raykueue.io/v1alpha1\nkind: Scenario\nname: bench-{workloads}\nworkloads:\n"
    );
    // A fixed linear congruential sequence: the same scenario on every machine.
    let mut x: u64 = 0x2545_f491;
    let mut next = |m: u64| {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) % m
    };
    for i in 0..workloads {
        let gpus = 1 + next(2);
        let cpu = (1 + next(4)) * gpus;
        let memory = (4 + 4 * next(4)) * gpus;
        let run_for = 300 + 60 * next(16);
        let _ = writeln!(
            s,
            "  - {{name: w-{i:05}, queue: team-{q}, submitAt: {at}, runFor: {run_for}, podSets: [{{name: main, count: 1, requests: {{cpu: \"{cpu}\", memory: {memory}Gi, nvidia.com/gpu: \"{gpus}\"}}}}]}}",
            q = i % QUEUES,
            at = i / 4,
        );
    }
    s
}

/// The synthetic profile with fair sharing on (both strategies), nothing else changed.
fn flat_fair_profile_text() -> String {
    let text = raykueue::api::synthetic::teams_profile(QUEUES).replace(
        "  kueue: {version: 0.19.2, frameworks: [batch/job, pod, ray.io/rayjob]}\n",
        "  kueue:\n    version: 0.19.2\n    frameworks: [batch/job, pod, ray.io/rayjob]\n    configuration:\n      fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}\n",
    );
    assert!(text.contains("fairSharing:"));
    text
}

/// The synthetic profile with fair sharing on and its queues in a two-level Cohort tree.
fn fair_profile_text() -> String {
    let mut text = flat_fair_profile_text();
    let mut cohorts = String::from("  cohorts:\n    - name: org\n");
    for g in 0..10 {
        let _ = writeln!(cohorts, "    - {{name: group-{g}, parentName: org}}");
    }
    text = text.replace("  mode: team\n", &format!("  mode: team\n{cohorts}"));
    for t in 0..QUEUES {
        text = text.replace(
            &format!("    - name: team-{t}-cq\n      cohortName: shared\n"),
            &format!(
                "    - name: team-{t}-cq\n      cohortName: group-{}\n      fairSharingWeight: \"{}\"\n",
                t % 10,
                1 + t % 3
            ),
        );
    }
    assert!(text.contains("fairSharing:") && !text.contains("cohortName: shared"));
    text
}

fn profile() -> raykueue::api::profile::Profile {
    typed(&raykueue::api::synthetic::teams_profile(QUEUES))
}

fn typed(text: &str) -> raykueue::api::profile::Profile {
    let source = raykueue::api::input::load::decode("synthetic.yaml", text.as_bytes()).unwrap();
    let (typed, _) =
        raykueue::api::compile::check_profile(&raykueue::api::input::resolve::Resolved {
            source,
            base_dir: None,
        });
    typed.unwrap().1
}

fn scenario(
    profile: &raykueue::api::profile::Profile,
    workloads: usize,
) -> raykueue::api::simulate::scenario::Scenario {
    let text = scenario_text(workloads);
    let source = raykueue::api::input::load::decode("scenario.yaml", text.as_bytes()).unwrap();
    let (loaded, scn) = scenario::parse(&source).unwrap();
    let problems = scenario::against_profile(profile, &loaded, &scn);
    assert!(problems.is_empty(), "{problems:?}");
    scn
}

/// Build the world and run it: what `raykueue simulate` does after reading its inputs.
fn simulate(
    profile: &raykueue::api::profile::Profile,
    scn: &raykueue::api::simulate::scenario::Scenario,
) -> usize {
    let world = world::build(profile, scn);
    simulate::run(&world, None).events.len()
}

fn bench(c: &mut Criterion) {
    if let Some(dir) = std::env::var_os("RAYKUEUE_SIMULATE_BENCH_DUMP") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("profile.yaml"),
            raykueue::api::synthetic::teams_profile(QUEUES),
        )
        .unwrap();
        std::fs::write(dir.join("profile-fair-sharing.yaml"), fair_profile_text()).unwrap();
        std::fs::write(
            dir.join("profile-fair-sharing-flat.yaml"),
            flat_fair_profile_text(),
        )
        .unwrap();
        for n in SIZES {
            std::fs::write(dir.join(format!("scenario-{n}.yaml")), scenario_text(n)).unwrap();
        }
        eprintln!("wrote the profile and scenarios to {}", dir.display());
        return;
    }
    let p = profile();
    let flat = typed(&flat_fair_profile_text());
    let fair = typed(&fair_profile_text());
    assert!(flat.fair_sharing().is_some() && fair.fair_sharing().is_some());
    for (label, p) in [
        ("", &p),
        (" with fair sharing in one cohort", &flat),
        (" with fair sharing in a two-level tree", &fair),
    ] {
        for n in [100, 1_000] {
            let scn = scenario(p, n);
            c.bench_function(
                &format!("simulate {n} workloads on {QUEUES} queues{label}"),
                |b| {
                    b.iter(|| simulate(black_box(p), black_box(&scn)));
                },
            );
        }
    }
    println!("\n| workloads | fair sharing | events | median |\n|---:|---|---:|---:|");
    let full = std::env::var_os("RAYKUEUE_SIMULATE_BENCH_10K").is_some();
    for (label, p) in [
        ("off", &p),
        ("on, one cohort", &flat),
        ("on, two-level tree", &fair),
    ] {
        for n in SIZES.into_iter().filter(|&n| full || n < 10_000) {
            let scn = scenario(p, n);
            let runs = if n >= 10_000 { 1 } else { 3 };
            let mut times: Vec<Duration> = Vec::new();
            let mut events = 0;
            for _ in 0..runs {
                let t = Instant::now();
                events = simulate(p, &scn);
                times.push(t.elapsed());
            }
            times.sort();
            println!(
                "| {n} | {label} | {events} | {:.1} ms |",
                times[runs / 2].as_secs_f64() * 1000.0
            );
        }
    }
}

criterion_group! {
    name = benches;
    // Two shared cores: short, steady runs rather than long ones.
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10);
    targets = bench
}
criterion_main!(benches);
