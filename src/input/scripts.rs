//! Local script files a workload names (`scripts:`), read relative to the profile's folder and
//! packed into one ConfigMap per workload. Read once, with the profile (`read_all`): the checks
//! report a bad entry at its line, and the model packs what was read.

use crate::profile::{Profile, RelativePath};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io::Read;
use std::path::{Component, Path};

/// Kubernetes refuses a ConfigMap whose data exceeds 1 MiB.
pub(crate) const MAX_CONFIGMAP_BYTES: usize = 1024 * 1024;

/// One script as it goes into the ConfigMap: its key (the file name) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Script {
    pub(crate) key: String,
    pub(crate) text: String,
}

/// Why a script entry cannot be packed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScriptError {
    #[error(
        "the profile was resolved from the shipped set: `{0}` is not one of its example scripts"
    )]
    NoBaseDir(String),
    #[error("`{0}` leaves the profile's folder")]
    Escapes(String),
    #[error("cannot read `{path}`: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("`{0}` is not UTF-8 text")]
    NotUtf8(String),
    #[error("`{0}` is larger than a ConfigMap can hold (1 MiB)")]
    TooLarge(String),
}

/// The ConfigMap key of a script: its file name.
pub(crate) fn key(rel: &RelativePath) -> &str {
    rel.as_str()
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(rel.as_str())
}

/// Read one script below `base`. Paths with `..` (or `.`) components are refused: a profile
/// names files next to it, never elsewhere on the machine that runs raykueue. Without a folder
/// (a shipped profile resolved by name) only the embedded example scripts exist.
pub(crate) fn read(base: Option<&Path>, rel: &RelativePath) -> Result<Script, ScriptError> {
    let name = rel.as_str().to_owned();
    let relative = Path::new(rel.as_str());
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return Err(ScriptError::Escapes(name));
    }
    let Some(base) = base else {
        return crate::input::resolve::shipped_script(&name)
            .map(|text| Script {
                key: key(rel).to_owned(),
                text: text.to_owned(),
            })
            .ok_or(ScriptError::NoBaseDir(name));
    };
    let path = base.join(relative);
    // Stable words for the common cases, so diagnostics read the same on every OS.
    let unreadable = |e: std::io::Error| ScriptError::Unreadable {
        path: name.clone(),
        reason: match e.kind() {
            std::io::ErrorKind::NotFound => "no such file".into(),
            std::io::ErrorKind::PermissionDenied => "permission denied".into(),
            _ => e.to_string(),
        },
    };
    // A link inside the folder may point anywhere: the file itself must be below the folder.
    let root = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        base
    };
    if let (Ok(real), Ok(root)) = (path.canonicalize(), root.canonicalize())
        && !real.starts_with(&root)
    {
        return Err(ScriptError::Escapes(name));
    }
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        // A profile that extends a shipped one inherits its workloads, whose scripts are the
        // embedded examples: a shipped example's path that is not next to the profile is read
        // from the binary (the same text `raykueue init` writes).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return crate::input::resolve::shipped_script(&name)
                .map(|text| Script {
                    key: key(rel).to_owned(),
                    text: text.to_owned(),
                })
                .ok_or_else(|| unreadable(e));
        }
        Err(e) => return Err(unreadable(e)),
    };
    if file.metadata().map_err(unreadable)?.is_dir() {
        return Err(ScriptError::Unreadable {
            path: name,
            reason: "it is a directory".into(),
        });
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIGMAP_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > MAX_CONFIGMAP_BYTES {
        return Err(ScriptError::TooLarge(name));
    }
    let text = String::from_utf8(bytes).map_err(|_| ScriptError::NotUtf8(name))?;
    Ok(Script {
        key: key(rel).to_owned(),
        text,
    })
}

/// Every workload's script files, read once: per workload (in profile order) the result of each
/// `scripts` entry.
#[derive(Debug, Default)]
pub(crate) struct ScriptFiles(Vec<Vec<Result<Script, ScriptError>>>);

