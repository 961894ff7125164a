//! The container image and the CI examples, checked without a container runtime (CI has
//! none): the Dockerfile's stages, the README's "Container" commands against the Dockerfile,
//! the CI files' structure and commands against the README's, and those commands run with the
//! binary instead of the image.

use crate::common::{raykueue_in, repo, stderr};
use serde_json::Value;
use std::collections::BTreeMap;

/// One Dockerfile instruction: keyword (upper case) and its arguments as written.
#[derive(Debug, Clone)]
struct Instruction {
    keyword: String,
    args: String,
}

/// A build stage: its `FROM` image, its name (`AS name`), its instructions after `FROM`.
#[derive(Debug)]
struct Stage {
    image: String,
    name: Option<String>,
    body: Vec<Instruction>,
}

impl Stage {
    fn all(&self, keyword: &str) -> Vec<&str> {
        self.body
            .iter()
            .filter(|i| i.keyword == keyword)
            .map(|i| i.args.as_str())
            .collect()
    }

    /// The last value of an instruction that is set once per stage (WORKDIR, USER, ENTRYPOINT).
    fn last(&self, keyword: &str) -> &str {
        self.all(keyword)
            .last()
            .copied()
            .unwrap_or_else(|| panic!("{:?}: no {keyword}", self.name))
    }
}

/// The Dockerfile's stages: comments and blank lines dropped, `\` continuations joined.
fn stages() -> Vec<Stage> {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let mut logical = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let t = line.trim();
        if pending.is_empty() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
        } else {
            pending.push_str(t);
            logical.push(std::mem::take(&mut pending));
        }
    }
    let mut out: Vec<Stage> = Vec::new();
    for l in logical {
        let (keyword, args) = l.split_once(char::is_whitespace).unwrap();
        let (keyword, args) = (keyword.to_ascii_uppercase(), args.trim().to_owned());
        if keyword == "FROM" {
            let words: Vec<&str> = args.split_whitespace().collect();
            let name = match words.as_slice() {
                [_] => None,
                [_, as_, n] if as_.eq_ignore_ascii_case("as") => Some((*n).to_owned()),
                other => panic!("FROM {other:?}"),
            };
            out.push(Stage {
                image: words[0].to_owned(),
                name,
                body: Vec::new(),
            });
        } else {
            out.last_mut()
                .expect("FROM comes first")
                .body
                .push(Instruction { keyword, args });
        }
    }
    out
}

/// A shell word splitter for the documented commands: whitespace outside double quotes.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut cur, mut quoted, mut any) = (String::new(), false, false);
    for c in line.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    assert!(!quoted, "unbalanced quotes: {line}");
    if any {
        out.push(cur);
    }
    out
}

/// The `sh` code blocks' lines of a Markdown section (`## heading` up to the next `## `).
fn section_commands(file: &str, heading: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let section = text
        .split(&format!("\n## {heading}\n"))
        .nth(1)
        .unwrap_or_else(|| panic!("{file} has a \"{heading}\" section"));
    let section = section.split("\n## ").next().unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_sh = line == "```sh";
            continue;
        }
        if in_sh && !line.trim().is_empty() {
            out.push(line.to_owned());
        }
    }
    out
}

/// A `docker run` command: its options before the image, the image, raykueue's arguments.
#[derive(Debug, PartialEq)]
struct Run {
    options: Vec<String>,
    image: String,
    args: Vec<String>,
}

fn docker_run(line: &str) -> Run {
    let w = words(line);
    assert_eq!(&w[..2], ["docker", "run"], "{line}");
    let mut i = 2;
    let mut options = Vec::new();
    while w[i].starts_with('-') {
        options.push(w[i].clone());
        // `--rm` alone; `-u`, `-v` with a value.
        if w[i] != "--rm" {
            i += 1;
            options.push(w[i].clone());
        }
        i += 1;
    }
    Run {
        options,
        image: w[i].clone(),
        args: w[i + 1..].to_vec(),
    }
}

