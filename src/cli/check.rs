//! `raykueue check`: every diagnostic of one or more profiles (a fleet: of it and each of its
//! members), nothing generated.

use super::{ErrorFormat, exit, print_diagnostics, resolve_profile};
use crate::compile;
use clap::Args;

#[derive(Args, Debug)]
pub(super) struct CheckCommand {
    #[arg(long, short, help = crate::input::resolve::PROFILE_HELP)]
    profile: Option<String>,
    /// More profiles to check, each like --profile: how pre-commit's `raykueue-check` hook
    /// passes the changed files.
    #[arg(value_name = "PROFILE", required_unless_present = "profile")]
    profiles: Vec<String>,
    /// Treat warnings as errors (exit 1 when there are any).
    #[arg(long)]
    deny_warnings: bool,
    /// A live cluster's state (`kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`):
    /// also report where its queue objects differ from what the profile compiles to.
    #[arg(long)]
    state: Option<String>,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

impl CheckCommand {
    /// Every profile is checked, whatever the ones before it found; the exit code is the worst
    /// (2 for a profile that cannot be read, then 1 for an invalid one).
    pub(super) fn run(self) -> u8 {
        let mut worst = exit::OK;
        for arg in self.profile.iter().chain(&self.profiles) {
            worst = worst.max(self.one(arg));
        }
        worst
    }

    fn one(&self, arg: &str) -> u8 {
        let resolved = match resolve_profile(arg, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
        // A fleet is checked whole; drift compares one cluster's profile.
        let (command, fleet_ok) = if self.state.is_some() {
            ("raykueue check --state", false)
        } else {
            ("raykueue check", true)
        };
        if let Err(code) = super::profile_kind(&resolved, command, fleet_ok, self.error_format) {
            return code;
        }
        // The output is validated too (not written): a profile that checks clean generates.
        let diags = if let Some(state) = &self.state {
            match crate::live::check(&resolved, state, self.deny_warnings) {
                Ok(d) => d,
                Err(m) => return super::print_error(&m, self.error_format),
            }
        } else if crate::fleet::is_fleet(&resolved) {
            crate::fleet::diagnostics(&resolved, self.deny_warnings)
        } else {
            compile::diagnostics(&resolved, self.deny_warnings)
        };
        print_diagnostics(&diags, self.error_format);
        let failing = diags.iter().any(|d| d.is_error() || self.deny_warnings);
        if failing { exit::INVALID } else { exit::OK }
    }
}
