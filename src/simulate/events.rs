//! What the simulation reports, and its two renderings: JSON lines (the contract of
//! `../shared/docs/SIMULATE.md`) and a human timeline table with each ClusterQueue's usage
//! after every second that had events.

use super::flavors::NoFitReason;
use super::model::World;
use super::preemption::Reason;
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
    pub fn time(&self) -> u64 {
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
pub fn to_json(world: &World, e: &Event) -> Value {
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
        } => json!({
            "time": time, "event": "Admitted", "workload": name(*workload), "clusterQueue": cq(*workload),
            "flavors": flavors_json(world, *workload, flavors),
            "borrowed": borrowed_json(world, *workload, borrowed),
        }),
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
pub type UsageLine = (u64, Vec<(String, String)>);

/// The human timeline: one row per event, then after every second the usage of each
/// ClusterQueue that holds anything (`cq: cpu 36/48, nvidia.com/gpu 8/4 (4 borrowed)`).
pub fn render_human(world: &World, events: &[Event], usage: &[UsageLine]) -> String {
    let mut rows: Vec<[String; 6]> = Vec::new();
    let header = [
        "TIME", "EVENT", "WORKLOAD", "CLUSTERQUEUE", "FLAVORS", "BORROWED",
    ]
    .map(str::to_owned);
    let mut out = String::new();
    let mut usage_at: BTreeMap<u64, &Vec<(String, String)>> = BTreeMap::new();
    for (t, lines) in usage {
        usage_at.insert(*t, lines);
    }
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    let mut flush = |rows: &mut Vec<[String; 6]>, out: &mut String, t: Option<u64>| {
        if rows.is_empty() {
            return;
        }
        let mut widths = header.clone().map(|h| h.len());
        for r in rows.iter() {
            for (i, c) in r.iter().enumerate() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
        for r in rows.drain(..) {
            let line: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c:<w$}", w = widths[i]))
                .collect();
            let _ = writeln!(out, "{}", line.join("  ").trim_end());
        }
        if let Some(lines) = t.and_then(|t| usage_at.get(&t)) {
            for (cq, u) in lines.iter() {
                let _ = writeln!(out, "    {cq}: {u}");
            }
        }
    };
    let _ = writeln!(out, "{}", header.join("  "));
    let mut current = None;
    for e in events {
        if current != Some(e.time()) {
            flush(&mut rows, &mut out, current);
            current = Some(e.time());
        }
        let j = to_json(world, e);
        if let Event::End { .. } = e {
            flush(&mut rows, &mut out, current);
            let list = |k: &str| {
                j[k].as_array()
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
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "-".to_owned())
            };
            let _ = writeln!(
                out,
                "End at {}s: pending: {}; running: {}; never admissible: {}",
                e.time(),
                list("pending"),
                list("running"),
                list("neverAdmissible")
            );
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
        rows.push([
            format!("{}s", e.time()),
            event,
            e.workload()
                .map_or_else(String::new, |w| world.workloads[w].name.clone()),
            j["clusterQueue"].as_str().unwrap_or_default().to_owned(),
            j.get("flavors").map_or_else(String::new, text),
            j.get("borrowed")
                .filter(|b| b.as_object().is_some_and(|m| !m.is_empty()))
                .map_or_else(String::new, |b| {
                    b.as_object()
                        .map(|m| {
                            m.iter()
                                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_default()
                }),
        ]);
    }
    flush(&mut rows, &mut out, current);
    out
}
