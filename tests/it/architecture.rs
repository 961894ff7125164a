//! The shape of `src/`: files as nodes, `use` and inline `crate::`/`super::` paths as edges. No
//! cycle, and no import against the stage order that `src/lib.rs` writes down once (its table
//! of stages and the files each holds). Tests, benches and `#[cfg(test)]` modules are outside
//! the graph.

use crate::common::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/`, by its path relative to `src/` (`cloud/azure/mod.rs`).
fn sources(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, src, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The module path of a file (`cloud/azure/mod.rs` → `["cloud", "azure"]`).
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The file of a module path, if there is one.
fn file_of(files: &BTreeMap<String, String>, module: &[String]) -> Option<String> {
    if module.is_empty() {
        return Some("lib.rs".to_owned());
    }
    let base = module.join("/");
    [format!("{base}.rs"), format!("{base}/mod.rs")]
        .into_iter()
        .find(|f| files.contains_key(f))
}

/// The text of a file without its test modules (by convention at the end, after
/// `#[cfg(test)]`) and without comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path a file names: `use` trees expanded (`crate::{a, b::{c}}` → `crate::a`,
/// `crate::b::c`) and inline `crate::x::y` / `super::x` paths.
fn paths(code: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let head = tree[..open].trim().trim_end_matches("::");
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            let joined = if prefix.is_empty() {
                head.to_owned()
            } else {
                format!("{prefix}::{head}")
            };
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&joined, &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&joined, &inner[start..], out);
        } else if !tree.is_empty() {
            let item = tree.split(" as ").next().unwrap_or(tree).trim();
            out.push(if prefix.is_empty() {
                item.to_owned()
            } else {
                format!("{prefix}::{item}")
            });
        }
    }
    let mut out = Vec::new();
    // `use` items start a line (after an optional visibility) and end at `;`.
    let mut statement: Option<String> = None;
    for line in code.lines() {
        let t = line.trim_start();
        if statement.is_none() {
            let body = ["use ", "pub use ", "pub(crate) use ", "pub(super) use "]
                .iter()
                .find_map(|p| t.strip_prefix(p));
            if let Some(body) = body {
                statement = Some(String::new());
                statement.as_mut().unwrap().push_str(body);
            } else {
                continue;
            }
        } else if let Some(s) = statement.as_mut() {
            s.push(' ');
            s.push_str(t);
        }
        if let Some(s) = &statement
            && let Some(end) = s.find(';')
        {
            expand("", &s[..end], &mut out);
            statement = None;
        }
    }
    let bytes = code.as_bytes();
    for start in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
                continue;
            }
            let end = code[at..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(code.len(), |e| at + e);
            out.push(code[at..end].trim_end_matches(':').to_owned());
        }
    }
    out
}

/// The file a path leads to from `file`: the longest module prefix that is a file.
fn target(files: &BTreeMap<String, String>, file: &str, path: &str) -> Option<String> {
    let path = path.replace("$crate::", "crate::");
    let mut segments: Vec<String> = path.split("::").map(str::to_owned).collect();
    let mut module: Vec<String> = match segments.first().map(String::as_str) {
        Some("crate") => {
            segments.remove(0);
            Vec::new()
        }
        Some("super" | "self") => {
            let mut m = module_of(file);
            while let Some(s) = segments.first() {
                match s.as_str() {
                    "super" => {
                        m.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                segments.remove(0);
            }
            m
        }
        _ => return None,
    };
    let mut best = file_of(files, &module);
    for s in segments {
        module.push(s);
        match file_of(files, &module) {
            Some(f) => best = Some(f),
            None => break,
        }
    }
    best.filter(|f| f != file)
}

/// The stage table of `src/lib.rs`: (number, name, file patterns).
fn stages(lib: &str) -> Vec<(u32, String, Vec<String>)> {
    lib.lines()
        .filter_map(|l| l.strip_prefix("//! | "))
        .filter_map(|row| {
            let cells: Vec<&str> = row.split(" | ").collect();
            let n = cells.first()?.trim().parse().ok()?;
            let patterns = cells
                .get(2)?
                .split(',')
                .map(|p| p.trim().trim_matches('`').to_owned())
                .collect();
            Some((n, cells[1].trim().to_owned(), patterns))
        })
        .collect()
}

/// `cloud/*/section.rs` matches `cloud/azure/section.rs`; `base/` matches everything below.
fn matches(pattern: &str, file: &str) -> bool {
    if let Some(dir) = pattern.strip_suffix('/') {
        return file.starts_with(&format!("{dir}/"));
    }
    let (p, f): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), file.split('/').collect());
    p.len() == f.len() && p.iter().zip(&f).all(|(a, b)| *a == "*" || a == b)
}

