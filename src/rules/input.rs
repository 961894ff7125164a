//! The codes of the input and schema layers (`load`, `schema_check`), the command line and
//! the output check, listed here so that every code a user can see is in one inventory
//! (`all_rules()`, the README's rule table). They are reported where the problem is found.

use super::RuleInfo;
use crate::diagnostic::Severity::Error;

const fn input(code: &'static str, title: &'static str) -> RuleInfo {
    RuleInfo {
        code,
        severity: Error,
        title,
    }
}

pub const RULES: &[RuleInfo] = &[
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
        "RK900",
        "internal: raykueue generated an invalid object (a bug in raykueue)",
    ),
];
