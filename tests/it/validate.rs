//! Output validation: every shipped profile's output passes; `raykueue validate` rejects the
//! broken-object corpus (`tests/fixtures/invalid-objects/<case>.yaml`, each declaring what it
//! expects in `# expect: CODE text` lines; stderr snapshotted in `golden/validate/`), passes
//! the valid samples, and keeps its exit-code contract. The upstream corpus
//! (`tests/fixtures/validate/<case>.yaml`, restated from Kueue v0.19.2's webhook tests and
//! KubeRay v1.7.0's validation tests) gets exactly the cluster's verdict and codes. The embedded schema table is checked
//! to be what `cargo run -p xtask -- import-schemas` would write today.

use crate::common::{raykueue, repo, shipped, skip, stderr, stdout};
use raykueue::api::model::Part;
use std::io::Write;
use std::process::{Command, Stdio};

// The importer itself, compiled here by path (xtask is no dependency of raykueue).
#[allow(dead_code)]
#[path = "../../xtask/src/import.rs"]
mod import;

fn rel(path: &std::path::Path) -> String {
    path.strip_prefix(repo())
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// Run `raykueue validate` with `input` on stdin.
fn validate_stdin(args: &[&str], input: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_raykueue"))
        .arg("validate")
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn every_shipped_profile_output_validates() {
    for p in shipped() {
        let resolved = raykueue::api::input::resolve::resolve(p).unwrap();
        let bundle = raykueue::api::compile::render(&resolved).unwrap();
        assert!(!bundle.objects.is_empty(), "{p}");
        let found = raykueue::api::output::validate::bundle(&bundle);
        assert!(found.is_empty(), "{p}: {found:#?}");
        // And through the CLI: the whole tree, as a user would check a committed one.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let gen_out = raykueue(&["gen", "--profile", p, "--out", out.to_str().unwrap()]);
        assert_eq!(gen_out.status.code(), Some(0), "{}", stderr(&gen_out));
        let files: Vec<String> = crate::common::read_tree(&out)
            .keys()
            // Manifests only: `infra/` holds Helm values files, not Kubernetes objects.
            .filter(|f| {
                !f.starts_with("infra/")
                    && std::path::Path::new(f)
                        .extension()
                        .is_some_and(|e| e == "yaml")
            })
            .map(|f| out.join(f).to_string_lossy().into_owned())
            .collect();
        let mut args = vec!["validate"];
        args.extend(files.iter().map(String::as_str));
        let v = raykueue(&args);
        let err = stderr(&v);
        assert_eq!(v.status.code(), Some(0), "{p}: {err}");
        assert!(!err.contains("error["), "{p}: {err}");
        // Only the kustomizations are not validated (no schema for them).
        for line in err.lines().filter(|l| l.contains("[RK05")) {
            assert!(
                line.contains("[RK055]") && line.contains("Kustomization"),
                "{p}: {line}\n{err}"
            );
        }
    }
}

#[test]
fn the_platform_stream_validates_from_stdin() {
    for p in shipped() {
        let stream = raykueue(&["gen", "--profile", p]);
        let v = validate_stdin(&["-"], &String::from_utf8(stream.stdout).unwrap());
        assert_eq!(v.status.code(), Some(0), "{p}: {}", stderr(&v));
        assert_eq!(stderr(&v), "", "{p}");
    }
}

#[test]
fn broken_objects_are_rejected_with_the_right_message() {
    insta::glob!("../fixtures/invalid-objects", "*.yaml", |path| {
        let rel = rel(path);
        let out = raykueue(&["validate", &rel]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{rel}: {err}");
        assert!(out.stdout.is_empty(), "{rel}");
        assert!(
            err.contains(&format!("{rel}:")),
            "{rel}: not located\n{err}"
        );
        let text = std::fs::read_to_string(path).unwrap();
        let expects: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# expect: "))
            .collect();
        assert!(!expects.is_empty(), "{rel}: declare `# expect:` lines");
        for e in expects {
            let (code, words) = match e.split_once(' ') {
                Some((c, w)) if c.starts_with("RK") => (Some(c), w),
                _ => (None, e),
            };
            if let Some(code) = code {
                assert!(
                    err.contains(&format!("[{code}]")),
                    "{rel}: expected {code}\n{err}"
                );
            }
            assert!(err.contains(words), "{rel}: expected `{words}`\n{err}");
        }
        insta::with_settings!({
            snapshot_path => "../../golden/validate",
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(err);
        });
    });
}

/// One corpus case's header: `# source: repo@tag path test-name` and
/// `# verdict: valid | warning CODE... | invalid CODE...`.
fn corpus_header(text: &str) -> (String, String, Vec<String>) {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("# {name}: ")))
            .map(str::to_owned)
    };
    let source = field("source").unwrap_or_default();
    let verdict = field("verdict").unwrap_or_default();
    let mut words = verdict.split_whitespace().map(str::to_owned);
    let kind = words.next().unwrap_or_default();
    let mut codes: Vec<String> = words.collect();
    codes.sort();
    (source, kind, codes)
}

