//! Where every node of the loaded profile stands: the span map from JSON pointer to file and
//! position, built when the tree is flattened into the JSON value the later stages read.

use super::{Loaded, Tree, TreeKind};
use crate::base::pointer::unescape_segment;
use crate::base::source::{Pos, Source};
use serde_json::{Map, Value};

#[derive(Debug, Default)]
pub(crate) struct SpanMap {
    /// The files the nodes came from (one, or a few with `extends`).
    sources: Vec<Source>,
    /// The document's shape with each node's place; `None` for a map built empty.
    /// A tree, not a map from JSON pointer: spans are read only when a diagnostic is reported,
    /// so building one pointer string and hash entry per node (every load) cost more than
    /// walking a few segments per lookup.
    root: Option<SpanNode>,
}

#[derive(Debug)]
struct SpanNode {
    /// Index in `sources`.
    source: usize,
    /// Position of the mapping key that holds this node, if any.
    key: Option<Pos>,
    pos: Pos,
    kids: Kids,
}

#[derive(Debug)]
enum Kids {
    Leaf,
    Seq(Vec<SpanNode>),
    /// Sorted by key (keys are unique: duplicates are refused), for binary search.
    Map(Vec<(String, SpanNode)>),
}

impl SpanMap {
    /// The value's place, or the nearest enclosing node's when the pointer names a missing field.
    pub(crate) fn value_place(&self, pointer: &str) -> Option<(&Source, Pos)> {
        self.lookup(pointer).map(|(s, _, v)| (s, v))
    }

    /// The key's place (for unknown-key errors), else the value's.
    pub(crate) fn key_place(&self, pointer: &str) -> Option<(&Source, Pos)> {
        self.lookup(pointer).map(|(s, k, v)| (s, k.unwrap_or(v)))
    }

    /// The value's position in its file.
    pub(crate) fn value_pos(&self, pointer: &str) -> Pos {
        self.value_place(pointer)
            .map(|(_, p)| p)
            .unwrap_or_default()
    }

    /// The key's position in its file.
    pub(crate) fn key_pos(&self, pointer: &str) -> Pos {
        self.key_place(pointer).map(|(_, p)| p).unwrap_or_default()
    }

    /// Whether the document has a node at exactly this pointer.
    pub(crate) fn has(&self, pointer: &str) -> bool {
        self.find(pointer).is_some_and(|(_, exact)| exact)
    }

    fn lookup(&self, pointer: &str) -> Option<(&Source, Option<Pos>, Pos)> {
        let (node, _) = self.find(pointer)?;
        Some((&self.sources[node.source], node.key, node.pos))
    }

    /// The node `pointer` names, or the nearest enclosing one (and whether it was exact).
    fn find(&self, pointer: &str) -> Option<(&SpanNode, bool)> {
        let mut node = self.root.as_ref()?;
        if pointer.is_empty() {
            return Some((node, true));
        }
        let rest = pointer.strip_prefix('/')?;
        for raw in rest.split('/') {
            let next = match &node.kids {
                Kids::Leaf => None,
                // Only the canonical spelling of an index names an item (`01` does not).
                Kids::Seq(items) => raw
                    .parse::<usize>()
                    .ok()
                    .filter(|i| i.to_string() == raw)
                    .and_then(|i| items.get(i)),
                Kids::Map(entries) => {
                    let key = unescape_segment(raw);
                    entries
                        .binary_search_by(|(k, _)| k.as_str().cmp(&key))
                        .ok()
                        .map(|i| &entries[i].1)
                }
            };
            match next {
                Some(n) => node = n,
                None => return Some((node, false)),
            }
        }
        Some((node, true))
    }
}

/// A tree as the JSON value the schema check reads, plus where each node came from.
pub fn flatten(tree: Tree) -> Loaded {
    let source = tree.source.clone();
    let mut spans = SpanMap::default();
    let (value, root) = flatten_into(tree, &mut spans);
    spans.root = Some(root);
    Loaded {
        source,
        value,
        spans,
    }
}

/// Sequences from this length on are flattened on all cores, item by item: a snapshot's
/// `List` of 10,000 Workloads is one document of 600,000 nodes.
const PAR_ITEMS: usize = 256;

