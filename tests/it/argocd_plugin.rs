//! The Argo CD Config Management Plugin (`argocd/plugin.yaml`, `gitops.argocd.plugin`): the
//! plugin file is one Argo CD v3.5.1 reads, its `generate` command run as the sidecar runs it
//! prints exactly the stream that would otherwise be committed, its discovery finds the
//! plugin's profiles and nothing else, and the sidecar patch fits the upstream repo-server.

use crate::cli::parse_stream;
use crate::common::{raykueue, read_tree, repo, skip, stderr, stdout};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile of this repository that uses the plugin, and the committed one it builds on.
const PLUGIN_PROFILE: &str = "profiles/examples/prod.raykueue.yaml";
const COMMITTED_PROFILE: &str = "profiles/examples/prod.yaml";

// argo-cd@v3.5.1 `cmpserver/plugin/config.go`: `PluginConfig` and what it holds. Argo CD
// reads it with Go's JSON rules, which ignore an unknown key; these refuse one, so a misspelt
// key (`discovery:`) fails here instead of being silently ignored by Argo CD.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PluginConfig {
    api_version: String,
    kind: String,
    metadata: Metadata,
    spec: PluginConfigSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metadata {
    name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PluginConfigSpec {
    #[serde(default)]
    version: String,
    #[serde(default)]
    init: Option<PluginCommand>,
    generate: PluginCommand,
    #[serde(default)]
    discover: Option<Discover>,
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(default)]
    preserve_file_mode: bool,
    #[serde(default)]
    provide_git_creds: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginCommand {
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Discover {
    #[serde(default)]
    find: Option<Find>,
    #[serde(default)]
    file_name: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Find {
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    glob: String,
}

fn plugin() -> PluginConfig {
    let text = std::fs::read_to_string(repo().join("argocd/plugin.yaml")).unwrap();
    serde_saphyr::from_str(&text).expect("argocd/plugin.yaml is a ConfigManagementPlugin")
}

/// `ValidatePluginConfig` of argo-cd@v3.5.1 `cmpserver/plugin/config.go`, and what the
/// operator manual (`docs/operator-manual/config-management-plugins.md`) says of the file.
#[test]
fn the_plugin_file_is_one_argo_cd_accepts() {
    let p = plugin();
    assert_eq!(p.api_version, "argoproj.io/v1alpha1");
    assert_eq!(p.kind, "ConfigManagementPlugin");
    assert!(!p.metadata.name.is_empty());
    assert!(!p.spec.generate.command.is_empty());
    // Without `version` the plugin's socket, and so the name Applications use, is the bare
    // `metadata.name` (`PluginConfig.Address`).
    assert_eq!(p.spec.version, "");
    // Nothing runs before `generate`, no parameter is announced, the repository's file modes
    // and Git credentials stay with Argo CD.
    assert!(p.spec.init.is_none() && p.spec.parameters.is_none());
    assert!(!p.spec.preserve_file_mode && !p.spec.provide_git_creds);
    // "Only one of fileName, find.glob, or find.command should be specified".
    let d = p.spec.discover.expect("discovery is configured");
    let find = d.find.unwrap_or(Find {
        command: Vec::new(),
        args: Vec::new(),
        glob: String::new(),
    });
    let given = [
        !d.file_name.is_empty(),
        !find.glob.is_empty(),
        !find.command.is_empty() || !find.args.is_empty(),
    ];
    assert_eq!(given, [true, false, false], "discovery by fileName only");
    // A pattern of `filepath.Glob` in the Application's folder: no folder, no `**`.
    assert!(!d.file_name.contains('/') && !d.file_name.contains("**"));
    // The generated Applications name the plugin this file defines.
    for app in plugin_apps() {
        assert_eq!(app.plugin_name, p.metadata.name, "{}", app.name);
    }
}

/// An Application of the plugin example whose source is the plugin.
struct PluginApp {
    name: String,
    namespace: String,
    project: String,
    source: Value,
    plugin_name: String,
    env: Vec<(String, String)>,
}

/// The plugin example's Applications that the plugin renders: the root one and those it syncs.
fn plugin_apps() -> Vec<PluginApp> {
    let mut docs = Vec::new();
    for only in ["argocd-root", "argocd"] {
        let out = raykueue(&["gen", "-p", PLUGIN_PROFILE, "--only", only]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        docs.extend(parse_stream(&stdout(&out)));
    }
    docs.into_iter()
        .filter(|d| d["kind"] == "Application" && !d["spec"]["source"]["plugin"].is_null())
        .map(|d| {
            let source = d["spec"]["source"].clone();
            let plugin = &source["plugin"];
            PluginApp {
                name: d["metadata"]["name"].as_str().unwrap().to_owned(),
                namespace: d["spec"]["destination"]["namespace"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                project: d["spec"]["project"].as_str().unwrap().to_owned(),
                plugin_name: plugin["name"].as_str().unwrap().to_owned(),
                env: plugin["env"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|e| {
                        let s = |k: &str| e[k].as_str().unwrap().to_owned();
                        (s("name"), s("value"))
                    })
                    .collect(),
                source,
            }
        })
        .collect()
}

/// `filepath.Glob`'s `*` (any run of characters but `/`), the only wildcard the plugin's
/// pattern uses.
fn glob_matches(pattern: &str, name: &str) -> bool {
    assert!(
        !pattern.contains(['?', '[', '\\']),
        "only `*` is modelled here: {pattern}"
    );
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return name == pattern;
    }
    if name.contains('/') || !name.starts_with(first) || !name[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(at) => rest = &rest[at + mid.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the plugin's discovery matches the folder `dir` (Argo CD: `filepath.Glob` of
/// `fileName` joined to the Application's folder; argo-cd@v3.5.1 `cmpserver/plugin/plugin.go`
/// `matchRepository`).
fn discovered(dir: &Path) -> bool {
    let pattern = plugin().spec.discover.unwrap().file_name;
    let pattern = pattern.trim_start_matches("./");
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .any(|name| glob_matches(pattern, &name))
    })
}

#[test]
fn glob_matches_like_filepath_glob() {
    assert!(glob_matches("*.raykueue.yaml", "prod.raykueue.yaml"));
    assert!(glob_matches("*.raykueue.yaml", ".raykueue.yaml"));
    assert!(!glob_matches("*.raykueue.yaml", "prod.yaml"));
    assert!(!glob_matches("*.raykueue.yaml", "prod.raykueue.yaml.bak"));
    assert!(glob_matches("a*b*c", "aXbYc"));
    assert!(!glob_matches("a*b*c", "aXcYb"));
}

/// The documents the committed folder `dir` of a tree holds, in its kustomization's order,
/// as one stream: each file's text without its header comment (what `gen --only` prints).
fn committed_stream(tree: &Path, dir: &str) -> String {
    fn walk(dir: &Path, out: &mut String) {
        let k: Value = serde_saphyr::from_str(
            &std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap(),
        )
        .unwrap();
        for r in k["resources"].as_array().unwrap() {
            let path = dir.join(r.as_str().unwrap());
            if path.is_dir() {
                walk(&path, out);
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                let start = text.find("---\n").expect("a document");
                assert!(
                    text[..start].lines().all(|l| l.starts_with('#')),
                    "{}",
                    path.display()
                );
                out.push_str(&text[start..]);
            }
        }
    }
    let mut out = String::new();
    walk(&tree.join(dir), &mut out);
    out
}

fn gen_out(profile: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = raykueue(&["gen", "-p", profile, "--out", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    dir
}

/// Run the plugin's `generate` command for `app` as argocd-cmp-server does: the command itself
/// (no shell), in the Application's folder of the repository, with the sidecar's environment
/// (here only `PATH`, where the image has raykueue), Argo CD's build environment and the
/// Application's `plugin.env` prefixed `ARGOCD_ENV_` (argo-cd@v3.5.1
/// `cmpserver/plugin/plugin.go` `generateManifest` and `runCommand`;
/// `docs/user-guide/build-environment.md`).
fn run_generate(checkout: &Path, app: &PluginApp) -> std::process::Output {
    let generate = plugin().spec.generate;
    let bin_dir = PathBuf::from(env!("CARGO_BIN_EXE_raykueue"))
        .parent()
        .unwrap()
        .to_path_buf();
    let s = |k: &str| app.source[k].as_str().unwrap().to_owned();
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), bin_dir.display().to_string()),
        ("ARGOCD_APP_NAME".into(), app.name.clone()),
        ("ARGOCD_APP_NAMESPACE".into(), app.namespace.clone()),
        ("ARGOCD_APP_PROJECT_NAME".into(), app.project.clone()),
        (
            "ARGOCD_APP_REVISION".into(),
            "f913b6cbf58aa5ae5ca1f8a2b149477aebcbd9d8".into(),
        ),
        ("ARGOCD_APP_REVISION_SHORT".into(), "f913b6c".into()),
        ("ARGOCD_APP_REVISION_SHORT_8".into(), "f913b6cb".into()),
        ("ARGOCD_APP_SOURCE_PATH".into(), s("path")),
        ("ARGOCD_APP_SOURCE_REPO_URL".into(), s("repoURL")),
        (
            "ARGOCD_APP_SOURCE_TARGET_REVISION".into(),
            s("targetRevision"),
        ),
        ("KUBE_VERSION".into(), "1.34.0".into()),
        ("KUBE_API_VERSIONS".into(), "v1,apps/v1".into()),
    ];
    env.extend(
        app.env
            .iter()
            .map(|(k, v)| (format!("ARGOCD_ENV_{k}"), v.clone())),
    );
    let argv: Vec<&String> = generate.command.iter().chain(&generate.args).collect();
    Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .envs(env)
        .current_dir(checkout.join(s("path")))
        .output()
        .expect("the generate command runs")
}

#[test]
fn the_sidecar_prints_exactly_the_committed_stream() {
    // The repository holds the profile where its `plugin.profile` says (the sidecar gets the
    // whole repository; the Application's `path` is the profile's folder).
    let committed = gen_out(COMMITTED_PROFILE);
    let plugin_tree = gen_out(PLUGIN_PROFILE);
    let apps = plugin_apps();
    let mut rendered = BTreeMap::new();
    for app in &apps {
        let only = &app.env.iter().find(|(k, _)| k == "ONLY").unwrap().1;
        // Argo CD asks discovery even for an Application that names the plugin.
        let dir = repo().join(app.source["path"].as_str().unwrap());
        assert!(discovered(&dir), "{}: discovery finds no profile", app.name);
        let out = run_generate(&repo(), app);
        assert_eq!(out.status.code(), Some(0), "{}: {}", app.name, stderr(&out));
        // The stream the same profile commits with `gen --out`: the folder the Application
        // would sync without the plugin.
        let folder = match only.as_str() {
            "platform" => "platform",
            "gitops-workloads" => "gitops/workloads",
            "argocd" => "gitops/argocd",
            "monitoring" => "monitoring",
            other => panic!("{}: no committed folder for {other}", app.name),
        };
        let expected = committed_stream(plugin_tree.path(), folder);
        if only == "platform" {
            // The plugin changes no cluster object: `prod.yaml`, which it extends and which
            // commits its bundle, has the same platform.
            assert_eq!(committed_stream(committed.path(), "platform"), expected);
        }
        assert!(!expected.is_empty(), "{only}");
        assert_eq!(stdout(&out), expected, "{}: ONLY={only}", app.name);
        rendered.insert(only.clone(), app.name.clone());
    }
    // Every part the plugin example syncs, each by one Application.
    let parts: Vec<&str> = rendered.keys().map(String::as_str).collect();
    assert_eq!(
        parts,
        ["argocd", "gitops-workloads", "monitoring", "platform"]
    );
}

#[test]
fn a_failing_profile_prints_nothing_for_argo_cd_to_prune_with() {
    // An automated sync with `prune` deletes what an empty stream leaves out: a broken
    // profile must fail the generate command, with the reason on stderr, and print nothing.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.raykueue.yaml"),
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: team\nname: Bad_Name\n",
    )
    .unwrap();
    let app = PluginApp {
        name: "bad-platform".into(),
        namespace: "ray".into(),
        project: "default".into(),
        source: serde_json::json!({"repoURL": "https://example.com/r.git", "targetRevision": "main", "path": "."}),
        plugin_name: "raykueue".into(),
        env: vec![
            ("PROFILE".into(), "bad.raykueue.yaml".into()),
            ("ONLY".into(), "platform".into()),
        ],
    };
    let out = run_generate(dir.path(), &app);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("bad.raykueue.yaml:4:7"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn discovery_claims_the_plugin_profiles_and_no_other_folder() {
    assert!(discovered(&repo().join("profiles/examples")));
    // Argo CD asks the plugins first for every Application without an explicit source type:
    // a committed bundle's folders stay plain directories (or Kustomize).
    let tree = gen_out(COMMITTED_PROFILE);
    let mut dirs: Vec<PathBuf> = vec![tree.path().to_path_buf()];
    for file in read_tree(tree.path()).keys() {
        let mut p = tree.path().join(file);
        while p.pop() && p.starts_with(tree.path()) {
            dirs.push(p.clone());
        }
    }
    dirs.sort();
    dirs.dedup();
    assert!(dirs.len() > 5);
    for d in dirs {
        assert!(!discovered(&d), "{} would be sent to raykueue", d.display());
    }
    for shipped in ["profiles", "tests/fixtures/bad"] {
        assert!(!discovered(&repo().join(shipped)), "{shipped}");
    }
}

#[test]
fn a_plugin_profile_must_be_named_for_discovery() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("prod.yaml");
    std::fs::write(
        &profile,
        "apiVersion: raykueue.io/v1alpha1\nkind: Profile\nextends: team\nname: prod\ngitops:\n  repoURL: https://github.com/example/p.git\n  argocd:\n    plugin:\n      profile: clusters/prod.yaml\n",
    )
    .unwrap();
    let out = raykueue(&["check", profile.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("[RK012]") && err.contains("prod.yaml:9:16"),
        "{err}"
    );
    assert!(err.contains(".raykueue.yaml"), "{err}");
}

/// The sidecar patch on the repo-server Deployment of Argo CD v3.5.1, offline
/// (`kubectl patch --local`, a strategic merge as `kubectl patch` does by default).
#[test]
fn the_sidecar_patch_fits_the_upstream_repo_server() {
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_err()
    {
        return skip(
            "the_sidecar_patch_fits_the_upstream_repo_server",
            "no kubectl",
        );
    }
    // The parts of argo-cd@v3.5.1 `manifests/base/repo-server/argocd-repo-server-deployment.yaml`
    // the patch meets: the repo-server container and its volumes (names as upstream).
    let base = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "argocd-repo-server"},
      "spec": {"selector": {"matchLabels": {"app.kubernetes.io/name": "argocd-repo-server"}},
        "template": {"metadata": {"labels": {"app.kubernetes.io/name": "argocd-repo-server"}},
          "spec": {
            "initContainers": [{"name": "copyutil", "image": "quay.io/argoproj/argocd:v3.5.1",
              "volumeMounts": [{"name": "var-files", "mountPath": "/var/run/argocd"}]}],
            "containers": [{"name": "argocd-repo-server", "image": "quay.io/argoproj/argocd:v3.5.1",
              "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"},
                {"name": "plugins", "mountPath": "/home/argocd/cmp-server/plugins"}]}],
            "volumes": [{"name": "tmp", "emptyDir": {}}, {"name": "var-files", "emptyDir": {}},
              {"name": "plugins", "emptyDir": {}}]}}}}"#;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("deployment.json"), base).unwrap();
    let out = Command::new("kubectl")
        .args(["patch", "--local", "-o", "json", "-f"])
        .arg(dir.path().join("deployment.json"))
        .arg("--patch-file")
        .arg(repo().join("argocd/repo-server-patch.yaml"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let d: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let spec = &d["spec"]["template"]["spec"];
    let containers = spec["containers"].as_array().unwrap();
    let names: Vec<&str> = containers
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"argocd-repo-server"));
    let side = containers.iter().find(|c| c["name"] == "raykueue").unwrap();
    // The operator manual's checklist: argocd-cmp-server as entrypoint, user 999.
    assert_eq!(
        side["command"],
        serde_json::json!(["/var/run/argocd/argocd-cmp-server"])
    );
    assert_eq!(side["securityContext"]["runAsUser"], 999);
    assert_eq!(side["securityContext"]["runAsNonRoot"], true);
    let volumes: Vec<&str> = spec["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let mounts: BTreeMap<&str, &str> = side["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["mountPath"].as_str().unwrap(),
                m["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(mounts["/var/run/argocd"], "var-files");
    assert_eq!(mounts["/home/argocd/cmp-server/plugins"], "plugins");
    // Its own /tmp: "do NOT mount the same tmp volume as the repo-server container".
    assert!(mounts.contains_key("/tmp") && mounts["/tmp"] != "tmp");
    for (path, v) in &mounts {
        assert!(
            volumes.contains(v),
            "{path}: volume {v} is not in the Deployment"
        );
    }
    // The plugin file comes with the image (no ConfigMap mount), where the manual says.
    assert!(
        !mounts
            .keys()
            .any(|p| p.starts_with("/home/argocd/cmp-server/config"))
    );
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    assert!(
        dockerfile
            .lines()
            .any(|l| l == "COPY argocd/plugin.yaml /home/argocd/cmp-server/config/plugin.yaml"),
        "the image carries argocd/plugin.yaml"
    );
}
