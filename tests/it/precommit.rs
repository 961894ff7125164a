//! The pre-commit hooks (`.pre-commit-hooks.yaml`): a manifest pre-commit v4.6.2 accepts, and
//! its hooks' commands, run as pre-commit runs them on a temporary Git repository, fail on a
//! stale bundle and a broken profile and pass when both are right.

use crate::common::{repo, stderr, stdout};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

// The keys of a hook in a manifest, pre-commit@v4.6.2 `pre_commit/clientlib.py`
// `MANIFEST_HOOK_DICT` (`id`, `name`, `entry`, `language` required). pre-commit refuses an
// unknown key only with a warning; these refuse it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
// The manifest's own flags, as pre-commit spells them.
#[allow(clippy::struct_excessive_bools)]
struct Hook {
    id: String,
    name: String,
    entry: String,
    language: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    minimum_pre_commit_version: Option<String>,
    #[serde(default)]
    alias: Option<String>,
    /// A Python regex on the path; `''` (every file) by default.
    #[serde(default)]
    files: String,
    #[serde(default)]
    exclude: Option<String>,
    #[serde(default)]
    types: Option<Vec<String>>,
    #[serde(default)]
    types_or: Option<Vec<String>>,
    #[serde(default)]
    exclude_types: Option<Vec<String>>,
    #[serde(default)]
    additional_dependencies: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    always_run: bool,
    #[serde(default)]
    fail_fast: bool,
    #[serde(default = "yes")]
    pass_filenames: bool,
    #[serde(default)]
    language_version: Option<String>,
    #[serde(default)]
    log_file: Option<String>,
    #[serde(default)]
    require_serial: bool,
    #[serde(default)]
    stages: Option<Vec<String>>,
    #[serde(default)]
    verbose: bool,
}

fn yes() -> bool {
    true
}

fn hooks() -> BTreeMap<String, Hook> {
    let text = std::fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).unwrap();
    let list: Vec<Hook> = serde_saphyr::from_str(&text).expect("a list of hooks");
    list.into_iter().map(|h| (h.id.clone(), h)).collect()
}

#[test]
fn the_manifest_has_both_hooks_built_from_this_repository() {
    let hooks = hooks();
    let ids: Vec<&str> = hooks.keys().map(String::as_str).collect();
    assert_eq!(ids, ["raykueue-check", "raykueue-fresh"]);
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    for h in hooks.values() {
        assert!(!h.name.is_empty() && !h.description.is_empty(), "{}", h.id);
        // pre-commit builds a `rust` hook with `cargo install --bins --root ENV --path .` in
        // this repository and runs `entry` from ENV/bin (pre-commit@v4.6.2
        // `pre_commit/languages/rust.py`): the entry's program is this package's binary.
        assert_eq!(h.language, "rust", "{}", h.id);
        let program = h.entry.split_whitespace().next().unwrap();
        assert!(
            manifest.contains(&format!("[[bin]]\nname = \"{program}\"")),
            "{}: {program} is not a binary of Cargo.toml",
            h.id
        );
        assert!(h.additional_dependencies.is_empty() && h.language_version.is_none());
        // `language: rust` as a first-class language: pre-commit 2.21.0 (its CHANGELOG.md).
        assert_eq!(h.minimum_pre_commit_version.as_deref(), Some("2.21.0"));
        assert!(h.alias.is_none() && h.exclude.is_none() && h.log_file.is_none());
        assert!(h.types.is_none() && h.types_or.is_none() && h.exclude_types.is_none());
        assert!(h.args.is_empty() && h.stages.is_none());
        assert!(!h.fail_fast && !h.require_serial && !h.verbose);
    }
    // `check` gets the changed profiles; `gen --check` runs once, on every commit.
    assert!(hooks["raykueue-check"].pass_filenames && !hooks["raykueue-check"].always_run);
    assert!(!hooks["raykueue-fresh"].pass_filenames && hooks["raykueue-fresh"].always_run);
}

