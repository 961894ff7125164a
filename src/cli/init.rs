//! `raykueue init [--from NAME] DIR`: an editable starting point — a shipped profile with its
//! JSON Schema, the example programs its workloads run, and a README with the next commands.
//! Like `cargo init` and `helm create`, it never overwrites a file unless told to (`--force`).

use super::exit;
use crate::base::codes;
use crate::input::resolve::{SHIPPED, SHIPPED_SCRIPTS};
use clap::Args;
use std::path::{Path, PathBuf};

/// The schema file next to the profile; the shipped profiles' first line names it.
const SCHEMA_FILE: &str = "profile.schema.json";

#[derive(Args, Debug)]
pub(super) struct InitCommand {
    /// The shipped profile to start from.
    #[arg(long = "from", value_name = "NAME", default_value = "team",
          value_parser = clap::builder::PossibleValuesParser::new(SHIPPED.iter().map(|(n, _)| *n)))]
    from: String,
    /// Overwrite files that already exist in DIR.
    #[arg(long)]
    force: bool,
    /// The folder to write (created when missing; other files in it are left alone).
    dir: PathBuf,
}

impl InitCommand {
    pub(super) fn run(self) -> u8 {
        let files = match files(&self.from) {
            Ok(f) => f,
            Err(d) => {
                super::print_diagnostics(&[d], super::ErrorFormat::Human);
                return exit::ERROR;
            }
        };
        if !self.force {
            let existing: Vec<String> = files
                .iter()
                .map(|(rel, _)| self.dir.join(rel))
                .filter(|p| p.symlink_metadata().is_ok())
                .map(|p| p.display().to_string())
                .collect();
            if !existing.is_empty() {
                return super::print_error(
                    &format!(
                        "refusing to overwrite existing files (pass --force to replace them): {}",
                        existing.join(", ")
                    ),
                    super::ErrorFormat::Human,
                );
            }
        }
        for (rel, text) in &files {
            if let Err(e) = write(&self.dir.join(rel), text) {
                return super::print_error(
                    &format!("cannot write {}: {e}", self.dir.join(rel).display()),
                    super::ErrorFormat::Human,
                );
            }
        }
        eprintln!(
            "Created {} from the shipped profile `{}` ({} files); next: {}",
            self.dir.display(),
            self.from,
            files.len(),
            self.dir.join("README.md").display()
        );
        exit::OK
    }
}

/// Every file `init` writes for a shipped profile: path relative to DIR → content.
pub(super) fn files(
    from: &str,
) -> Result<Vec<(String, String)>, crate::base::diagnostic::Diagnostic> {
    let Some((_, text)) = SHIPPED.iter().find(|(n, _)| *n == from) else {
        return Err(crate::base::diagnostic::Diagnostic::new(
            &codes::USAGE,
            format!("no shipped profile named `{from}`"),
        ));
    };
    let mut out = vec![
        ("profile.yaml".to_owned(), profile_text(from, text)),
        (SCHEMA_FILE.to_owned(), crate::input::schema::schema_text()),
    ];
    out.extend(
        SHIPPED_SCRIPTS
            .iter()
            .map(|(rel, text)| ((*rel).to_owned(), (*text).to_owned())),
    );
    let resolved = crate::input::resolve::Resolved {
        source: crate::base::source::Source::new(format!("profiles/{from}.yaml"), *text),
        base_dir: None,
    };
    let profile = crate::compile::check_profile(&resolved).0.map(|(_, p)| p);
    let scenario = profile.as_ref().and_then(starter_scenario);
    out.push((
        "README.md".to_owned(),
        readme(from, profile.as_ref(), scenario.is_some())?,
    ));
    if let Some(scenario) = scenario {
        out.push(("scenario.yaml".to_owned(), scenario));
    }
    Ok(out)
}

/// A scenario to start `simulate` from: each workload the profile queues through Kueue,
/// submitted a minute after the one before and running half an hour, so the README's
/// `simulate -s scenario.yaml` runs as written. None when the profile queues nothing.
fn starter_scenario(profile: &crate::profile::Profile) -> Option<String> {
    let mut lines = vec![
        "# A what-if for `raykueue simulate -p profile.yaml -s scenario.yaml`: each queued workload".to_owned(),
        "# of profile.yaml (`from`: its pod sets as Kueue counts them), one a minute, each running".to_owned(),
        "# 30 minutes once admitted. Edit the times, repeat workloads, add `podSets` of your own".to_owned(),
        "# (docs/simulate.md in the raykueue repository has the format).".to_owned(),
        "apiVersion: raykueue.io/v1alpha1".to_owned(),
        "kind: Scenario".to_owned(),
        format!("name: {}-starter", profile.name.as_str()),
        "workloads:".to_owned(),
    ];
    let queued: Vec<(&str, &str)> = profile
        .workloads
        .iter()
        .filter_map(|w| Some((w.name.as_str(), w.admission(profile).queue()?)))
        .collect();
    if queued.is_empty() {
        return None;
    }
    for (i, (name, queue)) in queued.iter().enumerate() {
        lines.push(format!(
            "  - {{name: {name}-1, from: {name}, queue: {queue}, submitAt: {}, runFor: 1800}}",
            60 * i
        ));
    }
    Some(lines.join("\n") + "\n")
}

/// The shipped text, with a line saying where it came from under the schema line. The schema
/// line points at the schema written beside it (a shipped example's points one folder up).
fn profile_text(from: &str, shipped: &str) -> String {
    let (first, rest) = shipped.split_once('\n').unwrap_or((shipped, ""));
    let first = first.replace(
        "$schema=../profile.schema.json",
        "$schema=profile.schema.json",
    );
    format!(
        "{first}\n# Written by `raykueue init --from {from}`: yours to edit. Check it with\n\
         # `raykueue check --profile profile.yaml`; generate with `raykueue gen --profile profile.yaml --out deploy`.\n{rest}"
    )
}

/// The README names the profile's first workload in its commands.
fn readme(
    from: &str,
    profile: Option<&crate::profile::Profile>,
    scenario: bool,
) -> Result<String, crate::base::diagnostic::Diagnostic> {
    let workload = profile.and_then(|p| {
        p.workloads.first().map(|w| {
            serde_json::json!({
                "kind": w.kind.as_str(),
                "name": w.name.as_str(),
                "namespace": w.namespace_in(p),
            })
        })
    });
    let name = profile.map_or(from, |p| p.name.as_str());
    let words = profile
        .and_then(|p| p.cloud())
        .map(crate::cloud::Cloud::words);
    crate::output::render::render_text(
        "init/README.md.j2",
        &serde_json::json!({
            "name": name,
            "from": from,
            "workload": workload,
            "queued": profile.is_some_and(|p| p.operators.kueue.is_some()),
            "scenario": scenario,
            // The provider's words: `AKS` and `az` for the Azure profiles.
            "service": words.map_or("the cloud", |w| w.service),
            "cli": words.map_or("kubectl", |w| w.cli),
        }),
    )
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(path, text)
}
