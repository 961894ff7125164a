//! `e2e tools`: the upstream programs the real-control-plane tier starts, built from the Go
//! module proxy by module name and version and cached by version, so that nothing upstream is
//! ever committed. A component is ready when its binaries and its `module-dir` record (where
//! `go mod download` put the module's tree: its CRDs, chart and webhook manifests are read from
//! there at test time) are in its cache folder.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One upstream program (or set of programs built from one module version).
#[derive(Debug)]
pub struct Component {
    /// The name `e2e tools` prints and the cache folder starts with.
    pub name: &'static str,
    /// The Go module whose tree the harness reads (and whose version names the folder).
    pub module: &'static str,
    /// The version asked for; `None`: the newest the proxy serves.
    pub wanted: Option<&'static str>,
    /// Modules the harness reads besides, at the version the component's go.mod requires
    /// (Kueue's: the cluster autoscaler's API module, which holds the ProvisioningRequest CRD).
    pub also: &'static [&'static str],
    /// The binaries the build leaves in the component's folder.
    pub binaries: &'static [&'static str],
    build: Build,
}

#[derive(Debug)]
enum Build {
    /// `go install PACKAGE@VERSION`: the module has no `replace` directives.
    Install {
        package: &'static str,
        ldflags: &'static str,
    },
    /// A module of ours that requires the component's module and builds its main packages:
    /// `go install` refuses a module whose go.mod replaces modules (Kubernetes replaces its
    /// staging modules with local folders, etcd its sibling modules).
    Wrapped {
        packages: &'static [&'static str],
        /// Staging modules pinned to `v0.<minor>.<patch>` of the Kubernetes version.
        kubernetes_staging: bool,
        ldflags: &'static str,
    },
}

/// The toolchain: the versions docs/development.md lists ("Components").
pub const COMPONENTS: &[Component] = &[
    Component {
        name: "etcd",
        module: "go.etcd.io/etcd/server/v3",
        wanted: Some("v3.6.16"),
        also: &[],
        binaries: &["etcd"],
        build: Build::Wrapped {
            packages: &["go.etcd.io/etcd/server/v3"],
            kubernetes_staging: false,
            ldflags: "",
        },
    },
    Component {
        // The minor Kueue v0.19.2 builds against (`k8s.io/api v0.36.2` in its go.mod); the newest
        // 1.36 patch the proxy serves. kubectl comes from the same build: the apply tests use a
        // client of the server's minor (Debian's kubectl is older than the skew policy allows).
        name: "kubernetes",
        module: "k8s.io/kubernetes",
        wanted: Some("v1.36.3"),
        also: &[],
        binaries: &[
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "kubectl",
        ],
        build: Build::Wrapped {
            packages: &[
                "k8s.io/kubernetes/cmd/kube-apiserver",
                "k8s.io/kubernetes/cmd/kube-controller-manager",
                "k8s.io/kubernetes/cmd/kube-scheduler",
                "k8s.io/kubernetes/cmd/kubectl",
            ],
            kubernetes_staging: true,
            // What hack/lib/version.sh stamps: without it the API server reports v0.0.0, and
            // clients that gate features on the server's version (Kueue among them) misread it.
            ldflags: "-X k8s.io/component-base/version.gitVersion={version} \
                      -X k8s.io/component-base/version.gitMajor={major} \
                      -X k8s.io/component-base/version.gitMinor={minor} \
                      -X k8s.io/client-go/pkg/version.gitVersion={version} \
                      -X k8s.io/client-go/pkg/version.gitMajor={major} \
                      -X k8s.io/client-go/pkg/version.gitMinor={minor}",
        },
    },
    Component {
        name: "kueue",
        module: "sigs.k8s.io/kueue",
        wanted: Some("v0.19.2"),
        also: &["k8s.io/autoscaler/cluster-autoscaler/apis"],
        binaries: &["kueue"],
        build: Build::Install {
            package: "sigs.k8s.io/kueue/cmd/kueue",
            ldflags: "-X sigs.k8s.io/kueue/pkg/version.GitVersion={version}",
        },
    },
    Component {
        name: "kuberay-operator",
        module: "github.com/ray-project/kuberay/ray-operator",
        wanted: Some("v1.7.0"),
        also: &[],
        binaries: &["ray-operator"],
        build: Build::Install {
            package: "github.com/ray-project/kuberay/ray-operator",
            ldflags: "",
        },
    },
    Component {
        name: "kwok",
        module: "sigs.k8s.io/kwok",
        wanted: None,
        also: &[],
        binaries: &["kwok"],
        build: Build::Install {
            package: "sigs.k8s.io/kwok/cmd/kwok",
            ldflags: "",
        },
    },
    Component {
        // Prometheus's own promtool, with the Kubernetes service discovery Debian's package
        // leaves out: it checks the AWS managed collector's scrape configuration
        // (tests/it/monitoring_managed.rs). Module v0.316.0 is Prometheus 3.16.0.
        name: "promtool",
        module: "github.com/prometheus/prometheus",
        wanted: Some("v0.316.0"),
        also: &[],
        binaries: &["promtool"],
        build: Build::Install {
            package: "github.com/prometheus/prometheus/cmd/promtool",
            ldflags: "",
        },
    },
    Component {
        // Renders Kueue's own chart (in the Kueue module) with the bundle's values, so the
        // harness serves the webhooks and loads the Configuration exactly as `helm install`
        // would.
        name: "helm",
        module: "helm.sh/helm/v3",
        wanted: Some("v3.22.0"),
        also: &[],
        binaries: &["helm"],
        build: Build::Install {
            package: "helm.sh/helm/v3/cmd/helm",
            ldflags: "",
        },
    },
];

