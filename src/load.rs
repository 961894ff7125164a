//! Stage 1: bytes → a JSON value plus the source position of every node.
//!
//! The profile is parsed with serde-saphyr into a tree whose nodes carry their positions
//! (`Spanned`), then flattened into a `serde_json::Value` (what the schema check reads) and a
//! map from JSON pointer to position (how every later diagnostic finds its line). Hostile input
//! is bounded here: size, depth, node count, alias expansion, duplicate keys, tags.

use crate::diagnostic::Diagnostic;
use crate::source::{Pos, Source};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;
use std::fmt::{self, Write as _};

/// Profiles are small; anything this large is a mistake or an attack, refused before parsing.
// 4 MiB holds about 4,500 synthetic teams (1,000 teams take 0.9 MB) and keeps the answer to
// any input under a second (a 4.7 MB profile with a schema error: 0.75 s, release build).
pub const MAX_PROFILE_BYTES: usize = 4 * 1024 * 1024;

/// The loaded document (after overlays) and where each of its nodes stands.
#[derive(Debug)]
pub struct Loaded {
    /// The file the user named (the top of an `extends` chain).
    pub source: Source,
    pub value: Value,
    pub spans: SpanMap,
}

/// A YAML node with its place: what overlays merge, before it is flattened into JSON.
#[derive(Debug, Clone)]
pub struct Tree {
    pub source: Source,
    /// Position of the mapping key that holds this node, if any.
    pub key: Option<Pos>,
    pub pos: Pos,
    pub kind: TreeKind,
}

#[derive(Debug, Clone)]
pub enum TreeKind {
    /// null, boolean, number or string.
    Scalar(Value),
    Seq(Vec<Tree>),
    Map(Vec<(String, Tree)>),
}

impl TreeKind {
    /// `a mapping`, `a list`, `a string`... for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            TreeKind::Map(_) => "a mapping",
            TreeKind::Seq(_) => "a list",
            TreeKind::Scalar(Value::String(_)) => "a string",
            TreeKind::Scalar(Value::Null) => "nothing (null)",
            TreeKind::Scalar(Value::Bool(_)) => "a boolean",
            TreeKind::Scalar(_) => "a number",
        }
    }
}

#[derive(Debug, Default)]
pub struct SpanMap {
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
    pub fn value_place(&self, pointer: &str) -> Option<(&Source, Pos)> {
        self.lookup(pointer).map(|(s, _, v)| (s, v))
    }

    /// The key's place (for unknown-key errors), else the value's.
    pub fn key_place(&self, pointer: &str) -> Option<(&Source, Pos)> {
        self.lookup(pointer).map(|(s, k, v)| (s, k.unwrap_or(v)))
    }

    /// The value's position in its file.
    pub fn value_pos(&self, pointer: &str) -> Pos {
        self.value_place(pointer)
            .map(|(_, p)| p)
            .unwrap_or_default()
    }

    /// The key's position in its file.
    pub fn key_pos(&self, pointer: &str) -> Pos {
        self.key_place(pointer).map(|(_, p)| p).unwrap_or_default()
    }

    /// Whether the document has a node at exactly this pointer.
    pub fn has(&self, pointer: &str) -> bool {
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

/// A JSON pointer segment back to the key it escapes (`~1` is `/`, `~0` is `~`).
fn unescape_segment(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.contains('~') {
        raw.replace("~1", "/").replace("~0", "~").into()
    } else {
        raw.into()
    }
}

impl Loaded {
    /// A diagnostic placed at the value `pointer` names (in whichever file it came from).
    pub fn at_value(&self, d: Diagnostic, pointer: &str) -> Diagnostic {
        if d.place.is_some() {
            return d;
        }
        match self.spans.value_place(pointer) {
            Some((src, pos)) => d.at(src, pos),
            None => d.at(&self.source, self.source.pos_at(0)),
        }
    }

    /// A diagnostic placed at the key of `pointer`.
    pub fn at_key(&self, d: Diagnostic, pointer: &str) -> Diagnostic {
        match self.spans.key_place(pointer) {
            Some((src, pos)) => d.at(src, pos),
            None => d.at(&self.source, self.source.pos_at(0)),
        }
    }

    /// The scalar as written in its file (`2.50`, `NO`), for hints about YAML retyping.
    pub fn raw_text(&self, pointer: &str) -> Option<&str> {
        let (src, pos) = self.spans.value_place(pointer)?;
        src.text.get(pos.start..pos.start + pos.len)
    }
}

/// Turn a JSON pointer into the field path users read: `queues.clusterQueues[0].name`.
pub fn field_path(pointer: &str) -> String {
    let mut out = String::new();
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(&seg);
            out.push(']');
        } else if !seg.is_empty()
            && seg
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&seg);
        } else {
            let _ = write!(out, "[{seg:?}]");
        }
    }
    out
}

