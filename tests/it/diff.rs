//! `raykueue diff OLD NEW`: the semantic summary of a fixture pair, snapshotted.

use crate::common::{raykueue, stderr, stdout};

#[test]
fn diff_summarises_what_changes_in_the_cluster() {
    let out = raykueue(&[
        "diff",
        "tests/fixtures/diff/old.yaml",
        "tests/fixtures/diff/new.yaml",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "changes exit 1: {}",
        stderr(&out)
    );
    let md = stdout(&out);
    assert!(
        md.contains("- `ClusterQueue team-b-cq`: nvidia.com/gpu borrowingLimit (flavor gpu) 4 → 2"),
        "{md}"
    );
    assert!(md.contains("- `ClusterQueue team-c-cq`: added"), "{md}");
    assert!(md.contains("- `LocalQueue ray/team-c`: added"), "{md}");
    assert!(md.contains("- `node pool gpupool`: max 3 → 5"), "{md}");
    insta::with_settings!({
        snapshot_path => "../../golden/diff",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("old-to-new", md);
    });
}

#[test]
fn diff_of_a_profile_with_itself_is_empty_and_exits_0() {
    let out = raykueue(&["diff", "team", "team", "--files"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("No change in the cluster."));
}

#[test]
fn diff_files_adds_the_unified_diff() {
    let out = raykueue(&[
        "diff",
        "tests/fixtures/diff/old.yaml",
        "tests/fixtures/diff/new.yaml",
        "--files",
    ]);
    let md = stdout(&out);
    assert!(md.contains("--- a/platform/20-clusterqueues.yaml"), "{md}");
    assert!(
        md.contains("-        borrowingLimit: \"4\"")
            || md.contains("+        borrowingLimit: \"2\""),
        "{md}"
    );
}
