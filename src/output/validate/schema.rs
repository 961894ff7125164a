//! The embedded schema table: `assets/schemas.json`, written by
//! `cargo run -p xtask -- import-schemas` from the upstream CRDs and Kubernetes schemas.
//!
//! Start-up reads only the table's outline (the kind list and where each node's text is);
//! a node is parsed the first time validation reaches it, so a run that validates three
//! ClusterQueues parses the few dozen nodes they use and never the pod template schemas.

use serde::Deserialize;
use serde_json::Value;
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
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespaced: bool,
    pub(crate) root: NodeId,
}

/// A structural schema node, keys as the importer shortens them.
#[derive(Debug, Default, Deserialize)]
#[allow(clippy::struct_excessive_bools)] // One flag per schema keyword, as the schema has them.
pub(crate) struct Node {
    #[serde(rename = "t")]
    pub(crate) ty: Option<Type>,
    #[serde(rename = "n", default)]
    pub(crate) nullable: bool,
    #[serde(rename = "p")]
    pub(crate) properties: Option<BTreeMap<String, NodeId>>,
    #[serde(rename = "r", default)]
    pub(crate) required: Vec<String>,
    /// Schema of the values of a map (`additionalProperties`).
    #[serde(rename = "a")]
    pub(crate) values: Option<NodeId>,
    #[serde(rename = "i")]
    pub(crate) items: Option<NodeId>,
    #[serde(rename = "e")]
    pub(crate) enumeration: Option<Vec<Value>>,
    #[serde(rename = "pat")]
    pub(crate) pattern: Option<String>,
    #[serde(rename = "f")]
    pub(crate) format: Option<String>,
    #[serde(rename = "min")]
    pub(crate) minimum: Option<f64>,
    #[serde(rename = "max")]
    pub(crate) maximum: Option<f64>,
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
    pub(crate) int_or_string: bool,
    #[serde(rename = "pu", default)]
    pub(crate) preserve_unknown: bool,
    #[serde(rename = "lt")]
    pub(crate) list_type: Option<ListType>,
    #[serde(rename = "lk", default)]
    pub(crate) list_keys: Vec<String>,
    #[serde(rename = "v", default)]
    pub(crate) rules: Vec<Rule>,
    #[serde(rename = "d")]
    pub(crate) default: Option<Value>,
    /// Set when the node's text could not be read (a corrupt table: a bug, reported as such).
    #[serde(skip)]
    pub(crate) broken: bool,
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
    pub(crate) rule: String,
    pub(crate) message: Option<String>,
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
    pub(crate) kinds: Vec<Kind>,
    raw: Vec<&'static str>,
    nodes: Vec<OnceLock<Node>>,
}

/// The table's head: everything before its nodes.
#[derive(Deserialize)]
struct Head {
    format: u64,
    kinds: Vec<Kind>,
}

/// What the importer writes between the head and the nodes, which follow one a line, each
/// but the last ending in a comma, then `]}` (`write` in xtask/src/import.rs).
const NODES: &str = "\"nodes\":[\n";

/// The head parsed and each node's text found by its line: scanning the whole table as JSON
/// to find where each node ends cost more than validating a small bundle. A table not laid
/// out as the importer writes it is unreadable, as a malformed one is.
fn outline(text: &'static str) -> Result<(Head, Vec<&'static str>), String> {
    let unreadable = |why: &str| format!("the embedded schema table is unreadable: {why}");
    let at = text.find(NODES).ok_or_else(|| unreadable("no node list"))?;
    let head: Head = serde_json::from_str(&format!("{}\"nodes\":[]}}", &text[..at]))
        .map_err(|e| unreadable(&e.to_string()))?;
    let body = text[at + NODES.len()..]
        .strip_suffix("]}\n")
        .ok_or_else(|| unreadable("the node list does not end the table"))?;
    let mut nodes: Vec<&'static str> = body.split_terminator('\n').collect();
    let last = nodes.len().saturating_sub(1);
    for (i, node) in nodes.iter_mut().enumerate() {
        *node = match node.strip_suffix(',') {
            Some(n) if i < last => n,
            None if i == last => node,
            _ => return Err(unreadable(&format!("node {i} is not one line"))),
        };
    }
    Ok((head, nodes))
}

/// The table, read on first use. `Err` only if the embedded file is corrupt (a build bug).
pub(super) fn table() -> Result<&'static Table, &'static str> {
    static TABLE: OnceLock<Result<Table, String>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let (head, raw) = outline(TEXT)?;
            if head.format != FORMAT {
                return Err(format!(
                    "the embedded schema table has format {}, this build reads {FORMAT}",
                    head.format
                ));
            }
            let nodes = raw.iter().map(|_| OnceLock::new()).collect();
            Ok(Table {
                kinds: head.kinds,
                raw,
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
            serde_json::from_str(raw).unwrap_or_else(|_| Node {
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

    /// The table read as one JSON document, the reference for `outline`.
    #[derive(Deserialize)]
    struct Whole {
        format: u64,
        kinds: Vec<Kind>,
        #[serde(borrow)]
        nodes: Vec<&'static serde_json::value::RawValue>,
    }

    #[test]
    fn the_outline_by_lines_is_the_tables_json() {
        let whole: Whole = serde_json::from_str(TEXT).unwrap();
        let (head, nodes) = outline(TEXT).unwrap();
        assert_eq!(head.format, whole.format);
        let kinds = |ks: &[Kind]| -> Vec<(String, String, bool, NodeId)> {
            ks.iter()
                .map(|k| (k.api_version.clone(), k.kind.clone(), k.namespaced, k.root))
                .collect()
        };
        assert_eq!(kinds(&head.kinds), kinds(&whole.kinds));
        let raw: Vec<&str> = whole.nodes.iter().map(|n| n.get()).collect();
        assert_eq!(nodes, raw);
        // A comma out of place or a table not ending its node list is refused. (Two nodes on
        // one line would be misread: the importer never writes one, and the test above holds
        // the embedded table to its JSON reading.)
        assert!(outline("{\"format\":1,\"kinds\":[],\n\"nodes\":[\n{},\n{},\n]}\n").is_err());
        assert!(outline("{\"format\":1,\"kinds\":[],\n\"nodes\":[\n{},\n{}\n]}").is_err());
        assert_eq!(
            outline("{\"format\":1,\"kinds\":[],\n\"nodes\":[\n{},\n{\"t\":\"string\"}\n]}\n")
                .unwrap()
                .1,
            ["{}", "{\"t\":\"string\"}"]
        );
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
