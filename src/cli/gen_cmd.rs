//! `raykueue gen`: the platform stream on stdout, the bundle tree (`--out`), or a staleness
//! check of a committed tree (`--check`).

use super::{ErrorFormat, exit, print_diagnostics, print_error, resolve_profile, write_stdout};
use crate::compile;
use crate::output::emit;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(super) struct GenCommand {
    #[arg(long, short, help = crate::input::resolve::PROFILE_HELP)]
    profile: String,
    /// Write the whole bundle into this directory (replacing only raykueue's own files).
    #[arg(long, value_name = "DIR", conflicts_with = "check")]
    out: Option<PathBuf>,
    /// Compare the bundle with this directory; print a diff; exit 1 when it is stale.
    #[arg(long, value_name = "DIR")]
    check: Option<PathBuf>,
    /// Which part to print on stdout.
    #[arg(long, value_enum, default_value_t = Part::Platform)]
    only: Part,
    /// Treat warnings as errors (exit 1 and write nothing when there are any).
    #[arg(long)]
    deny_warnings: bool,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

/// A part of the bundle that can be printed as one stream.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Part {
    /// Namespace, service account, flavors, priority classes, cluster and local queues.
    Platform,
    /// RayJobs, RayServices, RayClusters and their ConfigMaps.
    Workloads,
}

impl Part {
    fn prefix(self) -> &'static str {
        match self {
            Part::Platform => "platform/",
            Part::Workloads => "workloads/",
        }
    }
}

impl GenCommand {
    pub(super) fn run(self) -> u8 {
        let resolved = match resolve_profile(&self.profile, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
        let Some(dir) = self.check.as_ref().or(self.out.as_ref()) else {
            // No tree: the stream, built without the scripts and summary it does not carry.
            return match compile::stream(&resolved, self.deny_warnings, self.only.prefix()) {
                Ok((stream, warnings)) => {
                    print_diagnostics(&warnings, self.error_format);
                    write_stdout(&stream)
                }
                Err(diags) => {
                    print_diagnostics(&diags, self.error_format);
                    exit::INVALID
                }
            };
        };
        let compiled = match compile::compile(&resolved, self.deny_warnings) {
            Ok(c) => c,
            Err(diags) => {
                print_diagnostics(&diags, self.error_format);
                return exit::INVALID;
            }
        };
        print_diagnostics(&compiled.warnings, self.error_format);
        let bundle = &compiled.bundle;
        if self.check.is_some() {
            return match emit::check_tree(bundle, dir) {
                Ok(report) if report.is_clean() => exit::OK,
                Ok(report) => {
                    let _ = write_stdout(&report.diff);
                    let mut err = std::io::stderr();
                    let _ = writeln!(
                        err,
                        "{} is stale: {} changed, {} missing, {} orphaned; run `raykueue gen --profile {} --out {}`",
                        dir.display(),
                        report.stale.len(),
                        report.missing.len(),
                        report.orphaned.len(),
                        self.profile,
                        dir.display()
                    );
                    exit::INVALID
                }
                Err(e) => print_error(
                    &format!("cannot check {}: {e}", dir.display()),
                    self.error_format,
                ),
            };
        }
        match emit::write_tree(bundle, dir) {
            Ok(s) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "wrote {}: {} written, {} unchanged, {} removed",
                    dir.display(),
                    s.written,
                    s.unchanged,
                    s.removed
                );
                exit::OK
            }
            Err(e) => print_error(
                &format!("cannot write {}: {e}", dir.display()),
                self.error_format,
            ),
        }
    }
}
