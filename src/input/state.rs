//! A live cluster's state as `kubectl get clusterqueues,localqueues,cohorts,resourceflavors,
//! workloadpriorityclasses,workloads -A -o yaml` prints it: a `v1` `List`, a multi-document
//! stream, or a folder of such files. Kueue's queue kinds and Workloads are kept, with where
//! each stands (for located diagnostics), and `ray.io/v1` RayJobs when the snapshot has them
//! (for their `activeDeadlineSeconds`); every other object (Pods, Nodes, Kueue kinds
//! raykueue does not model) is counted and ignored
//! (`docs/live-state.md` says why). Kueue objects are read as v0.19.2 serves them,
//! `kueue.x-k8s.io/v1beta2`; another version of a kind raykueue reads is refused (RK800)
//! rather than guessed at: kubernetes-sigs/kueue@v0.19.2 `apis/kueue/v1beta2` renamed and
//! moved fields (`spec.priorityClassRef`, `status.admission`), so a v1beta1 object would be
//! misread. The objects are checked against the CRDs later (`live`), by output validation.

use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::source::Source;
use crate::input::load::{self, Document, SpanMap};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The API version raykueue reads Kueue objects in (Kueue v0.19.2's storage version).
pub(crate) const KUEUE_API: &str = "kueue.x-k8s.io/v1beta2";

/// The Kueue kinds of a snapshot that raykueue reads.
pub(crate) const KINDS: &[&str] = &[
    "ClusterQueue",
    "LocalQueue",
    "Cohort",
    "ResourceFlavor",
    "WorkloadPriorityClass",
    "Workload",
];

/// The RayJobs a snapshot may also hold (`kubectl get … ,rayjobs`), KubeRay v1.7.0's version.
pub(crate) const RAYJOB_API: &str = "ray.io/v1";

/// One object kept from the snapshot.
#[derive(Debug)]
pub(crate) struct LiveObject {
    pub(crate) kind: &'static str,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
    pub(crate) value: Value,
    /// Where it stands: file, document, and its pointer in the document (`/items/3`).
    pub(crate) file: usize,
    pub(crate) doc: usize,
    pub(crate) base: String,
}

impl LiveObject {
    /// `ClusterQueue/team-a-cq`, `Workload/ray/job-1`.
    pub(crate) fn id(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{ns}/{}", self.kind, self.name),
            None => format!("{}/{}", self.kind, self.name),
        }
    }
}

/// One file of the snapshot: its text, and where each node of each document stands (the
/// objects themselves are in `LiveState::objects`).
#[derive(Debug)]
pub(crate) struct StateFile {
    pub(crate) source: Source,
    pub(crate) spans: Vec<SpanMap>,
}

/// Where the objects being kept stand: the file, its document and that document's spans.
struct Located<'a> {
    source: &'a Source,
    spans: &'a SpanMap,
    file: usize,
    doc: usize,
}

/// The snapshot: its files, the objects kept, and how many of each other kind were ignored.
#[derive(Debug, Default)]
pub(crate) struct LiveState {
    pub(crate) files: Vec<StateFile>,
    pub(crate) objects: Vec<LiveObject>,
    pub(crate) ignored: BTreeMap<String, usize>,
}

impl LiveState {
    /// A diagnostic placed at `pointer` inside object `o` (its value, else its key).
    pub(crate) fn at(&self, o: &LiveObject, d: Diagnostic, pointer: &str) -> Diagnostic {
        let file = &self.files[o.file];
        let spans = &file.spans[o.doc];
        let full = format!("{}{pointer}", o.base);
        let pos = if spans.has(&full) {
            spans.value_pos(&full)
        } else {
            spans.value_pos(&o.base)
        };
        d.at(&file.source, pos)
    }

    pub(crate) fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a LiveObject> {
        self.objects.iter().filter(move |o| o.kind == kind)
    }
}

/// Why a snapshot could not be read: I/O (exit 2) or invalid content (exit 1).
#[derive(Debug)]
pub(crate) enum ReadError {
    Io(String),
    Invalid(Vec<Diagnostic>),
}

