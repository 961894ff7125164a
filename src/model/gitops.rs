//! GitOps wiring for the committed bundle (`gitops:` in the profile).
//!
//! Argo CD: an app of apps. `gitops/argocd-root.yaml` (applied once) syncs `gitops/argocd/`:
//! the Kueue chart's repository Secret (wave -4), then Applications that install the operators
//! from their Helm charts (wave -3 the NVIDIA device plugin where raykueue installs one, -2
//! KubeRay, -1 Kueue, so the CRDs exist first), then `platform/` (wave 0) and `workloads/`
//! (wave 1) as directory sources, with `SkipDryRunOnMissingResource=true` because their CRDs
//! come from the charts, and server-side apply because the Ray CRDs exceed the client-side
//! annotation limit.
//!
//! With `argocd.plugin`, the root, platform and workloads Applications have no committed folder
//! to sync: their source is the profile itself, rendered in Argo CD's repo-server by the
//! raykueue Config Management Plugin (`argocd/plugin.yaml`), one `gen --only PART` per
//! Application. The operators' Applications are Helm charts either way.
//!
//! Flux: `gitops/flux/` holds the sources (GitRepository, HelmRepositories for the NVIDIA chart,
//! KubeRay and the monitoring charts, OCIRepository for Kueue's OCI chart) and Kustomizations:
//! operators (the HelmReleases in `gitops/flux/operators/`), platform `dependsOn` operators,
//! workloads `dependsOn` platform, monitoring `dependsOn` operators.
//!
//! A profile monitored by an in-cluster Prometheus Operator stack gets it the way `up.sh`
//! installs it: kube-prometheus-stack and the DCGM exporter as charts beside the operators (Argo
//! CD wave -3), then `monitoring/` (wave 1).

use super::{MANAGED_BY, Object, Part};
use crate::base::diagnostic::Diagnostic;
use crate::profile::{ArgoPlugin, GitOps, Profile, Workload, WorkloadKind};
use serde_json::{Value, json};

pub(crate) const ARGO_ROOT: &str = "gitops/argocd-root.yaml";
const ARGO_REPOS: &str = "gitops/argocd/00-repositories.yaml";
const ARGO_APPS: &str = "gitops/argocd/10-applications.yaml";
const FLUX_SOURCES: &str = "gitops/flux/00-sources.yaml";
const FLUX_KUSTOMIZATIONS: &str = "gitops/flux/10-kustomizations.yaml";
const FLUX_RELEASES: &str = "gitops/flux/operators/helmreleases.yaml";

/// The plugin's `metadata.name` in `argocd/plugin.yaml` (no `spec.version`, so Applications
/// name it as it is: argo-cd@v3.5.1 `cmpserver/plugin/config.go` `Address`).
pub(crate) const ARGO_PLUGIN: &str = "raykueue";
/// The Application's `plugin.env` names. Argo CD hands them to the plugin prefixed with
/// `ARGOCD_ENV_` (argo-cd@v3.5.1 docs/operator-manual/config-management-plugins.md), which is
/// where `raykueue gen` reads `--profile` and `--only` from when they are not given.
pub(crate) const ARGO_PLUGIN_ENV: (&str, &str) = ("PROFILE", "ONLY");
/// The kustomization both GitOps tools sync workloads from: the long-running ones only.
pub(crate) const GITOPS_WORKLOADS: &str = "gitops/workloads";
/// Argo CD's retry of a failed sync, on every Application. Without it an automated sync retries
/// 5 times, 5 s doubling (argo-cd@v3.5.1 `controller/appcontroller.go` `RetryStrategy{Limit: 5}`,
/// `pkg/apis/application/v1alpha1/application_defaults.go`: 5 s, factor 2, at most 3 m), about
/// 2.5 minutes, and never again for that commit; the platform and workload Applications fail
/// until the operators' CRDs and webhooks exist, which on a cold cluster takes minutes. 10
/// retries from 10 s doubling to at most 3 m span about 20 minutes
/// (`RetryStrategy.NextRetryAt`: duration × factor^n, capped).
pub(crate) const ARGO_RETRY_LIMIT: i64 = 10;
pub(crate) const ARGO_RETRY_BACKOFF: (&str, i64, &str) = ("10s", 2, "3m");
/// Flux's HelmRelease install and upgrade strategy: `RetryOnFailure` retries a failed action
/// indefinitely at `retryInterval`, without uninstalling in between (fluxcd/helm-controller@v1.6.3
/// `api/v2/helmrelease_types.go` `InstallStrategy`, `internal/features/features.go`
/// `DefaultToRetryOnFailure`). The default `RemediateOnFailure` has 0 retries: a first install
/// that times out because the nodes are not ready yet ends in `RetriesExceeded` and waits for a
/// spec change.
pub(crate) const FLUX_RETRY_INTERVAL: &str = "1m";
/// A Flux Kustomization retries a failed apply after `retryInterval` (default: its `interval`,
/// 10 m; fluxcd/kustomize-controller@v1.9.4 `api/v1/kustomization_types.go`): one minute keeps a
/// cold install from waiting ten minutes per failed step.
pub(crate) const FLUX_KUSTOMIZATION_RETRY: &str = "1m";
const FLUX_SOURCE_API: &str = "source.toolkit.fluxcd.io/v1";
const FLUX_HELM_API: &str = "helm.toolkit.fluxcd.io/v2";
const IN_CLUSTER: &str = "https://kubernetes.default.svc";
/// The sync wave of the chart repository Secret: before the first operator Application (-3).
const REPOSITORY_WAVE: i32 = -4;

