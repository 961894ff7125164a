//! The placed tree built straight from the YAML parser's events, for documents that are plain
//! data: the fast way to what `parse::parse_tree` builds through serde-saphyr, which hands
//! every node over as a `Spanned` value through a visitor of its own (at 1,000 teams, a third
//! of the whole run).
//!
//! It declines (`None`, and the caller takes serde-saphyr's path, which then reports
//! whatever is wrong) on anything it would not read exactly as serde-saphyr does: anchors,
//! aliases, tags, merge keys, complex keys, duplicate keys, a second document, parse errors,
//! the depth and node bounds, and plain scalars whose type is not obvious (YAML 1.1 booleans
//! other than `true`/`false`, floats, radix and signed spellings, leading zeros). What it does
//! read, it reads as serde-saphyr 2.2 resolves untagged scalars
//! (`de/deserializer.rs` `deserialize_any`: null, then booleans, then integers, then floats,
//! else a string). The tests below compare the two trees, positions included, on every YAML
//! file of the repository and on tricky spellings in every position.

use super::tree::{Tree, TreeKind};
use crate::base::source::{Pos, Source};
use serde_json::Value;
use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, Span};

/// serde-saphyr's budget on a read's depth and node count: past it, its path reports.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub(super) depth: usize,
    pub(super) nodes: usize,
}

/// The budget of a profile (`parse::parse_tree`).
const PROFILE: Bounds = Bounds {
    depth: 48,
    nodes: 600_000,
};

enum Frame {
    Seq {
        key: Option<Pos>,
        pos: Pos,
        items: Vec<Tree>,
    },
    Map {
        key: Option<Pos>,
        pos: Pos,
        entries: Vec<(String, Tree)>,
        /// The key read, waiting for its value.
        pending: Option<(String, Pos)>,
    },
}

/// Texts from this size on are read in pieces, on all cores (`pieces`): a 1,000-team
/// profile is 0.9 MB, and reading it was a third of `check`'s time, on one core.
const PIECES_FROM: usize = 256 * 1024;

/// Where a piece of the text starts: its byte offset, and the lines before it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Base {
    pub(super) byte: usize,
    pub(super) line: u32,
}

/// A piece read on its own: its tree, node count and deepest nesting.
pub(super) struct Read {
    pub(super) tree: Tree,
    pub(super) nodes: usize,
    depth: usize,
}

/// The tree of `source`, or `None` when serde-saphyr must read it.
pub(super) fn tree(source: &Source) -> Option<Tree> {
    let markers = markers(source);
    document(
        source,
        0..source.text.len(),
        Base::default(),
        markers,
        PROFILE,
    )
    .map(|r| r.tree)
}

/// Whether the parser's markers place nodes: they count lines and characters as `Source`
/// does, but for a `\r` (a line break of its own to the parser) and a byte-order mark (not a
/// column to it). Otherwise nodes are placed through `Source`, and a document is read in one
/// piece.
pub(super) fn markers(source: &Source) -> bool {
    !source.text.contains('\r') && !source.text.starts_with('\u{feff}')
}

/// The document in `source.text[range]` (starting at `base`): in pieces when it is large.
pub(super) fn document(
    source: &Source,
    range: std::ops::Range<usize>,
    base: Base,
    markers: bool,
    bounds: Bounds,
) -> Option<Read> {
    if markers
        && range.len() >= PIECES_FROM
        && let Some(read) = pieces(source, range.clone(), base, range.len() / 8, bounds)
    {
        return Some(read);
    }
    read(source, range, base, markers, bounds)
}

