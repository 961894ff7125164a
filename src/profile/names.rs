//! Name types: each a string with the pattern and length the target system enforces, so that a
//! bad name is refused by the schema check with its position, before anything is generated.

// The `name_type!` macro spells every path out: the provider modules (`crate::cloud`)
// declare their cloud's names with it too.
use std::cell::Cell;

thread_local! {
    pub(crate) static UNCHECKED: Cell<bool> = const { Cell::new(false) };
}

/// Deserialize inside `f` without checking names: only for the test that shows the scripts
/// keep hostile values inert even past every check (`infra::values_that_bypass_the_schema_…`).
#[doc(hidden)]
pub fn unchecked<T>(f: impl FnOnce() -> T) -> T {
    /// Checks resume even if `f` panics.
    struct Resume;
    impl Drop for Resume {
        fn drop(&mut self) {
            UNCHECKED.set(false);
        }
    }
    UNCHECKED.set(true);
    let _resume = Resume;
    f()
}

// The Kubernetes name patterns most names of a profile have. A hand-written check of each is
// ~100× faster than the regex engine (a 1,000-team profile has tens of thousands of names);
// `common_pattern` picks it by the pattern's text, so a type whose pattern changes falls back
// to the regex, and `tests::the_hand_written_checks_match_their_patterns` compares the two
// on every string of up to five characters from an alphabet that covers every class.
const LABEL: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const SUBDOMAIN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";
const DNS1035: &str = "^[a-z]([-a-z0-9]*[a-z0-9])?$";
const QUALIFIED: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$";
const LABEL_VALUE: &str = "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$";

/// Whether `s` matches `pattern`, when it is one of the common ones above.
pub(crate) fn common_pattern(pattern: &str, s: &str) -> Option<bool> {
    Some(match pattern {
        LABEL => is_label(s, |c| c.is_ascii_lowercase() || c.is_ascii_digit()),
        SUBDOMAIN => s
            .split('.')
            .all(|l| is_label(l, |c| c.is_ascii_lowercase() || c.is_ascii_digit())),
        DNS1035 => is_label(s, |c| c.is_ascii_lowercase()),
        QUALIFIED => {
            let (prefix, name) = s.split_once('/').unwrap_or(("", s));
            (prefix.is_empty() && !s.starts_with('/')
                || common_pattern(SUBDOMAIN, prefix) == Some(true))
                && is_value(name)
                && !name.is_empty()
        }
        LABEL_VALUE => s.is_empty() || is_value(s),
        _ => return None,
    })
}

/// A bracket class as parsed: negated, its ranges, the index after its `]`.
type Class = (bool, Vec<(u8, u8)>, usize);

/// A name type's pattern, compiled: `Simple` where it has that shape, else regex-lite.
#[derive(Debug)]
pub(crate) enum NamePattern {
    Simple(Simple),
    Regex(regex_lite::Regex),
}

impl NamePattern {
    pub(crate) fn new(pattern: &str) -> Self {
        match Simple::parse(pattern) {
            Some(s) => Self::Simple(s),
            None => Self::Regex(regex_lite::Regex::new(pattern).expect("a name pattern compiles")),
        }
    }

    pub(crate) fn is_match(&self, s: &str) -> bool {
        match self {
            Self::Simple(p) => p.is_match(s),
            Self::Regex(r) => r.is_match(s),
        }
    }
}

/// A pattern of the shape most of the profile's other name types have: `^`, then character
/// classes (`[a-z0-9_.-]`, `[^;&|]`) or single characters (`_`, `\\.`), each once or repeated
/// (`*`, `+`, `?`, `{m}`, `{m,n}`), then `$`. Matched without a regex engine: a regex-lite
/// compile costs tens of thousands of instructions and each match thousands, for names of a
/// few characters (`tests::the_simple_patterns_match_as_the_regex_crate_does`).
#[derive(Debug)]
pub(crate) struct Simple {
    atoms: Vec<Atom>,
}

#[derive(Debug)]
struct Atom {
    negated: bool,
    /// Inclusive ASCII ranges; a single character is a range of one.
    ranges: Vec<(u8, u8)>,
    min: usize,
    max: usize,
}