fn meta(name: &str, namespace: &str, wave: Option<i32>) -> Value {
    let mut m = json!({
        "name": name,
        "namespace": namespace,
        "labels": { MANAGED_BY.0: MANAGED_BY.1 },
    });
    if let Some(w) = wave {
        m["annotations"] = json!({ "argocd.argoproj.io/sync-wave": w.to_string() });
    }
    m
}

/// A Helm chart the monitoring collector needs, as `infra/up.sh` installs it.
struct StackChart {
    repo: &'static str,
    chart: &'static str,
    version: &'static str,
    release: String,
    namespace: String,
    values: Value,
}

/// The Prometheus Operator stack (with an in-cluster collector) and the DCGM exporter: the same
/// charts, versions and values as `infra/up.sh`.
fn monitoring_stack(p: &Profile) -> Vec<StackChart> {
    use super::infra::{
        DCGM_CHART, DCGM_REPO, DCGM_VERSION, STACK_CHART, STACK_REPO, STACK_VERSION,
    };
    let Some((m, managed)) = super::monitoring::collector(p) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if managed.is_none() {
        out.push(StackChart {
            repo: STACK_REPO,
            chart: STACK_CHART,
            version: STACK_VERSION,
            release: m.release.clone(),
            namespace: m.namespace.clone(),
            values: super::infra::stack_values(p),
        });
    }
    if m.gpu_metrics == crate::profile::GpuMetrics::AksGpuMonitoring {
        use super::infra::{
            GPU_MONITORING_CHART, GPU_MONITORING_NAMESPACE, GPU_MONITORING_VERSION,
        };
        out.push(StackChart {
            repo: crate::facts::operators::AKS_AI_RUNTIME_REGISTRY,
            chart: GPU_MONITORING_CHART,
            version: GPU_MONITORING_VERSION,
            release: GPU_MONITORING_CHART.to_owned(),
            namespace: GPU_MONITORING_NAMESPACE.to_owned(),
            values: super::infra::gpu_monitoring_values(p),
        });
    }
    if m.gpu_metrics == crate::profile::GpuMetrics::DcgmExporter {
        out.push(StackChart {
            repo: DCGM_REPO,
            chart: DCGM_CHART,
            version: DCGM_VERSION,
            release: super::monitoring::DCGM_NAME.to_owned(),
            namespace: m.namespace.clone(),
            values: super::infra::dcgm_values(p),
        });
    }
    out
}

/// The namespace `monitoring/` syncs into, when it holds Kubernetes objects (every collector
/// but Amazon's, which reads files `up.sh` hands it).
fn monitoring_synced(p: &Profile) -> Option<String> {
    let (m, managed) = super::monitoring::collector(p)?;
    (managed != Some(crate::cloud::ManagedFlavour::Amazon)).then_some(m.namespace)
}

