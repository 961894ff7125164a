//! The model: the profile as the bundle's content, built as data. Kubernetes objects are values
//! the one YAML writer writes (`output`); files that are text by nature (the scripts, the
//! reviewer summary) are their templates' values, which `output::render` renders. Nothing here
//! renders a template or validates an object.

pub(crate) mod dashboard;
pub(crate) mod fleet;
pub(crate) mod gitops;
pub(crate) mod infra;
pub(crate) mod monitoring;
mod platform;
pub(crate) mod smoke;
mod summary;
pub(crate) mod workloads;

pub(crate) use gitops::gitops_objects;
pub(crate) use infra::infra_files;
pub(crate) use platform::platform_objects;
pub(crate) use summary::summary_context;
pub(crate) use workloads::workload_objects;

use crate::base::diagnostic::Diagnostic;
use crate::input::scripts::ScriptFiles;
use crate::profile::Profile;
use crate::simulate::standard::Unreclaimable;
use serde_json::Value;

/// A file of the bundle that is text by nature.
#[derive(Debug, Clone)]
pub struct TextFile {
    /// Path in the bundle (`infra/up.sh`).
    pub path: String,
    pub text: Text,
}

#[derive(Debug, Clone)]
pub enum Text {
    /// Written by a template (`templates/<template>`) from these values.
    Template { template: String, context: Value },
    /// Written already: values files (by the YAML writer), eksctl's ClusterConfig, ACK's
    /// request bodies.
    Written(String),
}

impl TextFile {
    pub(crate) fn template(path: &str, template: String, context: Value) -> Self {
        Self {
            path: path.to_owned(),
            text: Text::Template { template, context },
        }
    }

    pub(crate) fn written(path: impl Into<String>, text: String) -> Self {
        Self {
            path: path.into(),
            text: Text::Written(text),
        }
    }
}

/// A part of the bundle printed as one stream (`gen --only NAME`); the raykueue Argo CD plugin
/// renders one part per Application (its `ONLY` variable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `platform/`: namespace, service account, flavors, priority classes, queues.
    Platform,
    /// `workloads/`: every workload and its ConfigMaps.
    Workloads,
    /// What `gitops/workloads/` syncs: the long-running workloads, no RayJob.
    GitopsWorkloads,
    /// `gitops/argocd/`: the chart repository Secret and the Applications.
    ArgoCd,
    /// `gitops/argocd-root.yaml`: the Application applied once, which syncs `gitops/argocd/`.
    ArgoCdRoot,
    /// `monitoring/`: scrape objects, alert rules and the dashboard's ConfigMap.
    Monitoring,
}

impl Part {
    pub const ALL: [Part; 6] = [
        Part::Platform,
        Part::Workloads,
        Part::GitopsWorkloads,
        Part::ArgoCd,
        Part::ArgoCdRoot,
        Part::Monitoring,
    ];

    /// The name `gen --only` takes.
    pub fn name(self) -> &'static str {
        match self {
            Part::Platform => "platform",
            Part::Workloads => "workloads",
            Part::GitopsWorkloads => "gitops-workloads",
            Part::ArgoCd => "argocd",
            Part::ArgoCdRoot => "argocd-root",
            Part::Monitoring => "monitoring",
        }
    }

    /// Whether the object written to the bundle file `file` belongs to this part.
    pub(crate) fn selects(self, profile: &Profile, file: &str) -> bool {
        match self {
            Part::Platform => file.starts_with("platform/"),
            Part::Workloads => file.starts_with("workloads/"),
            Part::GitopsWorkloads => gitops::synced_workloads(profile).iter().any(|w| {
                file.strip_prefix(&workloads::folder(w))
                    .is_some_and(|rest| rest.starts_with('/'))
            }),
            Part::ArgoCd => file.starts_with("gitops/argocd/"),
            Part::ArgoCdRoot => file == gitops::ARGO_ROOT,
            Part::Monitoring => file.starts_with("monitoring/"),
        }
    }
}