impl Atom {
    fn has(&self, c: char) -> bool {
        let inside = u8::try_from(c).is_ok_and(|b| {
            b.is_ascii() && self.ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&b))
        });
        inside != self.negated
    }
}

impl Simple {
    /// The pattern's atoms, or `None` when it has another shape (groups, alternation, anchors
    /// inside, non-ASCII), for the regex engine.
    pub(crate) fn parse(pattern: &str) -> Option<Self> {
        let body = pattern.strip_prefix('^')?.strip_suffix('$')?;
        if !body.is_ascii() {
            return None;
        }
        let b = body.as_bytes();
        let mut atoms = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let (negated, ranges, next) = match b[i] {
                b'[' => Self::class(b, i + 1)?,
                b'\\' => {
                    let c = *b.get(i + 1)?;
                    if c.is_ascii_alphanumeric() {
                        return None; // \d, \w, \b …: classes or assertions, not literals
                    }
                    (false, vec![(c, c)], i + 2)
                }
                b'(' | b')' | b'|' | b'^' | b'$' | b'.' | b'*' | b'+' | b'?' | b'{' | b'}' => {
                    return None;
                }
                c => (false, vec![(c, c)], i + 1),
            };
            let (min, max, after) = Self::repeat(b, next)?;
            atoms.push(Atom {
                negated,
                ranges,
                min,
                max,
            });
            i = after;
        }
        Some(Self { atoms })
    }

    /// A bracket class starting after its `[`: negated, ranges, the index after its `]`.
    fn class(b: &[u8], mut i: usize) -> Option<Class> {
        let negated = b.get(i) == Some(&b'^');
        i += usize::from(negated);
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let mut c = *b.get(i)?;
            if c == b']' && !first {
                return Some((negated, ranges, i + 1));
            }
            first = false;
            if c == b'[' {
                return None; // [:alpha:] and the like
            }
            if c == b'\\' {
                i += 1;
                c = *b.get(i)?;
                if c.is_ascii_alphanumeric() {
                    return None;
                }
            }
            if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_some_and(|&h| h != b']') {
                let hi = b[i + 2];
                if hi == b'\\' || hi < c {
                    return None;
                }
                ranges.push((c, hi));
                i += 3;
            } else {
                ranges.push((c, c));
                i += 1;
            }
        }
    }

    /// A repetition at `i`, if any: min, max, the index after it.
    fn repeat(b: &[u8], i: usize) -> Option<(usize, usize, usize)> {
        Some(match b.get(i) {
            Some(b'*') => (0, usize::MAX, i + 1),
            Some(b'+') => (1, usize::MAX, i + 1),
            Some(b'?') => (0, 1, i + 1),
            Some(b'{') => {
                let end = i + b[i..].iter().position(|&c| c == b'}')?;
                let inner = std::str::from_utf8(&b[i + 1..end]).ok()?;
                let (lo, hi) = if let Some((lo, hi)) = inner.split_once(',') {
                    (lo.parse().ok()?, hi.parse().ok()?)
                } else {
                    let n = inner.parse().ok()?;
                    (n, n)
                };
                (lo, hi, end + 1)
            }
            _ => (1, 1, i),
        })
    }

    /// Whether all of `s` matches.
    pub(crate) fn is_match(&self, s: &str) -> bool {
        if s.is_ascii() {
            let b = s.as_bytes();
            Self::rest(&self.atoms, b.len(), &|i| char::from(b[i]))
        } else {
            let chars: Vec<char> = s.chars().collect();
            Self::rest(&self.atoms, chars.len(), &|i| chars[i])
        }
    }

    /// Whether `atoms` match all of the `len` characters `at` gives: the first atom takes
    /// as many as it may, then gives back one at a time (the patterns have a few atoms, and
    /// names are short).
    fn rest(atoms: &[Atom], len: usize, at: &dyn Fn(usize) -> char) -> bool {
        fn from(atoms: &[Atom], pos: usize, len: usize, at: &dyn Fn(usize) -> char) -> bool {
            let Some((atom, more)) = atoms.split_first() else {
                return pos == len;
            };
            let mut end = pos;
            while end < len && end - pos < atom.max && atom.has(at(end)) {
                end += 1;
            }
            (pos + atom.min..=end).rev().any(|e| from(more, e, len, at))
        }
        from(atoms, 0, len, at)
    }
}

