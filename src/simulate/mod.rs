//! `raykueue simulate`: an offline what-if of Kueue v0.19 admission for a profile. Which
//! workloads of a scenario Kueue would admit, when, on which flavors, who borrows, who is
//! preempted, and who can never be admitted (the user's contract: `docs/simulate.md`).
//!
//! The modules follow one second of simulated time: `scenario` (the file and its checks) →
//! `world` (queues, quotas and pod sets as indices) → this module's clock (ends, then
//! submissions, then scheduling cycles until nothing changes) → `cycle` (one Kueue
//! scheduling cycle) using `queues` (heaps and parked workloads), `flavors` (flavor
//! assignment), `preemption` (targets), `fair_sharing` (shares, the tournament and the
//! fair-sharing preemptor when the profile turns fair sharing on), `quota`, `tree` and
//! `snapshot` (usage of queues and the Cohort tree) → `events` (JSON lines, human table). What
//! is simplified is listed in `docs/simulate.md`.

mod cycle;
pub(crate) mod events;
mod fair_sharing;
mod flavors;
pub(crate) mod fleet;
mod keys;
pub(crate) mod live;
pub(crate) mod never;
mod oracle;
mod preemption;
mod preemptor;
mod queues;
mod quota;
pub(crate) mod scenario;
mod share;
mod snapshot;
pub(crate) mod standard;
mod tree;
pub(crate) mod world;

use events::{Event, UsageLine};
use flavors::NoFitReason;
use queues::Queues;
use snapshot::State;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write as _;
use world::World;

/// A cycle cap per second, beyond the workload count: every useful cycle admits, preempts or
/// parks a workload; preemptions that chase each other (possible only with unusual policies)
/// stop here instead of looping.
const EXTRA_CYCLES_PER_SECOND: usize = 100;

/// The running simulation.
pub(crate) struct Sim<'w> {
    world: &'w World,
    state: State,
    queues: Queues,
    events: Vec<Event>,
    /// (end time, workload), earliest first; stale entries (preempted workloads) are skipped.
    ends: BinaryHeap<Reverse<(u64, usize)>>,
    /// Per workload, its requests as `flavors::surely_turned_away` weighs them.
    demands: Vec<Vec<flavors::Demand>>,
    /// Every shortcut off (`run_reference`).
    reference: bool,
}

/// The outcome of a run: its events (ending with `End`) and, for the human table, each
/// ClusterQueue's usage after every second with events.
#[derive(Debug)]
pub struct Outcome {
    pub events: Vec<Event>,
    pub usage: Vec<UsageLine>,
    /// Seconds at which cycles were still changing things when the cycle cap stopped them
    /// (preemptions chasing each other); the run goes on with the next event.
    pub capped: Vec<u64>,
}

/// Run the scenario's workloads on the world, up to `until` seconds when given. The outcome's
/// `usage` stays empty: only the human table shows it (`run_with_usage`).
pub fn run(world: &World, until: Option<u64>) -> Outcome {
    run_recording(world, until, false, &Start::default())
}

/// `run` with every shortcut off, the simulator as Kueue's code reads: every head of every
/// cycle gets its flavors assigned and, where it needs preemption, the full search for
/// targets (no head turned away beforehand, `flavors::surely_turned_away`; no search skipped,
/// `fair_sharing::surely_none`); the flavor assigner's preemption oracle asks the preemptor
/// every time (nothing kept across cycles, `OracleMemo`); under fair sharing every head
/// enters the tournament, which is built afresh for every pick and decides every entry's
/// turn (`cycle::Order`). The same events as `run` by the arguments at each shortcut; the
/// tests hold `run` to it on every scenario and on random Cohort trees, in release builds
/// as in debug ones.
#[doc(hidden)]
pub fn run_reference(world: &World, until: Option<u64>) -> Outcome {
    let mut sim = Sim::new(world);
    sim.reference = true;
    run_sim(sim, until, false, &Start::default())
}

/// A workload that holds quota when a run starts.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub(crate) workload: usize,
    pub(crate) usage: world::FrMap<i128>,
    /// When its quota was reserved (`QuotaReserved`): preemption takes the most recently
    /// admitted first, so the order of these matters as much as the usage.
    pub(crate) admitted_at: u64,
    pub(crate) ends: u64,
}

