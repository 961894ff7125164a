//! `e2e`: the real-control-plane tier (docs/development.md, "The e2e tier"). Test
//! infrastructure: the tests include this module by path (`tests/it/e2e.rs`), the binary never
//! does.
//!
//! - `e2e tools`: build the toolchain from the Go module proxy, cached by version ([`tools`]);
//! - `e2e up --profile P --dir D` / `e2e down --dir D`: a control plane for a profile
//!   ([`cluster`], [`operators`], [`nodes`]);
//! - `e2e replay --profile P --scenario S`: a scenario on the real Kueue, printed as
//!   `raykueue simulate --output json` prints its events ([`replay`]).

// The tests and the command line each use part of the harness.
#![allow(dead_code)]

pub mod cluster;
pub mod kube;
pub mod nodes;
pub mod operators;
pub mod pki;
pub mod prometheus;
pub mod replay;
pub mod tools;

use cluster::Cluster;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Prints how long each phase of a start-up took, with `RAYKUEUE_E2E_VERBOSE` set.
pub struct Phases {
    started: std::time::Instant,
    label: &'static str,
}

impl Phases {
    pub fn new(label: &'static str) -> Self {
        Self {
            started: std::time::Instant::now(),
            label,
        }
    }

    pub fn mark(&self, what: &str) {
        if std::env::var_os("RAYKUEUE_E2E_VERBOSE").is_some() {
            eprintln!(
                "e2e {}: {what} at {} ms",
                self.label,
                self.started.elapsed().as_millis()
            );
        }
    }
}

/// A profile compiled for a control plane: its typed form and its bundle's files.
#[derive(Debug)]
pub struct Compiled {
    pub profile: raykueue::api::profile::Profile,
    pub files: BTreeMap<String, String>,
}

impl Compiled {
    /// A shipped profile's name or a path, compiled as `raykueue gen` compiles it.
    pub fn profile(arg: &str) -> Result<Self, String> {
        let resolved = resolve(arg)?;
        let compiled = raykueue::api::compile::compile(&resolved, false).map_err(|diags| {
            let mut text = format!("{arg} does not compile:");
            for d in diags {
                text.push_str("\n  ");
                text.push_str(&d.message);
            }
            text
        })?;
        Ok(Self {
            profile: compiled.profile,
            files: compiled.bundle.files,
        })
    }

    /// Each member of a fleet file, compiled as `gen --out` compiles it (the manager first).
    pub fn fleet(arg: &str) -> Result<Vec<(String, Self)>, String> {
        let resolved = resolve(arg)?;
        let fleet = raykueue::api::fleet::compile(&resolved, false).map_err(|diags| {
            let mut text = format!("{arg} does not compile:");
            for d in diags {
                text.push_str("\n  ");
                text.push_str(&d.message);
            }
            text
        })?;
        Ok(fleet
            .members
            .into_iter()
            .map(|(name, c)| {
                (
                    name,
                    Self {
                        profile: c.profile,
                        files: c.bundle.files,
                    },
                )
            })
            .collect())
    }

    /// The bundle written below `dir` (as `gen --out` lays it out).
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        for (name, content) in &self.files {
            let path = dir.join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
            }
            std::fs::write(&path, content).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }
}

fn resolve(arg: &str) -> Result<raykueue::api::input::resolve::Resolved, String> {
    use raykueue::api::input::resolve::ResolveError;
    raykueue::api::input::resolve::resolve(arg).map_err(|e| match e {
        ResolveError::Io(m) => m,
        ResolveError::Invalid(d) => format!("{arg}: {}", d.message),
    })
}

/// `up`: a control plane for a compiled profile in `dir`, ready, nothing of the profile applied.
pub fn up(dir: &Path, compiled: &Compiled) -> Result<Cluster, String> {
    up_with(dir, compiled, true)
}

/// `up`, with or without the KubeRay operator (a replay of bare Workloads needs none).
pub fn up_with(dir: &Path, compiled: &Compiled, kuberay: bool) -> Result<Cluster, String> {
    let tools = tools::Toolchain::cached().map_err(|missing| {
        format!(
            "the e2e toolchain lacks {}: run `cargo run -p xtask -- e2e tools`",
            missing.join(", ")
        )
    })?;
    if dir.join("pids").exists() {
        return Err(format!(
            "{} holds a running control plane: `e2e down --dir {}` first",
            dir.display(),
            dir.display()
        ));
    }
    let bundle = dir.join("bundle");
    compiled.write(&bundle)?;
    let mut cluster = Cluster::start(dir, tools)?;
    let values = bundle.join("infra/kueue-values.yaml");
    let kueue = compiled.profile.operators.kueue.as_ref();
    let namespace = kueue.map_or("kueue-system", |k| k.namespace.as_str());
    let release = kueue.map_or("kueue", |k| k.release.as_str());
    let setup = operators::Setup {
        kueue_values: values.is_file().then_some(values.as_path()),
        kueue_namespace: namespace,
        kueue_release: release,
        kuberay,
    };
    let installed = operators::install(&cluster, &setup)
        .and_then(|()| operators::add_nodes(&cluster, &nodes::nodes(&compiled.profile)));
    if let Err(e) = installed {
        cluster.owned = true;
        return Err(e);
    }
    Ok(cluster)
}