/// A DNS label: `first` holds for the first character; the rest are lowercase letters,
/// digits and `-`, the last not `-`.
fn is_label(s: &str, first: impl Fn(u8) -> bool) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && first(b[0])
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[b.len() - 1] != b'-'
}

/// A label value or qualified name's name part: letters, digits, `-`, `_` and `.`, starting
/// and ending with a letter or digit.
fn is_value(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $pattern:expr, $min:expr, $max:expr, $what:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            pub const PATTERN: &'static str = $pattern;
            pub const DESCRIPTION: &'static str = $what;
            pub fn as_str(&self) -> &str {
                &self.0
            }
            /// What the schema says of this name: its length in characters and its pattern.
            pub fn is_valid(s: &str) -> bool {
                static RE: std::sync::OnceLock<$crate::profile::names::NamePattern> =
                    std::sync::OnceLock::new();
                ($min..=$max).contains(&s.chars().count())
                    && $crate::profile::names::common_pattern($pattern, s).unwrap_or_else(|| {
                        RE.get_or_init(|| $crate::profile::names::NamePattern::new($pattern))
                            .is_match(s)
                    })
            }
        }

        /// Refuses what the schema refuses, so that a profile that deserializes needs no
        /// schema validation (`input::schema::typed`).
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <String as serde::Deserialize>::deserialize(d)?;
                if $crate::profile::names::UNCHECKED.get() || Self::is_valid(&s) {
                    Ok(Self(s))
                } else {
                    Err(<D::Error as serde::de::Error>::custom(format!("`{s}` is not {}", $what)))
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "pattern": $pattern,
                    "minLength": $min,
                    "maxLength": $max,
                    "description": $what,
                })
            }
        }
    };
}
pub(crate) use name_type;

