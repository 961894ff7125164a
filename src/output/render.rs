//! Text that is text by nature: the scripts, the reviewer summary and the `init` README,
//! rendered once from embedded minijinja templates. Every value a shell template prints is
//! single-quoted by construction. Kubernetes objects and other YAML files are not templates:
//! the model builds them as data and `yaml` writes them.

use crate::base::diagnostic::Diagnostic;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value as JValue};
use serde_json::Value;
use std::sync::OnceLock;

/// The embedded templates by name (`build.rs` lists `templates/`).
const TEMPLATES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/templates.rs"));

fn template_source(name: &str) -> Option<&'static str> {
    TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // No YAML templates: YAML is data written by `yaml`. Shell templates quote every value.
        env.set_auto_escape_callback(|name| {
            if name.ends_with(".sh.j2") {
                AutoEscape::Custom("shell".into())
            } else {
                AutoEscape::None
            }
        });
        env.set_formatter(|out, state, value| {
            if matches!(state.auto_escape(), AutoEscape::Custom(n) if n == "shell") {
                write_shell(out, value)
            } else {
                minijinja::escape_formatter(out, state, value)
            }
        });
        env.add_filter("shell_words", shell_words);
        env.add_filter("md", markdown_cell);
        // Compiled on first use: a run needs its provider's scripts, not all four clouds'.
        env.set_loader(|name| Ok(template_source(name)));
        env
    })
}

/// Shell templates print every value single-quoted: no value can become a second word,
/// a command substitution or a new command. `| safe` opts out for trusted template text.
fn write_shell(out: &mut minijinja::Output, value: &JValue) -> Result<(), minijinja::Error> {
    if value.is_safe() {
        return write!(out, "{value}").map_err(minijinja::Error::from);
    }
    let text = if value.is_none() || value.is_undefined() {
        String::new()
    } else {
        value.to_string()
    };
    write!(out, "{}", shell_quote(&text)).map_err(minijinja::Error::from)
}

/// POSIX single-quoting: `'` becomes `'\''`; everything else, newlines included, is literal.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A list as separate quoted words (`--labels {{ labels | shell_words }}`).
fn shell_words(value: &JValue) -> Result<JValue, minijinja::Error> {
    let words: Vec<String> = value
        .try_iter()?
        .map(|v| shell_quote(&v.to_string()))
        .collect();
    Ok(JValue::from_safe_string(words.join(" ")))
}

/// Free text inside a Markdown table cell or line: no `|`, no line break, no HTML.
fn markdown_cell(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace(['\n', '\r'], " ")
}

/// A text file of the model, written: its template rendered, or its text as it is.
pub fn text(file: crate::model::TextFile) -> Result<(String, String), Diagnostic> {
    let text = match file.text {
        crate::model::Text::Written(text) => text,
        crate::model::Text::Template { template, context } => render_text(&template, &context)?,
    };
    Ok((file.path, text))
}

/// Render a text template (scripts, values files) with a context. Every file ends in exactly
/// one newline, whatever the template's last line looks like.
pub(crate) fn render_text(template: &str, context: &Value) -> Result<String, Diagnostic> {
    let mut text = env()
        .get_template(template)
        .and_then(|t| t.render(JValue::from(minijinja::value::Serde(context))))
        .map_err(|e| internal(&format!("template {template}"), &e))?;
    text.truncate(text.trim_end_matches('\n').len());
    text.push('\n');
    Ok(text)
}

fn internal(what: &str, e: &minijinja::Error) -> Diagnostic {
    Diagnostic::new(
        &crate::base::codes::INTERNAL,
        format!("internal error rendering {what}: {e:#}"),
    )
    .hint("this is a bug in raykueue; please report it with the profile")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_keeps_every_value_one_inert_word() {
        assert_eq!(shell_quote("x; rm -rf ~"), "'x; rm -rf ~'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(id)"), "'$(id)'");
    }

    /// Templates compile when first asked for: this asks for each, so a syntax error in one
    /// no run of the tests renders still fails here.
    #[test]
    fn every_embedded_template_compiles() {
        assert!(TEMPLATES.len() >= 15, "{}", TEMPLATES.len());
        assert!(TEMPLATES.iter().any(|(n, _)| *n == "infra/common/up.sh.j2"));
        for (name, _) in TEMPLATES {
            if let Err(e) = env().get_template(name) {
                panic!("{name}: {e:#}");
            }
        }
        assert!(env().get_template("no/such.j2").is_err());
    }
}
