//! The pipeline in one place: resolve → load → schema check → rules → model → render.
//! Nothing is written here; `emit` decides where the bundle goes.

use crate::base::diagnostic::{self, Diagnostic};
use crate::input::load::{self, Loaded};
use crate::input::resolve::Resolved;
use crate::model::{self, Object};
use crate::output::bundle::Bundle;
use crate::profile::Profile;
use crate::{checks as rules, input::overlay, input::schema as schema_check};
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
    let (profile, diags) = admitted(resolved, deny_warnings)?;
    let bundle = build(&profile, resolved.base_dir.as_deref())?;
    Ok(Compiled {
        profile,
        warnings: diags,
        bundle,
    })
}

/// Every diagnostic `gen` would report, without writing anything: the profile's (load, schema,
/// rules) and its objects' (output validation). The text writers (YAML, scripts, the summary)
/// are skipped: they fail only on a raykueue bug, never on a profile. When an object fails
/// validation, the bundle is written after all, so the diagnostic names its file and line.
pub fn diagnostics(resolved: &Resolved, deny_warnings: bool) -> Vec<Diagnostic> {
    let (profile, diags) = match admitted(resolved, deny_warnings) {
        Ok(p) => p,
        Err(d) => return d,
    };
    // Each object is dropped where it was validated: at 1,000 teams, freeing them all on
    // one thread afterwards took 10 ms.
    match validated(&profile, resolved.base_dir.as_deref(), drop) {
        Ok(_) => diags,
        Err(d) => d,
    }
}

/// The objects under `prefix` (`platform/`, `workloads/`) as one stream, with the warnings:
/// what `gen` prints when it writes no tree. Every object is validated, as for the tree, so
/// the stream fails where the tree would; only the stream's objects are written, and the
/// scripts and summary, which are not in it, are not rendered.
pub fn stream(
    resolved: &Resolved,
    deny_warnings: bool,
    prefix: &str,
) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (profile, diags) = admitted(resolved, deny_warnings)?;
    let written = validated(&profile, resolved.base_dir.as_deref(), |o| {
        o.file
            .starts_with(prefix)
            .then(|| crate::base::yaml::to_yaml(&o.value))
    })?;
    let mut out = String::new();
    for yaml in written.into_iter().flatten() {
        out.push_str("---\n");
        out.push_str(&yaml.map_err(|d| vec![d])?);
    }
    Ok((out, diags))
}

/// Every object of the bundle validated against its upstream schema, without writing it, and
/// then handed to `then`; its results in apply order. When an object fails, the bundle is
/// written after all, so each finding names its file and line.
fn validated<R: Send>(
    profile: &Profile,
    base_dir: Option<&Path>,
    then: impl Fn(Object) -> R + Sync + Send,
) -> Result<Vec<R>, Vec<Diagnostic>> {
    let all = objects(profile, base_dir)?.into_all();
    let done = crate::base::par::map(crate::base::par::wide(all.len()), all, |o| {
        (crate::output::validate::passes(&o), then(o))
    });
    if done.iter().all(|(ok, _)| *ok) {
        return Ok(done.into_iter().map(|(_, r)| r).collect());
    }
    match build(profile, base_dir) {
        Err(d) => Err(d),
        // The written bundle passes where the data did not: the two validations disagree (a
        // raykueue bug). Its objects go on, as `gen --out` would write them.
        Ok(bundle) => Ok(bundle
            .objects
            .into_iter()
            .map(|r| {
                then(Object {
                    value: r.value,
                    ..r.object
                })
            })
            .collect()),
    }
}

/// The profile when nothing the profile's own checks found stops the pipeline (errors, and
/// with `deny_warnings` warnings), with the warnings; else every diagnostic.
fn admitted(
    resolved: &Resolved,
    deny_warnings: bool,
) -> Result<(Profile, Vec<Diagnostic>), Vec<Diagnostic>> {
    let (typed, diags) = check(resolved);
    let blocking = diags.iter().any(|d| d.is_error() || deny_warnings);
    match typed {
        // The loaded document and its span map are for diagnostics about the profile, all
        // reported by now: dropped here, before the bundle is built.
        Some((_, profile)) if !blocking => Ok((profile, diags)),
        _ => Err(diags),
    }
}

