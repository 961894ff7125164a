//! Fault injection into every generated `up.sh`, `verify.sh`, `down.sh` and `smoke.sh` of the shipped
//! bundles: each run is recorded against the stubs, then replayed once per call with that call
//! failing (`STUB_FAIL_AT`). A script never fails open: the failure ends it with a non-zero
//! exit (verify.sh goes on with its other checks, then exits 1) and the CLI's own message is
//! shown, so nothing is taken for "absent", "no nodes" or "not logged in" that is not.
//!
//! The three modes of a failure: before its side effect (nothing was made: the re-run is the
//! run on an empty cloud), after it (the thing was made: the re-run is the run on a cloud
//! where everything exists), and on a cloud where everything exists (`up.sh` with
//! `STUB_EXISTS`). The stubs keep no state, so each re-run is the run of the state the failure
//! left; it must succeed and, on the full cloud, create nothing. `golden/faults.snap` reports
//! per script the calls, the failures that ended it non-zero, and the converged re-runs.

use crate::clouds::cloud_sandbox;
use crate::infra::{Sandbox, snapshot_calls, text};

/// The shipped bundles with scripts, and the flag of their `down.sh` that deletes the cloud's
/// resources.
const BUNDLES: [(&str, &str); 8] = [
    ("single", "--delete-resource-group"),
    ("gpu-autoscale", "--delete-resource-group"),
    ("team", "--delete-resource-group"),
    ("kuberay-gpu", "--delete-resource-group"),
    ("kuberay-gpu-gke", "--delete-cluster"),
    ("kuberay-gpu-eks", "--delete-cluster"),
    ("kuberay-gpu-ack", "--delete-cluster"),
    (
        "profiles/examples/provisioning-eks.yaml",
        "--delete-cluster",
    ),
];

/// Calls whose failure a script may survive: what they print is for the reader, and nothing
/// that follows depends on it (verify.sh's context banner and its listing of Kueue's pods), and
/// smoke.sh's clean-up on exit, when the result is already known.
fn tolerated(script: &str, call: &[String]) -> bool {
    let words: Vec<&str> = call
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
        .collect();
    matches!(words.as_slice(), ["kubectl", "config", "current-context"])
        || (call[0] == "kubectl" && words.ends_with(&["get", "pods"]))
        || (script == "smoke.sh"
            && words == ["kubectl", "delete"]
            && call.iter().any(|w| w == "--wait=false"))
}

