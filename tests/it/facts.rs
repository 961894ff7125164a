//! One definition of each domain fact (issue: "GPU pools are detected three ways", "a pool
//! without count or autoscale is read as 0, 3, none and – in four places"): each test changes
//! one input and checks that the rules, the scripts and the summary read it the same way.

use crate::common::{compile_text, shipped_text};

fn codes(c: &raykueue::api::compile::Compiled) -> Vec<&str> {
    c.warnings.iter().map(|d| d.code.id).collect()
}

/// A GPU size written in lower case is still a GPU pool: the capacity rule measures it and
/// `verify.sh` checks its GPUs (it once compared case-sensitively and skipped them).
#[test]
fn a_gpu_size_in_lower_case_is_a_gpu_pool_for_rules_scripts_and_summary() {
    let text = shipped_text("kuberay-gpu").replace(
        "vmSize: Standard_NC8as_T4_v3",
        "vmSize: Standard_nc8as_t4_v3",
    );
    assert!(text.contains("Standard_nc8as_t4_v3"));
    let c = compile_text(text.as_bytes()).expect("compiles");
    assert!(codes(&c).contains(&"RK204"), "{:?}", codes(&c));
    let verify = &c.bundle.files["infra/verify.sh"];
    assert!(verify.contains("check_gpu_pool \"$GPU_POOL1\""), "{verify}");
    assert!(verify.contains("readonly GPU_POOL1_GPUS='1'"), "{verify}");
    let summary = &c.bundle.files["SUMMARY.md"];
    assert!(summary.contains("1 × T4"), "{summary}");
}

/// A pool with neither `count` nor `autoscale` (error RK404) has az's default of 3 nodes in
/// every rule: the capacity rule counts 3 nodes (it used to skip the pool, while the
/// scripts assumed 3, the profile type 0 and the summary `–`). The scripts and the summary read
/// the same `NodePool::size`, tested below.
#[test]
fn a_pool_without_count_or_autoscale_has_azs_three_nodes_in_the_rules() {
    let text = shipped_text("kuberay-gpu").replace("      autoscale: {min: 0, max: 3}\n", "");
    let source = raykueue::api::input::load::decode("profile.yaml", text.as_bytes()).unwrap();
    let (_, diags) =
        raykueue::api::compile::check_profile(&raykueue::api::input::resolve::Resolved {
            source,
            base_dir: None,
        });
    assert!(diags.iter().any(|d| d.code == "RK404"), "{diags:?}");
    let rk204 = diags
        .iter()
        .find(|d| d.code == "RK204")
        .expect("the capacity rule measures the pool");
    assert!(
        rk204
            .message
            .contains("at most 3 nodes (count unset: az's default)"),
        "{}",
        rk204.message
    );
}

#[test]
fn pool_size_is_read_one_way() {
    use raykueue::api::profile::{AZ_DEFAULT_NODE_COUNT, Profile};
    let profile = |pool: &str| -> Profile {
        let text = shipped_text("kuberay-gpu").replace("      autoscale: {min: 0, max: 3}\n", pool);
        serde_saphyr::from_str(&text).unwrap()
    };
    let size = |pool: &str| profile(pool).azure.unwrap().node_pools[1].size();
    let unset = size("");
    assert_eq!(
        (unset.initial, unset.min, unset.max, unset.given),
        (AZ_DEFAULT_NODE_COUNT, 3, 3, false)
    );
    let fixed = size("      count: 2\n");
    assert_eq!((fixed.initial, fixed.min, fixed.max), (2, 2, 2));
    // az's default 3 lies in 0–3: the pool starts there (seed 004's command line).
    let seed = size("      autoscale: {min: 0, max: 3}\n");
    assert_eq!((seed.initial, seed.min, seed.max), (3, 0, 3));
    // 3 lies outside 1–2: the pool starts at min.
    let small = size("      autoscale: {min: 1, max: 2}\n");
    assert_eq!((small.initial, small.min, small.max), (1, 1, 2));
    assert_eq!(profile("").azure.unwrap().node_pools[1].max_nodes(), 3);
}