/// Read a snapshot file, or every `.yaml`/`.yml`/`.json` file of a folder (in name order).
pub(crate) fn read(path: &str) -> Result<LiveState, ReadError> {
    let p = Path::new(path);
    let files: Vec<String> = if p.is_dir() {
        let mut names: Vec<String> = std::fs::read_dir(p)
            .map_err(|e| ReadError::Io(format!("cannot read folder {path}: {e}")))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|f| {
                f.is_file()
                    && f.extension()
                        .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
            })
            .map(|f| f.to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    } else {
        vec![path.to_owned()]
    };
    let mut texts = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).map_err(|e| ReadError::Io(format!("cannot read {f}: {e}")))?;
        texts.push((f.clone(), bytes));
    }
    parse(&texts).map_err(ReadError::Invalid)
}

/// Parse snapshot files already in memory (name, bytes).
pub(crate) fn parse(files: &[(String, Vec<u8>)]) -> Result<LiveState, Vec<Diagnostic>> {
    let mut state = LiveState::default();
    let mut errors = Vec::new();
    for (name, bytes) in files {
        let source = load::decode_state(name, bytes).map_err(|d| vec![d])?;
        let docs = load::parse_state_stream(&source)?;
        let file = state.files.len();
        let mut spans = Vec::with_capacity(docs.len());
        for (d, doc) in docs.into_iter().enumerate() {
            let Document { value, spans: at } = doc;
            // The objects are moved out of their document, not copied: a snapshot of 10,000
            // Workloads is 600,000 nodes. Diagnostics find their place through the spans.
            let Value::Object(mut root) = value else {
                errors.push(
                    Diagnostic::new(
                        &codes::MANIFEST_NOT_OBJECT,
                        "a YAML document of the live state is not a Kubernetes object (a mapping)",
                    )
                    .at(&source, at.value_pos(""))
                    .hint("give the output of `kubectl get ... -o yaml`"),
                );
                spans.push(at);
                continue;
            };
            let is_list = root.get("kind").and_then(Value::as_str) == Some("List")
                && root.get("apiVersion").and_then(Value::as_str) == Some("v1");
            let place = Located {
                source: &source,
                spans: &at,
                file,
                doc: d,
            };
            // A List's items are moved out, not copied; anything else is kept whole.
            let items = match root.get_mut("items") {
                Some(Value::Array(items)) if is_list => Some(std::mem::take(items)),
                _ => None,
            };
            match items {
                Some(items) => {
                    for (i, item) in items.into_iter().enumerate() {
                        keep(&mut state, &place, format!("/items/{i}"), item, &mut errors);
                    }
                }
                None => {
                    keep(
                        &mut state,
                        &place,
                        String::new(),
                        Value::Object(root),
                        &mut errors,
                    );
                }
            }
            spans.push(at);
        }
        state.files.push(StateFile { source, spans });
    }
    let mut seen = BTreeSet::new();
    for o in &state.objects {
        if !seen.insert(o.id()) {
            errors.push(
                state
                    .at(
                        o,
                        Diagnostic::new(
                            &codes::STATE_DUPLICATE,
                            format!("{} is already in the live state", o.id()),
                        ),
                        "/metadata/name",
                    )
                    .hint("give each object once: one snapshot, or files that do not overlap"),
            );
        }
    }
    if errors.is_empty() && state.objects.is_empty() {
        // A raykueue file given as the snapshot: say which option takes it.
        if let Some(d) = state.files.iter().find_map(|f| {
            crate::input::kind::not_kubernetes(&f.source, "a cluster snapshot", "--state")
        }) {
            return Err(vec![d]);
        }
        let mut d = Diagnostic::new(
            &codes::STATE_EMPTY,
            "the live state holds no Kueue ClusterQueue, LocalQueue, Cohort, ResourceFlavor, WorkloadPriorityClass or Workload",
        )
        .hint("take it with `kubectl get clusterqueues,localqueues,cohorts,resourceflavors,workloadpriorityclasses,workloads -A -o yaml`");
        if let Some(f) = state.files.first() {
            d = d.at(&f.source, f.source.pos_at(0));
        }
        errors.push(d);
    }
    if errors.is_empty() {
        Ok(state)
    } else {
        Err(errors)
    }
}

