//! `raykueue explain --profile P --state state.yaml [WORKLOAD…]`: why each pending Workload of
//! a live cluster's snapshot waits, in Kueue's terms (human, or one JSON document).

use super::{
    ErrorFormat, exit, print_diagnostics, print_error, resolve_profile, typed_profile, write_stdout,
};
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
        // The profile is compiled while a large snapshot is read: neither needs the other. A
        // small snapshot is read after the profile, and not at all when the profile fails.
        let compile = || {
            let resolved = resolve_profile(&self.profile, self.error_format)?;
            super::profile_kind(&resolved, "raykueue explain", false, self.error_format)?;
            typed_profile(&resolved, self.error_format)
        };
        let (profile, live) = if large(&self.state) {
            let (p, l) = crate::base::par::join(true, compile, || load_state(&self.state));
            (p, Some(l))
        } else {
            (compile(), None)
        };
        let profile = match profile {
            Ok(p) => p,
            Err(code) => return code,
        };
        let live = match live.unwrap_or_else(|| load_state(&self.state)) {
            Ok(s) => s,
            Err(e) => return report_state(e, self.error_format),
        };
        let (list, diags) = crate::live::explain(&profile, &live, &self.workloads);
        print_diagnostics(&diags, self.error_format);
        if diags
            .iter()
            .any(crate::base::diagnostic::Diagnostic::is_error)
        {
            return exit::INVALID;
        }
        let code = match self.output {
            Output::Human => write_stdout(&crate::simulate::live::render_human(&list)),
            Output::Json => super::write_stdout_json_list(&list),
        };
        // The process ends here: freeing a snapshot's objects one by one (600,000 nodes for
        // 10,000 Workloads) and the explanations would only delay the exit.
        std::mem::forget((live, list));
        code
    }
}

/// A live snapshot read and checked against the CRDs, or the exit code once its errors are
/// printed (`explain`, `simulate --state`).
pub(super) fn read_state(path: &str, format: ErrorFormat) -> Result<state::LiveState, u8> {
    load_state(path).map_err(|e| report_state(e, format))
}

/// A live snapshot read and checked against the CRDs (its findings, errors only, are the
/// `Invalid` of a snapshot that does not pass); nothing printed.
pub(super) fn load_state(path: &str) -> Result<state::LiveState, state::ReadError> {
    let live = state::read(path)?;
    let invalid: Vec<_> = crate::live::validate_state(&live)
        .into_iter()
        .filter(crate::base::diagnostic::Diagnostic::is_error)
        .collect();
    if invalid.is_empty() {
        Ok(live)
    } else {
        Err(state::ReadError::Invalid(invalid))
    }
}

/// Print why a snapshot was not read; the exit code.
pub(super) fn report_state(e: state::ReadError, format: ErrorFormat) -> u8 {
    match e {
        state::ReadError::Io(m) => print_error(&m, format),
        state::ReadError::Invalid(d) => {
            print_diagnostics(&d, format);
            exit::INVALID
        }
    }
}

/// Whether the snapshot at `path` is worth a second core beside the profile's compile: a
/// file of 1 MiB or more (10,000 Workloads are 7 MB), or a folder.
fn large(path: &str) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_dir() || m.len() >= 1 << 20)
}
