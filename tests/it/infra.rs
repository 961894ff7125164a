//! `infra/`: the provisioning scripts and Helm values. The scripts are checked with `bash -n`
//! and shellcheck, then run offline against stub `az`, `kubectl` and `helm` that record their
//! argv; the recorded call sequences are snapshotted in `golden/calls/`, so a pull request shows
//! every command that would run. Profile values are shown to be either refused by the schema or
//! inert in the scripts.

use crate::common::{raykueue, repo, shipped_aks, skip, stderr};
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// ---- Stubs -------------------------------------------------------------------------------------

/// Records argv (fields split by 0x1f, calls by 0x1e) into `$STUB_LOG`, then answers like az
/// would: `show` without `--query` → not found unless `STUB_EXISTS` is set; the `--query … -o tsv`
/// look-ups the scripts make → plausible values.
const AZ: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' az "$@"; printf '\x1e'; } >>"$STUB_LOG"
words=() query="" prev=""
for a in "$@"; do
  [[ $prev == --query ]] && query=$a
  prev=$a
done
for a in "$@"; do [[ $a == -* ]] && break; words+=("$a"); done
cmd="${words[*]}"
case $cmd in
  "account show")
    [[ $query == tenantId ]] && printf '%s\n' "${STUB_TENANT_ID:-44444444-4444-4444-4444-444444444444}"
    exit 0 ;;
  "role assignment list")
    if [[ -n ${STUB_EXISTS:-} ]]; then echo 1; else echo 0; fi
    exit 0 ;;
esac
if [[ ${words[-1]} == show ]]; then
  case $query in
    oidcIssuerProfile.issuerUrl) echo "https://eastus.oic.prod-aks.azure.com/44444444-4444-4444-4444-444444444444/55555555-5555-5555-5555-555555555555/" ;;
    clientId) printf '%s\n' "${STUB_CLIENT_ID:-22222222-2222-2222-2222-222222222222}" ;;
    principalId) echo 33333333-3333-3333-3333-333333333333 ;;
    id)
      case $cmd in
        "monitor account show") echo "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Monitor/accounts/workspace" ;;
        "aks show") echo "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/cluster" ;;
        *) echo "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/account" ;;
      esac ;;
    "")
      [[ -n ${STUB_EXISTS:-} ]] && exit 0
      echo "ERROR: (ResourceNotFound) The resource was not found." >&2
      exit 3 ;;
  esac
fi
exit 0
"#;

/// `get nodes -l LABEL=P` with custom columns lists one node of pool P, Ready unless
/// `STUB_READY` says otherwise, with `$STUB_GPUS` GPUs (default `$STUB_GPUS_<pool>`, which
/// `Sandbox` sets to the pool's catalogue count, else 1; set `STUB_NO_GPU_NODES` for none); a
/// namespace's label
/// reads `on`; raykueue's monitoring objects exist (in the stack's namespace, or for a managed
/// collector in any); rollouts fail with `STUB_ROLLOUT_FAILS`; a RayJob's
/// `jobDeploymentStatus/jobStatus` is `$STUB_RAYJOB_STATE` (default `Complete/SUCCEEDED`).
pub(crate) const KUBECTL: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' kubectl "$@"; printf '\x1e'; } >>"$STUB_LOG"
args=" $* "
case $args in
  *" get rayjob "*jobDeploymentStatus*) printf '%s' "${STUB_RAYJOB_STATE:-Complete/SUCCEEDED}" ;;
  *" get rayjob "*rayClusterName*) printf raykueue-smoke-x7k2p ;;
  *" logs job/"*) printf 'Ray cluster resources: {CPU: 2.0, GPU: 1.0}\ntask 0: GPU 0: Tesla V100\n' ;;
  " config current-context ") echo stub-context ;;
  *" get nodes -l "*custom-columns*)
    # One node of the pool the label names: NAME READY GPU.
    [[ -n ${STUB_NO_GPU_NODES:-} ]] && exit 0
    for a in "$@"; do [[ $a != -* && $a == *=* ]] && pool=${a#*=}; done
    per_pool="STUB_GPUS_${pool//[^A-Za-z0-9_]/_}"
    gpus=${STUB_GPUS:-${!per_pool:-1}}
    case $args in
      *" -l kubernetes.azure.com/agentpool="*) node="aks-$pool-12345678-vmss000000" ;;
      *" -l cloud.google.com/gke-nodepool="*) node="gke-cluster-$pool-1234abcd-x0y1" ;;
      # Other clouds' pool labels (eksctl's nodegroup-name, raykueue.io/node-pool on ACK).
      *) node=gpu-node-0 ;;
    esac
    printf '%s   %s   %s\n' "$node" "${STUB_READY:-True}" "$gpus" ;;
  *" get nodes -l "*) [[ -n ${STUB_NO_GPU_NODES:-} ]] || echo node/aks-gpupool-12345678-vmss000000 ;;
  *" get namespace "*) printf on ;;
  # raykueue's monitoring objects (verify.sh lists them by its label).
  *".monitoring.coreos.com --selector "*) echo servicemonitor.monitoring.coreos.com/kueue ;;
  *"monitoring.coreos.com --all-namespaces --selector "* | *".monitoring.googleapis.com --all-namespaces --selector "*)
    echo podmonitoring.monitoring.googleapis.com/kueue ;;
  *" get nodes "*) printf 'NAME   GPU\naks-system-0   <none>\n' ;;
  *" rollout status "*) [[ -z ${STUB_ROLLOUT_FAILS:-} ]] ;;
  *" get clusterqueue "*) printf True ;;
  *" get admissioncheck "*) printf '%s' "${STUB_CHECK_ACTIVE:-True}" ;;
  *" api-resources --api-group autoscaling.x-k8s.io "*)
    [[ -n ${STUB_NO_PROVISIONING_API:-} ]] || echo provisioningrequests.autoscaling.x-k8s.io ;;
  *" get serviceaccount "*) printf '%s' "${STUB_SA_CLIENT_ID:-22222222-2222-2222-2222-222222222222}" ;;
esac
"#;

/// Records argv like the az stub; `describe` finds nothing unless `STUB_EXISTS` is set; the
/// configured project is `$STUB_PROJECT` (default `my-project`, empty with `STUB_NO_PROJECT`).
const GCLOUD: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' gcloud "$@"; printf '\x1e'; } >>"$STUB_LOG"
words=()
for a in "$@"; do [[ $a == -* ]] && break; words+=("$a"); done
case " ${words[*]} " in
  " auth print-access-token ") echo fake-token ;;
  " config get-value project ") [[ -n ${STUB_NO_PROJECT:-} ]] || echo "${STUB_PROJECT:-my-project}" ;;
  *" describe "*)
    [[ -n ${STUB_EXISTS:-} ]] && exit 0
    echo "ERROR: (gcloud) NOT_FOUND: not found" >&2
    exit 1 ;;
esac
exit 0
"#;

pub(crate) const HELM: &str = r#"#!/usr/bin/env bash
{ printf '%s\x1f' helm "$@"; printf '\x1e'; } >>"$STUB_LOG"
"#;

/// Fault injection, in every stub after it records its call: with `STUB_FAIL_AT=N` the run's
/// N-th call (of any stub) fails, exit 1, with a message of its own that the script must show.
const FAULT: &str = r#"if [[ -n ${STUB_FAIL_AT:-} ]] && (($(tr -cd '\036' <"$STUB_LOG" | wc -c) == STUB_FAIL_AT)); then
  printf 'stub: injected failure of call %s\n' "$STUB_FAIL_AT" >&2
  exit 1
fi
"#;

