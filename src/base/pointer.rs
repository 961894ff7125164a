//! JSON pointers: how every stage names a place in the profile or in an object
//! (`/queues/clusterQueues/0/name`), and how users read it (`queues.clusterQueues[0].name`).
//! A leaf module: loading, rules, the model and validation all use it.

use std::fmt::Write as _;

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
    fn pushed_segments_are_escaped() {
        assert_eq!(pointer_push("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(unescape_segment("b~1c~0d"), "b/c~d");
    }
}
