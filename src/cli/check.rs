//! `raykueue check`: every diagnostic of a profile, or of a fleet and each of its members,
//! nothing generated.

use super::{ErrorFormat, exit, print_diagnostics, resolve_profile};
use crate::compile;
use clap::Args;

#[derive(Args, Debug)]
pub(super) struct CheckCommand {
    #[arg(long, short, help = crate::input::resolve::PROFILE_HELP)]
    profile: String,
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
    pub(super) fn run(self) -> u8 {
        let resolved = match resolve_profile(&self.profile, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
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
