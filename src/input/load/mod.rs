//! Stage 2 (`lib.rs`), the input, its first step: bytes → a JSON value plus the source position
//! of every node.
//!
//! The profile is parsed into a tree whose nodes carry their positions, then flattened into a
//! `serde_json::Value` (what the schema check reads) and a map from JSON pointer to position
//! (how every later diagnostic finds its line). The tree of a plain document, or of each
//! document of a plain stream (`stream`), is built straight from the YAML parser's events
//! (`events`); anything else, and every error, goes through serde-saphyr's `Spanned` nodes
//! (`parse`). Hostile input is bounded here: size, depth, node
//! count, alias expansion, duplicate keys, tags.

use crate::base::diagnostic::Diagnostic;
use crate::base::source::Source;
use serde_json::Value;

mod decode;
mod events;
mod parse;
mod spans;
mod stream;
pub(crate) mod strict;
mod tree;

pub use decode::decode;
pub(crate) use decode::{decode_manifest, decode_scenario, decode_state};
pub use parse::parse_tree;
pub(crate) use parse::{Document, parse, parse_state_stream, parse_stream};
pub(crate) use spans::SpanMap;
pub use spans::flatten;
pub(crate) use tree::{Tree, TreeKind};

/// Profiles are small; anything this large is a mistake or an attack, refused before parsing.
// 4 MiB holds about 4,500 synthetic teams (1,000 teams take 0.9 MB) and keeps the answer to
// any input under a second (a 4.7 MB profile with a schema error: 0.75 s, release build).
pub(crate) const MAX_PROFILE_BYTES: usize = 4 * 1024 * 1024;

/// The loaded document (after overlays) and where each of its nodes stands.
#[derive(Debug)]
pub struct Loaded {
    /// The file the user named (the top of an `extends` chain).
    pub source: Source,
    pub value: Value,
    pub(crate) spans: SpanMap,
}

impl Loaded {
    /// A diagnostic placed at the value `pointer` names (in whichever file it came from).
    pub(crate) fn at_value(&self, d: Diagnostic, pointer: &str) -> Diagnostic {
        if d.place.is_some() {
            return d;
        }
        match self.spans.value_place(pointer) {
            Some((src, pos)) => d.at(src, pos),
            None => d.at(&self.source, self.source.pos_at(0)),
        }
    }

    /// A diagnostic placed at the key of `pointer`.
    pub(crate) fn at_key(&self, d: Diagnostic, pointer: &str) -> Diagnostic {
        match self.spans.key_place(pointer) {
            Some((src, pos)) => d.at(src, pos),
            None => d.at(&self.source, self.source.pos_at(0)),
        }
    }

    /// The scalar as written in its file (`2.50`, `NO`), for hints about YAML retyping.
    pub(crate) fn raw_text(&self, pointer: &str) -> Option<&str> {
        let (src, pos) = self.spans.value_place(pointer)?;
        src.text.get(pos.start..pos.start + pos.len)
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
}