/// Where a run starts: the workloads that hold quota, and the first second of the run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Start {
    pub(crate) held: Vec<Held>,
    /// Workloads created earlier are all submitted at this second, in their queues' order
    /// (which their creation time still decides): a live cluster's pending Workloads wait
    /// now, they are not replayed from when they were created.
    pub(crate) at: u64,
    /// Workloads in no queue (a deactivated live Workload, `spec.active: false`): never
    /// submitted.
    pub(crate) absent: Vec<usize>,
}

/// A run that starts from a cluster's state (`live::forecast`): the held and absent workloads
/// are never submitted; the others are submitted at their `submit_at`, or at `start.at` if
/// that is later.
pub(crate) fn run_from(world: &World, start: &Start, until: Option<u64>) -> Outcome {
    run_recording(world, until, false, start)
}

/// `run`, also recording each ClusterQueue's usage after every second with events, for the
/// human table.
pub(crate) fn run_with_usage(world: &World, until: Option<u64>) -> Outcome {
    run_recording(world, until, true, &Start::default())
}

impl<'w> Sim<'w> {
    fn new(world: &'w World) -> Self {
        Sim {
            world,
            state: State::new(world),
            queues: Queues::new(world),
            events: Vec::new(),
            ends: BinaryHeap::new(),
            demands: flavors::demands(world),
            reference: false,
        }
    }

    /// Scheduling cycles at `now` until one changes nothing; `false` when they would never
    /// stop: the cycles brought the admitted workloads and the queues back to a state they
    /// were in before (the simulator is deterministic, so from there they repeat forever:
    /// preemptions chasing each other), or the cap stopped them.
    fn settle(&mut self, now: u64) -> bool {
        let cap = 4 * self.world.workloads.len() + EXTRA_CYCLES_PER_SECOND;
        let mut seen = std::collections::HashSet::new();
        for _ in 0..cap {
            if !cycle::run(self, now) {
                return true;
            }
            // The state and the queues keep their fingerprints as they change (a cycle changes
            // a few workloads of thousands). A fingerprint is 64 bits, not the state: two
            // states of one second that collide would stop its cycles early (odds of about
            // n² / 2⁶⁵ for n cycles; docs/performance.md).
            if !seen.insert((self.state.fingerprint(), self.queues.fingerprint())) {
                return false;
            }
        }
        false
    }
}

fn run_recording(world: &World, until: Option<u64>, record_usage: bool, start: &Start) -> Outcome {
    run_sim(Sim::new(world), until, record_usage, start)
}

