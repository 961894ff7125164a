//! Ray workloads: what Kueue's webhooks and KubeRay need of the generated RayJobs, RayServices
//! and RayClusters, the `--only workloads` stream, and script ConfigMaps.

use crate::cli::parse_stream;
use crate::common::{raykueue, repo, shipped, stderr, stdout};
use serde_json::{Value, json};
use std::path::Path;

fn workloads_stream(profile: &str) -> Vec<Value> {
    let out = raykueue(&["gen", "--profile", profile, "--only", "workloads"]);
    assert_eq!(out.status.code(), Some(0), "{profile}: {}", stderr(&out));
    parse_stream(&stdout(&out))
}

fn platform_stream(profile: &str) -> Vec<Value> {
    let out = raykueue(&["gen", "--profile", profile]);
    assert_eq!(out.status.code(), Some(0), "{profile}: {}", stderr(&out));
    parse_stream(&stdout(&out))
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn named<'a>(docs: &'a [Value], name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no object named {name}"))
}

/// Every pod template of a Ray cluster spec: head first, then each worker group.
fn templates(cluster: &Value) -> Vec<&Value> {
    let mut out = vec![&cluster["headGroupSpec"]["template"]];
    if let Some(groups) = cluster["workerGroupSpecs"].as_array() {
        out.extend(groups.iter().map(|g| &g["template"]));
    }
    out
}

/// A temporary profile folder: `profile.yaml` plus files, compiled through the real binary.
fn temp_profile(profile: &str, files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("profile.yaml"), profile).unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

fn gen_workloads_at(dir: &Path) -> std::process::Output {
    let path = dir.join("profile.yaml");
    raykueue(&[
        "gen",
        "--profile",
        path.to_str().unwrap(),
        "--only",
        "workloads",
    ])
}

const BASE: &str = r#"apiVersion: raykueue.io/v1alpha1
kind: Profile
name: scripted
namespace: ray
operators:
  kueue:
    version: 0.19.2
    frameworks: [batch/job, ray.io/rayjob, ray.io/raycluster]
flavors:
  - name: default
queues:
  mode: single
  clusterQueues:
    - name: cluster-queue
      resourceGroups:
        - coveredResources: [cpu, memory]
          flavors:
            - name: default
              resources:
                - {name: cpu, nominalQuota: "32"}
                - {name: memory, nominalQuota: 128Gi}
  localQueues:
    - name: default
      clusterQueue: cluster-queue
ray:
  image: rayproject/ray:2.57.0
workloads:
"#;

const SCRIPTED_JOB: &str = r#"  - kind: RayJob
    name: train
    queue: default
    entrypoint: python /home/ray/scripts/train.py
    scripts: [jobs/train.py, jobs/util.py]
    head:
      resources: {cpu: "1", memory: 4Gi}
    workers:
      - name: workers
        replicas: 1
        resources: {cpu: "2", memory: 8Gi}
"#;

