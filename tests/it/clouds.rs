//! The EKS and ACK provisioning files against the tools and schemas the clouds define: the eksctl
//! ClusterConfig against eksctl's JSON schema (`../shared/schemas/eksctl/schema.json`, in-process
//! and through `../shared/tools/cloud-argcheck`), the ACK bodies against raykueue's schemas.

use crate::common::{repo, shared, skip};
use crate::infra::{EVIL, Sandbox, assert_clean_bash, scripts, snapshot_calls, text};
use raykueue::api::cloud::alibaba::{self, bodies};
use raykueue::api::cloud::aws::{self, eksctl};
use serde_json::{Value, json};
use std::process::Command;

/// The guide's EKS cluster (KubeRay `aws-eks-gpu-cluster.md`: CPU m5.xlarge 256 GB 0–1, GPU
/// g5.xlarge 1024 GB 0–1) with the autoscaler and Pod Identity switched on.
fn guide_section() -> aws::Aws {
    serde_json::from_value(json!({
        "region": "us-west-2",
        "cluster": {"name": "kuberay-gpu-cluster", "kubernetesVersion": "1.34"},
        "nodePools": [
            {"name": "cpu-node-group", "instanceType": "m5.xlarge", "volumeSize": 256,
             "count": 1, "autoscale": {"min": 0, "max": 1}},
            {"name": "gpu-node-group", "instanceType": "g5.xlarge", "volumeSize": 1024,
             "count": 1, "autoscale": {"min": 0, "max": 1},
             "labels": {"team": "ray"},
             "taints": [{"key": "ray.io/node-type", "value": "worker", "effect": "NoSchedule"}]},
        ],
        "autoscaler": {"version": "9.50.1"},
        "identity": {"permissionPolicyArns": ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]},
    }))
    .unwrap()
}

fn guide_config() -> Value {
    eksctl::cluster_config(
        &guide_section(),
        Some(eksctl::RayIdentity {
            namespace: "ray",
            service_account: "ray-worker",
        }),
    )
}

/// eksctl's schema, compiled. Its `$ref`s name Go packages (`#/definitions/github.com|aws|…`);
/// `|` is not allowed in a URI reference, so each is percent-encoded (`%7C`), which JSON
/// Pointer resolution decodes back to the same definition.
fn eksctl_schema() -> Option<jsonschema::Validator> {
    fn encode_refs(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, child) in m.iter_mut() {
                    match child {
                        Value::String(s) if k == "$ref" => *s = s.replace('|', "%7C"),
                        _ => encode_refs(child),
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(encode_refs),
            _ => {}
        }
    }
    let dir = shared()?;
    let text = std::fs::read_to_string(dir.join("schemas/eksctl/schema.json")).ok()?;
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    encode_refs(&mut schema);
    Some(jsonschema::validator_for(&schema).unwrap())
}

