//! `simulate` across a fleet: the manager's ClusterQueues admit first (the manager's quota),
//! then MultiKueue offers the workload to the workers and the first worker that admits it runs
//! it (kueue@v0.19.2 `pkg/controller/admissionchecks/multikueue/workload.go`
//! `nominateAndSynchronizeWorkers`; dispatchers in `pkg/controller/workloaddispatcher/`).
//!
//! Conventions, on top of the single-cluster ones (`docs/simulate.md`):
//! - Each cluster is its own simulated Kueue: the manager's world holds the manager's queues,
//!   each worker's world its own queues with a copy of every manager workload on the
//!   LocalQueue of the same namespace and name (a worker without that LocalQueue never gets the
//!   copy).
//! - A workload the manager admits holds the manager's quota until it finishes on a worker;
//!   the manager itself runs nothing.
//! - Offers: `AllAtOnce` offers every worker in the second the manager admits; `Incremental`
//!   offers `stepSize` workers in fleet order then, and the next ones every 300 s (Kueue's
//!   fixed round) while no worker has admitted it.
//! - Within one second the workers run their scheduling cycles in fleet order; the first to
//!   admit a copy wins, and the copies still waiting elsewhere are withdrawn before those
//!   workers run — so at equal times the earlier worker wins.
//! - A copy is ordered on a worker by its manager workload's creation time (Kueue orders the
//!   remote Workload by its own creation, at dispatch; the two differ only when the manager
//!   admits out of creation order).
//! - A copy preempted on its worker goes back to dispatch (Kueue's
//!   `MultiKueueRedoAdmissionOnEvictionInWorker`, GA in 0.18): it is offered again as at
//!   admission, while the manager keeps its quota.
//! - A workload finishes on its worker `runFor` seconds after that worker admitted it; the
//!   manager's `Finished` follows the worker's in the same second.

use super::events::{self, Event};
use super::world::{self, World};
use super::{Sim, never_admissible};
use crate::profile::Profile;
use crate::profile::fleet::{Dispatcher, INCREMENTAL_ROUND_SECONDS};
use crate::simulate::scenario::Scenario;
use serde_json::{Value, json};
use std::cmp::Reverse;
use std::fmt::Write as _;

/// The manager's run time for a workload: it never ends on the manager by itself.
const HOLD: u64 = u64::MAX / 4;

/// The worlds of a fleet: the manager's, then each worker's by name, in fleet order.
pub(crate) struct Worlds {
    pub(crate) manager: World,
    pub(crate) workers: Vec<(String, World)>,
    /// Per worker, per manager workload: the copy's index in the worker's world.
    copies: Vec<Vec<Option<usize>>>,
}

/// Build the worlds of a scenario submitted to the manager.
pub(crate) fn worlds(
    manager: &Profile,
    workers: &[(&str, &Profile)],
    scenario: &Scenario,
) -> Worlds {
    let mut held = scenario.clone();
    for w in &mut held.workloads {
        w.run_for = HOLD;
    }
    let m = world::build(manager, &held);
    let workers: Vec<(String, World)> = workers
        .iter()
        .map(|(name, p)| ((*name).to_owned(), world::build_on(p, manager, scenario)))
        .collect();
    let copies = workers
        .iter()
        .map(|(_, w)| {
            m.workloads
                .iter()
                .map(|mw| w.workloads.iter().position(|c| c.name == mw.name))
                .collect()
        })
        .collect();
    Worlds {
        manager: m,
        workers,
        copies,
    }
}

/// Where a manager workload is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Waiting,
    /// Admitted by the manager, offered to the first `offered` workers; the next offer at
    /// `next` (Incremental).
    Reserved {
        offered: usize,
        next: u64,
    },
    Running {
        worker: usize,
    },
    Done,
}

/// Which worker ran a workload, and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Placement {
    pub(crate) workload: String,
    pub(crate) worker: String,
    pub(crate) start: u64,
    /// `None` while it still runs at the end of the run.
    pub(crate) end: Option<u64>,
}

/// A fleet run: every event with its cluster (0 the manager, `k + 1` worker `k`), the last one
/// the fleet's `End`; and where each workload ran.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) events: Vec<(usize, Event)>,
    pub(crate) placements: Vec<Placement>,
    pub(crate) capped: Vec<u64>,
}

/// Run a scenario on a fleet.
pub(crate) fn run(w: &Worlds, dispatcher: Dispatcher, step: usize, until: Option<u64>) -> Outcome {
    let mut fleet = FleetRun::new(w, dispatcher, step);
    while let Some(now) = fleet.next_time() {
        if until.is_some_and(|u| now > u) {
            break;
        }
        fleet.finish(now);
        fleet.submit(now);
        fleet.manager_cycles(now);
        fleet.dispatch(now);
    }
    fleet.end()
}