/// Escape one key for a JSON pointer.
pub fn pointer_push(base: &str, key: &str) -> String {
    format!("{base}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// Read bytes into a `Source`: UTF-8 only, a leading BOM dropped (so columns match editors).
pub fn decode(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_as(name, bytes, "profile")
}

/// `decode` for a manifest stream (`raykueue validate`): same rules, worded for manifests.
pub fn decode_manifest(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_as(name, bytes, "manifest")
}

/// `decode` for a `simulate` scenario: same rules, worded for scenarios.
pub fn decode_scenario(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_as(name, bytes, "scenario")
}

fn decode_as(name: &str, bytes: &[u8], noun: &str) -> Result<Source, Diagnostic> {
    if bytes.len() > MAX_PROFILE_BYTES {
        return Err(Diagnostic::error(
            "RK004",
            format!(
                "the {noun} is larger than {} MiB, the limit for a {noun}",
                MAX_PROFILE_BYTES / (1024 * 1024)
            ),
        )
        .at(&Source::new(name, ""), Pos::default())
        .hint("split the file, or check that the right file was named"));
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => {
            let src = Source::new(name, text);
            // YAML allows no C0 control characters but tab, LF and CR; the parser reports them
            // without a useful position, so find them here.
            if let Some(i) =
                text.find(|c: char| (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || c == '\u{7f}')
            {
                let c = text[i..].chars().next().unwrap_or_default();
                let mut pos = src.pos_at(i);
                pos.len = c.len_utf8();
                return Err(Diagnostic::error(
                    "RK001",
                    format!("control character U+{:04X} is not allowed in YAML", c as u32),
                )
                .at(&src, pos)
                .label("here")
                .hint("remove it; write it as an escape (\"\\x00\") inside a double-quoted string if it is really meant"));
            }
            Ok(src)
        }
        Err(e) => {
            let good = &bytes[..e.valid_up_to()];
            // Valid by construction: `valid_up_to` ends on a character boundary.
            let text = String::from_utf8_lossy(good).into_owned();
            let src = Source::new(name, text);
            let pos = src.pos_at(good.len());
            Err(
                Diagnostic::error("RK002", format!("the {noun} is not valid UTF-8"))
                    .at(&src, pos)
                    .label("invalid byte sequence here")
                    .hint("save the file as UTF-8"),
            )
        }
    }
}

/// Parse a decoded source into a value and its span map (no overlays).
pub fn parse(source: &Source) -> Result<Loaded, Vec<Diagnostic>> {
    Ok(flatten(parse_tree(source)?))
}

/// Parse a decoded source into a tree of placed nodes.
pub fn parse_tree(source: &Source) -> Result<Tree, Vec<Diagnostic>> {
    if source.text.trim().is_empty()
        || source
            .text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Err(vec![
            Diagnostic::error("RK006", "the profile is empty")
                .at(source, source.pos_at(0))
                .hint("start from a shipped profile: `raykueue gen --profile team` shows what one produces; `profiles/team.yaml` is a complete example"),
        ]);
    }
    // A tag needs a `!`, a second document a `---` or `...` marker: without them the
    // pre-pass can find nothing, and it costs a whole second parse.
    if source.text.contains(['!']) || source.text.contains("---") || source.text.contains("...") {
        let tag_errors = find_tags_and_documents(source, true);
        if !tag_errors.is_empty() {
            return Err(tag_errors);
        }
    }
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: 1,
            max_depth: 48,
            max_nodes: 600_000,
            max_aliases: 1_000,
            max_anchors: 1_000,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 20_000,
            max_alias_expansions_per_anchor: 100,
        },
    };
    let node: Spanned<Node> =
        serde_saphyr::from_str_with_options(&source.text, options).map_err(|e| {
            let pos = e
                .location()
                .map_or_else(Pos::default, |l| to_pos(source, &l));
            vec![yaml_error(source, pos, &e)]
        })?;
    Ok(to_tree(source, node, None))
}

/// One document of a manifest stream, with the position of each of its nodes.
#[derive(Debug)]
pub struct Document {
    pub value: Value,
    pub spans: SpanMap,
}

