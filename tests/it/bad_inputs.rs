//! The bad-input corpus: every `tests/fixtures/bad/<case>/profile.yaml` is refused with exit 1,
//! nothing on stdout, and located diagnostics, snapshotted in `golden/diagnostics/`. A case's
//! `expect` file names the codes its diagnostics must include; an `args` file adds flags.

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
        // An `args` file adds flags, e.g. `--deny-warnings` for a case whose rule warns.
        let extra = std::fs::read_to_string(std::path::Path::new(path).with_file_name("args"))
            .unwrap_or_default();
        let mut args = vec!["check", "--profile", &rel];
        args.extend(extra.split_whitespace());
        let out = raykueue(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{rel}: {err}");
        assert!(out.stdout.is_empty(), "{rel}");
        assert!(
            err.contains(&format!("{rel}:")),
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