name_type!(
    /// Kubernetes DNS-1123 label (namespaces, LocalQueues, ConfigMap keys).
    Dns1123Label,
    LABEL,
    1,
    63,
    "a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit"
);
name_type!(
    /// Kubernetes DNS-1123 subdomain (ResourceFlavors, ClusterQueues, cohorts, priority classes).
    Dns1123Subdomain,
    SUBDOMAIN,
    1,
    253,
    "a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
);
name_type!(
    /// DNS-1035 label: what KubeRay requires of RayCluster/RayJob/RayService names.
    Dns1035Label,
    DNS1035,
    1,
    63,
    "a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending with a letter or digit"
);
name_type!(
    /// Kubernetes label or annotation key, or resource name (`nvidia.com/gpu`).
    QualifiedName,
    QUALIFIED,
    1,
    316,
    "a Kubernetes qualified name: an optional DNS prefix and '/', then up to 63 letters, digits, '-', '_' and '.'"
);
name_type!(
    /// Kubernetes label value (may be empty).
    LabelValue,
    LABEL_VALUE,
    0,
    63,
    "a Kubernetes label value: up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit"
);
name_type!(
    /// Semantic version of a Helm chart, without a leading `v` (`0.19.2`).
    ChartVersion,
    "^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$",
    5,
    64,
    "a chart version such as 0.19.2 (no leading 'v', pinned: no ranges)"
);
name_type!(
    /// Version of an NVIDIA chart: the device plugin's have no leading `v` (`0.17.0`), the GPU
    /// Operator's have one (`v25.10.1`).
    NvidiaChartVersion,
    "^v?[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$",
    5,
    64,
    "a chart version such as 0.17.0 or v25.10.1 (pinned: no ranges)"
);
name_type!(
    /// Kubernetes minor or patch version for AKS (`1.35` or `1.35.1`).
    KubernetesVersion,
    "^1\\.[0-9]{1,3}(\\.[0-9]{1,3})?$",
    3,
    16,
    "a Kubernetes version such as \"1.35\" (quote it: YAML reads 1.30 as the number 1.3)"
);
name_type!(
    /// Container image reference (`registry/repo:tag` or with a digest).
    Image,
    "^[a-z0-9]+([._/:@-][A-Za-z0-9_.-]+)*$",
    1,
    512,
    "a container image reference such as rayproject/ray:2.57.0-gpu"
);
name_type!(
    /// Ray version (`2.55.1`).
    RayVersion,
    "^[0-9]+\\.[0-9]+\\.[0-9]+$",
    5,
    32,
    "a Ray version such as \"2.55.1\""
);
name_type!(
    /// Helm release name.
    ReleaseName,
    LABEL,
    1,
    53,
    "a Helm release name: at most 53 lowercase letters, digits and '-'"
);
name_type!(
    /// Helm chart reference: an `oci://` or `https://` URL, or a chart name.
    ChartRef,
    "^(oci://|https://)?[A-Za-z0-9][A-Za-z0-9._/-]*$",
    1,
    512,
    "a Helm chart reference: oci://registry/path/chart, https://repo/url or a chart name"
);
name_type!(
    /// Path relative to the profile (a script to pack into a ConfigMap).
    RelativePath,
    "^[A-Za-z0-9_][A-Za-z0-9_./-]*$",
    1,
    255,
    "a path relative to the profile file, without '..'"
);
name_type!(
    /// Environment variable name.
    EnvName,
    "^[A-Za-z_][A-Za-z0-9_]*$",
    1,
    128,
    "an environment variable name: letters, digits and '_', not starting with a digit"
);
name_type!(
    /// A UUID (Azure client and tenant IDs).
    Uuid,
    "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    36,
    36,
    "a UUID such as 00000000-0000-0000-0000-000000000000"
);
name_type!(
    /// A Git repository URL (https, ssh).
    GitUrl,
    "^(https://|ssh://|git@)[A-Za-z0-9._~:/@%+-]+$",
    8,
    512,
    "a Git repository URL such as https://github.com/org/platform.git"
);
name_type!(
    /// A Git branch or tag.
    GitRevision,
    "^[A-Za-z0-9._/-]+$",
    1,
    255,
    "a Git branch or tag such as main"
);
name_type!(
    /// A profile's path in its Git repository, named so that the raykueue Argo CD plugin's
    /// discovery (`fileName: "*.raykueue.yaml"` in `argocd/plugin.yaml`) finds it.
    PluginProfilePath,
    "^([A-Za-z0-9_][A-Za-z0-9_.-]*/)*[A-Za-z0-9_][A-Za-z0-9_.-]*\\.raykueue\\.yaml$",
    15,
    255,
    "a path in the repository ending in .raykueue.yaml, such as clusters/prod/prod.raykueue.yaml"
);
name_type!(
    /// A Go duration (`10m`, `1h30m`).
    GoDuration,
    "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$",
    2,
    32,
    "a duration such as 10m or 1h"
);
impl GoDuration {
    /// The duration in seconds. The pattern admits only `<number><unit>` runs with the units
    /// `ms`, `s`, `m` and `h`, so every value that deserialized parses.
    pub(crate) fn seconds(&self) -> f64 {
        let mut total = 0.0;
        let mut number = String::new();
        let mut chars = self.0.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_ascii_digit() || c == '.' {
                number.push(c);
                continue;
            }
            let unit = match (c, chars.peek()) {
                ('m', Some('s')) => {
                    chars.next();
                    0.001
                }
                ('m', _) => 60.0,
                ('h', _) => 3600.0,
                _ => 1.0,
            };
            total += number.parse::<f64>().unwrap_or(0.0) * unit;
            number.clear();
        }
        total
    }
}