/// Keep one object when it is a Kueue kind raykueue reads, refuse it when it is such a kind in
/// another version, count it as ignored otherwise.
fn keep(
    state: &mut LiveState,
    at: &Located,
    base: String,
    value: Value,
    errors: &mut Vec<Diagnostic>,
) {
    let api = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind_name = value.get("kind").and_then(Value::as_str).unwrap_or("");
    let kueue = api.split('/').next() == Some("kueue.x-k8s.io");
    // A RayJob is read only for its run-time bound (`spec.activeDeadlineSeconds`), which the
    // forecast takes as the run time of the Workload the RayJob owns.
    let rayjob = api == RAYJOB_API && kind_name == "RayJob";
    let found = if rayjob {
        Some(&"RayJob")
    } else {
        KINDS.iter().find(|k| **k == kind_name).filter(|_| kueue)
    };
    let Some(&kind) = found else {
        let what = if api.is_empty() {
            kind_name.to_owned()
        } else {
            format!("{api} {kind_name}")
        };
        *state.ignored.entry(what).or_insert(0) += 1;
        return;
    };
    if api != KUEUE_API && !rayjob {
        errors.push(
            Diagnostic::new(
                &codes::STATE_VERSION,
                format!(
                    "{kind} `{}` is `{api}`; raykueue reads Kueue v0.19.2 objects as `{KUEUE_API}`",
                    value["metadata"]["name"].as_str().unwrap_or("<unnamed>")
                ),
            )
            .at(at.source, at.spans.value_pos(&format!("{base}/apiVersion")))
            .path(format!("{kind}: apiVersion"))
            .hint(format!(
                "take the snapshot from a Kueue v0.19 cluster, asking for the served version: `kubectl get {}.v1beta2.kueue.x-k8s.io -A -o yaml`",
                kind.to_lowercase() + "s"
            )),
        );
        return;
    }
    let meta = &value["metadata"];
    state.objects.push(LiveObject {
        kind,
        namespace: meta["namespace"].as_str().map(str::to_owned),
        name: meta["name"].as_str().unwrap_or("").to_owned(),
        value,
        file: at.file,
        doc: at.doc,
        base,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(text: &str) -> Result<LiveState, Vec<Diagnostic>> {
        parse(&[("state.yaml".to_owned(), text.as_bytes().to_vec())])
    }

    #[test]
    fn a_list_and_a_stream_give_the_same_objects_and_others_are_ignored() {
        let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta2\n  kind: ResourceFlavor\n  metadata: {name: default}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: ray}\n";
        let stream = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ray}\n";
        for text in [list, stream] {
            let s = parse_text(text).unwrap();
            assert_eq!(s.objects.len(), 1);
            assert_eq!(s.objects[0].id(), "ResourceFlavor/default");
            assert_eq!(s.ignored.get("v1 Pod"), Some(&1));
        }
    }

    #[test]
    fn another_kueue_version_is_refused_at_its_api_version() {
        let e = parse_text(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta1\n  kind: ClusterQueue\n  metadata: {name: cq}\n",
        )
        .unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].code, codes::STATE_VERSION.id);
        assert!(e[0].message.contains("v1beta1"), "{}", e[0].message);
    }

    #[test]
    fn duplicates_and_empty_snapshots_are_refused() {
        let one = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c}\n";
        let e = parse_text(&format!("{one}---\n{one}")).unwrap_err();
        assert_eq!(e[0].code, codes::STATE_DUPLICATE.id);
        let e = parse_text("apiVersion: v1\nkind: List\nitems: []\n").unwrap_err();
        assert_eq!(e[0].code, codes::STATE_EMPTY.id);
    }
}
