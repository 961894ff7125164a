//! `raykueue simulate`: run a scenario of submissions against a profile's queues, offline,
//! and print what Kueue would do (timeline table or JSON lines).

use super::{ErrorFormat, exit, print_diagnostics, print_error, resolve_profile, write_stdout};
use crate::compile;
use crate::simulate::{self, events, scenario, world};
use clap::{Args, ValueEnum};

/// How the timeline is printed.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub(super) enum Output {
    /// A table: time, event, workload, ClusterQueue, flavors, borrowed; usage after each second.
    #[default]
    Human,
    /// One JSON object per event and line (the contract in `docs/simulate.md`).
    Json,
}

#[derive(Args, Debug)]
pub(super) struct SimulateCommand {
    #[arg(long, short, help = crate::input::resolve::PROFILE_HELP)]
    profile: String,
    /// Scenario YAML file: the workloads submitted and when. With `--state`, submitted on top
    /// of the snapshot, `submitAt` counted from the snapshot's time.
    #[arg(long, short, required_unless_present = "state")]
    scenario: Option<String>,
    /// Start from a live cluster's snapshot instead (`kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`):
    /// print when each pending Workload would be admitted.
    #[arg(long)]
    state: Option<String>,
    /// With `--state`: seconds a Workload runs once admitted when neither its
    /// `spec.maximumExecutionTimeSeconds` nor its RayJob's `spec.activeDeadlineSeconds` says
    /// (Kueue knows no run time). `SECONDS` for every queue (default 3600), `QUEUE=SECONDS` for
    /// a LocalQueue (`name` or `namespace/name`) or a ClusterQueue; repeat as needed.
    #[arg(long, value_name = "[QUEUE=]SECONDS", requires = "state", value_parser = parse_run_time)]
    run_time: Vec<(Option<String>, u64)>,
    /// Instead of the timeline, print the cluster as the scenario leaves it at this second, as
    /// `kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`
    /// would (a snapshot for `--state`).
    #[arg(long, value_name = "SECONDS", conflicts_with = "state")]
    snapshot_at: Option<u64>,
    /// Timeline format.
    #[arg(long, value_enum, default_value_t)]
    output: Output,
    /// Stop after this many seconds of simulated time (workloads still admitted are listed
    /// as running in the last line).
    #[arg(long, value_name = "SECONDS")]
    until: Option<u64>,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

impl SimulateCommand {
    /// A fleet: the scenario is submitted to the manager's queues (`simulate::fleet`).
    fn run_fleet(&self, resolved: &crate::input::resolve::Resolved) -> u8 {
        let (fleet, members) = match crate::fleet::typed(resolved) {
            Ok(t) => t,
            Err(errors) => {
                print_diagnostics(&errors, self.error_format);
                return exit::INVALID;
            }
        };
        let Some(path) = &self.scenario else {
            return print_error(
                "a fleet is simulated from a scenario: give --scenario",
                self.error_format,
            );
        };
        if self.snapshot_at.is_some() {
            return print_error(
                "--snapshot-at writes one cluster's snapshot: give a member's profile, not the fleet",
                self.error_format,
            );
        }
        let (loaded, scn) = match scenario::read(path) {
            Ok(s) => s,
            Err(scenario::ReadError::Io(msg)) => return print_error(&msg, self.error_format),
            Err(scenario::ReadError::Invalid(d)) => {
                print_diagnostics(&d, self.error_format);
                return exit::INVALID;
            }
        };
        let Some(((_, manager), workers)) = members.split_first() else {
            return exit::INVALID;
        };
        let problems = scenario::against_profile(manager, &loaded, &scn);
        if !problems.is_empty() {
            print_diagnostics(&problems, self.error_format);
            return exit::INVALID;
        }
        let workers: Vec<(&str, &crate::profile::Profile)> =
            workers.iter().map(|(n, p)| (n.as_str(), p)).collect();
        let worlds = simulate::fleet::worlds(manager, &workers, &scn);
        let outcome = simulate::fleet::run(&worlds, fleet.dispatcher(), fleet.step(), self.until);
        warn_capped(&outcome.capped);
        let text = match self.output {
            Output::Json => simulate::fleet::render_json(&worlds, &outcome),
            Output::Human => simulate::fleet::render_human(&worlds, &outcome),
        };
        write_stdout(&text)
    }

    /// `--state`: the forecast of each pending Workload of a live snapshot.
    fn run_state(&self, profile: &crate::profile::Profile, path: &str) -> u8 {
        let live = match super::explain::read_state(path, self.error_format) {
            Ok(s) => s,
            Err(code) => return code,
        };
        let scn = match &self.scenario {
            None => None,
            Some(path) => match self.scenario_for(profile, path) {
                Ok((loaded, s)) => {
                    let clashes = crate::live::name_clashes(profile, &live, &loaded, &s);
                    if !clashes.is_empty() {
                        print_diagnostics(&clashes, self.error_format);
                        return exit::INVALID;
                    }
                    Some(s)
                }
                Err(code) => return code,
            },
        };
        let mut run_times = crate::live::RunTimes::flat(3600);
        for (queue, seconds) in &self.run_time {
            match queue {
                Some(q) if !names_a_queue(profile, q) => {
                    return print_error(
                        &format!(
                            "--run-time {q}={seconds}: the profile has no LocalQueue or ClusterQueue `{q}`"
                        ),
                        self.error_format,
                    );
                }
                Some(q) => {
                    run_times.per_queue.insert(q.clone(), *seconds);
                }
                None => run_times.default = *seconds,
            }
        }
        let (list, clock, diags) =
            crate::live::forecast(profile, &live, &run_times, scn.as_ref(), self.until);
        print_diagnostics(&diags, self.error_format);
        let per_queue: Vec<String> = run_times
            .per_queue
            .iter()
            .map(|(q, t)| format!(", {t}s in {q}"))
            .collect();
        let assumption = format!(
            "a Workload runs for its spec.maximumExecutionTimeSeconds, else its RayJob's spec.activeDeadlineSeconds, else {}s (--run-time){}; admitted ones have run since their Admitted time (holding quota but not admitted: all the run ahead); times count from the snapshot's latest timestamp, {}",
            run_times.default,
            per_queue.concat(),
            clock.at()
        );
        let text = match self.output {
            Output::Json => {
                let doc = serde_json::json!({"snapshotTime": clock.at(), "assumption": assumption, "forecast": list});
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            }
            Output::Human => crate::simulate::live::render_forecast(&list, &assumption),
        };
        let code = write_stdout(&text);
        // The process ends here: see `explain`.
        std::mem::forget((live, list));
        code
    }

