//! The bad-input corpus: every `tests/fixtures/bad/<case>/profile.yaml` is refused with exit 1,
//! nothing on stdout, and located diagnostics, snapshotted in `golden/diagnostics/`. A case's
//! `expect` file names the codes its diagnostics must include; its `args` file, extra flags.

use crate::common::{raykueue, stderr};

#[test]
fn every_bad_input_is_refused_with_a_located_diagnostic() {
    insta::glob!("../fixtures/bad", "*/profile.yaml", |path| {
        let rel = path
            .strip_prefix(crate::common::repo())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let started = std::time::Instant::now();
        // An optional `args` file adds flags, e.g. `--deny-warnings` for a warning's case.
        let extra = std::fs::read_to_string(std::path::Path::new(path).with_file_name("args"))
            .unwrap_or_default();
        let mut args = vec!["check", "--profile", &rel];
        args.extend(extra.split_whitespace());
        let out = raykueue(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{rel}: {err}");
        assert!(out.stdout.is_empty(), "{rel}");
        // `file:line:column` of a file of this case (overlay cases may point into a parent).
        let case_dir = rel.trim_end_matches("profile.yaml");
        let located = err.lines().any(|l| {
            l.trim_start().strip_prefix("--> ").is_some_and(|place| {
                let mut parts = place.rsplitn(3, ':');
                let (col, line) = (parts.next(), parts.next());
                place.starts_with(case_dir)
                    && col.is_some_and(|c| c.parse::<u32>().is_ok_and(|c| c > 0))
                    && line.is_some_and(|l| l.parse::<u32>().is_ok_and(|l| l > 0))
            })
        });
        assert!(
            located,
            "{rel}: the diagnostic names file:line:column\n{err}"
        );
        assert!(!err.contains("panicked"), "{rel}");
        assert!(
            started.elapsed().as_secs() < 5,
            "{rel} took {:?}",
            started.elapsed()
        );
        let expect = std::path::Path::new(path).with_file_name("expect");
        if let Ok(codes) = std::fs::read_to_string(&expect) {
            for code in codes.split_whitespace() {
                assert!(
                    err.contains(&format!("[{code}]")),
                    "{rel}: expected {code}\n{err}"
                );
            }
        }
        insta::with_settings!({
            snapshot_path => "../../golden/diagnostics",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(err);
        });
    });
}

/// A byte size written as disks and dashboards write it gets the quantity it means.
#[test]
fn a_byte_size_in_gb_gets_the_binary_quantity_it_means() {
    let base = std::fs::read_to_string(
        crate::common::repo().join("tests/fixtures/bad/quantity-lowercase-suffix/profile.yaml"),
    )
    .unwrap();
    for (written, meant) in [
        ("768Gb", "768Gi"),
        ("160Gb", "160Gi"),
        ("\"4 GB\"", "4Gi"),
        ("768GiB", "768Gi"),
        ("1.5TB", "1.5Ti"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("profile.yaml");
        std::fs::write(
            &path,
            base.replace("nominalQuota: 768gi", &format!("nominalQuota: {written}")),
        )
        .unwrap();
        let out = raykueue(&["check", "--profile", &path.display().to_string()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{written}: {err}");
        assert!(
            err.contains(&format!("did you mean `{meant}`?")),
            "{written}: {err}"
        );
    }
}
