//! The command line: one small file per subcommand. Exit codes (docs/cli.md): 0 ok, 1 invalid
//! profile (or stale tree with `--check`), 2 usage or I/O error.

use crate::base::codes;
mod check;
mod completions;
mod diff;
mod explain;
mod gen_cmd;
mod init;
mod man;
pub(crate) mod reference;
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
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
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
pub(crate) mod exit {
    pub(crate) const OK: u8 = 0;
    pub(crate) const INVALID: u8 = 1;
    pub(crate) const ERROR: u8 = 2;
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

/// Refuse a file of another kind given as `--profile` to `command` (`crate::input::kind`):
/// its one located error printed, `Err(exit::INVALID)`.
pub(crate) fn profile_kind(
    resolved: &Resolved,
    command: &str,
    fleet_ok: bool,
    format: ErrorFormat,
) -> Result<(), u8> {
    match crate::input::kind::not_a_profile(resolved, command, fleet_ok) {
        None => Ok(()),
        Some(d) => {
            print_diagnostics(&[d], format);
            Err(exit::INVALID)
        }
    }
}

/// The resolved profile, typed; or `Err(exit::INVALID)` once its errors are printed. Its
/// warnings are `check`'s business: the commands that run on a profile (`explain`,
/// `simulate`) need only that it has no errors.
pub(crate) fn typed_profile(
    resolved: &Resolved,
    format: ErrorFormat,
) -> Result<crate::profile::Profile, u8> {
    let (typed, diags) = crate::compile::check_profile(resolved);
    let errors: Vec<_> = diags.into_iter().filter(Diagnostic::is_error).collect();
    let Some((_, profile)) = typed.filter(|_| errors.is_empty()) else {
        print_diagnostics(&errors, format);
        return Err(exit::INVALID);
    };
    Ok(profile)
}

/// `items` as `serde_json::to_string_pretty` writes the list, byte for byte, then a line
/// break: each item written on its own and on all cores when there are many (10,000
/// explanations are 33 MB of JSON), and the items written out one after the other, never
/// joined into one string. An item of a pretty list is the item written alone with every line
/// indented once.
pub(crate) fn write_json_list<T: serde::Serialize + Sync>(
    out: &mut impl Write,
    items: &[T],
) -> std::io::Result<()> {
    if items.is_empty() {
        return out.write_all(b"[]\n");
    }
    let wide = crate::base::par::wide(items.len());
    let parts = crate::base::par::map(wide, items, |item| {
        let text = serde_json::to_string_pretty(item).unwrap_or_default();
        let mut out = String::with_capacity(text.len() + text.len() / 8);
        for (i, line) in text.split('\n').enumerate() {
            out.push_str(if i == 0 { "  " } else { "\n  " });
            out.push_str(line);
        }
        out
    });
    out.write_all(b"[\n")?;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.write_all(b",\n")?;
        }
        out.write_all(part.as_bytes())?;
    }
    out.write_all(b"\n]\n")
}

/// `write_json_list` to stdout.
pub(crate) fn write_stdout_json_list<T: serde::Serialize + Sync>(items: &[T]) -> u8 {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    stdout_result(write_json_list(&mut out, items).and_then(|()| out.flush()))
}

/// Write to stdout; a closed pipe (`| head`) is not an error worth a panic.
pub(crate) fn write_stdout(text: &str) -> u8 {
    let mut out = std::io::stdout().lock();
    stdout_result(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

fn stdout_result(written: std::io::Result<()>) -> u8 {
    match written {
        Ok(()) => exit::OK,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::OK,
        Err(e) => print_error(&format!("cannot write to stdout: {e}"), ErrorFormat::Human),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    /// The list written item by item (on all cores past 200 items) is the list serde_json
    /// writes whole: nested and empty collections, strings with line breaks and quotes.
    #[test]
    fn a_pretty_list_written_in_parts_is_serde_jsons() {
        let item = |i: usize| {
            json!({"workload": format!("ray/job-{i}"), "ahead": [], "asks": [{"a": {}, "b": [1, [2, {}]]}],
                "message": "line\nbreak \"quoted\"", "n": i, "none": null})
        };
        for n in [0, 1, 3, 450] {
            let items: Vec<Value> = (0..n).map(item).collect();
            let mut out = Vec::new();
            super::write_json_list(&mut out, &items).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string_pretty(&items).unwrap() + "\n",
                "{n} items"
            );
        }
    }
}
