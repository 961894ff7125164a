//! The command line: one small file per subcommand. Exit codes follow the SPEC: 0 ok,
//! 1 invalid profile (or stale tree with `--check`), 2 usage or I/O error.

use crate::base::codes;
mod check;
mod completions;
mod diff;
mod explain;
mod gen_cmd;
mod init;
mod man;
pub mod reference;
mod schema;
pub(crate) mod semantic_diff;
mod simulate;
mod validate;

use crate::base::diagnostic::{self, Diagnostic};
use crate::input::resolve::{self, ResolveError, Resolved};
use clap::{Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "raykueue",
    version,
    about = "Compile a cluster profile into Kueue + KubeRay manifests and the scripts that provision AKS, GKE, EKS or ACK",
    long_about = "raykueue compiles one typed profile (YAML) into Kubernetes manifests for Kueue \
                  and KubeRay and the cloud CLI + Helm scripts that provision the cluster on AKS, \
                  GKE, EKS or ACK, checking on the way what the cluster would reject or leave \
                  pending forever."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Generate the platform stream (stdout), the bundle tree (--out) or compare (--check).
    Gen(gen_cmd::GenCommand),
    /// Validate a profile; diagnostics on stderr.
    Check(check::CheckCommand),
    /// Show what changes in the cluster between two profiles (Markdown).
    Diff(diff::DiffCommand),
    /// Print the profile JSON Schema (`--fleet`: the fleet file's).
    Schema(schema::SchemaCommand),
    /// Validate Kubernetes manifests (files, or - for stdin) against the Kueue, KubeRay and
    /// Kubernetes schemas, CEL rules included.
    Validate(validate::ValidateCommand),
    /// Write an editable starting point into DIR: a shipped profile, its JSON Schema, example
    /// Ray programs and a README with the next commands.
    Init(init::InitCommand),
    /// Print a shell completion script (bash, zsh, fish, powershell).
    Completions(completions::CompletionsCommand),
    /// Simulate Kueue admission of a scenario's workloads on the profile's queues, offline.
    Simulate(simulate::SimulateCommand),
    /// Explain why each pending Workload of a live cluster's snapshot waits, and what would
    /// unblock it.
    Explain(explain::ExplainCommand),
    /// Write the man pages (raykueue.1, raykueue-gen.1, …) into DIR, or print raykueue.1.
    Man(man::ManCommand),
}

/// How diagnostics are printed.
#[derive(Clone, Copy, Debug, Default, ValueEnum, PartialEq, Eq)]
pub(crate) enum ErrorFormat {
    /// Source excerpts with `file:line:column`.
    #[default]
    Human,
    /// One JSON object per line.
    Json,
}

/// Exit codes of every subcommand.
pub mod exit {
    pub(crate) const OK: u8 = 0;
    pub(crate) const INVALID: u8 = 1;
    pub const ERROR: u8 = 2;
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::ERROR
            } else {
                exit::OK
            });
        }
    };
    let code = match cli.command {
        Command::Gen(c) => c.run(),
        Command::Check(c) => c.run(),
        Command::Schema(c) => c.run(),
        Command::Diff(c) => c.run(),
        Command::Validate(c) => c.run(),
        Command::Init(c) => c.run(),
        Command::Completions(c) => c.run(),
        Command::Simulate(c) => c.run(),
        Command::Explain(c) => c.run(),
        Command::Man(c) => c.run(),
    };
    ExitCode::from(code)
}

/// Print diagnostics to stderr in the chosen format.
pub(crate) fn print_diagnostics(diags: &[Diagnostic], format: ErrorFormat) {
    if diags.is_empty() {
        return;
    }
    let text = match format {
        ErrorFormat::Human => diagnostic::render_human(diags),
        ErrorFormat::Json => diagnostic::render_json(diags),
    };
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Print an I/O or usage error (exit 2).
pub(crate) fn print_error(message: &str, format: ErrorFormat) -> u8 {
    let d = Diagnostic::new(&codes::USAGE, message.to_owned());
    print_diagnostics(&[d], format);
    exit::ERROR
}

/// Resolve `--profile`, reporting failures; `Err` carries the exit code.
pub(crate) fn resolve_profile(arg: &str, format: ErrorFormat) -> Result<Resolved, u8> {
    match resolve::resolve(arg) {
        Ok(r) => Ok(r),
        Err(ResolveError::Io(msg)) => Err(print_error(&msg, format)),
        Err(ResolveError::Invalid(d)) => {
            print_diagnostics(&[d], format);
            Err(exit::INVALID)
        }
    }
}

/// Write to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub(crate) fn write_stdout(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => print_error(&format!("cannot write to stdout: {e}"), ErrorFormat::Human),
    }
}