/// The operators run on the System pool (`operators::placement`); where that pool backs a
/// flavor (no `CriticalAddonsOnly` taint), their requests are not left for the queues, and the
/// capacity rule counts them there.
#[test]
fn the_capacity_rule_counts_the_operators_on_the_system_pool() {
    let text = shipped_text("single")
        .replace("criticalAddonsOnly: true", "criticalAddonsOnly: false")
        .replace("nominalQuota: \"96\"", "nominalQuota: \"1000\"");
    let source = raykueue::api::input::load::decode("profile.yaml", text.as_bytes()).unwrap();
    let (_, diags) =
        raykueue::api::compile::check_profile(&raykueue::api::input::resolve::Resolved {
            source,
            base_dir: None,
        });
    let cpu = diags
        .iter()
        .find(|d| d.code == "RK202" && d.message.contains("`cpu`"))
        .unwrap_or_else(|| panic!("{diags:?}"));
    // Kueue's chart requests 500m, KubeRay's 100m (limits only: requests default to them).
    assert!(
        cpu.message.contains("− 600m for the operators on the System pool (kueue-controller-manager, kuberay-operator)"),
        "{}",
        cpu.message
    );
}

/// `single` has a LocalQueue `default` in `ray`, so Kueue's RayJob webhook labels a RayJob
/// without `queue` with it (kueue@v0.19.2 pkg/controller/jobframework/defaults.go
/// `setDefaultLocalQueue`). raykueue writes that label itself, suspends the job, treats its
/// elastic flag as Kueue's (annotation) and no longer warns that Kueue leaves it alone.
#[test]
fn a_workload_without_queue_is_queued_on_the_default_local_queue() {
    let job = r#"
workloads:
  - kind: RayJob
    name: elastic-train
    elastic: true
    entrypoint: python -c "import ray; ray.init()"
    head:
      resources: {cpu: "2", memory: 8Gi}
    workers:
      - name: workers
        replicas: 1
        minReplicas: 1
        maxReplicas: 2
        resources: {cpu: "2", memory: 8Gi}
"#;
    // `single` without its own `gpu-check` workload, so the job below is its only one.
    let single = shipped_text("single");
    let single = &single[..single
        .find("\nworkloads:\n")
        .map_or(single.len(), |i| i + 1)];
    let text = format!("{single}{job}");
    let c = compile_text(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}"));
    assert!(!codes(&c).contains(&"RK121"), "{:?}", codes(&c));
    let job = c
        .bundle
        .objects
        .iter()
        .find(|r| r.object.kind == "RayJob")
        .expect("the RayJob");
    let v = &job.object.value;
    assert_eq!(
        v["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "default"
    );
    assert_eq!(
        v["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"],
        "true"
    );
    assert_eq!(v["spec"]["suspend"], true);

    // With the elastic-jobs gate off, Kueue's webhook would reject it: RK126 now says so.
    let gated = text.replace(
        "frameworks: [batch/job, pod, ray.io/rayjob]",
        "frameworks: [batch/job, pod, ray.io/rayjob]\n    featureGates: {ElasticJobsViaWorkloadSlices: false}",
    );
    assert_ne!(gated, text);
    let errors = compile_text(gated.as_bytes()).expect_err("refused");
    assert!(errors.iter().any(|d| d.code == "RK126"), "{errors:?}");
}

/// With `ray.io/raycluster` on, a RayService's RayCluster is the job Kueue manages (RK145), so
/// its pods are not admitted one by one (no RK139): the pod webhook skips pods whose ancestor
/// Kueue manages (kueue@v0.19.2 pkg/controller/jobs/pod/pod_webhook.go `Default`,
/// `FindAncestorJobManagedByKueue`).
#[test]
fn a_rayservice_whose_raycluster_is_queued_is_not_admitted_pod_by_pod() {
    let base = std::fs::read_to_string(
        crate::common::repo()
            .join("tests/fixtures/bad/rk139-pods-admitted-one-by-one/profile.yaml"),
    )
    .unwrap();
    let check = |text: &str| {
        let source = raykueue::api::input::load::decode("profile.yaml", text.as_bytes()).unwrap();
        let (_, diags) =
            raykueue::api::compile::check_profile(&raykueue::api::input::resolve::Resolved {
                source,
                base_dir: None,
            });
        diags.iter().map(|d| d.code.id).collect::<Vec<_>>()
    };
    assert!(check(&base).contains(&"RK139"));
    let with_raycluster = base.replace(
        "frameworks: [batch/job, pod, ray.io/rayjob]",
        "frameworks: [batch/job, pod, ray.io/raycluster, ray.io/rayjob]",
    );
    assert_ne!(with_raycluster, base);
    let codes = check(&with_raycluster);
    assert!(!codes.contains(&"RK139"), "{codes:?}");
    assert!(codes.contains(&"RK145"), "{codes:?}");
}
