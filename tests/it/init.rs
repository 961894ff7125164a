//! `raykueue init` and `raykueue completions`: from zero to a bundle whose workloads can start.
//! Every shipped profile is written into a temporary folder, generated from there, and every
//! RayJob entrypoint and Serve import is shown to resolve to a file of a ConfigMap mounted in
//! its pods; the example programs compile with Python.

use crate::common::{raykueue, read_tree, repo, shipped, stderr, stdout};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;

fn init(dir: &Path, from: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["init", "--from", from];
    args.extend_from_slice(extra);
    args.push(dir.to_str().unwrap());
    raykueue(&args)
}

fn yaml(path: &Path) -> Value {
    let docs: Vec<Value> = serde_saphyr::from_multiple(&fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(docs.len(), 1, "{}", path.display());
    docs.into_iter().next().unwrap()
}

/// The pod templates of a Ray object's cluster spec.
fn pod_templates(cluster: &Value) -> Vec<&Value> {
    let mut out = vec![&cluster["headGroupSpec"]["template"]];
    if let Some(groups) = cluster["workerGroupSpecs"].as_array() {
        out.extend(groups.iter().map(|g| &g["template"]));
    }
    out
}

/// Mount path → file names, of the ConfigMaps mounted in *every* given pod template's Ray
/// container (index 0), read from the workload folder's `configmap.yaml`.
fn mounted_files(folder: &Path, pods: &[&Value]) -> BTreeMap<String, BTreeSet<String>> {
    let configmaps: BTreeMap<String, BTreeSet<String>> = if folder.join("configmap.yaml").exists() {
        let cm = yaml(&folder.join("configmap.yaml"));
        let keys = cm["data"].as_object().unwrap().keys().cloned().collect();
        [(cm["metadata"]["name"].as_str().unwrap().to_owned(), keys)].into()
    } else {
        BTreeMap::new()
    };
    let mut common: Option<BTreeMap<String, BTreeSet<String>>> = None;
    for pod in pods {
        let spec = &pod["spec"];
        let volumes: BTreeMap<&str, &str> = spec["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| Some((v["name"].as_str()?, v["configMap"]["name"].as_str()?)))
            .collect();
        let mut here = BTreeMap::new();
        for m in spec["containers"][0]["volumeMounts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            // Other volumes (a Job's /dev/shm) are no ConfigMap.
            let Some(cm) = volumes.get(m["name"].as_str().unwrap()) else {
                continue;
            };
            let files = configmaps.get(*cm).unwrap_or_else(|| {
                panic!("{}: ConfigMap {cm} is not in the folder", folder.display())
            });
            here.insert(m["mountPath"].as_str().unwrap().to_owned(), files.clone());
        }
        common = Some(match common {
            None => here,
            Some(c) => c
                .into_iter()
                .filter(|(k, v)| here.get(k) == Some(v))
                .collect(),
        });
    }
    common.unwrap_or_default()
}

/// Does `path` name a file in one of the mounts?
fn resolves(mounts: &BTreeMap<String, BTreeSet<String>>, path: &str) -> bool {
    mounts.iter().any(|(dir, files)| {
        path.strip_prefix(dir.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .is_some_and(|f| files.contains(f))
    })
}

#[test]
fn init_then_gen_gives_workloads_whose_programs_are_mounted() {
    for profile in shipped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("start");
        let out = init(&dir, profile, &[]);
        assert_eq!(out.status.code(), Some(0), "{profile}: {}", stderr(&out));
        let deploy = dir.join("deploy");
        let gen_out = raykueue(&[
            "gen",
            "--profile",
            dir.join("profile.yaml").to_str().unwrap(),
            "--out",
            deploy.to_str().unwrap(),
        ]);
        assert_eq!(
            gen_out.status.code(),
            Some(0),
            "{profile}: {}",
            stderr(&gen_out)
        );

        let mut checked = 0;
        for entry in fs::read_dir(deploy.join("workloads")).unwrap() {
            let folder = entry.unwrap().path();
            if !folder.is_dir() {
                continue;
            }
            if folder.join("rayjob.yaml").exists() {
                let job = yaml(&folder.join("rayjob.yaml"));
                let cluster = &job["spec"]["rayClusterSpec"];
                // The entrypoint's driver runs on the head; the programs it starts on workers
                // import nothing from the folder, but every pod mounts it alike.
                let mounts = mounted_files(&folder, &pod_templates(cluster));
                let entrypoint = job["spec"]["entrypoint"].as_str().unwrap();
                let files: Vec<&str> = entrypoint
                    .split_whitespace()
                    .filter(|w| w.starts_with('/'))
                    .collect();
                assert!(!files.is_empty(), "{profile}: {entrypoint} runs a file");
                for f in files {
                    assert!(
                        resolves(&mounts, f),
                        "{profile} {}: `{f}` is in no mounted ConfigMap {mounts:?}",
                        folder.display()
                    );
                    checked += 1;
                }
            }
            if folder.join("rayservice.yaml").exists() {
                let svc = yaml(&folder.join("rayservice.yaml"));
                let head = &svc["spec"]["rayClusterConfig"]["headGroupSpec"]["template"];
                let mounts = mounted_files(&folder, &[head]);
                let config: Value =
                    serde_saphyr::from_str(svc["spec"]["serveConfigV2"].as_str().unwrap()).unwrap();
                for app in config["applications"].as_array().unwrap() {
                    let import = app["import_path"].as_str().unwrap();
                    let module = import.split(':').next().unwrap().split('.').next().unwrap();
                    let path = app["runtime_env"]["env_vars"]["PYTHONPATH"]
                        .as_str()
                        .unwrap_or_default();
                    assert!(
                        path.split(':')
                            .any(|d| resolves(&mounts, &format!("{d}/{module}.py"))),
                        "{profile}: `{import}` is not found on PYTHONPATH `{path}` in {mounts:?}"
                    );
                    checked += 1;
                }
            }
            if folder.join("job.yaml").exists() {
                let job = yaml(&folder.join("job.yaml"));
                let template = &job["spec"]["template"];
                let mounts = mounted_files(&folder, &[template]);
                let command = template["spec"]["containers"][0]["command"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                for f in command
                    .iter()
                    .filter_map(Value::as_str)
                    .filter(|w| w.starts_with('/'))
                {
                    assert!(
                        resolves(&mounts, f),
                        "{profile}: `{f}` is in no mounted ConfigMap {mounts:?}"
                    );
                    checked += 1;
                }
            }
            if folder.join("raycluster.yaml").exists() {
                let rc = yaml(&folder.join("raycluster.yaml"));
                let mounts = mounted_files(&folder, &pod_templates(&rc["spec"]));
                assert!(
                    resolves(&mounts, "/home/ray/scripts/gpu_check.py"),
                    "{profile}: the README's `kubectl exec … gpu_check.py` needs it mounted"
                );
                checked += 1;
            }
        }
        // The upstream Azure example's CPU Job (`autoscale`) runs a shell line and no file.
        let runs_files = crate::common::shipped_text(profile).contains("scripts: [");
        assert!(
            checked > 0 || !runs_files,
            "{profile}: some workload was checked"
        );

        // The ConfigMaps hold the programs `init` wrote, byte for byte.
        let written = read_tree(&dir.join("scripts"));
        for (rel, bytes) in read_tree(&deploy.join("workloads")) {
            if rel.ends_with("configmap.yaml") {
                let cm = yaml(&deploy.join("workloads").join(&rel));
                for (key, text) in cm["data"].as_object().unwrap() {
                    assert_eq!(
                        written.get(key).map(Vec::as_slice),
                        Some(text.as_str().unwrap().as_bytes()),
                        "{profile} {rel}: {key}"
                    );
                }
                assert!(!bytes.is_empty());
            }
        }
    }
}

#[test]
fn the_shipped_profile_and_its_init_copy_generate_the_same_bundle() {
    for profile in shipped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("start");
        assert_eq!(init(&dir, profile, &[]).status.code(), Some(0));
        let a = tmp.path().join("a");
        let b = tmp.path().join("b");
        for (p, out) in [
            (profile.to_string(), &a),
            (dir.join("profile.yaml").display().to_string(), &b),
        ] {
            let o = raykueue(&["gen", "--profile", &p, "--out", out.to_str().unwrap()]);
            assert_eq!(o.status.code(), Some(0), "{p}: {}", stderr(&o));
        }
        assert_eq!(read_tree(&a), read_tree(&b), "{profile}");
    }
}

#[test]
fn init_writes_the_schema_its_profile_names_and_a_readme_with_the_next_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x");
    let out = init(&dir, "team", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "messages go to stderr");
    let profile = fs::read_to_string(dir.join("profile.yaml")).unwrap();
    assert_eq!(
        profile.lines().next(),
        Some("# yaml-language-server: $schema=profile.schema.json")
    );
    let schema = raykueue(&["schema"]);
    assert_eq!(
        fs::read_to_string(dir.join("profile.schema.json")).unwrap(),
        stdout(&schema)
    );
    let readme = fs::read_to_string(dir.join("README.md")).unwrap();
    for command in [
        "raykueue gen --profile profile.yaml --out deploy",
        "deploy/infra/up.sh",
        "kubectl apply -k deploy/workloads/aurora-finetune",
    ] {
        assert!(
            readme.contains(command),
            "README lacks `{command}`:\n{readme}"
        );
    }
    let mut scripts: Vec<String> = read_tree(&dir.join("scripts")).into_keys().collect();
    scripts.sort();
    assert_eq!(
        scripts,
        [
            "batch.py",
            "gpu_check.py",
            "gpu_verify.py",
            "serve_app.py",
            "train.py"
        ]
    );
    // `--from` defaults to team.
    let default = tmp.path().join("d");
    assert_eq!(
        raykueue(&["init", default.to_str().unwrap()]).status.code(),
        Some(0)
    );
    assert_eq!(read_tree(&default), read_tree(&dir));
}

#[test]
fn init_refuses_to_overwrite_and_names_the_files_unless_forced() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("x");
    fs::create_dir_all(dir.join("scripts")).unwrap();
    fs::write(dir.join("profile.yaml"), "mine\n").unwrap();
    fs::write(dir.join("scripts/train.py"), "mine\n").unwrap();
    fs::write(dir.join("notes.txt"), "not raykueue's\n").unwrap();
    let out = init(&dir, "single", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("profile.yaml") && err.contains("train.py"),
        "{err}"
    );
    assert!(
        !err.contains("README.md"),
        "only existing files are named: {err}"
    );
    // Nothing was written.
    assert_eq!(
        fs::read_to_string(dir.join("profile.yaml")).unwrap(),
        "mine\n"
    );
    assert!(!dir.join("README.md").exists());

    let forced = init(&dir, "single", &["--force"]);
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert!(
        fs::read_to_string(dir.join("profile.yaml"))
            .unwrap()
            .contains("name: single")
    );
    assert_ne!(
        fs::read_to_string(dir.join("scripts/train.py")).unwrap(),
        "mine\n"
    );
    assert_eq!(
        fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "not raykueue's\n"
    );

    let unknown = raykueue(&["init", "--from", "tem", dir.to_str().unwrap()]);
    assert_eq!(unknown.status.code(), Some(2), "{}", stderr(&unknown));
    // DIR is a file: an I/O error, exit 2, no panic.
    let file = tmp.path().join("file");
    fs::write(&file, "x").unwrap();
    let on_file = init(&file, "team", &[]);
    assert_eq!(on_file.status.code(), Some(2), "{}", stderr(&on_file));
    assert!(
        stderr(&on_file).contains("cannot write"),
        "{}",
        stderr(&on_file)
    );
}

