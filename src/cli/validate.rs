//! `raykueue validate FILE... | -`: the output validation of `gen`, for any manifest stream
//! (hand-written RayJobs, another tool's output, a committed tree).
//!
//! Exit 0 when every object is valid (warnings allowed), 1 when one is not (or, with
//! `--deny-warnings`, when there are warnings), 2 when a file cannot be read or is not a YAML
//! stream of objects. An object of a kind raykueue has no schema for is reported as "not
//! validated" (a warning), not as invalid: a stream may carry Secrets or Deployments too.

use super::{ErrorFormat, exit, print_diagnostics};
use crate::base::codes;
use crate::base::diagnostic::{self, Diagnostic};
use crate::base::source::Source;
use crate::input::load::{self, Document};
use crate::output::validate::{self, Origin, Place, Verdict};
use clap::Args;
use serde_json::Value;
use std::io::Read;

#[derive(Args, Debug)]
pub(super) struct ValidateCommand {
    /// Manifest files (multi-document YAML or JSON); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<String>,
    /// Treat warnings (kinds not validated, defaulted fields left out) as errors.
    #[arg(long)]
    deny_warnings: bool,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

impl ValidateCommand {
    pub(super) fn run(self) -> u8 {
        let mut diags = Vec::new();
        let mut unreadable = false;
        let mut objects = 0;
        let mut refused = false;
        for file in &self.files {
            let (name, bytes) = match read(file) {
                Ok(b) => b,
                Err(d) => {
                    diags.push(d);
                    unreadable = true;
                    continue;
                }
            };
            let docs = match load::decode_manifest(&name, &bytes)
                .map_err(|d| vec![d])
                .and_then(|source| Ok((load::parse_stream(&source)?, source)))
            {
                Ok(d) => d,
                Err(d) => {
                    diags.extend(d);
                    unreadable = true;
                    continue;
                }
            };
            let (docs, source) = docs;
            // A raykueue file is no manifest: one error naming the command that reads it, not
            // a "no schema" warning per document.
            if let Some(d) = crate::input::kind::not_kubernetes(
                &source,
                "a Kubernetes manifest",
                "raykueue validate",
            ) {
                diags.push(d);
                refused = true;
                continue;
            }
            for doc in &docs {
                match check_document(&source, doc, &mut diags) {
                    Some(n) => objects += n,
                    None => unreadable = true,
                }
            }
        }
        if objects == 0 && !unreadable && !refused {
            diags.push(
                Diagnostic::new(&codes::MANIFEST_EMPTY, "no Kubernetes objects in the input")
                    .hint("check that the right file was named"),
            );
        }
        diagnostic::normalize(&mut diags);
        print_diagnostics(&diags, self.error_format);
        if unreadable {
            exit::ERROR
        } else if diags.iter().any(|d| d.is_error() || self.deny_warnings) {
            exit::INVALID
        } else {
            exit::OK
        }
    }
}

/// A file's name (as given; `<stdin>` for `-`) and bytes, or an I/O diagnostic.
fn read(file: &str) -> Result<(String, Vec<u8>), Diagnostic> {
    let limit = load::MAX_PROFILE_BYTES as u64 + 1;
    let mut bytes = Vec::new();
    let (name, result) = if file == "-" {
        let stdin = std::io::stdin().lock();
        (
            "<stdin>".to_owned(),
            stdin.take(limit).read_to_end(&mut bytes),
        )
    } else {
        let opened = std::fs::File::open(file);
        let result = opened.and_then(|f| f.take(limit).read_to_end(&mut bytes));
        (file.to_owned(), result)
    };
    match result {
        Ok(_) => Ok((name, bytes)),
        Err(e) => Err(Diagnostic::new(
            &codes::USAGE,
            format!("cannot read {name}: {e}"),
        )),
    }
}

/// Validate one document (a `v1` `List` is validated item by item). `None` when the document
/// is not an object at all; else how many objects it held.
fn check_document(source: &Source, doc: &Document, diags: &mut Vec<Diagnostic>) -> Option<usize> {
    let Value::Object(root) = &doc.value else {
        diags.push(
            Diagnostic::new(
                &codes::MANIFEST_NOT_OBJECT,
                format!(
                    "a YAML document here is {}, not a Kubernetes object (a mapping)",
                    what(&doc.value)
                ),
            )
            .at(source, doc.spans.value_pos(""))
            .hint("each document of a manifest stream is one object with apiVersion and kind"),
        );
        return None;
    };
    let is_list = root.get("apiVersion").and_then(Value::as_str) == Some("v1")
        && root.get("kind").and_then(Value::as_str) == Some("List");
    if let (true, Some(Value::Array(items))) = (is_list, root.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check_object(source, doc, item, &format!("/items/{i}"), diags);
        }
        return Some(items.len());
    }
    check_object(source, doc, &doc.value, "", diags);
    Some(1)
}

fn check_object(
    source: &Source,
    doc: &Document,
    value: &Value,
    base: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let name = validate::object_name(value);
    match validate::object(value) {
        Verdict::Checked(violations) => {
            let place = Place {
                source,
                object: value,
                spans: &doc.spans,
                base,
            };
            for v in &violations {
                diags.push(validate::diagnostic(
                    Origin::Manifest,
                    &name,
                    v,
                    Some(place),
                ));
            }
        }
        Verdict::Unknown { message, hint } => {
            let mut d = Diagnostic::new(&codes::MANIFEST_NO_SCHEMA, message)
                .path(name)
                .at(source, doc.spans.value_pos(&format!("{base}/kind")));
            if let Some(h) = hint {
                d = d.hint(h);
            }
            diags.push(d);
        }
    }
}

fn what(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