/// The document in `source.text[range]` (starting at `whole`) read in pieces of about `size`
/// bytes, each on its own and on all cores, then joined in order: the same tree as one read
/// of the whole (`pieces_read_as_the_whole`), else `None`.
///
/// A piece starts at a line that begins a block mapping's key (a letter, digit, `_` or quote
/// first) or a block sequence's item (`- `), indented no deeper than the line before it, so
/// that it continues a collection already open rather than opening one, and not a `- ` line
/// right under its key (kubectl's indentless list: that line is the key's value); and it ends
/// before the first such line less indented than its own first line. A piece is joined to
/// the innermost block collection of its kind on the tree's last path whose children start in
/// the piece's column: where the whole read puts that line. A line that is not what it
/// looks like is inside a construct the piece before leaves open: a quoted scalar or a flow
/// collection, which then fails to read; or a block or plain scalar, which is deeper than
/// every collection on the last path, so nothing takes the piece. Then, and if a piece does
/// not read, or a mapping gets a key twice, or a piece ends in a block scalar (whose span
/// reaches the next token: read alone it would end elsewhere), or the bounds on depth and
/// nodes are passed, the whole text is read in one piece.
fn pieces(
    source: &Source,
    range: std::ops::Range<usize>,
    whole: Base,
    size: usize,
    bounds: Bounds,
) -> Option<Read> {
    let text = &source.text;
    let mut starts = vec![whole];
    let (mut offset, mut last_cut, mut above) = (range.start, range.start, None);
    // Whether the line above is a sequence item: a `- ` line in the column of a key line
    // above is that key's value (an indentless list, as kubectl writes lists), not a cut.
    let mut above_item = false;
    // The indentation of the current piece's first line: a line less indented ends the piece,
    // which would not read on its own with it.
    let mut piece_indent = 0;
    for (line, l) in text[range.clone()].split_inclusive('\n').enumerate() {
        let rest = l.trim_start_matches(' ');
        let indent = l.len() - rest.len();
        let first = rest.as_bytes().first().copied().unwrap_or(b'\n');
        if !matches!(first, b'\n' | b'#') {
            let item = rest.starts_with("- ");
            let node =
                item || first.is_ascii_alphanumeric() || matches!(first, b'_' | b'"' | b'\'');
            let due = offset - last_cut >= size || indent < piece_indent;
            let value_of_key = item && !above_item && above == Some(indent);
            if node && due && !value_of_key && above.is_some_and(|a| indent <= a) {
                starts.push(Base {
                    byte: offset,
                    line: whole.line + u32::try_from(line).ok()?,
                });
                (last_cut, piece_indent) = (offset, indent);
            }
            above = Some(indent);
            above_item = item;
        }
        offset += l.len();
    }
    if starts.len() < 2 {
        return None;
    }
    let ends = starts.iter().skip(1).map(|b| b.byte).chain([range.end]);
    let ranges: Vec<(Base, usize)> = starts.iter().copied().zip(ends).collect();
    let read = crate::base::par::map(true, &ranges, |(base, end)| {
        read(&source.own_handle(), base.byte..*end, *base, true, bounds)
    });
    let mut read = read.into_iter();
    let first = read.next()??;
    let (mut root, mut nodes, mut deepest) = (first.tree, first.nodes, first.depth);
    for (piece, (start, _)) in read.zip(ranges.iter().skip(1)) {
        let piece = piece?;
        // The piece's own root collection is one already counted.
        nodes += piece.nodes - 1;
        // A block scalar (`|`, `>`) read to the end of its piece ends there, line break
        // included; read whole, its span reaches the next line's first token.
        if last_scalar_end(&root) >= start.byte {
            return None;
        }
        let (target, depth) = open_collection(&mut root, &piece.tree, text)?;
        if nodes > bounds.nodes || depth + piece.depth - 1 > bounds.depth {
            return None;
        }
        deepest = deepest.max(depth + piece.depth - 1);
        match (&mut target.kind, piece.tree.kind) {
            (TreeKind::Seq(items), TreeKind::Seq(more)) => items.extend(more),
            (TreeKind::Map(entries), TreeKind::Map(more)) => {
                entries.extend(more);
                let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
                names.sort_unstable();
                if names.windows(2).any(|w| w[0] == w[1]) {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(Read {
        tree: root,
        nodes,
        depth: deepest,
    })
}

/// The innermost block collection on `tree`'s last path of `piece`'s kind whose children
/// start in `piece`'s column, and its depth (the root's is 1).
fn open_collection<'t>(
    tree: &'t mut Tree,
    piece: &Tree,
    text: &str,
) -> Option<(&'t mut Tree, usize)> {
    let fits = |t: &Tree| {
        let flow = matches!(text.as_bytes().get(t.pos.start), Some(b'[' | b'{'));
        let same_kind = matches!(
            (&t.kind, &piece.kind),
            (TreeKind::Seq(_), TreeKind::Seq(_)) | (TreeKind::Map(_), TreeKind::Map(_))
        );
        same_kind && !flow && items_column(t, text) == Some(piece.pos.column)
    };
    // The deepest match: the path is walked down first, then chosen from the bottom.
    let mut path = Vec::new();
    let mut node: &Tree = tree;
    loop {
        path.push(fits(node));
        node = match &node.kind {
            TreeKind::Seq(items) => items.last()?,
            TreeKind::Map(entries) => &entries.last()?.1,
            TreeKind::Scalar(_) => break,
        };
    }
    let depth = path.iter().rposition(|f| *f)? + 1;
    let mut node = tree;
    for _ in 1..depth {
        node = match &mut node.kind {
            TreeKind::Seq(items) => items.last_mut()?,
            TreeKind::Map(entries) => &mut entries.last_mut()?.1,
            TreeKind::Scalar(_) => return None,
        };
    }
    Some((node, depth))
}

/// Where the last node read (the end of `tree`'s last path) ends, when it is a scalar: a
/// plain or quoted scalar ends before its line break, a block scalar after it.
fn last_scalar_end(tree: &Tree) -> usize {
    let mut node = tree;
    loop {
        node = match &node.kind {
            TreeKind::Seq(items) => match items.last() {
                Some(n) => n,
                None => return 0,
            },
            TreeKind::Map(entries) => match entries.last() {
                Some((_, n)) => n,
                None => return 0,
            },
            TreeKind::Scalar(_) => return node.pos.start + node.pos.len,
        };
    }
}

/// The column a block collection's children start in: a mapping's position, or a
/// sequence's `-`. The parser places a sequence on its own (a piece's root) at its `-`, and an
/// indentless one (`key:` then `- item` in the key's column, as kubectl writes every list) at
/// its first item's content, where the `-` is found before it, past blanks. `None` when that
/// first item is itself a sequence (`- - x`): the `-` there is the inner sequence's.
fn items_column(t: &Tree, text: &str) -> Option<u32> {
    let TreeKind::Seq(items) = &t.kind else {
        return Some(t.pos.column);
    };
    let bytes = text.as_bytes();
    let Some(first) = items.first().filter(|i| i.pos.start == t.pos.start) else {
        return (bytes.get(t.pos.start) == Some(&b'-')).then_some(t.pos.column);
    };
    if matches!(first.kind, TreeKind::Seq(_)) {
        return None;
    }
    let blanks = bytes[..t.pos.start]
        .iter()
        .rev()
        .take_while(|b| **b == b' ')
        .count();
    let dash = t.pos.start.checked_sub(blanks + 1)?;
    (bytes[dash] == b'-').then(|| t.pos.column - u32::try_from(blanks + 1).unwrap_or(u32::MAX))
}

/// Read `source.text[range]`, placed at `base`.
fn read(
    source: &Source,
    range: std::ops::Range<usize>,
    base: Base,
    markers: bool,
    bounds: Bounds,
) -> Option<Read> {
    let mut stack: Vec<Frame> = Vec::new();
    let mut root = None;
    let mut nodes = 0usize;
    let mut depth = 0;
    let mut documents = 0;
    let place = |span| place(source, span, base, markers);
    for item in Parser::new_from_str(&source.text[range]) {
        let (event, span) = item.ok()?;
        let done = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => None,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                nodes += 1;
                let pos = place(span);
                if let Some(Frame::Map { pending, .. }) = stack.last_mut()
                    && pending.is_none()
                {
                    if style == ScalarStyle::Plain && !plain_key(&text) {
                        return None;
                    }
                    *pending = Some((text.into_owned(), pos));
                    continue;
                }
                let value = if style == ScalarStyle::Plain {
                    plain(&text)?
                } else {
                    Value::String(text.into_owned())
                };
                let key = match stack.last() {
                    Some(Frame::Map {
                        pending: Some((_, k)),
                        ..
                    }) => Some(*k),
                    _ => None,
                };
                Some((key, pos, TreeKind::Scalar(value)))
            }
            Event::SequenceStart(_, anchor, ref tag) | Event::MappingStart(_, anchor, ref tag) => {
                if anchor != 0 || tag.is_some() || stack.len() >= bounds.depth {
                    return None;
                }
                nodes += 1;
                let key = match stack.last_mut() {
                    Some(Frame::Map { pending, .. }) => match pending {
                        Some((_, k)) => Some(*k),
                        // A collection as a key.
                        None => return None,
                    },
                    _ => None,
                };
                let pos = place(span);
                depth = depth.max(stack.len() + 1);
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq {
                        key,
                        pos,
                        items: Vec::new(),
                    }
                } else {
                    Frame::Map {
                        key,
                        pos,
                        entries: Vec::new(),
                        pending: None,
                    }
                });
                None
            }
            Event::SequenceEnd => match stack.pop()? {
                Frame::Seq { key, pos, items } => Some((key, pos, TreeKind::Seq(items))),
                Frame::Map { .. } => return None,
            },
            Event::MappingEnd => match stack.pop()? {
                Frame::Map {
                    key,
                    pos,
                    entries,
                    pending: None,
                } => {
                    let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.as_str()).collect();
                    names.sort_unstable();
                    if names.windows(2).any(|w| w[0] == w[1]) {
                        return None;
                    }
                    Some((key, pos, TreeKind::Map(entries)))
                }
                _ => return None,
            },
            _ => return None,
        };
        if nodes > bounds.nodes {
            return None;
        }
        if let Some((key, pos, kind)) = done {
            finish(&mut stack, &mut root, source, key, pos, kind)?;
        }
    }
    if !stack.is_empty() {
        return None;
    }
    Some(Read {
        tree: root?,
        nodes,
        depth,
    })
}