/// A fleet run under way: the manager's simulation, each worker's, and where each manager
/// workload is.
struct FleetRun<'w> {
    w: &'w Worlds,
    /// How many more workers one offer reaches.
    step: usize,
    manager: Sim<'w>,
    workers: Vec<Sim<'w>>,
    /// Per worker, per copy: its manager workload.
    manager_of: Vec<Vec<Option<usize>>>,
    status: Vec<Status>,
    submitted: Vec<bool>,
    /// The manager workloads by submission time, and how many of them are submitted.
    order: Vec<usize>,
    next_sub: usize,
    out: Vec<(usize, Event)>,
    placements: Vec<Placement>,
    capped: Vec<u64>,
}

impl<'w> FleetRun<'w> {
    fn new(w: &'w Worlds, dispatcher: Dispatcher, step: usize) -> Self {
        let m = &w.manager;
        let n = w.workers.len();
        let step = match dispatcher {
            Dispatcher::AllAtOnce => n,
            Dispatcher::Incremental => step.max(1),
        };
        let ms = Sim::new(m);
        let ws: Vec<Sim<'_>> = w.workers.iter().map(|(_, world)| Sim::new(world)).collect();
        // Manager workload by copy, per worker.
        let manager_of: Vec<Vec<Option<usize>>> = w
            .copies
            .iter()
            .zip(&w.workers)
            .map(|(copies, (_, world))| {
                let mut back = vec![None; world.workloads.len()];
                for (i, c) in copies.iter().enumerate() {
                    if let Some(c) = c {
                        back[*c] = Some(i);
                    }
                }
                back
            })
            .collect();
        let status = vec![Status::Waiting; m.workloads.len()];
        let submitted = vec![false; m.workloads.len()];
        let mut order: Vec<usize> = (0..m.workloads.len()).collect();
        order.sort_by_key(|&i| (m.workloads[i].submit_at, i));
        FleetRun {
            w,
            step,
            manager: ms,
            workers: ws,
            manager_of,
            status,
            submitted,
            order,
            next_sub: 0,
            out: Vec::new(),
            placements: Vec::new(),
            capped: Vec::new(),
        }
    }

    /// The next second anything happens: an end on a worker, a submission, or an Incremental
    /// round of offers.
    fn next_time(&mut self) -> Option<u64> {
        let m = &self.w.manager;
        let n = self.workers.len();
        for sim in &mut self.workers {
            drop_stale_ends(sim);
        }
        let t_end = self
            .workers
            .iter()
            .filter_map(|s| s.ends.peek().map(|Reverse((t, _))| *t))
            .min();
        let t_sub = self
            .order
            .get(self.next_sub)
            .map(|&i| m.workloads[i].submit_at);
        let t_round = self
            .status
            .iter()
            .filter_map(|s| match s {
                Status::Reserved { offered, next } if *offered < n => Some(*next),
                _ => None,
            })
            .min();
        [t_end, t_sub, t_round].into_iter().flatten().min()
    }

    /// Ends on the workers, by workload name (the manager's index order): the copy and the
    /// manager workload both release their quota.
    fn finish(&mut self, now: u64) {
        let w = self.w;
        let m = &w.manager;
        let mut finished = Vec::new();
        for (k, sim) in self.workers.iter_mut().enumerate() {
            while let Some(&Reverse((t, c))) = sim.ends.peek() {
                if t != now {
                    break;
                }
                sim.ends.pop();
                if sim.state.running[c].as_ref().is_some_and(|r| r.ends == t)
                    && let Some(i) = self.manager_of[k][c]
                {
                    finished.push((i, k, c));
                }
            }
        }
        finished.sort_unstable();
        for (i, k, c) in finished {
            let world = &w.workers[k].1;
            self.workers[k].state.release(world, c);
            self.workers[k]
                .queues
                .retry_inadmissible(world, world.workloads[c].cq);
            self.out.push((
                k + 1,
                Event::Finished {
                    time: now,
                    workload: c,
                },
            ));
            self.manager.state.release(m, i);
            self.manager.queues.retry_inadmissible(m, m.workloads[i].cq);
            self.out.push((
                0,
                Event::Finished {
                    time: now,
                    workload: i,
                },
            ));
            self.status[i] = Status::Done;
            self.close_placement(i, now);
        }
    }

    /// The manager workloads submitted this second join the manager's queues.
    fn submit(&mut self, now: u64) {
        let m = &self.w.manager;
        while let Some(&i) = self.order.get(self.next_sub) {
            if m.workloads[i].submit_at != now {
                break;
            }
            self.next_sub += 1;
            self.submitted[i] = true;
            self.out.push((
                0,
                Event::Submitted {
                    time: now,
                    workload: i,
                },
            ));
            self.manager.queues.push(m, i);
        }
    }

