//! A `Source` → a tree of placed nodes (serde-saphyr with positions), or a stream of
//! documents for `raykueue validate`. Hostile input is bounded here: depth, node count, alias
//! expansion, duplicate keys, tags, second documents.

use super::tree::{Tree, TreeKind};
use super::{Loaded, SpanMap, flatten};
use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::source::{Pos, Source};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use serde_saphyr::Spanned;
use std::fmt;

/// Parse a decoded source into a value and its span map (no overlays).
pub(crate) fn parse(source: &Source) -> Result<Loaded, Vec<Diagnostic>> {
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
            Diagnostic::new(&codes::EMPTY_INPUT, "the profile is empty")
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
    if let Some(tree) = super::events::tree(source) {
        return Ok(tree);
    }
    saphyr_tree(source)
}

/// `parse_tree` through serde-saphyr: every document, and the one that explains what is wrong.
pub(super) fn saphyr_tree(source: &Source) -> Result<Tree, Vec<Diagnostic>> {
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
pub(crate) struct Document {
    pub(crate) value: Value,
    pub(crate) spans: SpanMap,
}

/// Parse a multi-document YAML stream (Kubernetes manifests, `raykueue validate`). Empty
/// documents are skipped, as kubectl skips them. The same hostile-input bounds as for a
/// profile, scaled for streams of many objects.
pub(crate) fn parse_stream(source: &Source) -> Result<Vec<Document>, Vec<Diagnostic>> {
    parse_stream_bounded(source, 10_000, 2_000_000)
}

/// `parse_stream` for a live cluster's snapshot: room for 100,000 objects of about a hundred
/// nodes each (a Workload as kubectl prints it), as one `List` or as a stream.
pub(crate) fn parse_state_stream(source: &Source) -> Result<Vec<Document>, Vec<Diagnostic>> {
    parse_stream_bounded(source, 100_000, 20_000_000)
}

fn parse_stream_bounded(
    source: &Source,
    max_documents: usize,
    max_nodes: usize,
) -> Result<Vec<Document>, Vec<Diagnostic>> {
    let bounds = super::events::Bounds {
        depth: 64,
        nodes: max_nodes,
    };
    let trees = match super::stream::trees(source, bounds, max_documents) {
        Some(trees) => trees,
        None => saphyr_stream(source, bounds, max_documents)?,
    };
    Ok(trees
        .into_iter()
        .map(|tree| {
            let loaded = flatten(tree);
            Document {
                value: loaded.value,
                spans: loaded.spans,
            }
        })
        .collect())
}

/// The trees of a stream's documents through serde-saphyr: every stream, and the one that
/// explains what is wrong.
pub(super) fn saphyr_stream(
    source: &Source,
    bounds: super::events::Bounds,
    max_documents: usize,
) -> Result<Vec<Tree>, Vec<Diagnostic>> {
    let tag_errors = find_tags_and_documents(source, false);
    if !tag_errors.is_empty() {
        return Err(tag_errors);
    }
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_documents: max_documents,
            max_depth: bounds.depth,
            max_nodes: bounds.nodes,
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
        .map(|node| to_tree(source, node, None))
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
            &codes::DUPLICATE_KEY,
            "each key may appear once per mapping; remove or merge the repeated one",
        )
    } else if msg.contains("budget") || msg.contains("recursion limit") || msg.contains("alias") {
        (
            &codes::INPUT_TOO_LARGE,
            "the document is nested too deeply or expands too many aliases; profiles are plain data",
        )
    } else if msg.contains("non-finite") {
        (
            &codes::WRONG_TYPE,
            "use a finite number, e.g. `96` or `\"1.5\"`",
        )
    } else if msg.contains("tab") {
        (
            &codes::YAML_SYNTAX,
            "indent with spaces; YAML does not allow tabs for indentation",
        )
    } else {
        (&codes::YAML_SYNTAX, "fix the YAML syntax at this place")
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
    Diagnostic::new(code, msg).at(source, pos).hint(hint)
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
                        Diagnostic::new(&codes::YAML_SYNTAX, "a profile is a single YAML document")
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
                Diagnostic::new(
                    &codes::YAML_TAG,
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