#[test]
fn the_eksctl_cluster_config_passes_eksctls_schema() {
    let Some(schema) = eksctl_schema() else {
        skip(
            "eksctl schema",
            "../shared/schemas/eksctl/schema.json is absent",
        );
        return;
    };
    // The YAML as written to the bundle, read back: what eksctl would read.
    let yaml = raykueue::api::base::yaml::to_yaml(&guide_config()).unwrap();
    let read: Value = serde_saphyr::from_str(&yaml).unwrap();
    let errors: Vec<String> = schema
        .iter_errors(&read)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{yaml}");

    // The check can fail: the API's enum spelling, an unknown field and a missing region are
    // what eksctl's schema refuses (`amiFamily: Bottlerocket` is its spelling).
    let mut api_spelling = read.clone();
    api_spelling["managedNodeGroups"][1]["amiFamily"] = json!("BOTTLEROCKET_x86_64_NVIDIA");
    let mut unknown = read.clone();
    unknown["managedNodeGroups"][0]["diskSize"] = json!(256);
    let mut no_region = read;
    no_region["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("region");
    for bad in [api_spelling, unknown, no_region] {
        assert!(!schema.is_valid(&bad), "accepted {bad}");
    }
}

#[test]
fn the_eksctl_cluster_config_passes_cloud_argcheck() {
    let tool = repo().join("../shared/tools/cloud-argcheck");
    if !tool.exists() {
        skip(
            "cloud-argcheck eksctl",
            "../shared/tools/cloud-argcheck is absent",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("eksctl-cluster.yaml");
    std::fs::write(
        &file,
        raykueue::api::base::yaml::to_yaml(&guide_config()).unwrap(),
    )
    .unwrap();
    let out = Command::new(&tool).arg(&file).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() == Some(2) {
        skip("cloud-argcheck eksctl", text.trim());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.trim_end().ends_with("1 passed, 0 failed"), "{text}");

    // A file eksctl would refuse fails the tool too.
    let mut bad = guide_config();
    bad["managedNodeGroups"][0]["amiFamily"] = json!("AL2023_x86_64_NVIDIA");
    std::fs::write(&file, raykueue::api::base::yaml::to_yaml(&bad).unwrap()).unwrap();
    let out = Command::new(&tool).arg(&file).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_guides_gpu_taint_is_reported_as_blocking_the_device_plugin() {
    // The guide's `ray.io/node-type` taint on an AmazonLinux2023 GPU group keeps eksctl's device
    // plugin off the node; raykueue's own `nvidia.com/gpu` taint does not.
    let section = guide_section();
    let blocking = aws::taints_blocking_device_plugin(&section.node_pools[1]);
    assert_eq!(blocking.len(), 1);
    assert_eq!(blocking[0].key.as_str(), "ray.io/node-type");
    let config = guide_config();
    let taints = config["managedNodeGroups"][1]["taints"].as_array().unwrap();
    assert!(taints.iter().any(|t| t["key"] == "nvidia.com/gpu"));
}

/// The ACK section the README's example uses: a CPU pool and a GPU pool autoscaled from 0, RRSA.
fn ack_section() -> alibaba::Alibaba {
    serde_json::from_value(json!({
        "region": "cn-hangzhou",
        "zone": "cn-hangzhou-k",
        "vpc": {"name": "kuberay-vpc", "vswitchName": "kuberay-vsw"},
        "cluster": {"name": "kuberay-gpu-cluster"},
        "nodePools": [
            {"name": "cpu-pool", "instanceType": "ecs.g7.xlarge", "count": 1},
            {"name": "gpu-pool", "instanceType": "ecs.gn7i-c8g1.2xlarge", "autoscale": {"min": 0, "max": 1}},
        ],
        "identity": {"roleName": "kuberay-data"},
    }))
    .unwrap()
}

/// `jq --arg vpc … --arg vsw … PROGRAM` on `body`, as up.sh runs it.
fn jq(program: &str, body: &Value) -> Option<Value> {
    use std::io::Write;
    let mut child = Command::new("jq")
        .args([
            "--arg",
            "vpc",
            "vpc-bp1example",
            "--arg",
            "vsw",
            "vsw-bp1example",
            program,
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "jq {program} failed");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn ack_bodies_filled_by_up_sh_pass_the_schemas() {
    let a = ack_section();
    let cluster_schema =
        jsonschema::validator_for(&serde_json::from_str(bodies::CREATE_CLUSTER_SCHEMA).unwrap())
            .unwrap();
    let pool_schema =
        jsonschema::validator_for(&serde_json::from_str(bodies::CREATE_NODE_POOL_SCHEMA).unwrap())
            .unwrap();
    let file = bodies::cluster_body_file(&a);
    // The file alone lacks the IDs the cloud assigns: the schema says so.
    assert!(!cluster_schema.is_valid(&file));
    let Some(filled) = jq(bodies::FILL_CLUSTER_IDS, &file) else {
        skip("ACK bodies through jq", "jq is not installed");
        return;
    };
    let errors: Vec<String> = cluster_schema
        .iter_errors(&filled)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{filled:#}");
    assert_eq!(
        filled,
        bodies::cluster_body(&a, "vpc-bp1example", "vsw-bp1example")
    );
    for pool in &a.node_pools {
        let filled = jq(
            bodies::FILL_NODE_POOL_IDS,
            &bodies::node_pool_body_file(pool),
        )
        .unwrap();
        let errors: Vec<String> = pool_schema
            .iter_errors(&filled)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}\n{filled:#}", pool.name);
        assert_eq!(filled, bodies::node_pool_body(pool, "vsw-bp1example"));
    }
}

// ---- Offline runs of the EKS and ACK scripts ---------------------------------------------

/// Records argv like the AKS stubs; `eks describe-cluster` fails (not found) unless
/// `STUB_EXISTS` is set; the Pod Identity look-up finds an association.
const AWS: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' aws "$@"; printf '\x1e'; } >>"$STUB_LOG"
query="" prev=""
for a in "$@"; do
  [[ $prev == --query ]] && query=$a
  prev=$a
done
case "$1 $2" in
  "eks describe-cluster")
    # The cluster eksctl made, as the managed collector's set-up asks after it.
    case $query in
      cluster.accessConfig.authenticationMode) echo "${STUB_AUTH_MODE:-API_AND_CONFIG_MAP}"; exit 0 ;;
      cluster.arn) echo arn:aws:eks:us-west-2:123456789012:cluster/stub; exit 0 ;;
      cluster.resourcesVpcConfig.subnetIds) printf 'subnet-a\tsubnet-b\n'; exit 0 ;;
      cluster.resourcesVpcConfig.clusterSecurityGroupId) echo sg-stub; exit 0 ;;
    esac
    [[ -n ${STUB_EXISTS:-} ]] && exit 0
    echo "An error occurred (ResourceNotFoundException) when calling the DescribeCluster operation: No cluster found" >&2
    exit 254 ;;
  "eks list-pod-identity-associations") echo a-0123456789abcdef ;;
  "amp create-workspace") echo ws-stub ;;
  "amp describe-workspace") echo arn:aws:aps:us-west-2:123456789012:workspace/ws-stub ;;
  "amp create-scraper") echo s-stub ;;
  "amp describe-scraper") echo ACTIVE ;;
  "amp list-scrapers") [[ $query == *statusCode* ]] && echo ACTIVE ;;
  "amp describe-rule-groups-namespace") exit 254 ;;
  "sts get-caller-identity") printf '123456789012\tarn:aws:iam::123456789012:user/stub\tAIDASTUB\n' ;;