fn flatten_into(tree: Tree, spans: &mut SpanMap) -> (Value, SpanNode) {
    let (value, kids) = match tree.kind {
        TreeKind::Scalar(v) => (v, Kids::Leaf),
        TreeKind::Seq(items) if items.len() >= PAR_ITEMS => {
            // Each item with a span map of its own, its sources then renumbered into this one.
            let flat = crate::base::par::map(true, items, |item| {
                let mut own = SpanMap::default();
                let (v, node) = flatten_into(item, &mut own);
                (v, node, own.sources)
            });
            let mut out = Vec::with_capacity(flat.len());
            let mut kids = Vec::with_capacity(flat.len());
            for (v, mut node, sources) in flat {
                let index: Vec<usize> =
                    sources.into_iter().map(|s| spans.source_index(s)).collect();
                if index.iter().enumerate().any(|(i, j)| i != *j) {
                    node.renumber(&index);
                }
                out.push(v);
                kids.push(node);
            }
            (Value::Array(out), Kids::Seq(kids))
        }
        TreeKind::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            let mut kids = Vec::with_capacity(items.len());
            for item in items {
                let (v, k) = flatten_into(item, spans);
                out.push(v);
                kids.push(k);
            }
            (Value::Array(out), Kids::Seq(kids))
        }
        TreeKind::Map(entries) => {
            let mut map = Map::with_capacity(entries.len());
            let mut kids = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                let (value, node) = flatten_into(v, spans);
                kids.push((k.clone(), node));
                map.insert(k, value);
            }
            kids.sort_unstable_by(|a, b| a.0.cmp(&b.0));
            (Value::Object(map), Kids::Map(kids))
        }
    };
    let source = spans.source_index(tree.source);
    let node = SpanNode {
        source,
        key: tree.key,
        pos: tree.pos,
        kids,
    };
    (value, node)
}

impl SpanNode {
    /// Source indices through `index` (old → new), in the whole subtree.
    fn renumber(&mut self, index: &[usize]) {
        self.source = index[self.source];
        match &mut self.kids {
            Kids::Leaf => {}
            Kids::Seq(items) => items.iter_mut().for_each(|n| n.renumber(index)),
            Kids::Map(entries) => entries.iter_mut().for_each(|(_, n)| n.renumber(index)),
        }
    }
}

impl SpanMap {
    /// The index of `source` in `sources`, added when new. Nodes of one file come in runs,
    /// so the last file is checked first.
    fn source_index(&mut self, source: Source) -> usize {
        let same =
            |s: &Source| std::sync::Arc::ptr_eq(&s.text, &source.text) && s.name == source.name;
        if self.sources.last().is_some_and(same) {
            return self.sources.len() - 1;
        }
        if let Some(i) = self.sources.iter().position(same) {
            return i;
        }
        self.sources.push(source);
        self.sources.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(source: &Source, line: u32) -> Tree {
        Tree {
            source: source.clone(),
            key: None,
            pos: Pos {
                line,
                column: 1,
                start: 0,
                len: 1,
            },
            kind: TreeKind::Scalar(Value::from(line)),
        }
    }

    /// A long list (flattened on all cores, item by item) whose items come from two files, as
    /// an `extends` overlay leaves them: each item keeps its own file and line.
    #[test]
    fn items_of_a_long_list_keep_their_files() {
        let (base, over) = (Source::new("base.yaml", "x"), Source::new("over.yaml", "y"));
        let n = PAR_ITEMS as u32 * 2;
        let items = (0..n)
            .map(|i| leaf(if i % 3 == 0 { &over } else { &base }, i + 1))
            .collect();
        let tree = Tree {
            source: base.clone(),
            key: None,
            pos: Pos::default(),
            kind: TreeKind::Seq(items),
        };
        let loaded = flatten(tree);
        for i in 0..n {
            let (source, pos) = loaded.spans.value_place(&format!("/{i}")).unwrap();
            let want = if i % 3 == 0 { "over.yaml" } else { "base.yaml" };
            assert_eq!((&*source.name, pos.line), (want, i + 1), "item {i}");
            assert_eq!(loaded.value[i as usize], Value::from(i + 1));
        }
    }
}
