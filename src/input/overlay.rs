//! Stage 2 (`lib.rs`), the input, after loading: `extends:` overlays. A profile may build on
//! another (a shipped name or a path relative to the overlay's file); the two trees are merged
//! before the schema check, each node keeping the file and line it came from, so diagnostics
//! point into the right file.
//!
//! Merge rules (documented in `docs/overlays.md`, close to Kustomize's strategic merge):
//! - mappings merge key by key; the overlay's value wins for scalars; `key: null` removes `key`;
//! - lists whose items all carry a `name` merge by name: matching items merge, new ones are
//!   appended, and an item `{name: x, $patch: delete}` removes `x`;
//! - every other list is replaced as a whole;
//! - a mapping, a list and a scalar never replace each other: that is a type clash, reported at
//!   the overlay's line.

use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::source::Source;
use crate::input::load::{self, Tree, TreeKind};
use crate::input::resolve;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How deep `extends` may chain: deeper is almost certainly a mistake.
const MAX_CHAIN: usize = 16;

/// Resolve every `extends` in `tree` (a profile read from `base_dir`) and return the merged tree.
pub(crate) fn expand(tree: Tree, base_dir: Option<&Path>) -> Result<Tree, Vec<Diagnostic>> {
    let id = identity(&tree.source, base_dir);
    expand_chain(tree, base_dir, &mut vec![id])
}

fn identity(source: &Source, base_dir: Option<&Path>) -> String {
    match base_dir {
        None => format!("shipped:{}", source.name),
        Some(_) => std::fs::canonicalize(&*source.name)
            .map_or_else(|_| source.name.to_string(), |p| p.display().to_string()),
    }
}

fn expand_chain(
    mut tree: Tree,
    base_dir: Option<&Path>,
    chain: &mut Vec<String>,
) -> Result<Tree, Vec<Diagnostic>> {
    let TreeKind::Map(entries) = &mut tree.kind else {
        return Ok(tree);
    };
    let Some(i) = entries.iter().position(|(k, _)| k == "extends") else {
        return Ok(tree);
    };
    let (_, ext) = entries.remove(i);
    let TreeKind::Scalar(Value::String(parent_ref)) = &ext.kind else {
        return Err(vec![
            at(
                &ext,
                Diagnostic::new(
                    &codes::WRONG_TYPE,
                    format!("`extends` expects a string, found {}", ext.kind.describe()),
                ),
            )
            .path("extends")
            .hint(
                "name a shipped profile (`team`) or a path relative to this file (`../base.yaml`)",
            ),
        ]);
    };
    let (resolved, parent_dir) = resolve_parent(parent_ref, base_dir).map_err(|msg| {
        vec![
            at(&ext, Diagnostic::new(&codes::EXTENDS_NOT_FOUND, msg))
                .path("extends")
                .hint("name a shipped profile (single, team, kuberay-gpu) or a file relative to this one"),
        ]
    })?;
    let id = identity(&resolved, parent_dir.as_deref());
    if chain.contains(&id) || chain.len() >= MAX_CHAIN {
        let mut names: Vec<&str> = chain
            .iter()
            .map(|s| s.rsplit('/').next().unwrap_or(s))
            .collect();
        names.push(id.rsplit('/').next().unwrap_or(&id));
        return Err(vec![
            at(
                &ext,
                Diagnostic::new(
                    &codes::EXTENDS_CYCLE,
                    format!("`extends` forms a cycle: {}", names.join(" → ")),
                ),
            )
            .path("extends")
            .hint(
                "a profile cannot extend itself, directly or through others; remove one `extends`",
            ),
        ]);
    }
    chain.push(id);
    let parent = load::parse_tree(&resolved)?;
    let parent = expand_chain(parent, parent_dir.as_deref(), chain)?;
    chain.pop();
    let mut errors = Vec::new();
    let merged = merge(parent, tree, "", &mut errors);
    if errors.is_empty() {
        Ok(merged)
    } else {
        Err(errors)
    }
}

fn at(node: &Tree, d: Diagnostic) -> Diagnostic {
    d.at(&node.source, node.pos)
}

/// A parent reference: a shipped name, or a path relative to the overlay's folder.
fn resolve_parent(
    reference: &str,
    base_dir: Option<&Path>,
) -> Result<(Source, Option<PathBuf>), String> {
    resolve::relative(reference, base_dir, "extend")
        .map(|r| (r.source, r.base_dir))
        .map_err(|msg| format!("cannot load the parent profile: {msg}"))
}