    /// The manager's cycles: what it preempts goes back to waiting (its copies withdrawn),
    /// what it admits is reserved, to be offered to the workers.
    fn manager_cycles(&mut self, now: u64) {
        if !self.manager.settle(now) {
            self.capped.push(now);
        }
        for e in std::mem::take(&mut self.manager.events) {
            if let Event::Preempted { workload: i, .. } = e {
                withdraw(self.w, &mut self.workers, i, None);
                self.status[i] = Status::Waiting;
            }
            self.out.push((0, e));
        }
        for (i, s) in self.status.iter_mut().enumerate() {
            if *s == Status::Waiting && self.manager.state.running[i].is_some() {
                *s = Status::Reserved {
                    offered: 0,
                    next: now,
                };
            }
        }
    }

    /// Offers and the workers' cycles, until nothing changes in this second (a copy preempted
    /// on one worker is offered again).
    fn dispatch(&mut self, now: u64) {
        for _ in 0..=self.workers.len() + 1 {
            let offered = self.offer(now);
            let moved = self.worker_cycles(now);
            if !offered && !moved {
                break;
            }
        }
    }

    /// Each reserved workload due an offer is queued on the next `step` workers; whether any
    /// was.
    fn offer(&mut self, now: u64) -> bool {
        let w = self.w;
        let n = self.workers.len();
        let mut changed = false;
        for (i, s) in self.status.iter_mut().enumerate() {
            let Status::Reserved { offered, next } = *s else {
                continue;
            };
            if offered >= n || next > now {
                continue;
            }
            let upto = (offered + self.step).min(n);
            for (k, sim) in self.workers.iter_mut().enumerate().take(upto).skip(offered) {
                if let Some(c) = w.copies[k][i] {
                    let world = &w.workers[k].1;
                    if !sim.queues.is_pending(world, c) {
                        sim.queues.push(world, c);
                        self.out.push((
                            k + 1,
                            Event::Submitted {
                                time: now,
                                workload: c,
                            },
                        ));
                    }
                }
            }
            *s = Status::Reserved {
                offered: upto,
                next: now.saturating_add(INCREMENTAL_ROUND_SECONDS),
            };
            changed = true;
        }
        changed
    }

    /// The workers' cycles in fleet order: the first to admit a copy runs it (the other
    /// copies withdrawn); a copy preempted on its worker goes back to dispatch. Whether any
    /// worker admitted or preempted a workload.
    fn worker_cycles(&mut self, now: u64) -> bool {
        let w = self.w;
        let m = &w.manager;
        let mut changed = false;
        for k in 0..self.workers.len() {
            if !self.workers[k].settle(now) {
                self.capped.push(now);
            }
            for e in std::mem::take(&mut self.workers[k].events) {
                match e {
                    Event::Admitted { workload: c, .. } => {
                        if let Some(i) = self.manager_of[k][c] {
                            self.status[i] = Status::Running { worker: k };
                            self.placements.push(Placement {
                                workload: m.workloads[i].name.clone(),
                                worker: w.workers[k].0.clone(),
                                start: now,
                                end: None,
                            });
                            withdraw(w, &mut self.workers, i, Some(k));
                        }
                        changed = true;
                    }
                    Event::Preempted { workload: c, .. } => {
                        if let Some(i) = self.manager_of[k][c]
                            && self.status[i] == (Status::Running { worker: k })
                        {
                            self.status[i] = Status::Reserved {
                                offered: 0,
                                next: now,
                            };
                            self.close_placement(i, now);
                        }
                        changed = true;
                    }
                    _ => {}
                }
                self.out.push((k + 1, e));
            }
        }
        changed
    }

    /// Manager workload `i`'s open placement ends at `now`.
    fn close_placement(&mut self, i: usize, now: u64) {
        let w = self.w;
        let name = &w.manager.workloads[i].name;
        if let Some(p) = self
            .placements
            .iter_mut()
            .rev()
            .find(|p| p.workload == *name && p.end.is_none())
        {
            p.end = Some(now);
        }
    }

    /// The fleet's `End` and the outcome.
    fn end(mut self) -> Outcome {
        let m = &self.w.manager;
        let time = self.out.last().map_or(0, |(_, e)| e.time());
        let never = never_admissible(m);
        let (mut pending, mut running, mut never_list) = (Vec::new(), Vec::new(), Vec::new());
        for (i, s) in self.status.iter().enumerate() {
            match s {
                Status::Running { .. } => running.push(i),
                Status::Waiting | Status::Reserved { .. } if self.submitted[i] => match never[i] {
                    Some(reason) if *s == Status::Waiting => never_list.push((i, reason)),
                    _ => pending.push(i),
                },
                _ => {}
            }
        }
        self.out.push((
            0,
            Event::End {
                time,
                pending,
                running,
                never: never_list,
            },
        ));
        Outcome {
            events: self.out,
            placements: self.placements,
            capped: self.capped,
        }
    }
}

