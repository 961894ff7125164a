//! Property tests and a bounded fuzz run of the whole pipeline (load → schema → rules → render →
//! output). CI runs a fixed number of cases; a long local run sets `PROPTEST_CASES`, e.g.
//! `PROPTEST_CASES=200000 cargo test --release properties::fuzz -- --nocapture`.

use crate::common::compile_text;
use proptest::prelude::*;
use raykueue::api::input::resolve::SHIPPED;
use serde_json::Value;

/// Tokens that break YAML, retype scalars or probe limits.
const TOKENS: &[&str] = &[
    "NO",
    "yes",
    "~",
    "null",
    "1e400",
    ".nan",
    "-.inf",
    "0x10",
    "010",
    "2.50",
    "-1",
    "768GB",
    "&a ",
    "*a",
    "!!binary ",
    "!x ",
    "---\n",
    "...\n",
    "\t",
    "{",
    "}",
    "[",
    "]",
    ": ",
    "- ",
    "? ",
    "\"",
    "'",
    "|\n",
    ">-\n",
    "#",
    "\u{0}",
    "\u{feff}",
    "\r\n",
    "\\",
    "%YAML 1.1\n",
    "<<: *a\n",
    "é",
    "\u{202e}",
    "99999999999999999999999",
    "nvidia.com/gpu",
    "Standard_NC6s_v3",
    "$(id)",
    "`id`",
    ";",
];

#[derive(Debug, Clone)]
enum Edit {
    Insert(usize, &'static str),
    Delete(usize, usize),
    DuplicateLine(usize),
    SwapLines(usize, usize),
}

fn apply(text: &str, edits: &[Edit]) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    for e in edits {
        match *e {
            Edit::Insert(at, tok) => {
                let at = at % (bytes.len() + 1);
                bytes.splice(at..at, tok.bytes());
            }
            Edit::Delete(at, len) => {
                if !bytes.is_empty() {
                    let at = at % bytes.len();
                    let end = (at + len % 40).min(bytes.len());
                    bytes.drain(at..end);
                }
            }
            Edit::DuplicateLine(line) | Edit::SwapLines(line, _) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let mut lines: Vec<&str> = text.split('\n').collect();
                let first = line % lines.len();
                if let Edit::SwapLines(_, other) = *e {
                    let second = other % lines.len();
                    lines.swap(first, second);
                } else {
                    lines.insert(first, lines[first]);
                }
                bytes = lines.join("\n").into_bytes();
            }
        }
    }
    bytes
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), proptest::sample::select(TOKENS)).prop_map(|(a, t)| Edit::Insert(a, t)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, l)| Edit::Delete(a, l)),
        any::<usize>().prop_map(Edit::DuplicateLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
    ]
}

/// `cases` unless `PROPTEST_CASES` asks for another number (an explicit `cases` in a
/// `ProptestConfig` would otherwise override the variable).
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// `PROPTEST_CASES` reaches the properties: this test binary runs the scripts property again
/// as a child with the variable set, and the property reports that many accepted cases.
#[test]
fn proptest_cases_sets_the_case_count() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "properties::scripts_stay_valid_bash_for_any_allowed_value",
            "--exact",
            "--nocapture",
        ])
        .env("PROPTEST_CASES", "3")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("of 3 generated profiles compiled"), "{err}");
}