/// A control plane that runs one profile after another (the tier's replays): etcd, the API
/// server, the controller manager, the scheduler and kwok stay; between profiles every Kueue
/// object and node is deleted (while the old Kueue still runs, to release its finalizers) and
/// Kueue is started again with the next profile's Configuration, so each replay starts from an
/// empty cluster and a fresh Kueue, as a fresh `up` would, without the API server's start-up.
#[derive(Debug)]
pub struct Lane {
    pub cluster: Cluster,
    loaded: bool,
    /// Whether the KubeRay operator runs (one per machine: its webhook port is fixed).
    kuberay: bool,
}

/// Namespaces a lane keeps: the API server's own.
const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// What a lane deletes between profiles: every kind a bundle or a replay creates.
const LANE_KINDS: &str = "workloads.kueue.x-k8s.io,localqueues.kueue.x-k8s.io,clusterqueues.kueue.x-k8s.io,\
cohorts.kueue.x-k8s.io,resourceflavors.kueue.x-k8s.io,workloadpriorityclasses.kueue.x-k8s.io,\
admissionchecks.kueue.x-k8s.io,provisioningrequestconfigs.kueue.x-k8s.io,topologies.kueue.x-k8s.io";

impl Lane {
    pub fn start(dir: &Path, kuberay: bool) -> Result<Self, String> {
        let tools = tools::Toolchain::cached()
            .map_err(|missing| format!("the e2e toolchain lacks {}", missing.join(", ")))?;
        let mut cluster = Cluster::start(dir, tools)?;
        cluster.owned = true;
        Ok(Self {
            cluster,
            loaded: false,
            kuberay,
        })
    }

    /// Empties the cluster and starts Kueue for `compiled`, its nodes added and its platform
    /// objects applied.
    pub fn load(&mut self, compiled: &Compiled) -> Result<(), String> {
        self.empty_and_start(compiled)?;
        apply_platform(&self.cluster).map(|_| ())
    }

    /// Empties the cluster (every namespace but the API server's own goes, with what is in it)
    /// and starts Kueue for `compiled`, its nodes added; nothing of the profile applied.
    pub fn empty_and_start(&mut self, compiled: &Compiled) -> Result<(), String> {
        let phases = Phases::new("lane");
        let phase = |what: &str| phases.mark(what);
        let k = self.cluster.kubectl();
        if self.loaded {
            let a = k.run(
                &[
                    "delete",
                    LANE_KINDS,
                    "--all-namespaces",
                    "--all",
                    "--wait",
                    "--timeout=60s",
                ],
                None,
            );
            if !a.ok {
                return Err(format!("emptying the lane: {}", a.stderr));
            }
            if self.kuberay {
                let namespaces = k.items(&["namespaces"])?;
                let names: Vec<&str> = namespaces
                    .iter()
                    .filter_map(|n| n["metadata"]["name"].as_str())
                    .filter(|n| !SYSTEM_NAMESPACES.contains(n))
                    .collect();
                if !names.is_empty() {
                    let mut args = vec!["delete", "namespaces", "--wait", "--timeout=120s"];
                    args.extend(names);
                    let a = k.run(&args, None);
                    if !a.ok {
                        return Err(format!("emptying the lane's namespaces: {}", a.stderr));
                    }
                }
            }
            phase("emptied");
            operators::stop_kueue(&self.cluster);
            phase("Kueue stopped");
            let a = k.run(
                &["delete", "nodes", "--all", "--wait", "--timeout=60s"],
                None,
            );
            if !a.ok {
                return Err(format!("removing the nodes: {}", a.stderr));
            }
            phase("nodes removed");
        }
        let bundle = self.cluster.dir.join("bundle");
        let _ = std::fs::remove_dir_all(&bundle);
        compiled.write(&bundle)?;
        let values = bundle.join("infra/kueue-values.yaml");
        let kueue = compiled.profile.operators.kueue.as_ref();
        let setup = operators::Setup {
            kueue_values: values.is_file().then_some(values.as_path()),
            kueue_namespace: kueue.map_or("kueue-system", |k| k.namespace.as_str()),
            kueue_release: kueue.map_or("kueue", |k| k.release.as_str()),
            kuberay: self.kuberay && !self.loaded,
        };
        self.loaded = true;
        operators::install(&self.cluster, &setup)?;
        phase("operators ready");
        operators::add_nodes(&self.cluster, &nodes::nodes(&compiled.profile))?;
        phase("nodes added");
        Ok(())
    }
}