esac
exit 0
"#;

const EKSCTL: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' eksctl "$@"; printf '\x1e'; } >>"$STUB_LOG"
"#;

/// Answers the ACK and VPC calls up.sh and down.sh make with the JSON shapes of the API
/// reference; with `STUB_EXISTS` every look-up finds its resource (the cluster in state
/// `$STUB_CLUSTER_STATE`, default `running`). A call whose `$1 $2 $3` starts with `$STUB_FAIL`
/// fails as the CLI does on bad credentials; DELETE of a cluster already deleting is refused.
const ALIYUN: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' aliyun "$@"; printf '\x1e'; } >>"$STUB_LOG"
exists=${STUB_EXISTS:-}
if [[ -n ${STUB_FAIL:-} && "$1 $2 ${3:-}" == "$STUB_FAIL"* ]]; then
  printf 'ERROR: SDK.ServerError\nErrorCode: InvalidAccessKeyId.NotFound\nMessage: Specified access key is not found.\n' >&2
  exit 1
fi
case "$1 $2 ${3:-}" in
  "vpc DescribeVpcs "*) if [[ -n $exists ]]; then echo '{"Vpcs":{"Vpc":[{"VpcId":"vpc-stub"}]}}'; else echo '{"Vpcs":{"Vpc":[]}}'; fi ;;
  "vpc CreateVpc "*) echo '{"VpcId":"vpc-stub"}' ;;
  "vpc DescribeVpcAttribute "*) echo '{"Status":"Available"}' ;;
  "vpc DescribeVSwitches "*) if [[ -n $exists ]]; then echo '{"VSwitches":{"VSwitch":[{"VSwitchId":"vsw-stub"}]}}'; else echo '{"VSwitches":{"VSwitch":[]}}'; fi ;;
  "vpc CreateVSwitch "*) echo '{"VSwitchId":"vsw-stub"}' ;;
  "vpc DescribeVSwitchAttributes "*) echo '{"Status":"Available"}' ;;
  "cs GET /api/v1/clusters") if [[ -n $exists ]]; then echo '{"clusters":[{"name":"kuberay-gpu-cluster","cluster_id":"c-stub","state":"'"${STUB_CLUSTER_STATE:-running}"'"}]}'; else echo '{"clusters":[]}'; fi ;;
  "cs POST /clusters") echo '{"cluster_id":"c-stub"}' ;;
  "cs GET /clusters/c-stub") echo '{"state":"running"}' ;;
  "cs GET /clusters/c-stub/nodepools") if [[ -n $exists ]]; then echo '{"nodepools":[{"nodepool_info":{"name":"cpu-pool"}},{"nodepool_info":{"name":"gpu-pool"}}]}'; else echo '{"nodepools":[]}'; fi ;;
  "cs POST /clusters/c-stub/nodepools") echo '{"nodepool_id":"np-stub"}' ;;
  "cs GET /k8s/c-stub/user_config") echo '{"config":"apiVersion: v1\nkind: Config\n"}' ;;
  "cs GET /clusters/c-stub/components/arms-prometheus/instance") [[ -n $exists ]] || { echo "ERROR: SDK.ServerError ErrorCode: ErrAddonNotFound" >&2; exit 1; } ;;
  "cs POST /clusters/c-stub/components/install") echo '{}' ;;
  "cs DELETE /clusters/c-stub")
    if [[ ${STUB_CLUSTER_STATE:-} == deleting ]]; then echo "ERROR: SDK.ServerError ErrorCode: StateConflict" >&2; exit 1; fi
    echo '{}' ;;
  *) echo "aliyun stub: unexpected call: $*" >&2; exit 1 ;;