/// The bundle's objects as data, each part in apply order.
#[derive(Debug, Default)]
pub(crate) struct Objects {
    pub(crate) platform: Vec<Object>,
    pub(crate) workloads: Vec<Object>,
    pub(crate) smoke: Vec<Object>,
    pub(crate) gitops: Vec<Object>,
    /// `monitoring/`: scrape objects, alert rules, the dashboard's ConfigMap.
    pub(crate) monitoring: Vec<Object>,
}

impl Objects {
    /// Every object, in apply order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Object> {
        self.platform
            .iter()
            .chain(&self.workloads)
            .chain(&self.smoke)
            .chain(&self.gitops)
            .chain(&self.monitoring)
    }
}

/// Every object of the bundle, built as data. For a large profile, platform and workload
/// objects are built on both cores.
pub(crate) fn objects(
    profile: &Profile,
    scripts: &ScriptFiles,
) -> Result<Objects, Vec<Diagnostic>> {
    let (platform, workloads) = crate::base::par::join(
        crate::base::par::wide(profile.items()),
        || platform_objects(profile),
        || workload_objects(profile, scripts),
    );
    Ok(Objects {
        platform,
        workloads: workloads?,
        smoke: smoke::smoke_objects(profile).map_err(|d| vec![d])?,
        gitops: gitops_objects(profile).map_err(|d| vec![d])?,
        monitoring: monitoring::monitoring_objects(profile),
    })
}

/// The bundle's text files: `infra/` and `SUMMARY.md` (whose queue behaviour reuses the checks'
/// RK146 finding, `unreclaimable`).
pub(crate) fn texts(
    profile: &Profile,
    unreclaimable: &[Unreclaimable],
) -> Result<Vec<TextFile>, Diagnostic> {
    let mut files = infra_files(profile)?;
    files.push(TextFile::template(
        "SUMMARY.md",
        "SUMMARY.md.j2".into(),
        summary_context(profile, unreclaimable),
    ));
    files.extend(monitoring::dashboard_json(profile));
    files.extend(monitoring::managed_texts(profile));
    Ok(files)
}

pub(crate) use crate::facts::MANAGED_BY;

/// One Kubernetes object of the bundle, as data: keys in the order they are written
/// (`apiVersion`, `kind`, `metadata`, `spec`), serialized once by the YAML writer and validated
/// as is — what is validated is what is written.
#[derive(Debug, Clone)]
pub struct Object {
    pub kind: &'static str,
    pub name: String,
    pub namespace: Option<String>,
    /// Bundle file the object goes to (several objects may share one file).
    pub file: String,
    /// The object itself (taken out when it is written).
    pub value: serde_json::Value,
}

/// A Kubernetes object `{apiVersion, kind, metadata, <fields>}`, every value moved in.
pub(crate) fn k8s(
    api_version: &str,
    kind: &str,
    metadata: serde_json::Value,
    fields: impl IntoIterator<Item = (&'static str, serde_json::Value)>,
) -> serde_json::Value {
    let head = [
        ("apiVersion", api_version.into()),
        ("kind", kind.into()),
        ("metadata", metadata),
    ];
    moved(head.into_iter().chain(fields))
}

/// A JSON object of `fields`, in order, every value moved in: the `json!` macro serializes a
/// copy of each value, which costs a large profile's lists (the summary's, 1,000 teams) dearly.
pub(crate) fn moved(
    fields: impl IntoIterator<Item = (&'static str, serde_json::Value)>,
) -> serde_json::Value {
    serde_json::Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

impl Object {
    pub fn data(
        kind: &'static str,
        name: impl Into<String>,
        namespace: Option<&str>,
        file: impl Into<String>,
        value: serde_json::Value,
    ) -> Self {
        Self {
            kind,
            name: name.into(),
            namespace: namespace.map(str::to_owned),
            file: file.into(),
            value,
        }
    }

    /// `ClusterQueue/team-a-cq` or `RayJob/ray/llm-training`, for messages.
    pub(crate) fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}/{}", self.kind, ns, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}
