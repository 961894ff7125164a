//! The profile format's compatibility promise (`docs/compatibility.md`): deprecated fields are
//! the ones the schema marks, each is listed in the docs and has a fixture, and a `#[deprecated]`
//! mark on a field reaches `raykueue check` as RK023 at the field's line.

use crate::common::{repo, shipped_text};
use raykueue::api::base::diagnostic::Diagnostic;
use raykueue::api::input::deprecated::{deprecated_fields, uses};
use serde_json::Value;

fn loaded(name: &str, text: &str) -> raykueue::api::input::load::Loaded {
    let source = raykueue::api::input::load::decode(name, text.as_bytes()).unwrap();
    raykueue::api::input::load::flatten(raykueue::api::input::load::parse_tree(&source).unwrap())
}

/// `/$defs/ArgoCd/properties/project` → `ArgoCd.project`; `/properties/x` → `Profile.x`: how
/// `docs/profile.md` and `docs/compatibility.md` name a field.
fn field_name(schema_path: &str) -> String {
    let parts: Vec<&str> = schema_path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["properties", field] => format!("Profile.{field}"),
        ["$defs", ty, "properties", field] => format!("{ty}.{field}"),
        _ => panic!("a deprecation that is not a field: {schema_path}"),
    }
}

/// The `field` column of the "Deprecated fields" table.
fn documented() -> Vec<String> {
    let doc = std::fs::read_to_string(repo().join("docs/compatibility.md")).unwrap();
    let table = doc
        .split("## Deprecated fields")
        .nth(1)
        .expect("a \"Deprecated fields\" section");
    table
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split('`').nth(1).unwrap().to_owned())
        .collect()
}

#[test]
fn the_documented_deprecations_are_the_schemas_and_each_has_a_fixture() {
    let schema = raykueue::api::input::schema::schema();
    let mut marked: Vec<String> = deprecated_fields(schema)
        .iter()
        .map(|p| field_name(p))
        .collect();
    marked.sort();
    let mut listed = documented();
    listed.sort();
    assert_eq!(
        marked, listed,
        "the schema's deprecated fields and docs/compatibility.md's table differ"
    );
    // Each deprecation is shown through the real command line: a bad-input case that uses it
    // and expects RK023 (`--deny-warnings` in its `args`).
    for field in marked {
        let case = repo().join(format!(
            "tests/fixtures/bad/rk023-{}",
            field.to_lowercase().replace('.', "-")
        ));
        let expect = std::fs::read_to_string(case.join("expect")).unwrap_or_default();
        assert!(
            expect.contains("RK023"),
            "{field}: no fixture at {}",
            case.display()
        );
    }
    // The committed schema says the same (`xtask docs` writes it from the types).
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("profiles/profile.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(deprecated_fields(&committed), deprecated_fields(schema));
    // The list a run reads instead of generating the schema.
    let mut listed_in_code: Vec<&str> = raykueue::api::input::deprecated::DEPRECATED.to_vec();
    listed_in_code.sort_unstable();
    let mut in_schema = deprecated_fields(schema);
    in_schema.sort();
    assert_eq!(
        listed_in_code, in_schema,
        "input::deprecated::DEPRECATED and the schema's deprecated fields differ"
    );
}

fn place(d: &Diagnostic) -> (u32, u32) {
    let p = d.place.as_ref().expect("placed");
    (p.pos.line, p.pos.column)
}

/// Test-only types: what a deprecation in `src/profile/` looks like, derived the same way.
#[derive(schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code, deprecated)]
struct Demo {
    name: String,
    /// Use `size` instead: the same number, in GiB.
    #[deprecated]
    #[serde(default)]
    disk_gb: Option<u32>,
    #[serde(default)]
    size: Option<u32>,
    #[serde(default)]
    pools: Vec<DemoPool>,
    #[serde(default)]
    labels: std::collections::BTreeMap<String, DemoLabel>,
}

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code, deprecated)]
struct DemoPool {
    name: String,
    /// Replaced by `autoscale.max`.
    #[deprecated]
    #[serde(default)]
    max_count: Option<u32>,
}

#[derive(schemars::JsonSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code, deprecated)]
struct DemoLabel {
    /// Write the value itself.
    #[deprecated]
    #[serde(default)]
    legacy: Option<String>,
}