fn run_sim(mut sim: Sim<'_>, until: Option<u64>, record_usage: bool, start: &Start) -> Outcome {
    let world = sim.world;
    let never = never_admissible(world);
    let mut held = vec![false; world.workloads.len()];
    for h in &start.held {
        held[h.workload] = true;
        sim.state.admit(
            world,
            h.workload,
            snapshot::Running {
                admitted_at: h.admitted_at,
                ends: h.ends,
                usage: h.usage.clone(),
            },
        );
        sim.ends.push(Reverse((h.ends, h.workload)));
    }
    let submit_at = |w: usize| world.workloads[w].submit_at.max(start.at);
    let mut unsubmitted = held.clone();
    for &w in &start.absent {
        unsubmitted[w] = true;
    }
    let mut submissions: Vec<usize> = (0..world.workloads.len())
        .filter(|&w| !unsubmitted[w])
        .collect();
    submissions.sort_by_key(|&w| (submit_at(w), w));
    let mut next = 0;
    // A workload that held quota at the start counts as submitted: preempted, it waits.
    let mut submitted = held;
    let mut usage = Vec::new();
    let spelling = if record_usage {
        spellings(world)
    } else {
        Vec::new()
    };
    let mut capped = Vec::new();
    loop {
        while let Some(&Reverse((t, wl))) = sim.ends.peek() {
            if sim.state.running[wl].as_ref().is_some_and(|r| r.ends == t) {
                break;
            }
            sim.ends.pop();
        }
        let t_end = sim.ends.peek().map(|Reverse((t, _))| *t);
        let t_sub = submissions.get(next).map(|&w| submit_at(w));
        let Some(now) = [t_end, t_sub].into_iter().flatten().min() else {
            break;
        };
        if until.is_some_and(|u| now > u) {
            break;
        }
        let mut finished = Vec::new();
        while let Some(&Reverse((t, wl))) = sim.ends.peek() {
            if t != now {
                break;
            }
            sim.ends.pop();
            if sim.state.running[wl].as_ref().is_some_and(|r| r.ends == t) {
                finished.push(wl);
            }
        }
        finished.sort_unstable();
        finished.dedup();
        for wl in finished {
            sim.state.release(world, wl);
            sim.events.push(Event::Finished {
                time: now,
                workload: wl,
            });
            sim.queues.retry_inadmissible(world, world.workloads[wl].cq);
        }
        while let Some(&wl) = submissions.get(next) {
            if submit_at(wl) != now {
                break;
            }
            next += 1;
            submitted[wl] = true;
            sim.events.push(Event::Submitted {
                time: now,
                workload: wl,
            });
            sim.queues.push(world, wl);
        }
        if !sim.settle(now) {
            capped.push(now);
        }
        if record_usage {
            usage.push((now, usage_lines(&sim, &spelling)));
        }
    }
    let time = sim.events.last().map_or(0, Event::time);
    let mut pending = Vec::new();
    let mut running = Vec::new();
    let mut never_list = Vec::new();
    for wl in 0..world.workloads.len() {
        if sim.state.running[wl].is_some() {
            running.push(wl);
        } else if submitted[wl] && sim.queues.is_pending(world, wl) {
            match never[wl] {
                Some(reason) => never_list.push((wl, reason)),
                None => pending.push(wl),
            }
        }
    }
    sim.events.push(Event::End {
        time,
        pending,
        running,
        never: never_list,
    });
    Outcome {
        events: sim.events,
        usage,
        capped,
    }
}

/// Conventions, 7: a workload is never admissible when, with every queue empty, no flavor
/// assignment fits it: a resource no flavor of its ClusterQueue covers, or more than the
/// ClusterQueue could ever get (nominal quota, borrowing limit, what the cohort lends).
fn never_admissible(world: &World) -> Vec<Option<NoFitReason>> {
    never::findings(world, false)
        .into_iter()
        .map(|f| f.first().map(never::Finding::reason))
        .collect()
}

/// Per resource, a quantity as some workload writes it, so that amounts print in the
/// scenario's spelling (`64Gi`, not bytes); zero for a resource no workload asks for.
fn spellings(world: &World) -> Vec<crate::profile::Quantity> {
    (0..world.resources.len())
        .map(|r| {
            world
                .workloads
                .iter()
                .find_map(|w| w.pod_sets.iter().find_map(|p| p.spelling.get(&r)))
                .copied()
                .unwrap_or_else(crate::profile::Quantity::zero)
        })
        .collect()
}

/// Each ClusterQueue's usage that is not zero, `resource used/nominal`, per flavor.
fn usage_lines(sim: &Sim<'_>, spelling: &[crate::profile::Quantity]) -> Vec<(String, String)> {
    let world = sim.world;
    let mut out = Vec::new();
    for (i, cq) in world.cqs.iter().enumerate() {
        let mut parts = Vec::new();
        for g in &cq.groups {
            for &f in &g.flavors {
                for &r in &g.resources {
                    let fr = world::Fr {
                        flavor: f,
                        resource: r,
                    };
                    let used = sim.state.usage.of(i, fr);
                    if used == 0 {
                        continue;
                    }
                    let q = cq.quota(fr);
                    let show = |n: i128| spelling[r].with_nanos(n).canonical();
                    let mut s = format!(
                        "{} {}/{} on {}",
                        world.resources[r],
                        show(used),
                        show(q.nominal),
                        world.flavors[f].name
                    );
                    if used > q.nominal {
                        let _ = write!(s, " ({} borrowed)", show(used - q.nominal));
                    }
                    parts.push(s);
                }
            }
        }
        if !parts.is_empty() {
            out.push((cq.name.clone(), parts.join(", ")));
        }
    }
    out
}