esac
"#;

pub(crate) fn cloud_sandbox(profile: &str) -> Sandbox {
    let sb = Sandbox::new(profile);
    for (name, text) in [("aws", AWS), ("eksctl", EKSCTL), ("aliyun", ALIYUN)] {
        sb.add_stub(name, text);
    }
    sb
}

/// The calls that create something in the cloud.
fn cloud_creates(calls: &[Vec<String>]) -> Vec<String> {
    calls
        .iter()
        .filter(|c| {
            matches!(c[0].as_str(), "eksctl" | "aliyun")
                && c.iter().any(|w| {
                    w == "create" || w == "POST" || w.starts_with("Create") || w == "DELETE"
                })
        })
        .map(|c| c[..3.min(c.len())].join(" "))
        .collect()
}

fn jq_available() -> bool {
    Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// up.sh, verify.sh and down.sh of the EKS and ACK profiles against stub `eksctl`, `aws`,
/// `aliyun`, `kubectl` and `helm`; every command is in `golden/calls/<profile>-*.snap`. A
/// re-run when everything exists creates nothing.
#[test]
fn eks_and_ack_scripts_run_offline_and_rerun_without_creating() {
    if !jq_available() {
        skip("EKS/ACK offline runs", "jq is not installed");
        return;
    }
    for profile in ["kuberay-gpu-eks", "kuberay-gpu-ack"] {
        let sb = cloud_sandbox(profile);
        let (up, calls) = sb.run("up.sh", &[], &[]);
        assert_eq!(up.status.code(), Some(0), "{profile} up.sh\n{}", text(&up));
        assert!(
            !cloud_creates(&calls).is_empty(),
            "{profile}: a fresh run creates"
        );
        snapshot_calls(&format!("{profile}-up"), &sb.transcript(&calls));

        let (verify, calls) = sb.run("verify.sh", &[], &[]);
        assert_eq!(
            verify.status.code(),
            Some(0),
            "{profile}\n{}",
            text(&verify)
        );
        assert!(
            calls
                .iter()
                .all(|c| c[0] == "kubectl" || (c[0] == "aws" && c[2].starts_with("list-"))),
            "verify only reads: {calls:?}"
        );
        snapshot_calls(&format!("{profile}-verify"), &sb.transcript(&calls));

        let (down, calls) = sb.run("down.sh", &[], &[]);
        assert_eq!(down.status.code(), Some(0), "{profile}\n{}", text(&down));
        assert!(
            calls.iter().all(|c| c[0] == "kubectl"),
            "{profile}: the cluster is kept"
        );
        let mut transcript = format!("# down.sh\n{}", sb.transcript(&calls));
        let (gone, calls) = sb.run("down.sh", &["--delete-cluster"], &[("STUB_EXISTS", "1")]);
        assert_eq!(gone.status.code(), Some(0), "{profile}\n{}", text(&gone));
        assert!(
            calls
                .iter()
                .any(|c| c.iter().any(|w| w == "delete" || w == "DELETE")),
            "{calls:?}"
        );
        transcript.push_str(&format!(
            "# down.sh --delete-cluster\n{}",
            sb.transcript(&calls)
        ));
        snapshot_calls(&format!("{profile}-down"), &transcript);

        // smoke.sh is cloud-neutral (kubectl only): the same run on every cloud.
        let (smoke, calls) = sb.run("smoke.sh", &[], &[]);
        assert_eq!(smoke.status.code(), Some(0), "{profile}\n{}", text(&smoke));
        assert!(calls.iter().all(|c| c[0] == "kubectl"), "{calls:?}");
        snapshot_calls(&format!("{profile}-smoke"), &sb.transcript(&calls));

        let (again, calls) = sb.run("up.sh", &[], &[("STUB_EXISTS", "1")]);
        assert_eq!(again.status.code(), Some(0), "{profile}\n{}", text(&again));
        assert_eq!(cloud_creates(&calls), Vec::<String>::new(), "{profile}");
        assert!(
            calls.iter().any(|c| c[0] == "kubectl" && c[1] == "apply"),
            "{profile}"
        );
    }
}

/// The bodies the ACK up.sh sends (`--body` of `aliyun cs POST`) pass raykueue's schemas, and
/// the console-only step is printed with its reason.
#[test]
fn ack_up_sends_schema_valid_bodies_and_prints_the_manual_step() {
    if !jq_available() {
        skip("ACK bodies sent by up.sh", "jq is not installed");
        return;
    }
    let sb = cloud_sandbox("kuberay-gpu-ack");
    let (up, calls) = sb.run("up.sh", &[], &[]);
    let out = text(&up);
    assert_eq!(up.status.code(), Some(0), "{out}");
    let cluster_schema =
        jsonschema::validator_for(&serde_json::from_str(bodies::CREATE_CLUSTER_SCHEMA).unwrap())
            .unwrap();
    let pool_schema =
        jsonschema::validator_for(&serde_json::from_str(bodies::CREATE_NODE_POOL_SCHEMA).unwrap())
            .unwrap();
    let mut sent = Vec::new();
    for c in calls.iter().filter(|c| c[0] == "aliyun" && c[2] == "POST") {
        let body = &c[c.iter().position(|w| w == "--body").unwrap() + 1];
        let body: Value = serde_json::from_str(body).unwrap();
        let schema = if c[3] == "/clusters" {
            &cluster_schema
        } else {
            &pool_schema
        };
        let errors: Vec<String> = schema.iter_errors(&body).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}\n{body:#}", c[3]);
        sent.push(body);
    }
    assert_eq!(sent.len(), 3, "the cluster and two pools");
    assert_eq!(sent[0]["vpcid"], "vpc-stub");
    assert_eq!(sent[2]["auto_scaling"]["type"], "gpu");
    assert_eq!(sent[2]["auto_scaling"]["min_instances"], 0);
    assert!(out.contains("MANUAL STEP"), "{out}");
    assert!(
        out.contains("Node Scaling") && out.contains("no CLI command"),
        "{out}"
    );
}

// ---- ACK faults (issue 40) ---------------------------------------------------------------

/// A `sleep` that returns at once, so a poll loop that never stops shows as many calls instead
/// of a hung test.
pub(crate) const SLEEP: &str = "#!/usr/bin/env bash\nexit 0\n";

fn ack_sandbox() -> Option<Sandbox> {
    if !jq_available() {
        skip("ACK faults", "jq is not installed");
        return None;
    }
    let sb = cloud_sandbox("kuberay-gpu-ack");
    sb.add_stub("sleep", SLEEP);
    Some(sb)
}

fn aliyun_calls<'a>(calls: &'a [Vec<String>], words: &str) -> Vec<&'a Vec<String>> {
    let words: Vec<&str> = words.split(' ').collect();
    calls
        .iter()
        .filter(|c| c[0] == "aliyun" && c.len() > words.len() && c[1..=words.len()] == words[..])
        .collect()
}