proptest! {
    #![proptest_config(config(256))]

    /// Whatever the edits, the pipeline answers: output, or diagnostics that each have a place.
    #[test]
    fn fuzz_mutated_profiles_never_panic_and_errors_are_located(
        which in 0..SHIPPED.len(),
        edits in proptest::collection::vec(edit(), 1..6),
    ) {
        let bytes = apply(SHIPPED[which].1, &edits);
        match compile_text(&bytes) {
            Ok(c) => prop_assert!(!c.bundle.files.is_empty()),
            Err(diags) => {
                prop_assert!(!diags.is_empty());
                for d in &diags {
                    let place = d.place.as_ref();
                    prop_assert!(place.is_some_and(|p| p.pos.line > 0 && p.pos.column > 0), "unplaced: {d:?}");
                }
            }
        }
    }

    /// Reordering the keys of every mapping in a profile does not change a byte of the output.
    #[test]
    fn key_order_does_not_change_the_output(which in 0..SHIPPED.len(), seed in any::<u64>()) {
        let original: Value = serde_saphyr::from_str(SHIPPED[which].1).unwrap();
        let shuffled = shuffle(&original, seed);
        let text = serde_saphyr::to_string(&shuffled).unwrap();
        let a = compile_text(SHIPPED[which].1.as_bytes()).unwrap().bundle.files;
        let b = compile_text(text.as_bytes()).unwrap().bundle.files;
        prop_assert_eq!(a, b);
    }

    /// Any text in a free-text field lands in the YAML unchanged, and adds nothing.
    #[test]
    // Printable text of any script, or ASCII with tabs and line breaks (YAML allows no other
    // control characters, and the loader refuses them with RK001).
    fn free_text_round_trips_unchanged(description in "\\PC{0,40}|[\\t\\n\\x20-\\x7e]{0,40}") {
        let profile = format!(
            "{}\npriorityClasses:\n  - name: p\n    value: 1\n    description: {}\n",
            SHIPPED[0].1,
            serde_json::to_string(&description).unwrap()
        );
        let compiled = compile_text(profile.as_bytes()).unwrap();
        let wpc = compiled.bundle.objects.iter().find(|r| r.object.kind == "WorkloadPriorityClass").unwrap();
        let reparsed: Value = serde_saphyr::from_str(&wpc.yaml).unwrap();
        prop_assert_eq!(reparsed["description"].as_str(), Some(description.as_str()));
        prop_assert_eq!(reparsed.as_object().unwrap().len(), 5, "apiVersion, kind, metadata, value, description");
    }
}

/// Strings matching a schema pattern (proptest's generator takes the pattern without anchors).
fn matching(pattern: &str) -> impl Strategy<Value = String> {
    let body = pattern.trim_start_matches('^').trim_end_matches('$');
    proptest::string::string_regex(body).unwrap()
}

/// Rebuild every mapping with its keys in a seed-determined order.
fn shuffle(v: &Value, seed: u64) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by_key(|k| {
                let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
                for b in k.bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
                }
                h
            });
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), shuffle(&m[k], seed)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| shuffle(i, seed)).collect()),
        other => other.clone(),
    }
}

#[test]
fn synthetic_profiles_compile_at_every_size() {
    for n in [2, 100] {
        let text = raykueue::api::synthetic::teams_profile(n);
        let compiled = compile_text(text.as_bytes()).unwrap_or_else(|d| {
            panic!("{}", raykueue::api::base::diagnostic::render_human(&d));
        });
        let cqs = compiled
            .bundle
            .objects
            .iter()
            .filter(|r| r.object.kind == "ClusterQueue")
            .count();
        assert_eq!(cqs, n);
    }
}

