//! The operators on the control plane: Kueue's own chart rendered with the bundle's
//! `infra/kueue-values.yaml` (`helm template`, the chart of the Kueue module), so the CRDs, the
//! webhook configurations and the Configuration are what `helm install` would give the cluster;
//! KubeRay's CRDs and its RayCluster webhook from its module; Kueue and the KubeRay operator run
//! as processes with the cluster-admin kubeconfig.
//!
//! What running outside a cluster forces, and nothing else, is changed (docs/development.md,
//! "The e2e tier", lists it), as a merge patch on the bundle's Configuration:
//! - `internalCertManagement.enable: false` and `webhook.certDir`: the harness's certificate
//!   instead of one Kueue would write into a Secret for a Service that does not exist;
//! - `webhook.host`/`port`, `metrics.bindAddress`, `health.healthProbeBindAddress`,
//!   `visibilityServer.bindAddress`/`bindPort`: free loopback ports;
//! - `leaderElection.leaderElect: false`: one replica, no lease to wait for.
//!
//! Each webhook's `clientConfig.service` becomes a `url` on loopback with the harness's CA.

use super::cluster::{Cluster, KUBERAY_WEBHOOK_PORT, http_get};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Reads a multi-document YAML stream into its objects (empty documents dropped).
pub fn objects(yaml: &str) -> Result<Vec<Value>, String> {
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(64 * 1024 * 1024),
            max_events: 50_000_000,
            max_nodes: 50_000_000,
            max_total_scalar_bytes: 64 * 1024 * 1024,
        },
    };
    let docs: Vec<Value> = serde_saphyr::from_multiple_with_options(yaml, options)
        .map_err(|e| format!("not YAML: {e}"))?;
    Ok(docs.into_iter().filter(Value::is_object).collect())
}