/// jq failing to build a request body (here: a corrupt ack/create-cluster.json) stops up.sh
/// naming jq; no request goes out with an empty body.
#[test]
fn ack_faults_a_body_jq_cannot_build_is_never_sent() {
    let Some(sb) = ack_sandbox() else { return };
    std::fs::write(
        sb.bundle().join("infra/ack/create-cluster.json"),
        "{not json",
    )
    .unwrap();
    let (up, calls) = sb.run("up.sh", &[], &[]);
    let out = text(&up);
    assert_ne!(up.status.code(), Some(0), "{out}");
    assert!(aliyun_calls(&calls, "cs POST").is_empty(), "{calls:?}");
    assert!(
        out.contains("error: jq cannot build the request body from")
            && out.contains("create-cluster.json"),
        "{out}"
    );
}

/// A look-up that fails for another reason than "not found" (bad credentials) stops up.sh with
/// the CLI's message and the call named; nothing is created as if it were absent.
#[test]
fn ack_faults_a_failed_look_up_stops_up_before_any_create() {
    let Some(sb) = ack_sandbox() else { return };
    for (fail, named) in [
        ("vpc DescribeVpcs", "aliyun vpc DescribeVpcs failed"),
        (
            "vpc DescribeVSwitches",
            "aliyun vpc DescribeVSwitches failed",
        ),
        (
            "cs GET /api/v1/clusters",
            "aliyun cs GET /api/v1/clusters failed",
        ),
        (
            "cs GET /clusters/c-stub/nodepools",
            "aliyun cs GET /clusters/c-stub/nodepools failed",
        ),
    ] {
        let (up, calls) = sb.run("up.sh", &[], &[("STUB_EXISTS", "1"), ("STUB_FAIL", fail)]);
        let out = text(&up);
        assert_eq!(up.status.code(), Some(1), "{fail}\n{out}");
        assert!(
            out.contains("InvalidAccessKeyId.NotFound"),
            "{fail}: the CLI's message\n{out}"
        );
        assert!(out.contains(&format!("error: {named}")), "{fail}\n{out}");
        assert_eq!(cloud_creates(&calls), Vec::<String>::new(), "{fail}");
        assert!(
            calls.iter().all(|c| c[0] != "kubectl" && c[0] != "helm"),
            "{fail}: {calls:?}"
        );
    }
}

