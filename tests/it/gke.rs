//! GKE (`gcp:` profiles): the KubeRay GKE guide's commands with its values, the recorded
//! `gcloud`/`kubectl`/`helm` calls of up/verify/down (`golden/calls/<profile>-*.snap`),
//! idempotent re-runs, shellcheck, `../shared/tools/cloud-argcheck` (the real gcloud, offline),
//! the injection corpus for every `gcp` field that reaches a script, and `team-gke`, whose
//! platform objects differ from `team`'s only where the cloud requires it.

use crate::common::{raykueue, repo, skip, stderr, stdout};
use crate::infra::{
    EVIL, Sandbox, assert_clean_bash, scripts, shipped, snapshot_calls, text, write_profile,
};
use serde_json::{Value, json};
use std::fs;
use std::process::Command;

const GKE: &[&str] = &["kuberay-gpu-gke", "profiles/examples/team-gke.yaml"];

/// `profiles/examples/team-gke.yaml` → `team-gke`.
fn short(profile: &str) -> &str {
    profile
        .rsplit('/')
        .next()
        .unwrap_or(profile)
        .trim_end_matches(".yaml")
}

/// The command's words up to its first flag, and its flags with their values (`--a=b` and
/// `--a b` alike).
fn parse(words: &[String]) -> (Vec<String>, Vec<(String, Option<String>)>) {
    let cmd: Vec<String> = words
        .iter()
        .take_while(|w| !w.starts_with('-'))
        .cloned()
        .collect();
    let mut flags = Vec::new();
    let rest = &words[cmd.len()..];
    let mut i = 0;
    while i < rest.len() {
        if let Some((f, v)) = rest[i].split_once('=').filter(|(f, _)| f.starts_with("--")) {
            flags.push((f.to_owned(), Some(v.to_owned())));
            i += 1;
            continue;
        }
        let value = rest.get(i + 1).filter(|v| !v.starts_with("--")).cloned();
        flags.push((rest[i].clone(), value.clone()));
        i += if value.is_some() { 2 } else { 1 };
    }
    (cmd, flags)
}

/// The guide's command (as written there) was called: same words, each of its flags with its
/// value, in any order and spelling (`--zone=x` or `--zone x`).
fn called(calls: &[Vec<String>], guide: &str) -> bool {
    let words: Vec<String> = guide.split_whitespace().map(str::to_owned).collect();
    let (cmd, flags) = parse(&words);
    calls.iter().any(|c| {
        let (c_cmd, c_flags) = parse(c);
        c_cmd == cmd && flags.iter().all(|f| c_flags.contains(f))
    })
}

/// gcloud calls that create or delete something, up to their verb (`gcloud container clusters
/// create`): the resource's name follows the verb in gcloud's grammar.
fn creates(calls: &[Vec<String>]) -> Vec<String> {
    calls
        .iter()
        .filter(|c| c[0] == "gcloud")
        .filter_map(|c| {
            let verb = c.iter().position(|w| w == "create" || w == "delete")?;
            c[..verb]
                .iter()
                .all(|w| !w.starts_with('-'))
                .then(|| c[..=verb].join(" "))
        })
        .collect()
}

