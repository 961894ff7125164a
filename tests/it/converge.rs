//! A cold install replayed without a cluster: small models of how Argo CD (v3.5.1) and Flux
//! (helm-controller v1.6.3, kustomize-controller v1.9.4) order and retry the generated objects,
//! on a cluster whose operators (Kueue, KubeRay: CRDs, webhooks, ready pods) become ready only
//! after some minutes. Everything must end applied, by itself. Each model also replays the
//! controllers' defaults (no retry settings), which must get stuck: the settings are what makes
//! the difference.

use crate::common::{compile_text, shipped_text};
use serde_json::Value;

/// Seconds after the first sync when the operators are ready (cold nodes, image pulls).
const OPERATORS_READY: u64 = 10 * 60;
/// How long the replay runs: nothing that has not converged by then ever will.
const HORIZON: u64 = 6 * 3600;

fn prod_objects() -> Vec<Value> {
    let text = shipped_text("team").to_owned()
        + "gitops:\n  repoURL: https://example.com/ray.git\n  path: deploy/team\n  argocd: {}\n  flux: {}\n";
    let c = compile_text(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}"));
    c.bundle
        .objects
        .iter()
        .map(|r| r.object.value.clone())
        .collect()
}

/// The objects with one setting of every object of `kind` removed (`spec.<path>`): the
/// controllers' defaults in its place.
fn without(objects: Vec<Value>, kind: &str, path: &[&str]) -> Vec<Value> {
    objects
        .into_iter()
        .map(|mut o| {
            if o["kind"] == kind {
                let (last, parents) = path.split_last().unwrap();
                let mut node = &mut o["spec"];
                for p in parents {
                    node = &mut node[*p];
                }
                node.as_object_mut().unwrap().remove(*last);
            }
            o
        })
        .collect()
}

/// Go's duration strings as Argo CD and Flux write them (`10s`, `3m`, `1h`).
fn seconds(d: &str) -> u64 {
    let (n, unit) = d.split_at(d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len()));
    let n: u64 = n.parse().unwrap();
    match unit {
        "s" | "" => n,
        "m" => n * 60,
        "h" => n * 3600,
        other => panic!("unit {other}"),
    }
}

// ---- Argo CD ----------------------------------------------------------------------------

/// An automated Application's sync attempts: the first at `start`, then a retry after each
/// failure while retries remain (argo-cd@v3.5.1 controller/appcontroller.go: `RetryCount <
/// Limit || Limit < 0`; `RetryStrategy.NextRetryAt`: duration × factor^retryCount, capped at
/// maxDuration). Without `retry`, an automated sync gets `RetryStrategy{Limit: 5}` and the
/// defaults 5 s, factor 2, 3 m (application_defaults.go). Returns when the sync succeeded.
fn argo_sync(app: &Value, start: u64, ready_at: u64) -> Option<u64> {
    let retry = &app["spec"]["syncPolicy"]["retry"];
    let limit = retry["limit"].as_i64().unwrap_or(5);
    let backoff = &retry["backoff"];
    let duration = backoff["duration"].as_str().map_or(5, seconds);
    let factor = backoff["factor"].as_u64().unwrap_or(2);
    let max = backoff["maxDuration"].as_str().map_or(180, seconds);
    let mut t = start;
    let mut count: i64 = 0;
    loop {
        if t >= ready_at {
            return Some(t);
        }
        if !(count < limit || limit < 0) || t > HORIZON {
            return None; // Failed for good: auto-sync does not retry this revision again.
        }
        let wait = duration
            .saturating_mul(factor.saturating_pow(u32::try_from(count).unwrap()))
            .min(max);
        t += wait;
        count += 1;
    }
}

/// The app of apps: the root creates the child Applications wave by wave; with no health
/// check for Applications (Argo CD's default) each child counts as healthy once created, so all
/// start syncing at once. A chart Application succeeds at once (its apply creates the
/// operators); a directory Application (platform, workloads) fails until the operators are
/// ready. Returns each child's name and when it synced, or `None`.
fn argo_replay(objects: &[Value]) -> Vec<(String, Option<u64>)> {
    let apps: Vec<&Value> = objects
        .iter()
        .filter(|o| {
            o["kind"] == "Application"
                && !o["metadata"]["name"].as_str().unwrap().ends_with("-root")
        })
        .collect();
    assert!(apps.len() >= 4, "operators, platform, workloads");
    apps.iter()
        .map(|app| {
            let is_chart = app["spec"]["source"].get("chart").is_some();
            let ready_at = if is_chart { 0 } else { OPERATORS_READY };
            (
                app["metadata"]["name"].as_str().unwrap().to_owned(),
                argo_sync(app, 0, ready_at),
            )
        })
        .collect()
}