    /// The scenario at `path`, read and checked against the profile.
    fn scenario_for(
        &self,
        profile: &crate::profile::Profile,
        path: &str,
    ) -> Result<(crate::input::load::Loaded, scenario::Scenario), u8> {
        let (loaded, scn) = match scenario::read(path) {
            Ok(s) => s,
            Err(scenario::ReadError::Io(msg)) => return Err(print_error(&msg, self.error_format)),
            Err(scenario::ReadError::Invalid(d)) => {
                print_diagnostics(&d, self.error_format);
                return Err(exit::INVALID);
            }
        };
        let problems = scenario::against_profile(profile, &loaded, &scn);
        if problems.is_empty() {
            Ok((loaded, scn))
        } else {
            print_diagnostics(&problems, self.error_format);
            Err(exit::INVALID)
        }
    }

    /// `--snapshot-at`: the profile's queue objects and the scenario's Workloads at second
    /// `at`, as one `v1` `List`.
    fn snapshot(
        &self,
        resolved: &crate::input::resolve::Resolved,
        profile: &crate::profile::Profile,
        scn: &scenario::Scenario,
        world: &world::World,
        at: u64,
    ) -> u8 {
        let objects = match compile::admitted_with_loaded(resolved, false)
            .and_then(|(admitted, _)| compile::validated_objects(&admitted))
        {
            Ok(o) => o,
            Err(d) => {
                print_diagnostics(&d, self.error_format);
                return exit::INVALID;
            }
        };
        let outcome = simulate::run(world, Some(at));
        warn_capped(&outcome.capped);
        let list =
            crate::live::snapshot(profile, scn, world, &outcome.events, &objects.platform, at);
        match crate::base::yaml::to_yaml(&list) {
            Ok(text) => write_stdout(&text),
            Err(d) => {
                print_diagnostics(&[d], self.error_format);
                exit::ERROR
            }
        }
    }

    pub(super) fn run(self) -> u8 {
        let resolved = match resolve_profile(&self.profile, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
        if crate::fleet::is_fleet(&resolved) {
            return self.run_fleet(&resolved);
        }
        let profile = match super::typed_profile(&resolved, self.error_format) {
            Ok(p) => p,
            Err(code) => return code,
        };
        if let Some(state) = &self.state {
            return self.run_state(&profile, state);
        }
        let Some(path) = &self.scenario else {
            return exit::ERROR;
        };
        let scn = match self.scenario_for(&profile, path) {
            Ok((_, s)) => s,
            Err(code) => return code,
        };
        let world = world::build(&profile, &scn);
        if let Some(at) = self.snapshot_at {
            return self.snapshot(&resolved, &profile, &scn, &world, at);
        }
        let outcome = match self.output {
            Output::Json => simulate::run(&world, self.until),
            Output::Human => simulate::run_with_usage(&world, self.until),
        };
        warn_capped(&outcome.capped);
        let text = match self.output {
            Output::Json => events::render_json(&world, &outcome.events),
            Output::Human => events::render_human(&world, &outcome.events, &outcome.usage),
        };
        write_stdout(&text)
    }
}

/// Whether `name` is a LocalQueue (`name` or `namespace/name`) or a ClusterQueue of the
/// profile: a `--run-time` for anything else would silently apply to nothing.
fn names_a_queue(profile: &crate::profile::Profile, name: &str) -> bool {
    let Some(q) = profile.queues.as_ref() else {
        return false;
    };
    q.cluster_queues.iter().any(|c| c.name.as_str() == name)
        || q.local_queues.iter().any(|l| {
            l.name.as_str() == name || format!("{}/{}", l.namespace_in(profile), l.name) == name
        })
}

/// `--run-time`: `SECONDS` or `QUEUE=SECONDS`.
fn parse_run_time(text: &str) -> Result<(Option<String>, u64), String> {
    let (queue, seconds) = match text.rsplit_once('=') {
        Some((q, t)) if !q.is_empty() => (Some(q.to_owned()), t),
        Some(_) => return Err("give the queue before `=`: `team-a=600`".to_owned()),
        None => (None, text),
    };
    let seconds: u64 = seconds
        .parse()
        .map_err(|_| format!("`{seconds}` is not a whole number of seconds"))?;
    if seconds == 0 {
        return Err("a run time is at least 1 second".to_owned());
    }
    Ok((queue, seconds))
}

/// The seconds at which the cycles were stopped (`Sim::settle`), said once on stderr.
fn warn_capped(capped: &[u64]) {
    if let Some(first) = capped.first() {
        eprintln!(
            "warning: at {} second(s) (first at t={first}s) preemptions kept chasing each other; \
             the simulator stopped cycling there (Kueue would keep retrying)",
            capped.len()
        );
    }
}
