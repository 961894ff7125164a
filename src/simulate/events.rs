//! What the simulation reports, and its two renderings: JSON lines (their fields in
//! `docs/simulate.md`) and a human timeline table with each ClusterQueue's usage
//! after every second that had events.

use super::flavors::NoFitReason;
use super::preemption::Reason;
use super::world::World;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Clone, Debug)]
pub enum Event {
    Submitted {
        time: u64,
        workload: usize,
    },
    Admitted {
        time: u64,
        workload: usize,
        /// Per pod set: resource → flavor.
        flavors: Vec<BTreeMap<usize, usize>>,
        /// Resource → borrowed amount (nano-units).
        borrowed: BTreeMap<usize, i128>,
    },
    Preempted {
        time: u64,
        workload: usize,
        by: usize,
        reason: Reason,
    },
    Finished {
        time: u64,
        workload: usize,
    },
    End {
        time: u64,
        pending: Vec<usize>,
        running: Vec<usize>,
        never: Vec<(usize, NoFitReason)>,
    },
}

impl Event {
    pub(crate) fn time(&self) -> u64 {
        match self {
            Self::Submitted { time, .. }
            | Self::Admitted { time, .. }
            | Self::Preempted { time, .. }
            | Self::Finished { time, .. }
            | Self::End { time, .. } => *time,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Self::Submitted { .. } => "Submitted",
            Self::Admitted { .. } => "Admitted",
            Self::Preempted { .. } => "Preempted",
            Self::Finished { .. } => "Finished",
            Self::End { .. } => "End",
        }
    }

    fn workload(&self) -> Option<usize> {
        match self {
            Self::Submitted { workload, .. }
            | Self::Admitted { workload, .. }
            | Self::Preempted { workload, .. }
            | Self::Finished { workload, .. } => Some(*workload),
            Self::End { .. } => None,
        }
    }
}

/// Conventions, 5: every assigned resource → its flavor; an object pod set → flavor when the
/// pod sets of the workload got different flavors for it.
fn flavors_json(world: &World, wl: usize, flavors: &[BTreeMap<usize, usize>]) -> Value {
    let mut per_resource: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for (ps, map) in flavors.iter().enumerate() {
        let ps_name = world.workloads[wl]
            .pod_sets
            .get(ps)
            .map_or("", |p| p.name.as_str());
        for (&r, &f) in map {
            per_resource
                .entry(world.resources[r].as_str())
                .or_default()
                .push((ps_name, world.flavors[f].name.as_str()));
        }
    }
    let mut out = Map::new();
    for (r, list) in per_resource {
        let first = list[0].1;
        let v = if list.iter().all(|(_, f)| *f == first) {
            Value::String(first.to_owned())
        } else {
            Value::Object(
                list.into_iter()
                    .map(|(ps, f)| (ps.to_owned(), Value::String(f.to_owned())))
                    .collect(),
            )
        };
        out.insert(r.to_owned(), v);
    }
    Value::Object(out)
}

/// The admission checks of its ClusterQueue a workload waits for on the flavors it got: Kueue
/// reserves the quota at this time (`QuotaReserved`) and admits the workload once every check is
/// Ready. The simulator does not model how long that takes: the checks are Ready at once.
fn admission_checks<'w>(
    world: &'w World,
    wl: usize,
    flavors: &[BTreeMap<usize, usize>],
) -> Vec<&'w str> {
    let cq = &world.cqs[world.workloads[wl].cq];
    cq.checks_for(|f| flavors.iter().any(|m| m.values().any(|&x| x == f)))
}

/// An amount of a resource in the spelling the workload wrote it in (`64Gi`, `20500m`).
fn quantity(world: &World, wl: usize, resource: usize, nanos: i128) -> String {
    let spelling = world.workloads[wl]
        .pod_sets
        .iter()
        .find_map(|p| p.spelling.get(&resource).copied())
        .unwrap_or_else(crate::profile::Quantity::zero);
    spelling.with_nanos(nanos).canonical()
}