/// Remove the ends of workloads that are no longer running from the front of the heap.
fn drop_stale_ends(sim: &mut Sim<'_>) {
    while let Some(&Reverse((t, c))) = sim.ends.peek() {
        if sim.state.running[c].as_ref().is_some_and(|r| r.ends == t) {
            break;
        }
        sim.ends.pop();
    }
}

/// Take manager workload `i`'s copies off every worker but `keep`: a waiting copy leaves its
/// queue, a running one (the manager preempted it) releases its quota.
fn withdraw(w: &Worlds, ws: &mut [Sim<'_>], i: usize, keep: Option<usize>) {
    for (k, sim) in ws.iter_mut().enumerate() {
        if Some(k) == keep {
            continue;
        }
        let Some(c) = w.copies[k][i] else { continue };
        let world = &w.workers[k].1;
        sim.queues.remove(world, c);
        if sim.state.release(world, c).is_some() {
            sim.queues.retry_inadmissible(world, world.workloads[c].cq);
        }
    }
}

/// The cluster name of an event's index.
fn cluster(w: &Worlds, at: usize) -> (&str, &World) {
    match at {
        0 => ("manager", &w.manager),
        k => (w.workers[k - 1].0.as_str(), &w.workers[k - 1].1),
    }
}

/// JSON lines: the single-cluster events with the cluster they happened on (`"cluster"`);
/// the last line is the fleet's `End`.
pub(crate) fn render_json(w: &Worlds, outcome: &Outcome) -> String {
    let mut text = String::new();
    for (at, e) in &outcome.events {
        let (name, world) = cluster(w, *at);
        let mut j = events::to_json(world, e);
        if !matches!(e, Event::End { .. })
            && let Value::Object(map) = &mut j
        {
            map.insert("cluster".into(), json!(name));
        }
        text.push_str(&j.to_string());
        text.push('\n');
    }
    text
}

/// The human timeline: one row per event with its cluster, the fleet's end, then where each
/// workload ran.
pub(crate) fn render_human(w: &Worlds, outcome: &Outcome) -> String {
    let mut rows: Vec<[String; 6]> = vec![
        [
            "TIME",
            "CLUSTER",
            "EVENT",
            "WORKLOAD",
            "CLUSTERQUEUE",
            "FLAVORS",
        ]
        .map(str::to_owned),
    ];
    let mut end = String::new();
    for (at, e) in &outcome.events {
        let (name, world) = cluster(w, *at);
        let j = events::to_json(world, e);
        if let Event::End { .. } = e {
            let list = |k: &str| {
                let items: Vec<String> = j[k]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => format!(
                            "{} ({})",
                            other["workload"].as_str().unwrap_or_default(),
                            other["reason"].as_str().unwrap_or_default()
                        ),
                    })
                    .collect();
                if items.is_empty() {
                    "-".to_owned()
                } else {
                    items.join(", ")
                }
            };
            end = format!(
                "End at {}s: pending: {}; running: {}; never admissible: {}",
                e.time(),
                list("pending"),
                list("running"),
                list("neverAdmissible")
            );
            continue;
        }
        let flavors = j
            .get("flavors")
            .and_then(Value::as_object)
            .map_or_else(String::new, |m| {
                m.iter()
                    .map(|(r, f)| {
                        format!(
                            "{r}={}",
                            f.as_str().map_or_else(|| f.to_string(), str::to_owned)
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            });
        rows.push([
            format!("{}s", e.time()),
            name.to_owned(),
            j["event"].as_str().unwrap_or_default().to_owned(),
            j["workload"].as_str().unwrap_or_default().to_owned(),
            j["clusterQueue"].as_str().unwrap_or_default().to_owned(),
            flavors,
        ]);
    }
    let mut widths = [0usize; 6];
    for r in &rows {
        for (wd, c) in widths.iter_mut().zip(r) {
            *wd = (*wd).max(c.chars().count());
        }
    }
    let mut text = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(c, wd)| format!("{c:<wd$}"))
            .collect();
        let _ = writeln!(text, "{}", cells.join("  ").trim_end());
    }
    let _ = writeln!(text, "{end}");
    if !outcome.placements.is_empty() {
        let _ = writeln!(text, "Ran on:");
        for p in &outcome.placements {
            let until = p
                .end
                .map_or_else(|| "still running".to_owned(), |e| format!("to {e}s"));
            let _ = writeln!(
                text,
                "  {} on {}: from {}s {until}",
                p.workload, p.worker, p.start
            );
        }
    }
    text
}