#[test]
fn the_dockerfile_builds_pinned_and_ships_the_binary_alone() {
    let stages = stages();
    let names: Vec<Option<&str>> = stages.iter().map(|s| s.name.as_deref()).collect();
    assert_eq!(names, [Some("build"), Some("debug"), None]);
    let build = &stages[0];
    // A Rust image pinned to a whole version (not `rust:1` or `latest`), on the Debian release
    // the runtime images are built from (bookworm = Debian 12), not older than the crate's MSRV.
    let tag = build
        .image
        .strip_prefix("docker.io/library/rust:")
        .expect("the official Rust image");
    let version = tag.strip_suffix("-slim-bookworm").expect("slim, bookworm");
    let v: Vec<u32> = version.split('.').map(|n| n.parse().unwrap()).collect();
    assert_eq!(v.len(), 3, "a pinned version: {version}");
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let msrv: Vec<u32> = manifest
        .lines()
        .find_map(|l| l.strip_prefix("rust-version = \""))
        .unwrap()
        .trim_end_matches('"')
        .split('.')
        .map(|n| n.parse().unwrap())
        .collect();
    assert!(
        v[..2] >= msrv[..],
        "rust {version} is older than rust-version"
    );
    assert_eq!(build.all("RUN"), ["cargo build --release --locked"]);
    assert_eq!(build.all("COPY"), [". ."]);
    let workdir = build.last("WORKDIR");

    // Both images: distroless cc (glibc and libgcc, which a Rust binary links against) on
    // Debian 12, the binary from the build stage on distroless's PATH, the plugin file where
    // argocd-cmp-server reads it, a numeric non-root user, `raykueue` as the entrypoint.
    // (GoogleContainerTools/distroless@cd080764 `static/static.bzl`: PATH has /usr/local/bin,
    // the debug variants add /busybox; `common/variables.bzl`: nonroot is 65532.)
    for (stage, base) in [
        (&stages[1], "gcr.io/distroless/cc-debian12:debug-nonroot"),
        (&stages[2], "gcr.io/distroless/cc-debian12:nonroot"),
    ] {
        assert_eq!(stage.image, base);
        assert_eq!(
            stage.all("COPY"),
            [
                format!("--from=build {workdir}/target/release/raykueue /usr/local/bin/raykueue")
                    .as_str(),
                "argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml",
            ]
        );
        assert!(manifest.contains("[[bin]]\nname = \"raykueue\""));
        assert!(
            stage.all("RUN").is_empty(),
            "nothing runs in a distroless stage"
        );
        let user = stage.last("USER");
        let uid: u32 = user.split(':').next().unwrap().parse().expect("numeric");
        assert_ne!(uid, 0);
        assert_eq!(stage.last("ENTRYPOINT"), r#"["raykueue"]"#);
        assert_eq!(stage.last("WORKDIR"), "/work");
    }

    // The build context keeps what the build needs and leaves target/ out.
    let ignore = std::fs::read_to_string(repo().join(".dockerignore")).unwrap();
    let ignored: Vec<&str> = ignore
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert!(ignored.contains(&"target"));
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "src",
        "templates",
        "profiles",
        "assets",
        "benches",
        "xtask",
        "argocd",
    ] {
        assert!(repo().join(needed).exists(), "{needed}");
        assert!(
            !ignored.contains(&needed),
            "{needed} is left out of the build"
        );
    }
}

