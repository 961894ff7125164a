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
    /// Scenario YAML file: the workloads submitted and when.
    #[arg(
        long,
        short,
        required_unless_present = "state",
        conflicts_with = "state"
    )]
    scenario: Option<String>,
    /// Start from a live cluster's snapshot instead (`kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`):
    /// print when each pending Workload would be admitted.
    #[arg(long)]
    state: Option<String>,
    /// With `--state`: seconds a Workload runs once admitted when its
    /// `spec.maximumExecutionTimeSeconds` is not set (Kueue knows no run time).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 3600,
        requires = "state"
    )]
    run_time: u64,
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
        let (list, diags) = crate::live::forecast(profile, &live, self.run_time, self.until);
        print_diagnostics(&diags, self.error_format);
        let assumption = format!(
            "a Workload runs for its spec.maximumExecutionTimeSeconds, else {}s (--run-time); admitted ones have run since their QuotaReserved time; times count from the snapshot's latest timestamp",
            self.run_time
        );
        let text = match self.output {
            Output::Json => {
                let doc = serde_json::json!({"assumption": assumption, "forecast": list});
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            }
            Output::Human => crate::simulate::live::render_forecast(&list, &assumption),
        };
        write_stdout(&text)
    }

    pub(super) fn run(self) -> u8 {
        let resolved = match resolve_profile(&self.profile, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
        if crate::fleet::is_fleet(&resolved) {
            return self.run_fleet(&resolved);
        }
        // Warnings of the profile are `check`'s business; errors make the simulation moot.
        let (typed, diags) = compile::check_profile(&resolved);
        let errors: Vec<_> = diags
            .into_iter()
            .filter(crate::base::diagnostic::Diagnostic::is_error)
            .collect();
        let Some((_, profile)) = typed.filter(|_| errors.is_empty()) else {
            print_diagnostics(&errors, self.error_format);
            return exit::INVALID;
        };
        if let Some(state) = &self.state {
            return self.run_state(&profile, state);
        }
        let Some(path) = &self.scenario else {
            return exit::ERROR;
        };
        let (loaded, scn) = match scenario::read(path) {
            Ok(s) => s,
            Err(scenario::ReadError::Io(msg)) => return print_error(&msg, self.error_format),
            Err(scenario::ReadError::Invalid(d)) => {
                print_diagnostics(&d, self.error_format);
                return exit::INVALID;
            }
        };
        let problems = scenario::against_profile(&profile, &loaded, &scn);
        if !problems.is_empty() {
            print_diagnostics(&problems, self.error_format);
            return exit::INVALID;
        }
        let world = world::build(&profile, &scn);
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