/// `python3 -m py_compile` on every example program. Skips visibly without python3, except
/// under CI.
#[test]
fn example_programs_compile_with_python() {
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        crate::common::skip(
            "example_programs_compile_with_python",
            "python3 is not installed",
        );
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let programs: Vec<_> = raykueue::api::input::resolve::SHIPPED_SCRIPTS
        .iter()
        .collect();
    assert_eq!(programs.len(), 5);
    for (rel, text) in programs {
        // The embedded text is the file in profiles/ (what init writes and the repo shows).
        assert_eq!(
            fs::read_to_string(repo().join("profiles").join(rel)).unwrap(),
            *text
        );
        let path = tmp.path().join(rel.rsplit('/').next().unwrap());
        fs::write(&path, text).unwrap();
        let out = Command::new("python3")
            .args(["-m", "py_compile"])
            .arg(&path)
            .env("PYTHONPYCACHEPREFIX", tmp.path().join("cache"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{rel}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn completions_are_generated_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = raykueue(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let text = stdout(&out);
        // fish writes long flags as `-l profile`.
        for word in ["init", "gen", "profile", "completions", "kuberay-gpu"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let bad = raykueue(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
    if Command::new("bash").arg("--version").output().is_ok() {
        let script = stdout(&raykueue(&["completions", "bash"]));
        let n = Command::new("bash")
            .args(["-n", "-c", &script])
            .output()
            .unwrap();
        assert!(n.status.success(), "{}", String::from_utf8_lossy(&n.stderr));
    }
}

/// The repository README leads from zero to a running job through `init`, and docs/cli.md
/// shows how to install the completions.
#[test]
fn the_readme_shows_init_as_the_path_from_zero_to_a_running_job() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find("## From zero to a running job")
        .expect("a From zero section");
    let section = &readme[start..];
    let mut at = 0;
    for step in [
        "raykueue init --from team my-cluster",
        "raykueue gen --profile profile.yaml --out deploy",
        "deploy/infra/up.sh",
        "kubectl apply -k deploy/workloads/aurora-finetune",
        "deploy/infra/smoke.sh",
    ] {
        let found = section[at..].find(step).unwrap_or_else(|| {
            panic!("README's From zero section lacks `{step}` after the steps before it")
        });
        at += found + step.len();
    }
    // Each shell's one-line completion install is documented in docs/cli.md.
    let cli = fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(
            cli.contains(&format!("raykueue completions {shell} ")),
            "docs/cli.md lacks the {shell} completion install"
        );
    }
}

/// The README's `simulate -p profile.yaml -s scenario.yaml` runs as written in a folder `init`
/// made, for every shipped profile that queues workloads; one that queues none gets no scenario.
#[test]
fn the_readmes_simulate_line_runs_in_a_folder_init_made() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let line = "raykueue simulate -p profile.yaml -s scenario.yaml";
    assert!(readme.contains(line), "README.md shows `{line}`");
    for from in crate::common::shipped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("c");
        assert!(init(&dir, from, &[]).status.success(), "init --from {from}");
        // An overlay (`extends:`) inherits its parent's queues.
        let text = crate::common::shipped_text(from);
        let queued = text.contains("\nqueues:") || text.contains("\nextends: team");
        assert_eq!(
            dir.join("scenario.yaml").is_file(),
            queued,
            "{from}: scenario.yaml"
        );
        if !queued {
            continue;
        }
        let out = crate::common::raykueue_in(
            &dir,
            &["simulate", "-p", "profile.yaml", "-s", "scenario.yaml"],
        );
        let said = crate::common::stdout(&out);
        assert!(
            out.status.success(),
            "{from}: {}",
            crate::common::stderr(&out)
        );
        assert!(
            said.contains("Admitted"),
            "{from}: something is admitted:\n{said}"
        );
    }
}
