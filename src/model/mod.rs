//! Stage 4: the profile as the objects to generate, built as data; nothing here is YAML text.

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

/// Label on every generated object, so users (and `kubectl apply --prune`) can select them.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "raykueue");

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
pub fn k8s(
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
pub fn moved(
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
    pub fn display_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{}/{}", self.kind, ns, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}