/// Kueue's chart is published as OCI: `oci://registry/path/kueue` → (`registry/path`, `kueue`).
fn split_oci(chart: &str) -> Option<(&str, &str)> {
    chart.strip_prefix("oci://")?.rsplit_once('/')
}

/// The operators' Helm values as data (the same values files `infra/` installs with).
fn values(profile: &Profile) -> Result<(Option<Value>, Option<Value>), Diagnostic> {
    let kueue = match &profile.operators.kueue {
        Some(k) => Some(super::infra::kueue_values(profile, k)?),
        None => None,
    };
    let kuberay = profile
        .operators
        .kuberay
        .as_ref()
        .map(|_| super::infra::kuberay_values(profile));
    Ok((kueue, kuberay))
}

/// Every GitOps object of the profile (empty without `gitops:`).
pub(crate) fn gitops_objects(profile: &Profile) -> Result<Vec<Object>, Diagnostic> {
    let Some(g) = &profile.gitops else {
        return Ok(Vec::new());
    };
    let (kueue_values, kuberay_values) = values(profile)?;
    let wiring = Wiring {
        p: profile,
        g,
        kueue_values: kueue_values.as_ref(),
        kuberay_values: kuberay_values.as_ref(),
    };
    let mut out = Vec::new();
    if let Some(argo) = &g.argocd {
        argocd(&wiring, &argo.namespace, &argo.project, &mut out);
    }
    if let Some(flux) = &g.flux {
        flux_objects(&wiring, &flux.namespace, &flux.interval, &mut out);
    }
    Ok(out)
}

fn path_in_repo(g: &GitOps, sub: &str) -> String {
    format!("{}/{sub}", g.path.as_str().trim_end_matches('/'))
}

/// What both GitOps tools are generated from.
struct Wiring<'a> {
    p: &'a Profile,
    g: &'a GitOps,
    kueue_values: Option<&'a Value>,
    kuberay_values: Option<&'a Value>,
}

/// What the Argo CD Applications of a profile share.
struct ArgoApps<'a> {
    w: &'a Wiring<'a>,
    name: &'a str,
    /// The namespace of the Applications (Argo CD's).
    ns: &'a str,
    project: &'a str,
    plugin: Option<&'a ArgoPlugin>,
}

fn argocd(w: &Wiring<'_>, ns: &str, project: &str, out: &mut Vec<Object>) {
    let p = w.p;
    let name = p.name.as_str();
    let argo = ArgoApps {
        w,
        name,
        ns,
        project,
        plugin: w.g.argocd.as_ref().and_then(|a| a.plugin.as_ref()),
    };
    out.push(argo.app(
        format!("{name}-root"),
        0,
        &argo.git("gitops/argocd", Part::ArgoCd),
        ns,
        &[],
        ARGO_ROOT,
    ));
    // The repository Secret first, as `00-repositories.yaml` comes first in `gitops/argocd/`:
    // `gen --only argocd` (the plugin's stream) lists the objects in the folder's order.
    let kueue_chart = p
        .operators
        .kueue
        .as_ref()
        .map(|k| crate::facts::operators::kueue_chart(p, k));
    let kuberay_repo = p
        .operators
        .kuberay
        .as_ref()
        .map(|k| crate::facts::operators::kuberay_repo(p, k));
    let stack = monitoring_stack(p);
    let oci_stack = stack.iter().find_map(|c| c.repo.strip_prefix("oci://"));
    argo.repository_secrets(
        kueue_chart.as_deref(),
        kuberay_repo.as_deref(),
        oci_stack,
        out,
    );
    argo.operators(kueue_chart.as_ref(), kuberay_repo.as_ref(), out);
    for chart in &stack {
        // With the operators' charts: the Prometheus Operator's CRDs exist before monitoring/.
        out.push(argo.app(
            format!("{name}-{}", chart.release),
            -3,
            &json!({
                // Argo CD names an OCI Helm repository without its scheme.
                "repoURL": chart.repo.strip_prefix("oci://").unwrap_or(chart.repo),
                "chart": chart.chart, "targetRevision": chart.version,
                "helm": { "releaseName": chart.release, "valuesObject": chart.values },
            }),
            &chart.namespace,
            &["CreateNamespace=true", "ServerSideApply=true"],
            ARGO_APPS,
        ));
    }
    // The CRDs of these objects come from the charts above: skip their dry run until then.
    let dir_options = ["SkipDryRunOnMissingResource=true", "ServerSideApply=true"];
    out.push(argo.app(
        format!("{name}-platform"),
        0,
        &argo.git("platform", Part::Platform),
        &p.namespace,
        &dir_options,
        ARGO_APPS,
    ));
    if let Some(namespace) = monitoring_synced(p) {
        out.push(argo.app(
            format!("{name}-monitoring"),
            1,
            &argo.git("monitoring", Part::Monitoring),
            &namespace,
            &dir_options,
            ARGO_APPS,
        ));
    }
    argo.workloads(out);
}

