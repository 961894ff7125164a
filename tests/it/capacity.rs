//! Capacity-aware admission (issue 27): topology-aware scheduling, ProvisioningRequest checks
//! and `resources` exclusions and transformations, end to end: the objects the shipped
//! examples put in the bundle, `validate` refusing what Kueue v0.19.2's CRDs refuse, the
//! quota view of RK140/RK141 and the simulator, and the examples' scripts against the real
//! cloud CLIs.

use crate::common::{bundle_text, raykueue, repo, skip, stderr, stdout};
use serde_json::Value;

/// The objects of a profile's platform and workloads streams, parsed.
fn objects(profile: &str) -> Vec<Value> {
    let mut all = Vec::new();
    for only in ["platform", "workloads"] {
        let out = raykueue(&["gen", "--profile", profile, "--only", only]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        all.extend(crate::cli::parse_stream(&stdout(&out)));
    }
    all
}

fn find<'v>(objects: &'v [Value], kind: &str, name: &str) -> &'v Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name}"))
}

/// tas-gke: the Topology with GKE's labels broadest first, the flavor naming it, and the
/// workers' required level as Kueue's pod-set annotation on their template only
/// (kueue@v0.19.2 `apis/kueue/v1beta2/topology_types.go` `PodSetRequiredTopologyAnnotation`;
/// `pkg/controller/jobs/raycluster/common.go` reads the head's and each worker group's
/// template).
#[test]
fn the_tas_example_carries_its_topology_flavor_and_pod_set_annotation() {
    let objs = objects("examples/tas-gke");
    let topo = find(&objs, "Topology", "gke-block");
    let levels: Vec<&str> = topo["spec"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["nodeLabel"].as_str().unwrap())
        .collect();
    assert_eq!(
        levels,
        [
            "cloud.google.com/gce-topology-block",
            "cloud.google.com/gce-topology-subblock",
            "kubernetes.io/hostname"
        ]
    );
    let rf = find(&objs, "ResourceFlavor", "h200");
    assert_eq!(rf["spec"]["topologyName"], "gke-block");
    assert!(
        rf["spec"]["nodeLabels"]
            .as_object()
            .is_some_and(|m| !m.is_empty())
    );
    let job = find(&objs, "RayJob", "block-train");
    let cluster = &job["spec"]["rayClusterSpec"];
    let worker = &cluster["workerGroupSpecs"][0]["template"]["metadata"]["annotations"];
    assert_eq!(
        worker["kueue.x-k8s.io/podset-required-topology"],
        "cloud.google.com/gce-topology-block"
    );
    let head = &cluster["headGroupSpec"]["template"]["metadata"]["annotations"];
    assert!(
        head.as_object()
            .is_none_or(|m| m.keys().all(|k| !k.starts_with("kueue.x-k8s.io/podset-"))),
        "the head asks for no topology: {head}"
    );
}

