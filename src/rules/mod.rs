//! Stage 3: domain rules over the whole profile — what Kueue, KubeRay and AKS would reject or
//! leave pending forever. Each rule has a stable code (listed in the README), a severity, and
//! reports at the profile line it is about.

mod admission;
mod alibaba;
mod aws;
mod azure;
mod cq_limits;
mod entrypoints;
mod gcp;
mod infra;
mod input;
pub mod kuberay;
mod nodes;
mod operators;
mod queues;
mod reclaim;
mod workloads;

/// Codes later stages report when they meet what a rule already refuses (a profile that
/// skipped `check`): the same code, defined once.
pub(crate) use workloads::{NO_IMAGE, NO_RAY_VERSION, SCRIPT_UNREADABLE};

use crate::diagnostic::{Diagnostic, Severity, did_you_mean};
use crate::load::Loaded;
use crate::pointer::field_path;
use crate::profile::Profile;
use std::path::Path;

/// The minor version of a Kubernetes version string (`"1.34"`, `"1.34.2"` → 34).
fn kubernetes_minor(v: &str) -> Option<u32> {
    v.strip_prefix("1.")?.split('.').next()?.parse().ok()
}

/// One rule's identity, for documentation and `--explain`-style listings.
#[derive(Debug, Clone, Copy)]
pub struct RuleInfo {
    pub code: &'static str,
    pub severity: Severity,
    pub title: &'static str,
}

/// What a rule sees, and how it reports.
pub struct Ctx<'a> {
    pub profile: &'a Profile,
    /// The profile's folder, where `scripts` are read from (`None` for shipped profiles).
    pub base_dir: Option<&'a Path>,
    loaded: &'a Loaded,
    out: Vec<Diagnostic>,
}

impl Ctx<'_> {
    /// Report `info`'s finding at the profile node `pointer` (a JSON pointer into the profile).
    pub fn report(
        &mut self,
        info: &RuleInfo,
        pointer: &str,
        message: String,
        hint: Option<String>,
    ) {
        let d = match info.severity {
            Severity::Error => Diagnostic::error(info.code, message),
            Severity::Warning => Diagnostic::warning(info.code, message),
        };
        let mut d = self.loaded.at_value(d, pointer).path(field_path(pointer));
        if let Some(h) = hint {
            d = d.hint(h);
        }
        self.out.push(d);
    }

    /// Report a name that names nothing, with a did-you-mean from the names that exist.
    pub fn unknown_name<'n>(
        &mut self,
        info: &RuleInfo,
        pointer: &str,
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
    queues::check,
    cq_limits::check,
    admission::check,
    reclaim::check,
    nodes::check,
    workloads::check,
    entrypoints::check,
    kuberay::check,
    operators::check,
    crate::provider::check,
    azure::check,
    gcp::check,
    aws::check,
    alibaba::check,
    infra::check,
];

/// All rules, for the README and tests.
pub fn all_rules() -> Vec<RuleInfo> {
    [
        input::RULES,
        queues::RULES,
        cq_limits::RULES,
        admission::RULES,
        reclaim::RULES,
        nodes::RULES,
        workloads::RULES,
        entrypoints::RULES,
        kuberay::RULES,
        operators::RULES,
        &[crate::provider::TWO_PROVIDERS],
        azure::RULES,
        gcp::RULES,
        aws::RULES,
        alibaba::RULES,
        infra::RULES,
        crate::validate::RULES,
        crate::simulate::scenario::RULES,
    ]
    .concat()
}

/// Run every rule over the profile. The groups read the profile and nothing of each other's,
/// so a large profile's run on all cores; their findings are joined in `CHECKS` order.
pub fn check(profile: &Profile, loaded: &Loaded, base_dir: Option<&Path>) -> Vec<Diagnostic> {
    crate::par::map(crate::par::wide(profile.items()), CHECKS, |c| {
        let mut ctx = Ctx {
            profile,
            base_dir,
            loaded,
            out: Vec::new(),
        };
        c(&mut ctx);
        ctx.out
    })
    .concat()
}