fn borrowed_json(world: &World, wl: usize, borrowed: &BTreeMap<usize, i128>) -> Value {
    let mut m: BTreeMap<&str, String> = BTreeMap::new();
    for (&r, &v) in borrowed {
        m.insert(world.resources[r].as_str(), quantity(world, wl, r, v));
    }
    json!(m)
}

/// One event as its JSON object.
pub(crate) fn to_json(world: &World, e: &Event) -> Value {
    let name = |wl: usize| world.workloads[wl].name.clone();
    let cq = |wl: usize| world.cqs[world.workloads[wl].cq].name.clone();
    match e {
        Event::Submitted { time, workload } | Event::Finished { time, workload } => json!({
            "time": time, "event": e.name(), "workload": name(*workload), "clusterQueue": cq(*workload),
        }),
        Event::Admitted {
            time,
            workload,
            flavors,
            borrowed,
        } => {
            let mut v = json!({
                "time": time, "event": "Admitted", "workload": name(*workload), "clusterQueue": cq(*workload),
                "flavors": flavors_json(world, *workload, flavors),
                "borrowed": borrowed_json(world, *workload, borrowed),
            });
            let checks = admission_checks(world, *workload, flavors);
            if !checks.is_empty() {
                v["admissionChecks"] = json!(checks);
            }
            v
        }
        Event::Preempted {
            time,
            workload,
            by,
            reason,
        } => json!({
            "time": time, "event": "Preempted", "workload": name(*workload), "clusterQueue": cq(*workload),
            "by": name(*by), "reason": reason.as_str(),
        }),
        Event::End {
            time,
            pending,
            running,
            never,
        } => json!({
            "time": time, "event": "End",
            "pending": pending.iter().map(|&w| name(w)).collect::<Vec<_>>(),
            "running": running.iter().map(|&w| name(w)).collect::<Vec<_>>(),
            "neverAdmissible": never.iter().map(|&(w, r)| json!({"workload": name(w), "reason": r.as_str()})).collect::<Vec<_>>(),
        }),
    }
}

/// JSON lines, one event per line.
pub fn render_json(world: &World, events: &[Event]) -> String {
    let mut out = String::new();
    for e in events {
        out.push_str(&to_json(world, e).to_string());
        out.push('\n');
    }
    out
}

/// Usage of one ClusterQueue after a second, per resource, for the human table.
pub(crate) type UsageLine = (u64, Vec<(String, String)>);