/// Run a hook as pre-commit does: `entry` split like a shell line, then the user's `args`,
/// then (when it passes file names) the staged files its `files` pattern matches, with the
/// hook environment's `bin` on `PATH`, in the repository's root (pre-commit@v4.6.2
/// `pre_commit/lang_base.py` `run_xargs`, `pre_commit/commands/run.py` `_run_single_hook`).
fn run_hook(hook: &Hook, user_args: &[&str], git: &Path) -> Output {
    let staged = git_out(git, &["diff", "--cached", "--name-only"]);
    // A Python regex with `re.search`; the patterns here mean the same to the regex crate.
    let files = regex::Regex::new(&hook.files).unwrap();
    let mut argv: Vec<String> = hook.entry.split_whitespace().map(str::to_owned).collect();
    argv.extend(user_args.iter().map(|a| (*a).to_owned()));
    if hook.pass_filenames {
        let chosen: Vec<&str> = staged.lines().filter(|f| files.is_match(f)).collect();
        if chosen.is_empty() && !hook.always_run {
            // pre-commit skips a hook no file is given to: "(no files to check)Skipped".
            return Command::new("true").output().unwrap();
        }
        argv.extend(chosen.into_iter().map(str::to_owned));
    }
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_raykueue"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    Command::new(&argv[0])
        .args(&argv[1..])
        .env("PATH", path)
        .current_dir(git)
        .output()
        .unwrap()
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out)
}

const PROFILE: &str =
    "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: team\nname: prod\n";

#[test]
fn the_hooks_fail_on_a_stale_bundle_and_a_broken_profile() {
    let hooks = hooks();
    let (check, fresh) = (&hooks["raykueue-check"], &hooks["raykueue-fresh"]);
    // The README's configuration: the bundle folder, then its profile.
    let fresh_args = ["deploy", "--profile", "clusters/prod/profile.yaml"];
    let dir = tempfile::tempdir().unwrap();
    let git = dir.path();
    git_out(git, &["init", "-q"]);
    std::fs::create_dir_all(git.join("clusters/prod")).unwrap();
    let profile = git.join("clusters/prod/profile.yaml");
    std::fs::write(&profile, PROFILE).unwrap();
    let out = crate::common::raykueue_in(
        git,
        &[
            "gen",
            "--out",
            "deploy",
            "--profile",
            "clusters/prod/profile.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    git_out(git, &["add", "-A"]);

    // The first commit: the profile and its fresh bundle. Only the profile goes to `check`
    // (the bundle's YAML files are not profiles).
    let out = run_hook(check, &[], git);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("[RK202]"), "team's warning is shown");
    let out = run_hook(fresh, &fresh_args, git);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    git_out(git, &["commit", "-q", "-m", "profile and bundle"]);

    // A valid edit of the profile, without regenerating: `check` passes, `fresh` fails.
    std::fs::write(
        &profile,
        format!("{PROFILE}description: Team queues, renamed.\n"),
    )
    .unwrap();
    git_out(git, &["add", "-A"]);
    let out = run_hook(check, &[], git);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run_hook(fresh, &fresh_args, git);
    assert_eq!(out.status.code(), Some(1), "a stale bundle fails");
    assert!(stdout(&out).contains("SUMMARY.md"), "{}", stdout(&out));
    assert!(stderr(&out).contains("deploy is stale"), "{}", stderr(&out));

    // A broken profile: `check` fails at its line.
    std::fs::write(&profile, PROFILE.replace("name: prod", "name: Prod")).unwrap();
    git_out(git, &["add", "-A"]);
    let out = run_hook(check, &[], git);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("clusters/prod/profile.yaml:4:7"),
        "{}",
        stderr(&out)
    );

    // A hand edit of a generated file makes the bundle stale too, whatever `check` sees.
    std::fs::write(&profile, PROFILE).unwrap();
    let queues = git.join("deploy/platform/30-localqueues.yaml");
    let text = std::fs::read_to_string(&queues).unwrap();
    std::fs::write(&queues, text.replace("team-a-cq", "team-b-cq")).unwrap();
    git_out(git, &["add", "-A"]);
    assert_eq!(run_hook(check, &[], git).status.code(), Some(0));
    assert_eq!(run_hook(fresh, &fresh_args, git).status.code(), Some(1));
    std::fs::write(&queues, text).unwrap();
    git_out(git, &["add", "-A"]);
    assert_eq!(run_hook(fresh, &fresh_args, git).status.code(), Some(0));

    // `raykueue-fresh` without its arguments fails: it never passes by checking nothing.
    let out = run_hook(fresh, &[], git);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn check_finds_profiles_by_the_names_the_readme_gives() {
    let pattern = regex::Regex::new(&hooks()["raykueue-check"].files).unwrap();
    for profile in [
        "profile.yaml",
        "clusters/prod/profile.yaml",
        "prod.raykueue.yaml",
        "clusters/prod.raykueue.yml",
    ] {
        assert!(pattern.is_match(profile), "{profile}");
    }
    for other in [
        "deploy/platform/kustomization.yaml",
        "profiles.yaml",
        "my-profile.yaml",
        "raykueue.yaml",
        "prod.raykueue.yaml.bak",
        "profile.schema.json",
    ] {
        assert!(!pattern.is_match(other), "{other}");
    }
}

/// The `pre-commit` program, when it is installed (`.ci/run` installs pre-commit 4.6.2).
fn pre_commit(test: &str) -> Option<&'static str> {
    let found = Command::new("pre-commit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        crate::common::skip(test, "no pre-commit");
        return None;
    }
    Some("pre-commit")
}