/// Kueue v0.19's RayJob webhook (kueue@v0.19.2 `pkg/controller/jobs/rayjob/rayjob_webhook.go`), checked on every RayJob of the team bundle.
#[test]
fn team_rayjobs_carry_everything_kueues_rayjob_webhook_requires() {
    let platform = platform_stream("team");
    let local_queues: Vec<(&str, &str)> = of_kind(&platform, "LocalQueue")
        .iter()
        .map(|lq| {
            (
                lq["metadata"]["namespace"].as_str().unwrap(),
                lq["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    let docs = workloads_stream("team");
    let jobs = of_kind(&docs, "RayJob");
    assert_eq!(jobs.len(), 3);
    for job in jobs {
        let name = job["metadata"]["name"].as_str().unwrap();
        assert_eq!(job["apiVersion"], "ray.io/v1", "{name}");
        let ns = job["metadata"]["namespace"].as_str().unwrap();
        let queue = job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"]
            .as_str()
            .unwrap_or_else(|| panic!("{name}: no queue label"));
        assert!(
            local_queues.contains(&(ns, queue)),
            "{name}: queue {ns}/{queue} is no LocalQueue of the bundle"
        );
        let spec = &job["spec"];
        assert_eq!(spec["suspend"], true, "{name}");
        assert_eq!(spec["shutdownAfterJobFinishes"], true, "{name}");
        assert!(spec.get("clusterSelector").is_none(), "{name}");
        let cluster = &spec["rayClusterSpec"];
        assert!(cluster.is_object(), "{name}: rayClusterSpec is required");
        assert_eq!(cluster["enableInTreeAutoscaling"], false, "{name}");
        assert!(cluster["rayVersion"].is_string(), "{name}");
        let groups = cluster["workerGroupSpecs"].as_array().unwrap();
        assert!(groups.len() <= 16, "{name}");
        for g in groups {
            assert_ne!(g["groupName"], "head", "{name}");
            for field in ["replicas", "minReplicas", "maxReplicas"] {
                assert!(g[field].is_u64(), "{name}: {field} missing in {g}");
            }
            assert!(g["minReplicas"].as_u64() <= g["replicas"].as_u64());
            assert!(g["replicas"].as_u64() <= g["maxReplicas"].as_u64());
        }
        for t in templates(cluster) {
            let c = &t["spec"]["containers"][0];
            assert!(
                c["name"] == "ray-head" || c["name"] == "ray-worker",
                "{name}: Ray container at index 0"
            );
            assert_eq!(
                c["resources"]["requests"], c["resources"]["limits"],
                "{name}"
            );
        }
    }
}

/// The `team` profile's workloads (README, "A tour of the profile"), value by value.
#[test]
fn team_workloads_carry_the_spec_values() {
    let docs = workloads_stream("team");
    let kinds: Vec<(&str, &str)> = docs
        .iter()
        .filter(|d| d["kind"] != "ConfigMap")
        .map(|d| {
            (
                d["kind"].as_str().unwrap(),
                d["metadata"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("RayJob", "aurora-finetune"),
            ("RayService", "aurora-serve"),
            ("RayJob", "llm-training"),
            ("RayJob", "batch-inference"),
        ]
    );
    let image = "mcr.microsoft.com/aks/ai-runtime/ray:py3.12-ray2.55.1-cuda13.0";
    // (name, queue, head cpu/memory, workers, worker cpu/memory)
    let jobs = [
        ("aurora-finetune", "team-a", "2", "8Gi", 1, "18", "160Gi"),
        // Workers of 10 CPU (the upstream example has 16): the job fits team B's nominal quota
        // and can reclaim its GPUs (RK146).
        ("llm-training", "team-b", "4", "16Gi", 4, "10", "128Gi"),
        ("batch-inference", "team-b", "4", "16Gi", 1, "12", "80Gi"),
    ];
    for (name, queue, hcpu, hmem, replicas, wcpu, wmem) in jobs {
        let job = named(&docs, name);
        // Entrypoints run the example programs packed from profiles/scripts/ (issue 12), and
        // the storage account reaches the programs through the runtime environment.
        let program = if name == "batch-inference" {
            "batch.py"
        } else {
            "train.py"
        };
        assert_eq!(
            job["spec"]["entrypoint"],
            format!("python3 /home/ray/scripts/{program}")
        );
        let env: Value =
            serde_saphyr::from_str(job["spec"]["runtimeEnvYAML"].as_str().unwrap()).unwrap();
        assert_eq!(
            env,
            json!({"env_vars": {
                "AZURE_STORAGE_ACCOUNT_NAME": "kueuerayaksdata",
                "AZURE_STORAGE_CONTAINERS": "aurora,llm-pipeline",
            }})
        );
        assert_eq!(job["metadata"]["namespace"], "ray");
        assert_eq!(
            job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
            queue
        );
        assert_eq!(job["spec"]["ttlSecondsAfterFinished"], 300);
        let cluster = &job["spec"]["rayClusterSpec"];
        assert_eq!(cluster["rayVersion"], "2.55.1");
        let head = &cluster["headGroupSpec"];
        assert_eq!(head["rayStartParams"], json!({"num-cpus": "0"}));
        assert_eq!(
            head["template"]["spec"]["containers"][0]["resources"]["limits"],
            json!({"cpu": hcpu, "memory": hmem})
        );
        let w = &cluster["workerGroupSpecs"][0];
        assert_eq!(w["groupName"], "gpu-workers");
        assert_eq!(w["rayStartParams"], json!({"num-gpus": "1"}));
        assert_eq!(w["replicas"], replicas);
        assert_eq!(
            w["template"]["spec"]["containers"][0]["resources"]["limits"],
            json!({"cpu": wcpu, "memory": wmem, "nvidia.com/gpu": "1"})
        );
        for t in templates(cluster) {
            assert_eq!(
                t["metadata"]["labels"]["azure.workload.identity/use"],
                "true"
            );
            assert_eq!(t["spec"]["serviceAccountName"], "ray-workload");
            assert_eq!(t["spec"]["containers"][0]["image"], image);
        }
    }
    let serve = named(&docs, "aurora-serve");
    // Unlike the upstream example, the RayService is queued too (team A's queue, with
    // ray.io/rayservice enabled), so it runs inside a quota (no RK121): labelled for its queue
    // and created suspended, for Kueue to admit (kueue@v0.19.2
    // pkg/controller/jobs/rayservice: the suspend field is `rayClusterConfig.suspend`).
    assert_eq!(
        serve["metadata"]["labels"]["kueue.x-k8s.io/queue-name"],
        "team-a"
    );
    assert!(serve["spec"].get("suspend").is_none());
    let cluster = &serve["spec"]["rayClusterConfig"];
    assert_eq!(cluster["suspend"], true);
    assert_eq!(cluster["enableInTreeAutoscaling"], false);
    assert!(cluster.get("workerGroupSpecs").is_none(), "head only");
    let head = &cluster["headGroupSpec"]["template"];
    assert_eq!(
        head["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "20", "memory": "160Gi", "nvidia.com/gpu": "1"})
    );
    assert_eq!(
        head["spec"]["containers"][0]["ports"],
        json!([{"name": "serve", "containerPort": 8000}])
    );
    let config: Value =
        serde_saphyr::from_str(serve["spec"]["serveConfigV2"].as_str().unwrap()).unwrap();
    assert_eq!(
        config,
        json!({"applications": [{
            "name": "aurora",
            "route_prefix": "/aurora",
            "import_path": "serve_app:app",
            "runtime_env": {"env_vars": {
                "AZURE_STORAGE_ACCOUNT_NAME": "kueuerayaksdata",
                "AZURE_STORAGE_CONTAINERS": "aurora,llm-pipeline",
                "PYTHONPATH": "/home/ray/scripts",
                "SERVE_NUM_GPUS": "1",
            }},
        }]})
    );
    // The upstream example's Serve head: Ray may use 4 of its 20 CPUs and its GPU.
    assert_eq!(
        cluster["headGroupSpec"]["rayStartParams"],
        json!({"num-cpus": "4", "num-gpus": "1"})
    );
}

/// Seed 004's RayCluster: no Kueue, so no queue label and no suspend; Ray's autoscaler scales
/// the GPU group from 0 to 5.
#[test]
fn kuberay_gpu_raycluster_is_seed_004s() {
    let docs = workloads_stream("kuberay-gpu");
    assert_eq!(docs.len(), 2, "gpu_check.py's ConfigMap, the RayCluster");
    assert_eq!(docs[0]["kind"], "ConfigMap");
    assert!(docs[0]["data"]["gpu_check.py"].is_string());
    let rc = &docs[1];
    assert_eq!(rc["kind"], "RayCluster");
    assert!(
        rc["metadata"]["labels"]
            .get("kueue.x-k8s.io/queue-name")
            .is_none()
    );
    assert!(rc["metadata"].get("annotations").is_none());
    let spec = &rc["spec"];
    assert!(spec.get("suspend").is_none());
    assert_eq!(spec["enableInTreeAutoscaling"], true);
    assert_eq!(spec["rayVersion"], "2.57.0");
    let g = &spec["workerGroupSpecs"][0];
    assert_eq!(g["groupName"], "gpu-group");
    assert_eq!(
        (&g["replicas"], &g["minReplicas"], &g["maxReplicas"]),
        (&json!(0), &json!(0), &json!(5))
    );
    let c = &g["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "rayproject/ray:2.57.0-gpu");
    assert_eq!(
        c["resources"]["limits"],
        json!({"cpu": "3", "memory": "50Gi", "nvidia.com/gpu": "1"})
    );
    assert!(g["template"]["spec"].get("schedulingGates").is_none());
}

#[test]
fn only_workloads_streams_exactly_the_workload_files() {
    // A ConfigMap of scripts and a Ray object per workload.
    assert_eq!(workloads_stream("team").len(), 8);
    assert_eq!(
        of_kind(&workloads_stream("kuberay-gpu"), "RayCluster").len(),
        1
    );
    assert_eq!(of_kind(&workloads_stream("single"), "RayJob").len(), 1);
    let dir = tempfile::tempdir().unwrap();
    let out = raykueue(&[
        "gen",
        "--profile",
        "team",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The top-level kustomization lists the folders in profile order; each folder's lists
    // its files; together they hold exactly the stream.
    let top: Value = serde_saphyr::from_str(
        &std::fs::read_to_string(dir.path().join("workloads/kustomization.yaml")).unwrap(),
    )
    .unwrap();
    let folders: Vec<&str> = top["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        folders,
        [
            "aurora-finetune",
            "aurora-serve",
            "llm-training",
            "batch-inference"
        ]
    );
    let mut from_files = Vec::new();
    for f in folders {
        let folder = dir.path().join("workloads").join(f);
        let k: Value = serde_saphyr::from_str(
            &std::fs::read_to_string(folder.join("kustomization.yaml")).unwrap(),
        )
        .unwrap();
        for file in k["resources"].as_array().unwrap() {
            let text = std::fs::read_to_string(folder.join(file.as_str().unwrap())).unwrap();
            from_files.extend(parse_stream(&text));
        }
    }
    assert_eq!(workloads_stream("team"), from_files);
}

#[test]
fn scripts_become_an_immutable_configmap_mounted_in_every_ray_pod() {
    let profile = format!("{BASE}{SCRIPTED_JOB}");
    let dir = temp_profile(
        &profile,
        &[
            ("jobs/train.py", "import util\nprint('train')\n"),
            ("jobs/util.py", "X = 1\n"),
        ],
    );
    let out = gen_workloads_at(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = parse_stream(&stdout(&out));
    assert_eq!(
        docs[0]["kind"], "ConfigMap",
        "the ConfigMap is applied first"
    );
    let cm = &docs[0];
    assert_eq!(cm["immutable"], true);
    assert_eq!(
        cm["data"],
        json!({"train.py": "import util\nprint('train')\n", "util.py": "X = 1\n"})
    );
    let cm_name = cm["metadata"]["name"].as_str().unwrap();
    assert!(cm_name.starts_with("train-scripts-"), "{cm_name}");
    let cluster = &docs[1]["spec"]["rayClusterSpec"];
    for t in templates(cluster) {
        assert_eq!(
            t["spec"]["volumes"],
            json!([{"name": "scripts", "configMap": {"name": cm_name}}])
        );
        assert_eq!(
            t["spec"]["containers"][0]["volumeMounts"],
            json!([{"name": "scripts", "mountPath": "/home/ray/scripts", "readOnly": true}])
        );
    }
}

#[test]
fn changing_a_script_changes_the_configmap_name_and_the_pods_that_mount_it() {
    let profile = format!("{BASE}{SCRIPTED_JOB}");
    let dir = temp_profile(
        &profile,
        &[("jobs/train.py", "print(1)\n"), ("jobs/util.py", "X = 1\n")],
    );
    let names = |dir: &Path| {
        let out = gen_workloads_at(dir);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let docs = parse_stream(&stdout(&out));
        let volume = docs[1]["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
            ["volumes"][0]["configMap"]["name"]
            .clone();
        (docs[0]["metadata"]["name"].clone(), volume)
    };
    let (before, mounted_before) = names(dir.path());
    assert_eq!(before, mounted_before);
    assert_eq!(names(dir.path()).0, before, "same content, same name");
    std::fs::write(dir.path().join("jobs/util.py"), "X = 2\n").unwrap();
    let (after, mounted_after) = names(dir.path());
    assert_ne!(before, after);
    assert_eq!(after, mounted_after);
}

#[test]
fn shipped_profiles_read_only_their_embedded_example_scripts() {
    // Shipped profiles resolve without a folder: their scripts are the embedded examples.
    for p in shipped() {
        let r = raykueue::api::input::resolve::resolve(p).unwrap();
        assert!(r.base_dir.is_none());
        let (typed, _) = raykueue::api::compile::check_profile(&r);
        let (_, profile) = typed.unwrap();
        let scripts: Vec<&str> = profile
            .workloads
            .iter()
            .flat_map(|w| {
                w.scripts
                    .iter()
                    .map(raykueue::api::profile::RelativePath::as_str)
            })
            .collect();
        // Every shipped workload that runs a program ships it (`autoscale`'s Job runs a shell
        // line).
        assert!(!scripts.is_empty() || p == "autoscale", "{p}");
        for s in scripts {
            assert!(
                raykueue::api::input::resolve::shipped_script(s).is_some(),
                "{p}: {s}"
            );
        }
    }
    // Anything else has no folder to come from.
    let resolved = raykueue::api::input::resolve::Resolved {
        source: raykueue::api::base::source::Source::new(
            "profiles/embedded.yaml",
            format!("{BASE}{SCRIPTED_JOB}"),
        ),
        base_dir: None,
    };
    let diags = raykueue::api::compile::compile(&resolved, false).unwrap_err();
    let rk131: Vec<_> = diags.iter().filter(|d| d.code == "RK131").collect();
    assert_eq!(rk131.len(), 2, "{diags:?}");
    assert_eq!(rk131[0].path.as_deref(), Some("workloads[0].scripts[0]"));
    assert!(rk131[0].place.is_some(), "located at the scripts entry");
}

#[test]
fn scripts_over_a_configmaps_size_are_refused() {
    let big = "#".repeat(600 * 1024);
    let profile = format!("{BASE}{SCRIPTED_JOB}");
    let dir = temp_profile(&profile, &[("jobs/train.py", &big), ("jobs/util.py", &big)]);
    let out = gen_workloads_at(dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(err.contains("error[RK133]"), "{err}");
    assert!(err.contains("profile.yaml:"), "located: {err}");
}

#[test]
fn elastic_queued_raycluster_is_admitted_as_workload_slices() {
    let profile = format!(
        "{BASE}{}",
        r#"  - kind: RayCluster
    name: dev
    queue: default
    elastic: true
    priorityClass: high
    head:
      resources: {cpu: "1", memory: 4Gi}
    workers:
      - name: workers
        replicas: 1
        minReplicas: 0
        maxReplicas: 3
        numOfHosts: 2
        resources: {cpu: "2", memory: 8Gi}
        tolerations:
          - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
        nodeSelector: {agentpool: gpupool}
priorityClasses:
  - name: high
    value: 1000
"#
    );
    let dir = temp_profile(&profile, &[]);
    let out = gen_workloads_at(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = parse_stream(&stdout(&out));
    let rc = &docs[0];
    assert_eq!(
        rc["metadata"]["annotations"],
        json!({"kueue.x-k8s.io/elastic-job": "true"})
    );
    assert_eq!(
        rc["metadata"]["labels"]["kueue.x-k8s.io/priority-class"],
        "high"
    );
    assert_eq!(rc["spec"]["suspend"], true);
    assert_eq!(rc["spec"]["enableInTreeAutoscaling"], true);
    for t in templates(&rc["spec"]) {
        assert_eq!(
            t["spec"]["schedulingGates"],
            json!([{"name": "kueue.x-k8s.io/elastic-job"}])
        );
        // No service account in this profile: the pods use the namespace's default.
        assert!(t["spec"].get("serviceAccountName").is_none());
        assert!(t.get("metadata").is_none());
    }
    let g = &rc["spec"]["workerGroupSpecs"][0];
    assert_eq!(g["numOfHosts"], 2);
    assert_eq!(
        g["template"]["spec"]["nodeSelector"],
        json!({"agentpool": "gpupool"})
    );
    assert_eq!(
        g["template"]["spec"]["tolerations"],
        json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    );
}

/// `runtimeEnvYAML` and `serveConfigV2` are YAML documents built as data: whatever a profile
/// value holds, it comes back as that value, never as extra keys.
#[test]
fn embedded_yaml_documents_are_serialized_from_data() {
    let profile = format!(
        "{BASE}{}",
        r#"  - kind: RayJob
    name: tricky
    queue: default
    entrypoint: "python x.py\nkind: Secret"
    submissionMode: K8sJobMode
    submitter:
      resources: {cpu: 500m, memory: 1Gi}
    runtimeEnv:
      pip: ["torch==2.5", "NO", "1.10"]
      envVars: {MODE: "prod\nshutdownAfterJobFinishes: false", EMPTY: ""}
      workingDir: /home/ray
    head:
      resources: {cpu: "1", memory: 4Gi}
  - kind: RayService
    name: svc
    queue: default
    serve:
      port: 9000
      applications:
        - name: app
          routePrefix: /a
          importPath: "app:dep\n- name: evil"
          runtimeEnv: {envVars: {A: "1"}}
    head:
      resources: {cpu: "1", memory: 4Gi}
"#
    )
    .replace(
        "[batch/job, ray.io/rayjob, ray.io/raycluster]",
        "[batch/job, ray.io/rayjob, ray.io/rayservice]",
    );
    let dir = temp_profile(&profile, &[]);
    let out = gen_workloads_at(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = parse_stream(&stdout(&out));
    let job = &docs[0]["spec"];
    assert_eq!(job["entrypoint"], "python x.py\nkind: Secret");
    assert_eq!(job["shutdownAfterJobFinishes"], true);
    let env: Value = serde_saphyr::from_str(job["runtimeEnvYAML"].as_str().unwrap()).unwrap();
    assert_eq!(
        env,
        json!({
            "working_dir": "/home/ray",
            "pip": ["torch==2.5", "NO", "1.10"],
            "env_vars": {"EMPTY": "", "MODE": "prod\nshutdownAfterJobFinishes: false"},
        })
    );
    let submitter = &job["submitterPodTemplate"]["spec"];
    assert_eq!(submitter["restartPolicy"], "Never");
    assert_eq!(
        submitter["containers"][0]["resources"]["limits"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
    assert_eq!(
        submitter["containers"][0]["resources"]["requests"],
        submitter["containers"][0]["resources"]["limits"]
    );
    let svc = &docs[1]["spec"];
    let cfg: Value = serde_saphyr::from_str(svc["serveConfigV2"].as_str().unwrap()).unwrap();
    assert_eq!(
        cfg,
        json!({
            "http_options": {"port": 9000},
            "applications": [{
                "name": "app",
                "route_prefix": "/a",
                "import_path": "app:dep\n- name: evil",
                "runtime_env": {"env_vars": {"A": "1"}},
            }],
        })
    );
    assert_eq!(
        svc["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["containers"][0]["ports"],
        json!([{"name": "serve", "containerPort": 9000}])
    );
}

#[test]
fn every_workload_rule_has_a_failing_fixture() {
    let fixtures = repo().join("tests/fixtures/bad");
    let mut covered = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(&fixtures).unwrap() {
        if let Ok(codes) = std::fs::read_to_string(e.unwrap().path().join("expect")) {
            covered.extend(codes.split_whitespace().map(str::to_owned));
        }
    }
    // RK133 needs more than 1 MiB of files: `scripts_over_a_configmaps_size_are_refused`.
    for rule in raykueue::api::base::codes::ALL {
        let n: u32 = rule.id[2..].parse().unwrap();
        if (n == 110 || (120..140).contains(&n)) && rule.id != "RK133" {
            assert!(covered.contains(rule.id), "{} has no fixture", rule.id);
        }
    }
}

/// A script that is a link out of the profile's folder is refused, like a `..` path.
#[test]
fn a_script_linked_out_of_the_profile_folder_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "TOKEN = 'x'\n").unwrap();
    let profile = format!("{BASE}{SCRIPTED_JOB}");
    let dir = temp_profile(&profile, &[("jobs/util.py", "X = 1\n")]);
    std::os::unix::fs::symlink(
        outside.path().join("secret.py"),
        dir.path().join("jobs/train.py"),
    )
    .unwrap();
    let out = gen_workloads_at(dir.path());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("[RK131]"), "{}", stderr(&out));
    assert!(!stdout(&out).contains("TOKEN"));
}

/// A profile that extends a shipped one inherits its workloads and their example scripts: a
/// shipped example's path missing next to the profile is read from the binary; a file next to
/// it wins; any other missing file is still RK131.
#[test]
fn an_overlay_of_a_shipped_profile_inherits_its_example_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("mine.yaml");
    std::fs::write(
        &profile,
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: single\nname: mine\n",
    )
    .unwrap();
    let stream = |p: &Path| {
        let out = raykueue(&[
            "gen",
            "--profile",
            p.to_str().unwrap(),
            "--only",
            "workloads",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        parse_stream(&stdout(&out))
    };
    let inherited = stream(&profile);
    assert_eq!(
        inherited[0]["data"]["gpu_check.py"].as_str(),
        raykueue::api::input::resolve::shipped_script("scripts/gpu_check.py")
    );
    std::fs::create_dir(dir.path().join("scripts")).unwrap();
    std::fs::write(dir.path().join("scripts/gpu_check.py"), "print('mine')\n").unwrap();
    assert_eq!(
        stream(&profile)[0]["data"]["gpu_check.py"],
        "print('mine')\n"
    );

    std::fs::write(
        &profile,
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: single\nname: mine\n\
         workloads:\n  - name: gpu-check\n    scripts: [scripts/gpu_check.py, scripts/other.py]\n",
    )
    .unwrap();
    let out = raykueue(&["check", "--profile", profile.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error[RK131]"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("scripts/other.py"),
        "{}",
        stderr(&out)
    );
}
