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
/// Where `TEXT`'s head ends and each node's line begins and ends (`build.rs` outlines it; the
/// tests hold it to `outline`'s reading of the text).
static SPANS: (usize, &[(usize, usize)]) = include!(concat!(env!("OUT_DIR"), "/schema_spans.rs"));

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
    regex: OnceLock<Option<Pattern>>,
}

/// A compiled `pattern`. regex-lite compiles a pattern several times cheaper than `regex` (a
/// fresh `gen` compiles each pattern it meets), and matches as Go's RE2 (the API server's
/// engine) does on ASCII patterns: `\d`, `\w` and `\s` are ASCII in both. A case-insensitive
/// or non-ASCII pattern goes to `regex`, whose Unicode case folding is RE2's, where regex-lite
/// folds ASCII only (`every_pattern_matches_as_the_regex_crate_does`).
///
/// Kubernetes' quantity pattern, which a bundle meets at every CPU, memory and GPU amount, is
/// matched by `quantity` instead, and the name patterns by their hand-written checks: regex-lite's matcher spends thousands of instructions on
/// each of its alternations (`quantity_matches_as_its_pattern_does` holds the two equal).
#[derive(Debug)]
pub(crate) enum Pattern {
    Quantity,
    /// One of the Kubernetes name patterns `profile::names` checks by hand.
    Name(String),
    Lite(regex_lite::Regex),
    Unicode(regex::Regex),
}

/// `resource.Quantity`'s pattern in the Kubernetes and CRD schemas (`int-or-string` fields).
const QUANTITY: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";