/// `pre-commit` itself accepts the manifest (`validate-manifest`: every key and value of
/// each hook, as pre-commit checks a hook repository's before it installs it).
#[test]
fn pre_commit_accepts_the_manifest() {
    let Some(pc) = pre_commit("pre_commit_accepts_the_manifest") else {
        return;
    };
    let out = Command::new(pc)
        .arg("validate-manifest")
        .arg(repo().join(".pre-commit-hooks.yaml"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

/// The hooks run by pre-commit on `git commit`, as a user who ran `pre-commit install` gets
/// them. pre-commit would build raykueue with `cargo install` for `language: rust` (minutes,
/// in CI on every run); here the hooks are the manifest's, as a `repo: local` hook each, with
/// the language that runs `entry` from `PATH` (`unsupported`, pre-commit 4's name for
/// `system`) and the binary under test on `PATH`: pre-commit's own file selection (`files`
/// as a Python regex, `pass_filenames`, `always_run`) and exit codes decide the commit.
#[test]
fn git_commit_is_refused_by_the_hooks() {
    let Some(pc) = pre_commit("git_commit_is_refused_by_the_hooks") else {
        return;
    };
    let text = std::fs::read_to_string(repo().join(".pre-commit-hooks.yaml")).unwrap();
    let mut hooks: Vec<serde_json::Value> = serde_saphyr::from_str(&text).unwrap();
    for h in &mut hooks {
        assert_eq!(h["language"], "rust");
        h["language"] = "unsupported".into();
        if h["id"] == "raykueue-fresh" {
            // The README's configuration: the bundle folder, then its profile.
            h["args"] = serde_json::json!(["deploy", "--profile", "clusters/prod/profile.yaml"]);
        }
    }
    let config = serde_json::json!({"repos": [{"repo": "local", "hooks": hooks}]});
    let dir = tempfile::tempdir().unwrap();
    let git = dir.path().join("repo");
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(git.join("clusters/prod")).unwrap();
    git_out(&git, &["init", "-q"]);
    std::fs::write(git.join(".pre-commit-config.yaml"), config.to_string()).unwrap();
    let profile = git.join("clusters/prod/profile.yaml");
    std::fs::write(&profile, PROFILE).unwrap();
    let out = crate::common::raykueue_in(
        &git,
        &[
            "gen",
            "--out",
            "deploy",
            "--profile",
            "clusters/prod/profile.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_raykueue"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", &cache)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .current_dir(&git)
            .output()
            .unwrap()
    };
    let out = run(&[pc, "install"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let commits = || {
        git_out(&git, &["rev-list", "--all", "--count"])
            .trim()
            .to_owned()
    };
    // Each step: stage everything, commit; the hooks' verdicts and whether a commit was made.
    let commit = |message: &str| {
        git_out(&git, &["add", "-A"]);
        let before = git_out(&git, &["rev-list", "--all"]).lines().count();
        let out = run(&["git", "commit", "-q", "-m", message]);
        let log = format!("{}{}", stdout(&out), stderr(&out));
        let after = git_out(&git, &["rev-list", "--all"]).lines().count();
        assert_eq!(out.status.success(), after == before + 1, "{log}");
        (out.status.success(), log)
    };

    let (ok, log) = commit("profile and bundle");
    assert!(ok, "{log}");
    assert!(
        log.contains("raykueue check") && log.contains("Passed"),
        "{log}"
    );
    assert_eq!(commits(), "1");

    // A valid edit of the profile, not regenerated: refused by raykueue-fresh, with the diff.
    std::fs::write(
        &profile,
        format!("{PROFILE}description: Team queues, renamed.\n"),
    )
    .unwrap();
    let (ok, log) = commit("edit");
    assert!(!ok, "{log}");
    assert!(
        log.contains("raykueue gen --check") && log.contains("Failed"),
        "{log}"
    );
    assert!(
        log.contains("SUMMARY.md") && log.contains("deploy is stale"),
        "{log}"
    );

    // Regenerated: accepted.
    let out = crate::common::raykueue_in(
        &git,
        &[
            "gen",
            "--out",
            "deploy",
            "--profile",
            "clusters/prod/profile.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (ok, log) = commit("edit, regenerated");
    assert!(ok, "{log}");

    // A broken profile: refused by raykueue-check, at its line.
    std::fs::write(&profile, PROFILE.replace("name: prod", "name: Prod")).unwrap();
    let (ok, log) = commit("broken");
    assert!(!ok, "{log}");
    assert!(log.contains("clusters/prod/profile.yaml:4:7"), "{log}");
    std::fs::write(
        &profile,
        format!("{PROFILE}description: Team queues, renamed.\n"),
    )
    .unwrap();

    // A hand edit of a generated file: no profile is staged, so raykueue-check is skipped,
    // and raykueue-fresh refuses the commit.
    let queues = git.join("deploy/platform/30-localqueues.yaml");
    let text = std::fs::read_to_string(&queues).unwrap();
    std::fs::write(&queues, text.replace("team-a-cq", "team-b-cq")).unwrap();
    let (ok, log) = commit("hand edit");
    assert!(!ok, "{log}");
    assert!(
        log.contains("no files to check") && log.contains("Skipped"),
        "{log}"
    );
    assert_eq!(commits(), "2");
}

/// The `.pre-commit-config.yaml` the README shows: its `raykueue-fresh` profile is one that
/// `raykueue-check` checks too (a new user's first try found a README whose example profile
/// the check hook skipped), and docs/integrations.md shows the same configuration.
#[test]
fn the_readmes_configuration_checks_its_own_profile() {
    let block = |file: &str| -> String {
        let text = std::fs::read_to_string(repo().join(file)).unwrap();
        let section = text.split("## pre-commit\n").nth(1).unwrap();
        let yaml = section.split("```yaml\n").nth(1).unwrap();
        yaml.split("```").next().unwrap().to_owned()
    };
    let parse = |text: &str| -> serde_json::Value { serde_saphyr::from_str(text).unwrap() };
    let config = parse(&block("README.md"));
    // The same configuration (the comments may differ).
    assert_eq!(config, parse(&block("docs/integrations.md")));
    let listed = &config["repos"][0]["hooks"];
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["raykueue-check", "raykueue-fresh"]);
    let args: Vec<&str> = listed[1]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let profile = args[args.iter().position(|a| *a == "--profile").unwrap() + 1];
    let pattern = regex::Regex::new(&hooks()["raykueue-check"].files).unwrap();
    assert!(
        pattern.is_match(profile),
        "{profile}: raykueue-check never checks it"
    );
}