/// The long fuzz run, by wall-clock time rather than case count (not part of `cargo test`):
/// `RAYKUEUE_FUZZ_SECONDS=600 cargo test --test it -- --ignored fuzz_for_a_while --nocapture`.
/// A crasher is written to `target/fuzz-crashers/` before the test fails, to become a fixture.
#[test]
#[ignore = "long fuzz run; see the doc comment"]
fn fuzz_for_a_while() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, TestRunner};
    let seconds: u64 = std::env::var("RAYKUEUE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let mut runner = TestRunner::new(Config {
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..SHIPPED.len(), proptest::collection::vec(edit(), 1..8));
    let (mut runs, mut compiled, mut rejected) = (0u64, 0u64, 0u64);
    while std::time::Instant::now() < deadline {
        let (which, edits) = strategy.new_tree(&mut runner).unwrap().current();
        let bytes = apply(SHIPPED[which].1, &edits);
        match std::panic::catch_unwind(|| compile_text(&bytes)) {
            Ok(Ok(_)) => compiled += 1,
            Ok(Err(diags)) => {
                assert!(
                    diags
                        .iter()
                        .all(|d| d.place.as_ref().is_some_and(|p| p.pos.line > 0)),
                    "unplaced diagnostic"
                );
                rejected += 1;
            }
            Err(_) => {
                let dir =
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-crashers");
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(format!("crash-{runs}.yaml")), &bytes).unwrap();
                panic!("crash on input saved as target/fuzz-crashers/crash-{runs}.yaml");
            }
        }
        runs += 1;
    }
    eprintln!(
        "fuzz: {runs} executions in {seconds} s: {compiled} compiled, {rejected} rejected with located diagnostics, 0 crashes"
    );
}

/// Any value the schema allows in the fields that reach the scripts leaves them valid bash. A
/// value a domain rule refuses never reaches a script, so such cases prove nothing: the test
/// counts the cases that compiled and fails when fewer than 90 % did (all do today), so that a rule change
/// cannot turn it into a test of nothing.
#[test]
fn scripts_stay_valid_bash_for_any_allowed_value() {
    use proptest::test_runner::{TestCaseError, TestRunner};
    use std::cell::Cell;
    let (ran, compiled) = (Cell::new(0_u32), Cell::new(0_u32));
    let values = (
        matching(raykueue::api::profile::ResourceGroupName::PATTERN),
        matching(raykueue::api::profile::ClusterName::PATTERN),
        matching(raykueue::api::profile::RoleName::PATTERN),
        matching(raykueue::api::profile::LabelValue::PATTERN),
    );
    let mut runner = TestRunner::new(config(48));
    let result = runner.run(&values, |(rg, cluster, role, label)| {
        if rg.len() > 90 || cluster.len() > 63 || role.len() > 128 || label.len() > 63 {
            return Err(TestCaseError::reject("longer than the schema allows"));
        }
        ran.set(ran.get() + 1);
        let text = SHIPPED[0]
            .1
            .replace(
                "resourceGroup: rg-kueue-and-ray-on-aks",
                &format!("resourceGroup: {}", serde_json::to_string(&rg).unwrap()),
            )
            .replace(
                "    name: kueue-and-ray-on-aks",
                &format!("    name: {}", serde_json::to_string(&cluster).unwrap()),
            )
            .replace(
                "role: Storage Blob Data Contributor",
                &format!("role: {}", serde_json::to_string(&role).unwrap()),
            )
            .replace(
                "      count: 1\n",
                &format!(
                    "      count: 1\n      labels: {{team: {}}}\n",
                    serde_json::to_string(&label).unwrap()
                ),
            );
        let Ok(compiled_profile) = compile_text(text.as_bytes()) else {
            return Ok(());
        };
        compiled.set(compiled.get() + 1);
        for (name, script) in compiled_profile.bundle.files.iter().filter(|(n, _)| {
            n.starts_with("infra/")
                && std::path::Path::new(n.as_str())
                    .extension()
                    .is_some_and(|e| e == "sh")
        }) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.sh");
            std::fs::write(&path, script).unwrap();
            let out = std::process::Command::new("bash")
                .arg("-n")
                .arg(&path)
                .output()
                .unwrap();
            prop_assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if name == "infra/up.sh" {
                for value in [&rg, &cluster, &role] {
                    prop_assert!(
                        script.contains(&raykueue::api::output::render::shell_quote(value)),
                        "{name} quotes {value:?}"
                    );
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (ran, compiled) = (ran.get(), compiled.get());
    eprintln!("scripts property: {compiled} of {ran} generated profiles compiled");
    assert!(
        compiled * 10 >= ran * 9 && ran > 0,
        "only {compiled} of {ran} generated profiles compiled: the property checks too few scripts"
    );
}