/// Every corpus object gets the verdict the cluster gives it, with exactly the expected codes:
/// an error the cluster does not raise fails as surely as one it raises and we miss. About
/// half are valid objects at a rule's edge, which a validator that is too strict fails.
#[test]
fn the_upstream_corpus_gets_the_clusters_verdict() {
    let dir = repo().join("tests/fixtures/validate");
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    let mut failures = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    for path in &paths {
        let rel = rel(path);
        let (source, kind, want) = corpus_header(&std::fs::read_to_string(path).unwrap());
        assert!(
            source.contains("kubernetes-sigs/kueue@v0.19.2")
                || source.contains("ray-project/kuberay@v1.7.0")
                || source.contains("kubernetes/kubernetes@v1.36.3"),
            "{rel}: `# source:` must cite kueue@v0.19.2, kuberay@v1.7.0 or the API server \
             (kubernetes@v1.36.3), a path and a test or function"
        );
        let out = raykueue(&["validate", "--error-format", "json", &rel]);
        let lines: Vec<serde_json::Value> = stderr(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut got: Vec<String> = lines
            .iter()
            .map(|l| l["code"].as_str().unwrap().to_owned())
            .collect();
        got.sort();
        got.dedup();
        let exit = match kind.as_str() {
            "valid" | "warning" => 0,
            "invalid" => 1,
            other => panic!("{rel}: unknown verdict `{other}`"),
        };
        assert_eq!(
            kind == "valid",
            want.is_empty(),
            "{rel}: codes only for findings"
        );
        if out.status.code() != Some(exit) || got != want {
            failures.push(format!(
                "{rel}: want {kind} {want:?}, got exit {:?} {got:?}",
                out.status.code()
            ));
        }
        // Every finding is located: file, line, field path.
        for l in &lines {
            assert_eq!(l["file"], rel.as_str(), "{rel}: {l}");
            assert!(l["line"].as_u64().is_some_and(|n| n > 0), "{rel}: {l}");
            assert!(
                l["path"].as_str().is_some_and(|p| p.contains(": ")),
                "{rel}: {l}"
            );
        }
        *counts.entry(kind).or_default() += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let total: usize = counts.values().sum();
    assert!(total >= 60, "{counts:?}");
    assert!(
        counts["valid"] * 3 >= total,
        "too few valid edge cases: {counts:?}"
    );
}

/// The KubeRay layer guards generated output too (one implementation): a profile value that
/// raykueue passes through verbatim and KubeRay would refuse at reconcile stops `gen`.
#[test]
fn gen_refuses_output_kuberay_would_refuse() {
    let team = std::fs::read_to_string(repo().join("profiles/team.yaml")).unwrap();
    let bad = team.replacen(
        "rayStartParams: {num-cpus: \"0\"}",
        "rayStartParams: {num-cpus: \"0\", redis-username: ray}",
        1,
    );
    assert_ne!(bad, team, "profiles/team.yaml changed: update this test");
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("team.yaml");
    std::fs::write(&profile, bad).unwrap();
    let out_dir = dir.path().join("out");
    let out = raykueue(&[
        "gen",
        "--profile",
        profile.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("error[RK906]"), "{err}");
    assert!(
        err.contains("rayStartParams.redis-username") && err.contains("rayjob.yaml:"),
        "{err}"
    );
    assert!(!out_dir.exists(), "nothing is written");
    // `check` validates the objects without writing them, and when one fails it reports what
    // `gen` reports: the same finding, located in the file the object would go to.
    let check = raykueue(&["check", "--profile", profile.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(stderr(&check), err);
    // So does the platform stream, although the failing object is a workload's: what `gen`
    // prints does not depend on where it goes.
    let stream = raykueue(&["gen", "--profile", profile.to_str().unwrap()]);
    assert_eq!(stream.status.code(), Some(1));
    assert_eq!(stderr(&stream), err);
    assert_eq!(stdout(&stream), "", "no partial output");
}

/// `raykueue check` skips writing the bundle, and `gen` without `--out` writes only its stream,
/// but both report exactly what `gen --out` reports (and the stream holds the tree's documents),
/// on every shipped profile and every bad-input fixture, with and without `--deny-warnings`.
#[test]
fn check_reports_what_gen_reports() {
    let mut profiles: Vec<String> = shipped().iter().map(|s| (*s).to_owned()).collect();
    for dir in ["tests/fixtures/bad", "tests/fixtures/fastpath"] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let path = e.unwrap().path();
            let profile = if path.is_dir() {
                path.join("profile.yaml")
            } else {
                path
            };
            if profile.extension().is_some_and(|x| x == "yaml") && profile.exists() {
                profiles.push(profile.to_string_lossy().into_owned());
            }
        }
    }
    assert!(profiles.len() > 150, "{}", profiles.len());
    let (mut clean, mut refused) = (0, 0);
    for p in &profiles {
        let Ok(resolved) = raykueue::api::input::resolve::resolve(p) else {
            continue;
        };
        for deny in [false, true] {
            let (gen_diags, tree) = match raykueue::api::compile::compile(&resolved, deny) {
                Ok(c) => {
                    clean += 1;
                    (c.warnings, Some(c.bundle))
                }
                Err(d) => {
                    refused += 1;
                    (d, None)
                }
            };
            let check = raykueue::api::compile::diagnostics(&resolved, deny);
            assert_eq!(check, gen_diags, "{p} (deny warnings: {deny})");
            // `gen` without `--out` builds only its stream: the same findings, and the
            // documents of the tree's objects under the part's folder, in order.
            for (which, part) in [
                (Part::Platform, "platform/"),
                (Part::Workloads, "workloads/"),
                (Part::ArgoCd, "gitops/argocd/"),
            ] {
                let stream = raykueue::api::compile::stream(&resolved, deny, which);
                let expected = tree.as_ref().map(|b| {
                    let docs = b.objects.iter().filter(|r| r.object.file.starts_with(part));
                    docs.flat_map(|r| ["---\n", r.yaml.as_str()])
                        .collect::<String>()
                });
                match (stream, expected) {
                    (Ok((text, warnings)), Some(expected)) => {
                        assert_eq!(warnings, gen_diags, "{p} {part}");
                        assert_eq!(text, expected, "{p} {part}");
                    }
                    (Err(d), None) => assert_eq!(d, gen_diags, "{p} {part}"),
                    (s, _) => panic!(
                        "{p} {part}: stream {:?}, tree {}",
                        s.is_ok(),
                        tree.is_some()
                    ),
                }
            }
        }
    }
    assert!(
        clean > 5 && refused > 150,
        "{clean} clean, {refused} refused"
    );
}

#[test]
fn valid_samples_pass() {
    let dir = repo().join("tests/fixtures/valid-objects");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let rel = rel(&path);
        let out = raykueue(&["validate", &rel]);
        assert_eq!(out.status.code(), Some(0), "{rel}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{rel}");
        n += 1;
    }
    assert!(n >= 4);
}

#[test]
fn exit_codes_and_what_is_not_validated() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    // Unreadable file, broken YAML, a document that is not an object: 2.
    let missing = dir.path().join("missing.yaml");
    let out = raykueue(&["validate", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let broken = write("broken.yaml", "kind: [\n");
    assert_eq!(raykueue(&["validate", &broken]).status.code(), Some(2));
    let list = write("list.yaml", "- a\n- b\n");
    let out = raykueue(&["validate", &list]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("[RK056]"), "{}", stderr(&out));
    // A kind without a schema is reported, not validated: 0, or 1 with --deny-warnings.
    let deploy = write(
        "deploy.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n",
    );
    let out = raykueue(&["validate", &deploy]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("[RK055]"), "{}", stderr(&out));
    let out = raykueue(&["validate", "--deny-warnings", &deploy]);
    assert_eq!(out.status.code(), Some(1));
    // A deprecated Kueue version says which one is validated.
    let old = write(
        "old.yaml",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: q\nspec:\n  cohort: c\n",
    );
    let err = stderr(&raykueue(&["validate", &old]));
    assert!(err.contains("kueue.x-k8s.io/v1beta2"), "{err}");
    // Nothing to validate: a warning.
    let empty = write("empty.yaml", "# nothing\n---\n");
    let out = raykueue(&["validate", &empty]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("[RK057]"), "{}", stderr(&out));
    // A required field the API server would default: a warning for a user's manifest.
    let rc = write(
        "rc.yaml",
        "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: c\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers: [{name: h, image: i}]\n  workerGroupSpecs:\n  - groupName: w\n    maxReplicas: 2\n    template:\n      spec:\n        containers: [{name: w, image: i}]\n",
    );
    let out = raykueue(&["validate", &rc]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("[RK051]") && err.contains("minReplicas"),
        "{err}"
    );
    assert!(err.contains("default it to 0"), "{err}");
    // Items of a v1 List are validated in place; several files, one run, all findings.
    let items = write(
        "items.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: ray\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  dat: {}\n",
    );
    let out = raykueue(&["validate", "--error-format", "json", &items, &old, &deploy]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let lines: Vec<serde_json::Value> = err
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let bad = lines.iter().find(|l| l["code"] == "RK050").unwrap();
    assert_eq!(bad["path"], "ConfigMap/c: dat");
    assert_eq!(bad["line"], 12);
    assert_eq!(bad["hint"], "did you mean `data`?");
    assert_eq!(
        lines.iter().filter(|l| l["code"] == "RK055").count(),
        2,
        "{err}"
    );
}

#[test]
fn the_embedded_schema_table_is_fresh() {
    let shared = repo().join("../shared/schemas");
    if !shared.is_dir() {
        skip(
            "schema table freshness",
            &format!("{} is absent", shared.display()),
        );
        return;
    }
    let module_dir = |module: &str, version: &str| {
        crate::common::go_module(module, version)
            .ok_or_else(|| format!("{module}@{version}: no Go or no module proxy"))
    };
    if let Err(e) = module_dir(import::MANAGED[0].module, import::MANAGED[0].version) {
        skip("schema table freshness", &e);
        return;
    }
    let fresh = import::import(&shared, &module_dir).unwrap();
    let committed = std::fs::read_to_string(repo().join(import::OUTPUT)).unwrap();
    assert!(
        fresh == committed,
        "{} is stale: run `cargo run -p xtask -- import-schemas` and commit the result",
        import::OUTPUT
    );
}

/// Argo CD and Flux objects and the repository Secret are checked against their CRDs and the
/// core schema in `gen` (none is skipped as a kind without a schema any more).
#[test]
fn gitops_objects_are_validated_against_their_crds() {
    let resolved = raykueue::api::input::resolve::resolve("profiles/examples/prod.yaml").unwrap();
    let compiled = raykueue::api::compile::compile(&resolved, false).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for r in &compiled.bundle.objects {
        let kind = r.object.value["kind"].as_str().unwrap().to_owned();
        match raykueue::api::output::validate::object(&r.object.value) {
            raykueue::api::output::validate::Verdict::Checked(v) => {
                assert!(v.is_empty(), "{kind}: {v:?}");
                kinds.insert(kind);
            }
            raykueue::api::output::validate::Verdict::Unknown { message, .. } => {
                panic!("{kind} is not validated: {message}")
            }
        }
    }
    for kind in [
        "Application",
        "Secret",
        "GitRepository",
        "HelmRepository",
        "OCIRepository",
        "HelmRelease",
        "Kustomization",
    ] {
        assert!(kinds.contains(kind), "{kind} in {kinds:?}");
    }
}
