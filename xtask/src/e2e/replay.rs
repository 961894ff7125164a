//! `e2e replay`: a scenario on the real Kueue. Each scenario workload is created, at its
//! `submitAt`, as the pending Workload `raykueue::api::live::submissions` writes (the scenario's pod
//! sets and queue); the harness watches the Workloads and prints what Kueue does to them in the
//! event lines of `raykueue simulate --output json`.
//!
//! The harness plays the parts no controller plays for a bare Workload, as Kueue's integration
//! tests do (kubernetes-sigs/kueue@v0.19.2 `test/util/util.go` `FinishWorkloads`,
//! `FinishEvictionForWorkloads`): `runFor` scenario seconds after a workload's quota is
//! reserved it sets the `Finished` condition; when Kueue evicts one (`Evicted`), it unsets the
//! quota reservation (`QuotaReserved` False, reason `Pending`, `status.admission` cleared), as a
//! job controller does once its pods are gone. Both are status updates of the whole object at
//! the version read, retried on conflict.
//!
//! Time: `--time-scale S` maps scenario second `t` to `S × t` wall seconds after the start.
//! Without it the replay steps from one scenario time with something to do to the next, each
//! step starting at a new wall second (creation and condition times have one-second
//! resolution, and Kueue orders by them) once the cluster has been quiet for a while: Kueue
//! observes no clock between the steps (none of the scenarios turns on a timer-driven feature),
//! so the idle time in between changes nothing.

use super::cluster::Cluster;
use super::kube::Kubectl;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::BufReader;
use std::process::{Child, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant, SystemTime};

