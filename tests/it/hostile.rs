//! Hostile input that is not a fixture file: valid variants (BOM, CRLF) give the same output,
//! free text cannot smuggle YAML, and huge input is refused fast.

use crate::common::{raykueue, stderr, stdout};
use std::fs;

#[test]
fn bom_and_crlf_give_the_same_output_as_plain_lf() {
    let text = fs::read_to_string(crate::common::repo().join("profiles/team.yaml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let variants = [
        ("plain.yaml", text.clone().into_bytes()),
        (
            "bom.yaml",
            [b"\xEF\xBB\xBF".as_slice(), text.as_bytes()].concat(),
        ),
        ("crlf.yaml", text.replace('\n', "\r\n").into_bytes()),
        (
            "bom-crlf.yaml",
            [
                b"\xEF\xBB\xBF".as_slice(),
                text.replace('\n', "\r\n").as_bytes(),
            ]
            .concat(),
        ),
    ];
    let mut outputs = Vec::new();
    for (name, bytes) in variants {
        let p = dir.path().join(name);
        fs::write(&p, bytes).unwrap();
        let out = raykueue(&["gen", "--profile", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        outputs.push(out.stdout);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn a_ten_megabyte_profile_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("huge.yaml");
    let mut text = String::from(
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nname: huge\nnamespace: ray\ndescription: |\n",
    );
    while text.len() < 10 * 1024 * 1024 {
        text.push_str("  0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n");
    }
    fs::write(&p, text).unwrap();
    let out = raykueue(&["check", "--profile", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("[RK004]") && err.contains("huge.yaml:1:1"),
        "{err}"
    );
}

#[test]
fn free_text_cannot_add_keys_or_documents() {
    let text = fs::read_to_string(crate::common::repo().join("profiles/single.yaml")).unwrap();
    let hostile =
        "a\nkind: Secret\n---\napiVersion: v1\n\"quoted\" 'single' $(id) `id` ; rm -rf ~ # comment";
    let profile = format!(
        "{text}\npriorityClasses:\n  - name: high\n    value: 1000\n    description: {}\n",
        serde_json::to_string(hostile).unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p.yaml");
    fs::write(&p, profile).unwrap();
    let out = raykueue(&["gen", "--profile", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let docs = crate::cli::parse_stream(&stdout(&out));
    assert_eq!(docs.iter().filter(|d| d["kind"] == "Secret").count(), 0);
    let wpc = docs
        .iter()
        .find(|d| d["kind"] == "WorkloadPriorityClass")
        .unwrap();
    assert_eq!(
        wpc["description"], hostile,
        "the text round-trips unchanged"
    );
    assert_eq!(docs.len(), 7, "no extra document");
}
