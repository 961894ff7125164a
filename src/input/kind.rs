//! What a raykueue file is before it is read as one: a profile, a fleet or a scenario (its
//! top-level `kind:`), and whether a profile is a fleet's manager with no queues of its own
//! (a fleet file beside it names it). A command given a file of another kind says which
//! command reads it, in one located error, instead of the schema errors of reading it as
//! what it is not (or of reading a manager, whose queues only its fleet derives, alone).

use crate::base::codes;
use crate::base::diagnostic::Diagnostic;
use crate::base::source::{Pos, Source};
use crate::input::resolve::Resolved;
use std::path::{Path, PathBuf};

/// The raykueue kinds a file can be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Profile,
    Fleet,
    Scenario,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Profile => "Profile",
            Kind::Fleet => "Fleet",
            Kind::Scenario => "Scenario",
        }
    }

    /// The commands that read a file of this kind, as the error names them.
    fn readers(self, file: &str) -> String {
        match self {
            Kind::Profile => format!(
                "`raykueue check --profile {file}` checks it; `gen`, `diff`, `simulate` and `explain` read it"
            ),
            Kind::Fleet => format!(
                "`raykueue gen --profile {file} --out DIR`, `raykueue check --profile {file}` and `raykueue simulate --profile {file}` read it"
            ),
            Kind::Scenario => {
                format!("`raykueue simulate --profile P --scenario {file}` reads it")
            }
        }
    }
}

/// The value of a top-level `key:` line (no indentation), unquoted, with the byte offset of
/// the value: block-style YAML as the shipped files and `kubectl` write it. A file in flow
/// style is read as what the command expects, whose own errors then apply.
fn top_level<'t>(text: &'t str, key: &str) -> Option<(&'t str, usize)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(rest) = line.strip_prefix(key).and_then(|r| r.strip_prefix(':')) else {
            continue;
        };
        let value = rest.split(" #").next().unwrap_or_default();
        let trimmed = value.trim();
        let at = start + key.len() + 1 + (value.len() - value.trim_start().len());
        let unquoted = trimmed.trim_matches(|c| c == '"' || c == '\'');
        let at = at + usize::from(unquoted.len() < trimmed.len());
        return Some((unquoted, at));
    }
    None
}

/// The raykueue kind of a text, and where its `kind:` value is. A `Profile` needs the
/// `raykueue.io/` apiVersion too (Kubernetes has no kind of that name, but a snapshot or a
/// manifest may mean another); `Fleet` and `Scenario` need only the kind, as `is_fleet` reads
/// a fleet.
pub(crate) fn kind_of(text: &str) -> Option<(Kind, usize)> {
    let (kind, at) = top_level(text, "kind")?;
    let raykueue =
        top_level(text, "apiVersion").is_some_and(|(v, _)| v.starts_with("raykueue.io/"));
    let kind = match kind {
        "Fleet" => Kind::Fleet,
        "Scenario" => Kind::Scenario,
        "Profile" if raykueue => Kind::Profile,
        _ => return None,
    };
    Some((kind, at))
}

fn at_kind(source: &Source, at: usize, len: usize) -> Pos {
    Pos {
        len,
        ..source.pos_at(at)
    }
}

/// A file `command` cannot read, of the kind it is: one located error.
fn wrong(source: &Source, kind: Kind, at: usize, what: &str, command: &str) -> Diagnostic {
    Diagnostic::new(
        &codes::WRONG_FILE_KIND,
        format!(
            "{} is a {}, not {what}: `{command}` does not read it",
            source.name,
            kind.name()
        ),
    )
    .label(format!("a raykueue {}", kind.name()))
    .at(source, at_kind(source, at, kind.name().len()))
    .path("kind")
    .hint(kind.readers(&source.name))
}

/// What is wrong with the file given as `--profile` (or a `diff` side) to `command`: a
/// Scenario, a Fleet where `fleet_ok` is false, or a fleet's manager without queues given
/// alone. `None` when it is a profile the command reads.
pub(crate) fn not_a_profile(
    resolved: &Resolved,
    command: &str,
    fleet_ok: bool,
) -> Option<Diagnostic> {
    let source = &resolved.source;
    match kind_of(&source.text) {
        Some((Kind::Scenario, at)) => {
            return Some(wrong(source, Kind::Scenario, at, "a profile", command));
        }
        Some((Kind::Fleet, _)) if fleet_ok => return None,
        Some((Kind::Fleet, at)) => {
            return Some(
                wrong(source, Kind::Fleet, at, "one cluster's profile", command).hint(format!(
                    "{}; or give `{command}` one member's profile (the fleet's `manager.profile` or a `workers[].profile`)",
                    Kind::Fleet.readers(&source.name)
                )),
            );
        }
        _ => {}
    }
    manager_alone(resolved, command, fleet_ok)
}

