//! The placed tree: a YAML document as nodes that carry their source and position, what both
//! readers build (`parse` through serde-saphyr, `events` from the parser's events) and what
//! overlays merge before it is flattened into JSON.

use crate::base::source::{Pos, Source};
use serde_json::Value;

/// A YAML node with its place: what overlays merge, before it is flattened into JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    pub source: Source,
    /// Position of the mapping key that holds this node, if any.
    pub key: Option<Pos>,
    pub pos: Pos,
    pub kind: TreeKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TreeKind {
    /// null, boolean, number or string.
    Scalar(Value),
    Seq(Vec<Tree>),
    Map(Vec<(String, Tree)>),
}

impl TreeKind {
    /// `a mapping`, `a list`, `a string`... for messages.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            TreeKind::Map(_) => "a mapping",
            TreeKind::Seq(_) => "a list",
            TreeKind::Scalar(Value::String(_)) => "a string",
            TreeKind::Scalar(Value::Null) => "nothing (null)",
            TreeKind::Scalar(Value::Bool(_)) => "a boolean",
            TreeKind::Scalar(_) => "a number",
        }
    }
}