name_type!(
    /// A `ray start` option name in `rayStartParams` (`num-cpus`).
    RayParamName,
    "^[a-z][a-z0-9-]*$",
    1,
    64,
    "a `ray start` option name such as num-cpus: lowercase letters, digits and '-'"
);
name_type!(
    /// A `rayStartParams` value. KubeRay pastes it unquoted into the container's `ray start`
    /// shell command, so characters that start a shell command or redirect are refused.
    RayParamValue,
    "^[^$`;&|<>()\\\\\n\r]*$",
    0,
    1024,
    "a `ray start` option value without $, `, ;, &, |, <, >, (, ), \\ or line breaks (KubeRay puts it into a shell command)"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_read_as_go_reads_them() {
        for (text, seconds) in [
            ("10m", 600.0),
            ("1h30m", 5400.0),
            ("1.5h", 5400.0),
            ("250ms", 0.25),
            ("2m30s", 150.0),
            ("0s", 0.0),
        ] {
            assert!(GoDuration::is_valid(text), "{text}");
            assert!(
                (GoDuration(text.into()).seconds() - seconds).abs() < 1e-9,
                "{text}"
            );
        }
    }

    /// Every string of up to five characters over an alphabet with one member of each class
    /// the patterns distinguish.
    fn strings() -> Vec<String> {
        crate::base::every_string(&['a', 'Z', '0', '-', '.', '/', '_', ' '], 5)
    }

    /// Every name type's pattern, from the source: the string after the type's name in each
    /// `name_type!` (so a new type is covered without being listed here).
    fn name_patterns() -> Vec<String> {
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for block in text.split("name_type!(").skip(1) {
                        let Some(start) = block.find("\n    \"^") else {
                            continue;
                        };
                        let lit = &block[start + 6..];
                        let end = lit.find("\",\n").unwrap();
                        out.push(
                            lit[..end]
                                .replace("\\\\", "\u{0}")
                                .replace("\\n", "\n")
                                .replace("\\r", "\r")
                                .replace("\\\"", "\"")
                                .replace('\u{0}', "\\"),
                        );
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut out,
        );
        out
    }

    /// Each name pattern of the simple shape matches as the `regex` crate does: over every
    /// string of up to four characters from an alphabet with a member of each class the
    /// patterns name and some they do not, and over strings at the edges of each repetition.
    #[test]
    fn the_simple_patterns_match_as_the_regex_crate_does() {
        let patterns = name_patterns();
        assert!(patterns.len() >= 40, "{} name patterns", patterns.len());
        let alphabet = [
            'a', 'z', 'S', 'd', 'Z', '0', '9', '-', '.', '/', '_', ' ', '$', '`', ';', '(', '\\',
            '\n', ':', '@', 'é',
        ];
        let short = crate::base::every_string(&alphabet, 3);
        // Lengths around every bound the patterns' repetitions have ({0,11}, {1,61}, {2,119},
        // {3,24}, {0,89}, {4}, {8}, {12}).
        let lengths: Vec<usize> = (1..=14)
            .chain(22..=27)
            .chain(59..=64)
            .chain(87..=92)
            .chain(117..=123)
            .collect();
        let mut simple = 0;
        for pattern in &patterns {
            let re = regex::Regex::new(pattern).unwrap();
            let Some(p) = Simple::parse(pattern) else {
                continue;
            };
            simple += 1;
            // Runs of one character of the pattern's text at those lengths, with a head or a
            // tail of each alphabet member.
            let mut long = Vec::new();
            let mut chars: Vec<char> = pattern
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c))
                .collect();
            chars.sort_unstable();
            chars.dedup();
            for c in chars {
                for &n in &lengths {
                    let run: String = std::iter::repeat_n(c, n).collect();
                    long.push(run.clone());
                    for t in alphabet {
                        long.push(format!("{run}{t}"));
                        long.push(format!("{t}{run}"));
                    }
                }
            }
            for s in short.iter().chain(&long) {
                assert_eq!(p.is_match(s), re.is_match(s), "{pattern:?} on {s:?}");
            }
        }
        assert!(simple >= 20, "{simple} simple patterns");
    }

    #[test]
    fn the_hand_written_checks_match_their_patterns() {
        let all = strings();
        for pattern in [LABEL, SUBDOMAIN, DNS1035, QUALIFIED, LABEL_VALUE] {
            let re = regex_lite::Regex::new(pattern).unwrap();
            for s in &all {
                assert_eq!(
                    common_pattern(pattern, s),
                    Some(re.is_match(s)),
                    "{pattern} on {s:?}"
                );
            }
        }
        assert_eq!(common_pattern("^x$", "x"), None);
    }
}
