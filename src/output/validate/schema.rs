//! The embedded schema table: `assets/schemas.json`, written by
//! `cargo run -p xtask -- import-schemas` from the upstream CRDs and Kubernetes schemas.
//!
//! Start-up reads only the table's outline (the kind list and where each node's text is);
//! a node is parsed the first time validation reaches it, so a run that validates three
//! ClusterQueues parses the few dozen nodes they use and never the pod template schemas.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::BTreeMap;
use std::sync::OnceLock;

static TEXT: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/schemas.json"));

/// The node format this reader understands (`FORMAT` in xtask/src/import.rs).
const FORMAT: u64 = 1;

/// Index of a node in the table.
pub(super) type NodeId = u32;

/// One kind raykueue knows the schema of.
#[derive(Debug, Deserialize)]
#[allow(clippy::struct_field_names)] // `kind` is the Kubernetes field's name.
pub(crate) struct Kind {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub namespaced: bool,
    pub root: NodeId,
}

/// A structural schema node, keys as the importer shortens them.
#[derive(Debug, Default, Deserialize)]
#[allow(clippy::struct_excessive_bools)] // One flag per schema keyword, as the schema has them.
pub(crate) struct Node {
    #[serde(rename = "t")]
    pub(crate) ty: Option<Type>,
    #[serde(rename = "n", default)]
    pub nullable: bool,
    #[serde(rename = "p")]
    pub properties: Option<BTreeMap<String, NodeId>>,
    #[serde(rename = "r", default)]
    pub required: Vec<String>,
    /// Schema of the values of a map (`additionalProperties`).
    #[serde(rename = "a")]
    pub values: Option<NodeId>,
    #[serde(rename = "i")]
    pub items: Option<NodeId>,
    #[serde(rename = "e")]
    pub(crate) enumeration: Option<Vec<Value>>,
    #[serde(rename = "pat")]
    pub pattern: Option<String>,
    #[serde(rename = "f")]
    pub format: Option<String>,
    #[serde(rename = "min")]
    pub minimum: Option<f64>,
    #[serde(rename = "max")]
    pub maximum: Option<f64>,
    #[serde(rename = "xmin", default)]
    pub(crate) exclusive_minimum: bool,
    #[serde(rename = "xmax", default)]
    pub(crate) exclusive_maximum: bool,
    #[serde(rename = "mul")]
    pub(crate) multiple_of: Option<f64>,
    #[serde(rename = "minL")]
    pub(crate) min_length: Option<u64>,
    #[serde(rename = "maxL")]
    pub(crate) max_length: Option<u64>,
    #[serde(rename = "minI")]
    pub(crate) min_items: Option<u64>,
    #[serde(rename = "maxI")]
    pub(crate) max_items: Option<u64>,
    #[serde(rename = "minP")]
    pub(crate) min_properties: Option<u64>,
    #[serde(rename = "maxP")]
    pub(crate) max_properties: Option<u64>,
    #[serde(rename = "ios", default)]
    pub int_or_string: bool,
    #[serde(rename = "pu", default)]
    pub(crate) preserve_unknown: bool,
    #[serde(rename = "lt")]
    pub(crate) list_type: Option<ListType>,
    #[serde(rename = "lk", default)]
    pub(crate) list_keys: Vec<String>,
    #[serde(rename = "v", default)]
    pub rules: Vec<Rule>,
    #[serde(rename = "d")]
    pub default: Option<Value>,
    /// Set when the node's text could not be read (a corrupt table: a bug, reported as such).
    #[serde(skip)]
    pub broken: bool,
    #[serde(skip)]
    regex: OnceLock<Option<regex::Regex>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Type {
    Object,
    Array,
    String,
    Integer,
    Number,
    Boolean,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ListType {
    Set,
    Map,
}

/// One `x-kubernetes-validations` entry.
#[derive(Debug, Clone, Deserialize)]
#[allow(clippy::struct_field_names)] // `rule` is the CRD field's name.
#[serde(rename_all = "camelCase")]
pub(crate) struct Rule {
    pub rule: String,
    pub message: Option<String>,
    pub(crate) message_expression: Option<String>,
    pub(crate) field_path: Option<String>,
}

impl Node {
    /// The compiled `pattern`; `None` when there is none, `Some(Err)` when it does not compile.
    pub(crate) fn regex(&self) -> Option<Result<&regex::Regex, &str>> {
        let pattern = self.pattern.as_deref()?;
        let compiled = self.regex.get_or_init(|| regex::Regex::new(pattern).ok());
        Some(compiled.as_ref().ok_or(pattern))
    }
}

/// The parsed outline of the table.
#[derive(Debug)]
pub(crate) struct Table {
    pub kinds: Vec<Kind>,
    raw: Vec<&'static RawValue>,
    nodes: Vec<OnceLock<Node>>,
}

#[derive(Deserialize)]
struct Outline {
    format: u64,
    kinds: Vec<Kind>,
    #[serde(borrow)]
    nodes: Vec<&'static RawValue>,
}

/// The table, read on first use. `Err` only if the embedded file is corrupt (a build bug).
pub(super) fn table() -> Result<&'static Table, &'static str> {
    static TABLE: OnceLock<Result<Table, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let outline: Outline = serde_json::from_str(TEXT)
                .map_err(|e| format!("the embedded schema table is unreadable: {e}"))?;
            if outline.format != FORMAT {
                return Err(format!(
                    "the embedded schema table has format {}, this build reads {FORMAT}",
                    outline.format
                ));
            }
            let nodes = outline.nodes.iter().map(|_| OnceLock::new()).collect();
            Ok(Table {
                kinds: outline.kinds,
                raw: outline.nodes,
                nodes,
            })
        })
        .as_ref()
        .map_err(String::as_str)
}