/// The stage of a file: the most specific pattern that matches it (a single file over a
/// folder glob over a folder).
fn stage_of(stages: &[(u32, String, Vec<String>)], file: &str) -> Option<(u32, String)> {
    let mut best: Option<(usize, u32, String)> = None;
    for (n, name, patterns) in stages {
        for p in patterns {
            if matches(p, file) {
                let specificity = if p.ends_with('/') {
                    0
                } else if p.contains('*') {
                    1
                } else {
                    2
                };
                if best.as_ref().is_none_or(|(s, _, _)| specificity > *s) {
                    best = Some((specificity, *n, name.clone()));
                }
            }
        }
    }
    best.map(|(_, n, name)| (n, name))
}

/// The import graph of a source tree: file → the files it names.
fn graph(files: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    files
        .iter()
        .map(|(file, text)| {
            let targets = paths(&code(text))
                .iter()
                .filter_map(|p| target(files, file, p))
                .collect();
            (file.clone(), targets)
        })
        .collect()
}

/// Strongly connected components with more than one file (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(lw));
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low[v];
                t.low.insert(v, lv.min(iw));
            }
        }
        if t.low[v] == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                scc.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                scc.sort();
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// What is wrong with a tree: its cycles and its backward imports, as lines.
fn problems(files: &BTreeMap<String, String>) -> Vec<String> {
    let stages = stages(&files["lib.rs"]);
    assert!(stages.len() >= 8, "src/lib.rs lists the stages: {stages:?}");
    let g = graph(files);
    let mut out: Vec<String> = cycles(&g)
        .into_iter()
        .map(|c| format!("cycle: {}", c.join(" ↔ ")))
        .collect();
    for (file, targets) in &g {
        let Some((from, from_name)) = stage_of(&stages, file) else {
            out.push(format!("{file}: in no stage of src/lib.rs"));
            continue;
        };
        for t in targets {
            if let Some((to, to_name)) = stage_of(&stages, t)
                && to > from
            {
                out.push(format!(
                    "backward: {file} ({from_name}) imports {t} ({to_name})"
                ));
            }
        }
    }
    out
}

#[test]
fn src_has_no_cycle_and_no_import_against_the_stage_order() {
    let files = sources(&repo().join("src"));
    let found = problems(&files);
    assert!(
        found.is_empty(),
        "{} problem(s):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The test catches what it is for: a planted backward import (a leaf importing the
/// pipeline) and a planted cycle between two leaves.
#[test]
fn a_planted_backward_import_or_cycle_is_caught() {
    let mut files = sources(&repo().join("src"));
    assert!(problems(&files).is_empty());
    let base = files["base/pointer.rs"].clone();
    files.insert(
        "base/pointer.rs".into(),
        format!("use crate::compile::compile;\n{base}"),
    );
    let found = problems(&files);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("backward: base/pointer.rs (base) imports compile.rs")),
        "{found:?}"
    );
    let mut files = sources(&repo().join("src"));
    let par = files["base/par.rs"].clone();
    files.insert(
        "base/par.rs".into(),
        format!("use crate::base::source::Source;\n{par}"),
    );
    let source = files["base/source.rs"].clone();
    files.insert(
        "base/source.rs".into(),
        format!("use crate::base::par::map;\n{source}"),
    );
    let found = problems(&files);
    assert!(
        found
            .iter()
            .any(|p| p.contains("cycle: base/par.rs ↔ base/source.rs")),
        "{found:?}"
    );
}