/// Whether `s` matches `QUANTITY`: a signed decimal, then a binary or decimal SI suffix or a
/// signed decimal exponent.
fn quantity(s: &str) -> bool {
    /// `[0-9]+(\.[0-9]*)?|\.[0-9]+` at the start of `b`: its length, if any.
    fn decimal(b: &[u8]) -> Option<usize> {
        let int = b.iter().take_while(|c| c.is_ascii_digit()).count();
        if b.get(int) != Some(&b'.') {
            return (int > 0).then_some(int);
        }
        let frac = b[int + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        (int > 0 || frac > 0).then_some(int + 1 + frac)
    }
    fn signed(b: &[u8]) -> Option<usize> {
        let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
        decimal(&b[sign..]).map(|n| sign + n)
    }
    let b = s.as_bytes();
    let Some(n) = signed(b) else { return false };
    match &b[n..] {
        []
        | [b'K' | b'M' | b'G' | b'T' | b'P' | b'E', b'i']
        | [b'n' | b'u' | b'm' | b'k' | b'M' | b'G' | b'T' | b'P' | b'E'] => true,
        [b'e' | b'E', exponent @ ..] => signed(exponent) == Some(exponent.len()),
        _ => false,
    }
}

impl Pattern {
    fn new(pattern: &str) -> Option<Self> {
        if pattern == QUANTITY {
            Some(Self::Quantity)
        } else if crate::profile::names::common_pattern(pattern, "").is_some() {
            Some(Self::Name(pattern.to_owned()))
        } else if pattern.is_ascii() && !pattern.contains("(?i") {
            regex_lite::Regex::new(pattern).ok().map(Self::Lite)
        } else {
            regex::Regex::new(pattern).ok().map(Self::Unicode)
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Quantity => QUANTITY,
            Self::Name(p) => p,
            Self::Lite(r) => r.as_str(),
            Self::Unicode(r) => r.as_str(),
        }
    }

    pub(crate) fn is_match(&self, s: &str) -> bool {
        match self {
            Self::Quantity => quantity(s),
            Self::Name(p) => crate::profile::names::common_pattern(p, s).unwrap_or(false),
            Self::Lite(r) => r.is_match(s),
            Self::Unicode(r) => r.is_match(s),
        }
    }
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
    pub(crate) fn regex(&self) -> Option<Result<&Pattern, &str>> {
        let pattern = self.pattern.as_deref()?;
        let compiled = self.regex.get_or_init(|| Pattern::new(pattern));
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
#[cfg(test)]
const NODES: &str = "\"nodes\":[\n";

/// The head parsed and each node's text found by its line: scanning the whole table as JSON
/// to find where each node ends cost more than validating a small bundle. A table not laid
/// out as the importer writes it is unreadable, as a malformed one is. The reading `SPANS`
/// is held to; a run reads `SPANS` (`build.rs` does this at build time).
#[cfg(test)]
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
            let (head_end, spans) = SPANS;
            let head: Head = serde_json::from_str(&format!("{}\"nodes\":[]}}", &TEXT[..head_end]))
                .map_err(|e| format!("the embedded schema table is unreadable: {e}"))?;
            let raw: Vec<&'static str> = spans.iter().map(|&(a, b)| &TEXT[a..b]).collect();
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

    /// Every string of up to five characters over the quantity's alphabet, and longer ones
    /// around its edges, matches `quantity` exactly when it matches the pattern.
    #[test]
    fn quantity_matches_as_its_pattern_does() {
        let re = regex::Regex::new(QUANTITY).unwrap();
        assert!(
            table()
                .unwrap()
                .ids()
                .any(|id| table().unwrap().node(id).pattern.as_deref() == Some(QUANTITY))
        );
        let alphabet: Vec<char> = "+-.09eEKimMn".chars().collect();
        let mut strings = crate::base::every_string(&alphabet, 5);
        strings.extend(
            [
                "1Gi",
                "500m",
                "+1.5e-3",
                "-.5E+.5",
                "1Ei",
                "1e",
                "1E",
                "12345678901234567890Ti",
                "1.2.3",
                "1 ",
                " 1",
                "1i",
                "1Ki ",
                "0.0001u",
                "1x",
                "1ee1",
                "٣",
            ]
            .map(str::to_owned),
        );
        let mut matched = 0;
        for s in &strings {
            assert_eq!(quantity(s), re.is_match(s), "{s:?}");
            matched += usize::from(re.is_match(s));
        }
        assert!(matched > 1000, "{matched} of {}", strings.len());
    }

    /// The engine the validator picks for each `pattern` and the `regex` crate (Unicode-aware,
    /// as Go's RE2 is) agree on every pattern of the table, over strings of the shapes those
    /// patterns are about (names, quantities, durations, URLs, label keys) and their edges.
    #[test]
    fn every_pattern_matches_as_the_regex_crate_does() {
        let probes = [
            "",
            "a",
            "A",
            "abc",
            "a-b",
            "-a",
            "a-",
            "a.b",
            "a..b",
            "a/b",
            "example.com/a",
            "a_b",
            "A_b:c",
            "1",
            "0",
            "1Gi",
            "500m",
            "1.5",
            "+1e3",
            "1E",
            "10ms",
            "1h30m",
            "5s",
            "2m",
            "1y2w3d",
            "http://x",
            "https://x.y/z",
            "oci://r/c",
            "ssh://g",
            "socks5://p",
            "ftp://x",
            "warn",
            "ABORT",
            "abort ",
            "a[1]",
            "a[123456]",
            "a:b",
            "ns:key=v",
            "ſ",
            "K",
            "é",
            "über",
            "a\nb",
            ".",
            "..",
            "x.",
            "//",
            "ä-b",
            "10KiB",
            "1GB",
            "0",
        ];
        let t = table().unwrap();
        let mut checked = 0;
        for id in t.ids() {
            let n = t.node(id);
            let Some(Ok(lite)) = n.regex() else { continue };
            let full = regex::Regex::new(n.pattern.as_deref().unwrap()).unwrap();
            for p in probes {
                assert_eq!(
                    lite.is_match(p),
                    full.is_match(p),
                    "pattern {:?} on {p:?}",
                    n.pattern
                );
            }
            checked += 1;
        }
        assert!(checked >= 20, "{checked} patterns");
    }

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
        // The spans a run reads are this reading's.
        let spanned: Vec<&str> = SPANS.1.iter().map(|&(a, b)| &TEXT[a..b]).collect();
        assert_eq!(spanned, nodes);
        assert_eq!(&TEXT[SPANS.0..SPANS.0 + NODES.len()], NODES);
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
