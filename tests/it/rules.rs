//! Domain rules end to end: the seed-004 capacity finding (a warning: `gen` still succeeds), the
//! shipped profiles' documented warnings, the cohort borrowing model, the taint toleration
//! model, and the rule inventory in docs/rules.md.

use crate::common::{raykueue, repo, stderr, stdout};

/// `(severity, code, message)` of every diagnostic of `check --error-format json`.
fn diagnostics(args: &[&str]) -> (Option<i32>, Vec<(String, String, String)>) {
    let mut all = vec!["check", "--error-format", "json"];
    all.extend_from_slice(args);
    let out = raykueue(&all);
    let found = stderr(&out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("one JSON object per line");
            (
                v["severity"].as_str().unwrap().to_string(),
                v["code"].as_str().unwrap().to_string(),
                v["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (out.status.code(), found)
}

/// Check a profile given as text (written to a temporary file).
fn check_text(text: &str) -> Vec<(String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.yaml");
    std::fs::write(&path, text).unwrap();
    diagnostics(&["--profile", path.to_str().unwrap()]).1
}

fn codes(d: &[(String, String, String)]) -> Vec<&str> {
    d.iter().map(|(_, c, _)| c.as_str()).collect()
}

#[test]
fn seed_004_pool_too_small_for_max_replicas_warns_and_gen_still_succeeds() {
    let out = raykueue(&["gen", "--profile", "kuberay-gpu"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!stdout(&out).is_empty(), "the stream is still printed");
    assert!(err.contains("warning[RK204]"), "{err}");
    assert!(
        err.contains("profiles/kuberay-gpu.yaml:") && err.contains("|         maxReplicas: 5"),
        "points at maxReplicas: {err}"
    );
    assert!(err.contains("may scale to 5 pods"), "{err}");
    assert!(err.contains("`gpupool` (Standard_NC8as_T4_v3"), "{err}");
    assert!(err.contains("at most 3 nodes"), "{err}");
    assert!(
        err.contains("raise autoscale.max of node pool `gpupool` to 5"),
        "{err}"
    );
    // The seed's taint is tolerated through ExtendedResourceToleration: no RK143.
    assert!(!err.contains("RK143"), "{err}");

    let denied = raykueue(&["gen", "--profile", "kuberay-gpu", "--deny-warnings"]);
    assert_eq!(denied.status.code(), Some(1));
    assert!(denied.stdout.is_empty());
}

#[test]
fn shipped_profiles_warn_only_as_documented() {
    // single/team: the seed's 96-CPU quota of flavor `default` against one ND96amsr node,
    // whose allocatable CPU is below 96 (AKS reserves about 1 core). kuberay-gpu: seed 004's
    // pool (at most 3 nodes for 5 workers). The team profile's own workloads raise nothing:
    // its RayService is queued (no RK121) and llm-training fits team B's nominal quota, so it
    // can reclaim (no RK146); fixtures keep both warnings firing
    // (`workload-without-queue`, `rk146-fits-only-by-borrowing`).
    for (profile, expected) in [
        ("single", &["RK202"][..]),
        ("team", &["RK202"][..]),
        ("kuberay-gpu", &["RK204"][..]),
    ] {
        let (exit, found) = diagnostics(&["--profile", profile]);
        assert_eq!(exit, Some(0), "{profile}: {found:?}");
        assert_eq!(codes(&found), expected, "{profile}: {found:?}");
        assert!(found.iter().all(|(s, _, _)| s == "warning"), "{found:?}");
    }
}

/// Two team queues in one cohort, 4 GPUs nominal each, and one RayJob with `gpus` one-GPU
/// workers on team A's queue.
fn cohort_profile(gpus: u32, borrowing_limit: Option<u32>, lending_limit_b: Option<u32>) -> String {
    let borrow = borrowing_limit.map_or_else(String::new, |b| format!(", borrowingLimit: \"{b}\""));
    let lend = lending_limit_b.map_or_else(String::new, |l| format!(", lendingLimit: \"{l}\""));
    let cq = |name: &str, extra: &str| {
        format!(
            r#"    - name: {name}
      cohortName: shared
      resourceGroups:
        - coveredResources: [cpu, memory]
          flavors:
            - name: default
              resources:
                - {{name: cpu, nominalQuota: "64"}}
                - {{name: memory, nominalQuota: 512Gi}}
        - coveredResources: [nvidia.com/gpu]
          flavors:
            - name: gpu
              resources:
                - {{name: nvidia.com/gpu, nominalQuota: "4"{extra}}}
"#
        )
    };
    format!(
        r#"apiVersion: raykueue.io/v1alpha1
kind: Profile
name: cohort
namespace: ray
flavors:
  - name: default
  - {{name: gpu, nodeLabels: {{accelerator: nvidia}}}}
queues:
  mode: team
  clusterQueues:
{}{}  localQueues:
    - {{name: team-a, clusterQueue: team-a-cq}}
    - {{name: team-b, clusterQueue: team-b-cq}}
ray:
  image: rayproject/ray:2.57.0-gpu
workloads:
  - kind: RayJob
    name: train
    queue: team-a
    entrypoint: python train.py
    head:
      resources: {{cpu: "1", memory: 4Gi}}
    workers:
      - name: gpu-workers
        replicas: {gpus}
        resources: {{cpu: "1", memory: 4Gi, nvidia.com/gpu: "1"}}
"#,
        cq("team-a-cq", &borrow),
        cq("team-b-cq", &lend)
    )
}

#[test]
fn a_team_borrows_up_to_its_limit_and_what_the_cohort_lends() {
    let over = |gpus, borrow, lend| {
        let found = check_text(&cohort_profile(gpus, borrow, lend));
        found.iter().any(|(_, c, _)| c == "RK140")
    };
    // The seed's scenario: team A alone may use all 8 GPUs (4 own + 4 borrowed), not 9.
    assert!(!over(8, Some(4), None));
    assert!(over(9, Some(4), None));
    // A smaller borrowing limit caps it.
    assert!(!over(6, Some(2), None));
    assert!(over(7, Some(2), None));
    // No borrowing limit: unlimited, but only what the other queue lends.
    assert!(!over(8, None, None));
    assert!(over(9, None, None));
    assert!(!over(5, None, Some(1)));
    assert!(over(6, None, Some(1)));
    let found = check_text(&cohort_profile(9, Some(4), None));
    let msg = &found.iter().find(|(_, c, _)| c == "RK140").unwrap().2;
    assert!(
        msg.contains("nominalQuota 4 + borrowing 4: borrowingLimit 4"),
        "{msg}"
    );
}

#[test]
fn a_workload_that_fits_only_by_borrowing_cannot_reclaim() {
    let rk146 = |gpus| {
        check_text(&cohort_profile(gpus, Some(4), None))
            .into_iter()
            .filter(|(_, c, _)| c == "RK146")
            .collect::<Vec<_>>()
    };
    // Within team A's 4 GPUs of nominal quota: it reclaims them from a borrowing team B.
    assert!(rk146(4).is_empty());
    // 5 GPUs fit only by borrowing: while team B borrows A's quota, it waits.
    let found = rk146(5);
    assert_eq!(found.len(), 1, "{found:?}");
    let (severity, _, msg) = &found[0];
    assert_eq!(severity, "warning");
    assert!(
        msg.contains("nvidia.com/gpu: asks 5, nominal quota 4"),
        "{msg}"
    );
    assert!(msg.contains("while `team-b-cq` borrows"), "{msg}");
    // More than it can ever get is RK140's finding, not this one's.
    assert!(rk146(9).is_empty());
    // borrowWithinCohort lets a higher-priority workload preempt while borrowing
    // (kueue@v0.19.2 flavorassigner.go `fitsResourceQuota`, `canPreemptWhileBorrowing`):
    // then it reclaims, and there is nothing to warn about.
    let preempting = cohort_profile(5, Some(4), None)
        .replace(
            "    - name: team-a-cq\n      cohortName: shared\n",
            "    - name: team-a-cq\n      cohortName: shared\n      preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority}}\n",
        )
        .replace(
            "    queue: team-a\n",
            "    queue: team-a\n    priorityClass: high\n",
        )
        .replace(
            "ray:\n",
            "priorityClasses:\n  - {name: high, value: 100}\nray:\n",
        );
    assert!(preempting.contains("borrowWithinCohort") && preempting.contains("value: 100"));
    let found = check_text(&preempting);
    assert!(found.iter().all(|(_, c, _)| c != "RK146"), "{found:?}");
    assert!(found.iter().all(|(s, _, _)| s != "error"), "{found:?}");
    // The same policy without the higher priority: team B's workload is not lower, it waits.
    let same_priority = preempting.replace("    priorityClass: high\n", "");
    let found = check_text(&same_priority);
    assert!(found.iter().any(|(_, c, _)| c == "RK146"), "{found:?}");
}

/// The seed-004 cluster with the GPU pool tainted `effect`, and one GPU worker group.
fn tainted_gpu_pool(effect: &str, worker_tolerations: &str) -> String {
    format!(
        r#"apiVersion: raykueue.io/v1alpha1
kind: Profile
name: taints
azure:
  location: eastus
  resourceGroup: kuberay-rg
  cluster: {{name: kuberay-gpu-cluster}}
  nodePools:
    - {{name: system, mode: System, vmSize: Standard_D8s_v3, count: 3, criticalAddonsOnly: true}}
    - name: gpupool
      vmSize: Standard_NC16as_T4_v3
      taints: [{{key: nvidia.com/gpu, value: present, effect: {effect}}}]
      autoscale: {{min: 0, max: 3}}
    - {{name: cpupool, vmSize: Standard_D8s_v3, count: 1}}
namespace: ray
ray:
  image: rayproject/ray:2.57.0-gpu
workloads:
  - kind: RayCluster
    name: gpu
    head:
      resources: {{cpu: "2", memory: 8Gi}}
    workers:
      - name: gpu-group
        replicas: 1
        resources: {{cpu: "3", memory: 50Gi, nvidia.com/gpu: "1"}}
{worker_tolerations}"#
    )
}

#[test]
fn gpu_requests_tolerate_only_no_schedule_gpu_taints() {
    assert!(!codes(&check_text(&tainted_gpu_pool("NoSchedule", ""))).contains(&"RK143"));
    let found = check_text(&tainted_gpu_pool("NoExecute", ""));
    let (_, _, msg) = found.iter().find(|(_, c, _)| c == "RK143").unwrap();
    assert!(msg.contains("nvidia.com/gpu=present:NoExecute"), "{msg}");
    let tolerated = tainted_gpu_pool(
        "NoExecute",
        "        tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoExecute}]\n",
    );
    assert!(!codes(&check_text(&tolerated)).contains(&"RK143"));
}

#[test]
fn head_without_an_untainted_pool_is_reported() {
    // Only the critical-addons system pool and the tainted GPU pool: the head has nowhere to go.
    let text = tainted_gpu_pool("NoSchedule", "").replace(
        "    - {name: cpupool, vmSize: Standard_D8s_v3, count: 1}\n",
        "",
    );
    let found = check_text(&text);
    let (_, _, msg) = found.iter().find(|(_, c, _)| c == "RK143").unwrap();
    assert!(msg.contains("the head of RayCluster `gpu`"), "{msg}");
    assert!(msg.contains("CriticalAddonsOnly=true:NoSchedule"), "{msg}");
}

/// A profile with KubeRay only and `workloads` as given, checked in a folder holding
/// `train.py` and `serve_app.py`.
fn check_workloads(workloads: &str) -> Vec<(String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    for f in ["train.py", "serve_app.py"] {
        std::fs::write(dir.path().join(f), "print('x')\n").unwrap();
    }
    let path = dir.path().join("profile.yaml");
    std::fs::write(
        &path,
        format!(
            "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: p\nnamespace: ray\n\
             operators: {{kuberay: {{version: 1.7.0}}}}\nray: {{image: rayproject/ray:2.57.0-gpu}}\n\
             workloads:\n{workloads}"
        ),
    )
    .unwrap();
    diagnostics(&["--profile", path.to_str().unwrap()]).1
}

const HEAD: &str = "    head: {resources: {cpu: \"1\", memory: 4Gi}}\n";

#[test]
fn entrypoints_resolve_against_the_workloads_own_scripts_and_mount() {
    let job = |entrypoint: &str, extra: &str| {
        check_workloads(&format!(
            "  - kind: RayJob\n    name: j\n    entrypoint: {entrypoint}\n{extra}{HEAD}"
        ))
    };
    // Provided, inline, or outside the mount: fine.
    for (entrypoint, extra) in [
        (
            "python3 /home/ray/scripts/train.py",
            "    scripts: [train.py]\n",
        ),
        ("python3 -c 'import ray'", ""),
        ("python3 /opt/app/main.py", ""),
        (
            "python3 /opt/s/train.py --out=/tmp/x",
            "    scripts: [train.py]\n    scriptsMountPath: /opt/s/\n",
        ),
    ] {
        let d = job(entrypoint, extra);
        assert!(!codes(&d).contains(&"RK150"), "{entrypoint}: {d:?}");
    }
    // Named under the mount but not packed, or packed under another mount.
    for (entrypoint, extra) in [
        ("python3 /home/ray/scripts/train_llm.py", ""),
        (
            "python3 /home/ray/scripts/train.py --config=/home/ray/scripts/c.yaml",
            "    scripts: [train.py]\n",
        ),
        (
            "python3 /opt/s/run.py",
            "    scripts: [train.py]\n    scriptsMountPath: /opt/s\n",
        ),
    ] {
        let d = job(entrypoint, extra);
        assert_eq!(codes(&d), ["RK150"], "{entrypoint}: {d:?}");
    }
}

#[test]
fn serve_imports_need_the_packed_module_on_python_path() {
    let service = |import: &str, env: &str, scripts: &str| {
        check_workloads(&format!(
            "  - kind: RayService\n    name: s\n    serve:\n      applications:\n\
             \x20       - {{name: a, routePrefix: /a, importPath: \"{import}\"{env}}}\n{scripts}{HEAD}"
        ))
    };
    let on_path = ", runtimeEnv: {envVars: {PYTHONPATH: \"/home/ray/scripts:/opt/lib\"}}";
    let as_dir = ", runtimeEnv: {workingDir: /home/ray/scripts/}";
    let packed = "    scripts: [serve_app.py]\n";
    for (import, env, scripts) in [
        ("serve_app:app", on_path, packed),
        ("serve_app.app", as_dir, packed),
        // An installed package: not checked.
        ("ray.serve.llm:build_openai_app", "", ""),
    ] {
        let d = service(import, env, scripts);
        assert!(!codes(&d).contains(&"RK150"), "{import}{env}: {d:?}");
    }
    for (import, env, scripts) in [
        ("serve_app:app", "", packed),
        ("serve_app:app", on_path, ""),
    ] {
        let d = service(import, env, scripts);
        assert_eq!(codes(&d), ["RK150"], "{import}{env}: {d:?}");
    }
}

#[test]
fn a_gpu_serve_head_must_say_what_ray_may_use() {
    let head = |params: &str| {
        check_workloads(&format!(
            "  - kind: RayService\n    name: s\n    serve: {{applications: [{{name: a, routePrefix: /a, importPath: \"x:app\"}}]}}\n\
             \x20   head:\n      resources: {{cpu: \"20\", memory: 160Gi, nvidia.com/gpu: \"1\"}}\n{params}"
        ))
    };
    let warned = head("");
    assert_eq!(codes(&warned), ["RK151"], "{warned:?}");
    assert!(warned[0].2.contains("20 CPUs"), "{warned:?}");
    let d = head("      rayStartParams: {num-gpus: \"1\"}\n");
    assert_eq!(codes(&d), ["RK151"], "num-cpus still missing: {d:?}");
    assert!(d[0].2.contains("do not set num-cpus:"), "{d:?}");
    let ok = head("      rayStartParams: {num-cpus: \"4\", num-gpus: \"1\"}\n");
    assert!(ok.is_empty(), "{ok:?}");
}

/// Every code is spelled once, in the code table (`src/base/codes.rs`): no `"RKnnn"` literal
/// anywhere else in `src/` outside test modules, every identifier is well formed and unique,
/// and no retired code is reported again.
#[test]
fn codes_are_spelled_only_in_the_code_table() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&repo().join("src"), &mut files);
    let mut strays = Vec::new();
    for f in files.iter().filter(|f| !f.ends_with("base/codes.rs")) {
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, _) in code.match_indices("\"RK") {
            let rest = &code[i + 1..];
            if rest.len() >= 6
                && rest[2..5].bytes().all(|b| b.is_ascii_digit())
                && rest.as_bytes()[5] == b'"'
            {
                strays.push(format!("{}: {}", f.display(), &rest[..5]));
            }
        }
    }
    assert!(
        strays.is_empty(),
        "codes spelled outside the code table: {strays:?}"
    );
    let mut seen = std::collections::BTreeSet::new();
    for c in raykueue::api::base::codes::ALL {
        assert!(
            c.id.len() == 5
                && c.id.starts_with("RK")
                && c.id[2..].bytes().all(|b| b.is_ascii_digit()),
            "{}",
            c.id
        );
        assert!(seen.insert(c.id), "{} is defined twice", c.id);
        assert!(!c.title.is_empty(), "{}", c.id);
    }
    for (old, new) in raykueue::api::base::codes::RETIRED {
        assert!(!seen.contains(old), "{old} is retired but still defined");
        assert!(seen.contains(new.id), "{old} → {}", new.id);
    }
}

/// A profile with `train` (a head, `workers` one-GPU workers) on LocalQueue `queue` of three
/// team queues in one cohort: `big` (16 GPUs, lends none), `lender` (4 GPUs, lends them all)
/// and `small` (`small_gpu`: its GPU flavors, or no GPU resource group). `cohorts` is the text
/// of `queues.cohorts` (declaring `shared`), or empty for a bare cohort name.
fn admission_profile(
    queue: &str,
    small_gpu: Option<&str>,
    head_gpu: bool,
    workers: u32,
    cohorts: &str,
) -> String {
    let cq = |name: &str, gpu_flavors: Option<&str>| {
        let gpu = gpu_flavors.map_or_else(String::new, |g| {
            format!("        - coveredResources: [nvidia.com/gpu]\n          flavors:\n{g}")
        });
        format!(
            "    - name: {name}\n      cohortName: shared\n      resourceGroups:\n        - coveredResources: [cpu, memory]\n          flavors:\n            - name: default\n              resources:\n                - {{name: cpu, nominalQuota: \"64\"}}\n                - {{name: memory, nominalQuota: 512Gi}}\n{gpu}"
        )
    };
    let gpu = |quota: &str, limits: &str| {
        format!(
            "            - name: gpu\n              resources:\n                - {{name: nvidia.com/gpu, nominalQuota: \"{quota}\"{limits}}}\n"
        )
    };
    let queues = cq("big-cq", Some(&gpu("16", ", lendingLimit: \"0\"")))
        + &cq("small-cq", small_gpu)
        + &cq("lender-cq", Some(&gpu("4", "")));
    let head_gpu = if head_gpu {
        ", nvidia.com/gpu: \"1\""
    } else {
        ""
    };
    format!(
        r#"apiVersion: raykueue.io/v1alpha1
kind: Profile
name: admission
namespace: ray
flavors:
  - name: default
  - {{name: gpu, nodeLabels: {{accelerator: nvidia}}}}
  - {{name: gpu-tainted, nodeLabels: {{accelerator: nvidia}}, nodeTaints: [{{key: sku, value: gpu, effect: NoSchedule}}]}}
queues:
  mode: team
{cohorts}  clusterQueues:
{queues}  localQueues:
    - {{name: big, clusterQueue: big-cq}}
    - {{name: small, clusterQueue: small-cq}}
    - {{name: lender, clusterQueue: lender-cq}}
ray:
  image: rayproject/ray:2.57.0-gpu
workloads:
  - kind: RayJob
    name: train
    queue: {queue}
    entrypoint: python train.py
    head:
      resources: {{cpu: "1", memory: 4Gi{head_gpu}}}
    workers:
      - name: gpu-workers
        replicas: {workers}
        resources: {{cpu: "1", memory: 4Gi, nvidia.com/gpu: "1"}}
"#
    )
}

/// Small's GPU flavors, a GPU on the head, workers, and `check`'s code with `simulate`'s
/// reason when the workload is never admissible.
type AdmissionCase<'a> = (Option<&'a str>, bool, u32, Option<(&'a str, &'a str)>);

