//! The bundle in memory: every object written once as YAML into its file, the kustomizations
//! that list them, and the text files. The one place the tree is put together; writing it to
//! disk or comparing it with one is `emit`'s.

use crate::base::diagnostic::Diagnostic;
use crate::base::yaml;
use crate::model::{Object, Objects, gitops};
use crate::profile::Profile;
use std::collections::{BTreeMap, BTreeSet};

/// An object as written: what it is, where it goes, its data and its YAML.
#[derive(Debug, Clone)]
pub struct Written {
    pub object: Object,
    pub yaml: String,
}

/// Everything `gen --out` produces for one profile.
#[derive(Debug, Default, Clone)]
pub struct Bundle {
    /// Relative path (always `/`-separated) → content. Sorted, so iteration is deterministic.
    pub files: BTreeMap<String, String>,
    /// Objects as written, in apply order.
    pub objects: Vec<Written>,
}

/// Write objects as YAML, once each (on all cores when there are many). The data stays with
/// each object: the semantic diff and the tests read it.
pub(crate) fn write(objects: Vec<Object>) -> Result<Vec<Written>, Vec<Diagnostic>> {
    let yaml = crate::base::par::map(crate::base::par::wide(objects.len()), &objects, |o| {
        yaml::to_yaml(&o.value)
    });
    let mut out = Vec::with_capacity(objects.len());
    let mut errors = Vec::new();
    for (object, yaml) in objects.into_iter().zip(yaml) {
        match yaml {
            Ok(yaml) => out.push(Written { object, yaml }),
            Err(d) => errors.push(d),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The objects of `stream` as one multi-document YAML stream (what `gen` prints).
pub(crate) fn stream(written: &[Written]) -> String {
    let mut out = String::new();
    for w in written {
        out.push_str("---\n");
        out.push_str(&w.yaml);
    }
    out
}

/// The bundle of a profile: its objects, written, grouped into their files with
/// kustomizations, and its text files, rendered.
pub(crate) fn assemble(
    profile: &Profile,
    objects: Objects,
    texts: Vec<(String, String)>,
) -> Result<Bundle, Vec<Diagnostic>> {
    let header = yaml::HEADER;
    let Objects {
        platform,
        workloads,
        smoke,
        gitops,
        monitoring,
    } = objects;
    let wide = crate::base::par::wide(profile.items());
    let (platform, rest) = crate::base::par::join(
        wide,
        || write(platform),
        || (write(workloads), write(smoke), write(gitops)),
    );
    let (workloads, smoke, gitops) = rest;
    let monitoring = write(monitoring)?;
    let mut bundle = Bundle::default();
    bundle.add_object_files(platform?, header);
    bundle.add_kustomization("platform", &bundle.files_in("platform"), header)?;
    bundle.add_workloads(workloads?, header)?;
    bundle.files.extend(texts);
    bundle.add_object_files(smoke?, header);
    let gitops = gitops?;
    if !gitops.is_empty() {
        bundle.add_object_files(gitops, header);
        for dir in ["gitops/argocd", "gitops/flux", "gitops/flux/operators"] {
            let files = bundle.files_in(dir);
            if !files.is_empty() {
                bundle.add_kustomization(dir, &files, header)?;
            }
        }
        // What both tools sync of the workloads: the long-running ones' folders.
        let synced: Vec<String> = gitops::synced_workloads(profile)
            .iter()
            .map(|w| format!("../../workloads/{}", w.name))
            .collect();
        if !synced.is_empty() {
            bundle.add_kustomization(gitops::GITOPS_WORKLOADS, &synced, header)?;
        }
    }
    if !monitoring.is_empty() {
        // The folder's object files, by name, then `dashboards/`'s: not the files in it that a
        // cloud's CLI reads (a managed collector's rules or scrape configuration).
        let mut files: BTreeSet<String> = monitoring
            .iter()
            .filter_map(|w| {
                w.object
                    .file
                    .strip_prefix(crate::model::monitoring::DIR)
                    .and_then(|f| f.strip_prefix('/'))
                    .map(str::to_owned)
            })
            .collect();
        let (top, nested): (Vec<String>, Vec<String>) = std::mem::take(&mut files)
            .into_iter()
            .partition(|f| !f.contains('/'));
        let resources: Vec<String> = top.into_iter().chain(nested).collect();
        bundle.add_object_files(monitoring, header);
        bundle.add_kustomization(crate::model::monitoring::DIR, &resources, header)?;
    }
    Ok(bundle)
}

impl Bundle {
    /// Group written objects into their files, each with a header, documents in order.
    pub(crate) fn add_object_files(&mut self, written: Vec<Written>, header: &str) {
        let mut order: Vec<String> = Vec::new();
        let mut docs: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for r in &written {
            if !docs.contains_key(&r.object.file) {
                order.push(r.object.file.clone());
            }
            docs.entry(r.object.file.clone()).or_default().push(&r.yaml);
        }
        for file in order {
            let mut text = String::from(header);
            for doc in &docs[&file] {
                text.push_str("---\n");
                text.push_str(doc);
            }
            self.files.insert(file, text);
        }
        self.objects.extend(written);
    }

    /// Add `<dir>/kustomization.yaml` listing `resources` (paths relative to `dir`) in order:
    /// `kubectl apply -k`, Argo CD and Flux directory sources read it.
    pub(crate) fn add_kustomization(
        &mut self,
        dir: &str,
        resources: &[String],
        header: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        // `sortOptions: fifo` keeps the files' apply order (flavors before queues) in what
        // `kubectl kustomize` prints, instead of kustomize's own kind order.
        let text = yaml::to_yaml(&serde_json::json!({
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "sortOptions": { "order": "fifo" },
            "resources": resources,
        }))
        .map_err(|d| vec![d])?;
        self.files.insert(
            format!("{dir}/kustomization.yaml"),
            format!("{header}{text}"),
        );
        Ok(())
    }

    /// The workloads' objects in `workloads/<name>/` per workload, each folder with a
    /// kustomization listing its files in apply order (`kubectl apply -k workloads/<name>`
    /// submits one), and `workloads/kustomization.yaml` listing the folders (`kubectl apply -k
    /// workloads` submits all). Nothing when there are no workloads.
    pub(crate) fn add_workloads(
        &mut self,
        written: Vec<Written>,
        header: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        if written.is_empty() {
            return Ok(());
        }
        let mut folders: Vec<(String, Vec<String>)> = Vec::new();
        for r in &written {
            let Some((folder, file)) = r.object.file.rsplit_once('/') else {
                continue;
            };
            match folders.last_mut() {
                Some((f, files)) if f == folder => {
                    if !files.iter().any(|x| x == file) {
                        files.push(file.to_owned());
                    }
                }
                _ => folders.push((folder.to_owned(), vec![file.to_owned()])),
            }
        }
        self.add_object_files(written, header);
        let mut names = Vec::new();
        for (folder, files) in &folders {
            self.add_kustomization(folder, files, header)?;
            names.push(folder.trim_start_matches("workloads/").to_owned());
        }
        self.add_kustomization("workloads", &names, header)
    }

    /// The files directly in `dir` (not in sub-folders), relative to it, sorted.
    pub(crate) fn files_in(&self, dir: &str) -> Vec<String> {
        let prefix = format!("{dir}/");
        self.files
            .keys()
            .filter_map(|f| f.strip_prefix(&prefix))
            .filter(|f| !f.contains('/') && *f != "kustomization.yaml")
            .map(str::to_owned)
            .collect()
    }
}
