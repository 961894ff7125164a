//! Scale benchmark (`cargo bench --bench scale`): time and peak memory of the whole pipeline
//! (load → schema → rules → render → output) on synthetic profiles of N teams, the whole
//! `gen --profile team` process, and the same trees built by `kubectl kustomize` and rendered
//! with `envsubst` (the upstream example's method), and `raykueue check` of 1,000 teams. Prints
//! a Markdown table for `docs/performance.md`. `--write-profile N FILE` writes the synthetic profile.
//! A plain bench binary: medians of repeated runs, no statistics crate needed for these sizes.

// The binary's allocator (see `Cargo.toml`): the bench measures what `raykueue` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn time_runs(runs: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm-up
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn compile(text: &str) -> raykueue::api::compile::Compiled {
    let source =
        raykueue::api::input::load::decode("synthetic.yaml", text.as_bytes()).expect("UTF-8");
    raykueue::api::compile::compile(
        &raykueue::api::input::resolve::Resolved {
            source,
            base_dir: None,
        },
        false,
    )
    .unwrap_or_else(|d| panic!("{}", raykueue::api::base::diagnostic::render_human(&d)))
}

/// Peak resident memory of this process, from the kernel (Linux).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn run_ok(cmd: &mut Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

/// The upstream method: one template per workload, `envsubst` with the team's values.
fn envsubst_tree(dir: &Path, teams: usize) -> Option<Duration> {
    if !run_ok(Command::new("sh").args(["-c", "command -v envsubst"])) {
        return None;
    }
    let tmpl = dir.join("rayjob.yaml.tmpl");
    std::fs::write(
        &tmpl,
        "apiVersion: ray.io/v1\nkind: RayJob\nmetadata:\n  name: ${JOB_NAME}\n  namespace: ray\n  labels:\n    kueue.x-k8s.io/queue-name: ${QUEUE_NAME}\nspec:\n  suspend: true\n  shutdownAfterJobFinishes: true\n  entrypoint: python train.py\n",
    )
    .ok()?;
    let script = format!(
        "for i in $(seq 0 {}); do JOB_NAME=job-$i QUEUE_NAME=team-$i envsubst < {} > {}/out-$i.yaml; done",
        teams - 1,
        tmpl.display(),
        dir.display()
    );
    Some(time_runs(3, || {
        assert!(run_ok(Command::new("sh").args(["-c", &script])));
    }))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Child mode: one compile, then report this process's peak memory.
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let n: usize = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(2);
        let c = compile(&raykueue::api::synthetic::teams_profile(n));
        std::hint::black_box(&c);
        println!("{}", peak_rss_mb().unwrap_or(f64::NAN));
        return;
    }
    // `--write-profile N FILE`: the synthetic profile of N teams, for profiling by hand.
    if let Some(i) = args.iter().position(|a| a == "--write-profile") {
        let n: usize = args.get(i + 1).and_then(|s| s.parse().ok()).unwrap_or(1000);
        let file = args.get(i + 2).map_or("teams.yaml", String::as_str);
        std::fs::write(file, raykueue::api::synthetic::teams_profile(n)).expect("write profile");
        return;
    }
    if args.iter().any(|a| a == "--list") {
        return; // `cargo bench -- --list` support for harness-less benches
    }
    let bin = env!("CARGO_BIN_EXE_raykueue");
    let me = std::env::current_exe().expect("bench binary path");
    let tmp = tempfile::tempdir().expect("temp dir");
    let kubectl = run_ok(Command::new("kubectl").args(["version", "--client"]));

    team_baseline(bin, tmp.path(), kubectl);
    println!();

    println!(
        "| teams | in-process pipeline | whole `gen --out` | peak memory | `kubectl kustomize` of the tree | `envsubst` per file |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    let mut points = Vec::new();
    let mut ratios = String::new();
    let mut checks = String::new();
    for n in [2usize, 100, 1000] {
        let text = raykueue::api::synthetic::teams_profile(n);
        let runs = if n >= 1000 { 7 } else { 21 };
        let inproc = time_runs(runs, || {
            std::hint::black_box(compile(&text));
        });
        points.push((n, ms(inproc)));
        let profile = tmp.path().join(format!("teams-{n}.yaml"));
        std::fs::write(&profile, &text).expect("write profile");
        let out = tmp.path().join(format!("out-{n}"));
        let whole = time_runs(runs, || {
            assert!(run_ok(Command::new(bin).args([
                "gen",
                "--profile",
                profile.to_str().unwrap_or_default(),
                "--out",
                out.to_str().unwrap_or_default(),
            ])));
        });
        let peak = Command::new(&me)
            .args(["--child", &n.to_string()])
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse::<f64>().ok());
        let kustomize = kubectl.then(|| {
            time_runs(runs.min(7), || {
                assert!(run_ok(Command::new("kubectl").args([
                    "kustomize",
                    out.join("platform").to_str().unwrap_or_default()
                ])));
            })
        });
        if n >= 1000 {
            checks = whole_process_checks(bin, n, &profile, runs, kustomize);
        }
        let env_dir = tmp.path().join(format!("envsubst-{n}"));
        std::fs::create_dir_all(&env_dir).expect("dir");
        let envsubst = envsubst_tree(&env_dir, n);
        let fmt = |d: Option<Duration>| {
            d.map_or_else(|| "n/a".to_owned(), |d| format!("{:.1} ms", ms(d)))
        };
        if n >= 1000 {
            let ratio = |d: Option<Duration>| {
                d.map_or_else(
                    || "n/a".to_owned(),
                    |d| format!("{:.3}×", ms(inproc) / ms(d)),
                )
            };
            ratios = format!(
                "{n} teams, in-process pipeline against `kubectl kustomize` of the same tree: {}; against `envsubst` per file: {}",
                ratio(kustomize),
                ratio(envsubst)
            );
        }
        println!(
            "| {n} | {:.2} ms | {:.1} ms | {} | {} | {} |",
            ms(inproc),
            ms(whole),
            peak.map_or_else(|| "n/a".to_owned(), |p| format!("{p:.1} MB")),
            fmt(kustomize),
            fmt(envsubst),
        );
    }
    let (n1, t1) = points[1];
    let (n2, t2) = points[2];
    println!(
        "\nslope between {n1} and {n2} teams: {:.3} ms per team (in-process)",
        (t2 - t1) / (n2 - n1) as f64
    );
    println!("{ratios}");
    println!("{checks}");
}