/// wait_for stops at the first failed probe (the aliyun call, not a not-ready status) instead
/// of polling 160 times; a not-ready status is polled again.
#[test]
fn ack_faults_wait_for_stops_at_a_failed_probe() {
    let Some(sb) = ack_sandbox() else { return };
    let (up, calls) = sb.run(
        "up.sh",
        &[],
        &[
            ("STUB_EXISTS", "1"),
            ("STUB_FAIL", "vpc DescribeVpcAttribute"),
        ],
    );
    let out = text(&up);
    assert_eq!(up.status.code(), Some(1), "{out}");
    assert_eq!(
        aliyun_calls(&calls, "vpc DescribeVpcAttribute").len(),
        1,
        "{out}"
    );
    assert!(out.contains("InvalidAccessKeyId.NotFound"), "{out}");
    assert!(
        out.contains("error: cannot read the status of VPC vpc-stub"),
        "{out}"
    );
    assert!(calls.iter().all(|c| c[0] == "aliyun"), "{calls:?}");
}

/// verify.sh fails, naming the command, when kubectl cannot read what the RRSA check needs;
/// it is not reported as a missing label.
#[test]
fn ack_faults_verify_fails_naming_the_kubectl_call_that_failed() {
    let Some(sb) = ack_sandbox() else { return };
    let kubectl = crate::infra::KUBECTL.replacen(
        "args=\" $* \"\n",
        "args=\" $* \"\n[[ $args == *\" get namespace \"* ]] && { echo 'error: You must be logged in to the server (Unauthorized)' >&2; exit 1; }\n",
        1,
    );
    assert_ne!(kubectl, crate::infra::KUBECTL);
    sb.add_stub("kubectl", &kubectl);
    let (verify, _) = sb.run("verify.sh", &[], &[]);
    let out = text(&verify);
    assert_eq!(verify.status.code(), Some(1), "{out}");
    assert!(out.contains("FAILED: kubectl get namespace"), "{out}");
    assert!(out.contains("Unauthorized"), "{out}");
}

/// down.sh --delete-cluster run again succeeds: after the cluster is gone (no DELETE), and
/// while its deletion is under way (no second DELETE, which ACK would refuse); a failed
/// look-up is not "gone".
#[test]
fn ack_faults_down_delete_cluster_is_rerunnable() {
    let Some(sb) = ack_sandbox() else { return };
    let (gone, calls) = sb.run("down.sh", &["--delete-cluster"], &[]);
    assert_eq!(gone.status.code(), Some(0), "{}", text(&gone));
    assert!(aliyun_calls(&calls, "cs DELETE").is_empty(), "{calls:?}");
    let (deleting, calls) = sb.run(
        "down.sh",
        &["--delete-cluster"],
        &[("STUB_EXISTS", "1"), ("STUB_CLUSTER_STATE", "deleting")],
    );
    assert_eq!(deleting.status.code(), Some(0), "{}", text(&deleting));
    assert!(aliyun_calls(&calls, "cs DELETE").is_empty(), "{calls:?}");
    assert!(
        text(&deleting).contains("already deleting"),
        "{}",
        text(&deleting)
    );
    let (failed, calls) = sb.run(
        "down.sh",
        &["--delete-cluster"],
        &[
            ("STUB_EXISTS", "1"),
            ("STUB_FAIL", "cs GET /api/v1/clusters"),
        ],
    );
    let out = text(&failed);
    assert_eq!(failed.status.code(), Some(1), "{out}");
    assert!(
        out.contains("error: aliyun cs GET /api/v1/clusters failed")
            && out.contains("InvalidAccessKeyId.NotFound"),
        "{out}"
    );
    assert!(calls.iter().all(|c| c[0] == "aliyun"), "{calls:?}");
}