#[test]
fn kuberay_gpu_gke_runs_the_guides_commands_with_its_values() {
    let sb = Sandbox::new("kuberay-gpu-gke");
    let (out, calls) = sb.run("up.sh", &[], &[("STUB_NO_GPU_NODES", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // ray-project/ray doc/source/cluster/kubernetes/user-guides/gcp-gke-gpu-cluster.md, with
    // the plain L4 type (`nvidia-l4`) instead of the guide's `nvidia-l4-vws`, the RTX
    // Virtual Workstation variant (docs/providers.md, GKE).
    for guide in [
        "gcloud container clusters create kuberay-gpu-cluster --num-nodes=1 --min-nodes 0 --max-nodes 1 --enable-autoscaling --zone=us-west1-b --machine-type e2-standard-4",
        "gcloud container node-pools create gpu-node-pool --accelerator type=nvidia-l4,count=1,gpu-driver-version=default --zone us-west1-b --cluster kuberay-gpu-cluster --num-nodes 1 --min-nodes 0 --max-nodes 1 --enable-autoscaling --machine-type g2-standard-4",
        "gcloud container clusters get-credentials kuberay-gpu-cluster --zone us-west1-b",
    ] {
        assert!(
            called(&calls, guide),
            "not run: {guide}\n{}",
            sb.transcript(&calls)
        );
    }
    // Workload Identity Federation: the pool, the GSA binding, the annotation.
    for wif in [
        "gcloud container clusters create kuberay-gpu-cluster --workload-pool my-project.svc.id.goog",
        "gcloud container node-pools create gpu-node-pool --workload-metadata GKE_METADATA",
        "gcloud iam service-accounts add-iam-policy-binding ray-workload@my-project.iam.gserviceaccount.com --role roles/iam.workloadIdentityUser --member serviceAccount:my-project.svc.id.goog[ray/ray-workload]",
        "kubectl annotate serviceaccount ray-workload --namespace ray --overwrite iam.gke.io/gcp-service-account=ray-workload@my-project.iam.gserviceaccount.com",
    ] {
        assert!(
            called(&calls, wif),
            "not run: {wif}\n{}",
            sb.transcript(&calls)
        );
    }
    // The guide's last line ends in a stray backslash; the script has none before a blank line.
    let up = fs::read_to_string(sb.bundle().join("infra/up.sh")).unwrap();
    assert!(!up.contains("\\\n\n"), "no dangling line continuation");
}

#[test]
fn gke_offline_runs_record_every_command() {
    for profile in GKE {
        let name = short(profile);
        let sb = Sandbox::new(profile);
        let (up, calls) = sb.run("up.sh", &[], &[]);
        assert_eq!(up.status.code(), Some(0), "{name} up.sh\n{}", text(&up));
        assert!(!creates(&calls).is_empty(), "{name}: a fresh run creates");
        assert!(calls.iter().all(|c| c[0] != "az"), "{name}: no az on GKE");
        snapshot_calls(&format!("{name}-up"), &sb.transcript(&calls));

        let (verify, calls) = sb.run("verify.sh", &[], &[]);
        assert_eq!(verify.status.code(), Some(0), "{name}\n{}", text(&verify));
        assert!(calls.iter().all(|c| c[0] == "kubectl"), "verify only reads");
        snapshot_calls(&format!("{name}-verify"), &sb.transcript(&calls));

        let (down, calls) = sb.run("down.sh", &[], &[]);
        assert_eq!(down.status.code(), Some(0), "{name}\n{}", text(&down));
        assert!(
            calls.iter().all(|c| c[0] == "kubectl"),
            "{name}: keeps the cluster"
        );
        let mut transcript = format!("# down.sh\n{}", sb.transcript(&calls));
        let (down_cluster, calls) =
            sb.run("down.sh", &["--delete-cluster"], &[("STUB_EXISTS", "1")]);
        assert_eq!(
            down_cluster.status.code(),
            Some(0),
            "{name}\n{}",
            text(&down_cluster)
        );
        assert_eq!(
            creates(&calls),
            ["gcloud container clusters delete"],
            "{name}"
        );
        transcript.push_str(&format!(
            "# down.sh --delete-cluster\n{}",
            sb.transcript(&calls)
        ));
        snapshot_calls(&format!("{name}-down"), &transcript);
        let (typo, calls) = sb.run("down.sh", &["--delete-resource-group"], &[]);
        assert_eq!(typo.status.code(), Some(2), "{name}: not an AKS flag here");
        assert!(calls.is_empty());
    }
}

#[test]
fn rerunning_gke_up_when_everything_exists_creates_nothing() {
    for profile in GKE {
        let sb = Sandbox::new(profile);
        let (out, calls) = sb.run("up.sh", &[], &[("STUB_EXISTS", "1")]);
        assert_eq!(out.status.code(), Some(0), "{profile}\n{}", text(&out));
        assert_eq!(creates(&calls), Vec::<String>::new(), "{profile}");
        // It still converges the cluster side: credentials, operators, platform.
        assert!(calls.iter().any(|c| c.starts_with(&[
            "gcloud".to_owned(),
            "container".to_owned(),
            "clusters".to_owned(),
            "get-credentials".to_owned(),
        ])));
        assert!(calls.iter().any(|c| c[1] == "apply"), "{profile}");
    }
}

#[test]
fn gke_up_stops_without_a_project() {
    let sb = Sandbox::new("kuberay-gpu-gke");
    let (out, calls) = sb.run("up.sh", &[], &[("STUB_NO_PROJECT", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("gcloud config set project"),
        "{}",
        text(&out)
    );
    assert!(creates(&calls).is_empty(), "nothing is created");
}

#[test]
fn gke_verify_checks_gpu_nodes_by_their_pool_label() {
    let sb = Sandbox::new("kuberay-gpu-gke");
    let (out, calls) = sb.run("verify.sh", &[], &[("STUB_GPUS", "<none>")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("node gke-cluster-gpu-node-pool-1234abcd-x0y1 (pool gpu-node-pool) reports no allocatable nvidia.com/gpu"),
        "{}",
        text(&out)
    );
    assert!(called(
        &calls,
        "kubectl get nodes -l cloud.google.com/gke-nodepool=gpu-node-pool"
    ));
}

/// Every gcloud command of both GKE profiles' scripts through the real gcloud, offline
/// (`../shared/tools/cloud-argcheck`, plain mode: argparse and flag types). Skips visibly when
/// the tool or gcloud is missing (exit 2) — and fails instead under CI.
#[test]
fn gcloud_commands_pass_cloud_argcheck() {
    let tool = repo().join("../shared/tools/cloud-argcheck");
    if !tool.exists() {
        skip("cloud-argcheck", "../shared/tools/cloud-argcheck is absent");
        return;
    }
    for profile in GKE {
        let sb = Sandbox::new(profile);
        let out = Command::new(&tool)
            .args(scripts(&sb.bundle()))
            .output()
            .unwrap();
        let t = text(&out);
        if out.status.code() == Some(2) {
            skip("cloud-argcheck", t.trim());
            return;
        }
        assert_eq!(out.status.code(), Some(0), "{profile}\n{t}");
        let last = t.lines().last().unwrap_or_default();
        assert!(last.ends_with(" 0 failed"), "{profile}\n{t}");
        // Every gcloud command of up.sh and down.sh was found and checked.
        let passed: usize = last
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        assert!(passed >= 9, "{profile}: {passed} commands checked\n{t}");
        for cmd in [
            "gcloud container clusters create",
            "gcloud container node-pools create",
            "gcloud container clusters get-credentials",
            "gcloud container clusters delete",
        ] {
            assert!(t.contains(&format!("ok   {cmd}")), "{profile}: {cmd}\n{t}");
        }
    }
}

/// `cloud-argcheck --deep` on `team-gke`'s up.sh: gcloud's client-side checks (taint effects,
/// `gpu-driver-version`, required properties) with a fake token and a proxy on 127.0.0.1:9.
/// About 30 s a command, so it is run on demand:
/// `cargo test --test it -- --ignored gcloud_commands_pass_cloud_argcheck_deep`.
#[test]
#[ignore = "about 4 minutes: gcloud's client-side checks take ~30 s a command"]
fn gcloud_commands_pass_cloud_argcheck_deep() {
    let tool = repo().join("../shared/tools/cloud-argcheck");
    if !tool.exists() {
        skip(
            "cloud-argcheck --deep",
            "../shared/tools/cloud-argcheck is absent",
        );
        return;
    }
    let sb = Sandbox::new("profiles/examples/team-gke.yaml");
    let out = Command::new(&tool)
        .arg("--deep")
        .arg(sb.bundle().join("infra/up.sh"))
        .output()
        .unwrap();
    let t = text(&out);
    if out.status.code() == Some(2) {
        skip("cloud-argcheck --deep", t.trim());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains("passed client checks"), "{t}");
    assert!(
        t.lines().last().unwrap_or_default().ends_with(" 0 failed"),
        "{t}"
    );
}

// ---- Injection -----------------------------------------------------------------------------

/// Every `gcp` field that reaches a script, as a JSON pointer into [`base_profile`].
const GCP_FIELDS: &[&str] = &[
    "/gcp/project",
    "/gcp/zone",
    "/gcp/cluster/name",
    "/gcp/cluster/kubernetesVersion",
    "/gcp/nodePools/0/machineType",
    "/gcp/nodePools/0/taints/0/key",
    "/gcp/nodePools/0/taints/0/value",
    "/gcp/nodePools/1/name",
    "/gcp/nodePools/1/machineType",
    "/gcp/nodePools/1/accelerator/type",
    "/gcp/nodePools/1/labels/team",
    "/gcp/identity/serviceAccount",
    "/gcp/identity/roles/0",
];

/// `kuberay-gpu-gke` plus the optional fields above.
fn base_profile() -> Value {
    let mut p = shipped("kuberay-gpu-gke");
    p["gcp"]["project"] = json!("my-project-123");
    p["gcp"]["cluster"]["kubernetesVersion"] = json!("1.35");
    p["gcp"]["nodePools"][0]["taints"] =
        json!([{"key": "dedicated", "value": "system", "effect": "PreferNoSchedule"}]);
    p["gcp"]["nodePools"][1]["labels"] = json!({"team": "ray"});
    p["gcp"]["identity"]["roles"] = json!(["roles/storage.objectUser"]);
    p
}

#[test]
fn the_schema_refuses_shell_syntax_in_every_gcp_field_that_reaches_a_script() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_profile(dir.path(), &base_profile());
    let ok = raykueue(&["check", "--profile", path.to_str().unwrap()]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "the base is valid\n{}",
        stderr(&ok)
    );
    for pointer in GCP_FIELDS {
        for evil in EVIL {
            let mut p = base_profile();
            *p.pointer_mut(pointer)
                .unwrap_or_else(|| panic!("{pointer} is in the base profile")) = json!(evil);
            let path = write_profile(dir.path(), &p);
            let out = raykueue(&["check", "--profile", path.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(1), "{pointer} = {evil:?} accepted");
            assert!(stderr(&out).contains("profile.yaml:"), "{pointer}: located");
        }
    }
}

/// Past the schema, every gcp value is one inert word in the scripts: nothing runs, and each
/// value reaches gcloud byte for byte.
#[test]
fn gcp_values_that_bypass_the_schema_stay_inert_in_the_scripts() {
    let mut p = base_profile();
    let mut expected = Vec::new();
    for (i, pointer) in GCP_FIELDS.iter().enumerate() {
        if pointer.ends_with("/labels/team") {
            continue;
        }
        let evil = format!("{}-{i}", EVIL[i % EVIL.len()]);
        *p.pointer_mut(pointer).unwrap() = json!(evil);
        expected.push(evil);
    }
    p["gcp"]["nodePools"][1]["labels"] = json!({"k$(touch pwned-lk)": "v`touch pwned-lv`"});
    let profile: raykueue::api::profile::Profile =
        raykueue::api::profile::unchecked(|| serde_json::from_value(p)).unwrap();
    let files = crate::common::infra_text(&profile);
    let sb = Sandbox::from_files(&files);
    // SC2016: shellcheck noticing that `$(...)` in the values is inert text.
    assert_clean_bash(&scripts(&sb.bundle()), &["SC2016"]);
    let (up, up_calls) = sb.run("up.sh", &[], &[]);
    let (verify, _) = sb.run("verify.sh", &[], &[]);
    let (down, down_calls) = sb.run("down.sh", &["--delete-cluster"], &[("STUB_EXISTS", "1")]);
    for (name, o) in [("up", &up), ("verify", &verify), ("down", &down)] {
        assert_eq!(o.status.code(), Some(0), "{name}\n{}", text(o));
    }
    let pwned: Vec<String> = fs::read_dir(sb.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(pwned.is_empty(), "injected commands ran: {pwned:?}");
    let words: Vec<&String> = up_calls.iter().chain(&down_calls).flatten().collect();
    for value in &expected {
        assert!(
            words.iter().any(|w| w.contains(value.as_str())),
            "{value:?} reached no command intact"
        );
    }
}

// ---- The same queues on GKE ----------------------------------------------------------------

fn platform(profile: &str) -> Vec<Value> {
    let out = raykueue(&["gen", "--profile", profile]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    crate::cli::parse_stream(&stdout(&out))
}

/// `team-gke` extends `team`: its platform objects are `team`'s, except the GPU flavor's node
/// label (GKE's `cloud.google.com/gke-accelerator`) and the service account's identity
/// annotation (Workload Identity Federation for GKE instead of Azure workload identity).
#[test]
fn team_gke_platform_differs_from_team_only_where_the_cloud_requires() {
    let aks = platform("team");
    let gke = platform("profiles/examples/team-gke.yaml");
    assert_eq!(aks.len(), gke.len());
    let mut differing = Vec::new();
    for (a, g) in aks.iter().zip(&gke) {
        if a != g {
            differing.push(format!(
                "{}/{}",
                a["kind"].as_str().unwrap(),
                a["metadata"]["name"].as_str().unwrap()
            ));
        }
    }
    assert_eq!(
        differing,
        ["ServiceAccount/ray-workload", "ResourceFlavor/gpu"]
    );
    let flavor = |docs: &[Value]| {
        docs.iter()
            .find(|d| d["kind"] == "ResourceFlavor" && d["metadata"]["name"] == "gpu")
            .unwrap()["spec"]
            .clone()
    };
    assert_eq!(flavor(&aks)["nodeLabels"], json!({"accelerator": "nvidia"}));
    assert_eq!(
        flavor(&gke)["nodeLabels"],
        json!({"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"})
    );
    let sa = gke.iter().find(|d| d["kind"] == "ServiceAccount").unwrap();
    assert_eq!(
        sa["metadata"]["annotations"],
        json!({"iam.gke.io/gcp-service-account": "set-by-infra-up.sh"})
    );

    // `raykueue diff` says the same: among the platform objects, only those two change.
    let out = raykueue(&["diff", "team", "profiles/examples/team-gke.yaml"]);
    assert_eq!(out.status.code(), Some(1), "changes: {}", stderr(&out));
    let md = stdout(&out);
    let platform_kinds = [
        "Namespace",
        "ServiceAccount",
        "ResourceFlavor",
        "WorkloadPriorityClass",
        "ClusterQueue",
        "LocalQueue",
    ];
    let changed: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("- `"))
        .filter(|l| {
            platform_kinds
                .iter()
                .any(|k| l.starts_with(&format!("- `{k} ")))
        })
        .collect();
    assert!(!changed.is_empty(), "{md}");
    for line in &changed {
        assert!(
            line.starts_with("- `ServiceAccount ray/ray-workload`: metadata.annotations.")
                || line.starts_with("- `ResourceFlavor gpu`: nodeLabels."),
            "unexpected platform change: {line}"
        );
    }
}

#[test]
fn team_gke_matches_its_golden_bundle() {
    insta::with_settings!({
        snapshot_path => "../../golden",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("examples-team-gke", crate::common::bundle_text("profiles/examples/team-gke.yaml"));
    });
}

/// The Workload Identity annotation carries the Google service account's e-mail once the
/// profile pins the project (then GitOps can own the object).
#[test]
fn a_pinned_project_puts_the_google_service_account_in_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_profile(dir.path(), &base_profile());
    let out = raykueue(&["gen", "--profile", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = crate::cli::parse_stream(&stdout(&out));
    let sa = docs.iter().find(|d| d["kind"] == "ServiceAccount").unwrap();
    assert_eq!(
        sa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"],
        "ray-workload@my-project-123.iam.gserviceaccount.com"
    );
    let files = crate::common::infra_text(
        &serde_json::from_value::<raykueue::api::profile::Profile>(base_profile()).unwrap(),
    );
    let up = &files.iter().find(|(n, _)| n == "infra/up.sh").unwrap().1;
    assert!(!up.contains("kubectl annotate"), "nothing left to annotate");
}

/// `capacity` writes Google's flags for each consumption option on `node-pools create`
/// (cloud.google.com/kubernetes-engine/docs/how-to/consuming-reservations, `--spot`,
/// `--flex-start`), and the real gcloud parses them when cloud-argcheck is here.
#[test]
fn each_capacity_option_writes_its_gcloud_flags() {
    let mut p: Value =
        serde_saphyr::from_str(crate::common::shipped_text("examples/tas-gke")).unwrap();
    let pools = p["gcp"]["nodePools"].as_array_mut().unwrap();
    let extra = |name: &str, capacity: Value| {
        json!({"name": name, "machineType": "a3-ultragpu-8g", "autoscale": {"min": 0, "max": 2},
               "capacity": capacity})
    };
    pools.push(extra("spot", json!("spot")));
    pools.push(extra("flex", json!("flexStart")));
    pools.push(extra("any", json!({"reservation": {}})));
    pools.push(extra(
        "shared",
        json!({"reservation": {"name": "blocks", "project": "host-project-1"}}),
    ));
    let (_keep, sb) = crate::infra::sandbox_for(&p);
    let (up, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(up.status.code(), Some(0), "{}", text(&up));
    let flags_of = |pool: &str| {
        let call = calls
            .iter()
            .find(|c| {
                c.starts_with(&[
                    "gcloud".into(),
                    "container".into(),
                    "node-pools".into(),
                    "create".into(),
                    pool.into(),
                ])
            })
            .unwrap_or_else(|| panic!("no node-pools create {pool}"));
        parse(call).1
    };
    let has = |pool: &str, flag: &str, value: Option<&str>| {
        flags_of(pool)
            .iter()
            .any(|(f, v)| f == flag && v.as_deref() == value)
    };
    assert!(has("a3-ultra", "--reservation-affinity", Some("specific")));
    assert!(has(
        "a3-ultra",
        "--reservation",
        Some("a3-ultra-reservation")
    ));
    assert!(has("spot", "--spot", None));
    assert!(
        !flags_of("spot")
            .iter()
            .any(|(f, _)| f == "--reservation-affinity")
    );
    assert!(has("flex", "--flex-start", None));
    assert!(has("flex", "--reservation-affinity", Some("none")));
    assert!(!has("flex", "--enable-queued-provisioning", None));
    assert!(has("any", "--reservation-affinity", Some("any")));
    assert!(!flags_of("any").iter().any(|(f, _)| f == "--reservation"));
    assert!(has(
        "shared",
        "--reservation",
        Some("projects/host-project-1/reservations/blocks")
    ));
    let tool = repo().join("../shared/tools/cloud-argcheck");
    if !tool.exists() {
        skip("cloud-argcheck", "../shared/tools/cloud-argcheck is absent");
        return;
    }
    let out = Command::new(&tool)
        .args(scripts(&sb.bundle()))
        .output()
        .unwrap();
    let t = text(&out);
    if out.status.code() == Some(2) {
        skip("cloud-argcheck", t.trim());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{t}");
}