impl ArgoApps<'_> {
    /// An Application syncing `source` into `dest_ns` at sync wave `wave`, kept in `file`.
    fn app(
        &self,
        app_name: String,
        wave: i32,
        source: &Value,
        dest_ns: &str,
        options: &[&str],
        file: &str,
    ) -> Object {
        let (ns, project) = (self.ns, self.project);
        let mut sync = json!({
            "automated": { "prune": true, "selfHeal": true },
            "retry": {
                "limit": ARGO_RETRY_LIMIT,
                "backoff": {
                    "duration": ARGO_RETRY_BACKOFF.0,
                    "factor": ARGO_RETRY_BACKOFF.1,
                    "maxDuration": ARGO_RETRY_BACKOFF.2,
                },
            },
        });
        if !options.is_empty() {
            sync["syncOptions"] = json!(options);
        }
        let metadata = meta(&app_name, ns, Some(wave));
        Object::data(
            "Application",
            app_name,
            Some(ns),
            file,
            json!({
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Application",
                "metadata": metadata,
                "spec": {
                    "project": project,
                    "source": source,
                    "destination": { "server": IN_CLUSTER, "namespace": dest_ns },
                    "syncPolicy": sync,
                },
            }),
        )
    }

    /// A committed folder, or with the plugin the part of the bundle that folder would hold.
    fn git(&self, sub: &str, part: Part) -> Value {
        let g = self.w.g;
        match self.plugin {
            Some(plugin) => plugin_source(g, plugin, part),
            None => {
                json!({ "repoURL": g.repo_url, "targetRevision": g.revision, "path": path_in_repo(g, sub) })
            }
        }
    }

    /// The repositories of the operators' OCI Helm charts, one per registry.
    fn repository_secrets(
        &self,
        kueue_chart: Option<&str>,
        kuberay_repo: Option<&str>,
        monitoring_registry: Option<&str>,
        out: &mut Vec<Object>,
    ) {
        let (name, ns) = (self.name, self.ns);
        let kueue_registry = kueue_chart.and_then(split_oci).map(|(r, _)| r);
        let kuberay_registry = kuberay_repo
            .and_then(|r| r.strip_prefix("oci://"))
            .map(|r| r.trim_end_matches('/'))
            .filter(|r| Some(*r) != kueue_registry);
        // One Secret per registry: the monitoring chart's only where no operator's names it.
        let monitoring_registry =
            monitoring_registry.filter(|r| ![kueue_registry, kuberay_registry].contains(&Some(r)));
        for (chart, registry) in [
            ("kueue", kueue_registry),
            ("kuberay", kuberay_registry),
            ("monitoring", monitoring_registry),
        ] {
            let Some(registry) = registry else { continue };
            // Argo CD reads OCI Helm charts from a repository registered with enableOCI.
            // A public OCI Helm repository: no credentials, only its address.
            out.push(Object::data(
                "Secret",
                format!("{name}-{chart}-chart-repository"),
                Some(ns),
                ARGO_REPOS,
                json!({
                    "apiVersion": "v1",
                    "kind": "Secret",
                    // Before every Application of the root app: the operators' Applications'
                    // first fetch of an OCI chart needs it (a Secret without a wave is wave 0,
                    // after the operators' waves -3 to -1).
                    "metadata": {
                        "name": format!("{name}-{chart}-chart-repository"),
                        "namespace": ns,
                        "labels": { MANAGED_BY.0: MANAGED_BY.1, "argocd.argoproj.io/secret-type": "repository" },
                        "annotations": { "argocd.argoproj.io/sync-wave": REPOSITORY_WAVE.to_string() },
                    },
                    "stringData": { "name": chart, "type": "helm", "url": registry, "enableOCI": "true" },
                }),
            ));
        }
    }

    /// The Applications of the NVIDIA GPU operator, KubeRay and Kueue, in that order.
    fn operators(
        &self,
        kueue_chart: Option<&String>,
        kuberay_repo: Option<&String>,
        out: &mut Vec<Object>,
    ) {
        let (p, name) = (self.w.p, self.name);
        let (kueue_values, kuberay_values) = (self.w.kueue_values, self.w.kuberay_values);
        if let Some(n) = crate::facts::operators::nvidia(p) {
            // First, like `up.sh`: GPU nodes advertise nvidia.com/gpu before any GPU pod needs it.
            out.push(self.app(
                format!("{name}-{}", n.release),
                -3,
                &json!({
                    "repoURL": n.repo, "chart": n.chart, "targetRevision": n.version,
                    "helm": { "releaseName": n.release, "valuesObject": super::infra::nvidia_values(p, &n) },
                }),
                n.namespace,
                if n.namespace == "kube-system" { &["ServerSideApply=true"][..] } else { &["CreateNamespace=true", "ServerSideApply=true"][..] },
                ARGO_APPS,
            ));
        }
        if let (Some(k), Some(v), Some(repo)) = (&p.operators.kuberay, kuberay_values, kuberay_repo)
        {
            // An OCI registry is named without its scheme (the repository Secret enables OCI).
            let repo = repo
                .strip_prefix("oci://")
                .map_or(repo.as_str(), |r| r.trim_end_matches('/'));
            out.push(self.app(
                format!("{name}-kuberay-operator"),
                -2,
                &json!({
                    "repoURL": repo, "chart": k.chart, "targetRevision": k.version,
                    "helm": { "releaseName": k.release, "valuesObject": v },
                }),
                &k.namespace,
                &["CreateNamespace=true", "ServerSideApply=true"],
                ARGO_APPS,
            ));
        }
        if let (Some(k), Some(v), Some(kueue_chart)) =
            (&p.operators.kueue, kueue_values, kueue_chart)
        {
            let (repo, chart) = split_oci(kueue_chart).unwrap_or((kueue_chart.as_str(), "kueue"));
            out.push(self.app(
                format!("{name}-kueue"),
                -1,
                &json!({
                    "repoURL": repo, "chart": chart, "targetRevision": k.version,
                    "helm": { "releaseName": k.release, "valuesObject": v },
                }),
                &k.namespace,
                &["CreateNamespace=true", "ServerSideApply=true"],
                ARGO_APPS,
            ));
        }
    }

    /// The Application of the synced workloads, if any.
    fn workloads(&self, out: &mut Vec<Object>) {
        let (p, name) = (self.w.p, self.name);
        let synced = synced_workloads(p);
        if !synced.is_empty() {
            // Kueue sets `suspend: false` when it admits a queued workload; without this, self-heal
            // would suspend it again and Kueue would evict it. Only for the kinds that are synced
            // and queued: on anything else Kueue never touches `suspend`.
            let mut ignore: Vec<Value> = Vec::new();
            for (kind, pointer) in [
                (WorkloadKind::RayCluster, "/spec/suspend"),
                (WorkloadKind::RayService, "/spec/rayClusterConfig/suspend"),
            ] {
                if synced
                    .iter()
                    .any(|w| w.kind == kind && w.admission(p).is_queued())
                {
                    ignore.push(
                        json!({ "group": "ray.io", "kind": kind.as_str(), "jsonPointers": [pointer] }),
                    );
                }
            }
            let mut options = vec!["SkipDryRunOnMissingResource=true", "ServerSideApply=true"];
            if !ignore.is_empty() {
                options.push("RespectIgnoreDifferences=true");
            }
            let mut workloads = self.app(
                format!("{name}-workloads"),
                1,
                &self.git(GITOPS_WORKLOADS, Part::GitopsWorkloads),
                &p.namespace,
                &options,
                ARGO_APPS,
            );
            if !ignore.is_empty() {
                workloads.value["spec"]["ignoreDifferences"] = Value::Array(ignore);
            }
            out.push(workloads);
        }
    }
}

