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

/// One Kubernetes object of the bundle.
#[derive(Debug, Clone)]
pub struct Object {
    pub kind: &'static str,
    pub name: String,
    pub namespace: Option<String>,
    /// Bundle file the object goes to (several objects may share one file).
    pub file: String,
    pub body: Body,
}

/// How an object's content is given.
#[derive(Debug, Clone)]
pub enum Body {
    /// The object itself, keys in the order they are written (`apiVersion`, `kind`,
    /// `metadata`, `spec`): serialized once by the YAML writer, validated as is.
    Data(serde_json::Value),
    /// A template under `templates/` (e.g. `workloads/rayjob.yaml.j2`) and what it reads;
    /// rendered and read back as data (objects not yet built as data).
    Template {
        template: &'static str,
        context: serde_json::Value,
    },
}

impl Object {
    /// An object built as data.
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
            body: Body::Data(value),
        }
    }

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
            file: file.into(),
            body: Body::Template { template, context },
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
