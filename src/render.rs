//! Stage 5: objects → text. Templates are embedded minijinja files; every value they print is
//! escaped for its target by construction (JSON scalars in YAML, single-quoted words in shell).
//! Each rendered YAML document is parsed back and written out canonically, so the output's
//! layout depends on nothing but the data.

use crate::diagnostic::Diagnostic;
use crate::model::{Body, Object};
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value as JValue};
use serde_json::{Map, Value};
use std::sync::OnceLock;

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|name| {
            if name.ends_with(".yaml.j2") || name.ends_with(".yml.j2") {
                AutoEscape::Json
            } else if name.ends_with(".sh.j2") {
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
        minijinja_embed::load_templates!(&mut env);
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

/// Render a text template (scripts, values files) with a context. Every file ends in exactly
/// one newline, whatever the template's last line looks like.
pub fn render_text(template: &str, context: &Value) -> Result<String, Diagnostic> {
    let mut text = env()
        .get_template(template)
        .and_then(|t| t.render(JValue::from(minijinja::value::Serde(context))))
        .map_err(|e| internal(&format!("template {template}"), &e))?;
    text.truncate(text.trim_end_matches('\n').len());
    text.push('\n');
    Ok(text)
}

/// One object as data: an object built as data is taken as is; a templated one is rendered
/// and read back.
pub fn render_object(obj: &mut Object) -> Result<Value, Diagnostic> {
    let (template, context) = match &mut obj.body {
        Body::Data(value) => return Ok(std::mem::take(value)),
        Body::Template { template, context } => (*template, std::mem::take(context)),
    };
    let text = render_text(template, &context)?;
    let value: Value = read_back(&text).map_err(|e| {
        Diagnostic::error(
            "RK900",
            format!(
                "internal error: template {} produced invalid YAML for {}: {}",
                template,
                obj.display_name(),
                e.to_string().lines().next().unwrap_or_default()
            ),
        )
    })?;
    Ok(canonical(value))
}

/// Read rendered YAML back as data. Rendered documents are plain: block and flow collections
/// of quoted strings, words, integers and booleans. Those are built straight from the parser's
/// events (the parser serde-saphyr itself uses), which is several times cheaper than the full
/// deserializer; anything else (anchors, tags, floats, null spellings, YAML 1.1 look-alikes,
/// duplicate keys, syntax errors) goes to serde-saphyr, which decides and words the errors.
pub fn read_back(text: &str) -> Result<Value, serde_saphyr::Error> {
    match read_plain(text) {
        Some(value) => Ok(value),
        None => serde_saphyr::from_str(text),
    }
}

/// The fast path of `read_back`: `None` whenever the document holds anything whose meaning
/// is not obvious, so the result is always what serde-saphyr would give.
fn read_plain(text: &str) -> Option<Value> {
    use serde_saphyr::granit_parser::{Event, Parser};
    enum Frame {
        Seq(Vec<Value>),
        Map(Map<String, Value>, Option<String>),
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut root = None;
    let mut documents = 0;
    for item in Parser::new_from_str(text) {
        let (event, _) = item.ok()?;
        let value = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::DocumentStart(_, version) => {
                documents += 1;
                if documents > 1 || version.is_some() {
                    return None;
                }
                continue;
            }
            Event::Scalar(v, style, 0, None) => plain_scalar(v, style)?,
            Event::SequenceStart(_, 0, None) => {
                stack.push(Frame::Seq(Vec::new()));
                continue;
            }
            Event::MappingStart(_, 0, None) => {
                stack.push(Frame::Map(Map::new(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop()? {
                Frame::Seq(items) => Value::Array(items),
                Frame::Map(..) => return None,
            },
            Event::MappingEnd => match stack.pop()? {
                Frame::Map(map, None) => Value::Object(map),
                _ => return None,
            },
            // Anchors, aliases, tags, comments: serde-saphyr's business.
            _ => return None,
        };
        match stack.last_mut() {
            None if root.is_none() => root = Some(value),
            None => return None,
            Some(Frame::Seq(items)) => items.push(value),
            Some(Frame::Map(map, key)) => match key.take() {
                None => match value {
                    Value::String(k) if !map.contains_key(&k) => *key = Some(k),
                    _ => return None,
                },
                Some(k) => {
                    map.insert(k, value);
                }
            },
        }
    }
    if stack.is_empty() { root } else { None }
}

/// A scalar whose type is certain: any quoted or block scalar is a string; a plain one only
/// when it is `true`/`false`, a short decimal integer, or a word that no YAML 1.1/1.2 resolver
/// reads as null, boolean or number.
fn plain_scalar(
    v: std::borrow::Cow<'_, str>,
    style: serde_saphyr::granit_parser::ScalarStyle,
) -> Option<Value> {
    use serde_saphyr::granit_parser::ScalarStyle;
    if style != ScalarStyle::Plain {
        return Some(Value::String(v.into_owned()));
    }
    let s = v.as_ref();
    match s {
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    let digits = s.strip_prefix('-').unwrap_or(s);
    if !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()) {
        if digits.len() > 1 && digits.starts_with('0') || s == "-0" {
            return None;
        }
        return if s.starts_with('-') {
            s.parse::<i64>().ok().map(Value::from)
        } else {
            s.parse::<u64>().ok().map(Value::from)
        };
    }
    let lower = s.to_ascii_lowercase();
    let word = s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && !matches!(
            lower.as_str(),
            "null" | "true" | "false" | "yes" | "no" | "y" | "n" | "on" | "off"
        )
        && !lower.starts_with("inf")
        && !lower.starts_with("nan");
    word.then(|| Value::String(v.into_owned()))
}

fn internal(what: &str, e: &minijinja::Error) -> Diagnostic {
    Diagnostic::error("RK900", format!("internal error rendering {what}: {e:#}"))
        .hint("this is a bug in raykueue; please report it with the profile")
}

/// Kubernetes' conventional key order at the top and in `metadata`; elsewhere the template's.
fn canonical(value: Value) -> Value {
    const TOP: &[&str] = &["apiVersion", "kind", "metadata", "spec"];
    const META: &[&str] = &["name", "namespace", "labels", "annotations"];
    let Value::Object(mut top) = value else {
        return value;
    };
    if let Some(Value::Object(meta)) = top.shift_remove("metadata") {
        top.insert("metadata".into(), Value::Object(reorder(meta, META)));
    }
    Value::Object(reorder(top, TOP))
}

fn reorder(mut map: Map<String, Value>, first: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    for k in first {
        if let Some(v) = map.shift_remove(*k) {
            out.insert((*k).to_owned(), v);
        }
    }
    out.extend(map);
    out
}

/// One document as YAML text, ending in exactly one newline.
pub fn to_yaml(value: &Value) -> Result<String, Diagnostic> {
    let mut text = serde_saphyr::to_string(value)
        .map_err(|e| Diagnostic::error("RK900", format!("internal error writing YAML: {e}")))?;
    // Trailing blank lines are not trimmed: after a `|+` block scalar they are its content
    // (a description of "\n" is written `description: |+` and an empty line).
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
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

    #[test]
    fn yaml_templates_escape_values_as_json() {
        let mut obj = Object::new(
            "LocalQueue",
            "x",
            Some("ray"),
            "workloads/configmap.yaml.j2",
            "f",
            &serde_json::json!({
                "metadata": {"name": "a\nkind: Secret", "namespace": "---"},
                "data": {"k": "q: {}"},
            }),
        );
        let v = render_object(&mut obj).unwrap();
        assert_eq!(v["kind"], "ConfigMap");
        assert_eq!(v["metadata"]["name"], "a\nkind: Secret");
        assert_eq!(v["metadata"]["namespace"], "---");
        assert_eq!(v["data"]["k"], "q: {}");
    }

    #[test]
    fn trailing_newlines_of_a_keep_block_survive() {
        // Found by the free-text property test: trimming the document's last blank line
        // turned a description of "\n" into "".
        for text in ["\n", "a\n\n", "\n\n\n"] {
            let yaml = to_yaml(&serde_json::json!({ "description": text })).unwrap();
            let back: Value = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(back["description"], text, "{yaml:?}");
        }
    }

    #[test]
    fn read_back_agrees_with_serde_saphyr() {
        let plain = [
            "a: 1\nb: [x, \"y\", 'z', -3, true, false]\nc: {d: {e: ray.io/v1}}\n",
            "kind: RayJob\nspec:\n  entrypoint: \"python train.py\"\n  count: 0\n",
            "- a\n- |\n  two\n  lines\n",
        ];
        for text in plain {
            let fast = read_plain(text).expect("takes the fast path");
            assert_eq!(
                fast,
                serde_saphyr::from_str::<Value>(text).unwrap(),
                "{text}"
            );
        }
        let other = [
            "a: yes\n",
            "a: No\n",
            "a: ~\n",
            "a: null\n",
            "a:\n",
            "a: 1.5\n",
            "a: 0x10\n",
            "a: 0755\n",
            "a: -0\n",
            "a: .inf\n",
            "a: Infinity\n",
            "a: nan\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "1: a\n",
            "true: a\n",
            "a: 1\na: 2\n",
            "a: 1\n---\nb: 2\n",
            "%YAML 1.1\n---\na: b\n",
            "<<: {a: 1}\n",
            "a: [1, 2\n",
            "",
            "a: 99999999999999999999\n",
        ];
        for text in other {
            assert!(
                read_plain(text).is_none(),
                "{text:?} must go to serde-saphyr"
            );
        }
    }
}