/// `gen --profile team` as a whole process, against its baselines.
fn team_baseline(bin: &str, tmp: &Path, kubectl: bool) {
    let team = time_runs(50, || {
        assert!(run_ok(Command::new(bin).args(["gen", "--profile", "team"])));
    });
    println!(
        "gen --profile team (whole process): median {:.2} ms over 50 runs",
        ms(team)
    );
    // The same run's baselines: `envsubst` on one template, `kubectl kustomize` of team's
    // platform folder (the targets: ≤ 3× and ≤ 0.1×).
    let one = tmp.join("envsubst-1");
    std::fs::create_dir_all(&one).expect("dir");
    if let Some(env1) = envsubst_tree(&one, 1) {
        println!(
            "  envsubst on one template: {:.2} ms → ratio {:.1}×",
            ms(env1),
            ms(team) / ms(env1)
        );
    }
    let team_out = tmp.join("team-out");
    assert!(run_ok(Command::new(bin).args([
        "gen",
        "--profile",
        "team",
        "--out",
        team_out.to_str().unwrap_or_default()
    ])));
    if kubectl {
        let k = time_runs(21, || {
            assert!(run_ok(Command::new("kubectl").args([
                "kustomize",
                team_out.join("platform").to_str().unwrap_or_default()
            ])));
        });
        println!(
            "  kubectl kustomize of its platform folder: {:.2} ms → ratio {:.2}×",
            ms(k),
            ms(team) / ms(k)
        );
    }
}

/// The issue's `check` and `gen --only workloads` targets for the profile of `n` teams, against
/// `kubectl kustomize` of its tree.
fn whole_process_checks(
    bin: &str,
    n: usize,
    profile: &Path,
    runs: usize,
    kustomize: Option<Duration>,
) -> String {
    // The issue's `check` target: the whole process, diagnostics only.
    let check = time_runs(runs, || {
        let out = Command::new(bin)
            .args(["check", "--profile", profile.to_str().unwrap_or_default()])
            .output()
            .expect("raykueue check");
        assert!(out.status.success());
    });
    // The issue's `gen --only workloads` target: the whole process, stream to stdout.
    let only = time_runs(runs, || {
        let out = Command::new(bin)
            .args([
                "gen",
                "--profile",
                profile.to_str().unwrap_or_default(),
                "--only",
                "workloads",
            ])
            .output()
            .expect("raykueue gen --only workloads");
        assert!(out.status.success());
    });
    let against = |d: Duration| {
        kustomize.map_or_else(|| "n/a".to_owned(), |k| format!("{:.3}×", ms(d) / ms(k)))
    };
    format!(
        "`raykueue check` of {n} teams (whole process): {:.1} ms, {} of `kubectl kustomize`\n`raykueue gen --only workloads` of {n} teams (whole process): {:.1} ms, {} of `kubectl kustomize`",
        ms(check),
        against(check),
        ms(only),
        against(only),
    )
}