/// The README's "Container" commands: the image they build is the Dockerfile's, they mount
/// the checkout where the image works, and (with the binary instead of the image) they pass.
#[test]
fn the_readme_runs_the_image_the_dockerfile_builds() {
    let stages = stages();
    let stage_names: Vec<&str> = stages.iter().filter_map(|s| s.name.as_deref()).collect();
    let workdir = stages.last().unwrap().last("WORKDIR");
    let mut built = BTreeMap::new();
    let mut runs = Vec::new();
    let commands: Vec<String> = section_commands("README.md", "Container")
        .into_iter()
        .chain(section_commands("docs/integrations.md", "Container"))
        .collect();
    for line in &commands {
        let w = words(line);
        match (w[0].as_str(), w[1].as_str()) {
            ("docker", "build") => {
                assert_eq!(
                    w.last().unwrap(),
                    ".",
                    "{line}: the repository is the context"
                );
                let opt = |name: &str| w.iter().position(|x| x == name).map(|i| w[i + 1].clone());
                let target = opt("--target");
                if let Some(t) = &target {
                    assert!(stage_names.contains(&t.as_str()), "{line}: no stage {t}");
                }
                built.insert(opt("-t").expect("a tag"), target);
            }
            ("docker", "run") => runs.push(docker_run(line)),
            _ => panic!("not a docker command: {line}"),
        }
    }
    assert_eq!(
        built.get("raykueue"),
        Some(&None),
        "the default image is tagged raykueue"
    );
    assert!(runs.len() >= 3);
    let mount = format!("$PWD:{workdir}");
    for r in &runs {
        assert!(
            built.contains_key(&r.image),
            "{r:?}: an image no command builds"
        );
        assert!(
            r.options.windows(2).any(|o| o == ["-v", mount.as_str()]),
            "{r:?}"
        );
        assert_eq!(r.options[0], "--rm");
        // Writing runs as the user who owns the checkout.
        let writes = r.args.iter().any(|a| a == "--out");
        let as_user = r.options.windows(2).any(|o| o[0] == "-u");
        assert_eq!(writes, as_user, "{r:?}");
    }
    // The README's runs, in order, with the binary in a checkout (the example profile only).
    let checkout = checkout();
    for r in runs.iter().filter(|r| r.image == "raykueue") {
        let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
        let out = raykueue_in(checkout.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
}

/// A folder holding what the documented commands name: `profiles/examples/prod.yaml`.
fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("profiles/examples")).unwrap();
    std::fs::copy(
        repo().join("profiles/examples/prod.yaml"),
        dir.path().join("profiles/examples/prod.yaml"),
    )
    .unwrap();
    dir
}

/// raykueue's arguments of the README's `docker run` commands.
fn readme_runs() -> Vec<Run> {
    section_commands("README.md", "Container")
        .iter()
        .filter(|l| l.starts_with("docker run"))
        .map(|l| docker_run(l))
        .collect()
}

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(repo().join(path)).unwrap();
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The CI examples: a GitHub Actions workflow and a GitLab CI job, each well-formed, each
/// running exactly the README's `check` and `gen --check`; run with the binary on a checkout
/// with a fresh bundle they pass, and `gen --check` fails once the profile changes.
#[test]
fn the_ci_examples_run_the_readmes_commands() {
    let readme = readme_runs();
    let read_only: Vec<&Run> = readme
        .iter()
        .filter(|r| !r.args.iter().any(|a| a == "--out"))
        .collect();
    let wanted: Vec<&Vec<String>> = read_only.iter().map(|r| &r.args).collect();
    assert_eq!(wanted.len(), 2);
    assert_eq!(wanted[0][0], "check");
    assert!(wanted[1][0] == "gen" && wanted[1].contains(&"--check".to_owned()));

    // GitHub Actions (the workflow syntax's required keys: `on`, `jobs`; a job's `runs-on`
    // and `steps`; a step is `uses` or `run`).
    let gh = yaml("examples/ci/github-actions.yml");
    assert!(gh["on"].is_object(), "triggers");
    assert_eq!(gh["permissions"]["contents"], "read");
    let jobs = gh["jobs"].as_object().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let job = jobs.values().next().unwrap();
    assert!(job["runs-on"].is_string());
    let image_var = job["env"]["RAYKUEUE_IMAGE"]
        .as_str()
        .expect("RAYKUEUE_IMAGE");
    assert!(image_var.contains(':'), "a tagged image: {image_var}");
    let mut gh_runs = Vec::new();
    for step in job["steps"].as_array().unwrap() {
        let keys: Vec<&str> = step
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| *k == "uses" || *k == "run")
            .collect();
        assert_eq!(keys.len(), 1, "{step}");
        if let Some(uses) = step["uses"].as_str() {
            let (action, version) = uses.split_once('@').expect("a pinned action");
            assert_eq!(action, "actions/checkout");
            assert!(version.starts_with('v'), "{uses}");
        } else {
            let run = docker_run(step["run"].as_str().unwrap());
            assert_eq!(run.image, "$RAYKUEUE_IMAGE");
            gh_runs.push(run);
        }
    }
    let gh_args: Vec<&Vec<String>> = gh_runs.iter().map(|r| &r.args).collect();
    assert_eq!(gh_args, wanted, "the workflow runs the README's commands");
    for (ci, readme) in gh_runs.iter().zip(&read_only) {
        assert_eq!(ci.options, readme.options, "the same docker options");
    }

    // GitLab CI: a job in the image's debug variant (GitLab needs a shell in the job's image)
    // with its entrypoint cleared, its `script` the README's commands without `docker run`.
    let gl = yaml("examples/ci/gitlab-ci.yml");
    let jobs = gl.as_object().unwrap();
    assert_eq!(jobs.len(), 1);
    let job = jobs.values().next().unwrap();
    assert_eq!(job["stage"], "test");
    let image = job["image"]["name"].as_str().unwrap();
    assert!(image.ends_with("-debug"), "{image}: the `debug` target");
    assert_eq!(job["image"]["entrypoint"], serde_json::json!([""]));
    let gl_args: Vec<Vec<String>> = job["script"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let w = words(l.as_str().unwrap());
            assert_eq!(w[0], "raykueue");
            w[1..].to_vec()
        })
        .collect();
    let gl_args: Vec<&Vec<String>> = gl_args.iter().collect();
    assert_eq!(gl_args, wanted, "the GitLab job runs the README's commands");

    // What they do, with the binary: a fresh bundle passes, a changed profile fails.
    let checkout = checkout();
    let write = readme
        .iter()
        .find(|r| r.args.contains(&"--out".to_owned()))
        .unwrap();
    let out = raykueue_in(checkout.path(), &argv(&write.args));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for args in &wanted {
        let out = raykueue_in(checkout.path(), &argv(args));
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let profile = checkout.path().join("profiles/examples/prod.yaml");
    let text = std::fs::read_to_string(&profile).unwrap();
    std::fs::write(
        &profile,
        text.replace("autoscale: {min: 1, max: 2}", "autoscale: {min: 1, max: 3}"),
    )
    .unwrap();
    let out = raykueue_in(checkout.path(), &argv(wanted[1]));
    assert_eq!(out.status.code(), Some(1), "a stale bundle fails CI");
}