/// A profile with no `queues` that a fleet file in its folder names as `manager.profile`:
/// raykueue derives its queues from the workers' (docs/fleets.md), so alone it has none.
fn manager_alone(resolved: &Resolved, command: &str, fleet_ok: bool) -> Option<Diagnostic> {
    let source = &resolved.source;
    if top_level(&source.text, "queues").is_some() {
        return None;
    }
    let dir = resolved.base_dir.as_deref()?;
    let me = std::fs::canonicalize(source.name.as_ref()).ok()?;
    let fleet = fleet_naming(dir, &me)?;
    let (at, len) = kind_of(&source.text).map_or((0, 0), |(_, at)| (at, "Profile".len()));
    let fleet = fleet.display().to_string();
    let instead = if fleet_ok {
        format!(
            "give the fleet instead: `{command} --profile {fleet}` reads the manager with the queues it derives"
        )
    } else {
        format!(
            "`raykueue check --profile {fleet}` and `raykueue gen --profile {fleet} --out DIR` read the fleet; `{command}` reads a profile with queues of its own (a worker's)"
        )
    };
    Some(
        Diagnostic::new(
            &codes::WRONG_FILE_KIND,
            format!(
                "{} is the manager profile of the fleet {fleet}: it has no `queues`, raykueue derives them from the workers', so `{command}` cannot read it alone",
                source.name
            ),
        )
        .at(source, at_kind(source, at, len))
        .hint(instead),
    )
}

/// The fleet file in `dir` whose `manager.profile` is the file `me` (canonical), if any. Only
/// the folder's own YAML files are read, and only a few hundred of them.
fn fleet_naming(dir: &Path, me: &Path) -> Option<PathBuf> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .take(500)
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
        })
        .collect();
    names.sort();
    names.into_iter().find(|path| {
        let small = std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() < 1 << 20);
        let Some(text) = small.then(|| std::fs::read_to_string(path).ok()).flatten() else {
            return false;
        };
        matches!(kind_of(&text), Some((Kind::Fleet, _)))
            && manager_profile(&text)
                .is_some_and(|p| std::fs::canonicalize(dir.join(p)).is_ok_and(|p| p == me))
    })
}

/// The `profile:` under a fleet's top-level `manager:` (block or flow style).
fn manager_profile(text: &str) -> Option<&str> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with("manager:"));
    let head = lines.next()?;
    if let Some(flow) = head.split_once("profile:") {
        return Some(scalar(flow.1.split(',').next().unwrap_or_default()));
    }
    lines
        .take_while(|l| l.is_empty() || l.starts_with([' ', '#']))
        .find_map(|l| l.trim_start().strip_prefix("profile:").map(scalar))
}

/// A plain or quoted scalar as written after its key, without comment or closing brace.
fn scalar(s: &str) -> &str {
    let s = s.split(" #").next().unwrap_or_default();
    let s = s.trim().trim_end_matches('}').trim();
    s.trim_matches(|c| c == '"' || c == '\'')
}

/// A raykueue file given where a cluster snapshot (`--state`) or a manifest (`validate`) is
/// read: one located error naming the command that reads it. `None` for anything else.
pub(crate) fn not_kubernetes(source: &Source, what: &str, command: &str) -> Option<Diagnostic> {
    let (kind, at) = kind_of(&source.text)?;
    Some(wrong(source, kind, at, what, command))
}

#[cfg(test)]
mod tests {
    use super::{Kind, kind_of, manager_profile};

    #[test]
    fn the_kind_is_the_top_level_line() {
        let fleet = "# c\napiVersion: raykueue.io/v1alpha1\nkind: Fleet\nname: f\n";
        assert_eq!(
            kind_of(fleet),
            Some((Kind::Fleet, fleet.find("Fleet").unwrap()))
        );
        let quoted = "apiVersion: raykueue.io/v1alpha1\nkind: \"Scenario\" # x\n";
        assert_eq!(kind_of(quoted).map(|k| k.0), Some(Kind::Scenario));
        assert_eq!(kind_of("apiVersion: v1\nkind: List\nitems: []\n"), None);
        // A Profile of another API group is no raykueue profile; nested kinds do not count.
        assert_eq!(kind_of("apiVersion: example.com/v1\nkind: Profile\n"), None);
        assert_eq!(
            kind_of("apiVersion: v1\nkind: List\nitems:\n- kind: Fleet\n"),
            None
        );
    }

    #[test]
    fn the_manager_profile_is_read_in_either_style() {
        assert_eq!(
            manager_profile("kind: Fleet\nmanager:\n  # the hub\n  profile: m.yaml\nworkers: []\n"),
            Some("m.yaml")
        );
        assert_eq!(
            manager_profile("kind: Fleet\nmanager: {profile: 'm.yaml'}\n"),
            Some("m.yaml")
        );
        assert_eq!(
            manager_profile("kind: Fleet\nmanager:\nworkers:\n  profile: w\n"),
            None
        );
    }
}
