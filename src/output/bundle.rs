//! The generated output in memory: the files of the bundle tree and the platform stream.

use crate::base::diagnostic::Diagnostic;
use crate::model::Object;
use serde_json::Value;
use std::collections::BTreeMap;

/// A rendered object: what it is, where it goes, and its data (for output validation).
#[derive(Debug, Clone)]
pub struct Rendered {
    pub object: Object,
    pub value: Value,
    pub yaml: String,
}

/// Everything `gen` produces for one profile.
#[derive(Debug, Default, Clone)]
pub struct Bundle {
    /// Relative path (always `/`-separated) → content. Sorted, so iteration is deterministic.
    pub files: BTreeMap<String, String>,
    /// Rendered objects in apply order.
    pub objects: Vec<Rendered>,
}

impl Bundle {
    /// Write objects as YAML, once each (on all cores when there are many); their files are
    /// filled by `add_object_files`. With `validate`, each object is also checked against its schema on
    /// the way (`validate::passes`): the second value says whether all passed.
    pub fn render_objects(
        objects: Vec<Object>,
        validate: bool,
    ) -> Result<(Vec<Rendered>, bool), Vec<Diagnostic>> {
        let written = crate::base::par::map(crate::base::par::wide(objects.len()), &objects, |o| {
            let ok = !validate || crate::output::validate::passes(o);
            (crate::base::yaml::to_yaml(&o.value), ok)
        });
        let mut out = Vec::with_capacity(objects.len());
        let mut errors = Vec::new();
        let mut all_pass = true;
        for (mut object, (yaml, ok)) in objects.into_iter().zip(written) {
            all_pass &= ok;
            // The data moves out of the object: nothing reads it there again, and a large
            // profile has thousands.
            let value = std::mem::take(&mut object.value);
            match yaml {
                Ok(yaml) => out.push(Rendered {
                    object,
                    value,
                    yaml,
                }),
                Err(d) => errors.push(d),
            }
        }
        if errors.is_empty() {
            Ok((out, all_pass))
        } else {
            Err(errors)
        }
    }

    /// Group rendered objects into their files, each with a header, documents in order.
    pub fn add_object_files(&mut self, rendered: Vec<Rendered>, header: &str) {
        let mut order: Vec<String> = Vec::new();
        let mut docs: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for r in &rendered {
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
        self.objects.extend(rendered);
    }

    /// Add `<dir>/kustomization.yaml` listing `resources` (paths relative to `dir`) in order:
    /// `kubectl apply -k`, Argo CD and Flux directory sources read it.
    pub fn add_kustomization(
        &mut self,
        dir: &str,
        resources: &[String],
        header: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        // `sortOptions: fifo` keeps the files' apply order (flavors before queues) in what
        // `kubectl kustomize` prints, instead of kustomize's own kind order.
        let text = crate::base::yaml::to_yaml(&serde_json::json!({
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
    pub fn add_workloads(
        &mut self,
        rendered: Vec<Rendered>,
        header: &str,
    ) -> Result<(), Vec<Diagnostic>> {
        if rendered.is_empty() {
            return Ok(());
        }
        let mut folders: Vec<(String, Vec<String>)> = Vec::new();
        for r in &rendered {
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
        self.add_object_files(rendered, header);
        let mut names = Vec::new();
        for (folder, files) in &folders {
            self.add_kustomization(folder, files, header)?;
            names.push(folder.trim_start_matches("workloads/").to_owned());
        }
        self.add_kustomization("workloads", &names, header)
    }

    /// The files directly in `dir` (not in sub-folders), relative to it, sorted.
    pub fn files_in(&self, dir: &str) -> Vec<String> {
        let prefix = format!("{dir}/");
        self.files
            .keys()
            .filter_map(|f| f.strip_prefix(&prefix))
            .filter(|f| !f.contains('/') && *f != "kustomization.yaml")
            .map(str::to_owned)
            .collect()
    }
}
