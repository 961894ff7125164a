//! `raykueue gen`: the platform stream on stdout, the bundle tree (`--out`), or a staleness
//! check of a committed tree (`--check`).

use super::{ErrorFormat, exit, print_diagnostics, print_error, resolve_profile, write_stdout};
use crate::compile;
use crate::model;
use crate::output::emit;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::PathBuf;

// `--profile` and `--only` also come from the environment, as Argo CD's repo-server hands an
// Application's `plugin.env` (PROFILE, ONLY) to the raykueue plugin: prefixed `ARGOCD_ENV_`,
// never through a shell (argo-cd@v3.5.1 `cmpserver/plugin/plugin.go` `runCommand` execs the
// command as it is), so `argocd/plugin.yaml` can run `raykueue gen` on an image with no shell.
#[derive(Args, Debug)]
pub(super) struct GenCommand {
    #[arg(long, short, env = "ARGOCD_ENV_PROFILE", hide_env_values = true, help = crate::input::resolve::PROFILE_HELP)]
    profile: String,
    /// Write the whole bundle into this directory (replacing only raykueue's own files: one
    /// it would write that exists and is not in DIR/.raykueue-files is refused, exit 2).
    #[arg(long, value_name = "DIR", conflicts_with = "check")]
    out: Option<PathBuf>,
    /// With --out: also replace files in DIR that raykueue did not write.
    #[arg(long, requires = "out")]
    force: bool,
    /// Compare the bundle with this directory; print a diff; exit 1 when it is stale.
    #[arg(long, value_name = "DIR")]
    check: Option<PathBuf>,
    /// Which part to print on stdout.
    #[arg(long, value_enum, env = "ARGOCD_ENV_ONLY", hide_env_values = true, default_value_t = Part::Platform)]
    only: Part,
    /// With a fleet (`kind: Fleet`) and no `--out`: print this member's stream (`manager` or a
    /// worker's name).
    #[arg(long, value_name = "NAME")]
    cluster: Option<String>,
    /// Treat warnings as errors (exit 1 and write nothing when there are any).
    #[arg(long)]
    deny_warnings: bool,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

/// A part of the bundle that can be printed as one stream (`model::Part`, whose names these
/// are: a test parses each).
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
enum Part {
    /// Namespace, service account, flavors, priority classes, cluster and local queues.
    Platform,
    /// RayJobs, RayServices, RayClusters and their ConfigMaps.
    Workloads,
    /// What GitOps syncs of the workloads: RayServices and RayClusters, no RayJob.
    GitopsWorkloads,
    /// The Argo CD chart repository Secret and Applications (`gitops/argocd/`).
    Argocd,
    /// The Argo CD root Application, applied once (`gitops/argocd-root.yaml`).
    ArgocdRoot,
    /// ServiceMonitors, PodMonitors, PrometheusRule and the dashboard ConfigMap (`monitoring/`).
    Monitoring,
}

impl From<Part> for model::Part {
    fn from(p: Part) -> Self {
        match p {
            Part::Platform => model::Part::Platform,
            Part::Workloads => model::Part::Workloads,
            Part::GitopsWorkloads => model::Part::GitopsWorkloads,
            Part::Argocd => model::Part::ArgoCd,
            Part::ArgocdRoot => model::Part::ArgoCdRoot,
            Part::Monitoring => model::Part::Monitoring,
        }
    }
}

impl GenCommand {
    /// A fleet without `--out`: one member's stream, which `--cluster` names.
    fn fleet_stream(&self, resolved: &crate::input::resolve::Resolved) -> u8 {
        let Some(cluster) = &self.cluster else {
            return print_error(
                &format!(
                    "{} is a fleet: one stream per cluster; give --out DIR for every member's bundle, or --cluster NAME (manager or a worker) for one member's stream",
                    self.profile
                ),
                self.error_format,
            );
        };
        match crate::fleet::stream(resolved, self.deny_warnings, cluster, self.only.into()) {
            Ok((stream, warnings)) => {
                print_diagnostics(&warnings, self.error_format);
                write_stdout(&stream)
            }
            Err(crate::fleet::StreamError::NoMember(names)) => print_error(
                &format!(
                    "the fleet has no member `{cluster}` (members: {})",
                    names.join(", ")
                ),
                self.error_format,
            ),
            Err(crate::fleet::StreamError::Invalid(diags)) => {
                print_diagnostics(&diags, self.error_format);
                exit::INVALID
            }
        }
    }

    pub(super) fn run(self) -> u8 {
        let resolved = match resolve_profile(&self.profile, self.error_format) {
            Ok(r) => r,
            Err(code) => return code,
        };
        if let Err(code) = super::profile_kind(&resolved, "raykueue gen", true, self.error_format) {
            return code;
        }
        let is_fleet = crate::fleet::is_fleet(&resolved);
        if self.cluster.is_some() && !is_fleet {
            return print_error(
                &format!(
                    "--cluster picks a member of a fleet, and {} is a profile",
                    self.profile
                ),
                self.error_format,
            );
        }
        let Some(dir) = self.check.as_ref().or(self.out.as_ref()) else {
            if is_fleet {
                return self.fleet_stream(&resolved);
            }
            // No tree: the stream, built without the scripts and summary it does not carry.
            return match compile::stream(&resolved, self.deny_warnings, self.only.into()) {
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
        let compiled = if is_fleet {
            crate::fleet::compile(&resolved, self.deny_warnings).map(|c| (c.bundle, c.warnings))
        } else {
            compile::compile(&resolved, self.deny_warnings).map(|c| (c.bundle, c.warnings))
        };
        let (bundle, warnings) = match compiled {
            Ok(c) => c,
            Err(diags) => {
                print_diagnostics(&diags, self.error_format);
                return exit::INVALID;
            }
        };
        print_diagnostics(&warnings, self.error_format);
        let bundle = &bundle;
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
        match emit::write_tree(bundle, dir, self.force) {
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
            Err(emit::WriteError::NotOwned(names)) => {
                let paths: Vec<String> = names
                    .iter()
                    .map(|n| dir.join(n).display().to_string())
                    .collect();
                print_error(
                    &format!(
                        "refusing to replace files raykueue did not write (they are not in {}; nothing was written; pass --force to replace them): {}",
                        dir.join(emit::OWNED_LIST).display(),
                        paths.join(", ")
                    ),
                    self.error_format,
                )
            }
            Err(e) => print_error(
                &format!("cannot write {}: {e}", dir.display()),
                self.error_format,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Part, model};
    use clap::ValueEnum;

    /// The plugin's Applications name parts by `model::Part::name`: each must be a value of
    /// `--only` that selects that part.
    #[test]
    fn every_part_name_is_an_only_value() {
        for part in model::Part::ALL {
            let parsed = Part::from_str(part.name(), false).expect("a value of --only");
            assert_eq!(model::Part::from(parsed), part);
        }
        assert_eq!(Part::value_variants().len(), model::Part::ALL.len());
    }
}