/// How long the cluster must be quiet (no Workload changing) before a step counts as settled.
/// Kueue's scheduler backs off 10 ms at most between cycles (kubernetes-sigs/kueue@v0.19.2
/// `pkg/util/wait/backoff.go`), but it moves parked (inadmissible) workloads back to their
/// queue in batches, one second after the change that frees quota
/// (`pkg/cache/queue/inadmissible_workloads.go`, `requeueBatchPeriod`): the quiet time is that
/// second and room for a busy machine. `RAYKUEUE_E2E_QUIET_MS` sets another.
/// With no workload waiting, nothing can be moved back later: a short quiet time suffices.
fn quiet(waiting: bool) -> Duration {
    let ms = std::env::var("RAYKUEUE_E2E_QUIET_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    Duration::from_millis(if waiting { ms } else { ms / 4 })
}

/// What one replay needs: the workloads to submit.
#[derive(Debug)]
pub struct Plan {
    pub submissions: Vec<raykueue::api::live::Submission>,
    pub time_scale: Option<f64>,
    /// `simulate --until`: no step after this scenario second.
    pub until: Option<u64>,
}

/// What a Workload looked like when last seen.
#[derive(Debug, Default, Clone)]
struct Seen {
    reserved: bool,
    evicted: bool,
    finished: bool,
    admission: Option<Value>,
}

fn condition<'a>(wl: &'a Value, kind: &str) -> Option<&'a Value> {
    wl["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

fn is_true(wl: &Value, kind: &str) -> bool {
    condition(wl, kind).is_some_and(|c| c["status"] == "True")
}

fn name(wl: &Value) -> String {
    wl["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The watch on the namespace's Workloads: every change, in order, from a reader thread.
struct Watch {
    child: Child,
    changes: Receiver<Value>,
}

impl Watch {
    fn start(kubectl: &Kubectl) -> Result<Self, String> {
        let mut child = kubectl
            .command()
            .args([
                "get",
                "workloads.kueue.x-k8s.io",
                "--all-namespaces",
                "--watch",
                "--output-watch-events",
                "-o",
                "json",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot watch Workloads: {e}"))?;
        let stdout = child
            .stdout
            .take()
            .ok_or("no stdout from kubectl --watch")?;
        let (tx, changes) = channel();
        std::thread::spawn(move || {
            let stream =
                serde_json::Deserializer::from_reader(BufReader::new(stdout)).into_iter::<Value>();
            for event in stream {
                let Ok(event) = event else { break };
                if tx.send(event).is_err() {
                    break;
                }
            }
        });
        Ok(Self { child, changes })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The replay's state and its event lines.
struct Run<'a> {
    kubectl: Kubectl,
    plan: &'a Plan,
    /// Scenario time of the step being settled.
    now: u64,
    seen: HashMap<String, Seen>,
    uids: HashMap<String, String>,
    /// Scenario time → workloads whose run ends then.
    ends: BTreeMap<u64, BTreeSet<String>>,
    running: HashMap<String, u64>,
    events: Vec<Value>,
    /// The latest object of each Workload, for the End line.
    latest: HashMap<String, Value>,
}

/// Replays the plan on a cluster whose platform objects are applied; returns the event lines.
pub fn run(cluster: &Cluster, plan: &Plan) -> Result<Vec<Value>, String> {
    let kubectl = cluster.kubectl();
    // Within one scenario second, workloads are created highest priority first, then by name:
    // a scenario lets them meet in one scheduling cycle, and on a cluster the first one created
    // may be admitted before the next exists; this is the order Kueue's queue would take them
    // in had they met (docs/simulate.md, "Where the real Kueue differs").
    let mut submissions = plan.submissions.clone();
    submissions.sort_by(|a, b| {
        let p = |s: &raykueue::api::live::Submission| {
            s.object["spec"]["priority"].as_i64().unwrap_or(0)
        };
        (a.submit_at, std::cmp::Reverse(p(a)), &a.name).cmp(&(
            b.submit_at,
            std::cmp::Reverse(p(b)),
            &b.name,
        ))
    });
    let ordered = Plan {
        submissions,
        time_scale: plan.time_scale,
        until: plan.until,
    };
    let plan = &ordered;
    let watch = Watch::start(&kubectl)?;
    let mut r = Run {
        kubectl,
        plan,
        now: 0,
        seen: HashMap::new(),
        uids: HashMap::new(),
        ends: BTreeMap::new(),
        running: HashMap::new(),
        events: Vec::new(),
        latest: HashMap::new(),
    };
    let start = Instant::now();
    let mut next_submission = 0;
    let mut last_step: Option<Instant> = None;
    loop {
        let t_sub = plan.submissions.get(next_submission).map(|s| s.submit_at);
        let t_end = r.ends.keys().next().copied();
        let Some(t) = [t_sub, t_end].into_iter().flatten().min() else {
            // Nothing is left to do, unless Kueue still acts on the last step: a late
            // admission schedules an end, and the replay goes on.
            r.settle(&watch)?;
            if r.ends.is_empty() {
                break;
            }
            continue;
        };
        if plan.until.is_some_and(|u| t > u) {
            break;
        }
        wait_for_step(start, last_step, t, plan.time_scale);
        last_step = Some(Instant::now());
        r.now = t;
        if let Some(names) = r.ends.remove(&t) {
            for n in names {
                r.finish(&n)?;
            }
        }
        while plan
            .submissions
            .get(next_submission)
            .is_some_and(|s| s.submit_at == t)
        {
            let s = &plan.submissions[next_submission];
            r.submit(s)?;
            next_submission += 1;
        }
        r.settle(&watch)?;
    }
    r.events.push(r.end());
    Ok(r.events)
}

/// Waits until the wall time of scenario second `t`: with a time scale, `scale × t` after the
/// start; without, the start of the next wall second after the last step.
fn wait_for_step(start: Instant, last: Option<Instant>, t: u64, scale: Option<f64>) {
    if let Some(s) = scale {
        // Scenario seconds are far below f64's exact range.
        #[allow(clippy::cast_precision_loss)]
        let at = start + Duration::from_secs_f64(s * t as f64);
        if let Some(d) = at.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
    } else if last.is_some() {
        let since_epoch = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        // 50 ms into the next second, clear of the boundary.
        let to_next = Duration::from_millis(1050 - u64::from(since_epoch.subsec_millis()));
        std::thread::sleep(to_next);
    }
}

impl Run<'_> {
    fn line(&mut self, mut v: Value) {
        v["time"] = json!(self.now);
        self.events.push(v);
    }

    fn submit(&mut self, s: &raykueue::api::live::Submission) -> Result<(), String> {
        let a = self.kubectl.run(
            &["create", "-f", "-", "-o", "json"],
            Some(&s.object.to_string()),
        );
        if !a.ok {
            return Err(format!("creating Workload {}: {}", s.name, a.stderr));
        }
        let created: Value = serde_json::from_str(&a.stdout).map_err(|e| e.to_string())?;
        self.uids.insert(
            created["metadata"]["uid"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            s.name.clone(),
        );
        self.line(json!({"time": 0, "event": "Submitted", "workload": s.name, "clusterQueue": s.cluster_queue}));
        Ok(())
    }

    /// The job controller's part at the end of a run: the `Finished` condition.
    fn finish(&mut self, wl: &str) -> Result<(), String> {
        self.running.remove(wl);
        let cq = self.cluster_queue(wl);
        update_status(&self.kubectl, self.namespace(wl), wl, |obj| {
            set_condition(
                obj,
                "Finished",
                "True",
                "Succeeded",
                "Finished by the e2e replay after runFor",
            );
            true
        })?;
        self.line(json!({"time": 0, "event": "Finished", "workload": wl, "clusterQueue": cq}));
        Ok(())
    }

    fn namespace(&self, wl: &str) -> &str {
        self.plan
            .submissions
            .iter()
            .find(|s| s.name == wl)
            .map_or("default", |s| s.namespace.as_str())
    }

    fn cluster_queue(&self, wl: &str) -> String {
        self.seen
            .get(wl)
            .and_then(|s| s.admission.as_ref())
            .and_then(|a| a["clusterQueue"].as_str())
            .unwrap_or_default()
            .to_string()
    }

    /// Reads changes until the cluster has been quiet for `quiet()`, turning each into event
    /// lines and playing the job controller's part on eviction.
    fn settle(&mut self, watch: &Watch) -> Result<(), String> {
        let started = Instant::now();
        let mut last = None;
        loop {
            let waiting = self.seen.values().any(|s| !s.reserved && !s.finished);
            match watch.changes.recv_timeout(quiet(waiting)) {
                Ok(change) => {
                    last = Some(started.elapsed());
                    let object = change.get("object").cloned().unwrap_or(change);
                    self.observe(&object)?;
                }
                Err(RecvTimeoutError::Timeout) => {
                    if std::env::var_os("RAYKUEUE_E2E_VERBOSE").is_some() {
                        eprintln!(
                            "e2e replay: step {} settled, last change after {} ms",
                            self.now,
                            last.map_or(0, |d| d.as_millis())
                        );
                    }
                    return Ok(());
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the watch on Workloads ended".into());
                }
            }
        }
    }

    fn observe(&mut self, wl: &Value) -> Result<(), String> {
        let n = name(wl);
        self.latest.insert(n.clone(), wl.clone());
        let before = self.seen.get(&n).cloned().unwrap_or_default();
        let now = Seen {
            reserved: is_true(wl, "QuotaReserved"),
            evicted: is_true(wl, "Evicted"),
            finished: is_true(wl, "Finished"),
            admission: wl["status"]
                .get("admission")
                .filter(|a| !a.is_null())
                .cloned(),
        };
        if now.reserved && !before.reserved {
            self.admitted(&n, wl);
        }
        if now.evicted && !before.evicted {
            self.evicted(&n, wl);
        }
        let cq_from = before.admission.clone();
        self.seen.insert(
            n.clone(),
            Seen {
                admission: now.admission.clone().or(cq_from),
                ..now.clone()
            },
        );
        if now.evicted && now.reserved && !now.finished {
            finish_eviction(&self.kubectl, self.namespace(&n), &n)?;
        }
        Ok(())
    }

    fn admitted(&mut self, n: &str, wl: &Value) {
        let admission = &wl["status"]["admission"];
        let cq = admission["clusterQueue"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut line = json!({
            "time": 0, "event": "Admitted", "workload": n, "clusterQueue": cq,
            "flavors": flavors(admission),
        });
        let checks: Vec<Value> = wl["status"]["admissionChecks"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c.get("name").cloned()).collect())
            .unwrap_or_default();
        if !checks.is_empty() {
            line["admissionChecks"] = Value::Array(checks);
        }
        self.line(line);
        let run_for = self
            .plan
            .submissions
            .iter()
            .find(|s| s.name == n)
            .map_or(0, |s| s.run_for);
        let end = self.now + run_for;
        self.running.insert(n.to_string(), end);
        self.ends.entry(end).or_default().insert(n.to_string());
    }

    fn evicted(&mut self, n: &str, wl: &Value) {
        if let Some(end) = self.running.remove(n)
            && let Some(set) = self.ends.get_mut(&end)
        {
            set.remove(n);
            if set.is_empty() {
                self.ends.remove(&end);
            }
        }
        let cq = self.cluster_queue(n);
        let evicted = condition(wl, "Evicted").cloned().unwrap_or_default();
        if evicted["reason"] == "Preempted" {
            let preempted = condition(wl, "Preempted").cloned().unwrap_or_default();
            let by = preempted["message"]
                .as_str()
                .and_then(|m| m.split("(UID: ").nth(1))
                .and_then(|m| m.split(',').next())
                .and_then(|uid| self.uids.get(uid))
                .cloned()
                .unwrap_or_default();
            self.line(json!({
                "time": 0, "event": "Preempted", "workload": n, "clusterQueue": cq,
                "by": by, "reason": preempted["reason"],
            }));
        } else {
            self.line(json!({
                "time": 0, "event": "Evicted", "workload": n, "clusterQueue": cq,
                "reason": evicted["reason"], "message": evicted["message"],
            }));
        }
    }

    /// The `End` line: what is still pending (never admitted, or waiting again) at the end.
    fn end(&self) -> Value {
        let mut pending: Vec<&String> = self
            .seen
            .iter()
            .filter(|(_, s)| !s.finished && !s.reserved)
            .map(|(n, _)| n)
            .collect();
        pending.sort();
        let mut running: Vec<&String> = self.running.keys().collect();
        running.sort();
        json!({"time": self.now, "event": "End", "pending": pending, "running": running, "neverAdmissible": []})
    }
}

/// `status.admission` as simulate prints `flavors`: each resource → its flavor, or pod set →
/// flavor where the pod sets got different flavors for it.
pub fn flavors(admission: &Value) -> Value {
    let mut per_resource: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for ps in admission["podSetAssignments"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let ps_name = ps["name"].as_str().unwrap_or_default();
        for (r, f) in ps["flavors"].as_object().into_iter().flatten() {
            per_resource.entry(r.clone()).or_default().push((
                ps_name.to_string(),
                f.as_str().unwrap_or_default().to_string(),
            ));
        }
    }
    let mut out = Map::new();
    for (r, list) in per_resource {
        let first = list[0].1.clone();
        let v = if list.iter().all(|(_, f)| *f == first) {
            Value::String(first)
        } else {
            Value::Object(
                list.into_iter()
                    .map(|(ps, f)| (ps, Value::String(f)))
                    .collect(),
            )
        };
        out.insert(r, v);
    }
    Value::Object(out)
}

fn set_condition(obj: &mut Value, kind: &str, status: &str, reason: &str, message: &str) {
    let now = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let cond = json!({"type": kind, "status": status, "reason": reason, "message": message, "lastTransitionTime": now});
    let conditions = obj["status"]["conditions"].as_array_mut();
    match conditions {
        Some(list) => {
            if let Some(c) = list.iter_mut().find(|c| c["type"] == kind) {
                if c["status"] == status {
                    c["reason"] = json!(reason);
                    c["message"] = json!(message);
                } else {
                    *c = cond;
                }
            } else {
                list.push(cond);
            }
        }
        None => obj["status"]["conditions"] = json!([cond]),
    }
}

/// The eviction's end, as a job controller writes it once its pods are gone: the quota
/// reservation unset (kubernetes-sigs/kueue@v0.19.2 `pkg/workload/workload.go`
/// `UnsetQuotaReservationWithCondition`).
fn finish_eviction(kubectl: &Kubectl, namespace: &str, wl: &str) -> Result<(), String> {
    update_status(kubectl, namespace, wl, |obj| {
        if !is_true(obj, "QuotaReserved") || !is_true(obj, "Evicted") {
            return false;
        }
        set_condition(
            obj,
            "QuotaReserved",
            "False",
            "Pending",
            "Evicted; the e2e replay stopped it as its job controller would",
        );
        if is_true(obj, "Admitted") {
            set_condition(
                obj,
                "Admitted",
                "False",
                "NoReservation",
                "The workload has no reservation",
            );
        }
        if let Some(s) = obj["status"].as_object_mut() {
            s.remove("admission");
        }
        true
    })
}

/// Reads a Workload, changes its status, writes the status back at the version read; retries
/// on a conflict. `change` returns false when there is nothing to write.
fn update_status(
    kubectl: &Kubectl,
    namespace: &str,
    wl: &str,
    mut change: impl FnMut(&mut Value) -> bool,
) -> Result<(), String> {
    for _ in 0..20 {
        let mut obj = kubectl.get_json(&["workloads.kueue.x-k8s.io", "-n", namespace, wl])?;
        if !change(&mut obj) {
            return Ok(());
        }
        let a = kubectl.run(
            &["replace", "--subresource=status", "-f", "-"],
            Some(&obj.to_string()),
        );
        if a.ok {
            return Ok(());
        }
        if !a.stderr.contains("the object has been modified") {
            return Err(format!(
                "updating the status of Workload {wl}: {}",
                a.stderr
            ));
        }
    }
    Err(format!(
        "updating the status of Workload {wl}: conflicts 20 times in a row"
    ))
}