/// The calls that make or change something: none may run when everything exists.
fn changes(calls: &[Vec<String>]) -> Vec<String> {
    calls
        .iter()
        .map(|c| {
            c.iter()
                .take_while(|w| !w.starts_with('-'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| {
            let last = c.rsplit(' ').next().unwrap_or_default();
            matches!(
                last,
                "create" | "add" | "update" | "CreateVpc" | "CreateVSwitch"
            ) || c.contains(" POST ")
        })
        .collect()
}

struct Run<'a> {
    script: &'a str,
    args: Vec<&'a str>,
    /// `STUB_EXISTS`: the cloud where everything exists.
    full: bool,
}

impl<'a> Run<'a> {
    fn of(script: &'a str, args: &[&'a str], full: bool) -> Self {
        Self {
            script,
            args: args.to_vec(),
            full,
        }
    }
}

/// One line of the report; panics with every fail-open case found.
fn inject(sb: &Sandbox, bundle: &str, run: &Run) -> String {
    let env_of = |full: bool, at: Option<usize>| {
        let mut env = vec![("STUB_EXISTS", if full { "1" } else { "" }.to_owned())];
        if let Some(at) = at {
            env.push(("STUB_FAIL_AT", at.to_string()));
        }
        env
    };
    let go = |full: bool, at: Option<usize>| {
        let env = env_of(full, at);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sb.run(run.script, &run.args, &env)
    };
    let name = format!("{bundle} {} {}", run.script, run.args.join(" "))
        .trim_end()
        .to_owned();
    let (clean, calls) = go(run.full, None);
    assert_eq!(clean.status.code(), Some(0), "{name}\n{}", text(&clean));
    let (mut failed, mut retried) = (0, 0);
    let mut open = Vec::new();
    for (i, call) in calls.iter().enumerate() {
        let at = i + 1;
        let (out, made) = go(run.full, Some(at));
        let shown = text(&out).contains(&format!("injected failure of call {at}"));
        // Nothing is made or changed after a failure (verify.sh, which up.sh ends with, goes on
        // reading).
        let stopped = changes(made.get(at..).unwrap_or_default()).is_empty();
        if out.status.code() != Some(0) && shown && stopped {
            failed += 1;
        } else if out.status.code() == Some(0) && shown && made.get(at) == Some(call) {
            // Retried at once, and the stub fails a call only once: a transient error recovered.
            retried += 1;
        } else if !tolerated(run.script, call) {
            open.push(format!(
                "call {at} `{}`: exit {:?}, message shown: {shown}, changes after it: {:?}\n{}",
                call.join(" "),
                out.status.code(),
                changes(made.get(at..).unwrap_or_default()),
                text(&out)
            ));
        }
    }
    assert!(open.is_empty(), "{name} fails open:\n{}", open.join("\n"));
    // Re-runs after a failure: before its side effect (the empty cloud) and after it (the full
    // cloud, where nothing is made again).
    let mut converged = 0;
    for full in [false, true] {
        let (again, again_calls) = go(full || run.full, None);
        let remade = changes(&again_calls);
        if again.status.code() == Some(0) && (!(full || run.full) || remade.is_empty()) {
            converged += 1;
        } else {
            panic!(
                "{name}: the re-run does not converge: {remade:?}\n{}",
                text(&again)
            );
        }
    }
    format!(
        "{name}: {} calls, {failed} failures end it non-zero, {retried} retried, {} tolerated, {converged}/2 re-runs converge",
        calls.len(),
        calls.len() - failed - retried
    )
}

#[test]
fn every_failed_call_of_every_script_stops_it_with_the_clis_message() {
    let reports: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = BUNDLES
            .iter()
            .map(|&(bundle, delete)| {
                s.spawn(move || {
                    let sb = cloud_sandbox(bundle);
                    let mut runs = vec![
                        Run::of("up.sh", &[], false),
                        Run::of("up.sh", &[], true),
                        Run::of("verify.sh", &[], false),
                        Run::of("down.sh", &[], false),
                        Run::of("down.sh", &[delete], true),
                    ];
                    // A one-GPU RayJob polled without pause: a failed poll is polled again.
                    if sb.bundle().join("infra/smoke.sh").exists() {
                        let args = ["--timeout", "5", "--interval", "0"];
                        runs.push(Run::of("smoke.sh", &args, false));
                    }
                    runs.iter()
                        .map(|run| {
                            let line = inject(&sb, bundle, run);
                            if run.full && run.script == "up.sh" {
                                format!("{line} (everything exists)")
                            } else {
                                line
                            }
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    snapshot_calls("faults", &reports.join("\n"));
}

/// `down.sh --delete-*` after the delete went through (the CLI may have reported a failure):
/// the re-run finds nothing, deletes nothing and succeeds.
#[test]
fn deleting_what_is_already_gone_succeeds() {
    for (bundle, delete) in BUNDLES {
        let sb = cloud_sandbox(bundle);
        let (out, calls) = sb.run("down.sh", &[delete], &[("STUB_EXISTS", "")]);
        assert_eq!(out.status.code(), Some(0), "{bundle}\n{}", text(&out));
        let deletes: Vec<&Vec<String>> = calls
            .iter()
            .filter(|c| c.iter().any(|w| w == "delete" || w == "DELETE"))
            .collect();
        assert!(deletes.is_empty(), "{bundle}: {deletes:?}");
    }
}