fn merge(base: Tree, over: Tree, path: &str, errors: &mut Vec<Diagnostic>) -> Tree {
    match (base.kind, over.kind) {
        (TreeKind::Map(base_entries), TreeKind::Map(over_entries)) => {
            let mut out = base_entries;
            for (key, value) in over_entries {
                let child = join(path, &key);
                let pos = out.iter().position(|(k, _)| *k == key);
                match (pos, &value.kind) {
                    (Some(i), TreeKind::Scalar(Value::Null)) => {
                        out.remove(i);
                    }
                    (None, TreeKind::Scalar(Value::Null)) => {}
                    (Some(i), _) => {
                        let (k, old) = out.remove(i);
                        out.insert(i, (k, merge(old, value, &child, errors)));
                    }
                    (None, _) => out.push((key, value)),
                }
            }
            Tree {
                kind: TreeKind::Map(out),
                ..over_meta(&over.source, over.key, over.pos)
            }
        }
        (TreeKind::Seq(base_items), TreeKind::Seq(over_items)) => {
            if all_named(&base_items) && all_named(&over_items) {
                let mut out = base_items;
                for item in over_items {
                    let name = item_name(&item).unwrap_or_default().to_owned();
                    let delete = is_delete(&item);
                    let found = out.iter().position(|b| item_name(b) == Some(name.as_str()));
                    match (found, delete) {
                        (Some(i), true) => {
                            out.remove(i);
                        }
                        (None, true) => errors.push(
                            at(&item, Diagnostic::new(&codes::OVERLAY_CLASH, format!("`$patch: delete` names `{name}`, which the parent profile does not have")))
                                .path(path.to_owned())
                                .hint("remove this entry, or fix the name"),
                        ),
                        (Some(i), false) => {
                            let old = out.remove(i);
                            let child = format!("{path}[{name}]");
                            out.insert(i, merge(old, item, &child, errors));
                        }
                        (None, false) => out.push(item),
                    }
                }
                Tree {
                    kind: TreeKind::Seq(out),
                    ..over_meta(&over.source, over.key, over.pos)
                }
            } else {
                Tree {
                    kind: TreeKind::Seq(over_items),
                    ..over_meta(&over.source, over.key, over.pos)
                }
            }
        }
        (TreeKind::Scalar(_), TreeKind::Scalar(v)) => Tree {
            kind: TreeKind::Scalar(v),
            ..over_meta(&over.source, over.key, over.pos)
        },
        (base_kind, over_kind) => {
            errors.push(
                Diagnostic::new(&codes::OVERLAY_CLASH, format!(
                        "type clash: the parent profile has {} here, this overlay {}",
                        base_kind.describe(),
                        over_kind.describe()
                    ),
                )
                .at(&over.source, over.pos)
                .path(path.to_owned())
                .hint("an overlay merges into its parent; give the same kind of value, or `null` to remove the key first"),
            );
            Tree {
                kind: base_kind,
                ..over_meta(&base.source, base.key, base.pos)
            }
        }
    }
}

/// A tree shell carrying a node's place (the kind is filled by the caller).
fn over_meta(
    source: &Source,
    key: Option<crate::base::source::Pos>,
    pos: crate::base::source::Pos,
) -> Tree {
    Tree {
        source: source.clone(),
        key,
        pos,
        kind: TreeKind::Scalar(Value::Null),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn item_name(t: &Tree) -> Option<&str> {
    let TreeKind::Map(entries) = &t.kind else {
        return None;
    };
    entries.iter().find_map(|(k, v)| match (&**k, &v.kind) {
        ("name", TreeKind::Scalar(Value::String(s))) => Some(s.as_str()),
        _ => None,
    })
}

fn all_named(items: &[Tree]) -> bool {
    !items.is_empty() && items.iter().all(|t| item_name(t).is_some())
}

fn is_delete(t: &Tree) -> bool {
    let TreeKind::Map(entries) = &t.kind else {
        return false;
    };
    entries.iter().any(|(k, v)| {
        k == "$patch" && matches!(&v.kind, TreeKind::Scalar(Value::String(s)) if s == "delete")
    })
}
