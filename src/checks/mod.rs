//! Stage 6 (`lib.rs`): domain rules over the whole profile — what Kueue, KubeRay and the cloud
//! would reject or leave pending forever. Each rule has a stable code (defined in `base::codes`,
//! listed in `docs/rules.md`), a severity, and reports at the profile line it is about.

mod admissible;
mod clouds;
mod cohorts;
mod cq_limits;
mod entrypoints;
pub(crate) mod fleet;
mod nodes;
mod operators;
mod provisioning;
mod queues;
mod ray;
mod reclaim;
mod topology;
mod workloads;

use crate::base::codes::Code;
use crate::base::diagnostic::{Diagnostic, Finding, Findings, did_you_mean};
use crate::base::pointer::{Pointer, field_path};
use crate::input::load::Loaded;
use crate::input::scripts::ScriptFiles;
use crate::profile::Profile;
use crate::simulate::standard::Unreclaimable;

/// What a rule sees, and where it reports.
pub(crate) struct Ctx<'a> {
    pub(crate) profile: &'a Profile,
    /// The workloads' script files, as the input read them.
    pub(crate) scripts: &'a ScriptFiles,
    out: Findings,
    /// The standard scenarios' finding (RK146), handed on to the summary.
    unreclaimable: Vec<Unreclaimable>,
}

impl Ctx<'_> {
    /// Report a finding of `code` at the profile node `pointer` (a JSON pointer).
    pub(crate) fn report(
        &mut self,
        code: &'static Code,
        pointer: &Pointer,
        message: String,
        hint: Option<String>,
    ) {
        self.out.report(code, pointer, message, hint);
    }

    /// Report a name that names nothing, with a did-you-mean from the names that exist.
    pub(crate) fn unknown_name<'n>(
        &mut self,
        info: &'static Code,
        pointer: &Pointer,
        what: &str,
        name: &str,
        known: impl IntoIterator<Item = &'n str> + Clone,
    ) {
        let hint = if let Some(s) = did_you_mean(name, known.clone()) {
            format!("did you mean `{s}`?")
        } else {
            let all: Vec<&str> = known.into_iter().collect();
            if all.is_empty() {
                format!("the profile defines no {what}")
            } else {
                format!("defined: {}", all.join(", "))
            }
        };
        self.report(
            info,
            pointer,
            format!("`{name}` names no {what}"),
            Some(hint),
        );
    }
}

type Check = fn(&mut Ctx<'_>);

/// Every rule group, in reporting order.
const CHECKS: &[Check] = &[
    queues::run,
    cohorts::run,
    cq_limits::run,
    admissible::run,
    reclaim::run,
    nodes::run,
    topology::run,
    provisioning::run,
    workloads::run,
    entrypoints::run,
    ray::run,
    operators::run,
    clouds::run,
];

/// The checks' verdict on a profile: every diagnostic, placed at its line, and what the model
/// reuses instead of computing it again.
#[derive(Debug, Default)]
pub(crate) struct Checked {
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// The queued workloads that cannot reclaim their queue's quota (RK146): the summary's
    /// "Queue behaviour" says the same.
    pub(crate) unreclaimable: Vec<Unreclaimable>,
}

/// Run every rule over the profile and place each finding at its line. The groups read the
/// profile and nothing of each other's, so a large profile's run on all cores; their findings
/// are joined in `CHECKS` order.
pub(crate) fn run(profile: &Profile, loaded: &Loaded, scripts: &ScriptFiles) -> Checked {
    let (findings, unreclaimable) = findings(profile, scripts);
    Checked {
        diagnostics: findings.into_iter().map(|f| place(loaded, f)).collect(),
        unreclaimable,
    }
}

/// Every rule's findings, by JSON pointer, not yet placed.
fn findings(profile: &Profile, scripts: &ScriptFiles) -> (Vec<Finding>, Vec<Unreclaimable>) {
    let groups = crate::base::par::map(crate::base::par::wide(profile.items()), CHECKS, |c| {
        let mut ctx = Ctx {
            profile,
            scripts,
            out: Findings::default(),
            unreclaimable: Vec::new(),
        };
        c(&mut ctx);
        (ctx.out.into_vec(), ctx.unreclaimable)
    });
    let mut all = Vec::new();
    let mut unreclaimable = Vec::new();
    for (f, u) in groups {
        all.extend(f);
        unreclaimable.extend(u);
    }
    (all, unreclaimable)
}

/// A finding placed at its line in `loaded`, with its field path and hint.
pub(crate) fn place(loaded: &Loaded, f: Finding) -> Diagnostic {
    let mut d = loaded
        .at_value(Diagnostic::new(f.code, f.message), &f.pointer)
        .path(field_path(&f.pointer));
    if let Some(h) = f.hint {
        d = d.hint(h);
    }
    d
}