/// RK140/RK141 come from the simulator (`simulate::never`): on the same workload and
/// ClusterQueue, `check` reports the rule exactly when `raykueue simulate` lists the workload
/// as never admissible, with the matching reason, and both admit it otherwise. `simulate`
/// refuses a profile with errors, so it runs on the profile with `train` queued on `big` and
/// submits `from: train` to `small`; `check` runs with `train` queued on `small`.
#[test]
fn check_and_simulate_agree_on_never_admissible_workloads() {
    let gpu = |limit: &str| {
        format!(
            "            - name: gpu\n              resources:\n                - {{name: nvidia.com/gpu, nominalQuota: \"4\", borrowingLimit: \"{limit}\"}}\n"
        )
    };
    let (alone, borrows) = (gpu("0"), gpu("4"));
    let tainted = "            - name: gpu-tainted\n              resources:\n                - {name: nvidia.com/gpu, nominalQuota: \"4\"}\n";
    // (small's GPU flavors, a GPU on the head, workers, check's code and simulate's reason
    // when never admissible).
    let flat: [AdmissionCase<'_>; 7] = [
        (Some(&alone), false, 4, None),
        (Some(&alone), false, 5, Some(("RK140", "ExceedsMaxQuota"))),
        (Some(&alone), true, 4, Some(("RK140", "ExceedsMaxQuota"))),
        (None, false, 1, Some(("RK141", "NoMatchingFlavor"))),
        (Some(tainted), false, 1, Some(("RK141", "NoMatchingFlavor"))),
        // 4 own + 4 borrowed from the lender (big lends none).
        (Some(&borrows), false, 8, None),
        (Some(&borrows), false, 9, Some(("RK140", "ExceedsMaxQuota"))),
    ];
    // Issue 26: the same queues in a Cohort tree, `shared` below a root `org` that holds 2
    // GPUs itself. What `small` can ever get is Kueue's potentialAvailable up the tree
    // (kubernetes-sigs/kueue@v0.19.2 pkg/cache/scheduler/resource_node.go
    // `potentialAvailable`): 4 own + min(borrowingLimit 8, the lender's 4 + org's 2) = 10;
    // with a borrowingLimit of 1 on `shared` towards `org`: 4 + min(8, 4 + 1) = 9.
    let wide = gpu("8");
    let org = "    - name: org\n      resourceGroups:\n        - coveredResources: [nvidia.com/gpu]\n          flavors:\n            - name: gpu\n              resources:\n                - {name: nvidia.com/gpu, nominalQuota: \"2\"}\n";
    let tree = format!("  cohorts:\n{org}    - {{name: shared, parentName: org}}\n");
    let capped = format!(
        "  cohorts:\n{org}    - name: shared\n      parentName: org\n      resourceGroups:\n        - coveredResources: [nvidia.com/gpu]\n          flavors:\n            - name: gpu\n              resources:\n                - {{name: nvidia.com/gpu, nominalQuota: \"0\", borrowingLimit: \"1\"}}\n"
    );
    let in_tree: [(AdmissionCase<'_>, &str); 5] = [
        ((Some(&wide), false, 10, None), &tree),
        (
            (Some(&wide), false, 11, Some(("RK140", "ExceedsMaxQuota"))),
            &tree,
        ),
        ((Some(&wide), false, 9, None), &capped),
        (
            (Some(&wide), false, 10, Some(("RK140", "ExceedsMaxQuota"))),
            &capped,
        ),
        ((None, false, 1, Some(("RK141", "NoMatchingFlavor"))), &tree),
    ];
    let cases = flat.into_iter().map(|c| (c, "")).chain(in_tree);
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("s.yaml");
    std::fs::write(
        &scenario,
        "apiVersion: raykueue.io/v1alpha1\nkind: Scenario\nname: alone\nworkloads:\n  - {name: train, queue: small, submitAt: 0, runFor: 60, from: train}\n",
    )
    .unwrap();
    for (i, ((gpu, head_gpu, workers, never), cohorts)) in cases.enumerate() {
        let checked = check_text(&admission_profile("small", gpu, head_gpu, workers, cohorts));
        let rules: Vec<&str> = codes(&checked)
            .into_iter()
            .filter(|c| *c == "RK140" || *c == "RK141")
            .collect();
        let profile = dir.path().join(format!("p{i}.yaml"));
        std::fs::write(
            &profile,
            admission_profile("big", gpu, head_gpu, workers, cohorts),
        )
        .unwrap();
        let out = raykueue(&[
            "simulate",
            "--profile",
            profile.to_str().unwrap(),
            "--scenario",
            scenario.to_str().unwrap(),
            "--output",
            "json",
        ]);
        assert_eq!(out.status.code(), Some(0), "case {i}: {}", stderr(&out));
        let text = stdout(&out);
        let end: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        let admitted = text.contains("\"Admitted\"");
        match never {
            None => {
                assert!(rules.is_empty(), "case {i}: {checked:?}");
                assert!(admitted, "case {i}: {text}");
                assert_eq!(end["neverAdmissible"], serde_json::json!([]), "case {i}");
            }
            Some((code, reason)) => {
                assert_eq!(rules, [code], "case {i}: {checked:?}");
                assert!(!admitted, "case {i}: {text}");
                assert_eq!(
                    end["neverAdmissible"],
                    serde_json::json!([{"workload": "train", "reason": reason}]),
                    "case {i}"
                );
            }
        }
    }
}