/// Every `aws` command of the EKS scripts and the generated eksctl file, through the real AWS
/// CLI and eksctl's schema (`../shared/tools/cloud-argcheck`).
#[test]
fn eks_bundle_passes_cloud_argcheck() {
    let tool = repo().join("../shared/tools/cloud-argcheck");
    if !tool.exists() {
        skip(
            "cloud-argcheck EKS bundle",
            "../shared/tools/cloud-argcheck is absent",
        );
        return;
    }
    let sb = Sandbox::new("kuberay-gpu-eks");
    let infra = sb.bundle().join("infra");
    let out = Command::new(&tool)
        .args(["up.sh", "verify.sh", "down.sh", "eksctl-cluster.yaml"].map(|f| infra.join(f)))
        .output()
        .unwrap();
    let t = text(&out);
    if out.status.code() == Some(2) {
        skip("cloud-argcheck EKS bundle", t.trim());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{t}");
    let last = t.trim_end().lines().last().unwrap_or_default();
    let passed: u32 = last.split_whitespace().next().unwrap().parse().unwrap();
    assert!(last.contains(" 0 failed"), "{t}");
    // sts, describe-cluster, update-kubeconfig, list-pod-identity-associations, the file.
    assert!(passed >= 5, "{t}");
}

// ---- Injection -----------------------------------------------------------------------------

/// The shipped profile as JSON, with `extra` merged into its provider section.
fn shipped_json(profile: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(format!("profiles/{profile}.yaml"))).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

/// Every field of the `aws:` and `alibaba:` sections that reaches a script or a file the
/// cloud's tools read, as a JSON pointer into the shipped profile (with the labels, taints and
/// driver pin added by [`injection_base`]).
const EKS_FIELDS: &[&str] = &[
    "/aws/region",
    "/aws/cluster/name",
    "/aws/cluster/kubernetesVersion",
    "/aws/nodePools/0/name",
    "/aws/nodePools/0/instanceType",
    "/aws/nodePools/1/name",
    "/aws/nodePools/1/instanceType",
    "/aws/nodePools/1/labels/team",
    "/aws/nodePools/1/taints/0/key",
    "/aws/nodePools/1/taints/0/value",
    "/aws/autoscaler/repo",
    "/aws/autoscaler/chart",
    "/aws/autoscaler/version",
    "/aws/identity/permissionPolicyArns/0",
];
const ACK_FIELDS: &[&str] = &[
    "/alibaba/region",
    "/alibaba/zone",
    "/alibaba/vpc/name",
    "/alibaba/vpc/cidr",
    "/alibaba/vpc/vswitchName",
    "/alibaba/vpc/vswitchCidr",
    "/alibaba/cluster/name",
    "/alibaba/cluster/kubernetesVersion",
    "/alibaba/cluster/containerCidr",
    "/alibaba/cluster/serviceCidr",
    "/alibaba/nodePools/0/name",
    "/alibaba/nodePools/0/instanceType",
    "/alibaba/nodePools/1/name",
    "/alibaba/nodePools/1/instanceType",
    "/alibaba/nodePools/1/labels/team",
    "/alibaba/nodePools/1/taints/0/key",
    "/alibaba/nodePools/1/taints/0/value",
    "/alibaba/nodePools/1/driverVersion",
    "/alibaba/identity/roleName",
];

fn injection_base(profile: &str) -> Value {
    let mut p = shipped_json(profile);
    let section = if profile.ends_with("eks") {
        "aws"
    } else {
        "alibaba"
    };
    let pool = &mut p[section]["nodePools"][1];
    pool["labels"] = json!({"team": "ray"});
    pool["taints"] = json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]);
    if section == "aws" {
        p[section]["autoscaler"]["repo"] = json!("https://kubernetes.github.io/autoscaler");
        p[section]["autoscaler"]["chart"] = json!("cluster-autoscaler");
        p[section]["autoscaler"]["version"] = json!("9.53.0");
    } else {
        p[section]["vpc"]["cidr"] = json!("192.168.0.0/16");
        p[section]["vpc"]["vswitchCidr"] = json!("192.168.0.0/20");
        p[section]["cluster"]["containerCidr"] = json!("172.20.0.0/16");
        p[section]["cluster"]["serviceCidr"] = json!("172.21.0.0/20");
        p[section]["nodePools"][1]["driverVersion"] = json!("550.144.03");
    }
    p
}

