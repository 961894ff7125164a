//! Repository chores, run with `cargo run -p xtask -- <task>`.
//!
//! `import-schemas [--shared DIR] [--check]`: regenerate `assets/schemas.json` (the upstream
//! CRD and Kubernetes schemas) and `assets/charts.json` (the pinned Helm charts' value keys and
//! the defaults raykueue builds on) from `DIR/schemas` (default: `../shared` beside the
//! repository) and, for the managed Prometheus flavours' kinds, Go modules the Go module proxy
//! serves (`import::MANAGED`; needs Go). `--check` writes nothing and exits 1 when a committed file differs.
//!
//! `e2e tools | up | down | replay`: the real-control-plane tier (`e2e/mod.rs`).
//!
//! `docs [--check]`: regenerate `docs/rules.md` (from the code table), `profiles/profile.schema.json`
//! and `profiles/fleet.schema.json` (from the profile and fleet types) and `docs/profile.md`
//! (from the profile's schema).

mod charts;
mod e2e;
mod import;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Reads `shared/schemas` and returns a generated file's text.
type Importer = fn(&Path) -> Result<String, String>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "e2e") {
        return e2e::main(&args[1..]);
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut shared = repo.join("../shared");
    let mut check = false;
    let mut task = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--shared" => match it.next() {
                Some(d) => shared = PathBuf::from(d),
                None => return usage("--shared needs a directory"),
            },
            "--check" => check = true,
            "import-schemas" | "docs" if task.is_none() => task = Some(a.as_str()),
            other => return usage(&format!("unknown argument `{other}`")),
        }
    }
    let Some(task) = task else {
        return usage("no task given");
    };
    let mut status = ExitCode::SUCCESS;
    let tables: Vec<(&str, Importer)> = if task == "docs" {
        vec![
            (raykueue::api::cli::reference::RULES_FILE, |_| {
                Ok(raykueue::api::cli::reference::rules())
            }),
            (raykueue::api::cli::reference::PROFILE_FILE, |_| {
                Ok(raykueue::api::cli::reference::profile())
            }),
            (raykueue::api::cli::reference::SCHEMA_FILE, |_| {
                Ok(raykueue::api::cli::reference::schema())
            }),
            (raykueue::api::cli::reference::FLEET_SCHEMA_FILE, |_| {
                Ok(raykueue::api::cli::reference::fleet_schema())
            }),
        ]
    } else {
        vec![
            (import::OUTPUT, |d| import::import(d, &e2e::tools::download)),
            (charts::OUTPUT, charts::import),
        ]
    };
    for (output, generate) in tables {
        let text = match generate(&shared.join("schemas")) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{task}: {e}");
                return ExitCode::from(2);
            }
        };
        let out = repo.join(output);
        if check {
            let current = std::fs::read_to_string(&out).unwrap_or_default();
            if current == text {
                eprintln!("{output} is up to date");
            } else {
                eprintln!("{output} is stale: run `cargo run -p xtask -- {task}`");
                status = ExitCode::from(1);
            }
            continue;
        }
        if let Some(dir) = out.parent()
            && let Err(e) = std::fs::create_dir_all(dir)
        {
            eprintln!("cannot create {}: {e}", dir.display());
            return ExitCode::from(2);
        }
        if let Err(e) = std::fs::write(&out, &text) {
            eprintln!("cannot write {}: {e}", out.display());
            return ExitCode::from(2);
        }
        eprintln!("wrote {output} ({} bytes)", text.len());
    }
    status
}

fn usage(problem: &str) -> ExitCode {
    eprintln!(
        "{problem}\nusage: cargo run -p xtask -- import-schemas [--shared DIR] [--check]\n       cargo run -p xtask -- docs [--check]"
    );
    ExitCode::from(2)
}
