//! `e2e up` / `e2e down`: a control plane on loopback — etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler, kwok, the Kueue controller manager and the KubeRay
//! operator — each a process of the toolchain, its log in `DIR/logs/<component>.log`, its pid in
//! `DIR/pids` (all that `down` needs).

use super::kube::Kubectl;
use super::pki::{self, Pki};
use super::tools::Toolchain;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The ports one control plane listens on, all on 127.0.0.1.
#[derive(Debug, Clone)]
pub struct Ports {
    pub etcd: u16,
    pub etcd_peer: u16,
    pub apiserver: u16,
    pub controller_manager: u16,
    pub scheduler: u16,
    pub kwok: u16,
    pub kueue_webhook: u16,
    pub kueue_metrics: u16,
    pub kueue_health: u16,
    pub kueue_visibility: u16,
    pub kuberay_metrics: u16,
    pub kuberay_health: u16,
}

/// controller-runtime's default webhook port, which the KubeRay operator does not let one
/// change (ray-project/kuberay@v1.6.2 ray-operator/main.go builds its manager without
/// `WebhookServer` options): one control plane with KubeRay's webhook per machine at a time.
pub const KUBERAY_WEBHOOK_PORT: u16 = 9443;

/// A loopback port no process listens on and this process has not handed out before. The
/// kernel may give a port it just released to the next `bind(0)`, and control planes started
/// side by side (the tier's lanes and tests) would then both take it before either listens.
fn free_port() -> Result<u16, String> {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    for _ in 0..100 {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|e| format!("no free loopback port: {e}"))?;
        if !given.contains(&port) {
            given.push(port);
            return Ok(port);
        }
    }
    Err("no loopback port left that this process has not handed out".into())
}

impl Ports {
    fn pick() -> Result<Self, String> {
        Ok(Self {
            etcd: free_port()?,
            etcd_peer: free_port()?,
            apiserver: free_port()?,
            controller_manager: free_port()?,
            scheduler: free_port()?,
            kwok: free_port()?,
            kueue_webhook: free_port()?,
            kueue_metrics: free_port()?,
            kueue_health: free_port()?,
            kueue_visibility: free_port()?,
            kuberay_metrics: free_port()?,
            kuberay_health: free_port()?,
        })
    }
}

/// What `kubectl apply` printed besides the objects: its warnings (the tier demands none).
#[derive(Debug)]
pub struct Applied {
    pub warnings: String,
}

/// A running control plane.
#[derive(Debug)]
pub struct Cluster {
    pub dir: PathBuf,
    pub tools: Toolchain,
    pub ports: Ports,
    pub pki: Pki,
    /// Stop every process when dropped (tests); `e2e up` leaves them to `e2e down`.
    pub owned: bool,
}

impl Cluster {
    pub fn kubeconfig(&self) -> PathBuf {
        self.dir.join("kubeconfig")
    }

    pub fn kubectl(&self) -> Kubectl {
        Kubectl {
            bin: self.tools.bin("kubernetes", "kubectl"),
            kubeconfig: self.kubeconfig(),
        }
    }

    pub fn log(&self, component: &str) -> PathBuf {
        self.dir.join("logs").join(format!("{component}.log"))
    }

    /// Starts etcd, the API server, the controller manager, the scheduler and kwok, and waits
    /// until the API server is ready. Kueue and KubeRay come after the CRDs (`operators`).
    pub fn start(dir: &Path, tools: Toolchain) -> Result<Self, String> {
        let started = Instant::now();
        std::fs::create_dir_all(dir.join("logs")).map_err(|e| e.to_string())?;
        let pki = pki::make(&dir.join("pki"))?;
        let ports = Ports::pick()?;
        let cluster = Self {
            dir: dir.to_path_buf(),
            tools,
            ports,
            pki,
            owned: false,
        };
        cluster.write_kubeconfig()?;
        cluster.start_etcd()?;
        cluster.start_apiserver()?;
        cluster.wait_ready("kube-apiserver", Duration::from_secs(60), || {
            cluster.kubectl().raw("/readyz").is_ok()
        })?;
        cluster.start_controller_manager()?;
        cluster.start_scheduler()?;
        cluster.start_kwok()?;
        eprintln!(
            "e2e: API server ready at https://127.0.0.1:{} after {:.1} s",
            cluster.ports.apiserver,
            started.elapsed().as_secs_f64()
        );
        Ok(cluster)
    }