#[test]
fn the_schema_refuses_shell_syntax_in_every_eks_and_ack_field_that_reaches_a_script() {
    let dir = tempfile::tempdir().unwrap();
    for (profile, fields) in [
        ("kuberay-gpu-eks", EKS_FIELDS),
        ("kuberay-gpu-ack", ACK_FIELDS),
    ] {
        let base = injection_base(profile);
        let path = dir.path().join("profile.yaml");
        std::fs::write(&path, serde_json::to_string(&base).unwrap()).unwrap();
        let ok = crate::common::raykueue(&["check", "--profile", path.to_str().unwrap()]);
        assert_eq!(
            ok.status.code(),
            Some(0),
            "{profile}: the base passes\n{}",
            text(&ok)
        );
        for pointer in fields {
            for evil in EVIL {
                let mut p = base.clone();
                *p.pointer_mut(pointer)
                    .unwrap_or_else(|| panic!("{pointer} is in the base profile")) = json!(evil);
                std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
                let out = crate::common::raykueue(&["check", "--profile", path.to_str().unwrap()]);
                assert_eq!(out.status.code(), Some(1), "{pointer} = {evil:?} accepted");
                assert!(
                    crate::common::stderr(&out).contains("profile.yaml:"),
                    "{pointer}: located diagnostic"
                );
            }
        }
    }
}

/// Past the schema (a typed profile built directly), the EKS and ACK scripts still treat every
/// value as one inert word: nothing runs, and the values reach the commands, files and messages
/// intact.
#[test]
fn eks_and_ack_values_that_bypass_the_schema_stay_inert() {
    if !jq_available() {
        skip("EKS/ACK injection runs", "jq is not installed");
        return;
    }
    for (profile, fields) in [
        ("kuberay-gpu-eks", EKS_FIELDS),
        ("kuberay-gpu-ack", ACK_FIELDS),
    ] {
        let mut p = injection_base(profile);
        let mut expected = Vec::new();
        for (i, pointer) in fields.iter().enumerate() {
            if pointer.ends_with("/labels/team") {
                continue;
            }
            let evil = format!("{}-{i}", EVIL[i % EVIL.len()]);
            *p.pointer_mut(pointer).unwrap() = json!(evil);
            expected.push((*pointer, evil));
        }
        let section = if profile.ends_with("eks") {
            "aws"
        } else {
            "alibaba"
        };
        p[section]["nodePools"][1]["labels"] = json!({"k$(touch pwned-lk)": "v`touch pwned-lv`"});
        let typed: raykueue::api::profile::Profile =
            raykueue::api::profile::unchecked(|| serde_json::from_value(p)).unwrap();
        let files = crate::common::infra_text(&typed);
        let sb = Sandbox::from_files(&files);
        for (name, text) in [("aws", AWS), ("eksctl", EKSCTL), ("aliyun", ALIYUN)] {
            sb.add_stub(name, text);
        }
        assert_clean_bash(&scripts(&sb.bundle()), &["SC2016"]);
        let mut all_words = Vec::new();
        for (script, args, exists) in [
            ("up.sh", &[][..], ""),
            ("up.sh", &[], "1"),
            ("verify.sh", &[], "1"),
            ("down.sh", &["--delete-cluster"], "1"),
        ] {
            let (out, calls) = sb.run(script, args, &[("STUB_EXISTS", exists)]);
            // The ACK stub knows only the shipped cluster's name; with an evil one, down.sh
            // finds nothing to delete, which is fine here.
            assert!(
                out.status.code() == Some(0) || script == "verify.sh",
                "{profile} {script}\n{}",
                text(&out)
            );
            all_words.extend(calls.into_iter().flatten());
            // Values that are only printed (the RRSA role in up.sh's note) count too.
            all_words.push(text(&out));
        }
        let pwned: Vec<String> = std::fs::read_dir(sb.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pwned"))
            .collect();
        assert!(
            pwned.is_empty(),
            "{profile}: injected commands ran: {pwned:?}"
        );
        // Every value arrives intact in a command argument or in a file the tools read.
        // The strings of the files the cloud's tools read (eksctl's YAML, ACK's JSON bodies),
        // parsed back, so quoting and escaping do not matter.
        let mut in_files = Vec::new();
        for (name, content) in &files {
            if std::path::Path::new(name)
                .extension()
                .is_some_and(|e| e == "json")
            {
                strings(&serde_json::from_str(content).unwrap(), &mut in_files);
            } else if name.ends_with("eksctl-cluster.yaml") {
                strings(&serde_saphyr::from_str(content).unwrap(), &mut in_files);
            }
        }
        for (pointer, value) in &expected {
            let in_call = all_words.iter().any(|w| w.contains(value.as_str()));
            let in_file = in_files.iter().any(|w| w.contains(value.as_str()));
            assert!(
                in_call || in_file,
                "{profile}: {pointer} = {value:?} reached nothing intact"
            );
        }
    }
}

/// Every string (and map key) of a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.iter().for_each(|(k, x)| {
            out.push(k.clone());
            strings(x, out);
        }),
        _ => {}
    }
}