/// Place a finished node in its parent, or as the root.
fn finish(
    stack: &mut [Frame],
    root: &mut Option<Tree>,
    source: &Source,
    key: Option<Pos>,
    pos: Pos,
    kind: TreeKind,
) -> Option<()> {
    let tree = Tree {
        source: source.clone(),
        key,
        pos,
        kind,
    };
    match stack.last_mut() {
        None if root.is_none() => *root = Some(tree),
        None => return None,
        Some(Frame::Seq { items, .. }) => items.push(tree),
        Some(Frame::Map {
            entries, pending, ..
        }) => {
            let (name, _) = pending.take()?;
            entries.push((name, tree));
        }
    }
    Some(())
}

fn place(source: &Source, span: Span, base: Base, markers: bool) -> Pos {
    let start = base.byte + span.start.byte_offset().unwrap_or(0);
    let mut pos = match (
        markers,
        u32::try_from(span.start.line()),
        u32::try_from(span.start.col()),
    ) {
        (true, Ok(line), Ok(col)) if line > 0 => Pos {
            line: base.line + line,
            column: col + 1,
            start,
            len: 0,
        },
        _ => source.pos_at(start),
    };
    pos.len = span
        .end
        .byte_offset()
        .map_or(0, |end| (base.byte + end).saturating_sub(start));
    pos
}

