//! The generated output in memory: the files of the bundle tree and the platform stream.

use crate::diagnostic::Diagnostic;
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
    /// Write objects as YAML, once each; their files are filled by `add_object_files`.
    pub fn render_objects(objects: Vec<Object>) -> Result<Vec<Rendered>, Vec<Diagnostic>> {
        let mut out = Vec::with_capacity(objects.len());
        let mut errors = Vec::new();
        for mut object in objects {
            // The data moves out of the object: nothing reads it there again, and a large
            // profile has thousands.
            let value = std::mem::take(&mut object.value);
            match crate::yaml::to_yaml(&value) {
                Ok(yaml) => out.push(Rendered {
                    object,
                    value,
                    yaml,
                }),
                Err(d) => errors.push(d),
            }
        }
        if errors.is_empty() {
            Ok(out)
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
        let text = crate::yaml::to_yaml(&serde_json::json!({
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

    /// The multi-document stream of the objects whose file starts with `prefix`, in apply order.
    pub fn stream(&self, prefix: &str) -> String {
        let mut out = String::new();
        for r in self
            .objects
            .iter()
            .filter(|r| r.object.file.starts_with(prefix))
        {
            out.push_str("---\n");
            out.push_str(&r.yaml);
        }
        out
    }
}
