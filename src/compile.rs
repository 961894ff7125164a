//! The pipeline, each stage entered once: resolve → load (positions, overlays) → schema check →
//! script files → checks → model → validate the objects (once, on their data) → write (YAML,
//! templates) → the bundle. Nothing is written to disk here; `output::emit` decides where the
//! bundle goes.
//!
//! Three ways through it, one per kind of run: `compile` (the bundle, for `gen --out` and
//! `--check`), `stream` (the objects `gen` prints: every object validated as for the tree, only
//! the printed ones written, no scripts or summary rendered) and `diagnostics` (`check`: every
//! object validated, nothing written, no text rendered — unless an object fails, when the
//! objects are written in memory to place each finding at its file and line).

use crate::base::diagnostic::{self, Diagnostic};
use crate::checks;
use crate::input::load::{self, Loaded};
use crate::input::resolve::Resolved;
use crate::input::scripts::{self, ScriptFiles};
use crate::input::{deprecated, overlay, schema};
use crate::model::{self, Objects};
use crate::output::bundle::{self, Bundle};
use crate::output::{render, validate};
use crate::profile::Profile;
use crate::simulate::standard::Unreclaimable;

/// A compiled profile: the bundle plus the warnings found on the way.
#[derive(Debug)]
pub struct Compiled {
    pub profile: Profile,
    pub warnings: Vec<Diagnostic>,
    pub bundle: Bundle,
}

/// A profile the input stages read and the checks passed, with what the later stages reuse.
pub(crate) struct Admitted {
    pub(crate) profile: Profile,
    pub(crate) warnings: Vec<Diagnostic>,
    pub(crate) scripts: ScriptFiles,
    pub(crate) unreclaimable: Vec<Unreclaimable>,
}

/// Load, schema-check and rule-check a profile. Returns the profile and every diagnostic
/// (warnings included); the profile is `None` when the input could not be typed at all.
pub fn check_profile(resolved: &Resolved) -> (Option<(Loaded, Profile)>, Vec<Diagnostic>) {
    match checked(resolved) {
        Ok((loaded, profile, _, checked)) => (Some((loaded, profile)), checked.diagnostics),
        Err(d) => (None, d),
    }
}

/// The input stages and the checks.
fn checked(
    resolved: &Resolved,
) -> Result<(Loaded, Profile, ScriptFiles, checks::Checked), Vec<Diagnostic>> {
    let tree = load::parse_tree(&resolved.source)
        .and_then(|tree| overlay::expand(tree, resolved.base_dir.as_deref()))?;
    let loaded = load::flatten(tree);
    let profile = schema::typed(&loaded)?;
    let scripts = scripts::read_all(&profile, resolved.base_dir.as_deref());
    let mut checked = checks::run(&profile, &loaded, &scripts);
    checked.diagnostics.extend(deprecated::report(&loaded));
    diagnostic::normalize(&mut checked.diagnostics);
    Ok((loaded, profile, scripts, checked))
}

/// The profile when nothing the checks found stops the pipeline (errors, and with
/// `deny_warnings` warnings), with the warnings; else every diagnostic.
fn admitted(resolved: &Resolved, deny_warnings: bool) -> Result<Admitted, Vec<Diagnostic>> {
    // The loaded document and its span map are for diagnostics about the profile, all
    // reported by now: dropped here, before the bundle is built.
    let (_, profile, scripts, checked) = checked(resolved)?;
    let blocking = checked
        .diagnostics
        .iter()
        .any(|d| d.is_error() || deny_warnings);
    if blocking {
        return Err(checked.diagnostics);
    }
    Ok(Admitted {
        profile,
        warnings: checked.diagnostics,
        scripts,
        unreclaimable: checked.unreclaimable,
    })
}

/// `admitted`, keeping the loaded profile (its positions) for diagnostics about the live
/// state measured against it (`live::drift`).
pub(crate) fn admitted_with_loaded(
    resolved: &Resolved,
    deny_warnings: bool,
) -> Result<(Admitted, Loaded), Vec<Diagnostic>> {
    let (loaded, profile, scripts, checked) = checked(resolved)?;
    if checked
        .diagnostics
        .iter()
        .any(|d| d.is_error() || deny_warnings)
    {
        return Err(checked.diagnostics);
    }
    Ok((
        Admitted {
            profile,
            warnings: checked.diagnostics,
            scripts,
            unreclaimable: checked.unreclaimable,
        },
        loaded,
    ))
}