    fn write_kubeconfig(&self) -> Result<(), String> {
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: e2e\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority: {ca}\nusers:\n- name: admin\n  user:\n    client-certificate: {crt}\n    client-key: {key}\ncontexts:\n- name: e2e\n  context: {{cluster: e2e, user: admin}}\ncurrent-context: e2e\n",
            port = self.ports.apiserver,
            ca = self.pki.ca().display(),
            crt = self.pki.pem("admin").display(),
            key = self.pki.key("admin").display(),
        );
        std::fs::write(self.kubeconfig(), text).map_err(|e| e.to_string())
    }

    /// Starts a process in its own process group, its output in its log, its pid recorded.
    pub fn spawn(&self, name: &str, mut cmd: Command) -> Result<u32, String> {
        let log = std::fs::File::create(self.log(name)).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        cmd.stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .process_group(0)
            .current_dir(&self.dir);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let pid = child.id();
        // The child is reaped by `down` (or the test's drop) through its pid; a `Child` left
        // unwaited does not kill it.
        std::mem::forget(child);
        let mut pids = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("pids"))
            .map_err(|e| e.to_string())?;
        writeln!(pids, "{name} {pid}").map_err(|e| e.to_string())?;
        Ok(pid)
    }

    /// Waits for `ready`, failing early with the log's last lines when the process is gone.
    pub fn wait_ready(
        &self,
        name: &str,
        timeout: Duration,
        mut ready: impl FnMut() -> bool,
    ) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            if ready() {
                return Ok(());
            }
            if !self.running(name) {
                return Err(format!(
                    "{name} exited during start-up; the end of {}:\n{}",
                    self.log(name).display(),
                    tail(&self.log(name), 25)
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{name} not ready after {} s; the end of {}:\n{}",
                    timeout.as_secs(),
                    self.log(name).display(),
                    tail(&self.log(name), 25)
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Kills the newest process started under `name` and waits until it is gone.
    pub fn kill_process(&self, name: &str) {
        let Some((_, pid)) = pids(&self.dir).into_iter().rfind(|(n, _)| n == name) else {
            return;
        };
        signal(pid, "-KILL");
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process started under `name` is still alive.
    pub fn running(&self, name: &str) -> bool {
        pids(&self.dir)
            .iter()
            .rfind(|(n, _)| n == name)
            .is_some_and(|(_, pid)| alive(*pid))
    }

    fn start_etcd(&self) -> Result<(), String> {
        let data = self.dir.join("etcd");
        let client = format!("http://127.0.0.1:{}", self.ports.etcd);
        let peer = format!("http://127.0.0.1:{}", self.ports.etcd_peer);
        let mut cmd = Command::new(self.tools.bin("etcd", "etcd"));
        cmd.arg(format!("--data-dir={}", data.display()))
            .arg(format!("--listen-client-urls={client}"))
            .arg(format!("--advertise-client-urls={client}"))
            .arg(format!("--listen-peer-urls={peer}"))
            .arg(format!("--initial-advertise-peer-urls={peer}"))
            .arg(format!("--initial-cluster=default={peer}"))
            // A throw-away store: losing it on a crash costs nothing, syncing it costs every write.
            .arg("--unsafe-no-fsync")
            .arg("--log-level=warn");
        self.spawn("etcd", cmd)?;
        let port = self.ports.etcd;
        self.wait_ready("etcd", Duration::from_secs(30), || {
            http_get(port, "/health").is_some_and(|b| b.contains("true"))
        })
    }

    fn start_apiserver(&self) -> Result<(), String> {
        let p = &self.pki;
        let mut cmd = Command::new(self.tools.bin("kubernetes", "kube-apiserver"));
        cmd.arg(format!(
            "--etcd-servers=http://127.0.0.1:{}",
            self.ports.etcd
        ))
        .arg("--bind-address=127.0.0.1")
        .arg("--advertise-address=127.0.0.1")
        .arg(format!("--secure-port={}", self.ports.apiserver))
        .arg(format!("--tls-cert-file={}", p.pem("apiserver").display()))
        .arg(format!(
            "--tls-private-key-file={}",
            p.key("apiserver").display()
        ))
        .arg(format!("--client-ca-file={}", p.ca().display()))
        .arg(format!(
            "--service-account-key-file={}",
            p.dir.join("sa.pub").display()
        ))
        .arg(format!(
            "--service-account-signing-key-file={}",
            p.key("sa").display()
        ))
        .arg("--service-account-issuer=https://kubernetes.default.svc.cluster.local")
        .arg("--service-cluster-ip-range=10.0.0.0/24")
        .arg("--authorization-mode=Node,RBAC")
        .arg("--allow-privileged=true")
        // On by default on AKS, GKE and EKS, and what raykueue's placement checks assume:
        // a pod asking for `nvidia.com/gpu` tolerates `nvidia.com/gpu:NoSchedule`.
        .arg("--enable-admission-plugins=ExtendedResourceToleration")
        .arg(format!(
            "--cert-dir={}",
            self.dir.join("apiserver").display()
        ))
        .arg("--profiling=false");
        self.spawn("kube-apiserver", cmd)?;
        Ok(())
    }

    fn start_controller_manager(&self) -> Result<(), String> {
        let mut cmd = Command::new(self.tools.bin("kubernetes", "kube-controller-manager"));
        cmd.arg(format!("--kubeconfig={}", self.kubeconfig().display()))
            .arg(format!(
                "--authentication-kubeconfig={}",
                self.kubeconfig().display()
            ))
            .arg(format!(
                "--authorization-kubeconfig={}",
                self.kubeconfig().display()
            ))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--secure-port={}", self.ports.controller_manager))
            .arg(format!(
                "--service-account-private-key-file={}",
                self.pki.key("sa").display()
            ))
            .arg(format!("--root-ca-file={}", self.pki.ca().display()))
            .arg(format!("--cert-dir={}", self.dir.join("kcm").display()))
            .arg("--leader-elect=false")
            .arg("--use-service-account-credentials=false")
            .arg("--profiling=false");
        self.spawn("kube-controller-manager", cmd)?;
        Ok(())
    }

    fn start_scheduler(&self) -> Result<(), String> {
        let mut cmd = Command::new(self.tools.bin("kubernetes", "kube-scheduler"));
        cmd.arg(format!("--kubeconfig={}", self.kubeconfig().display()))
            .arg(format!(
                "--authentication-kubeconfig={}",
                self.kubeconfig().display()
            ))
            .arg(format!(
                "--authorization-kubeconfig={}",
                self.kubeconfig().display()
            ))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--secure-port={}", self.ports.scheduler))
            .arg(format!(
                "--cert-dir={}",
                self.dir.join("scheduler").display()
            ))
            .arg("--leader-elect=false")
            .arg("--profiling=false");
        self.spawn("kube-scheduler", cmd)?;
        Ok(())
    }

    /// kwok with the stages of kwok's own "fast" set: nodes Ready at once and kept so by a
    /// lease, pods Ready once bound, a Job's pods done once running (kwok v0.8 runs no stage it
    /// is not given: sigs.k8s.io/kwok@v0.8.0 `pkg/kwok/cmd/root.go`).
    fn start_kwok(&self) -> Result<(), String> {
        let module = &self.tools.get("kwok").module_dir;
        let mut stages = String::new();
        for f in [
            "kustomize/stage/node/fast/node-initialize.yaml",
            "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
            "kustomize/stage/pod/fast/pod-ready.yaml",
            "kustomize/stage/pod/fast/pod-complete.yaml",
            "kustomize/stage/pod/fast/pod-delete.yaml",
        ] {
            let text = std::fs::read_to_string(module.join(f))
                .map_err(|e| format!("kwok's stage {f}: {e}"))?;
            stages.push_str("---\n");
            stages.push_str(&text);
        }
        let config = self.dir.join("kwok.yaml");
        std::fs::write(&config, stages).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(self.tools.bin("kwok", "kwok"));
        cmd.arg(format!("--config={}", config.display()))
            .arg("--node-lease-duration-seconds=40")
            .arg(format!("--kubeconfig={}", self.kubeconfig().display()))
            .arg("--manage-all-nodes=false")
            .arg(format!(
                "--manage-nodes-with-annotation-selector={}=fake",
                super::nodes::KWOK_ANNOTATION
            ))
            .arg("--node-ip=127.0.0.1")
            .arg(format!("--node-port={}", self.ports.kwok))
            .arg(format!("--server-address=127.0.0.1:{}", free_port()?))
            .arg("--cidr=10.244.0.0/16");
        self.spawn("kwok", cmd)?;
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.owned {
            stop(&self.dir);
        }
    }
}

/// The processes recorded in `DIR/pids`.
pub fn pids(dir: &Path) -> Vec<(String, u32)> {
    std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (name, pid) = l.split_once(' ')?;
            Some((name.to_string(), pid.trim().parse().ok()?))
        })
        .collect()
}

fn alive(pid: u32) -> bool {
    // A zombie (exited, not yet reaped by its parent) is as good as gone.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

fn signal(pid: u32, sig: &str) {
    // The whole process group: a component's helpers go with it.
    let _ = Command::new("kill")
        .args([sig, "--", &format!("-{pid}")])
        .stderr(Stdio::null())
        .status();
}

/// `e2e down`: stops every process `up` recorded in `dir` (TERM, then KILL after 10 s), newest
/// first; touches nothing outside `dir`.
pub fn stop(dir: &Path) {
    let mut procs = pids(dir);
    procs.reverse();
    for (_, pid) in &procs {
        if alive(*pid) {
            signal(*pid, "-TERM");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while procs.iter().any(|(_, p)| alive(*p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for (_, pid) in &procs {
        if alive(*pid) {
            signal(*pid, "-KILL");
        }
    }
    let _ = std::fs::remove_file(dir.join("pids"));
}

/// A plain-HTTP GET on loopback (etcd's and the operators' health endpoints): the body, or
/// `None` when nothing answers 200.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect_timeout(
        &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
        Duration::from_millis(500),
    )
    .ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.").then_some(())?;
    head.split_whitespace().nth(1).filter(|c| *c == "200")?;
    Some(body.to_string())
}

/// The last lines of a log.
pub fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
