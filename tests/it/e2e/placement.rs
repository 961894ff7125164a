//! Pods land where the flavor says: with KubeRay, kube-scheduler and kwok, the RayJobs of a
//! profile with a tainted GPU pool get every pod bound — the GPU workers to that pool's nodes,
//! tolerated only through the API server's ExtendedResourceToleration (as on AKS, GKE and EKS),
//! and everything else off them.

use super::harness::{self, Compiled};
use super::{one_at_a_time, toolchain, up};
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// How long Kueue, KubeRay and the scheduler get to place a RayJob's pods.
const PLACEMENT_TIMEOUT: Duration = Duration::from_secs(90);

/// What to run: a profile and one RayJob of its bundle (relative to the bundle).
const CASES: [(&str, &str); 2] = [
    // GKE taints its GPU pools itself; the job goes through Kueue's `gpu` flavor.
    (
        "profiles/examples/team-gke.yaml",
        "workloads/llm-training/rayjob.yaml",
    ),
    // The profile's own taint on `gpupool`; no Kueue: the smoke test's RayJob.
    ("kuberay-gpu", "infra/smoke/rayjob.yaml"),
];

/// Whether a pod asks for a GPU in any container.
fn wants_gpu(pod: &Value) -> bool {
    pod["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| !c["resources"]["requests"]["nvidia.com/gpu"].is_null())
}

/// The names of the nodes of tainted pools that advertise GPUs.
fn tainted_gpu_nodes(compiled: &Compiled) -> BTreeSet<String> {
    harness::nodes::nodes(&compiled.profile)
        .iter()
        .filter(|n| {
            !n["status"]["allocatable"]["nvidia.com/gpu"].is_null()
                && n["spec"]["taints"]
                    .as_array()
                    .is_some_and(|t| !t.is_empty())
        })
        .filter_map(|n| n["metadata"]["name"].as_str().map(str::to_string))
        .collect()
}

/// Where a RayJob's pods are, once the cluster has placed them all: (pod, node, wants GPU).
fn placed(
    cluster: &harness::cluster::Cluster,
    namespace: &str,
) -> Result<Vec<(String, String, bool)>, String> {
    let deadline = Instant::now() + PLACEMENT_TIMEOUT;
    loop {
        let pods = cluster
            .kubectl()
            .items(&["pods", "-n", namespace, "-l", "ray.io/cluster"])?;
        let running = |p: &Value| p["status"]["phase"] == "Running";
        if !pods.is_empty() && pods.iter().all(running) {
            return Ok(pods
                .iter()
                .map(|p| {
                    (
                        p["metadata"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        p["spec"]["nodeName"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        wants_gpu(p),
                    )
                })
                .collect());
        }
        if Instant::now() > deadline {
            let table = cluster.kubectl().run(
                &[
                    "get",
                    "pods,rayjobs,workloads",
                    "-n",
                    namespace,
                    "-o",
                    "wide",
                ],
                None,
            );
            let events = cluster
                .kubectl()
                .run(&["get", "events", "-n", namespace], None);
            return Err(format!(
                "the RayJob's pods were not all running within {} s:\n{}\n{}",
                PLACEMENT_TIMEOUT.as_secs(),
                table.stdout,
                events.stdout
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// One case: the platform and the RayJob applied; its pods' placement, or what went wrong.
fn run_case(profile: &str, rayjob: &str) -> Result<String, String> {
    let compiled = Compiled::profile(profile)?;
    let gpu_nodes = tainted_gpu_nodes(&compiled);
    assert!(!gpu_nodes.is_empty(), "{profile} has a tainted GPU pool");
    let (_dir, cluster) = up(&compiled, true)?;
    harness::apply_platform(&cluster)?;
    let path = cluster.dir.join("bundle").join(rayjob);
    let dir = path.parent().unwrap();
    // The RayJob with what it mounts (its ConfigMap), as a user applies a workload folder.
    let target = if dir.join("kustomization.yaml").is_file() {
        vec!["-k".to_string(), dir.display().to_string()]
    } else {
        vec!["-f".to_string(), dir.display().to_string()]
    };
    let mut args = vec!["apply", "--server-side", "--field-manager=raykueue-e2e"];
    args.extend(target.iter().map(String::as_str));
    let a = cluster.kubectl().run(&args, None);
    if !a.ok {
        return Err(format!("applying {rayjob}: {}", a.stderr));
    }
    let job: Value =
        serde_saphyr::from_str(&std::fs::read_to_string(&path).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("default");
    let pods = placed(&cluster, namespace)?;
    let mut wrong = Vec::new();
    for (pod, node, gpu) in &pods {
        if *gpu != gpu_nodes.contains(node) {
            wrong.push(format!(
                "{pod} (GPU: {gpu}) on {node}, GPU nodes of tainted pools: {gpu_nodes:?}"
            ));
        }
    }
    if !pods.iter().any(|(_, _, gpu)| *gpu) {
        wrong.push(format!("no pod of {rayjob} asks for a GPU: {pods:?}"));
    }
    if !wrong.is_empty() {
        return Err(wrong.join("\n"));
    }
    let name = job["metadata"]["name"].as_str().unwrap_or_default();
    let state = cluster.kubectl().run(
        &[
            "get",
            "rayjob",
            name,
            "-n",
            namespace,
            "-o",
            "jsonpath={.status.jobDeploymentStatus}",
        ],
        None,
    );
    Ok(format!(
        "{profile}: {} pods placed, RayJob {name} {}",
        pods.len(),
        state.stdout.trim()
    ))
}

#[test]
fn ray_pods_land_on_the_tainted_gpu_pool_their_flavor_names() {
    if !toolchain("ray_pods_land_on_the_tainted_gpu_pool_their_flavor_names") {
        return;
    }
    let _one = one_at_a_time();
    let mut problems = Vec::new();
    for (profile, rayjob) in CASES {
        match run_case(profile, rayjob) {
            Ok(line) => {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "e2e placement {line}");
            }
            Err(e) => problems.push(format!("{profile}: {e}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
