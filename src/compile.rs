//! The pipeline in one place: resolve → load → schema check → rules → model → render.
//! Nothing is written here; `emit` decides where the bundle goes.

use crate::bundle::Bundle;
use crate::diagnostic::{self, Diagnostic};
use crate::load::{self, Loaded};
use crate::model;
use crate::profile::Profile;
use crate::resolve::Resolved;
use crate::{overlay, rules, schema_check};
use std::path::Path;

/// A compiled profile: the bundle plus the warnings found on the way.
#[derive(Debug)]
pub struct Compiled {
    pub profile: Profile,
    pub warnings: Vec<Diagnostic>,
    pub bundle: Bundle,
}

/// Load, schema-check and rule-check a profile. Returns the profile and every diagnostic
/// (warnings included); the profile is `None` when the input could not be typed at all.
pub fn check(resolved: &Resolved) -> (Option<(Loaded, Profile)>, Vec<Diagnostic>) {
    let loaded = match load::parse_tree(&resolved.source)
        .and_then(|tree| overlay::expand(tree, resolved.base_dir.as_deref()))
    {
        Ok(tree) => load::flatten(tree),
        Err(d) => return (None, d),
    };
    let profile = match schema_check::check(&loaded) {
        Ok(p) => p,
        Err(d) => return (None, d),
    };
    let mut diags = rules::check(&profile, &loaded, resolved.base_dir.as_deref());
    diagnostic::normalize(&mut diags);
    (Some((loaded, profile)), diags)
}

/// The whole pipeline. Errors (and, with `deny_warnings`, warnings) stop it before rendering.
pub fn compile(resolved: &Resolved, deny_warnings: bool) -> Result<Compiled, Vec<Diagnostic>> {
    let (typed, diags) = check(resolved);
    let blocking = diags.iter().any(|d| d.is_error() || deny_warnings);
    let Some((_loaded, profile)) = typed else {
        return Err(diags);
    };
    if blocking {
        return Err(diags);
    }
    let bundle = build(&profile, resolved.base_dir.as_deref())?;
    Ok(Compiled {
        profile,
        warnings: diags,
        bundle,
    })
}

/// Render the bundle and validate every object in it against its upstream schema: output
/// that the API server would reject or prune never leaves the tool (RK9xx, a raykueue bug).
fn build(profile: &Profile, base_dir: Option<&Path>) -> Result<Bundle, Vec<Diagnostic>> {
    let bundle = render(profile, base_dir)?;
    let invalid = crate::validate::bundle(&bundle);
    if invalid.is_empty() {
        Ok(bundle)
    } else {
        Err(invalid)
    }
}

/// The bundle as rendered, before output validation (`build` is the pipeline's way in; this
/// is public for the benchmark that measures what validation costs).
pub fn render(profile: &Profile, base_dir: Option<&Path>) -> Result<Bundle, Vec<Diagnostic>> {
    let mut bundle = Bundle::default();
    let header = crate::yaml::HEADER;
    let platform = Bundle::render_objects(model::platform_objects(profile))?;
    bundle.add_object_files(platform, header);
    bundle.add_kustomization("platform", &bundle.files_in("platform"), header)?;
    let summary = crate::render::render_text("SUMMARY.md.j2", &model::summary_context(profile))
        .map_err(|d| vec![d])?;
    bundle.files.insert("SUMMARY.md".into(), summary);
    model::workloads::add_to_bundle(&mut bundle, profile, base_dir, header)?;
    bundle
        .files
        .extend(model::infra_files(profile).map_err(|d| vec![d])?);
    let smoke = model::smoke::smoke_objects(profile).map_err(|d| vec![d])?;
    bundle.add_object_files(Bundle::render_objects(smoke)?, header);
    let gitops = model::gitops_objects(profile).map_err(|d| vec![d])?;
    if !gitops.is_empty() {
        bundle.add_object_files(Bundle::render_objects(gitops)?, header);
        for dir in ["gitops/argocd", "gitops/flux", "gitops/flux/operators"] {
            let files = bundle.files_in(dir);
            if !files.is_empty() {
                bundle.add_kustomization(dir, &files, header)?;
            }
        }
        // What both tools sync of the workloads: the long-running ones' folders.
        let synced: Vec<String> = model::gitops::synced_workloads(profile)
            .iter()
            .map(|w| format!("../../workloads/{}", w.name))
            .collect();
        if !synced.is_empty() {
            bundle.add_kustomization(model::gitops::GITOPS_WORKLOADS, &synced, header)?;
        }
    }
    Ok(bundle)
}
