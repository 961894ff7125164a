//! Diagnostics are data: a severity, a stable code, a place and words. They are rendered in one
//! place (`render_human` / `render_json`) so that every stage reports the same way.

use crate::base::codes::Code;
pub(crate) use crate::base::codes::Severity;
use crate::base::pointer::Pointer;
use crate::base::source::{Pos, Source};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use serde::Serialize;
use std::fmt::Write as _;

/// Where a diagnostic points: a source and a position in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    pub source: Source,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable code (`RK0xx` input, `RK1xx` queues, ...): its row of the `codes` table.
    pub code: &'static Code,
    pub message: String,
    /// The profile field path, e.g. `queues.clusterQueues[0].name`.
    pub path: Option<String>,
    pub place: Option<Place>,
    /// Short text under the caret.
    pub label: Option<String>,
    /// What would be right.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A finding of `code`, with the code's severity: the table in `codes` is the only place
    /// either is written.
    pub fn new(code: &'static Code, message: impl Into<String>) -> Self {
        Self {
            severity: code.severity,
            code,
            message: message.into(),
            path: None,
            place: None,
            label: None,
            hint: None,
        }
    }

    #[must_use]
    pub fn at(mut self, source: &Source, pos: Pos) -> Self {
        self.place = Some(Place {
            source: source.clone(),
            pos,
        });
        self
    }

    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        if !path.is_empty() {
            self.path = Some(path);
        }
        self
    }

    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub(crate) fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    fn sort_key(&self) -> (String, u32, u32, &'static str, &str) {
        let (name, line, col) = self.place.as_ref().map_or((String::new(), 0, 0), |p| {
            (p.source.name.to_string(), p.pos.line, p.pos.column)
        });
        (name, line, col, self.code.id, &self.message)
    }
}

/// A finding about the profile, by JSON pointer: what a check reports before the checks stage
/// places it at its line. Checks that live outside `checks` (each cloud's own, in
/// `cloud/<name>/checks.rs`) report through [`Findings`], so they need nothing of a later stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) code: &'static Code,
    /// Where in the profile (`/azure/nodePools/1/vmSize`).
    pub(crate) pointer: Pointer,
    pub(crate) message: String,
    /// What would be right.
    pub(crate) hint: Option<String>,
}

/// The findings of a group of checks, in the order they were reported.
#[derive(Debug, Default)]
pub(crate) struct Findings(Vec<Finding>);

impl Findings {
    pub(crate) fn report(
        &mut self,
        code: &'static Code,
        pointer: &Pointer,
        message: String,
        hint: Option<String>,
    ) {
        self.0.push(Finding {
            code,
            pointer: pointer.clone(),
            message,
            hint,
        });
    }

    pub(crate) fn into_vec(self) -> Vec<Finding> {
        self.0
    }
}

/// Sort by file and position, then drop exact repeats: one report per problem, in reading order.
pub(crate) fn normalize(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    diags.dedup();
}

/// Human rendering: `error[RK010]: ...` with ` --> file:line:col` and the offending line.
pub fn render_human(diags: &[Diagnostic]) -> String {
    let renderer = Renderer::plain();
    let mut out = String::new();
    for d in diags {
        let level = match d.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
        };
        let title = match &d.path {
            Some(p) => format!("{}: {}", p, d.message),
            None => d.message.clone(),
        };
        let head = level.primary_title(title.as_str()).id(d.code.id);
        let group = if let Some(place) = &d.place {
            let mut snippet = Snippet::source(&*place.source.text)
                .path(&*place.source.name)
                .fold(true);
            snippet = snippet.annotation(
                AnnotationKind::Primary
                    .span(span_of(place))
                    .label(d.label.as_deref().unwrap_or("")),
            );
            head.element(snippet)
        } else {
            Group::with_title(head)
        };
        let mut report = vec![group];
        if let Some(hint) = &d.hint {
            report.push(Group::with_title(
                Level::HELP.secondary_title(hint.as_str()),
            ));
        }
        let _ = writeln!(out, "{}", renderer.render(&report));
    }
    let errors = diags.iter().filter(|d| d.is_error()).count();
    let warnings = diags.len() - errors;
    if errors + warnings > 0 {
        let _ = writeln!(
            out,
            "{} error{}, {} warning{}",
            errors,
            if errors == 1 { "" } else { "s" },
            warnings,
            if warnings == 1 { "" } else { "s" }
        );
    }
    out
}

/// A caret span that never runs past the text or splits a character.
fn span_of(place: &Place) -> std::ops::Range<usize> {
    let text = &place.source.text;
    let start = place.pos.start.min(text.len());
    let mut end = (start + place.pos.len.max(1)).min(text.len());
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    // A caret on a line end (or an empty file) still needs a character to point at.
    if start == end {
        return start..start;
    }
    start..end
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    severity: Severity,
    code: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    column: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<&'a str>,
}

/// Machine rendering (`--error-format json`): one JSON object per line.
pub(crate) fn render_json(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let j = JsonDiagnostic {
            severity: d.severity,
            code: d.code.id,
            message: &d.message,
            path: d.path.as_deref(),
            file: d.place.as_ref().map(|p| &*p.source.name),
            line: d.place.as_ref().map(|p| p.pos.line),
            column: d.place.as_ref().map(|p| p.pos.column),
            hint: d.hint.as_deref(),
        };
        if let Ok(line) = serde_json::to_string(&j) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The closest candidate by Jaro-Winkler similarity, if it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'a>(
    wrong: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::jaro_winkler(&wrong.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let keys = ["nodePools", "location", "resourceGroup"];
        assert_eq!(did_you_mean("nodePol", keys), Some("nodePools"));
        assert_eq!(did_you_mean("resoureGroup", keys), Some("resourceGroup"));
        assert_eq!(did_you_mean("zzz", keys), None);
    }

    #[test]
    fn renders_file_line_column_and_hint() {
        let src = Source::new("p.yaml", "a: 1\nnodePol: 2\n");
        let d = Diagnostic::new(&crate::base::codes::UNKNOWN_KEY, "unknown key `nodePol`")
            .at(&src, src.pos_at(5))
            .path("nodePol")
            .hint("did you mean `nodePools`?");
        let text = render_human(&[d]);
        assert!(
            text.contains("error[RK010]: nodePol: unknown key `nodePol`"),
            "{text}"
        );
        assert!(text.contains("p.yaml:2:1"), "{text}");
        assert!(text.contains("did you mean `nodePools`?"), "{text}");
        assert!(text.ends_with("1 error, 0 warnings\n"), "{text}");
    }
}