impl Table {
    pub(crate) fn kind(&self, api_version: &str, kind: &str) -> Option<&Kind> {
        self.kinds
            .iter()
            .find(|k| k.api_version == api_version && k.kind == kind)
    }

    /// The apiVersions under which raykueue knows `kind`.
    pub(crate) fn versions_of(&self, kind: &str) -> Vec<&str> {
        self.kinds
            .iter()
            .filter(|k| k.kind == kind)
            .map(|k| k.api_version.as_str())
            .collect()
    }

    /// A node, parsed on first use.
    pub(crate) fn node(&self, id: NodeId) -> &Node {
        static BROKEN: OnceLock<Node> = OnceLock::new();
        let i = id as usize;
        let (Some(cell), Some(raw)) = (self.nodes.get(i), self.raw.get(i)) else {
            return BROKEN.get_or_init(|| Node {
                broken: true,
                ..Node::default()
            });
        };
        cell.get_or_init(|| {
            serde_json::from_str(raw.get()).unwrap_or_else(|_| Node {
                broken: true,
                ..Node::default()
            })
        })
    }

    /// Every node id (tests walk the whole table).
    #[cfg(test)]
    pub(crate) fn ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.raw.len()).map(|i| i as NodeId)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_parses_and_every_pattern_compiles() {
        let t = table().unwrap();
        assert!(t.kinds.len() >= 11);
        for id in t.ids() {
            let n = t.node(id);
            assert!(!n.broken, "node {id}");
            if let Some(r) = n.regex() {
                assert!(r.is_ok(), "node {id}: pattern {r:?}");
            }
            for child in n
                .properties
                .iter()
                .flat_map(|p| p.values())
                .chain(n.items.iter())
                .chain(n.values.iter())
            {
                assert!(*child < id, "node {id} refers forward to {child}");
            }
        }
    }

    #[test]
    fn knows_the_kinds_raykueue_generates() {
        let t = table().unwrap();
        for (v, k) in [
            ("kueue.x-k8s.io/v1beta2", "ClusterQueue"),
            ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
            ("kueue.x-k8s.io/v1beta2", "ResourceFlavor"),
            ("kueue.x-k8s.io/v1beta2", "Cohort"),
            ("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass"),
            ("kueue.x-k8s.io/v1beta2", "Topology"),
            ("kueue.x-k8s.io/v1beta2", "AdmissionCheck"),
            ("kueue.x-k8s.io/v1beta2", "ProvisioningRequestConfig"),
            ("ray.io/v1", "RayJob"),
            ("ray.io/v1", "RayCluster"),
            ("ray.io/v1", "RayService"),
            ("v1", "Namespace"),
            ("v1", "ServiceAccount"),
            ("v1", "ConfigMap"),
        ] {
            assert!(t.kind(v, k).is_some(), "{v} {k}");
        }
    }
}