/// Writes a stub with the fault-injection lines after the one that records its call (a stub
/// that records nothing, like `sleep`, is written as it is).
fn install_stub(bin: &Path, name: &str, text: &str) {
    let record = ">>\"$STUB_LOG\"\n";
    let text = match text.split_once(record) {
        Some((head, rest)) => format!("{head}{record}{FAULT}{rest}"),
        None => text.to_owned(),
    };
    let p = bin.join(name);
    fs::write(&p, text).unwrap();
    make_executable(&p);
}

/// A bundle written by `gen --out`, plus a stub bin folder and a call log.
pub(crate) struct Sandbox {
    pub(crate) dir: tempfile::TempDir,
}

impl Sandbox {
    pub(crate) fn new(profile: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let out = raykueue(&[
            "gen",
            "--profile",
            profile,
            "--out",
            dir.path().join("bundle").to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        Self::with_stubs(dir)
    }

    /// A bundle from files rendered in-process (for profiles that bypass the schema).
    pub(crate) fn from_files(files: &[(String, String)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let path = dir.path().join("bundle").join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, content).unwrap();
        }
        Self::with_stubs(dir)
    }

    fn with_stubs(dir: tempfile::TempDir) -> Self {
        let bin = dir.path().join("bin");
        fs::create_dir_all(&bin).unwrap();
        for (name, text) in [
            ("az", AZ),
            ("gcloud", GCLOUD),
            ("kubectl", KUBECTL),
            ("helm", HELM),
        ] {
            install_stub(&bin, name, text);
        }
        Self { dir }
    }

    /// Put (or replace) a stub command in the sandbox's bin folder.
    pub(crate) fn add_stub(&self, name: &str, text: &str) {
        install_stub(&self.dir.path().join("bin"), name, text);
    }

    /// The sandbox folder (scripts run here: an injected `touch` would land in it).
    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn bundle(&self) -> PathBuf {
        self.dir.path().join("bundle")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("calls.log")
    }

    /// Run `infra/<script>` (or `<path>` of the bundle) with the stubs first on PATH; returns its output and the calls it
    /// made (the log is reset first).
    pub(crate) fn run(
        &self,
        script: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Output, Vec<Vec<String>>) {
        let out = self.command(script, args, env).output().unwrap();
        (out, self.calls())
    }

    /// The command that runs `infra/<script>` with the stubs first on PATH (the log is reset).
    fn command(&self, script: &str, args: &[&str], env: &[(&str, &str)]) -> Command {
        let _ = fs::remove_file(self.log());
        let path = format!(
            "{}:{}",
            self.dir.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut cmd = Command::new("bash");
        // `up.sh` is `infra/up.sh`; a path (`fleet/connect.sh`) is the bundle's own.
        let script = if script.contains('/') {
            self.bundle().join(script)
        } else {
            self.bundle().join("infra").join(script)
        };
        cmd.arg(script)
            .args(args)
            .current_dir(self.dir.path())
            .env("PATH", path)
            .env("STUB_LOG", self.log())
            .env("HOME", self.dir.path())
            .env_remove("KUBECONFIG");
        // The stub's GPU nodes have as many GPUs as the catalogue gives each pool's type
        // (verify.sh's `GPU_POOLn_GPUS`), unless a test says otherwise with `STUB_GPUS`.
        if let Ok(verify) = fs::read_to_string(self.bundle().join("infra/verify.sh")) {
            let value = |line: &str| {
                line.split_once('=')
                    .map(|(_, v)| v.trim_matches('\'').to_owned())
            };
            let mut pool = String::new();
            for line in verify
                .lines()
                .filter(|l| l.starts_with("readonly GPU_POOL"))
            {
                if line.contains("_MIN_NODES=") {
                    continue;
                }
                if line.contains("_GPUS=") {
                    if let Some(n) = value(line).filter(|n| !n.is_empty()) {
                        let var: String = pool
                            .chars()
                            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                            .collect();
                        cmd.env(format!("STUB_GPUS_{var}"), n);
                    }
                } else if let Some(name) = value(line) {
                    pool = name;
                }
            }
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    fn calls(&self) -> Vec<Vec<String>> {
        let raw = fs::read_to_string(self.log()).unwrap_or_default();
        raw.split('\x1e')
            .filter(|c| !c.is_empty())
            .map(|c| {
                c.split('\x1f')
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
    }

    /// Calls as text, one per line, words quoted only where the shell would need it, the
    /// temporary bundle path written `<bundle>`.
    pub(crate) fn transcript(&self, calls: &[Vec<String>]) -> String {
        let mut prefixes = vec![self.bundle().display().to_string()];
        if let Ok(c) = self.bundle().canonicalize() {
            prefixes.insert(0, c.display().to_string());
        }
        let mut out = String::new();
        for call in calls {
            let words: Vec<String> = call
                .iter()
                .map(|w| {
                    let mut w = w.clone();
                    for p in &prefixes {
                        w = w.replace(p.as_str(), "<bundle>");
                    }
                    display_word(&w)
                })
                .collect();
            out.push_str(&words.join(" "));
            out.push('\n');
        }
        out
    }
}

fn display_word(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-<>".contains(c));
    if plain {
        w.to_owned()
    } else {
        raykueue::api::output::render::shell_quote(w)
    }
}

#[cfg(unix)]
fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(not(unix))]
fn make_executable(_: &Path) {}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The create-like calls: what must not happen when everything exists.
pub(crate) fn creates(calls: &[Vec<String>]) -> Vec<String> {
    calls
        .iter()
        .filter(|c| c[0] == "az")
        .map(|c| {
            c.iter()
                .take_while(|w| !w.starts_with('-'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| c.ends_with(" create") || c.ends_with(" add") || c.ends_with(" update"))
        .collect()
}

pub(crate) fn snapshot_calls(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "../../golden/calls",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

// ---- Offline runs --------------------------------------------------------------------------

/// up.sh, verify.sh and down.sh of every shipped AKS profile against the stubs; every command they
/// would run is in `golden/calls/<profile>-{up,verify,down}.snap`.
#[test]
fn offline_runs_record_every_command() {
    for profile in shipped_aks() {
        let sb = Sandbox::new(profile);
        let (up, calls) = sb.run("up.sh", &[], &[]);
        assert_eq!(up.status.code(), Some(0), "{profile} up.sh\n{}", text(&up));
        assert!(
            !creates(&calls).is_empty(),
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
        assert!(calls.iter().all(|c| c[0] == "kubectl"), "verify only reads");
        snapshot_calls(&format!("{profile}-verify"), &sb.transcript(&calls));

        let (down, calls) = sb.run("down.sh", &[], &[]);
        assert_eq!(down.status.code(), Some(0), "{profile}\n{}", text(&down));
        assert!(
            calls.iter().all(|c| c[0] == "kubectl"),
            "{profile}: down.sh without --delete-resource-group keeps Azure resources"
        );
        let mut transcript = format!("# down.sh\n{}", sb.transcript(&calls));
        let (down_rg, calls) = sb.run(
            "down.sh",
            &["--delete-resource-group"],
            &[("STUB_EXISTS", "1")],
        );
        assert_eq!(
            down_rg.status.code(),
            Some(0),
            "{profile}\n{}",
            text(&down_rg)
        );
        transcript.push_str(&format!(
            "# down.sh --delete-resource-group\n{}",
            sb.transcript(&calls)
        ));
        snapshot_calls(&format!("{profile}-down"), &transcript);
    }
}

#[test]
fn rerunning_up_when_everything_exists_creates_nothing() {
    for profile in shipped_aks() {
        let sb = Sandbox::new(profile);
        let (out, calls) = sb.run("up.sh", &[], &[("STUB_EXISTS", "1")]);
        assert_eq!(out.status.code(), Some(0), "{profile}\n{}", text(&out));
        assert_eq!(creates(&calls), Vec::<String>::new(), "{profile}");
        // It still converges the cluster side: credentials, operators, platform.
        assert!(calls.iter().any(|c| c[1] == "apply"), "{profile}");
    }
}

#[test]
fn down_refuses_unknown_arguments() {
    let sb = Sandbox::new("team");
    let (out, calls) = sb.run("down.sh", &["--delete-resource-groups"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("unknown argument"), "{}", text(&out));
    assert!(calls.is_empty(), "nothing is deleted on a typo");
}

// ---- Seed 004 ------------------------------------------------------------------------------

/// `cmd` (the seed's words, short flags allowed) was called: same command words, and each of
/// its flags with the same value (flags may be spelt long and come in any order).
fn called(calls: &[Vec<String>], seed: &str) -> bool {
    fn parse(words: &[String]) -> (Vec<String>, Vec<(String, Option<String>)>) {
        let long = |f: &str| match f {
            "-g" => "--resource-group".to_owned(),
            "-n" => "--name".to_owned(),
            "-l" => "--location".to_owned(),
            other => other.to_owned(),
        };
        let cmd: Vec<String> = words
            .iter()
            .take_while(|w| !w.starts_with('-'))
            .cloned()
            .collect();
        let mut flags = Vec::new();
        let rest = &words[cmd.len()..];
        let mut i = 0;
        while i < rest.len() {
            let f = long(&rest[i]);
            let value = rest.get(i + 1).filter(|v| !v.starts_with("--")).cloned();
            i += if value.is_some() { 2 } else { 1 };
            flags.push((f, value));
        }
        (cmd, flags)
    }
    let seed_words: Vec<String> = seed.split_whitespace().map(str::to_owned).collect();
    let (seed_cmd, seed_flags) = parse(&seed_words);
    calls.iter().any(|c| {
        let (cmd, flags) = parse(c);
        cmd == seed_cmd && seed_flags.iter().all(|f| flags.contains(f))
    })
}

#[test]
fn kuberay_gpu_runs_seed_004s_commands_with_its_values() {
    let sb = Sandbox::new("kuberay-gpu");
    let (out, calls) = sb.run("up.sh", &[], &[("STUB_NO_GPU_NODES", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for seed in [
        "az group create -l eastus -n kuberay-rg",
        "az aks create -g kuberay-rg -n kuberay-gpu-cluster --nodepool-name system --node-vm-size Standard_D8s_v3 --node-count 3",
        // Seed 004's Standard_NC6s_v3 was retired (RK205): a current one-GPU size instead.
        "az aks nodepool add -g kuberay-rg --cluster-name kuberay-gpu-cluster --nodepool-name gpupool --node-vm-size Standard_NC8as_T4_v3 --node-taints nvidia.com/gpu=present:NoSchedule --min-count 0 --max-count 3 --enable-cluster-autoscaler",
        // AKS installs the driver only (the upstream Azure example installs the plugin).
        "helm upgrade --install nvidia-device-plugin nvdp/nvidia-device-plugin --version 0.17.0 --namespace kube-system",
        "az aks get-credentials --resource-group kuberay-rg --name kuberay-gpu-cluster --overwrite-existing",
        "helm repo add kuberay https://ray-project.github.io/kuberay-helm/",
        "helm upgrade --install kuberay-operator kuberay/kuberay-operator --version 1.7.0 --namespace ray-system",
    ] {
        assert!(
            called(&calls, seed),
            "missing: {seed}\n{}",
            sb.transcript(&calls)
        );
    }
    // No Kueue in this profile, so no Kueue install (raykueue's own label aside: verify.sh
    // lists the monitoring objects by it).
    assert!(
        !sb.transcript(&calls)
            .replace("raykueue", "")
            .contains("kueue")
    );
    // GPU pool at zero nodes (autoscaler min 0): verify says so and passes.
    assert!(text(&out).contains("autoscales from 0"), "{}", text(&out));

    let (down, calls) = sb.run(
        "down.sh",
        &["--delete-resource-group"],
        &[("STUB_EXISTS", "1")],
    );
    assert_eq!(down.status.code(), Some(0));
    assert!(called(
        &calls,
        "az group delete --name kuberay-rg --yes --no-wait"
    ));
    // The script text carries the seed's values in its readonly block.
    let up = fs::read_to_string(sb.bundle().join("infra/up.sh")).unwrap();
    for line in [
        "readonly LOCATION='eastus'",
        "readonly RESOURCE_GROUP='kuberay-rg'",
        "readonly CLUSTER='kuberay-gpu-cluster'",
        "readonly POOL1_TAINTS='nvidia.com/gpu=present:NoSchedule'",
        "readonly KUBERAY_VERSION='1.7.0'",
    ] {
        assert!(up.contains(line), "{line}");
    }
}

// ---- verify.sh -----------------------------------------------------------------------------

#[test]
fn verify_fails_on_gpu_nodes_without_allocatable_gpus_with_the_seed_hint() {
    let sb = Sandbox::new("single");
    let (out, _) = sb.run("verify.sh", &[], &[("STUB_GPUS", "<none>")]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(t.contains("reports no allocatable nvidia.com/gpu"), "{t}");
    assert!(
        t.contains("the NVIDIA device plugin is not running there"),
        "{t}"
    );
    assert!(t.contains("up.sh installs the device plugin"), "{t}");
    assert!(t.contains("1 check(s) failed"), "{t}");
}

/// AKS installs the driver, not the device plugin (Azure/AKS
/// examples/kueue-and-ray-on-aks/1-infrastructure/terraform/main.tf installs NVIDIA's chart
/// 0.17.0): `up.sh` installs it before the operators, and `verify.sh` waits for its DaemonSet
/// and counts each Ready GPU node's GPUs against the VM size.
#[test]
fn aks_gpu_pools_get_the_device_plugin_and_verify_counts_their_gpus() {
    let sb = Sandbox::new("team");
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let transcript = sb.transcript(&calls);
    for call in [
        "helm repo add nvdp https://nvidia.github.io/k8s-device-plugin --force-update",
        "helm upgrade --install nvidia-device-plugin nvdp/nvidia-device-plugin --version 0.17.0 --namespace kube-system",
        "kubectl --namespace kube-system rollout status daemonset/nvidia-device-plugin --timeout=300s",
    ] {
        assert!(called(&calls, call), "missing: {call}\n{transcript}");
    }
    // Before the operators: GPU nodes advertise GPUs before anything asks for them.
    let at = |needle: &str| transcript.find(needle).unwrap_or(usize::MAX);
    assert!(
        at("nvdp/nvidia-device-plugin") < at("kuberay/kuberay-operator"),
        "{transcript}"
    );
    let values: Value = serde_saphyr::from_str(
        &fs::read_to_string(sb.bundle().join("infra/nvidia-device-plugin-values.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            [0]["matchExpressions"][0],
        json!({"key": "accelerator", "operator": "In", "values": ["nvidia"]})
    );

    // A node with fewer GPUs than its VM size has (ND96amsr_A100_v4: 8) fails.
    let (out, _) = sb.run("verify.sh", &[], &[("STUB_GPUS", "7")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("reports 7 allocatable nvidia.com/gpu, but its instance type has 8"),
        "{}",
        text(&out)
    );
    // A node that is not Ready yet is not judged.
    let (out, _) = sb.run(
        "verify.sh",
        &[],
        &[("STUB_GPUS", "<none>"), ("STUB_READY", "False")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("is not Ready yet"), "{}", text(&out));
    // The device plugin's DaemonSet not rolled out fails.
    let (out, _) = sb.run("verify.sh", &[], &[("STUB_ROLLOUT_FAILS", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out).contains("the NVIDIA device plugin is not rolled out"),
        "{}",
        text(&out)
    );
}

/// The ProvisioningRequest gate on AKS (`autoscale`, `gpu-autoscale`): up.sh stops before
/// Kueue when the cluster does not serve ProvisioningRequests (Kueue would start without its
/// check controller, kueue@v0.19.2 cmd/kueue/main.go), and verify.sh fails an inactive check.
#[test]
fn aks_provisioning_gate_is_refused_without_the_api_and_verified_active() {
    for profile in ["autoscale", "gpu-autoscale"] {
        let sb = Sandbox::new(profile);
        let (out, calls) = sb.run("up.sh", &[], &[("STUB_NO_PROVISIONING_API", "1")]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{profile}: {t}");
        assert!(t.contains("AKS does not serve ProvisioningRequests"), "{t}");
        assert!(
            !calls.iter().any(|c| c[0] == "helm"),
            "{profile}: nothing is installed after the refusal: {calls:?}"
        );
        let (out, _) = sb.run("up.sh", &[], &[]);
        assert_eq!(out.status.code(), Some(0), "{profile}: {}", text(&out));

        let (out, _) = sb.run("verify.sh", &[], &[]);
        assert_eq!(out.status.code(), Some(0), "{profile}: {}", text(&out));
        assert!(text(&out).contains("is active"), "{}", text(&out));
        let (out, _) = sb.run("verify.sh", &[], &[("STUB_CHECK_ACTIVE", "False")]);
        assert_eq!(out.status.code(), Some(1), "{profile}");
        assert!(
            text(&out).contains("AdmissionCheck") && text(&out).contains("is not active"),
            "{}",
            text(&out)
        );
    }
}

/// A GPU pool's taints beyond the chart's default tolerations are tolerated by the device
/// plugin (its values replace the chart's list, so the defaults are listed again).
#[test]
fn the_device_plugin_tolerates_every_gpu_pool_taint() {
    let text = crate::common::shipped_text("kuberay-gpu")
        .replace(
            "        - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n",
            "        - {key: nvidia.com/gpu, value: present, effect: NoSchedule}\n        - {key: sku, value: gpu, effect: NoSchedule}\n",
        )
        .replace(
            "        maxReplicas: 5\n",
            "        maxReplicas: 5\n        tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n",
        );
    assert!(text.contains("key: sku"));
    let c = crate::common::compile_text(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}"));
    let values: Value =
        serde_saphyr::from_str(&c.bundle.files["infra/nvidia-device-plugin-values.yaml"]).unwrap();
    assert_eq!(
        values["tolerations"],
        json!([
            {"key": "CriticalAddonsOnly", "operator": "Exists"},
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
        ])
    );
}

#[test]
fn verify_fails_on_a_fixed_size_gpu_pool_without_nodes_and_a_missing_label() {
    let sb = Sandbox::new("team");
    let (out, _) = sb.run("verify.sh", &[], &[("STUB_NO_GPU_NODES", "1")]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(t.contains("GPU pool gpupool has no nodes"), "{t}");
    // The seed's troubleshooting row: missing accelerator=nvidia label.
    assert!(
        t.contains("no node has the labels accelerator=nvidia"),
        "{t}"
    );
    assert!(t.contains("kubectl get nodes --show-labels"), "{t}");
}

#[test]
fn verify_points_at_the_kueue_controller_logs_when_it_is_not_running() {
    let sb = Sandbox::new("team");
    let (out, _) = sb.run("verify.sh", &[], &[("STUB_ROLLOUT_FAILS", "1")]);
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(
        t.contains("kubectl -n kueue-system logs deploy/kueue-controller-manager"),
        "{t}"
    );
}

#[test]
fn verify_fails_while_the_service_account_carries_the_placeholder() {
    let sb = Sandbox::new("team");
    let (out, _) = sb.run(
        "verify.sh",
        &[],
        &[("STUB_SA_CLIENT_ID", "set-by-infra-up.sh")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("has no workload-identity client-id"));
}

// ---- Workload identity ---------------------------------------------------------------------

pub(crate) fn shipped(profile: &str) -> Value {
    let text = fs::read_to_string(repo().join(format!("profiles/{profile}.yaml"))).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

pub(crate) fn write_profile(dir: &Path, value: &Value) -> PathBuf {
    let path = dir.join("profile.yaml");
    // JSON is YAML; pretty-printed, every field has its own line.
    fs::write(&path, serde_json::to_string_pretty(value).unwrap()).unwrap();
    path
}

pub(crate) fn sandbox_for(value: &Value) -> (tempfile::TempDir, Sandbox) {
    let keep = tempfile::tempdir().unwrap();
    let path = write_profile(keep.path(), value);
    let sb = Sandbox::new(path.to_str().unwrap());
    (keep, sb)
}

#[test]
fn unpinned_identity_ids_are_annotated_after_the_platform_is_applied() {
    let sb = Sandbox::new("single");
    let (_, calls) = sb.run("up.sh", &[], &[]);
    let apply = calls.iter().position(|c| c[1] == "apply").unwrap();
    let annotate = calls
        .iter()
        .position(|c| c.get(1).map(String::as_str) == Some("annotate"))
        .expect("annotates the service account");
    assert!(apply < annotate);
    let a = &calls[annotate];
    assert!(a.contains(&"--overwrite".to_owned()));
    assert!(a.contains(
        &"azure.workload.identity/client-id=22222222-2222-2222-2222-222222222222".to_owned()
    ));
    assert!(a.contains(
        &"azure.workload.identity/tenant-id=44444444-4444-4444-4444-444444444444".to_owned()
    ));
}

#[test]
fn pinned_identity_ids_are_checked_against_azure() {
    let mut p = shipped("single");
    p["azure"]["identity"]["clientId"] = json!("22222222-2222-2222-2222-222222222222");
    p["azure"]["identity"]["tenantId"] = json!("44444444-4444-4444-4444-444444444444");
    let (_keep, sb) = sandbox_for(&p);
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !calls
            .iter()
            .any(|c| c.get(1).map(String::as_str) == Some("annotate")),
        "pinned IDs are in the manifest already"
    );
    let (out, calls) = sb.run(
        "up.sh",
        &[],
        &[("STUB_CLIENT_ID", "99999999-9999-9999-9999-999999999999")],
    );
    assert_eq!(out.status.code(), Some(1));
    let t = text(&out);
    assert!(
        t.contains("azure.identity.clientId in the profile is 22222222-2222-2222-2222-222222222222, but identity ray-workload-identity has client ID 99999999-9999-9999-9999-999999999999"),
        "{t}"
    );
    assert!(
        !calls.iter().any(|c| c[0] == "helm"),
        "it stops before installing anything"
    );
}

#[test]
fn an_identity_without_service_account_warns_and_gets_no_federated_credential() {
    let mut p = shipped("single");
    p.as_object_mut().unwrap().remove("serviceAccount");
    let dir = tempfile::tempdir().unwrap();
    let path = write_profile(dir.path(), &p);
    let check = raykueue(&["check", "--profile", path.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0));
    assert!(
        stderr(&check).contains("warning[RK454]"),
        "{}",
        stderr(&check)
    );
    let (_keep, sb) = sandbox_for(&p);
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(called(
        &calls,
        "az identity create --name ray-workload-identity"
    ));
    assert!(!sb.transcript(&calls).contains("federated-credential"));
}

#[test]
fn a_profile_without_azure_gets_scripts_without_az() {
    let mut p = shipped("team");
    p.as_object_mut().unwrap().remove("azure");
    p["serviceAccount"]["workloadIdentity"] = json!(false);
    let (_keep, sb) = sandbox_for(&p);
    for script in ["up.sh", "verify.sh", "down.sh"] {
        let t = fs::read_to_string(sb.bundle().join("infra").join(script)).unwrap();
        assert!(!t.contains("az "), "{script} calls no az");
    }
    let (out, calls) = sb.run("up.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(calls.iter().all(|c| c[0] != "az"));
    assert!(
        calls.iter().any(|c| c[0] == "helm"),
        "operators are still installed"
    );
    let (out, _) = sb.run("down.sh", &["--delete-resource-group"], &[]);
    assert_eq!(out.status.code(), Some(2), "no resource group to delete");
}

// ---- Values files --------------------------------------------------------------------------

#[test]
fn kueue_values_hold_a_configuration_string_with_the_profiles_frameworks() {
    let mut p = shipped("team");
    p["operators"]["kueue"]["featureGates"] = json!({"TopologyAwareScheduling": true});
    let (_keep, sb) = sandbox_for(&p);
    let values: Value = serde_saphyr::from_str(
        &fs::read_to_string(sb.bundle().join("infra/kueue-values.yaml")).unwrap(),
    )
    .unwrap();
    let config = values["managerConfig"]["controllerManagerConfigYaml"]
        .as_str()
        .expect("a string, as the chart wants");
    let config: Value = serde_saphyr::from_str(config).unwrap();
    assert_eq!(config["apiVersion"], "config.kueue.x-k8s.io/v1beta2");
    assert_eq!(config["kind"], "Configuration");
    assert_eq!(
        config["integrations"]["frameworks"],
        json!(["batch/job", "pod", "ray.io/rayjob", "ray.io/rayservice"])
    );
    // The pod webhook confined to the profile's namespace (RK147): the chart copies this
    // selector into its webhooks' namespaceSelector.
    assert_eq!(
        config["managedJobsNamespaceSelector"],
        json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["ray"]}]})
    );
    assert_eq!(
        values["controllerManager"]["featureGates"],
        json!([{"name": "TopologyAwareScheduling", "enabled": true}])
    );
    let up = fs::read_to_string(sb.bundle().join("infra/up.sh")).unwrap();
    assert!(up.contains("--values \"$DIR/kueue-values.yaml\""));
    assert!(up.contains("readonly KUEUE_CHART='oci://registry.k8s.io/kueue/charts/kueue'"));
    assert!(up.contains("readonly KUEUE_VERSION='0.19.2'"));
}

/// Every field of `operators.kueue.configuration` reaches Kueue's Configuration as written,
/// replacing the chart's field of the same name and leaving the others alone.
#[test]
fn the_profiles_kueue_configuration_is_merged_over_the_charts() {
    let mut p = shipped("team");
    let fragment = json!({
        "fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
        "admissionFairSharing": {"usageHalfLifeTime": "168h", "usageSamplingInterval": "5m", "resourceWeights": {"nvidia.com/gpu": 2}},
        "waitForPodsReady": {"timeout": "10m", "blockAdmission": false, "recoveryTimeout": "3m",
            "requeuingStrategy": {"timestamp": "Eviction", "backoffLimitCount": 5, "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600}},
        "resources": {"excludeResourcePrefixes": ["ephemeral-storage"],
            "transformations": [{"input": "nvidia.com/mig-1g.10gb", "strategy": "Replace", "outputs": {"example.com/gpu-share": "1"}}]},
    });
    for (k, v) in fragment.as_object().unwrap() {
        p["operators"]["kueue"]["configuration"][k] = v.clone();
    }
    let (_keep, sb) = sandbox_for(&p);
    let values: Value = serde_saphyr::from_str(
        &fs::read_to_string(sb.bundle().join("infra/kueue-values.yaml")).unwrap(),
    )
    .unwrap();
    let config: Value = serde_saphyr::from_str(
        values["managerConfig"]["controllerManagerConfigYaml"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    for (k, v) in fragment.as_object().unwrap() {
        let got = &config[k.as_str()];
        // Weights are numbers: 2 and 2.0 are the same weight to Kueue.
        if k == "admissionFairSharing" {
            assert_eq!(got["resourceWeights"]["nvidia.com/gpu"].as_f64(), Some(2.0));
            assert_eq!(got["usageHalfLifeTime"], v["usageHalfLifeTime"]);
            continue;
        }
        assert_eq!(got, v, "{k}");
    }
    assert_eq!(
        config["clientConnection"]["qps"], 300,
        "the chart's own fields stay"
    );
    assert_eq!(
        config["managedJobsNamespaceSelector"]["matchExpressions"][0]["values"],
        json!(["ray"])
    );
}

// ---- GPU smoke test (seed 004, step 4) -----------------------------------------------------

/// Whether some call has every word of `words` (in any order: flags may come first).
fn has_words(calls: &[Vec<String>], words: &str) -> bool {
    calls
        .iter()
        .any(|c| words.split_whitespace().all(|w| c.iter().any(|x| x == w)))
}

/// Whether a call is `kubectl delete` of the smoke test's files.
fn deletes_smoke_job(call: &[String]) -> bool {
    call.len() > 2
        && call[..2] == ["kubectl", "delete"]
        && call.iter().any(|w| w.ends_with("infra/smoke/rayjob.yaml"))
        && call
            .iter()
            .any(|w| w.ends_with("infra/smoke/configmap.yaml"))
}

/// smoke.sh of every shipped profile against the stubs: it clears a leftover job, submits the
/// ConfigMap and RayJob, polls until SUCCEEDED, prints the pods' nodes and the job's output
/// (nvidia-smi -L, Ray's resources), and deletes the job last; the calls are in
/// `golden/calls/<profile>-smoke.snap`.
#[test]
fn smoke_submits_waits_prints_and_deletes_its_job() {
    // Profiles that install KubeRay have a smoke test; the Job-only ones have none.
    let with_kuberay = crate::common::shipped_aks()
        .into_iter()
        .filter(|p| crate::common::shipped_text(p).contains("\n  kuberay:"));
    for profile in with_kuberay {
        let sb = Sandbox::new(profile);
        let (out, calls) = sb.run("smoke.sh", &[], &[]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(0), "{profile}\n{t}");
        assert!(t.contains("Smoke test passed"), "{t}");
        assert!(
            t.contains("GPU 0: Tesla V100"),
            "the job's output is shown: {t}"
        );
        let apply = calls
            .iter()
            .position(|c| c[..2] == ["kubectl", "apply"])
            .expect("applies the job");
        assert!(
            deletes_smoke_job(&calls[apply - 1]),
            "a leftover job goes first"
        );
        assert!(
            calls[apply]
                .iter()
                .any(|w| w.ends_with("infra/smoke/rayjob.yaml")),
            "{:?}",
            calls[apply]
        );
        assert!(
            has_words(
                &calls,
                "kubectl get pods --selector ray.io/cluster=raykueue-smoke-x7k2p"
            ),
            "prints the pods and their nodes"
        );
        assert!(deletes_smoke_job(calls.last().unwrap()), "deleted last");
        snapshot_calls(&format!("{profile}-smoke"), &sb.transcript(&calls));
    }
    // Through the queue whose ClusterQueue covers the GPU; directly without Kueue.
    let team = fs::read_to_string(
        Sandbox::new("team")
            .bundle()
            .join("infra/smoke/rayjob.yaml"),
    )
    .unwrap();
    assert!(team.contains("kueue.x-k8s.io/queue-name: team-a"), "{team}");
    assert!(team.contains("suspend: true"));
    let seed = Sandbox::new("kuberay-gpu");
    let direct = fs::read_to_string(seed.bundle().join("infra/smoke/rayjob.yaml")).unwrap();
    assert!(
        !direct.contains("queue-name") && !direct.contains("suspend"),
        "{direct}"
    );
    assert!(direct.contains("nvidia.com/gpu: \"1\""), "{direct}");
}

#[test]
fn smoke_times_out_reports_and_still_deletes_its_job() {
    let sb = Sandbox::new("team");
    let (out, calls) = sb.run(
        "smoke.sh",
        &["--timeout", "0"],
        &[("STUB_RAYJOB_STATE", "Running/RUNNING")],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(1), "{t}");
    assert!(
        t.contains("no success within 0s (last state: Running/RUNNING)"),
        "{t}"
    );
    assert!(t.contains("hint: not admitted"), "{t}");
    assert!(has_words(
        &calls,
        "kubectl describe rayjob raykueue-smoke --namespace ray"
    ));
    assert!(has_words(
        &calls,
        "kubectl get workloads.kueue.x-k8s.io --namespace ray"
    ));
    assert!(!t.contains("Smoke test passed"));
    assert!(deletes_smoke_job(calls.last().unwrap()), "{calls:?}");
    snapshot_calls("team-smoke-timeout", &sb.transcript(&calls));
}

#[test]
fn a_failed_smoke_job_is_reported_and_deleted() {
    for state in ["Failed/FAILED", "Complete/FAILED", "Running/STOPPED"] {
        let sb = Sandbox::new("kuberay-gpu");
        let (out, calls) = sb.run("smoke.sh", &[], &[("STUB_RAYJOB_STATE", state)]);
        let t = text(&out);
        assert_eq!(out.status.code(), Some(1), "{state}: {t}");
        assert!(t.contains(&format!("the RayJob ended as {state}")), "{t}");
        assert!(has_words(
            &calls,
            "kubectl logs job/raykueue-smoke --namespace ray --tail=50"
        ));
        // No Kueue in seed 004: no Workload objects to show.
        assert!(
            !calls
                .iter()
                .any(|c| c.iter().any(|w| w.contains("workloads.kueue")))
        );
        assert!(
            deletes_smoke_job(calls.last().unwrap()),
            "{state}: {calls:?}"
        );
    }
}

/// Ctrl-C or a kill while it waits: the job is still deleted.
#[cfg(unix)]
#[test]
fn an_interrupted_smoke_test_deletes_its_job() {
    let sb = Sandbox::new("team");
    let mut child = sb
        .command(
            "smoke.sh",
            &["--interval", "1"],
            &[("STUB_RAYJOB_STATE", "Suspended/")],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !has_words(&sb.calls(), "get rayjob raykueue-smoke") {
        assert!(started.elapsed().as_secs() < 30, "smoke.sh never polled");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "exits through the TERM trap");
    let calls = sb.calls();
    assert!(deletes_smoke_job(calls.last().unwrap()), "{calls:?}");
}

#[test]
fn smoke_refuses_bad_arguments_before_touching_the_cluster() {
    let sb = Sandbox::new("single");
    for args in [&["--timeout", "soon"][..], &["--timeout"], &["--bogus"]] {
        let (out, calls) = sb.run("smoke.sh", args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(calls.is_empty(), "{args:?}: {calls:?}");
    }
}

#[test]
fn verify_smoke_runs_the_smoke_test_only_after_the_checks_pass() {
    let sb = Sandbox::new("kuberay-gpu");
    let (out, calls) = sb.run("verify.sh", &["--smoke"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let rollout = calls.iter().position(|c| c.iter().any(|w| w == "rollout"));
    let apply = calls.iter().position(|c| c[..2] == ["kubectl", "apply"]);
    assert!(
        rollout.is_some() && apply > rollout,
        "checks first, then the job: {calls:?}"
    );
    assert!(deletes_smoke_job(calls.last().unwrap()));

    let (out, calls) = sb.run("verify.sh", &["--smoke"], &[("STUB_ROLLOUT_FAILS", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("smoke test skipped"), "{}", text(&out));
    assert!(!calls.iter().any(|c| c[..2] == ["kubectl", "apply"]));

    let (out, _) = sb.run("verify.sh", &["--bogus"], &[]);
    assert_eq!(out.status.code(), Some(2));
    // Without --smoke no job is submitted.
    let (_, calls) = sb.run("verify.sh", &[], &[]);
    assert!(!calls.iter().any(|c| c[..2] == ["kubectl", "apply"]));
}

// ---- Script hygiene ------------------------------------------------------------------------

pub(crate) fn scripts(bundle: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(bundle.join("infra"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .collect();
    out.sort();
    out
}

fn shellcheck_available() -> bool {
    Command::new("shellcheck")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `bash -n` and shellcheck (all checks, minus `excluded`) on every script.
pub(crate) fn assert_clean_bash(paths: &[PathBuf], excluded: &[&str]) {
    for p in paths {
        let n = Command::new("bash").arg("-n").arg(p).output().unwrap();
        assert!(n.status.success(), "bash -n {}: {}", p.display(), text(&n));
    }
    if shellcheck_available() {
        let mut sc = Command::new("shellcheck");
        for code in excluded {
            sc.arg(format!("--exclude={code}"));
        }
        let sc = sc.args(paths).output().unwrap();
        assert!(sc.status.success(), "shellcheck:\n{}", text(&sc));
    } else {
        skip(
            "shellcheck",
            "shellcheck is not installed (apt-get install -y shellcheck)",
        );
    }
}

/// The comments of AKS's up.sh say what the script does (issue 40 item 4): AKS installs the
/// NVIDIA driver, not the device plugin, which the script installs with Helm a few lines on.
#[test]
fn aks_up_comments_do_not_claim_aks_installs_the_device_plugin() {
    for profile in shipped_aks() {
        let sb = Sandbox::new(profile);
        let up = fs::read_to_string(sb.bundle().join("infra/up.sh")).unwrap();
        assert!(
            !up.contains("installs the NVIDIA driver and device plugin"),
            "{profile}"
        );
        if up.contains("helm upgrade --install \"$NVIDIA_RELEASE\"") {
            assert!(
                up.contains(
                    "# GPU pool: AKS installs the NVIDIA driver on its nodes, not the device plugin"
                ),
                "{profile}"
            );
        }
    }
}

/// A stub that only records that it was called.
const RECORDER: &str = "#!/usr/bin/env bash\n{ printf '%s\\x1f' \"${0##*/}\" \"$@\"; printf '\\x1e'; } >>\"$STUB_LOG\"\n";

/// Every `.sh` file of a bundle, as paths relative to it.
fn every_script(bundle: &Path) -> Vec<String> {
    fn walk(dir: &Path, bundle: &Path, out: &mut Vec<String>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, bundle, out);
            } else if p.extension().is_some_and(|e| e == "sh") {
                let rel = p.strip_prefix(bundle).unwrap();
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut out = Vec::new();
    walk(bundle, bundle, &mut out);
    out.sort();
    out
}

/// Every generated script reads its arguments before it runs anything (issue 40 item 6:
/// `infra/up.sh --help` used to start provisioning): `--help` and `-h` print its usage and what
/// it does on stdout and exit 0; an unknown argument exits 2 with the usage on stderr; either way
/// no cloud CLI, kubectl or helm is called (recording stubs of each come first on PATH).
#[test]
fn every_script_reads_its_arguments_before_it_calls_anything() {
    let every = crate::common::shipped().into_iter().chain([
        "profiles/examples/team-gke.yaml",
        "profiles/examples/fair-sharing.yaml",
        "profiles/examples/prod.yaml",
        "profiles/examples/fleet.yaml",
    ]);
    let clis = [
        "az",
        "gcloud",
        "aws",
        "eksctl",
        "aliyun",
        "kubectl",
        "helm",
        "jq",
        "curl",
        "kubelogin",
    ];
    let mut seen = 0;
    for profile in every {
        let sb = Sandbox::new(profile);
        for cli in clis {
            sb.add_stub(cli, RECORDER);
        }
        for script in every_script(&sb.bundle()) {
            let what = format!("{profile}: {script}");
            for help in ["--help", "-h"] {
                let (out, calls) = sb.run(&script, &[help], &[]);
                let shown = String::from_utf8_lossy(&out.stdout);
                assert_eq!(out.status.code(), Some(0), "{what} {help}: {}", text(&out));
                assert!(shown.starts_with("usage: "), "{what} {help}: {shown}");
                assert!(
                    shown.lines().filter(|l| !l.trim().is_empty()).count() >= 3,
                    "{what} {help} says what it does: {shown}"
                );
                assert!(calls.is_empty(), "{what} {help}: {calls:?}");
            }
            let (out, calls) = sb.run(&script, &["--bogus"], &[]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what} --bogus: {}", text(&out));
            assert!(
                err.contains("unknown argument --bogus") && err.contains("usage: "),
                "{what} --bogus: {err}"
            );
            assert!(out.stdout.is_empty(), "{what} --bogus");
            assert!(calls.is_empty(), "{what} --bogus: {calls:?}");
            seen += 1;
        }
    }
    // 11 bundles × up, verify, down, smoke; the fleet's connect, verify and member scripts.
    assert!(seen >= 44, "{seen} scripts");
}

/// Every provider's scripts (each shipped profile, and the GKE example that extends `team`).
#[test]
fn scripts_pass_bash_n_and_shellcheck_and_are_executable() {
    let every = crate::common::shipped()
        .into_iter()
        .chain(["profiles/examples/team-gke.yaml"]);
    for profile in every {
        let sb = Sandbox::new(profile);
        let paths = scripts(&sb.bundle());
        // smoke.sh is a RayJob: the Job-only bundles, without KubeRay, have none.
        let smoke = usize::from(!matches!(profile, "autoscale" | "gpu-autoscale"));
        assert_eq!(paths.len(), 3 + smoke, "{profile}: up, verify, down, smoke");
        assert_clean_bash(&paths, &[]);
        #[cfg(unix)]
        for p in &paths {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(p).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755, "{}", p.display());
        }
    }
}

#[test]
fn a_mode_change_alone_is_repaired_by_gen_and_ignored_by_check() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let sb = Sandbox::new("team");
        let up = sb.bundle().join("infra/up.sh");
        fs::set_permissions(&up, fs::Permissions::from_mode(0o644)).unwrap();
        let dir = sb.bundle();
        let dir = dir.to_str().unwrap();
        let check = raykueue(&["gen", "--profile", "team", "--check", dir]);
        assert_eq!(
            check.status.code(),
            Some(0),
            "--check compares content only"
        );
        let again = raykueue(&["gen", "--profile", "team", "--out", dir]);
        assert_eq!(again.status.code(), Some(0));
        let mode = fs::metadata(&up).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
}

// ---- Injection -----------------------------------------------------------------------------

pub(crate) const EVIL: &[&str] = &[
    "x; touch pwned-semicolon",
    "$(touch pwned-subst)",
    "`touch pwned-backtick`",
    "'; touch pwned-quote; '",
    "\"; touch pwned-dquote; \"",
    "a\ntouch pwned-newline",
    "${IFS}touch${IFS}pwned-ifs",
];

/// Every field that reaches a script, with a JSON pointer into the `single` profile.
const SCRIPT_FIELDS: &[&str] = &[
    "/azure/location",
    "/azure/resourceGroup",
    "/azure/cluster/name",
    "/azure/cluster/kubernetesVersion",
    "/azure/subscription",
    "/azure/nodePools/0/name",
    "/azure/nodePools/0/vmSize",
    "/azure/nodePools/1/name",
    "/azure/nodePools/1/vmSize",
    "/azure/nodePools/1/taints/0/key",
    "/azure/nodePools/1/taints/0/value",
    "/azure/nodePools/1/labels/team",
    "/azure/identity/name",
    "/azure/identity/federatedCredential",
    "/azure/identity/clientId",
    "/azure/identity/tenantId",
    "/azure/storage/account",
    "/azure/storage/containers/0",
    "/azure/storage/role",
    "/operators/kueue/chart",
    "/operators/kueue/version",
    "/operators/kueue/namespace",
    "/operators/kueue/release",
    "/operators/kuberay/repo",
    "/operators/kuberay/chart",
    "/operators/kuberay/version",
    "/operators/kuberay/namespace",
    "/operators/kuberay/release",
    "/namespace",
    "/serviceAccount/name",
    "/flavors/1/name",
    "/flavors/1/nodeLabels/accelerator",
    "/queues/clusterQueues/0/name",
    "/queues/localQueues/0/name",
];

/// `single` plus the optional fields above (a taint and a label on the GPU pool, a subscription,
/// pinned identity IDs, explicit release names).
fn base_profile() -> Value {
    let mut p = shipped("single");
    p["azure"]["subscription"] = json!("00000000-0000-0000-0000-000000000001");
    p["azure"]["nodePools"][1]["taints"] =
        json!([{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]);
    p["azure"]["nodePools"][1]["labels"] = json!({"team": "ray"});
    p["azure"]["identity"]["clientId"] = json!("22222222-2222-2222-2222-222222222222");
    p["azure"]["identity"]["tenantId"] = json!("44444444-4444-4444-4444-444444444444");
    p["operators"]["kueue"]["release"] = json!("kueue");
    p["operators"]["kuberay"]["release"] = json!("kuberay-operator");
    p
}

#[test]
fn the_schema_refuses_shell_syntax_in_every_field_that_reaches_a_script() {
    let dir = tempfile::tempdir().unwrap();
    for pointer in SCRIPT_FIELDS {
        for evil in EVIL {
            let mut p = base_profile();
            *p.pointer_mut(pointer)
                .unwrap_or_else(|| panic!("{pointer} is in the base profile")) = json!(evil);
            let path = write_profile(dir.path(), &p);
            let out = raykueue(&["check", "--profile", path.to_str().unwrap()]);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{pointer} = {evil:?} accepted");
            assert!(
                err.contains("profile.yaml:"),
                "{pointer}: located diagnostic\n{err}"
            );
        }
    }
    // Keys are fields too: a label key.
    let mut p = base_profile();
    p["azure"]["nodePools"][1]["labels"] = json!({"a;b": "ray"});
    let path = write_profile(dir.path(), &p);
    assert_eq!(
        raykueue(&["check", "--profile", path.to_str().unwrap()])
            .status
            .code(),
        Some(1)
    );
}

/// Past the schema (a typed profile built directly), the scripts still treat every value as
/// one inert word: nothing runs, and each value reaches az/kubectl/helm byte for byte.
#[test]
fn values_that_bypass_the_schema_stay_inert_in_the_scripts() {
    let mut p = base_profile();
    let mut expected = Vec::new();
    for (i, pointer) in SCRIPT_FIELDS.iter().enumerate() {
        // Label keys are map keys; they are replaced below.
        if pointer.ends_with("/labels/team") || pointer.ends_with("nodeLabels/accelerator") {
            continue;
        }
        let evil = format!("{}-{i}", EVIL[i % EVIL.len()]);
        *p.pointer_mut(pointer)
            .unwrap_or_else(|| panic!("{pointer} is in the base profile")) = json!(evil);
        expected.push((*pointer, evil));
    }
    p["azure"]["nodePools"][1]["labels"] = json!({"k$(touch pwned-lk)": "v`touch pwned-lv`"});
    p["flavors"][1]["nodeLabels"] = json!({"k'x": "v\ntouch pwned-fl"});
    // Names are checked while deserializing; this test is about what happens past that.
    let profile: raykueue::api::profile::Profile =
        raykueue::api::profile::unchecked(|| serde_json::from_value(p)).unwrap();
    let files = crate::common::infra_text(&profile);
    let sb = Sandbox::from_files(&files);
    // SC2016 ("expressions don't expand in single quotes") is the point here: it is shellcheck
    // noticing that `$(...)` and backticks in the values are inert text.
    assert_clean_bash(&scripts(&sb.bundle()), &["SC2016"]);

    // The client ID az reports is the (pinned, evil) one, so the identity check passes.
    let client = profile
        .azure
        .as_ref()
        .and_then(|a| a.identity.as_ref())
        .and_then(|i| i.client_id.as_ref())
        .unwrap()
        .to_string();
    let tenant = profile
        .azure
        .as_ref()
        .and_then(|a| a.identity.as_ref())
        .and_then(|i| i.tenant_id.as_ref())
        .unwrap()
        .to_string();
    let env = [
        ("STUB_CLIENT_ID", client.as_str()),
        ("STUB_TENANT_ID", tenant.as_str()),
    ];
    let (up, up_calls) = sb.run("up.sh", &[], &env);
    let (verify, _) = sb.run("verify.sh", &[], &env);
    let down_env = [env[0], env[1], ("STUB_EXISTS", "1")];
    let (down, down_calls) = sb.run("down.sh", &["--delete-resource-group"], &down_env);
    let (down_k8s, _) = sb.run("down.sh", &[], &env);
    for (name, o) in [
        ("up", &up),
        ("verify", &verify),
        ("down", &down),
        ("down (cluster)", &down_k8s),
    ] {
        assert_eq!(o.status.code(), Some(0), "{name}\n{}", text(o));
    }
    let pwned: Vec<String> = fs::read_dir(sb.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("pwned"))
        .collect();
    assert!(pwned.is_empty(), "injected commands ran: {pwned:?}");

    // Each value arrives as (part of) exactly the argument it belongs to.
    let words: Vec<&String> = up_calls.iter().chain(&down_calls).flatten().collect();
    for (pointer, value) in &expected {
        // The profile name is only logged; pinned IDs are only compared with Azure's.
        if [
            "/name",
            "/azure/identity/clientId",
            "/azure/identity/tenantId",
        ]
        .contains(pointer)
        {
            continue;
        }
        assert!(
            words.iter().any(|w| w.contains(value.as_str())),
            "{value:?} reached no command intact"
        );
    }
    let rg = profile.azure.as_ref().unwrap().resource_group.to_string();
    assert!(
        up_calls
            .iter()
            .any(|c| c.starts_with(&words_of("az group create")) && c.contains(&rg)),
        "resource group passed as one word"
    );
}

fn words_of(s: &str) -> Vec<String> {
    s.split(' ').map(str::to_owned).collect()
}

// ---- az-argcheck ---------------------------------------------------------------------------

/// Every az command of the seed profile and of `single` (a superset of `team`'s) checked by the
/// real Azure CLI, offline (`../shared/tools/az-argcheck`). Skips when the tool or its Azure
/// CLI install is missing (exit 2), or with RAYKUEUE_SKIP_AZ_ARGCHECK=1 — and fails instead under CI.
#[test]
fn az_commands_pass_az_argcheck() {
    let tool = repo().join("../shared/tools/az-argcheck");
    if !tool.exists() {
        skip("az-argcheck", "../shared/tools/az-argcheck is absent");
        return;
    }
    if std::env::var_os("RAYKUEUE_SKIP_AZ_ARGCHECK").is_some() {
        skip("az-argcheck", "RAYKUEUE_SKIP_AZ_ARGCHECK is set");
        return;
    }
    // team shares single's az commands; the prod example adds an autoscaled GPU pool.
    for profile in [
        "kuberay-gpu",
        "single",
        "autoscale",
        "gpu-autoscale",
        "profiles/examples/prod.yaml",
    ] {
        let sb = Sandbox::new(profile);
        let infra = sb.bundle().join("infra");
        // smoke.sh runs no az command; the tool runs it (its polling loop stopped) and checks
        // that nothing in it reaches az with bad arguments.
        for (script, args) in [
            ("up.sh", ""),
            ("down.sh", "--delete-resource-group"),
            ("smoke.sh", "--timeout 5"),
        ] {
            // The Job-only profiles install no KubeRay and have no smoke test.
            if !infra.join(script).exists() && matches!(profile, "autoscale" | "gpu-autoscale") {
                continue;
            }
            // Its GPU pool's `--labels` is a bash array, which the static pass cannot expand:
            // its up.sh is checked as recorded below.
            if (profile, script) == ("gpu-autoscale", "up.sh") {
                continue;
            }
            let mut cmd = Command::new(&tool);
            if !args.is_empty() {
                cmd.arg(format!("--script-args={args}"));
            }
            let out = cmd.arg(infra.join(script)).output().unwrap();
            let t = text(&out);
            if out.status.code() == Some(2) {
                skip("az-argcheck", t.trim());
                return;
            }
            assert_eq!(out.status.code(), Some(0), "{profile} {script}\n{t}");
            assert!(t.contains(" 0 failed"), "{profile} {script}\n{t}");
        }
        // The tool's static pass cannot expand bash arrays (`--labels "${POOL1_LABELS[@]}"`),
        // and its deep run finds every resource present: the creates are checked as the stubs
        // recorded them on an empty cloud, word for word.
        let (out, calls) = sb.run("up.sh", &[], &[]);
        assert_eq!(out.status.code(), Some(0), "{profile}: {}", text(&out));
        for call in calls
            .iter()
            .filter(|c| c[0] == "az" && c.iter().any(|w| w == "add" || w == "create"))
        {
            assert_az_call_passes(&tool, profile, call);
        }
    }
}

/// One recorded `az` call, word for word, through `az-argcheck --cmd`: it must pass.
pub(crate) fn assert_az_call_passes(tool: &Path, label: &str, call: &[String]) {
    let line = call
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(tool).arg("--cmd").arg(&line).output().unwrap();
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{label}: {line}\n{t}");
    assert!(t.contains(" 0 failed"), "{label}: {line}\n{t}");
}

/// A word as bash reads it back: single-quoted unless it is plain.
fn shell_quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@".contains(c))
    {
        w.to_owned()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// Without Ray defaults there is no smoke test, and `verify.sh` takes no option: it refuses
/// any argument and is still shellcheck-clean (it used to keep an unused `SMOKE` and an
/// unreachable `shift`).
#[test]
fn verify_without_a_smoke_test_takes_no_option_and_is_clean() {
    let mut p = base_profile();
    p.as_object_mut().unwrap().remove("ray");
    let profile: raykueue::api::profile::Profile = serde_json::from_value(p).unwrap();
    let files = crate::common::infra_text(&profile);
    assert!(
        !files.iter().any(|(f, _)| f.ends_with("smoke.sh")),
        "no smoke test without Ray defaults"
    );
    let sb = Sandbox::from_files(&files);
    assert_clean_bash(&scripts(&sb.bundle()), &[]);
    let (out, calls) = sb.run("verify.sh", &["--smoke"], &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("unknown argument --smoke"),
        "{}",
        text(&out)
    );
    assert!(calls.is_empty(), "nothing runs: {calls:?}");
}

/// Azure compares VM size names without regard to case: a size written in lowercase is a size,
/// and the scripts and the nodes' instance-type label carry Azure's own spelling.
#[test]
fn a_vm_size_in_any_case_is_accepted_and_written_as_azure_spells_it() {
    let text = crate::common::shipped_text("kuberay-gpu")
        .replace("Standard_NC8as_T4_v3", "standard_nc8as_t4_v3");
    assert!(text.contains("standard_nc8as_t4_v3"), "the GPU pool's size");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.yaml");
    std::fs::write(&path, text).unwrap();
    let out_dir = dir.path().join("out");
    let out = crate::common::raykueue(&[
        "gen",
        "--profile",
        &path.display().to_string(),
        "--out",
        &out_dir.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", crate::common::stderr(&out));
    let up = std::fs::read_to_string(out_dir.join("infra/up.sh")).unwrap();
    assert!(
        up.contains("Standard_NC8as_T4_v3"),
        "up.sh writes Azure's spelling"
    );
    assert!(
        !up.contains("standard_nc8as_t4_v3"),
        "and not the profile's"
    );
}