/// An Application source rendered by the raykueue plugin: the profile's folder in the
/// repository, the profile's file name and the part to print as the plugin's variables.
fn plugin_source(g: &GitOps, plugin: &ArgoPlugin, part: Part) -> Value {
    let (dir, file) = plugin
        .profile
        .as_str()
        .rsplit_once('/')
        .unwrap_or((".", plugin.profile.as_str()));
    json!({
        "repoURL": g.repo_url,
        "targetRevision": g.revision,
        "path": dir,
        "plugin": {
            "name": ARGO_PLUGIN,
            "env": [
                { "name": ARGO_PLUGIN_ENV.0, "value": file },
                { "name": ARGO_PLUGIN_ENV.1, "value": part.name() },
            ],
        },
    })
}

/// The workloads GitOps syncs: the long-running ones. RayJobs are one-shot
/// (`WorkloadKind::is_one_shot`) and are submitted per run instead.
pub(crate) fn synced_workloads(p: &Profile) -> Vec<&Workload> {
    p.workloads
        .iter()
        .filter(|w| !w.kind.is_one_shot())
        .collect()
}

fn flux_objects(w: &Wiring<'_>, ns: &str, interval: &str, out: &mut Vec<Object>) {
    let (p, g) = (w.p, w.g);
    let name = p.name.as_str();
    let obj = |kind: &'static str, api: &str, obj_name: String, file: &str, spec: Value| {
        Object::data(
            kind,
            obj_name.clone(),
            Some(ns),
            file,
            json!({ "apiVersion": api, "kind": kind, "metadata": meta(&obj_name, ns, None), "spec": spec }),
        )
    };
    out.push(obj(
        "GitRepository",
        FLUX_SOURCE_API,
        name.to_owned(),
        FLUX_SOURCES,
        json!({ "interval": interval, "url": g.repo_url, "ref": { "branch": g.revision } }),
    ));
    // Retries: `FLUX_RETRY_INTERVAL`.
    let strategy = json!({ "name": "RetryOnFailure", "retryInterval": FLUX_RETRY_INTERVAL });
    flux_operators(w, &obj, interval, &strategy, out);
    let kustomization = |suffix: &str, sub: &str, depends: Option<String>| {
        let mut spec = json!({
            "interval": interval,
            "retryInterval": FLUX_KUSTOMIZATION_RETRY,
            "path": format!("./{}", path_in_repo(g, sub)),
            "prune": true,
            "wait": true,
            "sourceRef": { "kind": "GitRepository", "name": name },
        });
        if let Some(d) = depends {
            spec["dependsOn"] = json!([{ "name": d }]);
        }
        obj(
            "Kustomization",
            "kustomize.toolkit.fluxcd.io/v1",
            format!("{name}-{suffix}"),
            FLUX_KUSTOMIZATIONS,
            spec,
        )
    };
    let stack = monitoring_stack(p);
    for chart in &stack {
        out.push(obj(
            "HelmRepository",
            FLUX_SOURCE_API,
            chart.release.clone(),
            FLUX_SOURCES,
            if chart.repo.starts_with("oci://") {
                json!({ "interval": interval, "url": chart.repo, "type": "oci" })
            } else {
                json!({ "interval": interval, "url": chart.repo })
            },
        ));
        // `CreateReplace`: CRDs a chart carries in a `crds/` folder are upgraded with it (Helm
        // alone installs them once and never again).
        out.push(obj(
            "HelmRelease",
            FLUX_HELM_API,
            chart.release.clone(),
            FLUX_RELEASES,
            json!({
                "interval": interval, "releaseName": chart.release, "targetNamespace": chart.namespace,
                "chart": { "spec": { "chart": chart.chart, "version": chart.version,
                    "sourceRef": { "kind": "HelmRepository", "name": chart.release } } },
                "install": { "createNamespace": true, "crds": "CreateReplace", "strategy": strategy },
                "upgrade": { "crds": "CreateReplace", "strategy": strategy },
                "values": chart.values,
            }),
        ));
    }
    let has_operators = p.operators.kueue.is_some()
        || p.operators.kuberay.is_some()
        || crate::facts::operators::nvidia(p).is_some()
        || !stack.is_empty();
    if has_operators {
        out.push(kustomization("operators", "gitops/flux/operators", None));
    }
    out.push(kustomization(
        "platform",
        "platform",
        has_operators.then(|| format!("{name}-operators")),
    ));
    if !synced_workloads(p).is_empty() {
        out.push(kustomization(
            "workloads",
            GITOPS_WORKLOADS,
            Some(format!("{name}-platform")),
        ));
    }
    if monitoring_synced(p).is_some() {
        out.push(kustomization(
            "monitoring",
            "monitoring",
            has_operators.then(|| format!("{name}-operators")),
        ));
    }
}

