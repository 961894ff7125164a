//! Bytes → a `Source`: UTF-8 only, a BOM dropped, control characters located, the size
//! bounded before anything is parsed.

use super::MAX_PROFILE_BYTES;
use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::source::{Pos, Source};

/// Read bytes into a `Source`: UTF-8 only, a leading BOM dropped (so columns match editors).
pub fn decode(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_as(name, bytes, "profile")
}

/// `decode` for a manifest stream (`raykueue validate`): same rules, worded for manifests.
pub(crate) fn decode_manifest(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_as(name, bytes, "manifest")
}

/// `decode` for a `simulate` scenario: same rules, worded for scenarios.
pub(crate) fn decode_scenario(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_as(name, bytes, "scenario")
}

/// `decode` for a live cluster's snapshot (`--state`): same rules, a larger bound, since
/// `kubectl get workloads -A -o yaml` of 10,000 Workloads takes tens of MiB.
pub(crate) fn decode_state(name: &str, bytes: &[u8]) -> Result<Source, Diagnostic> {
    decode_bounded(name, bytes, "snapshot", MAX_STATE_BYTES)
}

/// The bound of a snapshot file.
pub(crate) const MAX_STATE_BYTES: usize = 256 * 1024 * 1024;

fn decode_as(name: &str, bytes: &[u8], noun: &str) -> Result<Source, Diagnostic> {
    decode_bounded(name, bytes, noun, MAX_PROFILE_BYTES)
}

fn decode_bounded(
    name: &str,
    bytes: &[u8],
    noun: &str,
    limit: usize,
) -> Result<Source, Diagnostic> {
    if bytes.len() > limit {
        return Err(Diagnostic::new(
            &codes::INPUT_TOO_LARGE,
            format!(
                "the {noun} is larger than {} MiB, the limit for a {noun}",
                limit / (1024 * 1024)
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
                return Err(Diagnostic::new(&codes::YAML_SYNTAX, format!("control character U+{:04X} is not allowed in YAML", c as u32),
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
                Diagnostic::new(&codes::NOT_UTF8, format!("the {noun} is not valid UTF-8"))
                    .at(&src, pos)
                    .label("invalid byte sequence here")
                    .hint("save the file as UTF-8"),
            )
        }
    }
}