/// provisioning-eks: the AdmissionCheck points at its ProvisioningRequestConfig
/// (kueue@v0.19.2 `pkg/util/admissioncheck/admissioncheck.go`: kind, group and name must match
/// or the check is inactive with `BadParametersRef`), and the ClusterQueue names it in
/// `admissionChecksStrategy` with `onFlavors` (v1beta2 has no plain list).
#[test]
fn the_provisioning_example_wires_check_config_and_queue() {
    let objs = objects("examples/provisioning-eks");
    let ac = find(&objs, "AdmissionCheck", "gpu-capacity");
    assert_eq!(
        ac["spec"]["controllerName"],
        "kueue.x-k8s.io/provisioning-request"
    );
    assert_eq!(
        ac["spec"]["parameters"],
        serde_json::json!({"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "gpu-capacity"})
    );
    let prc = find(&objs, "ProvisioningRequestConfig", "gpu-capacity");
    assert_eq!(
        prc["spec"]["provisioningClassName"],
        "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
    );
    assert_eq!(
        prc["spec"]["managedResources"],
        serde_json::json!(["nvidia.com/gpu"])
    );
    let cq = find(&objs, "ClusterQueue", "gpu");
    assert_eq!(
        cq["spec"]["admissionChecksStrategy"]["admissionChecks"],
        serde_json::json!([{"name": "gpu-capacity", "onFlavors": ["a10g"]}])
    );
    assert!(cq["spec"].get("admissionChecks").is_none());
    // The install script serves the check: the CRD before Kueue, the autoscaler's flag on.
    let bundle = bundle_text("examples/provisioning-eks");
    let crd = bundle.find("kubectl apply --server-side -f \"$PROVISIONING_REQUEST_CRD\"");
    let kueue = bundle.find("helm upgrade --install \"$KUEUE_RELEASE\"");
    assert!(
        crd.is_some() && kueue.is_some() && crd < kueue,
        "the ProvisioningRequest CRD goes in before Kueue"
    );
    assert!(bundle.contains("--set extraArgs.enable-provisioning-requests=true"));
}

/// provisioning-eks: the flavor behind the ProvisioningRequest check tolerates the GPU node
/// group's taint, so the request's pod templates carry it (kueue@v0.19.2 `pkg/podset/podset.go`
/// `FromAssignment` copies only the flavor's tolerations into them); a profile that leaves it
/// out is refused with RK198, located at the flavor (issue 40 item 1).
#[test]
fn the_provisioning_flavor_tolerates_its_tainted_pool() {
    let objs = objects("examples/provisioning-eks");
    let rf = find(&objs, "ResourceFlavor", "a10g");
    assert_eq!(
        rf["spec"]["tolerations"],
        serde_json::json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]),
        "{rf}"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("profile.yaml");
    std::fs::write(
        &file,
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: no-toleration\nextends: examples/provisioning-eks\nflavors:\n  - name: a10g\n    tolerations: []\n",
    )
    .unwrap();
    let out = raykueue(&["gen", "--profile", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty(), "no partial output");
    assert!(
        err.contains("error[RK198]: flavors[1].tolerations: flavor `a10g` of ProvisioningRequest check `gpu-capacity`"),
        "{err}"
    );
    assert!(
        err.contains("`gpu-node-group`: nvidia.com/gpu:NoSchedule"),
        "{err}"
    );
    let place = format!("--> {}:7:18", file.display());
    assert!(err.contains(&place), "{place}\n{err}");
    assert!(
        err.contains("add `{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}` to the tolerations of flavor `a10g`"),
        "{err}"
    );
}

/// `validate` holds Topology, AdmissionCheck, ProvisioningRequestConfig and a TAS
/// ResourceFlavor to Kueue v0.19.2's CRDs, CEL rules included (imported into
/// `assets/schemas.json`).
#[test]
fn validate_refuses_what_the_capacity_crds_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("objects.yaml");
    std::fs::write(
        &file,
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: t}\nspec:\n  levels:\n    - nodeLabel: kubernetes.io/hostname\n    - nodeLabel: cloud.google.com/gce-topology-block\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: a}\nspec:\n  controllerName: kueue.x-k8s.io/provisioning-request\n  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: a.b}\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: ProvisioningRequestConfig\nmetadata: {name: a}\nspec:\n  managedResources: [nvidia.com/gpu]\n---\n\
         apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\nspec:\n  topologyName: t\n",
    )
    .unwrap();
    let out = raykueue(&["validate", file.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for expected in [
        "Topology/t: spec.levels: the kubernetes.io/hostname label can only be used at the lowest level",
        "AdmissionCheck/a: spec.parameters.name",
        "ProvisioningRequestConfig/a: spec.provisioningClassName: required field",
        "ResourceFlavor/f: spec: at least one nodeLabel is required when topology is set",
    ] {
        assert!(err.contains(expected), "{expected}\n{err}");
    }
}

/// A one-queue profile whose worker requests `example.com/fpga`, which no resource group
/// covers, under the given Kueue `resources` block.
fn fpga_profile(resources: &str) -> String {
    format!(
        "apiVersion: raykueue.io/v1alpha1
kind: Profile
name: fpga
namespace: ray
operators:
  kueue:
    version: 0.19.2
    frameworks: [ray.io/rayjob]
    configuration:
{resources}
flavors:
  - name: default
queues:
  mode: single
  clusterQueues:
    - name: cluster-queue
      resourceGroups:
        - coveredResources: [cpu, memory, nvidia.com/gpu]
          flavors:
            - name: default
              resources:
                - {{name: cpu, nominalQuota: \"32\"}}
                - {{name: memory, nominalQuota: 128Gi}}
                - {{name: nvidia.com/gpu, nominalQuota: \"2\"}}
  localQueues:
    - name: default
      clusterQueue: cluster-queue
ray:
  image: rayproject/ray:2.57.0
workloads:
  - kind: RayJob
    name: train
    queue: default
    entrypoint: python -c \"import ray; ray.init()\"
    head:
      resources: {{cpu: \"1\", memory: 4Gi}}
    workers:
      - name: workers
        replicas: 2
        resources: {{cpu: \"4\", memory: 8Gi, example.com/fpga: \"1\"}}
"
    )
}

/// The codes `check` reports on a profile text, and what `simulate` prints for one `from:
/// train` submission of it (`None` when check refuses it).
fn check_and_simulate(text: &str) -> (Vec<String>, Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile.yaml");
    std::fs::write(&profile, text).unwrap();
    let out = raykueue(&["check", "--profile", profile.to_str().unwrap()]);
    let err = stderr(&out);
    let mut codes: Vec<String> = err
        .match_indices("[RK")
        .map(|(i, _)| err[i + 1..i + 6].to_owned())
        .collect();
    codes.sort();
    codes.dedup();
    if out.status.code() != Some(0) {
        return (codes, None);
    }
    let scenario = dir.path().join("s.yaml");
    std::fs::write(
        &scenario,
        "apiVersion: raykueue.io/v1alpha1\nkind: Scenario\nname: one\nworkloads:\n  - {name: train, queue: default, submitAt: 0, runFor: 60, from: train}\n",
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
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (codes, Some(stdout(&out)))
}

/// Kueue drops excluded resources before counting and counts a transformed one as its outputs
/// (kueue@v0.19.2 `pkg/workload/workload.go` `dropExcludedResources`,
/// `applyResourceTransformations`): RK141 and the simulator do the same.
#[test]
fn excluded_and_transformed_resources_are_counted_as_kueue_counts_them() {
    // Nothing said: the FPGA is covered by no resource group (RK141).
    let (codes, _) = check_and_simulate(&fpga_profile("      waitForPodsReady: {timeout: 30m}"));
    assert!(codes.contains(&"RK141".to_owned()), "{codes:?}");

    // Excluded by prefix: not counted, admitted, and the flavors name no FPGA.
    let (codes, sim) = check_and_simulate(&fpga_profile(
        "      resources: {excludeResourcePrefixes: [example.com/]}",
    ));
    assert!(!codes.contains(&"RK141".to_owned()), "{codes:?}");
    let sim = sim.expect("check passes");
    assert!(sim.contains("\"Admitted\""), "{sim}");
    assert!(!sim.contains("example.com/fpga"), "{sim}");

    // Replaced by one GPU each: counted as nvidia.com/gpu, which the queue covers.
    let (codes, sim) = check_and_simulate(&fpga_profile(
        "      resources:\n        transformations:\n          - {input: example.com/fpga, strategy: Replace, outputs: {nvidia.com/gpu: \"1\"}}",
    ));
    assert!(!codes.contains(&"RK141".to_owned()), "{codes:?}");
    let sim = sim.expect("check passes");
    assert!(sim.contains("\"nvidia.com/gpu\":\"default\""), "{sim}");

    // Replaced by two GPUs each: 2 workers × 2 exceed the queue's 2 GPUs (RK140).
    let (codes, _) = check_and_simulate(&fpga_profile(
        "      resources:\n        transformations:\n          - {input: example.com/fpga, strategy: Replace, outputs: {nvidia.com/gpu: \"2\"}}",
    ));
    assert!(codes.contains(&"RK140".to_owned()), "{codes:?}");
}

/// Both shipped examples' scripts pass the real `gcloud` and `aws` CLIs and the eksctl schema,
/// offline (`../shared/tools/cloud-argcheck`), and so does a queued-provisioning (flex-start)
/// GKE pool's `node-pools create`.
#[test]
fn the_capacity_examples_pass_cloud_argcheck() {
    let tool = repo().join("../shared/tools/cloud-argcheck");
    if !tool.exists() {
        skip(
            "cloud-argcheck capacity",
            "../shared/tools/cloud-argcheck is absent",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (name, profile) in [
        ("tas-gke", "examples/tas-gke"),
        ("provisioning-eks", "examples/provisioning-eks"),
        (
            "dws",
            "tests/fixtures/bad/rk207-block-level-uncertain-on-queued-pool/profile.yaml",
        ),
    ] {
        let out_dir = dir.path().join(name);
        let out = raykueue(&[
            "gen",
            "--profile",
            profile,
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        let infra = out_dir.join("infra");
        let mut files: Vec<String> = std::fs::read_dir(&infra)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "sh")
                    || p.file_name().is_some_and(|n| n == "eksctl-cluster.yaml")
            })
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        files.sort();
        if name == "dws" {
            let up = std::fs::read_to_string(infra.join("up.sh")).unwrap();
            assert!(
                up.contains("--flex-start") && up.contains("--enable-queued-provisioning"),
                "{up}"
            );
        }
        let out = std::process::Command::new(&tool)
            .args(&files)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if out.status.code() == Some(2) {
            skip("cloud-argcheck capacity", text.trim());
            return;
        }
        assert_eq!(out.status.code(), Some(0), "{name}: {text}");
        assert!(
            text.lines()
                .last()
                .is_some_and(|l| l.contains(" passed, 0 failed")),
            "{name}: {text}"
        );
    }
}

/// The table of `simulate` says which checks a workload waited for, and only where they apply
/// (the check's `onFlavors` names the GPU flavor; the CPU-only workload waits for none).
#[test]
fn simulate_names_the_checks_a_workload_waits_for() {
    let scenario = "tests/fixtures/simulate/40-provisioning-check-on-gpu-flavor/scenario.yaml";
    let out = raykueue(&[
        "simulate",
        "--profile",
        "examples/provisioning-eks",
        "--scenario",
        scenario,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let row = |workload: &str| {
        text.lines()
            .find(|l| l.contains("Admitted") && l.contains(&format!(" {workload} ")))
            .unwrap_or_else(|| panic!("{workload} admitted\n{text}"))
            .to_owned()
    };
    assert!(
        row("train").contains("Admitted after checks gpu-capacity"),
        "{text}"
    );
    assert!(!row("notebook").contains("after checks"), "{text}");
}