/// A plain key read as its text: not a merge key, and not a spelling serde-saphyr would
/// type differently.
fn plain_key(text: &str) -> bool {
    text != "<<" && matches!(plain(text), Some(Value::String(_)))
}

/// An untagged plain scalar as serde-saphyr resolves it, when the answer is obvious.
fn plain(t: &str) -> Option<Value> {
    match t {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    // YAML 1.1 booleans in other spellings, and other null spellings.
    if ["true", "false", "yes", "no", "y", "n", "on", "off", "null"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
    {
        return None;
    }
    let bytes = t.as_bytes();
    let first = bytes[0];
    if !(first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.')) {
        // Only the spellings above, numbers and `.inf`/`.nan` are typed; trimmed text
        // starting otherwise is a string. Surrounding blanks would be trimmed before typing.
        return (!has_edge_blank(t)).then(|| Value::String(t.to_owned()));
    }
    if first == b'0' && t.len() == 1 {
        return Some(Value::Number(0u64.into()));
    }
    if first != b'0' && bytes.iter().all(u8::is_ascii_digit) {
        return t.parse::<u64>().ok().map(|v| Value::Number(v.into()));
    }
    if let Some(rest) = t.strip_prefix('-')
        && !rest.is_empty()
        && !rest.starts_with('0')
        && rest.bytes().all(|b| b.is_ascii_digit())
    {
        return t.parse::<i64>().ok().map(|v| Value::Number(v.into()));
    }
    if first.is_ascii_digit() && !has_edge_blank(t) {
        // No YAML number has a letter outside exponents, radix prefixes and hex digits, nor
        // more than one dot: `64Gi`, `500m`, `0.19.2` are strings.
        let letters = bytes
            .iter()
            .any(|b| b.is_ascii_alphabetic() && !b"eExXoObBaAcCdDfF".contains(b));
        let dots = t.matches('.').count();
        let numeral = bytes.iter().all(|b| b.is_ascii_digit() || *b == b'.');
        // Nor a sign but first or in an exponent: `2026-01-05`, a uid
        // (`00000000-0000-4000-8000-000000000012`) are strings.
        let inner_sign = bytes
            .windows(2)
            .any(|w| matches!(w[1], b'-' | b'+') && !matches!(w[0], b'e' | b'E'));
        if (letters && !t.contains(':') && !t.contains('_')) || (numeral && dots >= 2) || inner_sign
        {
            return Some(Value::String(t.to_owned()));
        }
    }
    None
}

fn has_edge_blank(t: &str) -> bool {
    t.starts_with([' ', '\t']) || t.ends_with([' ', '\t'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::load::parse::saphyr_tree;
    use std::path::Path;

    fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                yaml_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(p);
            }
        }
    }

    /// Where the fast path reads a document, it reads it exactly as serde-saphyr does: the
    /// same tree, values, keys and positions. Every YAML file of the repository (shipped
    /// profiles, examples, fixtures of every kind, bad ones included).
    #[test]
    fn the_event_tree_is_serde_saphyrs_tree_on_every_repository_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["profiles", "tests/fixtures", "golden"] {
            yaml_files(&root.join(dir), &mut files);
        }
        assert!(files.len() > 100, "{} files", files.len());
        let (mut fast, mut shipped_fast) = (0, 0);
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            let source = Source::new(f.display().to_string(), text);
            let Some(tree) = tree(&source) else {
                continue;
            };
            fast += 1;
            if f.starts_with(root.join("profiles")) {
                shipped_fast += 1;
            }
            let slow = saphyr_tree(&source);
            assert_eq!(Ok(&tree), slow.as_ref().map_err(|_| ()), "{}", f.display());
        }
        assert!(
            fast * 2 > files.len(),
            "fast path read only {fast} of {} files",
            files.len()
        );
        assert!(
            shipped_fast >= 6,
            "fast path read only {shipped_fast} shipped profiles"
        );
    }

    /// Scalars whose type is easy to get wrong: the fast path declines them or agrees, as a
    /// value, in a list, in a flow map, as a key, quoted and not.
    #[test]
    fn tricky_scalars_are_declined_or_read_alike() {
        let spellings = [
            "yes",
            "No",
            "ON",
            "y",
            "n",
            "True",
            "FALSE",
            "true",
            "false",
            "null",
            "Null",
            "NULL",
            "~",
            "",
            "0",
            "-0",
            "+1",
            "01",
            "007",
            "0x1F",
            "0o17",
            "0b101",
            "0X1F",
            "1_000",
            "1e3",
            "1E-3",
            "1.5",
            ".5",
            "5.",
            "-1.5",
            ".inf",
            "-.inf",
            ".nan",
            "+.nan",
            "inf",
            "nan",
            "NaN",
            "infinity",
            "1:30",
            "64Gi",
            "500m",
            "0.19.2",
            "2.55.1",
            "1.35",
            "1h",
            "12abc",
            "1e",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "abc",
            "a b",
            "-",
            "-x",
            "--",
            "<<",
            "é",
            "1é",
            "2024-01-01",
            "12:00:00",
            "0.0.0.0",
            "1.2.3-rc1",
            "00000000-0000-4000-8000-000000000012",
            "1e-3-4",
            "1-e3",
            "1+2",
            "0-1",
            "1_000-2",
            "0x1-2",
            "12:30-1",
        ];
        let mut fast = 0;
        for s in spellings {
            for doc in [
                format!("a: {s}\n"),
                format!("a: [{s}]\n"),
                format!("a: {{b: {s}}}\n"),
                format!("{s}: 1\n"),
                format!("a:\n  - {s}\n"),
                format!("a: '{s}'\n"),
                format!("a: \"{s}\"\n"),
            ] {
                let source = Source::new("t.yaml", doc.clone());
                let Some(tree) = tree(&source) else {
                    continue;
                };
                fast += 1;
                let slow = saphyr_tree(&source);
                assert_eq!(Ok(&tree), slow.as_ref().map_err(|_| ()), "{doc:?}");
            }
        }
        assert!(fast > 200, "fast path read only {fast} documents");
    }

    /// A document read in pieces is the document read whole, positions included, or is read
    /// whole: on every repository file and a 300-team profile, cut at every line where a
    /// piece may start and in pieces of 4 KiB; and on documents where such lines sit inside
    /// quoted, flow, block and plain scalars and flow collections, or give a key twice.
    #[test]
    fn pieces_read_as_the_whole() {
        let whole =
            |s: &Source| read(s, 0..s.text.len(), Base::default(), true, PROFILE).map(|r| r.tree);
        let pieces = |s: &Source, size| {
            pieces(s, 0..s.text.len(), Base::default(), size, PROFILE).map(|r| r.tree)
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["profiles", "tests/fixtures", "golden"] {
            yaml_files(&root.join(dir), &mut files);
        }
        let mut docs: Vec<(String, String)> = files
            .iter()
            .map(|f| {
                (
                    f.display().to_string(),
                    std::fs::read_to_string(f).unwrap_or_default(),
                )
            })
            .filter(|(_, t)| !t.contains('\r') && !t.starts_with('\u{feff}'))
            .collect();
        docs.push(("teams".into(), crate::synthetic::teams_profile(300)));
        let tricky = [
            "a: \"x\nb: y\"\nc: 1\n",
            "a: 'x\n- y'\nc: 1\n",
            "a: {x: 1,\nb: 2}\nc: 1\n",
            "a: [1,\nb, 2]\nc: 1\n",
            "a: 1\nb: 2\na: 3\n",
            "a:\n  b: 1\n  c: 2\n  b: 3\n",
            "- a\n- b\n",
            "# head\n\n# more\nname: x\nteams:\n- a\n- b\nz: 1\n",
            "a:\n  b: 1\n_c: 2\n\"d e\": 3\n'f': [4]\n9: x\n",
            "a:\n  s: |\n    text\n    - item-like\n    key: like\n  t: 1\n",
            "a:\n  - s: >\n      folded\n      - item-like\n  - t: 1\n",
            "a:\n  k: plain\n    words\n    more: x\n",
            "a:\n  k: plain\n    words\n    - more\n  j: 2\n",
            "items:\n    [a, b]\n    - c\n",
            "m:\n  - [a,\n    b]\n  - c\n",
            "a:\n  - x\n  - y\n- z\n",
            "a:\n  b:\n    - 1\n    - 2\n  c:\n  - 3\n  - 4\nd: 5\n",
            "a: 1\nb\n",
            "a: 1\nb: 2\n...\n",
            // An indentless list whose first item is a list: placed at the inner `-`.
            "a:\n- - x\n- k:\n  - - q\n  - z\n",
            "a:\n- -5\n- k:\n  - q\n  - z\n",
        ];
        docs.extend(tricky.iter().map(|d| (format!("{d:?}"), (*d).to_owned())));
        let (mut joined, mut declined) = (0, 0);
        for (name, text) in docs {
            let source = Source::new(name.clone(), text);
            // The short tricky documents at every piece size; the files at two.
            let sizes: Vec<usize> = if source.text.len() < 200 {
                (1..=source.text.len().max(1)).collect()
            } else {
                vec![1, 4096]
            };
            for size in sizes {
                match pieces(&source, size) {
                    Some(tree) => {
                        joined += 1;
                        assert_eq!(Some(&tree), whole(&source).as_ref(), "{name} ({size})");
                        let slow = saphyr_tree(&source);
                        assert_eq!(Ok(&tree), slow.as_ref().map_err(|_| ()), "{name}");
                    }
                    None => declined += 1,
                }
            }
        }
        assert!(joined > 100, "read in pieces: {joined}");
        assert!(declined >= 10, "declined: {declined}");
        // kubectl writes every list indentless (`items:` then `- ` in its column): such a
        // list is read in pieces at every line, and as the whole.
        let kubectl = "apiVersion: v1\nkind: List\nitems:\n- kind: A\n  spec:\n    sets:\n    - name: a\n      containers:\n      - name: c\n    - name: b\n- kind: B\n  spec:\n    sets:\n    - name: c\n- kind: C\n";
        let source = Source::new("kubectl", kubectl);
        let tree = pieces(&source, 1).expect("an indentless list is read in pieces");
        assert_eq!(Some(&tree), whole(&source).as_ref());
        assert_eq!(Ok(&tree), saphyr_tree(&source).as_ref().map_err(|_| ()));
        // A profile that large is read in pieces, the tree `parse_tree` returns.
        let teams = Source::new("teams", crate::synthetic::teams_profile(300));
        assert!(teams.text.len() >= PIECES_FROM);
        assert!(pieces(&teams, teams.text.len() / 8).is_some());
    }

    /// Positions come from the parser's markers unless the text has a `\r`: both ways agree
    /// with serde-saphyr's tree after wide characters, tabs, blank lines and line endings.
    #[test]
    fn positions_agree_after_wide_characters_and_line_breaks() {
        let docs = [
            "é: 1\nb: {c: ü, d: [日本, x]}\n",
            "a: 'é'\n\n\nb:\n  - {k: \"ø\"}\n  - 𝄞x\n",
            "a:\t1\nb: 2\n",
            "a: 1\r\nb:\r\n  c: é\r\n",
            "a: 1\rb: 2\n",
            "\u{feff}a: 1\nb: é\n",
            "# ü\na: [1,\n  2]\n",
        ];
        let mut fast = 0;
        for doc in docs {
            let source = Source::new("t.yaml", doc);
            let Some(tree) = tree(&source) else {
                continue;
            };
            fast += 1;
            let slow = saphyr_tree(&source);
            assert_eq!(Ok(&tree), slow.as_ref().map_err(|_| ()), "{doc:?}");
        }
        assert!(fast >= 5, "fast path read only {fast} documents");
    }
}
