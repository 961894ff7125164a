//! A multi-document stream (a manifest, a live snapshot) read the fast way: cut into its
//! documents at their `---` lines, each read from the parser's events (`events`, in pieces
//! when large), on all cores. A snapshot of 10,000 Workloads is 7 MB of YAML; through
//! serde-saphyr, reading it was most of `explain`'s time.
//!
//! It declines (`None`, and the caller takes serde-saphyr's path, which reports whatever is
//! wrong) where `events` declines, and on directives (`%YAML`), document end markers (`...`),
//! and streams past the bounds. A line that starts with `---` and a blank (or ends there) is
//! a document marker wherever it stands (YAML 1.2, `c-forbidden`: no scalar or collection
//! may hold one), so the cuts are where the parser's documents start. A cut the parser
//! would not make leaves two documents in one piece, which `events` then declines.

use super::events::{self, Base, Bounds};
use super::tree::{Tree, TreeKind};
use crate::base::source::Source;
use serde_json::Value;

/// The trees of the stream's documents, in order, empty and null ones left out (as kubectl
/// leaves them out), or `None` when serde-saphyr must read it.
pub(super) fn trees(source: &Source, bounds: Bounds, max_documents: usize) -> Option<Vec<Tree>> {
    let text = &source.text;
    let markers = events::markers(source);
    // Where each document starts, and whether it holds anything but comments.
    let mut docs: Vec<(Base, bool)> = vec![(Base::default(), false)];
    let mut offset = 0;
    for (line, l) in text.split_inclusive('\n').enumerate() {
        let body = l.trim_end_matches(['\n', '\r']);
        if body.starts_with('%') || marker(body, "...") {
            return None;
        }
        let content = if marker(body, "---") {
            docs.push((
                Base {
                    byte: offset,
                    line: u32::try_from(line).ok()?,
                },
                false,
            ));
            &body[3..]
        } else {
            body
        };
        let content = content.trim_start_matches([' ', '\t']);
        if !content.is_empty() && !content.starts_with('#') {
            docs.last_mut()?.1 = true;
        }
        offset += l.len();
    }
    if docs.len() > max_documents {
        return None;
    }
    let ends: Vec<usize> = docs
        .iter()
        .skip(1)
        .map(|(b, _)| b.byte)
        .chain([text.len()])
        .collect();
    let ranges: Vec<(Base, usize)> = docs
        .iter()
        .zip(ends)
        .filter(|((_, content), _)| *content)
        .map(|((base, _), end)| (*base, end))
        .collect();
    let wide = crate::base::par::wide(ranges.len()) || text.len() >= 1024 * 1024;
    let read = crate::base::par::map(wide, &ranges, |(base, end)| {
        let own;
        let source = if wide {
            own = source.own_handle();
            &own
        } else {
            source
        };
        events::document(source, base.byte..*end, *base, markers, bounds)
    });
    let mut nodes = 0;
    let mut out = Vec::with_capacity(read.len());
    for r in read {
        let r = r?;
        nodes += r.nodes;
        // serde-saphyr leaves out a null document (`~`) as it leaves out an empty one.
        if r.tree.kind != TreeKind::Scalar(Value::Null) {
            out.push(r.tree);
        }
    }
    (nodes <= bounds.nodes).then_some(out)
}