/// The bundle's objects as data, each part in apply order.
#[derive(Debug, Default)]
pub struct Objects {
    pub platform: Vec<Object>,
    pub workloads: Vec<Object>,
    pub smoke: Vec<Object>,
    pub gitops: Vec<Object>,
}

impl Objects {
    /// Every object, in apply order.
    fn into_all(self) -> Vec<Object> {
        [self.platform, self.workloads, self.smoke, self.gitops]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// The model stage: every object of the bundle, built as data and not yet written.
pub fn objects(profile: &Profile, base_dir: Option<&Path>) -> Result<Objects, Vec<Diagnostic>> {
    let (platform, workloads) = crate::base::par::join(
        crate::base::par::wide(profile.items()),
        || model::platform_objects(profile),
        || model::workload_objects(profile, base_dir),
    );
    Ok(Objects {
        platform,
        workloads: workloads?,
        smoke: model::smoke::smoke_objects(profile).map_err(|d| vec![d])?,
        gitops: model::gitops_objects(profile).map_err(|d| vec![d])?,
    })
}

/// Render the bundle and validate every object in it against its upstream schema: output
/// that the API server would reject or prune never leaves the tool (RK9xx, a raykueue bug).
fn build(profile: &Profile, base_dir: Option<&Path>) -> Result<Bundle, Vec<Diagnostic>> {
    match assemble(profile, base_dir, true)? {
        (bundle, true) => Ok(bundle),
        // Some object fails: the written bundle places each finding in its file.
        (bundle, false) => Err(crate::output::validate::bundle(&bundle)),
    }
}

/// The bundle as rendered, before output validation (`build` is the pipeline's way in; this
/// is public for the benchmark that measures what validation costs).
pub fn render(profile: &Profile, base_dir: Option<&Path>) -> Result<Bundle, Vec<Diagnostic>> {
    assemble(profile, base_dir, false).map(|(bundle, _)| bundle)
}

/// The one place the bundle is assembled: objects written into their files (and, with
/// `validate`, validated as they are written), kustomizations, summary, scripts. For a large
/// profile the text that is not objects (the summary, with its simulated queue behaviour, and
/// the scripts) is rendered on the other core while the objects are built and written. The
/// second value: whether every object passed.
fn assemble(
    profile: &Profile,
    base_dir: Option<&Path>,
    validate: bool,
) -> Result<(Bundle, bool), Vec<Diagnostic>> {
    let write = |objects| Bundle::render_objects(objects, validate);
    // The text reads the profile, not the objects: a large profile builds both at once.
    let wide = crate::base::par::wide(profile.items());
    let (text, written) = crate::base::par::join(
        wide,
        || {
            crate::base::par::join(
                wide,
                || {
                    crate::output::render::render_text(
                        "SUMMARY.md.j2",
                        &model::summary_context(profile),
                    )
                },
                || model::infra_files(profile),
            )
        },
        || -> Result<_, Vec<Diagnostic>> {
            let objects = objects(profile, base_dir)?;
            Ok([
                write(objects.platform),
                write(objects.workloads),
                write(objects.smoke),
                write(objects.gitops),
            ])
        },
    );
    // The precedence one thread would give: the objects' errors (the profile's), then the
    // text's, then the writer's.
    let [platform, workloads, smoke, gitops] = written?;
    let (summary, infra) = (text.0.map_err(|d| vec![d])?, text.1.map_err(|d| vec![d])?);
    let [(platform, p1), (workloads, p2), (smoke, p3), (gitops, p4)] =
        [platform?, workloads?, smoke?, gitops?];
    let mut bundle = Bundle::default();
    let header = crate::base::yaml::HEADER;
    bundle.add_object_files(platform, header);
    bundle.add_kustomization("platform", &bundle.files_in("platform"), header)?;
    bundle.files.insert("SUMMARY.md".into(), summary);
    bundle.add_workloads(workloads, header)?;
    bundle.files.extend(infra);
    bundle.add_object_files(smoke, header);
    if !gitops.is_empty() {
        bundle.add_object_files(gitops, header);
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
    Ok((bundle, p1 && p2 && p3 && p4))
}