/// The human timeline: one row per event, then after every second the usage of each
/// ClusterQueue that holds anything (`cq: nvidia.com/gpu 8/4 on gpu (4 borrowed)`), and a
/// last line with what is pending, running and never admissible.
pub(crate) fn render_human(world: &World, events: &[Event], usage: &[UsageLine]) -> String {
    enum Line {
        Row([String; 6]),
        Text(String),
    }
    let usage_at: BTreeMap<u64, &Vec<(String, String)>> =
        usage.iter().map(|(t, lines)| (*t, lines)).collect();
    let mut lines = vec![Line::Row(
        [
            "TIME",
            "EVENT",
            "WORKLOAD",
            "CLUSTERQUEUE",
            "FLAVORS",
            "BORROWED",
        ]
        .map(str::to_owned),
    )];
    let usage_after = |t: u64, lines: &mut Vec<Line>| {
        for (cq, u) in usage_at.get(&t).map(|v| v.as_slice()).unwrap_or_default() {
            lines.push(Line::Text(format!("    {cq}: {u}")));
        }
    };
    for (i, e) in events.iter().enumerate() {
        let j = to_json(world, e);
        if let Event::End { .. } = e {
            lines.push(Line::Text(end_line(e.time(), &j)));
            lines.extend(watch_lines(world, events).into_iter().map(Line::Text));
            continue;
        }
        let mut event = e.name().to_owned();
        if let Event::Preempted { by, reason, .. } = e {
            event = format!(
                "Preempted by {} ({})",
                world.workloads[*by].name,
                reason.as_str()
            );
        }
        if let Some(checks) = j.get("admissionChecks").and_then(Value::as_array) {
            let names: Vec<&str> = checks.iter().filter_map(Value::as_str).collect();
            event = format!("Admitted after checks {}", names.join(", "));
        }
        lines.push(Line::Row([
            format!("{}s", e.time()),
            event,
            e.workload()
                .map_or_else(String::new, |w| world.workloads[w].name.clone()),
            j["clusterQueue"].as_str().unwrap_or_default().to_owned(),
            j.get("flavors").map_or_else(String::new, pairs),
            j.get("borrowed").map_or_else(String::new, pairs),
        ]));
        let last_of_second = events
            .get(i + 1)
            .is_none_or(|n| n.time() != e.time() || matches!(n, Event::End { .. }));
        if last_of_second {
            usage_after(e.time(), &mut lines);
        }
    }
    let mut widths = [0usize; 6];
    for l in &lines {
        if let Line::Row(r) = l {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let mut out = String::new();
    for l in lines {
        match l {
            Line::Row(r) => {
                let cells: Vec<String> = r
                    .iter()
                    .zip(widths)
                    .map(|(c, w)| format!("{c:<w$}"))
                    .collect();
                let _ = writeln!(out, "{}", cells.join("  ").trim_end());
            }
            Line::Text(t) => {
                let _ = writeln!(out, "{t}");
            }
        }
    }
    out
}

/// For each kind of blocker the run reports, the Kueue metric that shows it on the cluster
/// (kubernetes-sigs/kueue@v0.19.2 `pkg/metrics/metrics.go`: `pending_workloads`, whose status
/// is `active` in the queue's heap or `inadmissible` once tried and set aside, so a workload
/// waiting for quota may be either and one that never fits ends `inadmissible`;
/// `preempted_workloads_total` by preempting ClusterQueue and reason;
/// `admission_checks_wait_time_seconds` from quota reservation to admission), one line per
/// ClusterQueue and kind.
fn watch_lines(world: &World, events: &[Event]) -> Vec<String> {
    let cq = |wl: usize| world.cqs[world.workloads[wl].cq].name.as_str();
    let mut watch = std::collections::BTreeSet::new();
    for e in events {
        match e {
            Event::End { pending, never, .. } => {
                for &w in pending {
                    watch.insert(format!(
                        "pending: kueue_pending_workloads{{cluster_queue=\"{}\"}}",
                        cq(w)
                    ));
                }
                for &(w, _) in never {
                    watch.insert(format!(
                        "never admissible: kueue_pending_workloads{{cluster_queue=\"{}\", status=\"inadmissible\"}}",
                        cq(w)
                    ));
                }
            }
            Event::Preempted { by, reason, .. } => {
                watch.insert(format!(
                    "preempted: kueue_preempted_workloads_total{{preempting_cluster_queue=\"{}\", reason=\"{}\"}}",
                    cq(*by),
                    reason.as_str()
                ));
            }
            Event::Admitted {
                workload, flavors, ..
            } if !admission_checks(world, *workload, flavors).is_empty() => {
                watch.insert(format!(
                    "waits for admission checks: kueue_admission_checks_wait_time_seconds_bucket{{cluster_queue=\"{}\"}}",
                    cq(*workload)
                ));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    if !watch.is_empty() {
        out.push("Watch on the cluster (Kueue's metrics):".to_owned());
        out.extend(watch.into_iter().map(|w| format!("    {w}")));
    }
    out
}

/// `cpu=default nvidia.com/gpu=gpu`, or `cpu=driver:two,worker:one` per pod set.
fn pairs(v: &Value) -> String {
    let Some(m) = v.as_object() else {
        return String::new();
    };
    m.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            Value::Object(per) => format!(
                "{k}={}",
                per.iter()
                    .map(|(ps, f)| format!("{ps}:{}", f.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn end_line(time: u64, j: &Value) -> String {
    let list = |k: &str| {
        let items: Vec<String> = j[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => format!(
                            "{} ({})",
                            other["workload"].as_str().unwrap_or_default(),
                            other["reason"].as_str().unwrap_or_default()
                        ),
                    })
                    .collect()
            })
            .unwrap_or_default();
        if items.is_empty() {
            "-".to_owned()
        } else {
            items.join(", ")
        }
    };
    format!(
        "End at {time}s: pending: {}; running: {}; never admissible: {}",
        list("pending"),
        list("running"),
        list("neverAdmissible")
    )
}