/// Whether `line` is the document marker `mark` (`---`, `...`): at its start, then a blank or
/// the end of the line.
fn marker(line: &str, mark: &str) -> bool {
    line.strip_prefix(mark)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::load::parse::saphyr_stream;
    use std::fmt::Write as _;
    use std::path::Path;

    const BOUNDS: Bounds = Bounds {
        depth: 64,
        nodes: 20_000_000,
    };

    fn yaml_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                yaml_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(p);
            }
        }
    }

    /// A `v1` List of `n` objects, or a stream of them, as kubectl prints them.
    fn snapshot(n: usize, list: bool) -> String {
        let mut out = String::from(if list {
            "apiVersion: v1\nkind: List\nitems:\n"
        } else {
            ""
        });
        for i in 0..n {
            let (dash, pad) = if list { ("- ", "  ") } else { ("---\n", "") };
            let _ = write!(
                out,
                "{dash}apiVersion: kueue.x-k8s.io/v1beta2\n{pad}kind: Workload\n{pad}metadata:\n{pad}  name: job-{i}\n{pad}  uid: 00000000-0000-4000-8000-{i:012}\n{pad}  creationTimestamp: \"2026-01-05T09:00:00Z\"\n{pad}spec:\n{pad}  queueName: team-{i}\n{pad}  podSets:\n{pad}  - name: head\n{pad}    count: 1\n{pad}    template: {{spec: {{containers: [{{name: h, resources: {{requests: {{cpu: '1', memory: 4Gi}}}}}}]}}}}\n"
            );
        }
        out
    }

    /// Where the fast path reads a stream, it reads what serde-saphyr reads: the same
    /// documents, values, keys and positions; where serde-saphyr refuses one, it declines.
    /// Every YAML file of the repository, large snapshots (read in pieces, on all cores), and
    /// streams with markers, comments, empty and scalar documents, and what must be declined.
    #[test]
    fn the_fast_stream_is_serde_saphyrs_stream() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["profiles", "tests/fixtures", "golden"] {
            yaml_files(&root.join(dir), &mut files);
        }
        let mut docs: Vec<(String, String)> = files
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(f).unwrap_or_default();
                (f.display().to_string(), text)
            })
            .collect();
        for (n, list) in [(500, true), (500, false), (3, true)] {
            docs.push((format!("snapshot {n} {list}"), snapshot(n, list)));
        }
        let tricky = [
            "a: 1\n---\n---\nb:\n  c: 2\n",
            "# c\n---\na: 1\n",
            "---\n# only a comment\n---\na: 1\n",
            "--- # c\na: 1\n",
            "--- {a: 1}\n--- [1, 2]\n",
            "--- foo\n",
            "---\n~\n---\na: 1\n",
            "---\nnull\n",
            "---\n---\n",
            "",
            "  \n# c\n",
            "a: |\n  x\n---\nb: 1\n",
            "a: \"x\n---\ny\"\n",
            "a: [1,\n---\n2]\n",
            "a: 1\n...\n---\nb: 2\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: 1\n---b: 2\n",
            "a: 1\n--- \nb: 2\n",
            "a: 1\n---\t\nb: 2\n",
            "- a\n---\n- b\n",
            "a: 1\r\n---\r\nb: é\r\n",
            "a: 1\r---\rb: 2\r",
            "a: 1\n---\na: 1\na: 2\n",
            "a: &x 1\n---\nb: *x\n",
            "a: !t 1\n---\nb: 2\n",
            "a:\n- 1\n---\n  b: 2\n",
            "a: 1\n---\nb: [\n",
            "a: 1\n----\nb: 2\n",
            "é: ü\n---\nb: {c: 日本}\n",
        ];
        docs.extend(tricky.iter().map(|d| (format!("{d:?}"), (*d).to_owned())));
        let (mut fast, mut declined) = (0, 0);
        for (name, text) in docs {
            let source = Source::new(name.clone(), text);
            // serde-saphyr recurses once per level: a debug build needs more than a test
            // thread's stack for the deepest fixtures.
            let slow = std::thread::scope(|s| {
                std::thread::Builder::new()
                    .stack_size(256 << 20)
                    .spawn_scoped(s, || saphyr_stream(&source, BOUNDS, 100_000))
                    .and_then(|t| t.join().map_err(|_| std::io::Error::other("panicked")))
            })
            .expect("serde-saphyr reads");
            match trees(&source, BOUNDS, 100_000) {
                Some(trees) => {
                    fast += 1;
                    assert_eq!(Ok(&trees), slow.as_ref().map_err(|_| ()), "{name}");
                }
                None => declined += 1,
            }
        }
        assert!(fast > 150, "read the fast way: {fast}");
        assert!(declined >= 8, "declined: {declined}");
    }

    /// Past the bounds on documents, nodes and depth, serde-saphyr reads (and refuses).
    #[test]
    fn streams_past_the_bounds_are_declined() {
        let source = Source::new("s.yaml", snapshot(20, false));
        assert!(trees(&source, BOUNDS, 100).is_some());
        assert!(trees(&source, BOUNDS, 19).is_none());
        let few = Bounds {
            depth: 64,
            nodes: 100,
        };
        assert!(trees(&source, few, 100).is_none());
        let shallow = Bounds {
            depth: 3,
            nodes: 1_000,
        };
        assert!(trees(&Source::new("d.yaml", "a: {b: {c: {d: 1}}}\n"), shallow, 10).is_none());
    }
}