/// The cache root: `$RAYKUEUE_E2E_CACHE`, else `/tmp/raykueue-e2e`.
pub fn cache_root() -> PathBuf {
    std::env::var_os("RAYKUEUE_E2E_CACHE")
        .map_or_else(|| PathBuf::from("/tmp/raykueue-e2e"), PathBuf::from)
}

/// A component as found in the cache.
#[derive(Debug, Clone)]
pub struct Built {
    pub name: &'static str,
    /// The version built (the nearest served when the wanted one is refused).
    pub version: String,
    pub wanted: Option<&'static str>,
    /// The folder holding its binaries.
    pub dir: PathBuf,
    /// The module's tree, as `go mod download` left it.
    pub module_dir: PathBuf,
    /// The trees of the modules of `Component::also`: module path → folder.
    pub also: Vec<(String, PathBuf)>,
}

impl Built {
    pub fn bin(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The tree of a module of `Component::also`.
    pub fn also(&self, module: &str) -> Option<&Path> {
        self.also
            .iter()
            .find(|(m, _)| m == module)
            .map(|(_, d)| d.as_path())
    }
}

/// The whole toolchain, from the cache.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub parts: Vec<Built>,
}

impl Toolchain {
    /// Every component from the cache, or the names of those missing.
    pub fn cached() -> Result<Self, Vec<String>> {
        let mut parts = Vec::new();
        let mut missing = Vec::new();
        for c in COMPONENTS {
            match cached(c) {
                Some(b) if trees_present(&b) => parts.push(b),
                Some(_) => missing.push(format!("{} (its module tree)", c.name)),
                None => missing.push(c.name.to_string()),
            }
        }
        if missing.is_empty() {
            Ok(Self { parts })
        } else {
            Err(missing)
        }
    }

    pub fn get(&self, name: &str) -> &Built {
        self.parts
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("{name} is a component"))
    }

    /// A binary of a component.
    pub fn bin(&self, component: &str, binary: &str) -> PathBuf {
        self.get(component).bin(binary)
    }
}

/// Where the resolved version of a component is recorded, so a cached run asks the proxy
/// nothing.
fn resolved_record(c: &Component) -> PathBuf {
    cache_root()
        .join("resolved")
        .join(format!("{}-{}", c.name, c.wanted.unwrap_or("newest")))
}

fn folder(c: &Component, version: &str) -> PathBuf {
    cache_root().join(format!("{}-{version}", c.name))
}

