//! Same profile → byte-identical output, whatever the process environment.

use crate::common::{bundle_text, repo, shipped};
use std::process::Command;

#[test]
fn twice_in_process_is_identical() {
    for p in shipped() {
        assert_eq!(bundle_text(p), bundle_text(p), "{p}");
    }
}

#[test]
fn across_processes_locale_time_zone_and_directory_do_not_matter() {
    let first = Command::new(env!("CARGO_BIN_EXE_raykueue"))
        .args(["gen", "--profile", "team"])
        .current_dir(repo())
        .env("LC_ALL", "C")
        .env("TZ", "UTC")
        .output()
        .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let profile = repo().join("profiles/team.yaml");
    let second = Command::new(env!("CARGO_BIN_EXE_raykueue"))
        .args(["gen", "--profile", profile.to_str().unwrap()])
        .current_dir(elsewhere.path())
        .env("LC_ALL", "tr_TR.UTF-8")
        .env("LANG", "de_DE.UTF-8")
        .env("TZ", "Pacific/Chatham")
        .output()
        .unwrap();
    assert_eq!(first.status.code(), Some(0));
    assert_eq!(second.status.code(), Some(0));
    assert_eq!(first.stdout, second.stdout);

    // The whole tree too.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (dir, tz) in [(&a, "UTC"), (&b, "Asia/Kolkata")] {
        let o = Command::new(env!("CARGO_BIN_EXE_raykueue"))
            .args([
                "gen",
                "--profile",
                "team",
                "--out",
                dir.path().to_str().unwrap(),
            ])
            .env("TZ", tz)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0));
    }
    assert_eq!(
        crate::common::read_tree(a.path()),
        crate::common::read_tree(b.path())
    );
}

#[test]
fn map_order_in_the_profile_does_not_matter() {
    // The same profile with a top-level key moved (every mapping is reordered at random by
    // `properties::key_order_does_not_change_the_output`).
    let text = std::fs::read_to_string(repo().join("profiles/single.yaml")).unwrap();
    let reordered = text.replace("namespace: ray\n", "").replace(
        "apiVersion: raykueue.io/v1alpha1\n",
        "namespace: ray\napiVersion: raykueue.io/v1alpha1\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("single.yaml");
    std::fs::write(&path, reordered).unwrap();
    let a = crate::common::raykueue(&["gen", "--profile", "single"]);
    let b = crate::common::raykueue(&["gen", "--profile", path.to_str().unwrap()]);
    assert_eq!(b.status.code(), Some(0), "{}", crate::common::stderr(&b));
    assert_eq!(a.stdout, b.stdout);
}
