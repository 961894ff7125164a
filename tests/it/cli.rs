//! The command-line contract of docs/cli.md: commands, streams, exit codes.

use crate::common::{raykueue, raykueue_in, shipped, stderr, stdout};

/// Parse a multi-document YAML stream into its documents.
pub(crate) fn parse_stream(text: &str) -> Vec<serde_json::Value> {
    serde_saphyr::from_multiple::<serde_json::Value>(text)
        .expect("the stream is valid multi-document YAML")
        .into_iter()
        .filter(|d| !d.is_null())
        .collect()
}

#[test]
fn gen_prints_a_multi_document_stream_namespace_first() {
    for p in shipped() {
        let out = raykueue(&["gen", "--profile", p]);
        assert_eq!(out.status.code(), Some(0), "{p}: {}", stderr(&out));
        let docs = parse_stream(&stdout(&out));
        assert!(!docs.is_empty(), "{p}");
        assert_eq!(docs[0]["kind"], "Namespace", "{p}");
        for d in &docs {
            assert!(
                d["apiVersion"].is_string()
                    && d["kind"].is_string()
                    && d["metadata"]["name"].is_string()
            );
        }
        // Nothing but diagnostics on stderr, and the shipped profiles have no errors.
        assert!(
            !stderr(&out).lines().any(|l| l.starts_with("error")),
            "{p}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn stream_equals_the_platform_files_of_the_bundle() {
    let out = raykueue(&["gen", "--profile", "team"]);
    let stream = parse_stream(&stdout(&out));
    let dir = tempfile::tempdir().unwrap();
    let o = raykueue(&[
        "gen",
        "--profile",
        "team",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mut from_files = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir.path().join("platform"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "kustomization.yaml")
        .collect();
    files.sort();
    for f in files {
        from_files.extend(parse_stream(&std::fs::read_to_string(f).unwrap()));
    }
    assert_eq!(stream, from_files);
}

#[test]
fn shipped_profiles_resolve_from_any_directory() {
    let elsewhere = tempfile::tempdir().unwrap();
    let here = raykueue(&["gen", "--profile", "team"]);
    let there = raykueue_in(elsewhere.path(), &["gen", "--profile", "team"]);
    assert_eq!(there.status.code(), Some(0), "{}", stderr(&there));
    assert_eq!(here.stdout, there.stdout);
}

#[test]
fn check_passes_shipped_profiles_and_fails_bad_ones() {
    for p in shipped() {
        let out = raykueue(&["check", "--profile", p]);
        assert_eq!(out.status.code(), Some(0), "{p}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "check writes nothing to stdout");
    }
    let out = raykueue(&[
        "check",
        "--profile",
        "tests/fixtures/bad/unknown-key/profile.yaml",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn json_error_format_is_one_object_per_line() {
    let out = raykueue(&[
        "check",
        "--profile",
        "tests/fixtures/bad/unknown-key/profile.yaml",
        "--error-format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert!(!lines.is_empty());
    assert_eq!(lines[0]["severity"], "error");
    assert_eq!(lines[0]["code"], "RK010");
    assert!(lines[0]["line"].as_u64().unwrap() > 0);
    assert!(lines[0]["file"].as_str().unwrap().ends_with("profile.yaml"));
}

#[test]
fn schema_command_prints_the_committed_schema() {
    let out = raykueue(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let committed =
        std::fs::read_to_string(crate::common::repo().join("profiles/profile.schema.json"))
            .unwrap();
    assert_eq!(
        stdout(&out),
        committed,
        "profiles/profile.schema.json is stale: run `cargo run -p xtask -- docs`"
    );
    let v: serde_json::Value = serde_json::from_str(&committed).unwrap();
    assert!(v["properties"]["queues"].is_object());
}

#[test]
fn shipped_profiles_point_editors_at_the_schema() {
    for p in shipped() {
        let text =
            std::fs::read_to_string(crate::common::repo().join(format!("profiles/{p}.yaml")))
                .unwrap();
        // A shipped example lives one folder down.
        let schema = if p.contains('/') {
            "../profile.schema.json"
        } else {
            "profile.schema.json"
        };
        assert!(
            text.starts_with(&format!("# yaml-language-server: $schema={schema}\n")),
            "{p}"
        );
    }
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(raykueue(&["gen"]).status.code(), Some(2));
    assert_eq!(
        raykueue(&["gen", "--profile", "no-such-profile"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        raykueue(&["gen", "--profile", "missing/file.yaml"])
            .status
            .code(),
        Some(2)
    );
    let out = raykueue(&["gen", "--profile", "tema"]);
    assert!(
        stderr(&out).contains("did you mean the shipped profile `team`?"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        raykueue(&["gen", "--profile", "team", "--check", "/nonexistent/dir"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_bad_profile_writes_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("deploy");
    let out = raykueue(&[
        "gen",
        "--profile",
        "tests/fixtures/bad/wrong-type/profile.yaml",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        !out_dir.exists(),
        "nothing is written for an invalid profile"
    );
    let out = raykueue(&[
        "gen",
        "--profile",
        "tests/fixtures/bad/wrong-type/profile.yaml",
    ]);
    assert!(out.stdout.is_empty());
}

/// Every command that takes `--profile` lists every shipped name in its help: the help string
/// is written once (`input::resolve::PROFILE_HELP`), and this holds it to the shipped list.
#[test]
fn profile_help_lists_every_shipped_profile() {
    for command in ["gen", "check", "simulate"] {
        let out = raykueue(&[command, "--help"]);
        let help = stdout(&out);
        for name in shipped() {
            assert!(
                help.contains(name),
                "`{command} --help` does not list `{name}`:\n{help}"
            );
        }
    }
}

/// The raykueue files of another kind than a command reads (issue 40): a fleet, a scenario,
/// a fleet's manager profile (no queues of its own) and a profile as a snapshot or manifest.
const FLEET: &str = "profiles/examples/fleet.yaml";
const SCENARIO: &str = "profiles/examples/fleet-scenario.yaml";
const MANAGER: &str = "profiles/examples/fleet-manager.yaml";
const BUSY_STATE: &str = "tests/fixtures/state/team-busy/state.yaml";

/// One located RK007 error (`file:line:column` at the `kind:` value) naming a command that
/// reads the file, nothing on stdout, and `code` as the exit code.
fn refused_as_wrong_kind(args: &[&str], file: &str, line: u32, reader: &str, code: i32) {
    let out = raykueue(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}");
    assert_eq!(
        err.matches("error[").count(),
        1,
        "{args:?}: one error\n{err}"
    );
    assert!(err.contains("error[RK007]"), "{args:?}: {err}");
    assert!(
        err.contains(&format!("--> {file}:{line}:7")),
        "{args:?}: {err}"
    );
    assert!(err.contains(reader), "{args:?}: names `{reader}`\n{err}");
}

#[test]
fn diff_refuses_a_fleet_a_scenario_and_a_manager_alone() {
    // diff's own contract: 0 no change, 1 changes, 2 trouble (a side it cannot read).
    refused_as_wrong_kind(
        &["diff", FLEET, "team"],
        FLEET,
        9,
        "raykueue check --profile",
        2,
    );
    refused_as_wrong_kind(
        &["diff", "team", SCENARIO],
        SCENARIO,
        8,
        "raykueue simulate",
        2,
    );
    refused_as_wrong_kind(&["diff", MANAGER, "team"], MANAGER, 7, FLEET, 2);
}

#[test]
fn explain_refuses_a_fleet_a_scenario_a_manager_and_a_profile_as_state() {
    for (profile, line, reader) in [
        (FLEET, 9, "raykueue check --profile"),
        (SCENARIO, 8, "raykueue simulate"),
        (MANAGER, 7, FLEET),
    ] {
        let args = ["explain", "--profile", profile, "--state", BUSY_STATE];
        refused_as_wrong_kind(&args, profile, line, reader, 1);
    }
    for (state, line, reader) in [
        (FLEET, 9, "raykueue check --profile"),
        (SCENARIO, 8, "raykueue simulate"),
        (MANAGER, 7, "raykueue check --profile"),
    ] {
        let args = ["explain", "--profile", "team", "--state", state];
        refused_as_wrong_kind(&args, state, line, reader, 1);
    }
}

#[test]
fn check_refuses_a_scenario_and_a_manager_alone_and_reads_a_fleet() {
    refused_as_wrong_kind(&["check", SCENARIO], SCENARIO, 8, "raykueue simulate", 1);
    refused_as_wrong_kind(
        &["check", "--profile", MANAGER],
        MANAGER,
        7,
        &format!("raykueue check --profile {FLEET}"),
        1,
    );
    let fleet = raykueue(&["check", "--profile", FLEET]);
    assert_eq!(fleet.status.code(), Some(0), "{}", stderr(&fleet));
    assert!(!stderr(&fleet).contains("RK007"), "{}", stderr(&fleet));
    // A manager whose fleet is not beside it is checked as the profile it is.
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("manager.yaml");
    std::fs::copy(crate::common::repo().join(MANAGER), &alone).unwrap();
    let out = raykueue(&["check", "--profile", alone.to_str().unwrap()]);
    assert!(!stderr(&out).contains("RK007"), "{}", stderr(&out));
}

#[test]
fn check_state_refuses_a_fleet_a_scenario_a_manager_and_a_profile_as_state() {
    for (profile, line, reader) in [
        (FLEET, 9, "raykueue check --profile"),
        (SCENARIO, 8, "raykueue simulate"),
        (MANAGER, 7, FLEET),
    ] {
        let args = ["check", "--profile", profile, "--state", BUSY_STATE];
        refused_as_wrong_kind(&args, profile, line, reader, 1);
    }
    for (state, line, reader) in [
        (FLEET, 9, "raykueue check --profile"),
        (SCENARIO, 8, "raykueue simulate"),
        ("profiles/team.yaml", 5, "raykueue check --profile"),
    ] {
        let args = ["check", "--profile", "team", "--state", state];
        refused_as_wrong_kind(&args, state, line, reader, 1);
    }
}

#[test]
fn validate_refuses_a_profile_a_fleet_and_a_scenario() {
    for (file, line, reader) in [
        (FLEET, 9, "raykueue check --profile"),
        (SCENARIO, 8, "raykueue simulate"),
        (
            "profiles/team.yaml",
            5,
            "raykueue check --profile profiles/team.yaml",
        ),
    ] {
        refused_as_wrong_kind(&["validate", file], file, line, reader, 1);
    }
}

#[test]
fn gen_refuses_a_scenario_and_a_manager_alone() {
    refused_as_wrong_kind(
        &["gen", "--profile", SCENARIO],
        SCENARIO,
        8,
        "raykueue simulate",
        1,
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("deploy");
    let args = ["gen", "--profile", MANAGER, "--out", out.to_str().unwrap()];
    refused_as_wrong_kind(
        &args,
        MANAGER,
        7,
        &format!("raykueue gen --profile {FLEET}"),
        1,
    );
    assert!(!out.exists(), "nothing written");
}