fn cached(c: &Component) -> Option<Built> {
    let version = std::fs::read_to_string(resolved_record(c)).ok()?;
    let version = version.trim().to_string();
    let dir = folder(c, &version);
    let record = std::fs::read_to_string(dir.join("modules")).ok()?;
    let mut modules = record.lines().filter_map(|l| {
        let (m, d) = l.split_once(' ')?;
        Some((m.to_string(), PathBuf::from(d)))
    });
    let (_, module_dir) = modules.next()?;
    let also: Vec<(String, PathBuf)> = modules.collect();
    let complete = c.binaries.iter().all(|b| dir.join(b).is_file()) && also.len() == c.also.len();
    complete.then_some(Built {
        name: c.name,
        version,
        wanted: c.wanted,
        dir,
        module_dir,
        also,
    })
}

/// Whether the module trees a cached component names are still on disk (the module cache may
/// have been cleaned since).
fn trees_present(b: &Built) -> bool {
    b.module_dir.is_dir() && b.also.iter().all(|(_, d)| d.is_dir())
}

/// Downloads the module trees of a built component again (`go mod download` puts them where
/// they were, or where the module cache now is).
fn refetch(c: &Component, b: &Built) -> Result<Built, String> {
    let module_dir = download(c.module, &b.version)?;
    let also = also_modules(c, &module_dir)?;
    record_modules(c, &b.dir, &module_dir, &also)?;
    Ok(Built {
        module_dir,
        also,
        ..b.clone()
    })
}

fn record_modules(
    c: &Component,
    dir: &Path,
    module_dir: &Path,
    also: &[(String, PathBuf)],
) -> Result<(), String> {
    let lines = std::iter::once((c.module, module_dir))
        .chain(also.iter().map(|(m, d)| (m.as_str(), d.as_path())));
    let mut record = String::new();
    for (m, d) in lines {
        let _ = writeln!(record, "{m} {}", d.display());
    }
    std::fs::write(dir.join("modules"), record).map_err(|e| e.to_string())
}

/// `e2e tools`: builds what is missing, prints `NAME VERSION PATH` per component; `false` when
/// one failed (named on stderr).
pub fn ensure_all() -> bool {
    let mut ok = true;
    for c in COMPONENTS {
        let result = match cached(c) {
            Some(b) if trees_present(&b) => Ok(b),
            Some(b) => refetch(c, &b),
            None => build(c),
        };
        match result {
            Ok(b) => {
                if let Some(w) = b.wanted.filter(|w| *w != b.version) {
                    eprintln!(
                        "{}: the Go module proxy refuses {} {w}; built the nearest it serves, {}",
                        b.name, c.module, b.version
                    );
                }
                println!("{} {} {}", b.name, b.version, b.dir.display());
            }
            Err(e) => {
                eprintln!("{}: {e}", c.name);
                ok = false;
            }
        }
    }
    ok
}

/// The go command, with the user's module and build caches: a rebuild of one component
/// reuses every package another build compiled. What `e2e tools` keeps is under the e2e cache
/// (the binaries, by version); the module trees the harness reads stay in the module cache and
/// are downloaded again when gone.
fn go(args: &[&str], cwd: &Path) -> Command {
    let mut cmd = Command::new("go");
    cmd.args(args)
        .current_dir(cwd)
        .env("GOFLAGS", "-mod=mod -buildvcs=false");
    cmd
}

fn run(mut cmd: Command, what: &str) -> Result<String, String> {
    let out = cmd.output().map_err(|e| {
        format!("{what}: cannot run go ({e}); install Go to build the e2e toolchain")
    })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(format!("{what} failed:\n{}", tail.join("\n")))
    }
}

/// `go mod download -json MODULE@VERSION`: the module's folder, or the proxy's answer.
pub(crate) fn download(module: &str, version: &str) -> Result<PathBuf, String> {
    let scratch = cache_root();
    std::fs::create_dir_all(&scratch).map_err(|e| e.to_string())?;
    let out = go(
        &["mod", "download", "-json", &format!("{module}@{version}")],
        &scratch,
    )
    .output()
    .map_err(|e| format!("cannot run go ({e}); install Go to build the e2e toolchain"))?;
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|_| String::from_utf8_lossy(&out.stderr).trim().to_string())?;
    if let Some(err) = json.get("Error").and_then(|e| e.as_str()) {
        return Err(err.to_string());
    }
    json.get("Dir")
        .and_then(|d| d.as_str())
        .map(PathBuf::from)
        .ok_or_else(|| format!("{module}@{version}: no Dir in go mod download's answer"))
}

