//! The codes of the input and schema layers (`load`, `schema_check`), profile overlays
//! (`overlay`), `raykueue validate` (`validate`, `cli::validate`) and the output check, listed
//! here so that every code a user can see is in one inventory (`all_rules()`, the README's rule
//! tables; a test scans the sources for codes missing here). They are reported where the
//! problem is found.

use super::RuleInfo;
use crate::diagnostic::Severity::{self, Error, Warning};

const fn input(code: &'static str, title: &'static str) -> RuleInfo {
    rule(code, Error, title)
}

const fn rule(code: &'static str, severity: Severity, title: &'static str) -> RuleInfo {
    RuleInfo {
        code,
        severity,
        title,
    }
}

/// An internal error: raykueue could not write what it built (a bug in raykueue).
pub(crate) const INTERNAL: RuleInfo = input(
    crate::diagnostic::INTERNAL,
    "internal: raykueue generated an invalid object (a bug in raykueue)",
);

pub(super) const RULES: &[RuleInfo] = &[
    input("RK000", "usage or I/O: the profile cannot be found or read"),
    input("RK001", "YAML syntax error, or more than one document"),
    input("RK002", "the profile is not valid UTF-8"),
    input("RK003", "a mapping has the same key twice"),
    input(
        "RK004",
        "the profile exceeds a size, depth, node-count or alias-expansion limit",
    ),
    input(
        "RK005",
        "a YAML tag (`!!binary`, `!custom`): profiles are plain data",
    ),
    input("RK006", "the profile is empty"),
    input("RK010", "unknown key (with did-you-mean)"),
    input("RK011", "wrong type (e.g. a number where text is expected)"),
    input(
        "RK012",
        "invalid value: pattern, enum, range, length or item count",
    ),
    input("RK013", "missing required key"),
    input(
        "RK020",
        "`extends` names a parent profile that cannot be found",
    ),
    input(
        "RK021",
        "`extends` forms a cycle, or a chain too long to be anything else",
    ),
    input(
        "RK022",
        "an overlay replaces a mapping, list or scalar with another type, or deletes what the parent lacks",
    ),
    input(
        "RK050",
        "validate: a manifest breaks its kind's schema, or has a field the schema lacks",
    ),
    rule(
        "RK051",
        Warning,
        "validate: a required field left to the API server's default",
    ),
    input("RK052", "validate: a manifest breaks a CEL rule of its CRD"),
    input(
        "RK053",
        "validate: a manifest breaks a Kueue admission webhook rule",
    ),
    rule(
        "RK054",
        Warning,
        "validate: a rule that could not be evaluated",
    ),
    rule(
        "RK055",
        Warning,
        "validate: no schema for this apiVersion and kind: not validated",
    ),
    input(
        "RK056",
        "validate: a document that is not a Kubernetes object",
    ),
    rule(
        "RK057",
        Warning,
        "validate: no Kubernetes objects in the input",
    ),
    INTERNAL,
    input(
        "RK901",
        "internal: a generated object breaks its schema or has an unknown field",
    ),
    input("RK902", "internal: a generated object breaks a CEL rule"),
    input(
        "RK903",
        "internal: a generated object breaks a Kueue admission webhook rule",
    ),
    input(
        "RK904",
        "internal: a rule on a generated object could not be evaluated",
    ),
    input(
        "RK905",
        "internal: a generated object could not be placed or checked",
    ),
];