/// The whole pipeline. Errors (and, with `deny_warnings`, warnings) stop it before the model
/// is built; an object that fails validation (a bug in raykueue) stops it with the object's
/// file and line.
pub fn compile(resolved: &Resolved, deny_warnings: bool) -> Result<Compiled, Vec<Diagnostic>> {
    build(admitted(resolved, deny_warnings)?)
}

/// The model, the text files and the bundle of an admitted profile.
pub(crate) fn build(a: Admitted) -> Result<Compiled, Vec<Diagnostic>> {
    let wide = crate::base::par::wide(a.profile.items());
    // The text reads the profile, not the objects: a large profile builds both at once.
    let (objects, texts) = crate::base::par::join(
        wide,
        || model::objects(&a.profile, &a.scripts),
        || -> Result<Vec<(String, String)>, Diagnostic> {
            model::texts(&a.profile, &a.unreclaimable)?
                .into_iter()
                .map(render::text)
                .collect()
        },
    );
    let objects = objects?;
    let texts = texts.map_err(|d| vec![d])?;
    let failed = validate::generated(objects.iter());
    let bundle = bundle::assemble(&a.profile, objects, texts)?;
    if !failed.is_empty() {
        return Err(validate::place(&bundle, failed));
    }
    Ok(Compiled {
        profile: a.profile,
        warnings: a.warnings,
        bundle,
    })
}

/// Every diagnostic `gen` would report, without writing anything: the profile's (load, schema,
/// checks) and its objects' (output validation). No text is rendered: templates fail only on a
/// raykueue bug, never on a profile.
pub fn diagnostics(resolved: &Resolved, deny_warnings: bool) -> Vec<Diagnostic> {
    let a = match admitted(resolved, deny_warnings) {
        Ok(a) => a,
        Err(d) => return d,
    };
    match validated_objects(&a) {
        Ok(_) => a.warnings,
        Err(d) => d,
    }
}

/// The objects of one part of the bundle as one stream, with the warnings: what `gen` prints
/// when it writes no tree. Every object is validated, as for the tree, so the stream fails
/// where the tree would; only the stream's objects are written.
pub fn stream(
    resolved: &Resolved,
    deny_warnings: bool,
    part: model::Part,
) -> Result<(String, Vec<Diagnostic>), Vec<Diagnostic>> {
    let a = admitted(resolved, deny_warnings)?;
    let objects = validated_objects(&a)?;
    let printed: Vec<model::Object> = objects
        .platform
        .into_iter()
        .chain(objects.workloads)
        .chain(objects.smoke)
        .chain(objects.gitops)
        .chain(objects.monitoring)
        .filter(|o| part.selects(&a.profile, &o.file))
        .collect();
    let written = bundle::write(printed)?;
    Ok((bundle::stream(&written), a.warnings))
}

/// The model's objects, each validated once; when one fails, the objects are written in
/// memory so that each finding names its file and line.
pub(crate) fn validated_objects(a: &Admitted) -> Result<Objects, Vec<Diagnostic>> {
    let objects = model::objects(&a.profile, &a.scripts)?;
    let failed = validate::generated(objects.iter());
    if failed.is_empty() {
        return Ok(objects);
    }
    let bundle = bundle::assemble(&a.profile, objects, Vec::new())?;
    Err(validate::place(&bundle, failed))
}

/// The bundle as written, without output validation: what the validation benchmark measures
/// validation against.
pub fn render(resolved: &Resolved) -> Result<Bundle, Vec<Diagnostic>> {
    let a = admitted(resolved, false)?;
    let objects = model::objects(&a.profile, &a.scripts)?;
    let texts = model::texts(&a.profile, &a.unreclaimable)
        .and_then(|t| t.into_iter().map(render::text).collect())
        .map_err(|d| vec![d])?;
    bundle::assemble(&a.profile, objects, texts)
}
