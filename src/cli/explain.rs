//! `raykueue explain --profile P --state state.yaml [WORKLOAD…]`: why each pending Workload of
//! a live cluster's snapshot waits, in Kueue's terms (human, or one JSON document).

use super::{ErrorFormat, exit, print_diagnostics, print_error, resolve_profile, write_stdout};
use crate::compile;
use crate::input::state;
use clap::{Args, ValueEnum};

#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub(super) enum Output {
    /// One block per Workload: queue, position, asks, blockers, what would unblock it.
    #[default]
    Human,
    /// A JSON array, one object per Workload (`docs/live-state.md`).
    Json,
}

#[derive(Args, Debug)]
pub(super) struct ExplainCommand {
    #[arg(long, short, help = crate::input::resolve::PROFILE_HELP)]
    profile: String,
    /// The cluster's state: `kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`
    /// (a file, a multi-document stream, or a folder of them).
    #[arg(long)]
    state: String,
    /// Workloads to explain (`namespace/name` or `name`); every pending one when none.
    #[arg(value_name = "WORKLOAD")]
    workloads: Vec<String>,
    #[arg(long, value_enum, default_value_t)]
    output: Output,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

impl ExplainCommand {
    pub(super) fn run(self) -> u8 {
        let resolved = match resolve_profile(&self.profile, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let (typed, diags) = compile::check_profile(&resolved);
        let errors: Vec<_> = diags
            .into_iter()
            .filter(crate::base::diagnostic::Diagnostic::is_error)
            .collect();
        let Some((_, profile)) = typed.filter(|_| errors.is_empty()) else {
            print_diagnostics(&errors, self.error_format);
            return exit::INVALID;
        };
        let live = match read_state(&self.state, self.error_format) {
            Ok(s) => s,
            Err(code) => return code,
        };
        let (list, diags) = crate::live::explain(&profile, &live, &self.workloads);
        print_diagnostics(&diags, self.error_format);
        if diags
            .iter()
            .any(crate::base::diagnostic::Diagnostic::is_error)
        {
            return exit::INVALID;
        }
        let text = match self.output {
            Output::Human => crate::simulate::live::render_human(&list),
            Output::Json => super::pretty_json_list(&list) + "\n",
        };
        let code = write_stdout(&text);
        // The process ends here: freeing a snapshot's objects one by one (600,000 nodes for
        // 10,000 Workloads) and the explanations would only delay the exit.
        std::mem::forget((live, list, text));
        code
    }
}

/// A live snapshot read and checked against the CRDs, or the exit code once its errors are
/// printed (`explain`, `simulate --state`).
pub(super) fn read_state(path: &str, format: ErrorFormat) -> Result<state::LiveState, u8> {
    let live = match state::read(path) {
        Ok(s) => s,
        Err(state::ReadError::Io(m)) => return Err(print_error(&m, format)),
        Err(state::ReadError::Invalid(d)) => {
            print_diagnostics(&d, format);
            return Err(exit::INVALID);
        }
    };
    let invalid: Vec<_> = crate::live::validate_state(&live)
        .into_iter()
        .filter(crate::base::diagnostic::Diagnostic::is_error)
        .collect();
    if invalid.is_empty() {
        Ok(live)
    } else {
        print_diagnostics(&invalid, format);
        Err(exit::INVALID)
    }
}
