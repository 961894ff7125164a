//! The pipeline for a fleet (`kind: Fleet`): the fleet file and its members read
//! (`input::fleet`), the manager's queues derived where it has none and every member given its
//! part, each member checked as a profile and the fleet checked as a whole (`checks::fleet`),
//! then one bundle per member (`compile::build`) under `manager/` and `<worker>/`, plus the
//! fleet's own files: `fleet/connect.sh`, `fleet/verify.sh` and `SUMMARY.md`.

use crate::base::diagnostic::{self, Diagnostic};
use crate::checks;
use crate::compile::{self, Admitted, Compiled};
use crate::input::fleet::{FleetInput, MemberInput};
use crate::input::resolve::Resolved;
use crate::output::bundle::{self, Bundle};
use crate::output::render;
use crate::simulate::standard::Unreclaimable;

pub(crate) use crate::input::fleet::is_fleet;

/// A compiled fleet: the whole tree, and the warnings of every member and of the fleet.
#[derive(Debug)]
pub struct FleetCompiled {
    pub bundle: Bundle,
    pub warnings: Vec<Diagnostic>,
    /// Each member's bundle on its own (the manager first), for `--cluster`.
    pub members: Vec<(String, Compiled)>,
}

/// The fleet read, completed and checked: every member's own diagnostics and the fleet's.
struct Checked {
    input: FleetInput,
    /// Per member (in `input.members` order): its checks' verdict.
    unreclaimable: Vec<Vec<Unreclaimable>>,
    diagnostics: Vec<Diagnostic>,
}

fn checked(resolved: &Resolved) -> Result<Checked, Vec<Diagnostic>> {
    let mut input = crate::input::fleet::read(resolved)?;
    input.complete();
    let mut diagnostics = Vec::new();
    let mut unreclaimable = Vec::new();
    for m in &input.members {
        let c = checks::run(&m.profile, &m.loaded, &m.scripts);
        diagnostics.extend(c.diagnostics);
        unreclaimable.push(c.unreclaimable);
    }
    let views: Vec<checks::fleet::Member<'_>> = input
        .members
        .iter()
        .map(|m| checks::fleet::Member {
            name: &m.name,
            pointer: &m.pointer,
            identity: &m.identity,
            loaded: &m.loaded,
            profile: &m.profile,
            scripts: &m.scripts,
        })
        .collect();
    diagnostics.extend(checks::fleet::run(&input.fleet, &input.loaded, &views));
    diagnostic::normalize(&mut diagnostics);
    Ok(Checked {
        input,
        unreclaimable,
        diagnostics,
    })
}

/// Every diagnostic of the fleet, as `check` reports them: each member's (load, schema, rules,
/// output validation) and the fleet's.
pub(crate) fn diagnostics(resolved: &Resolved, deny_warnings: bool) -> Vec<Diagnostic> {
    let c = match admitted(resolved, deny_warnings) {
        Ok(c) => c,
        Err(d) => return d,
    };
    let mut out = c.diagnostics;
    for (m, unreclaimable) in c.input.members.into_iter().zip(c.unreclaimable) {
        if let Err(d) = compile::validated_objects(&admit(m, unreclaimable)) {
            out.extend(d);
        }
    }
    out
}

/// The fleet when nothing blocks it (errors, or warnings with `deny_warnings`).
fn admitted(resolved: &Resolved, deny_warnings: bool) -> Result<Checked, Vec<Diagnostic>> {
    let c = checked(resolved)?;
    if c.diagnostics.iter().any(|d| d.is_error() || deny_warnings) {
        return Err(c.diagnostics);
    }
    Ok(c)
}

fn admit(m: MemberInput, unreclaimable: Vec<Unreclaimable>) -> Admitted {
    Admitted {
        profile: m.profile,
        warnings: Vec::new(),
        scripts: m.scripts,
        unreclaimable,
    }
}

/// The whole fleet: each member's bundle under its folder, and the fleet's files.
pub fn compile(resolved: &Resolved, deny_warnings: bool) -> Result<FleetCompiled, Vec<Diagnostic>> {
    let c = admitted(resolved, deny_warnings)?;
    let fleet = c.input.fleet.clone();
    let mut members = Vec::new();
    for (m, unreclaimable) in c.input.members.into_iter().zip(c.unreclaimable) {
        let name = m.name.clone();
        members.push((name, compile::build(admit(m, unreclaimable))?));
    }
    let mut tree = Bundle::default();
    for (name, compiled) in &members {
        // `manager/` and each worker's name: the fleet checks keep them apart (RK701).
        let dir = name;
        for (path, text) in &compiled.bundle.files {
            tree.files.insert(format!("{dir}/{path}"), text.clone());
        }
        for w in &compiled.bundle.objects {
            let mut w = w.clone();
            w.object.file = format!("{dir}/{}", w.object.file);
            tree.objects.push(w);
        }
    }
    let profiles: Vec<(&str, &crate::profile::Profile)> = members
        .iter()
        .map(|(n, c)| (n.as_str(), &c.profile))
        .collect();
    for text in crate::model::fleet::texts(&fleet, &profiles) {
        let (path, text) = render::text(text).map_err(|d| vec![d])?;
        tree.files.insert(path, text);
    }
    Ok(FleetCompiled {
        bundle: tree,
        warnings: c.diagnostics,
        members,
    })
}

/// Why `gen --cluster` printed nothing.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The fleet names no such member; these are its members.
    NoMember(Vec<String>),
    Invalid(Vec<Diagnostic>),
}

/// One member's objects of `part`, as `gen --cluster NAME [--only PART]` prints them; every
/// member is compiled, so the stream fails where the tree would.
pub(crate) fn stream(
    resolved: &Resolved,
    deny_warnings: bool,
    cluster: &str,
    part: crate::model::Part,
) -> Result<(String, Vec<Diagnostic>), StreamError> {
    let compiled = compile(resolved, deny_warnings).map_err(StreamError::Invalid)?;
    let Some((_, member)) = compiled.members.iter().find(|(n, _)| n == cluster) else {
        return Err(StreamError::NoMember(
            compiled.members.iter().map(|(n, _)| n.clone()).collect(),
        ));
    };
    let printed: Vec<_> = member
        .bundle
        .objects
        .iter()
        .filter(|w| part.selects(&member.profile, &w.object.file))
        .cloned()
        .collect();
    Ok((bundle::stream(&printed), compiled.warnings))
}

/// A fleet and its members by name, the manager first.
pub(crate) type Members = (
    crate::profile::fleet::Fleet,
    Vec<(String, crate::profile::Profile)>,
);

/// The fleet and its members, typed, completed and checked, for `simulate`: any error stops
/// it (warnings are `check`'s business).
pub(crate) fn typed(resolved: &Resolved) -> Result<Members, Vec<Diagnostic>> {
    let c = checked(resolved)?;
    let errors: Vec<Diagnostic> = c
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok((
        c.input.fleet,
        c.input
            .members
            .into_iter()
            .map(|m| (m.name, m.profile))
            .collect(),
    ))
}