/// Applies the bundle's platform objects as the README does (`kubectl apply --server-side -k
/// DIR/platform`), then waits until Kueue has looked at every ClusterQueue (an `Active`
/// condition, true or not).
pub fn apply_platform(cluster: &Cluster) -> Result<cluster::Applied, String> {
    let platform = cluster.dir.join("bundle/platform");
    let a = cluster.kubectl().run(
        &[
            "apply",
            "--server-side",
            "--field-manager=raykueue-e2e",
            "-k",
            &platform.display().to_string(),
        ],
        None,
    );
    if !a.ok {
        return Err(format!(
            "kubectl apply --server-side -k platform/ failed:\n{}",
            a.stderr
        ));
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let cqs = cluster.kubectl().items(&["clusterqueues.kueue.x-k8s.io"])?;
        let looked_at = cqs.iter().all(|cq| {
            cq["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Active"))
        });
        if looked_at {
            return Ok(cluster::Applied { warnings: a.stderr });
        }
        if std::time::Instant::now() > deadline {
            return Err("Kueue set no Active condition on the ClusterQueues within 30 s".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// `replay`: the scenario's workloads on a control plane whose platform is applied.
pub fn replay(
    cluster: &Cluster,
    compiled: &Compiled,
    scenario: &str,
    time_scale: Option<f64>,
    until: Option<u64>,
) -> Result<Vec<serde_json::Value>, String> {
    let (_, scenario) = raykueue::api::simulate::scenario::read(scenario).map_err(|e| match e {
        raykueue::api::simulate::scenario::ReadError::Io(m) => m,
        raykueue::api::simulate::scenario::ReadError::Invalid(d) => format!(
            "the scenario is invalid: {}",
            d.iter()
                .map(|d| d.message.clone())
                .collect::<Vec<_>>()
                .join("; ")
        ),
    })?;
    let plan = replay::Plan {
        submissions: raykueue::api::live::submissions(&compiled.profile, &scenario),
        time_scale,
        until,
    };
    replay::run(cluster, &plan)
}

/// The command line of `cargo run -p xtask -- e2e …`.
pub fn main(args: &[String]) -> std::process::ExitCode {
    use std::process::ExitCode;
    let Some((command, rest)) = args.split_first() else {
        return usage("e2e needs a command: tools, up, down or replay");
    };
    let mut flags: BTreeMap<&str, &str> = BTreeMap::new();
    let mut it = rest.iter();
    while let Some(a) = it.next() {
        let key = a.as_str();
        if !matches!(
            key,
            "--profile" | "--dir" | "--scenario" | "--time-scale" | "--output"
        ) {
            return usage(&format!("unknown argument `{key}`"));
        }
        let Some(value) = it.next() else {
            return usage(&format!("{key} needs a value"));
        };
        flags.insert(key, value);
    }
    match command.as_str() {
        "tools" => {
            if tools::ensure_all() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        "up" => {
            let (Some(profile), Some(dir)) = (flags.get("--profile"), flags.get("--dir")) else {
                return usage("e2e up needs --profile P and --dir D");
            };
            let started = std::time::Instant::now();
            let result = Compiled::profile(profile).and_then(|c| up(&PathBuf::from(dir), &c));
            match result {
                Ok(cluster) => {
                    println!("kubeconfig: {}", cluster.kubeconfig().display());
                    eprintln!("e2e up: ready in {:.1} s", started.elapsed().as_secs_f64());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("e2e up: {e}");
                    ExitCode::from(1)
                }
            }
        }
        "replay" => {
            let (Some(profile), Some(scenario)) = (flags.get("--profile"), flags.get("--scenario"))
            else {
                return usage("e2e replay needs --profile P and --scenario S");
            };
            let time_scale = match flags.get("--time-scale").map(|s| s.parse::<f64>()) {
                None => None,
                Some(Ok(s)) if s > 0.0 => Some(s),
                Some(_) => return usage("--time-scale takes a positive number of wall seconds"),
            };
            let json = match flags.get("--output").copied() {
                None | Some("json") => true,
                Some(other) => return usage(&format!("--output takes json, not `{other}`")),
            };
            let dir = match tempfile_dir() {
                Ok(d) => d,
                Err(e) => {
                    eprintln!("e2e replay: {e}");
                    return ExitCode::from(2);
                }
            };
            let result = Compiled::profile(profile).and_then(|c| {
                let mut cluster = up_with(&dir, &c, false)?;
                cluster.owned = true;
                apply_platform(&cluster)?;
                replay(&cluster, &c, scenario, time_scale, None)
            });
            let _ = std::fs::remove_dir_all(&dir);
            match result {
                Ok(events) => {
                    if json {
                        for e in events {
                            println!("{e}");
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("e2e replay: {e}");
                    ExitCode::from(1)
                }
            }
        }
        "down" => {
            let Some(dir) = flags.get("--dir") else {
                return usage("e2e down needs --dir D");
            };
            cluster::stop(Path::new(dir));
            ExitCode::SUCCESS
        }
        other => usage(&format!("unknown e2e command `{other}`")),
    }
}

/// A fresh folder for a control plane that lives as long as one command.
fn tempfile_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join(format!("raykueue-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    Ok(base)
}

fn usage(problem: &str) -> std::process::ExitCode {
    eprintln!(
        "{problem}\nusage: cargo run -p xtask -- e2e tools\n       cargo run -p xtask -- e2e up --profile P --dir D\n       cargo run -p xtask -- e2e down --dir D\n       cargo run -p xtask -- e2e replay --profile P --scenario S [--time-scale SECONDS] [--output json]"
    );
    std::process::ExitCode::from(2)
}
