//! Fleets (`kind: Fleet`, docs/fleets.md): the tree `gen --out` writes, the
//! CLI's fleet cases, `simulate` across the clusters, the bad-fleet corpus (one case per fleet
//! code, each pointing into the member file that must change), and `fleet/connect.sh` and
//! `fleet/verify.sh` run against a recording `kubectl`.

use crate::cli::parse_stream;
use crate::common::{raykueue, repo, skip, stderr, stdout};
use crate::infra::{Sandbox, assert_clean_bash, snapshot_calls, text};
use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const FLEET: &str = "profiles/examples/fleet.yaml";
const SCENARIO: &str = "profiles/examples/fleet-scenario.yaml";

/// Every file under `dir`, as paths relative to it, sorted.
fn files(dir: &Path) -> BTreeSet<String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy();
                out.insert(rel.replace('\\', "/"));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn gen_out(profile: &str, dir: &Path) {
    let out = raykueue(&["gen", "--profile", profile, "--out", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

fn objects(path: &Path) -> Vec<Value> {
    parse_stream(&fs::read_to_string(path).unwrap())
}

fn named<'a>(objs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    objs.iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {objs:#?}"))
}

// ---- The tree ----------------------------------------------------------------------------------

/// docs/fleets.md, "The tree": each worker's folder is exactly the bundle its profile
/// writes alone, plus the manager's access (and its listing in the kustomization and in
/// down.sh) and the member's `kubeconfig.sh`.
#[test]
fn each_worker_gets_its_own_bundle_plus_the_managers_access() {
    let dir = tempfile::tempdir().unwrap();
    gen_out(FLEET, &dir.path().join("fleet"));
    for (worker, profile) in [
        ("aks-east", "team"),
        ("gke-west", "profiles/examples/team-gke.yaml"),
    ] {
        let alone = dir.path().join(worker);
        gen_out(profile, &alone);
        let mine = dir.path().join("fleet").join(worker);
        let mut theirs = files(&alone);
        theirs.remove(".raykueue-files");
        let added: BTreeSet<String> = files(&mine).difference(&theirs).cloned().collect();
        assert_eq!(
            added,
            BTreeSet::from([
                "infra/kubeconfig.sh".to_owned(),
                "platform/50-multikueue-access.yaml".to_owned()
            ]),
            "{worker}"
        );
        assert!(files(&mine).is_superset(&theirs), "{worker}");
        for f in &theirs {
            let a = fs::read_to_string(alone.join(f)).unwrap();
            let b = fs::read_to_string(mine.join(f)).unwrap();
            if f == "platform/kustomization.yaml" || f == "infra/down.sh" {
                // Listed for `kubectl apply -k` and for down.sh's delete, nothing else.
                assert!(b.contains("50-multikueue-access.yaml"), "{worker}/{f}");
                let without = b
                    .replace("- 50-multikueue-access.yaml\n", "")
                    .replace("'platform/50-multikueue-access.yaml' ", "");
                assert_eq!(without, a, "{worker}/{f}: only the access file is new");
            } else {
                assert_eq!(a, b, "{worker}/{f} differs from the profile's own bundle");
            }
        }
    }
}

/// The manager's MultiKueue objects tie its queues to the workers: every ClusterQueue names
/// the AdmissionCheck, the check names the MultiKueueConfig, the config lists every worker in
/// fleet order, each MultiKueueCluster reads the Secret connect.sh creates
/// (kueue@v0.19.2 apis/kueue/v1beta2/multikueue_types.go), and the manager's RayJob is handed
/// to MultiKueue (`spec.managedBy`, kuberay@v1.7.0 ray-operator/apis/ray/v1/rayjob_types.go).
#[test]
fn the_manager_dispatches_every_queue_through_multikueue() {
    let dir = tempfile::tempdir().unwrap();
    gen_out(FLEET, dir.path());
    let m = dir.path().join("manager");
    let mk = objects(&m.join("platform/18-multikueue.yaml"));
    let check = named(&mk, "AdmissionCheck", "global-multikueue");
    assert_eq!(check["spec"]["controllerName"], "kueue.x-k8s.io/multikueue");
    assert_eq!(check["spec"]["parameters"]["kind"], "MultiKueueConfig");
    assert_eq!(check["spec"]["parameters"]["name"], "global");
    let config = named(&mk, "MultiKueueConfig", "global");
    assert_eq!(
        config["spec"]["clusters"],
        serde_json::json!(["aks-east", "gke-west"])
    );
    for w in ["aks-east", "gke-west"] {
        let c = named(&mk, "MultiKueueCluster", w);
        let kc = &c["spec"]["clusterSource"]["kubeConfig"];
        assert_eq!(kc["locationType"], "Secret");
        assert_eq!(kc["location"], format!("{w}-kubeconfig"));
    }
    let cqs = objects(&m.join("platform/20-clusterqueues.yaml"));
    assert_eq!(
        cqs.len(),
        2,
        "one derived ClusterQueue per worker LocalQueue"
    );
    for cq in &cqs {
        assert_eq!(
            cq["spec"]["admissionChecksStrategy"]["admissionChecks"][0]["name"],
            "global-multikueue",
            "{cq:#}"
        );
    }
    // Derived quota: the workers' sum behind each LocalQueue (4 GPUs of team A on each).
    let gpus = cqs[0]["spec"]["resourceGroups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["flavors"][0]["resources"].as_array().unwrap().clone())
        .find(|r| r["name"] == "nvidia.com/gpu")
        .unwrap();
    assert_eq!(gpus["nominalQuota"], "8", "{:#}", cqs[0]);
    let lqs = objects(&m.join("platform/30-localqueues.yaml"));
    let names: BTreeSet<&str> = lqs
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, BTreeSet::from(["team-a", "team-b"]));
    let job = &objects(&m.join("workloads/fleet-finetune/rayjob.yaml"))[0];
    assert_eq!(job["spec"]["managedBy"], "kueue.x-k8s.io/multikueue");
    let values = fs::read_to_string(m.join("infra/kueue-values.yaml")).unwrap();
    assert!(values.contains("origin: global"), "{values}");
    assert!(
        values.contains("dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-all-at-once"),
        "{values}"
    );
    // The manager runs no job pods: no smoke test, no GPU device plugin.
    assert!(!m.join("infra/smoke.sh").exists());
    assert!(!m.join("infra/nvidia-device-plugin-values.yaml").exists());
}

/// The manager's ServiceAccount on each worker may do what MultiKueue does there and no more
/// (kueue@v0.19.2 site/static/examples/multikueue/create-multikueue-kubeconfig.sh: Workloads
/// and the enabled integrations' kinds); its token Secret is the long-lived kind connect.sh
/// reads.
#[test]
fn each_worker_grants_the_manager_only_the_kinds_it_dispatches() {
    let dir = tempfile::tempdir().unwrap();
    gen_out(FLEET, dir.path());
    for w in ["aks-east", "gke-west"] {
        let objs = objects(
            &dir.path()
                .join(w)
                .join("platform/50-multikueue-access.yaml"),
        );
        let sa = named(&objs, "ServiceAccount", "multikueue-sa");
        assert_eq!(sa["metadata"]["namespace"], "kueue-system");
        let secret = named(&objs, "Secret", "multikueue-sa-token");
        assert_eq!(secret["type"], "kubernetes.io/service-account-token");
        assert_eq!(
            secret["metadata"]["annotations"]["kubernetes.io/service-account.name"],
            "multikueue-sa"
        );
        let groups: BTreeSet<String> = objs
            .iter()
            .filter(|o| o["kind"] == "ClusterRole")
            .flat_map(|o| o["rules"].as_array().unwrap().clone())
            .flat_map(|r| {
                let g = r["apiGroups"][0].as_str().unwrap().to_owned();
                r["resources"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(move |x| format!("{}.{g}", x.as_str().unwrap()))
                    .collect::<Vec<_>>()
            })
            .collect();
        // The manager enables ray.io/rayjob only: no RayCluster, RayService or batch Job.
        assert!(groups.contains("rayjobs.ray.io"), "{groups:?}");
        assert!(groups.contains("workloads.kueue.x-k8s.io"), "{groups:?}");
        assert!(
            !groups
                .iter()
                .any(|g| g.starts_with("rayclusters.") || g.starts_with("rayservices.")),
            "{groups:?}"
        );
        assert!(
            !groups.iter().any(|g| g.starts_with("jobs.batch")),
            "{groups:?}"
        );
        let binding = objs
            .iter()
            .find(|o| o["kind"] == "ClusterRoleBinding")
            .unwrap();
        assert_eq!(binding["subjects"][0]["name"], "multikueue-sa");
    }
}

/// What a reviewer sees of a fleet: the manager's whole bundle, the fleet's own files, and
/// each worker's additions (the rest of a worker's folder is its profile's bundle, compared
/// file by file above), behind the list of every file.
#[test]
fn the_fleet_tree_matches_its_golden() {
    let dir = tempfile::tempdir().unwrap();
    gen_out(FLEET, dir.path());
    let all = files(dir.path());
    let mut out = String::from("# files:\n");
    for f in &all {
        out.push_str(&format!("#   {f}\n"));
    }
    for f in all.iter().filter(|f| {
        f.starts_with("manager/")
            || f.starts_with("fleet/")
            || *f == "SUMMARY.md"
            || f.ends_with("/50-multikueue-access.yaml")
            || f.ends_with("/infra/kubeconfig.sh")
    }) {
        let content = fs::read_to_string(dir.path().join(f)).unwrap();
        out.push_str(&format!("# file: {f}\n{content}"));
        if !content.ends_with('\n') {
            out.push('\n');
        }
    }
    insta::with_settings!({
        snapshot_path => "../../golden",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("examples-fleet", out);
    });
}

// ---- The CLI -----------------------------------------------------------------------------------

#[test]
fn gen_of_a_fleet_streams_one_member_only_when_asked() {
    // No --out: a fleet is several clusters, one stream would be applied to the wrong one.
    let out = raykueue(&["gen", "--profile", FLEET]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert!(stderr(&out).contains("--cluster"), "{}", stderr(&out));

    let out = raykueue(&["gen", "--profile", FLEET, "--cluster", "gke-west"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = parse_stream(&stdout(&out));
    named(&docs, "ServiceAccount", "multikueue-sa");
    named(&docs, "ClusterQueue", "team-a-cq");
    assert!(
        !docs.iter().any(|d| d["kind"] == "MultiKueueConfig"),
        "a worker's stream has no manager objects"
    );

    let out = raykueue(&["gen", "--profile", FLEET, "--cluster", "manager"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = parse_stream(&stdout(&out));
    named(&docs, "MultiKueueConfig", "global");
    named(&docs, "ClusterQueue", "team-a");

    let out = raykueue(&["gen", "--profile", FLEET, "--cluster", "eu-north"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("manager") && err.contains("aks-east") && err.contains("gke-west"),
        "the members are listed: {err}"
    );

    let out = raykueue(&["gen", "--profile", "team", "--cluster", "aks-east"]);
    assert_eq!(out.status.code(), Some(2), "--cluster is a fleet's");
    assert!(out.stdout.is_empty());
}

#[test]
fn check_of_a_fleet_checks_every_member() {
    let out = raykueue(&["check", "--profile", FLEET]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // team's documented RK202 warning, reported once per member that uses team's pools.
    let err = stderr(&out);
    assert!(err.contains("warning[RK202]"), "{err}");
    assert!(err.contains("profiles/team.yaml:"), "{err}");
    let out = raykueue(&["check", "--profile", FLEET, "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(1));
}

// ---- simulate ----------------------------------------------------------------------------------

fn events(profile: &str, scenario: &str) -> Vec<Value> {
    let out = raykueue(&[
        "simulate",
        "--profile",
        profile,
        "--scenario",
        scenario,
        "--output",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn admitted_on(events: &[Value], workload: &str) -> Vec<(String, u64)> {
    events
        .iter()
        .filter(|e| {
            e["event"] == "Admitted" && e["workload"] == workload && e["cluster"] != "manager"
        })
        .map(|e| {
            (
                e["cluster"].as_str().unwrap().to_owned(),
                e["time"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// docs/fleets.md, "simulate": the manager admits first, then the first worker that
/// admits a copy runs it. aks-east holds team A's 4 GPUs and borrows team B's 4: two 4-GPU jobs;
/// the third and the fourth spill to gke-west.
#[test]
fn simulate_spills_to_the_next_worker_when_the_first_is_full() {
    let ev = events(FLEET, SCENARIO);
    assert!(
        ev.iter()
            .filter(|e| e["event"] != "End")
            .all(|e| e["cluster"].is_string()),
        "every event but the fleet's end names its cluster"
    );
    for w in ["finetune-1", "finetune-2", "finetune-3", "finetune-4"] {
        let manager = ev
            .iter()
            .position(|e| {
                e["event"] == "Admitted" && e["workload"] == w && e["cluster"] == "manager"
            })
            .unwrap_or_else(|| panic!("{w} admitted on the manager"));
        let worker = ev
            .iter()
            .position(|e| {
                e["event"] == "Admitted" && e["workload"] == w && e["cluster"] != "manager"
            })
            .unwrap();
        assert!(manager < worker, "{w}: the manager's quota first");
        assert_eq!(admitted_on(&ev, w).len(), 1, "{w} runs on one worker");
    }
    assert_eq!(admitted_on(&ev, "finetune-1"), [("aks-east".to_owned(), 0)]);
    assert_eq!(admitted_on(&ev, "finetune-2"), [("aks-east".to_owned(), 0)]);
    assert_eq!(admitted_on(&ev, "finetune-3"), [("gke-west".to_owned(), 0)]);
    assert_eq!(
        admitted_on(&ev, "finetune-4"),
        [("gke-west".to_owned(), 600)]
    );
    // The manager's quota is released when the worker's copy finishes.
    let done = |cluster: &str| {
        ev.iter()
            .find(|e| {
                e["event"] == "Finished" && e["workload"] == "finetune-3" && e["cluster"] == cluster
            })
            .map(|e| e["time"].as_u64().unwrap())
    };
    assert_eq!(done("gke-west"), Some(1800));
    assert_eq!(done("manager"), Some(1800));

    let human = raykueue(&["simulate", "--profile", FLEET, "--scenario", SCENARIO]);
    assert_eq!(human.status.code(), Some(0));
    insta::with_settings!({
        snapshot_path => "../../golden/simulate",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("fleet-spill", stdout(&human));
    });
}

/// Incremental dispatch (kueue@v0.19.2 pkg/controller/workloaddispatcher/
/// incrementaldispatcher.go, `incrementalDispatcherRoundTimeout` = 5 minutes): one more worker
/// per round, so the job the first worker cannot take reaches the second a round later.
#[test]
fn the_incremental_dispatcher_offers_one_more_worker_each_round() {
    let dir = tempfile::tempdir().unwrap();
    let examples = repo().join("profiles/examples");
    let fleet = dir.path().join("fleet.yaml");
    fs::write(
        &fleet,
        format!(
            "apiVersion: raykueue.io/v1alpha1\nkind: Fleet\nname: global\nmanager:\n  profile: {m}\nworkers:\n  - name: aks-east\n    profile: team\n  - name: gke-west\n    profile: {g}\nmultiKueue:\n  dispatcher: Incremental\n  stepSize: 1\n",
            m = examples.join("fleet-manager.yaml").display(),
            g = examples.join("team-gke.yaml").display(),
        ),
    )
    .unwrap();
    let ev = events(fleet.to_str().unwrap(), SCENARIO);
    assert_eq!(admitted_on(&ev, "finetune-1"), [("aks-east".to_owned(), 0)]);
    assert_eq!(admitted_on(&ev, "finetune-2"), [("aks-east".to_owned(), 0)]);
    assert_eq!(
        admitted_on(&ev, "finetune-3"),
        [("gke-west".to_owned(), 300)]
    );
    // Submitted at 600 s: aks-east is full, gke-west comes in at the next round.
    assert_eq!(
        admitted_on(&ev, "finetune-4"),
        [("gke-west".to_owned(), 900)]
    );
}

// ---- Bad fleets --------------------------------------------------------------------------------

/// `(code, file)` pairs of a case's `expect`: the code, and the file (relative to the corpus)
/// its diagnostic must point into.
fn expectations(case: &Path) -> Vec<(String, String)> {
    fs::read_to_string(case.join("expect"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (code, file) = l.split_once(' ').unwrap();
            (code.to_owned(), file.trim().to_owned())
        })
        .collect()
}

/// Every `tests/fixtures/bad-fleets/<case>/fleet.yaml` is refused (exit 1, nothing on stdout),
/// with the expected code located in the member file that must change — the fleet file, the
/// manager's profile or a worker's (docs/fleets.md, "What is checked"). Warnings' cases run with `--deny-warnings` (their `args` file).
#[test]
fn every_bad_fleet_is_refused_in_the_file_that_must_change() {
    let corpus = repo().join("tests/fixtures/bad-fleets");
    let mut covered = BTreeSet::new();
    let mut cases: Vec<PathBuf> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("fleet.yaml").exists())
        .collect();
    cases.sort();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let rel = format!("tests/fixtures/bad-fleets/{name}/fleet.yaml");
        let extra = fs::read_to_string(case.join("args")).unwrap_or_default();
        let mut args = vec!["check", "--profile", &rel];
        args.extend(extra.split_whitespace());
        let out = raykueue(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(out.stdout.is_empty(), "{name}");
        assert!(!err.contains("panicked"), "{name}");
        for (code, file) in expectations(case) {
            // The `-->` line that follows the code's header.
            let mut lines = err.lines();
            let mut places = Vec::new();
            while let Some(l) = lines.next() {
                if l.contains(&format!("[{code}]:"))
                    && let Some(place) = lines
                        .by_ref()
                        .find_map(|l| l.trim_start().strip_prefix("--> "))
                {
                    places.push(place.to_owned());
                }
            }
            assert!(!places.is_empty(), "{name}: expected {code}\n{err}");
            let want = format!("tests/fixtures/bad-fleets/{file}:");
            assert!(
                places.iter().any(|p| p.starts_with(&want)),
                "{name}: {code} points into {want} (line:column), not {places:?}\n{err}"
            );
            covered.insert(code);
        }
        insta::with_settings!({
            snapshot_path => "../../golden/diagnostics-fleets",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(name.as_str(), err);
        });
    }
    // Every fleet code of the rules reference has a case.
    let rules = fs::read_to_string(repo().join("docs/rules.md")).unwrap();
    let listed: BTreeSet<String> = rules
        .lines()
        .filter_map(|l| l.strip_prefix("| `RK7"))
        .map(|l| format!("RK7{}", &l[..2]))
        .collect();
    assert!(listed.len() >= 17, "{listed:?}");
    let missing: Vec<&String> = listed.difference(&covered).collect();
    assert!(
        missing.is_empty(),
        "fleet codes without a bad-fleet case: {missing:?}"
    );
}

// ---- connect.sh and verify.sh ------------------------------------------------------------------

/// A kubectl for fleet scripts: records argv like the infra stub, and answers as the clusters
/// would. The member is the `--kubeconfig` file's name (`$WORK/<member>.kubeconfig`). The token
/// Secret holds `token-of-<member>` (base64, as the API returns it); the API server is
/// `https://<member>.example:443` unless `STUB_SERVER` says otherwise; `create secret` copies
/// the kubeconfig it is given to `$STUB_CAPTURE/<secret>`; a member named in `STUB_INACTIVE`
/// is not Active; the manager runs RayJob `ray/fleet-finetune`, and a worker holds a
/// non-MultiKueue one of that name when `STUB_CLASH` is set.
const FLEET_KUBECTL: &str = r#"#!/usr/bin/env bash
# `create … | kubectl apply -f -`: read the pipe to its end first, so the creator's call is
# logged before this one and the transcript keeps one order.
[[ " $* " == *" apply -f - "* ]] && cat >/dev/null
{ printf '%s\x1f' kubectl "$@"; printf '\x1e'; } >>"$STUB_LOG"
kc="" prev="" secret=""
for a in "$@"; do
  [[ $prev == --kubeconfig ]] && kc=$a
  [[ $prev == generic ]] && secret=$a
  prev=$a
done
member=$(basename "$kc" .kubeconfig)
args=" $* "
case $args in
  *" get secret multikueue-sa-token "*"{.data.token}"*) printf 'token-of-%s' "$member" | base64 | tr -d '\n' ;;
  *" get secret multikueue-sa-token "*"ca\.crt"*) printf 'Q0EtT0YtV09SS0VS' ;;
  *" config view "*) printf '%s' "${STUB_SERVER:-https://$member.example:443}" ;;
  *" create secret generic "*)
    for a in "$@"; do [[ $a == --from-file=kubeconfig=* ]] && cp "${a#--from-file=kubeconfig=}" "$STUB_CAPTURE/$secret"; done
    printf 'apiVersion: v1\nkind: Secret\n' ;;
  *" wait "*) for a in "$@"; do [[ $a == multikueuecluster/* && " ${STUB_INACTIVE:-} " == *" ${a#*/} "* ]] && exit 1; done; exit 0 ;;
  *" get multikueuecluster/"* | *" get admissioncheck/"* | *" get clusterqueue/"*)
    for a in "$@"; do
      if [[ $a == multikueuecluster/* && " ${STUB_INACTIVE:-} " == *" ${a#*/} "* ]]; then
        printf 'False ClientConnectionFailed: dial tcp 10.0.0.1:443: i/o timeout'; exit 0
      fi
    done
    printf 'True Active: ok' ;;
  *" auth can-i "*) echo yes ;;
  *" get rayjobs.ray.io "*"--selector"*) [[ -z ${STUB_CLASH:-} ]] || printf 'ray/fleet-finetune\n' ;;
  *" get rayjobs.ray.io "*) printf 'ray/fleet-finetune\n' ;;
esac
exit 0
"#;

fn fleet_sandbox() -> Sandbox {
    let sb = Sandbox::new(FLEET);
    sb.add_stub("kubectl", FLEET_KUBECTL);
    fs::create_dir_all(sb.root().join("capture")).unwrap();
    sb
}

/// Calls as text, the sandbox's paths and the scripts' temporary folder written as names.
fn fleet_transcript(sb: &Sandbox, calls: &[Vec<String>]) -> String {
    let mut t = sb.transcript(calls);
    // connect.sh's `mktemp -d`: the folder of the manager's kubeconfig.
    let work = calls
        .iter()
        .flat_map(|c| c.windows(2))
        .find(|w| w[0] == "--kubeconfig" && w[1].ends_with("/manager.kubeconfig"))
        .map(|w| w[1].trim_end_matches("/manager.kubeconfig").to_owned());
    if let Some(work) = work {
        t = t.replace(&work, "<work>");
    }
    t
}

/// connect.sh does per worker what kueue@v0.19.2 site/static/examples/multikueue/
/// create-multikueue-kubeconfig.sh does: the access objects applied on the worker, the token
/// read from the Secret, a kubeconfig with the token and the CA data inline (no exec plugin,
/// which Kueue refuses: pkg/controller/admissionchecks/multikueue/multikueuecluster.go), the
/// Secret `<worker>-kubeconfig` in the manager's Kueue namespace, then waits for Active.
#[test]
fn connect_writes_token_kubeconfigs_into_the_managers_secrets() {
    let sb = fleet_sandbox();
    let capture = sb.root().join("capture");
    let capture_env = capture.to_str().unwrap().to_owned();
    let (out, calls) = sb.run(
        "fleet/connect.sh",
        &[],
        &[
            ("STUB_CAPTURE", &capture_env),
            ("TMPDIR", sb.root().to_str().unwrap()),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    for w in ["aks-east", "gke-west"] {
        let written = fs::read_to_string(capture.join(format!("{w}-kubeconfig")))
            .unwrap_or_else(|_| panic!("no Secret {w}-kubeconfig created\n{}", text(&out)));
        let kc: Value = serde_saphyr::from_str(&written).unwrap();
        assert_eq!(
            kc["clusters"][0]["cluster"]["server"],
            format!("https://{w}.example:443")
        );
        assert_eq!(
            kc["clusters"][0]["cluster"]["certificate-authority-data"],
            "Q0EtT0YtV09SS0VS"
        );
        assert_eq!(
            kc["users"][0]["user"]["token"],
            format!("token-of-{w}"),
            "decoded"
        );
        assert!(!written.contains("exec"), "{written}");
        assert!(!written.contains("insecure-skip-tls-verify"), "{written}");
        assert_eq!(kc["current-context"], w);
    }
    let t = fleet_transcript(&sb, &calls);
    // The Secret lands on the manager, in Kueue's namespace.
    assert!(
        t.contains("kubectl --kubeconfig <work>/manager.kubeconfig --namespace kueue-system create secret generic gke-west-kubeconfig"),
        "{t}"
    );
    // Credentials come from each member's cloud CLI (az for AKS, gcloud for GKE).
    assert!(
        t.contains(
            "az aks get-credentials --resource-group rg-kueue-fleet --name kueue-fleet-manager"
        ),
        "{t}"
    );
    assert!(
        t.contains("gcloud container clusters get-credentials kueue-and-ray-on-gke"),
        "{t}"
    );
    snapshot_calls("fleet-connect", &t);
}

/// Kueue connects to workers over TLS only (InsecureKubeConfig): an `http://` API server stops
/// connect.sh before any Secret reaches the manager.
#[test]
fn connect_refuses_a_worker_without_tls() {
    let sb = fleet_sandbox();
    let capture = sb.root().join("capture");
    let (out, calls) = sb.run(
        "fleet/connect.sh",
        &[],
        &[
            ("STUB_CAPTURE", capture.to_str().unwrap()),
            ("STUB_SERVER", "http://10.0.0.1:8080"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("is not https://"), "{}", text(&out));
    assert!(
        !calls.iter().any(|c| c.iter().any(|w| w == "create")),
        "no Secret created: {calls:?}"
    );
    assert_eq!(fs::read_dir(&capture).unwrap().count(), 0);
}

/// connect.sh names the worker that did not become Active, and points at verify.sh.
#[test]
fn connect_fails_when_a_worker_stays_inactive() {
    let sb = fleet_sandbox();
    let capture = sb.root().join("capture");
    let (out, _) = sb.run(
        "fleet/connect.sh",
        &["--timeout", "1s"],
        &[
            ("STUB_CAPTURE", capture.to_str().unwrap()),
            ("STUB_INACTIVE", "gke-west"),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("MultiKueueCluster gke-west is not Active"),
        "{t}"
    );
    assert!(t.contains("verify.sh"), "{t}");
}

/// verify.sh: every check passes on a connected fleet; an unreachable worker and a job MultiKueue
/// did not make (kubernetes-sigs/kueue#12404) each fail with a hint, and the script exits 1.
#[test]
fn verify_passes_a_connected_fleet_and_names_what_is_wrong() {
    let sb = fleet_sandbox();
    let (out, calls) = sb.run("fleet/verify.sh", &[], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("ok    MultiKueueCluster aks-east is Active"),
        "{t}"
    );
    assert!(
        t.contains("ok    AdmissionCheck global-multikueue is Active"),
        "{t}"
    );
    assert!(
        t.contains("ok    the manager may list rayjobs.ray.io"),
        "{t}"
    );
    assert!(!t.contains("FAIL"), "{t}");
    snapshot_calls("fleet-verify", &fleet_transcript(&sb, &calls));

    let (out, _) = sb.run(
        "fleet/verify.sh",
        &[],
        &[("STUB_INACTIVE", "gke-west"), ("STUB_CLASH", "1")],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("FAIL  MultiKueueCluster gke-west: ClientConnectionFailed"),
        "{t}"
    );
    assert!(t.contains("allow the manager's egress IPs"), "{t}");
    assert!(t.contains("FAIL  rayjobs.ray.io not made by MultiKueue with a manager job's name: ray/fleet-finetune"), "{t}");
    assert!(t.contains("check(s) failed"), "{t}");
}

/// The fleet's scripts and every member's kubeconfig.sh pass `bash -n` and shellcheck.
#[test]
fn fleet_scripts_are_clean_bash() {
    let dir = tempfile::tempdir().unwrap();
    gen_out(FLEET, dir.path());
    let scripts: Vec<PathBuf> = files(dir.path())
        .into_iter()
        .filter(|f| f.starts_with("fleet/") || f.ends_with("/kubeconfig.sh"))
        .map(|f| dir.path().join(f))
        .collect();
    assert_eq!(scripts.len(), 5, "{scripts:?}");
    assert_clean_bash(&scripts, &[]);
}

/// Each member's `kubeconfig.sh` through the real cloud CLIs' parsers: `az` runs offline through
/// `../shared/tools/az-argcheck`, `gcloud` through `../shared/tools/cloud-argcheck`.
#[test]
fn member_kubeconfig_scripts_pass_the_cloud_clis() {
    let dir = tempfile::tempdir().unwrap();
    gen_out(FLEET, dir.path());
    let az = repo().join("../shared/tools/az-argcheck");
    let cloud = repo().join("../shared/tools/cloud-argcheck");
    if !az.exists() || !cloud.exists() {
        skip("fleet kubeconfig.sh argcheck", "../shared/tools is absent");
        return;
    }
    for member in ["manager", "aks-east"] {
        let out = Command::new(&az)
            .arg(format!(
                "--script-args={}",
                dir.path().join("out.kubeconfig").display()
            ))
            .arg(dir.path().join(member).join("infra/kubeconfig.sh"))
            .output()
            .unwrap();
        let t = text(&out);
        if out.status.code() == Some(2) {
            skip("az-argcheck kubeconfig.sh", t.trim());
            return;
        }
        assert_eq!(out.status.code(), Some(0), "{member}\n{t}");
        assert!(t.contains(" 0 failed"), "{member}\n{t}");
    }
    let out = Command::new(&cloud)
        .arg(dir.path().join("gke-west/infra/kubeconfig.sh"))
        .output()
        .unwrap();
    let t = text(&out);
    if out.status.code() == Some(2) {
        skip("cloud-argcheck kubeconfig.sh", t.trim());
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(t.contains(" 0 failed"), "{t}");
}

/// Every fleet field that reaches a script or a file name (the fleet's name, the workers'
/// names, the origin label) is refused by the schema when it carries shell syntax or a path:
/// `gen --out` stops with a located error and writes nothing.
#[test]
fn hostile_fleet_values_are_refused_before_anything_is_written() {
    let examples = repo().join("profiles/examples");
    let fleet = |name: &str, worker: &str, origin: &str| {
        format!(
            "apiVersion: raykueue.io/v1alpha1\nkind: Fleet\nname: {name}\nmanager:\n  profile: {m}\nworkers:\n  - name: {worker}\n    profile: team\n  - name: gke-west\n    profile: {g}\nmultiKueue:\n  origin: {origin}\n",
            m = examples.join("fleet-manager.yaml").display(),
            g = examples.join("team-gke.yaml").display(),
        )
    };
    let hostile = [
        "'$(touch pwned)'",
        "'a;touch pwned'",
        "'`id`'",
        "'../escape'",
        "'x\"y'",
    ];
    let cases = hostile.iter().flat_map(|h| {
        [
            ("name", *h, fleet(h, "aks-east", "global")),
            ("workers[0].name", *h, fleet("global", h, "global")),
            ("multiKueue.origin", *h, fleet("global", "aks-east", h)),
        ]
    });
    // Names are DNS-1123 labels (a label value may have capitals; a name may not).
    let upper = [
        ("name", "Upper", fleet("Upper", "aks-east", "global")),
        (
            "workers[0].name",
            "Upper",
            fleet("global", "Upper", "global"),
        ),
    ];
    for (field, h, text) in cases.chain(upper) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fleet.yaml");
        fs::write(&file, &text).unwrap();
        let out_dir = dir.path().join("out");
        let out = raykueue(&[
            "gen",
            "--profile",
            file.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{field} = {h}: {err}");
        assert!(err.contains(&format!("{field}:")), "{field} = {h}: {err}");
        assert!(err.contains("fleet.yaml:"), "{field} = {h}: located\n{err}");
        assert!(!out_dir.exists(), "{field} = {h}: nothing written");
        assert!(!dir.path().join("pwned").exists());
    }
}