/// Parse a multi-document YAML stream (Kubernetes manifests, `raykueue validate`). Empty
/// documents are skipped, as kubectl skips them. The same hostile-input bounds as for a
/// profile, scaled for streams of many objects.
pub fn parse_stream(source: &Source) -> Result<Vec<Document>, Vec<Diagnostic>> {
    let tag_errors = find_tags_and_documents(source, false);
    if !tag_errors.is_empty() {
        return Err(tag_errors);
    }
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: 10_000,
            max_depth: 64,
            max_nodes: 2_000_000,
            max_aliases: 1_000,
            max_anchors: 1_000,
        },
        alias_limits: serde_saphyr::alias_limits! {
            max_total_replayed_events: 20_000,
            max_alias_expansions_per_anchor: 100,
        },
    };
    let trees: Vec<Spanned<Node>> = serde_saphyr::from_multiple_with_options(&source.text, options)
        .map_err(|e| {
            let pos = e
                .location()
                .map_or_else(Pos::default, |l| to_pos(source, &l));
            vec![yaml_error(source, pos, &e)]
        })?;
    Ok(trees
        .into_iter()
        .map(|node| {
            let loaded = flatten(to_tree(source, node, None));
            Document {
                value: loaded.value,
                spans: loaded.spans,
            }
        })
        .collect())
}

/// The first line of serde-saphyr's message, without its own position prefix and excerpt:
/// the excerpt is ours to render.
fn yaml_error(source: &Source, pos: Pos, e: &serde_saphyr::Error) -> Diagnostic {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("invalid YAML");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let msg = match first.find(": ") {
        Some(i) if first.starts_with("line ") => &first[i + 2..],
        _ => first,
    };
    let (code, hint) = if msg.contains("duplicate mapping key") {
        (
            "RK003",
            "each key may appear once per mapping; remove or merge the repeated one",
        )
    } else if msg.contains("budget") || msg.contains("recursion limit") || msg.contains("alias") {
        (
            "RK004",
            "the document is nested too deeply or expands too many aliases; profiles are plain data",
        )
    } else if msg.contains("non-finite") {
        ("RK011", "use a finite number, e.g. `96` or `\"1.5\"`")
    } else if msg.contains("tab") {
        (
            "RK001",
            "indent with spaces; YAML does not allow tabs for indentation",
        )
    } else {
        ("RK001", "fix the YAML syntax at this place")
    };
    let msg = if msg.contains("Depth {") || msg.contains("recursion limit") {
        "the profile is nested too deeply (more than 48 levels)".to_owned()
    } else if msg.contains("Nodes {") {
        "the profile has too many nodes (more than 600000)".to_owned()
    } else if let Some(rest) = msg.strip_prefix("non-finite float ") {
        format!(
            "{} is not a finite number",
            rest.split(" rejected").next().unwrap_or(rest)
        )
    } else {
        msg.replace(", set DuplicateKeyPolicy in Options if acceptable", "")
            .replace("budget breached: ", "limit exceeded: ")
    };
    Diagnostic::error(code, msg).at(source, pos).hint(hint)
}

fn to_pos(source: &Source, loc: &serde_saphyr::Location) -> Pos {
    let span = loc.span();
    if let Some(start) = span.byte_offset() {
        let mut p = source.pos_at(start as usize);
        p.len = span.byte_len().unwrap_or(0) as usize;
        p
    } else {
        // No byte offset (some parser errors): find the line and column in the text.
        {
            let (line, column) = (loc.line() as usize, loc.column() as usize);
            let line_start: usize = source
                .text
                .split_inclusive('\n')
                .take(line.saturating_sub(1))
                .map(str::len)
                .sum();
            let offset = source.text[line_start.min(source.text.len())..]
                .char_indices()
                .nth(column.saturating_sub(1))
                .map_or(source.text.len(), |(i, _)| line_start + i);
            source.pos_at(offset)
        }
    }
}

/// YAML tags (`!!binary`, `!foo`) and extra documents have no meaning in a profile; serde-saphyr
/// would quietly decode or ignore them, so they are refused here with their position. A
/// manifest stream (`single == false`) may have many documents, but no tags either.
fn find_tags_and_documents(source: &Source, single: bool) -> Vec<Diagnostic> {
    use serde_saphyr::granit_parser::{Event, Parser};
    let noun = if single { "a profile" } else { "a manifest" };
    let mut out = Vec::new();
    let mut documents = 0;
    for item in Parser::new_from_str(&source.text) {
        let Ok((event, span)) = item else {
            // Syntax errors are reported by the full parse, with its wording.
            break;
        };
        let tag = match &event {
            Event::Scalar(_, _, _, tag)
            | Event::SequenceStart(_, _, tag)
            | Event::MappingStart(_, _, tag) => tag.as_ref(),
            Event::DocumentStart(..) => {
                documents += 1;
                if single && documents == 2 {
                    let pos = source.pos_at(span.start.byte_offset().unwrap_or(0));
                    out.push(
                        Diagnostic::error("RK001", "a profile is a single YAML document")
                            .at(source, pos)
                            .label("second document starts here")
                            .hint("remove the `---` separator and everything after it, or put it in its own profile"),
                    );
                }
                None
            }
            _ => None,
        };
        if let Some(tag) = tag {
            let start = span.start.byte_offset().unwrap_or(0);
            let mut pos = source.pos_at(start);
            pos.len = span
                .end
                .byte_offset()
                .map_or(1, |e| e.saturating_sub(start).max(1));
            out.push(
                Diagnostic::error(
                    "RK005",
                    format!("YAML tag `{tag}` is not allowed in {noun}"),
                )
                .at(source, pos)
                .hint("remove the tag; write the value as a plain or quoted string"),
            );
        }
        if out.len() >= 20 {
            break;
        }
    }
    out
}