impl ScriptFiles {
    /// The entries of workload `index`, read.
    pub(crate) fn of(&self, index: usize) -> &[Result<Script, ScriptError>] {
        self.0.get(index).map_or(&[], Vec::as_slice)
    }

    /// Workload `from`'s scripts as workload `to`'s, and none for the others: a workload
    /// checked in another profile (a fleet manager's on a worker).
    pub(crate) fn moved(&self, from: usize, to: usize) -> Self {
        let mut out = vec![Vec::new(); to + 1];
        out[to] = self.of(from).to_vec();
        Self(out)
    }
}

/// Read the script files of every workload of a profile, relative to `base` (the profile's
/// folder; `None` for a shipped profile, whose scripts are embedded).
pub(crate) fn read_all(p: &Profile, base: Option<&Path>) -> ScriptFiles {
    ScriptFiles(
        p.workloads
            .iter()
            .map(|w| w.scripts.iter().map(|rel| read(base, rel)).collect())
            .collect(),
    )
}

/// Bytes the scripts take in a ConfigMap (keys and values).
pub(crate) fn total_bytes(scripts: &[Script]) -> usize {
    scripts.iter().map(|s| s.key.len() + s.text.len()).sum()
}

/// A short content hash of the scripts (keys and texts, length-prefixed so that no two
/// different sets hash alike by concatenation): 10 hex digits, like kustomize's suffixes.
pub(crate) fn content_hash(scripts: &[Script]) -> String {
    let mut h = Sha256::new();
    for s in scripts {
        for part in [&s.key, &s.text] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
    }
    let mut hex = String::with_capacity(10);
    for b in h.finalize().iter().take(5) {
        // Writing to a String cannot fail.
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rel(s: &str) -> RelativePath {
        RelativePath(s.into())
    }

    #[test]
    fn refuses_paths_outside_the_profile_folder() {
        let dir = tempfile::tempdir().unwrap();
        for p in ["a/../../etc/passwd", "./x.py", "a/.."] {
            assert_eq!(
                read(Some(dir.path()), &rel(p)),
                Err(ScriptError::Escapes(p.into()))
            );
        }
    }

    #[test]
    fn reads_text_and_keys_it_by_file_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("jobs")).unwrap();
        std::fs::write(dir.path().join("jobs/train.py"), "print('hi')\n").unwrap();
        let s = read(Some(dir.path()), &rel("jobs/train.py")).unwrap();
        assert_eq!(s.key, "train.py");
        assert_eq!(s.text, "print('hi')\n");
        assert!(matches!(
            read(Some(dir.path()), &rel("jobs/missing.py")),
            Err(ScriptError::Unreadable { .. })
        ));
        assert!(matches!(
            read(Some(dir.path()), &rel("jobs")),
            Err(ScriptError::Unreadable { .. })
        ));
        assert_eq!(
            read(None, &rel("jobs/train.py")),
            Err(ScriptError::NoBaseDir("jobs/train.py".into()))
        );
        // A shipped profile reads its example scripts from the binary.
        let shipped = read(None, &rel("scripts/gpu_check.py")).unwrap();
        assert_eq!(shipped.key, "gpu_check.py");
        assert!(shipped.text.contains("ray.cluster_resources()"));
        std::fs::write(dir.path().join("bin"), [0xff, 0xfe]).unwrap();
        assert_eq!(
            read(Some(dir.path()), &rel("bin")),
            Err(ScriptError::NotUtf8("bin".into()))
        );
    }

    #[test]
    fn hash_changes_with_any_byte_and_is_stable() {
        let a = [Script {
            key: "a.py".into(),
            text: "x".into(),
        }];
        let b = [Script {
            key: "a.py".into(),
            text: "y".into(),
        }];
        assert_eq!(content_hash(&a), content_hash(&a));
        assert_ne!(content_hash(&a), content_hash(&b));
        assert_eq!(content_hash(&a).len(), 10);
        // Moving bytes between key and text changes the hash.
        let c = [Script {
            key: "a.p".into(),
            text: "yx".into(),
        }];
        assert_ne!(content_hash(&a), content_hash(&c));
    }
}