fn argv(a: &[String]) -> Vec<&str> {
    a.iter().map(String::as_str).collect()
}

/// `check-jsonschema` (PyPI) and the schema it ships for `name`, or a skip when absent
/// (`.ci/run` installs check-jsonschema 0.39.0).
fn check_jsonschema(
    test: &str,
    name: &str,
    file: &std::path::Path,
) -> Option<std::process::Output> {
    let out = std::process::Command::new("check-jsonschema")
        .args(["--builtin-schema", name])
        .arg(file)
        .output();
    if out.is_err() {
        crate::common::skip(test, "no check-jsonschema");
    }
    out.ok()
}

/// The CI examples against the published schemas of their formats, as check-jsonschema
/// 0.39.0 ships them (`vendor.github-workflows`: SchemaStore's github-workflow.json;
/// `vendor.gitlab-ci`: GitLab's ci.json): valid as committed, and a misspelt key in each
/// (a copy) is refused, so the check has teeth.
#[test]
fn the_ci_examples_match_their_published_schemas() {
    let name = "the_ci_examples_match_their_published_schemas";
    let dir = tempfile::tempdir().unwrap();
    for (file, schema, good, bad) in [
        (
            "examples/ci/github-actions.yml",
            "vendor.github-workflows",
            "    runs-on:",
            "    run-on:",
        ),
        (
            "examples/ci/gitlab-ci.yml",
            "vendor.gitlab-ci",
            "  script:",
            "  scripts:",
        ),
    ] {
        let path = repo().join(file);
        let Some(out) = check_jsonschema(name, schema, &path) else {
            return;
        };
        assert_eq!(
            out.status.code(),
            Some(0),
            "{file}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(good).count(), 1, "{file}: {good}");
        let broken = dir.path().join(path.file_name().unwrap());
        std::fs::write(&broken, text.replace(good, bad)).unwrap();
        let out = check_jsonschema(name, schema, &broken).unwrap();
        assert_eq!(out.status.code(), Some(1), "{file} with {bad}");
    }
}