/// A YAML node as serde-saphyr hands it over, each child with its position.
enum Node {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<String>, Spanned<Node>)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::UInt(v))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        Err(E::custom(format!("integer {v} is too large")))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        Err(E::custom(format!("integer {v} is too large")))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        if v.is_finite() {
            Ok(Node::Float(v))
        } else {
            Err(E::custom("non-finite number"))
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Node, E> {
        Err(E::custom("binary values are not allowed in a profile"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = a.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = a.next_key::<Spanned<String>>()? {
            let value = a.next_value::<Spanned<Node>>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

fn to_tree(source: &Source, node: Spanned<Node>, key: Option<Pos>) -> Tree {
    let pos = to_pos(source, &node.referenced);
    let kind = match node.value {
        Node::Null => TreeKind::Scalar(Value::Null),
        Node::Bool(b) => TreeKind::Scalar(Value::Bool(b)),
        Node::Int(i) => TreeKind::Scalar(Value::Number(i.into())),
        Node::UInt(u) => TreeKind::Scalar(Value::Number(u.into())),
        Node::Float(f) => TreeKind::Scalar(Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Node::Str(s) => TreeKind::Scalar(Value::String(s)),
        Node::Seq(items) => TreeKind::Seq(
            items
                .into_iter()
                .map(|item| to_tree(source, item, None))
                .collect(),
        ),
        Node::Map(entries) => TreeKind::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key_pos = to_pos(source, &k.referenced);
                    (k.value, to_tree(source, v, Some(key_pos)))
                })
                .collect(),
        ),
    };
    Tree {
        source: source.clone(),
        key,
        pos,
        kind,
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

fn flatten_into(tree: Tree, spans: &mut SpanMap) -> (Value, SpanNode) {
    let (value, kids) = match tree.kind {
        TreeKind::Scalar(v) => (v, Kids::Leaf),
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

    fn load(text: &str) -> Result<Loaded, Vec<Diagnostic>> {
        parse(&decode("t.yaml", text.as_bytes()).map_err(|d| vec![d])?)
    }

    #[test]
    fn keeps_positions_of_keys_and_values() {
        let l = load("a: 1\nb:\n  c: [x, y]\n").unwrap();
        assert_eq!(l.spans.value_pos("/b/c/1").line, 3);
        assert_eq!(l.spans.value_pos("/b/c/1").column, 10);
        assert_eq!(l.spans.key_pos("/b/c").column, 3);
        // A missing field points at its parent.
        assert_eq!(l.spans.value_pos("/b/missing").line, 3);
    }

    #[test]
    fn refuses_duplicates_tags_and_second_documents() {
        assert_eq!(load("a: 1\na: 2\n").unwrap_err()[0].code, "RK003");
        assert_eq!(load("a: !!binary aGk=\n").unwrap_err()[0].code, "RK005");
        assert_eq!(load("a: 1\n---\nb: 2\n").unwrap_err()[0].code, "RK001");
    }

    #[test]
    fn streams_keep_positions_per_document() {
        let src = Source::new("s.yaml", "a: 1\n---\n---\nb:\n  c: 2\n");
        let docs = parse_stream(&src).unwrap();
        assert_eq!(docs.len(), 2, "the empty document is skipped");
        assert_eq!(docs[1].spans.value_pos("/b/c").line, 5);
        assert_eq!(docs[1].spans.key_pos("/b").line, 4);
        let tagged = Source::new("t.yaml", "a: !foo 1\n");
        assert_eq!(parse_stream(&tagged).unwrap_err()[0].code, "RK005");
    }

    #[test]
    fn field_paths_read_like_code() {
        assert_eq!(
            field_path("/queues/clusterQueues/0/name"),
            "queues.clusterQueues[0].name"
        );
        assert_eq!(
            field_path("/labels/kubernetes.io~1arch"),
            "labels[\"kubernetes.io/arch\"]"
        );
    }
}
