//! JSON pointers: how every stage names a place in the profile or in an object
//! (`/queues/clusterQueues/0/name`), and how users read it (`queues.clusterQueues[0].name`).
//! A leaf module: loading, rules, the model and validation all use it. A finding's place is a
//! [`Pointer`], built with `ptr!` a segment at a time; the schema and output validators, which
//! walk every node, extend one reused `String` with `push_segment`, the same escaping.

use std::fmt::Write as _;

/// A JSON pointer (`/queues/clusterQueues/0/name`), built a segment at a time and escaped as
/// it is built (`~` and `/` in a key become `~0` and `~1`). Reads as the `&str` it holds.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Pointer(String);

/// One segment of a pointer: a key (escaped) or an index.
pub(crate) trait Segment {
    fn push_onto(&self, buf: &mut String);
}

impl Segment for str {
    fn push_onto(&self, buf: &mut String) {
        push_segment(buf, self);
    }
}

impl Segment for String {
    fn push_onto(&self, buf: &mut String) {
        push_segment(buf, self);
    }
}

impl Segment for usize {
    fn push_onto(&self, buf: &mut String) {
        let _ = write!(buf, "/{self}");
    }
}

impl Segment for u32 {
    fn push_onto(&self, buf: &mut String) {
        let _ = write!(buf, "/{self}");
    }
}

impl<T: Segment + ?Sized> Segment for &T {
    fn push_onto(&self, buf: &mut String) {
        (**self).push_onto(buf);
    }
}

impl Pointer {
    /// The whole document: the empty pointer.
    pub(crate) fn root() -> Self {
        Self(String::new())
    }

    /// A pointer given as text, already escaped (one the JSON-Schema validator or the output
    /// validator's walk wrote).
    pub(crate) fn from_escaped(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// This pointer with one more segment.
    #[must_use]
    pub(crate) fn at(&self, segment: impl Segment) -> Self {
        let mut out = self.clone();
        segment.push_onto(&mut out.0);
        out
    }

    /// This pointer followed by `rest` (a pointer relative to it).
    #[must_use]
    pub(crate) fn join(&self, rest: &Pointer) -> Self {
        Self(format!("{}{}", self.0, rest.0))
    }

    pub(crate) fn push(&mut self, segment: impl Segment) {
        segment.push_onto(&mut self.0);
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` is `prefix` or lies below it.
    pub(crate) fn is_within(&self, prefix: &Pointer) -> bool {
        self.0 == prefix.0
            || self
                .0
                .strip_prefix(prefix.0.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

impl AsRef<str> for Pointer {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Pointer {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Pointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A pointer from its segments: `ptr!["workloads", i, "name"]` is `/workloads/3/name`;
/// `ptr!(base; "name")` continues `base`.
macro_rules! ptr {
    ($base:expr; $($segment:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut p = $crate::base::pointer::Pointer::from_escaped(AsRef::<str>::as_ref(&$base));
        $(p.push($segment);)*
        p
    }};
    ($($segment:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut p = $crate::base::pointer::Pointer::root();
        $(p.push($segment);)*
        p
    }};
}
pub(crate) use ptr;

/// Turn a JSON pointer into the field path users read: `queues.clusterQueues[0].name`.
pub(crate) fn field_path(pointer: &str) -> String {
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
pub(crate) fn pointer_push(base: &str, key: &str) -> String {
    let mut out = String::with_capacity(base.len() + key.len() + 1);
    out.push_str(base);
    push_segment(&mut out, key);
    out
}

/// Append `/key`, escaped, to a pointer held in a reused buffer (no allocation once the buffer
/// is large enough: the output validator walks every node of every object this way).
pub(crate) fn push_segment(buf: &mut String, key: &str) {
    buf.push('/');
    if key.contains(['~', '/']) {
        for c in key.chars() {
            match c {
                '~' => buf.push_str("~0"),
                '/' => buf.push_str("~1"),
                c => buf.push(c),
            }
        }
    } else {
        buf.push_str(key);
    }
}

/// A JSON pointer segment back to the key it escapes (`~1` is `/`, `~0` is `~`).
pub(crate) fn unescape_segment(raw: &str) -> std::borrow::Cow<'_, str> {
    if raw.contains('~') {
        raw.replace("~1", "/").replace("~0", "~").into()
    } else {
        raw.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn pointers_are_built_a_segment_at_a_time_and_escaped() {
        let i: usize = 3;
        let p = ptr!["workloads", i, "labels", "kubernetes.io/arch"];
        assert_eq!(p.as_str(), "/workloads/3/labels/kubernetes.io~1arch");
        assert_eq!(ptr![].as_str(), "");
        let base = ptr!["queues", "clusterQueues", 0_usize];
        assert_eq!(&*base.at("name"), "/queues/clusterQueues/0/name");
        assert!(base.at("name").is_within(&base));
        assert!(!ptr!["queues", "clusterQueues", 1_usize, "x"].is_within(&base));
        assert!(!ptr!["queues", "clusterQueues", 10_usize].is_within(&base));
    }

    #[test]
    fn pushed_segments_are_escaped() {
        assert_eq!(pointer_push("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(unescape_segment("b~1c~0d"), "b/c~d");
    }
}