#[test]
fn argo_cd_converges_on_a_cold_cluster() {
    let objects = prod_objects();
    for (name, synced) in argo_replay(&objects) {
        let t = synced.unwrap_or_else(|| panic!("{name} never syncs"));
        assert!(
            t <= OPERATORS_READY + 180,
            "{name} synced at {t} s, long after the operators"
        );
    }
    // The same replay with Argo CD's default retry (5 tries, about 2.5 minutes) gets stuck.
    let defaults = without(objects, "Application", &["syncPolicy", "retry"]);
    let stuck: Vec<String> = argo_replay(&defaults)
        .into_iter()
        .filter(|(_, t)| t.is_none())
        .map(|(n, _)| n)
        .collect();
    // monitoring/ waits for the Prometheus Operator's CRDs as platform/ waits for Kueue's.
    assert_eq!(
        stuck,
        ["team-platform", "team-monitoring", "team-workloads"]
    );
}

// ---- Flux -------------------------------------------------------------------------------

/// A HelmRelease's install: `helm install --wait` succeeds when the operators are ready within
/// the action's timeout (default 5 m, helm-controller@v1.6.3 `api/v2/helmrelease_types.go`
/// `HelmReleaseSpec.Timeout`). On failure,
/// `RetryOnFailure` retries after `retryInterval` for ever; the default `RemediateOnFailure`
/// has 0 retries and stops (`RetriesExceeded`) until the spec changes.
fn flux_install(release: &Value, start: u64, ready_at: u64) -> Option<u64> {
    const TIMEOUT: u64 = 5 * 60;
    let strategy = &release["spec"]["install"]["strategy"];
    let retry = (strategy["name"] == "RetryOnFailure")
        .then(|| strategy["retryInterval"].as_str().map_or(300, seconds));
    let mut t = start;
    while t <= HORIZON {
        if ready_at <= t + TIMEOUT {
            return Some(t.max(ready_at));
        }
        t += TIMEOUT + retry?;
    }
    None
}

/// Kustomizations in `dependsOn` order: one waits for its dependency to be ready (re-checked
/// every 30 s, kustomize-controller@v1.9.4 `main.go` `--requeue-dependency`), applies, and with
/// `wait: true` is ready when what it applied is ready within `timeout` (default: `interval` −
/// 30 s, `api/v1/kustomization_types.go` `GetTimeout`); a failed apply or health check is
/// retried after `retryInterval` (default: the interval, `GetRetryInterval`). The operators Kustomization applies the
/// HelmReleases; the others need the operators' CRDs and webhooks.
fn flux_replay(objects: &[Value]) -> Vec<(String, Option<u64>)> {
    let releases: Vec<&Value> = objects
        .iter()
        .filter(|o| o["kind"] == "HelmRelease")
        .collect();
    assert_eq!(
        releases.len(),
        5,
        "device plugin, KubeRay, Kueue, kube-prometheus-stack, DCGM exporter"
    );
    let helm_ready = releases
        .iter()
        .map(|r| flux_install(r, 0, OPERATORS_READY))
        .try_fold(0, |acc, t| t.map(|t| acc.max(t)));
    let ks: Vec<&Value> = objects
        .iter()
        .filter(|o| {
            o["kind"] == "Kustomization"
                && o["apiVersion"]
                    .as_str()
                    .unwrap()
                    .starts_with("kustomize.toolkit")
        })
        .collect();
    let mut ready: Vec<(String, Option<u64>)> = Vec::new();
    for k in ks {
        let name = k["metadata"]["name"].as_str().unwrap().to_owned();
        let interval = seconds(k["spec"]["interval"].as_str().unwrap());
        let retry = k["spec"]["retryInterval"]
            .as_str()
            .map_or(interval, seconds);
        let timeout = k["spec"]["timeout"]
            .as_str()
            .map_or(interval.saturating_sub(30), seconds)
            .max(30);
        let dep = k["spec"]["dependsOn"][0]["name"].as_str();
        let start = match dep {
            None => Some(0),
            Some(d) => ready
                .iter()
                .find(|(n, _)| n == d)
                .and_then(|(_, t)| *t)
                .map(|t| t.div_ceil(30) * 30),
        };
        let needs = if name.ends_with("-operators") {
            helm_ready
        } else {
            Some(OPERATORS_READY)
        };
        let done = match (start, needs) {
            (Some(mut t), Some(needs)) => {
                // Health checks time out after `timeout`, then the apply is retried.
                loop {
                    if needs <= t + timeout {
                        break Some(t.max(needs));
                    }
                    t += timeout + retry;
                    if t > HORIZON {
                        break None;
                    }
                }
            }
            _ => None,
        };
        ready.push((name, done));
    }
    ready
}

#[test]
fn flux_converges_on_a_cold_cluster() {
    let objects = prod_objects();
    let replay = flux_replay(&objects);
    assert_eq!(
        replay.len(),
        4,
        "operators → platform → workloads, operators → monitoring"
    );
    for (name, t) in &replay {
        let t = t.unwrap_or_else(|| panic!("{name} never becomes ready"));
        assert!(t <= OPERATORS_READY + 15 * 60, "{name} ready at {t} s");
    }
    // Without an install strategy the first install times out (5 m < 10 m) and the chain stalls.
    let defaults = without(objects, "HelmRelease", &["install", "strategy"]);
    assert!(flux_replay(&defaults).iter().all(|(_, t)| t.is_none()));
}
