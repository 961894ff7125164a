//! Stage 4: the profile as the objects to generate. Each `Object` names its template and
//! carries the typed context the template reads; nothing here is YAML text.

pub mod gitops;
pub mod infra;
mod platform;
pub mod smoke;
mod summary;
pub mod workloads;

pub use gitops::gitops_objects;
pub use infra::infra_files;
pub use platform::platform_objects;
pub use summary::summary_context;
pub use workloads::workload_objects;

use serde::Serialize;

/// Label on every generated object, so users (and `kubectl apply --prune`) can select them.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "raykueue");

/// One Kubernetes object to render.
#[derive(Debug, Clone)]
pub struct Object {
    pub kind: &'static str,
    pub name: String,
    pub namespace: Option<String>,
    /// Template under `templates/`, e.g. `platform/clusterqueue.yaml.j2`.
    pub template: &'static str,
    /// Bundle file the object goes to (several objects may share one file).
    pub file: String,
    /// What the template reads.
    pub context: serde_json::Value,
}

impl Object {
    pub fn new(
        kind: &'static str,
        name: impl Into<String>,
        namespace: Option<&str>,
        template: &'static str,
        file: impl Into<String>,
        context: &impl Serialize,
    ) -> Self {
        // Serializing plain data structs into a JSON value cannot fail.
        let context = serde_json::to_value(context).unwrap_or_default();
        Self::with_context(kind, name, namespace, template, file, context)
    }

    /// `new` for a context already built as JSON: moved in, not serialized a second time.
    pub fn with_context(
        kind: &'static str,
        name: impl Into<String>,
        namespace: Option<&str>,
        template: &'static str,
        file: impl Into<String>,
        context: serde_json::Value,
    ) -> Self {
        Self {
            kind,
            name: name.into(),
            namespace: namespace.map(str::to_owned),
            template,
            file: file.into(),
            context,
        }
    }

    /// `ClusterQueue/team-a-cq` or `RayJob/ray/llm-training`, for messages.
    pub fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}/{}", self.kind, ns, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}