/// Versions the proxy lists for a module (its list can be partial: a version missing here
/// may still be served, so the candidates below also count down from the wanted one).
fn listed(module: &str) -> Vec<String> {
    let scratch = cache_root();
    go(&["list", "-m", "-versions", module], &scratch)
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .skip(1)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn parse(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.strip_prefix('v')?.split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    let patch = it.next()?.parse().ok()?;
    Some((major, minor, patch))
}

/// The versions to try for `wanted`, nearest first: the wanted one, then lower patches of its
/// minor, then the patches of the minor below (from .9 down), then any listed release below,
/// then listed releases above. Pre-releases are never taken.
pub fn candidates(wanted: &str, listed: &[String]) -> Vec<String> {
    let Some((major, minor, patch)) = parse(wanted) else {
        return vec![wanted.to_string()];
    };
    let mut out = vec![wanted.to_string()];
    out.extend((0..patch).rev().map(|p| format!("v{major}.{minor}.{p}")));
    if minor > 0 {
        out.extend((0..10).rev().map(|p| format!("v{major}.{}.{p}", minor - 1)));
    }
    let mut below: Vec<(u64, u64, u64)> = listed
        .iter()
        .filter_map(|v| parse(v))
        .filter(|v| *v < (major, minor, patch))
        .collect();
    below.sort_unstable();
    out.extend(below.iter().rev().map(|(a, b, c)| format!("v{a}.{b}.{c}")));
    let mut above: Vec<(u64, u64, u64)> = listed
        .iter()
        .filter_map(|v| parse(v))
        .filter(|v| *v > (major, minor, patch))
        .collect();
    above.sort_unstable();
    out.extend(above.iter().map(|(a, b, c)| format!("v{a}.{b}.{c}")));
    let mut seen = std::collections::BTreeSet::new();
    out.retain(|v| seen.insert(v.clone()));
    out
}

/// The version to build and its module folder: the wanted one, else the nearest served.
fn resolve(c: &Component) -> Result<(String, PathBuf), String> {
    let listed = listed(c.module);
    let tries = if let Some(w) = c.wanted {
        candidates(w, &listed)
    } else {
        let mut releases: Vec<(u64, u64, u64)> = listed.iter().filter_map(|v| parse(v)).collect();
        releases.sort_unstable();
        releases
            .iter()
            .rev()
            .map(|(a, b, c)| format!("v{a}.{b}.{c}"))
            .collect()
    };
    let mut answers = Vec::new();
    for v in tries {
        match download(c.module, &v) {
            Ok(dir) => return Ok((v, dir)),
            Err(e) => answers.push(format!("  {v}: {e}")),
        }
    }
    Err(format!(
        "the Go module proxy serves no usable version of {}:\n{}",
        c.module,
        answers.join("\n")
    ))
}

fn ldflags(template: &str, version: &str) -> String {
    let (major, minor, _) = parse(version).unwrap_or_default();
    let flags = template
        .replace("{version}", version)
        .replace("{major}", &major.to_string())
        .replace("{minor}", &minor.to_string());
    format!(
        "-s -w {}",
        flags.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

fn build(c: &Component) -> Result<Built, String> {
    let (version, module_dir) = resolve(c)?;
    let dir = folder(c, &version);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    eprintln!(
        "{}: building {} {version} into {}",
        c.name,
        c.module,
        dir.display()
    );
    let started = std::time::Instant::now();
    match &c.build {
        Build::Install {
            package,
            ldflags: l,
        } => {
            let mut cmd = go(
                &[
                    "install",
                    &format!("-ldflags={}", ldflags(l, &version)),
                    &format!("{package}@{version}"),
                ],
                &cache_root(),
            );
            // `go install pkg@version` ignores the -mod flag and refuses it in GOFLAGS.
            cmd.env("GOFLAGS", "-buildvcs=false").env("GOBIN", &dir);
            run(cmd, &format!("go install {package}@{version}"))?;
        }
        Build::Wrapped {
            packages,
            kubernetes_staging,
            ldflags: l,
        } => {
            let work = cache_root()
                .join("build")
                .join(format!("{}-{version}", c.name));
            std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
            let gomod = wrapper_go_mod(
                c.module,
                &version,
                kubernetes_staging.then_some(module_dir.as_path()),
            )?;
            std::fs::write(work.join("go.mod"), gomod).map_err(|e| e.to_string())?;
            // One package: `-o` names its binary (Go would name etcd's after its module's
            // last element but the major version, `server`); several: a folder.
            let out = match (packages, c.binaries) {
                ([_], [binary]) => dir.join(binary),
                _ => dir.clone(),
            };
            let mut args = vec![
                "build".to_string(),
                format!("-ldflags={}", ldflags(l, &version)),
                "-o".to_string(),
                format!(
                    "{}{}",
                    out.display(),
                    if packages.len() > 1 { "/" } else { "" }
                ),
            ];
            args.extend(packages.iter().map(|p| (*p).to_string()));
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run(
                go(&args, &work),
                &format!("go build {}", packages.join(" ")),
            )?;
        }
    }
    for b in c.binaries {
        if !dir.join(b).is_file() {
            return Err(format!("the build left no {b} in {}", dir.display()));
        }
    }
    let also = also_modules(c, &module_dir)?;
    record_modules(c, &dir, &module_dir, &also)?;
    let record = resolved_record(c);
    if let Some(parent) = record.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(&record, &version).map_err(|e| e.to_string())?;
    eprintln!(
        "{}: built in {:.0} s",
        c.name,
        started.elapsed().as_secs_f64()
    );
    Ok(Built {
        name: c.name,
        version,
        wanted: c.wanted,
        dir,
        module_dir,
        also,
    })
}

/// The modules of `Component::also`, downloaded at the versions the component's go.mod
/// requires.
fn also_modules(c: &Component, module_dir: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let gomod = std::fs::read_to_string(module_dir.join("go.mod")).map_err(|e| e.to_string())?;
    c.also
        .iter()
        .map(|m| {
            let version = gomod
                .lines()
                .map(str::trim)
                .filter_map(|l| l.strip_prefix("require ").or(Some(l)))
                .find_map(|l| {
                    let mut words = l.split_whitespace();
                    (words.next() == Some(*m)).then(|| words.next()).flatten()
                })
                .ok_or_else(|| format!("{} requires no {m}", c.module))?;
            Ok(((*m).to_string(), download(m, version)?))
        })
        .collect()
}

/// The go.mod of the wrapper module: it requires the component's module, and for Kubernetes
/// pins every staging module its go.mod replaces with a local folder to the published
/// `v0.<minor>.<patch>` of the same release.
fn wrapper_go_mod(
    module: &str,
    version: &str,
    kubernetes: Option<&Path>,
) -> Result<String, String> {
    let mut text =
        format!("module raykueue.local/e2e\n\ngo 1.26.0\n\nrequire {module} {version}\n");
    if let Some(dir) = kubernetes {
        let upstream = std::fs::read_to_string(dir.join("go.mod")).map_err(|e| e.to_string())?;
        let (_, minor, patch) = parse(version).ok_or("a Kubernetes version vMAJOR.MINOR.PATCH")?;
        text.push_str("\nreplace (\n");
        for line in upstream.lines() {
            let line = line.trim();
            if let Some((staging, target)) = line.split_once("=>")
                && target.trim().starts_with("./staging/")
            {
                let staging = staging.trim();
                let _ = writeln!(text, "\t{staging} => {staging} v0.{minor}.{patch}");
            }
        }
        text.push_str(")\n");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::candidates;

    #[test]
    fn the_nearest_served_version_is_tried_first_below() {
        let listed = vec![
            "v1.4.0".to_string(),
            "v1.5.0".to_string(),
            "v1.8.0".to_string(),
        ];
        let c = candidates("v1.7.0", &listed);
        assert_eq!(&c[..3], ["v1.7.0", "v1.6.9", "v1.6.8"]);
        assert!(c.iter().position(|v| v == "v1.5.0") < c.iter().position(|v| v == "v1.8.0"));
    }
}