#[test]
fn a_deprecated_mark_is_reported_at_every_use() {
    let schema = serde_json::to_value(schemars::schema_for!(Demo)).unwrap();
    let mut marked = deprecated_fields(&schema);
    marked.sort();
    assert_eq!(
        marked,
        [
            "/$defs/DemoLabel/properties/legacy",
            "/$defs/DemoPool/properties/maxCount",
            "/properties/diskGb",
        ]
    );
    let text = "name: demo\ndiskGb: 10\npools:\n  - name: a\n    maxCount: 3\n  - name: b\n  - {name: c, maxCount: 1}\nlabels:\n  x: {legacy: v}\n";
    let found = uses(&loaded("demo.yaml", text), &schema);
    let seen: Vec<(&str, Option<&str>, (u32, u32))> = found
        .iter()
        .map(|d| (d.code.id, d.path.as_deref(), place(d)))
        .collect();
    assert_eq!(
        seen,
        [
            ("RK023", Some("diskGb"), (2, 1)),
            ("RK023", Some("pools[0].maxCount"), (5, 5)),
            ("RK023", Some("pools[2].maxCount"), (7, 15)),
            ("RK023", Some("labels.x.legacy"), (9, 7)),
        ]
    );
    assert!(
        found
            .iter()
            .all(|d| d.severity == raykueue::api::base::codes::Severity::Warning),
        "a warning, not an error"
    );
    assert!(
        found[0]
            .hint
            .as_deref()
            .unwrap()
            .starts_with("Use `size` instead: the same number, in GiB"),
        "{:?}",
        found[0].hint
    );
    // No use, no finding; the replacement alone is fine.
    let clean = uses(&loaded("demo.yaml", "name: demo\nsize: 10\n"), &schema);
    assert!(clean.is_empty());
}

#[test]
fn a_deprecated_profile_field_is_reported_in_a_real_profile() {
    // The profile's own schema, with one field marked as `#[deprecated]` would mark it: the
    // walk follows `$ref`s, optional fields and lists of the real schema.
    let mut schema = raykueue::api::input::schema::schema().clone();
    schema["$defs"]["LocalQueue"]["properties"]["clusterQueue"]["deprecated"] = Value::Bool(true);
    let team = shipped_text("team");
    let found = uses(&loaded("profiles/team.yaml", team), &schema);
    let paths: Vec<&str> = found.iter().filter_map(|d| d.path.as_deref()).collect();
    assert_eq!(
        paths,
        [
            "queues.localQueues[0].clusterQueue",
            "queues.localQueues[1].clusterQueue"
        ]
    );
    let line = team
        .lines()
        .position(|l| l.contains("clusterQueue: team-a-cq"))
        .unwrap() as u32
        + 1;
    assert_eq!(place(&found[0]).0, line);
    // Today's schema marks nothing: a shipped profile draws no RK023.
    let out = crate::common::raykueue(&["check", "team", "single", "kuberay-gpu"]);
    assert!(!crate::common::stderr(&out).contains("RK023"));
}

/// The release-notes table has a row for this version, and says which formats it reads.
#[test]
fn the_release_notes_cover_this_version() {
    let doc = std::fs::read_to_string(repo().join("docs/compatibility.md")).unwrap();
    let notes = doc
        .split("## Release notes")
        .nth(1)
        .expect("a \"Release notes\" section");
    let row = notes
        .lines()
        .find(|l| l.starts_with(&format!("| {} |", env!("CARGO_PKG_VERSION"))))
        .unwrap_or_else(|| panic!("no release-notes row for {}", env!("CARGO_PKG_VERSION")));
    let formats = row.split('|').nth(2).unwrap();
    // The versions the profile schema accepts: what `apiVersion` may be.
    let schema = raykueue::api::input::schema::schema();
    let accepted: Vec<&str> = schema["$defs"]["ApiVersion"]["enum"]
        .as_array()
        .expect("apiVersion is an enum")
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(!accepted.is_empty());
    for v in &accepted {
        assert!(formats.contains(&format!("`{v}`")), "{row}: {v}");
    }
}

/// A profile of a format this release does not read is refused at its `apiVersion`.
#[test]
fn a_newer_format_is_refused_at_its_api_version() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("next.yaml");
    std::fs::write(
        &p,
        "apiVersion: raykueue.io/v1beta1\nkind: Profile\nextends: team\nname: prod\n",
    )
    .unwrap();
    let out = crate::common::raykueue(&["check", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = crate::common::stderr(&out);
    assert!(
        err.contains("[RK012]")
            && err.contains("next.yaml:1:13")
            && err.contains("raykueue.io/v1alpha1"),
        "{err}"
    );
}