/// The Helm repositories and releases of the NVIDIA GPU operator, KubeRay and Kueue.
fn flux_operators(
    w: &Wiring<'_>,
    obj: &impl Fn(&'static str, &str, String, &str, Value) -> Object,
    interval: &str,
    strategy: &Value,
    out: &mut Vec<Object>,
) {
    let (p, kueue_values, kuberay_values) = (w.p, w.kueue_values, w.kuberay_values);
    if let Some(n) = crate::facts::operators::nvidia(p) {
        out.push(obj(
            "HelmRepository",
            FLUX_SOURCE_API,
            n.repo_alias.into(),
            FLUX_SOURCES,
            json!({ "interval": interval, "url": n.repo }),
        ));
        out.push(obj(
            "HelmRelease",
            FLUX_HELM_API,
            n.release.into(),
            FLUX_RELEASES,
            json!({
                "interval": interval, "releaseName": n.release, "targetNamespace": n.namespace,
                "chart": { "spec": { "chart": n.chart, "version": n.version,
                    "sourceRef": { "kind": "HelmRepository", "name": n.repo_alias } } },
                "install": { "createNamespace": n.namespace != "kube-system", "strategy": strategy },
                "upgrade": { "strategy": strategy },
                "values": super::infra::nvidia_values(p, &n),
            }),
        ));
    }
    if let (Some(k), Some(v)) = (&p.operators.kuberay, kuberay_values) {
        let repo = crate::facts::operators::kuberay_repo(p, k);
        let mut source = json!({ "interval": interval, "url": repo });
        if repo.starts_with("oci://") {
            source["type"] = json!("oci");
        }
        out.push(obj(
            "HelmRepository",
            FLUX_SOURCE_API,
            "kuberay".into(),
            FLUX_SOURCES,
            source,
        ));
        // KubeRay's chart ships its CRDs in `crds/` (ray-project/kuberay@v1.7.0
        // helm-chart/kuberay-operator/crds), which Helm installs once and never upgrades
        // unless told to.
        out.push(obj(
            "HelmRelease",
            FLUX_HELM_API,
            k.release.to_string(),
            FLUX_RELEASES,
            json!({
                "interval": interval, "releaseName": k.release, "targetNamespace": k.namespace,
                "chart": { "spec": { "chart": k.chart, "version": k.version,
                    "sourceRef": { "kind": "HelmRepository", "name": "kuberay" } } },
                "install": { "createNamespace": true, "crds": "CreateReplace", "strategy": strategy },
                "upgrade": { "crds": "CreateReplace", "strategy": strategy },
                "values": v,
            }),
        ));
    }
    if let (Some(k), Some(v)) = (&p.operators.kueue, kueue_values) {
        let chart = crate::facts::operators::kueue_chart(p, k);
        // The layer selector hands Flux the chart archive of Kueue's OCI artifact.
        out.push(obj(
            "OCIRepository",
            FLUX_SOURCE_API,
            "kueue".into(),
            FLUX_SOURCES,
            json!({
                "interval": interval, "url": chart, "ref": { "tag": k.version },
                "layerSelector": {
                    "mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip",
                    "operation": "copy",
                },
            }),
        ));
        // Kueue's chart ships its CRDs as templates (kubernetes-sigs/kueue@v0.19.2
        // charts/kueue/templates/crd): a `crds` policy would do nothing.
        out.push(obj(
            "HelmRelease",
            FLUX_HELM_API,
            k.release.to_string(),
            FLUX_RELEASES,
            json!({
                "interval": interval, "releaseName": k.release, "targetNamespace": k.namespace,
                "chartRef": { "kind": "OCIRepository", "name": "kueue" },
                "install": { "createNamespace": true, "strategy": strategy },
                "upgrade": { "strategy": strategy },
                "values": v,
            }),
        ));
    }
}
