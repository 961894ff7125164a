//! A profile's text and name, kept together so every diagnostic can quote the line it is about.

use std::sync::Arc;

/// One loaded source file. Cheap to clone (one reference count): diagnostics and every node
/// of a loaded tree carry a handle to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source(Arc<SourceFile>);

/// What a `Source` handle points to (its fields read through the handle: `source.text`).
#[derive(Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// What the user named: a path as given, or `profiles/team.yaml` for embedded profiles.
    pub name: Arc<str>,
    pub text: Arc<str>,
    /// Byte offset of every line start, so a position costs a binary search, not a scan.
    line_starts: Arc<[usize]>,
    /// Whether each line is ASCII, where a column is a byte count: one-line JSON (what
    /// `kubectl get -o json` and many tools write) otherwise costs a scan per position, and
    /// its positions cost the square of its length.
    ascii_lines: Arc<[bool]>,
}

impl std::ops::Deref for Source {
    type Target = SourceFile;

    fn deref(&self) -> &SourceFile {
        &self.0
    }
}

/// A place in a source: 1-based line and column (in characters) plus the byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
    pub start: usize,
    pub len: usize,
}

impl Source {
    pub fn new(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        let line_starts: Arc<[usize]> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let ascii_lines = text.split('\n').map(str::is_ascii).collect();
        Self(Arc::new(SourceFile {
            name: name.into(),
            text,
            line_starts,
            ascii_lines,
        }))
    }

    /// Another handle to the same file (name and text shared, equal to this one) with a
    /// reference count of its own. A reader on several threads gives each piece or document
    /// it reads there its own: a tree
    /// node holds a handle, and 600,000 nodes counting up and down one shared count from two
    /// cores kept the count's cache line moving between them.
    pub(crate) fn own_handle(&self) -> Source {
        Self(Arc::new(SourceFile {
            name: self.name.clone(),
            text: self.text.clone(),
            line_starts: self.line_starts.clone(),
            ascii_lines: self.ascii_lines.clone(),
        }))
    }

    /// The position of a byte offset (clamped to the text).
    pub(crate) fn pos_at(&self, offset: usize) -> Pos {
        let offset = floor_char_boundary(&self.text, offset.min(self.text.len()));
        let line = self.line_starts.partition_point(|&start| start <= offset);
        let line_start = self.line_starts[line - 1];
        let column = if self.ascii_lines[line - 1] {
            offset - line_start + 1
        } else {
            self.text[line_start..offset].chars().count() + 1
        };
        Pos {
            line: line as u32,
            column: column as u32,
            start: offset,
            len: 0,
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let s = Source::new("x", "a: 1\nbé: 2\n");
        assert_eq!((s.pos_at(0).line, s.pos_at(0).column), (1, 1));
        let at = s.text.find(": 2").unwrap();
        assert_eq!((s.pos_at(at).line, s.pos_at(at).column), (2, 3));
    }

    /// ASCII lines count bytes, others characters; both agree with a count by hand.
    #[test]
    fn ascii_and_wide_lines_give_the_same_columns_as_a_character_count() {
        let text = "{\"a\": 1, \"b\": 2}\nné: \"😀x\"\nc: 3";
        let s = Source::new("x", text);
        for (offset, _) in text.char_indices() {
            let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
            let want = text[line_start..offset].chars().count() + 1;
            assert_eq!(s.pos_at(offset).column as usize, want, "at {offset}");
        }
    }
}
