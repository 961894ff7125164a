//! `cargo bench --bench live`: `explain` and the `simulate --state` forecast of a snapshot of
//! 10,000 Workloads over 100 ClusterQueues (issue 29's scale: under 1 s each), whole process,
//! release build. The profile is `synthetic::teams_profile(100)`; the snapshot is a `v1` List
//! as `kubectl get … -o yaml` prints it: the first Workload of each team admitted (holding its
//! team's GPU), the other 9,900 pending. Prints the median of 5 runs and its ratio to the
//! target; `RAYKUEUE_LIVE_BENCH_DUMP=DIR` keeps the files for profiling by hand.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TEAMS: usize = 100;
const WORKLOADS: usize = 10_000;

/// One Workload as Kueue v0.19.2 writes it (kueue@v0.19.2 pkg/util/testing/v1beta2/wrappers.go
/// MakeWorkload / ReserveQuotaAt / AdmittedAt): a head and one GPU worker, as the synthetic
/// profile's RayJobs ask.
fn workload(out: &mut String, i: usize) {
    let team = i % TEAMS;
    let minute = i / 60;
    let second = i % 60;
    let created = format!(
        "2026-01-05T{:02}:{:02}:{second:02}Z",
        9 + minute / 60,
        minute % 60
    );
    let _ = write!(
        out,
        "- apiVersion: kueue.x-k8s.io/v1beta2
  kind: Workload
  metadata:
    name: job-{i}
    namespace: ray
    creationTimestamp: '{created}'
    uid: 00000000-0000-4000-8000-{i:012}
  spec:
    queueName: team-{team}
    podSets:
    - name: head
      count: 1
      template:
        spec:
          containers:
          - name: ray-head
            image: rayproject/ray:2.55.1
            resources:
              requests: {{cpu: '1', memory: 4Gi}}
    - name: workers
      count: 1
      template:
        spec:
          containers:
          - name: ray-worker
            image: rayproject/ray:2.55.1
            resources:
              requests: {{cpu: '4', memory: 32Gi, nvidia.com/gpu: '1'}}
"
    );
    if i < TEAMS {
        let _ = write!(
            out,
            "  status:
    admission:
      clusterQueue: team-{team}-cq
      podSetAssignments:
      - name: head
        count: 1
        flavors: {{cpu: default, memory: default}}
        resourceUsage: {{cpu: '1', memory: 4Gi}}
      - name: workers
        count: 1
        flavors: {{cpu: default, memory: default, nvidia.com/gpu: gpu}}
        resourceUsage: {{cpu: '4', memory: 32Gi, nvidia.com/gpu: '1'}}
    conditions:
    - {{type: QuotaReserved, status: 'True', lastTransitionTime: '{created}', reason: QuotaReserved, message: Quota reserved}}
    - {{type: Admitted, status: 'True', lastTransitionTime: '{created}', reason: Admitted, message: The workload is admitted}}
"
        );
    }
}

/// The median time of 5 runs, each exiting with `code`.
fn median(bin: &str, args: &[&str], code: i32) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let status = Command::new(bin)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("raykueue runs");
            let elapsed = t.elapsed();
            assert_eq!(status.code(), Some(code), "raykueue {args:?}");
            elapsed
        })
        .collect();
    times.sort();
    times[2]
}

fn main() {
    let dir = std::env::var_os("RAYKUEUE_LIVE_BENCH_DUMP").map_or_else(
        || std::env::temp_dir().join(format!("raykueue-live-{}", std::process::id())),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(&dir).expect("bench folder");
    let profile = dir.join("profile.yaml");
    let state = dir.join("state.yaml");
    std::fs::write(&profile, raykueue::api::synthetic::teams_profile(TEAMS)).expect("profile");
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..WORKLOADS {
        workload(&mut text, i);
    }
    std::fs::write(&state, &text).expect("snapshot");
    let (p, s) = (
        profile.to_str().expect("a UTF-8 temporary path"),
        state.to_str().expect("a UTF-8 temporary path"),
    );
    let bin = env!("CARGO_BIN_EXE_raykueue");
    println!(
        "live: {WORKLOADS} Workloads over {TEAMS} ClusterQueues, {:.1} MB of YAML (median of 5, whole process)",
        text.len() as f64 / 1e6
    );
    // The snapshot holds Workloads only: every queue object of the profile is drift (missing
    // from the cluster), so `check --state` exits 1 having compared them all.
    for (what, args, code) in [
        (
            "explain --output json",
            vec!["explain", "--profile", p, "--state", s, "--output", "json"],
            0,
        ),
        (
            "simulate --state (forecast)",
            vec!["simulate", "--profile", p, "--state", s],
            0,
        ),
        (
            "check --state (drift)",
            vec!["check", "--profile", p, "--state", s],
            1,
        ),
    ] {
        let t = median(bin, &args, code);
        println!(
            "  {what:<28} {:>9.1} ms   {:.2}× the 1 s target",
            t.as_secs_f64() * 1e3,
            t.as_secs_f64()
        );
    }
    if std::env::var_os("RAYKUEUE_LIVE_BENCH_DUMP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}
