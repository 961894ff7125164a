//! `gen --out` and `gen --check` on real directories.

use crate::common::{raykueue, read_tree, stderr, stdout};
use std::fs;

fn gen_out(profile: &str, dir: &std::path::Path) -> std::process::Output {
    raykueue(&["gen", "--profile", profile, "--out", dir.to_str().unwrap()])
}

#[test]
fn check_is_clean_on_a_fresh_tree_and_reports_a_modified_file() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(gen_out("team", dir.path()).status.code(), Some(0));
    let before = read_tree(dir.path());
    let clean = raykueue(&[
        "gen",
        "--profile",
        "team",
        "--check",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert!(clean.stdout.is_empty());

    let cq = dir.path().join("platform/20-clusterqueues.yaml");
    let edited = fs::read_to_string(&cq).unwrap().replacen(
        "nominalQuota: \"48\"",
        "nominalQuota: \"47\"",
        1,
    );
    fs::write(&cq, edited).unwrap();
    let stale = raykueue(&[
        "gen",
        "--profile",
        "team",
        "--check",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(stale.status.code(), Some(1));
    let diff = stdout(&stale);
    assert!(
        diff.contains("--- a/platform/20-clusterqueues.yaml"),
        "{diff}"
    );
    assert!(
        diff.contains("-        nominalQuota: \"47\"")
            && diff.contains("+        nominalQuota: \"48\""),
        "{diff}"
    );
    // --check writes nothing.
    let mut after = read_tree(dir.path());
    after.insert(
        "platform/20-clusterqueues.yaml".into(),
        before["platform/20-clusterqueues.yaml"].clone(),
    );
    assert_eq!(before, after);
}

#[test]
fn check_reports_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    gen_out("team", dir.path());
    fs::remove_file(dir.path().join("platform/30-localqueues.yaml")).unwrap();
    let out = raykueue(&[
        "gen",
        "--profile",
        "team",
        "--check",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("+++ b/platform/30-localqueues.yaml"));
    assert!(stderr(&out).contains("1 missing"), "{}", stderr(&out));
}

#[test]
fn regenerating_removes_what_is_no_longer_produced_and_keeps_foreign_files() {
    let dir = tempfile::tempdir().unwrap();
    // A profile with a priority class, then the same profile without it.
    let text = fs::read_to_string(crate::common::repo().join("profiles/single.yaml")).unwrap();
    let with_pc = format!("{text}\npriorityClasses:\n  - name: high\n    value: 1000\n");
    let profile = dir.path().join("p.yaml");
    fs::write(&profile, &with_pc).unwrap();
    let out_dir = dir.path().join("deploy");
    assert_eq!(
        gen_out(profile.to_str().unwrap(), &out_dir).status.code(),
        Some(0)
    );
    assert!(
        out_dir
            .join("platform/15-workloadpriorityclasses.yaml")
            .exists()
    );
    fs::write(out_dir.join("platform/README.md"), "ours").unwrap();
    fs::write(out_dir.join("notes.txt"), "ours too").unwrap();

    fs::write(&profile, &text).unwrap();
    let check = raykueue(&[
        "gen",
        "--profile",
        profile.to_str().unwrap(),
        "--check",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(check.status.code(), Some(1));
    assert!(stderr(&check).contains("1 orphaned"), "{}", stderr(&check));
    assert!(stdout(&check).contains("--- a/platform/15-workloadpriorityclasses.yaml"));

    assert_eq!(
        gen_out(profile.to_str().unwrap(), &out_dir).status.code(),
        Some(0)
    );
    assert!(
        !out_dir
            .join("platform/15-workloadpriorityclasses.yaml")
            .exists()
    );
    assert_eq!(
        fs::read_to_string(out_dir.join("platform/README.md")).unwrap(),
        "ours"
    );
    assert_eq!(
        fs::read_to_string(out_dir.join("notes.txt")).unwrap(),
        "ours too"
    );
    let again = raykueue(&[
        "gen",
        "--profile",
        profile.to_str().unwrap(),
        "--check",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
}

/// A committed tree may hold symbolic links; raykueue never reads, writes or deletes through
/// one (a pull request could otherwise make `--check` print, or `--out` delete, files outside).
#[test]
fn links_in_the_tree_are_never_followed() {
    let root = tempfile::tempdir().unwrap();
    let outside = root.path().join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "SECRET=hunter2\n").unwrap();
    let deploy = root.path().join("deploy");
    assert_eq!(gen_out("team", &deploy).status.code(), Some(0));
    std::os::unix::fs::symlink(&outside, deploy.join("leak")).unwrap();
    let list = deploy.join(".raykueue-files");
    let mut owned = fs::read_to_string(&list).unwrap();
    owned.push_str("leak/secret.txt\n");
    fs::write(&list, owned).unwrap();

    let check = raykueue(&[
        "gen",
        "--profile",
        "team",
        "--check",
        deploy.to_str().unwrap(),
    ]);
    assert!(!stdout(&check).contains("hunter2"), "{}", stdout(&check));
    let out = gen_out("team", &deploy);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "SECRET=hunter2\n"
    );

    // A linked folder where raykueue writes: refused, nothing written through it.
    fs::remove_dir_all(deploy.join("platform")).unwrap();
    std::os::unix::fs::symlink(&outside, deploy.join("platform")).unwrap();
    let out = gen_out("team", &deploy);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing written outside"
    );
}

/// Every folder below `dir`, relative (empty ones included: a rollback must remove its own).
fn dirs(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_failure_mid_write_in_either_direction_restores_files_and_folders() {
    for (first, second) in [("team", "single"), ("single", "team")] {
        let dir = tempfile::tempdir().unwrap();
        let a = raykueue::api::compile::compile(
            &raykueue::api::input::resolve::resolve(first).unwrap(),
            false,
        )
        .unwrap()
        .bundle;
        let b = raykueue::api::compile::compile(
            &raykueue::api::input::resolve::resolve(second).unwrap(),
            false,
        )
        .unwrap()
        .bundle;
        raykueue::api::output::emit::write_tree(&a, dir.path(), false).unwrap();
        fs::write(dir.path().join("foreign.txt"), "x").unwrap();
        let (files, folders) = (read_tree(dir.path()), dirs(dir.path()));
        let mut step = 0;
        loop {
            let mut n = 0;
            let result =
                raykueue::api::output::emit::write_tree_with(&b, dir.path(), false, &mut |_| {
                    n += 1;
                    if n > step {
                        Err(std::io::Error::other("injected failure"))
                    } else {
                        Ok(())
                    }
                });
            if result.is_ok() {
                break;
            }
            assert_eq!(
                read_tree(dir.path()),
                files,
                "{first}→{second}, failure after {step} steps"
            );
            assert_eq!(
                dirs(dir.path()),
                folders,
                "{first}→{second}, failure after {step} steps"
            );
            step += 1;
        }
        assert!(
            raykueue::api::output::emit::check_tree(&b, dir.path())
                .unwrap()
                .is_clean()
        );
    }
}

/// A file `gen --out` would write that DIR already holds and `.raykueue-files` does not list
/// is someone else's: refused (exit 2, named), nothing written at all, unless `--force`.
#[test]
fn a_file_raykueue_did_not_write_is_refused_unless_force() {
    for rel in ["SUMMARY.md", "workloads/aurora-finetune/rayjob.yaml"] {
        for listed_before in [false, true] {
            let root = tempfile::tempdir().unwrap();
            let deploy = root.path().join("deploy");
            if listed_before {
                // A tree raykueue wrote, and a hand-written file in place of one it owned
                // once it is dropped from the list.
                assert_eq!(gen_out("team", &deploy).status.code(), Some(0));
                let list = deploy.join(".raykueue-files");
                let kept: Vec<String> = fs::read_to_string(&list)
                    .unwrap()
                    .lines()
                    .filter(|l| *l != rel)
                    .map(str::to_owned)
                    .collect();
                fs::write(&list, kept.join("\n") + "\n").unwrap();
                fs::remove_file(deploy.join("platform/30-localqueues.yaml")).unwrap();
            }
            fs::create_dir_all(deploy.join(rel).parent().unwrap()).unwrap();
            fs::write(deploy.join(rel), "# mine\n").unwrap();
            let (before, folders) = (read_tree(&deploy), dirs(&deploy));
            let out = gen_out("team", &deploy);
            assert_eq!(out.status.code(), Some(2), "{rel}: {}", stderr(&out));
            let err = stderr(&out);
            assert!(
                err.contains(&deploy.join(rel).display().to_string()) && err.contains("--force"),
                "{rel}: {err}"
            );
            assert_eq!(read_tree(&deploy), before, "{rel}: nothing written");
            assert_eq!(dirs(&deploy), folders, "{rel}: no folder or staging left");

            let forced = raykueue(&[
                "gen",
                "--profile",
                "team",
                "--out",
                deploy.to_str().unwrap(),
                "--force",
            ]);
            assert_eq!(forced.status.code(), Some(0), "{rel}: {}", stderr(&forced));
            assert_ne!(fs::read_to_string(deploy.join(rel)).unwrap(), "# mine\n");
            let check = raykueue(&["gen", "-p", "team", "--check", deploy.to_str().unwrap()]);
            assert_eq!(check.status.code(), Some(0), "{rel}: {}", stdout(&check));
        }
    }
}

/// Over its own output, and over a tree with files of others where it writes none, `gen
/// --out` runs as before.
#[test]
fn a_rerun_over_raykueues_own_output_writes() {
    let root = tempfile::tempdir().unwrap();
    let deploy = root.path().join("deploy");
    assert_eq!(gen_out("team", &deploy).status.code(), Some(0));
    fs::write(deploy.join("notes.md"), "ours").unwrap();
    let summary = deploy.join("SUMMARY.md");
    fs::write(&summary, "edited by hand, but raykueue's file").unwrap();
    let again = gen_out("team", &deploy);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert!(stderr(&again).contains("1 written"), "{}", stderr(&again));
    assert_ne!(
        fs::read_to_string(&summary).unwrap(),
        "edited by hand, but raykueue's file"
    );
    assert_eq!(fs::read_to_string(deploy.join("notes.md")).unwrap(), "ours");
    // Another profile over the same tree: it owns what the first wrote.
    let other = gen_out("single", &deploy);
    assert_eq!(other.status.code(), Some(0), "{}", stderr(&other));
}
