//! `extends:` overlays: merge rules, errors located in the right file, and the shipped example.

use crate::common::{raykueue, stderr, stdout};
use std::fs;

fn docs_of(out: &std::process::Output) -> Vec<serde_json::Value> {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    crate::cli::parse_stream(&stdout(out))
}

#[test]
fn the_prod_example_adds_a_team_and_keeps_the_parent() {
    let docs = docs_of(&raykueue(&[
        "gen",
        "--profile",
        "profiles/examples/prod.yaml",
    ]));
    let names: Vec<&str> = docs
        .iter()
        .filter(|d| d["kind"] == "ClusterQueue")
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["team-a-cq", "team-b-cq", "team-c-cq"]);
    let team_c = docs
        .iter()
        .find(|d| d["metadata"]["name"] == "team-c-cq")
        .unwrap();
    assert_eq!(
        team_c["spec"]["resourceGroups"][1]["flavors"][0]["resources"][0]["nominalQuota"],
        "8"
    );
    // Everything not overridden is the parent's: the team-a queue is unchanged.
    let team = docs_of(&raykueue(&["gen", "--profile", "team"]));
    let a_prod = docs
        .iter()
        .find(|d| d["metadata"]["name"] == "team-a-cq")
        .unwrap();
    let a_team = team
        .iter()
        .find(|d| d["metadata"]["name"] == "team-a-cq")
        .unwrap();
    assert_eq!(a_prod, a_team);
}

#[test]
fn named_items_merge_null_removes_and_delete_drops() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("o.yaml");
    fs::write(
        &p,
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: team\nname: o\n\
         azure:\n  nodePools:\n    - name: gpupool\n      labels: {pool: big}\n\
         flavors:\n  - name: gpu\n    nodeLabels: {accelerator: nvidia, pool: big}\n\
         serviceAccount: null\n\
         queues:\n  localQueues:\n    - name: team-b\n      $patch: delete\n\
         workloads: []\n",
    )
    .unwrap();
    let out = raykueue(&["gen", "--profile", p.to_str().unwrap()]);
    let docs = docs_of(&out);
    assert!(
        docs.iter().all(|d| d["kind"] != "ServiceAccount"),
        "null removed the key"
    );
    let gpu = docs
        .iter()
        .find(|d| d["kind"] == "ResourceFlavor" && d["metadata"]["name"] == "gpu")
        .unwrap();
    assert_eq!(
        gpu["spec"]["nodeLabels"],
        serde_json::json!({"accelerator": "nvidia", "pool": "big"})
    );
    let lqs: Vec<&str> = docs
        .iter()
        .filter(|d| d["kind"] == "LocalQueue")
        .map(|d| d["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(lqs, ["team-a"]);
}

#[test]
fn an_error_in_the_parent_is_reported_in_the_parent_file() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("base.yaml"),
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: base\nnamespace: Ray\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("overlay.yaml"),
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: base.yaml\nname: overlay\n",
    )
    .unwrap();
    let out = raykueue(&[
        "check",
        "--profile",
        dir.path().join("overlay.yaml").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("base.yaml:4:12"), "{err}");
    assert!(err.contains("namespace: `Ray`"), "{err}");
}

#[test]
fn check_reports_orphans_after_an_overlay_drops_a_team() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("o.yaml");
    let deploy = dir.path().join("deploy");
    let base =
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: team\nname: o\nworkloads: []\n";
    fs::write(&p, base).unwrap();
    let out = raykueue(&[
        "gen",
        "--profile",
        p.to_str().unwrap(),
        "--out",
        deploy.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Drop team b: its queues go; no file disappears, but the queue files change.
    fs::write(
        &p,
        format!(
            "{base}queues:\n  mode: team\n  clusterQueues:\n    - name: team-b-cq\n      $patch: delete\n    - name: team-c-cq\n      cohortName: shared-cohort\n      resourceGroups:\n        - coveredResources: [cpu]\n          flavors: [{{name: default, resources: [{{name: cpu, nominalQuota: \"1\"}}]}}]\n  localQueues:\n    - name: team-b\n      $patch: delete\n    - name: team-c\n      clusterQueue: team-c-cq\n"
        ),
    )
    .unwrap();
    let check = raykueue(&[
        "gen",
        "--profile",
        p.to_str().unwrap(),
        "--check",
        deploy.to_str().unwrap(),
    ]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let diff = stdout(&check);
    assert!(diff.contains("-  name: team-b-cq"), "{diff}");
    assert!(diff.contains("+  name: team-c-cq"), "{diff}");
}