/// The documents of a YAML stream as text, each with its `kind` (read off its top-level
/// `kind:` line): CRDs are megabytes of YAML that the harness only hands to kubectl, so only
/// the documents it reads are parsed.
pub fn documents(yaml: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut flush = |doc: &mut String| {
        let kind = doc
            .lines()
            .find_map(|l| l.strip_prefix("kind:"))
            .map(|k| k.trim().trim_matches(['"', '\'']).to_string());
        if let Some(kind) = kind {
            out.push((kind, std::mem::take(doc)));
        }
        doc.clear();
    };
    for line in yaml.lines() {
        if line == "---" || line.starts_with("--- ") {
            flush(&mut current);
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    flush(&mut current);
    out
}

/// To YAML for kubectl: JSON is YAML.
pub fn stream(objects: &[Value]) -> String {
    objects.iter().fold(String::new(), |mut out, o| {
        let _ = writeln!(out, "---\n{o}");
        out
    })
}

fn kind(o: &Value) -> &str {
    o.get("kind").and_then(Value::as_str).unwrap_or("")
}

/// Kueue's chart rendered with the bundle's values: the CRDs as text, the other objects parsed.
#[derive(Debug)]
pub struct KueueChart {
    pub objects: Vec<Value>,
    pub crds: String,
}

impl KueueChart {
    pub fn render(
        cluster: &Cluster,
        values: Option<&Path>,
        namespace: &str,
        release: &str,
    ) -> Result<Self, String> {
        let chart = cluster.tools.get("kueue").module_dir.join("charts/kueue");
        let mut cmd = Command::new(cluster.tools.bin("helm", "helm"));
        cmd.args(["template", release])
            .arg(&chart)
            .args(["--namespace", namespace])
            .env("HELM_CACHE_HOME", cluster.dir.join("helm/cache"))
            .env("HELM_CONFIG_HOME", cluster.dir.join("helm/config"))
            .env("HELM_DATA_HOME", cluster.dir.join("helm/data"));
        if let Some(v) = values {
            cmd.arg("--values").arg(v);
        }
        let out = cmd.output().map_err(|e| format!("cannot run helm: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "helm template of Kueue's chart with the bundle's values failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mut crds = String::new();
        let mut rest = String::new();
        for (kind, text) in documents(&String::from_utf8_lossy(&out.stdout)) {
            let into = if kind == "CustomResourceDefinition" {
                &mut crds
            } else {
                &mut rest
            };
            into.push_str("---\n");
            into.push_str(&text);
        }
        Ok(Self {
            objects: objects(&rest)?,
            crds,
        })
    }

    fn of_kind<'a>(&'a self, k: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
        self.objects.iter().filter(move |o| kind(o) == k)
    }

    /// The Configuration the chart puts in its ConfigMap, as text (the bundle's bytes as the
    /// chart passes them on).
    pub fn configuration(&self) -> Result<String, String> {
        self.of_kind("ConfigMap")
            .find_map(|c| c["data"]["controller_manager_config.yaml"].as_str())
            .map(str::to_string)
            .ok_or_else(|| "Kueue's chart rendered no controller_manager_config.yaml".to_string())
    }

    /// The manager container's arguments but `--config` (feature gates, log level).
    pub fn args(&self) -> Vec<String> {
        self.of_kind("Deployment")
            .flat_map(|d| {
                d["spec"]["template"]["spec"]["containers"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter(|c| c["name"] == "manager")
            .flat_map(|c| c["args"].as_array().cloned().unwrap_or_default())
            .filter_map(|a| a.as_str().map(str::to_string))
            .filter(|a| !a.starts_with("--config="))
            .collect()
    }

    /// The webhook configurations, each webhook's service reference turned into a loopback URL.
    pub fn webhooks(&self, port: u16, ca_bundle: &str) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|o| {
                matches!(
                    kind(o),
                    "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration"
                )
            })
            .cloned()
            .map(|o| to_loopback(o, port, ca_bundle))
            .collect()
    }
}

/// A webhook configuration whose webhooks call `https://127.0.0.1:PORT/<path>`.
fn to_loopback(mut o: Value, port: u16, ca_bundle: &str) -> Value {
    if let Some(hooks) = o.get_mut("webhooks").and_then(Value::as_array_mut) {
        for h in hooks {
            let path = h["clientConfig"]["service"]["path"]
                .as_str()
                .unwrap_or("/")
                .to_string();
            h["clientConfig"] = json!({
                "url": format!("https://127.0.0.1:{port}{path}"),
                "caBundle": ca_bundle,
            });
        }
    }
    o
}

/// RFC 7386 merge patch.
pub fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// What running outside a cluster forces on the Configuration (the module's header lists why).
pub fn overrides(cluster: &Cluster, cert_dir: &Path) -> Value {
    let p = &cluster.ports;
    json!({
        "internalCertManagement": {"enable": false},
        "webhook": {"host": "127.0.0.1", "port": p.kueue_webhook, "certDir": cert_dir.display().to_string()},
        "metrics": {"bindAddress": format!("127.0.0.1:{}", p.kueue_metrics)},
        "health": {"healthProbeBindAddress": format!("127.0.0.1:{}", p.kueue_health)},
        "visibilityServer": {"bindAddress": "127.0.0.1", "bindPort": p.kueue_visibility},
        "leaderElection": {"leaderElect": false},
    })
}

/// Applies objects, failing with kubectl's message.
pub fn apply(cluster: &Cluster, objects: &[Value], what: &str) -> Result<(), String> {
    if objects.is_empty() {
        return Ok(());
    }
    apply_text(cluster, &stream(objects), what)
}

pub fn apply_text(cluster: &Cluster, yaml: &str, what: &str) -> Result<(), String> {
    let a = cluster.kubectl().apply(yaml, &["--force-conflicts"]);
    if a.ok {
        Ok(())
    } else {
        Err(format!("applying {what} failed:\n{}", a.stderr))
    }
}

/// Waits until every CRD is Established (`kubectl wait` refuses a CRD whose status the API
/// server has not written yet, so it is asked again).
pub fn wait_established(cluster: &Cluster) -> Result<(), String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let a = cluster.kubectl().run(
            &[
                "wait",
                "--for=condition=Established",
                "crd",
                "--all",
                "--timeout=30s",
            ],
            None,
        );
        if a.ok {
            return Ok(());
        }
        if std::time::Instant::now() > deadline {
            return Err(format!("CRDs not established: {}", a.stderr));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every YAML file of a folder, as one stream of text.
pub fn yaml_text(dir: &Path) -> Result<String, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut out = String::new();
    for f in files {
        out.push_str("---\n");
        out.push_str(&std::fs::read_to_string(&f).map_err(|e| e.to_string())?);
        out.push('\n');
    }
    Ok(out)
}

/// The Kueue and KubeRay an `up` runs, as the bundle configures them.
pub struct Setup<'a> {
    /// The bundle's `infra/kueue-values.yaml` on disk (the chart's defaults without one).
    pub kueue_values: Option<&'a Path>,
    pub kueue_namespace: &'a str,
    pub kueue_release: &'a str,
    /// Whether the KubeRay operator runs (its CRDs are installed either way): a replay of bare
    /// Workloads needs none, and only one operator can serve its webhook per machine.
    pub kuberay: bool,
}

/// CRDs, namespaces, Kueue, KubeRay, webhooks; returns once both operators are ready.
pub fn install(cluster: &Cluster, setup: &Setup<'_>) -> Result<(), String> {
    kueue(cluster, setup)?;
    if setup.kuberay {
        let phases = super::Phases::new("kuberay");
        start_kuberay(cluster)?;
        phases.mark("KubeRay ready");
        let hooks = kuberay_webhooks(cluster, &cluster.pki.ca_bundle()?)?;
        apply(cluster, &hooks, "KubeRay's webhook configuration")?;
    }
    Ok(())
}

/// Kueue as the bundle configures it: the chart rendered with its values, the CRDs (Kueue's,
/// KubeRay's and the ProvisioningRequest's) applied, Kueue started, its webhooks served.
pub fn kueue(cluster: &Cluster, setup: &Setup<'_>) -> Result<(), String> {
    let phases = super::Phases::new("kueue");
    let chart = KueueChart::render(
        cluster,
        setup.kueue_values,
        setup.kueue_namespace,
        setup.kueue_release,
    )?;
    phases.mark("chart rendered");
    let kuberay = cluster.tools.get("kuberay-operator");
    let autoscaler = cluster
        .tools
        .get("kueue")
        .also("k8s.io/autoscaler/cluster-autoscaler/apis")
        .ok_or("no cluster-autoscaler API module recorded")?;
    let crds = format!(
        "{}{}{}",
        chart.crds,
        yaml_text(&kuberay.module_dir.join("config/crd/bases"))?,
        yaml_text(&autoscaler.join("config/crd"))?
    );
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": setup.kueue_namespace}});
    apply(cluster, &[namespace], "Kueue's namespace")?;
    // The API server takes seconds over every apply of KubeRay's CRDs (their pod templates):
    // a lane applies them once, and again only if the text changes.
    let applied = cluster.dir.join("crds.yaml");
    let before = std::fs::read_to_string(&applied).ok();
    if before.as_deref() != Some(crds.as_str()) {
        if before.is_none() {
            // A fresh cluster: a plain create costs the API server a fraction of an apply.
            let a = cluster.kubectl().run(&["create", "-f", "-"], Some(&crds));
            if !a.ok {
                return Err(format!("creating the CRDs failed:\n{}", a.stderr));
            }
        } else {
            apply_text(cluster, &crds, "the CRDs")?;
        }
        phases.mark("CRDs sent");
        wait_established(cluster)?;
        std::fs::write(&applied, &crds).map_err(|e| e.to_string())?;
        phases.mark("CRDs applied");
    }
    start_kueue(cluster, &chart)?;
    phases.mark("Kueue ready");
    let hooks = chart.webhooks(cluster.ports.kueue_webhook, &cluster.pki.ca_bundle()?);
    apply(cluster, &hooks, "Kueue's webhook configurations")
}

/// Stops the Kueue process (a lane restarts it with the next profile's Configuration); killed,
/// not asked: nothing of its state is kept.
pub fn stop_kueue(cluster: &Cluster) {
    cluster.kill_process("kueue");
}

/// The webhook server's certificate where controller-runtime looks: `tls.crt`, `tls.key`.
fn cert_dir(cluster: &Cluster, dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    std::fs::copy(cluster.pki.pem("webhook"), dir.join("tls.crt")).map_err(|e| e.to_string())?;
    std::fs::copy(cluster.pki.key("webhook"), dir.join("tls.key")).map_err(|e| e.to_string())?;
    Ok(())
}

fn start_kueue(cluster: &Cluster, chart: &KueueChart) -> Result<(), String> {
    let dir = cluster.dir.join("kueue");
    let certs = dir.join("certs");
    cert_dir(cluster, &certs)?;
    let bundle = chart.configuration()?;
    std::fs::write(dir.join("bundle-configuration.yaml"), &bundle).map_err(|e| e.to_string())?;
    let mut config: Value = serde_saphyr::from_str(&bundle)
        .map_err(|e| format!("the bundle's Kueue Configuration is not YAML: {e}"))?;
    merge(&mut config, &overrides(cluster, &certs));
    let path = dir.join("configuration.yaml");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&config).unwrap_or_default(),
    )
    .map_err(|e| e.to_string())?;
    let mut cmd = with_fixed_cert_dirs(&dir, &certs);
    cmd.arg(cluster.tools.bin("kueue", "kueue"))
        .arg(format!("--config={}", path.display()))
        // The flag, not only $KUBECONFIG: the visibility API server reads the flag for its
        // delegated authentication, else it wants an in-cluster configuration
        // (kubernetes-sigs/kueue@v0.19.2 `pkg/visibility/server.go`).
        .arg(format!("--kubeconfig={}", cluster.kubeconfig().display()))
        .args(chart.args());
    cluster.spawn("kueue", cmd)?;
    let port = cluster.ports.kueue_health;
    cluster.wait_ready("kueue", Duration::from_secs(90), || {
        http_get(port, "/readyz").is_some()
    })
}

/// The fixed paths where Kueue v0.19.2 reads serving certificates it does not make itself, which
/// the chart fills from Secrets: the metrics server's when `internalCertManagement` is off
/// (kubernetes-sigs/kueue@v0.19.2 `cmd/kueue/main.go`, `metricsCertPath`), and the visibility
/// API server's (`pkg/visibility/server.go`, `certDir`).
const FIXED_CERT_DIRS: [&str; 2] = ["/etc/kueue/metrics/certs", "/visibility"];

/// A command that runs the program after it with the harness's certificate at
/// `FIXED_CERT_DIRS`, without writing the machine's folders: in a private mount namespace, the
/// program's root is an overlay of `/` whose upper layer is in the control plane's folder
/// (`/proc`, `/sys`, `/dev`, `/tmp` and `/run` bound in as they are).
fn with_fixed_cert_dirs(dir: &Path, certs: &Path) -> Command {
    let base = dir.join("root-overlay");
    let (upper, work, root) = (base.join("upper"), base.join("work"), base.join("root"));
    for d in [&upper, &work, &root] {
        let _ = std::fs::create_dir_all(d);
    }
    let copies: Vec<String> = FIXED_CERT_DIRS
        .iter()
        .map(|d| {
            format!(
                "mkdir -p {d} && cp {c}/tls.crt {c}/tls.key {d}/",
                c = certs.display()
            )
        })
        .collect();
    let script = format!(
        "mount -t overlay overlay -o lowerdir=/,upperdir={upper},workdir={work} {root} \
         && for m in proc sys dev tmp run; do [ -d /$m ] && mount --rbind /$m {root}/$m; done; \
         exec chroot {root} sh -c '{copies} && exec \"$@\"' sh \"$@\"",
        upper = upper.display(),
        work = work.display(),
        root = root.display(),
        copies = copies.join(" && "),
    );
    let mut cmd = Command::new("unshare");
    cmd.args([
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        &script,
        "sh",
    ]);
    cmd
}

fn start_kuberay(cluster: &Cluster) -> Result<(), String> {
    let tmp = cluster.dir.join("kuberay/tmp");
    // controller-runtime's default certificate folder is under os.TempDir(), which follows TMPDIR.
    cert_dir(cluster, &tmp.join("k8s-webhook-server/serving-certs"))?;
    if std::net::TcpListener::bind(("127.0.0.1", KUBERAY_WEBHOOK_PORT)).is_err() {
        return Err(format!(
            "port {KUBERAY_WEBHOOK_PORT}, where the KubeRay operator serves its webhook, is taken (another e2e control plane?)"
        ));
    }
    let p = &cluster.ports;
    let mut cmd = Command::new(cluster.tools.bin("kuberay-operator", "ray-operator"));
    cmd.arg(format!("--metrics-addr=127.0.0.1:{}", p.kuberay_metrics))
        .arg(format!(
            "--health-probe-bind-address=127.0.0.1:{}",
            p.kuberay_health
        ))
        .arg("--enable-leader-election=false")
        .arg("--log-stdout-encoder=console")
        .env("KUBECONFIG", cluster.kubeconfig())
        .env("TMPDIR", &tmp)
        .env("ENABLE_WEBHOOKS", "true");
    cluster.spawn("kuberay-operator", cmd)?;
    let port = p.kuberay_health;
    cluster.wait_ready("kuberay-operator", Duration::from_secs(60), || {
        http_get(port, "/readyz").is_some()
    })
}

/// KubeRay's validating webhook configuration, with only the webhooks the operator serves:
/// ray-project/kuberay@v1.6.2 ray-operator/main.go registers the RayCluster webhook alone
/// (`SetupRayClusterWebhookWithManager`), though `config/webhook/manifests.yaml` lists RayJob's
/// and RayService's too; the API server would get 404 for those and refuse every RayJob.
fn kuberay_webhooks(cluster: &Cluster, ca: &str) -> Result<Vec<Value>, String> {
    let dir = cluster
        .tools
        .get("kuberay-operator")
        .module_dir
        .join("config/webhook");
    let mut out = Vec::new();
    for mut o in objects(&yaml_text(&dir)?)?
        .into_iter()
        .filter(|o| kind(o).ends_with("WebhookConfiguration"))
    {
        if let Some(hooks) = o.get_mut("webhooks").and_then(Value::as_array_mut) {
            hooks.retain(|h| h["name"] == "vraycluster.kb.io");
        }
        if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert(
                "name".into(),
                Value::String("kuberay-validating-webhook-configuration".into()),
            );
        }
        out.push(to_loopback(o, KUBERAY_WEBHOOK_PORT, ca));
    }
    Ok(out)
}

/// kwok nodes for the profile's pools; waits until each is Ready.
pub fn add_nodes(cluster: &Cluster, nodes: &[Value]) -> Result<(), String> {
    if nodes.is_empty() {
        return Ok(());
    }
    // Node status is written by its kubelet: create the objects, then the status.
    let specs: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let mut n = n.clone();
            if let Some(o) = n.as_object_mut() {
                o.remove("status");
            }
            n
        })
        .collect();
    apply(cluster, &specs, "the kwok nodes")?;
    for n in nodes {
        let name = n["metadata"]["name"].as_str().unwrap_or_default();
        let patch = json!({"status": n["status"]}).to_string();
        let a = cluster.kubectl().run(
            &[
                "patch",
                "node",
                name,
                "--subresource=status",
                "--type=merge",
                "-p",
                &patch,
            ],
            None,
        );
        if !a.ok {
            return Err(format!("node {name}: {}", a.stderr));
        }
    }
    let a = cluster.kubectl().run(
        &[
            "wait",
            "--for=condition=Ready",
            "node",
            "--all",
            "--timeout=60s",
        ],
        None,
    );
    if a.ok {
        Ok(())
    } else {
        Err(format!("kwok nodes not Ready: {}", a.stderr))
    }
}
