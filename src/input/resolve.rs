//! Finding the profile a user named: a shipped name (embedded in the binary, so it resolves
//! from any working directory) or a path to a YAML file.

use crate::base::diagnostic::Diagnostic;
use crate::base::source::Source;
use crate::input::load;
use std::path::{Path, PathBuf};

/// What `--profile` takes, for the commands' help: every shipped name (a test holds it to
/// `SHIPPED`).
pub(crate) const PROFILE_HELP: &str = "Shipped profile name (single, team, autoscale, gpu-autoscale, kuberay-gpu, kuberay-gpu-gke, kuberay-gpu-eks, kuberay-gpu-ack, examples/tas-gke, examples/provisioning-eks, examples/aks-ai-runtime) or path to a profile YAML file";

/// The shipped profiles, embedded at build time. A name with a folder (`examples/tas-gke`) is
/// a shipped example under `profiles/examples/`.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "single",
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/single.yaml")),
    ),
    (
        "team",
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/profiles/team.yaml")),
    ),
    (
        "autoscale",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/autoscale.yaml"
        )),
    ),
    (
        "gpu-autoscale",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/gpu-autoscale.yaml"
        )),
    ),
    (
        "kuberay-gpu",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/kuberay-gpu.yaml"
        )),
    ),
    (
        "kuberay-gpu-gke",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/kuberay-gpu-gke.yaml"
        )),
    ),
    (
        "kuberay-gpu-eks",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/kuberay-gpu-eks.yaml"
        )),
    ),
    (
        "kuberay-gpu-ack",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/kuberay-gpu-ack.yaml"
        )),
    ),
    (
        "examples/tas-gke",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/examples/tas-gke.yaml"
        )),
    ),
    (
        "examples/provisioning-eks",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/examples/provisioning-eks.yaml"
        )),
    ),
    (
        "examples/aks-ai-runtime",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/examples/aks-ai-runtime.yaml"
        )),
    ),
];

/// The example programs the shipped profiles name in `scripts:` (paths relative to
/// `profiles/`), embedded with them: a shipped profile resolved by name reads its scripts from
/// here, and `raykueue init` writes them next to the profile it writes.
pub const SHIPPED_SCRIPTS: &[(&str, &str)] = &[
    (
        "scripts/gpu_check.py",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/scripts/gpu_check.py"
        )),
    ),
    (
        "scripts/gpu_verify.py",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/scripts/gpu_verify.py"
        )),
    ),
    (
        "scripts/train.py",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/scripts/train.py"
        )),
    ),
    (
        "scripts/batch.py",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/scripts/batch.py"
        )),
    ),
    (
        "scripts/serve_app.py",
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles/scripts/serve_app.py"
        )),
    ),
];

/// The text of a shipped example script by its path relative to `profiles/`.
pub fn shipped_script(rel: &str) -> Option<&'static str> {
    SHIPPED_SCRIPTS
        .iter()
        .find(|(p, _)| *p == rel)
        .map(|(_, t)| *t)
}

/// A profile ready to load: its text, and the folder its relative paths start from (`None`
/// for shipped profiles, whose scripts are the embedded `SHIPPED_SCRIPTS`).
#[derive(Debug)]
pub struct Resolved {
    pub source: Source,
    pub base_dir: Option<PathBuf>,
}

/// Why a profile could not be read at all (exit code 2 for I/O, 1 for bad content).
#[derive(Debug)]
pub enum ResolveError {
    Io(String),
    Invalid(Diagnostic),
}

/// `team` → the shipped profile; anything with a `/`, or ending in `.yaml`/`.yml`, or naming an
/// existing file → that file. A shipped name wins over a same-named file without an extension,
/// as `helm install x stable/x` prefers the repository: pass `./team` for the file.
pub fn resolve(arg: &str) -> Result<Resolved, ResolveError> {
    if let Some((name, text)) = SHIPPED.iter().find(|(n, _)| *n == arg) {
        return Ok(Resolved {
            source: Source::new(format!("profiles/{name}.yaml"), *text),
            base_dir: None,
        });
    }
    let path = Path::new(arg);
    let looks_like_path = arg.contains(['/', '\\'])
        || Path::new(arg)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
        || path.exists();
    if !looks_like_path {
        let names: Vec<&str> = SHIPPED.iter().map(|(n, _)| *n).collect();
        let hint = crate::base::diagnostic::did_you_mean(arg, names.iter().copied()).map_or_else(
            || {
                format!(
                    "shipped profiles: {}; or give a path to a YAML file",
                    names.join(", ")
                )
            },
            |s| format!("did you mean the shipped profile `{s}`?"),
        );
        return Err(ResolveError::Io(format!(
            "no profile named `{arg}` ({hint})"
        )));
    }
    let bytes =
        read_limited(path).map_err(|e| ResolveError::Io(format!("cannot read {arg}: {e}")))?;
    let source = load::decode(arg, &bytes).map_err(ResolveError::Invalid)?;
    Ok(Resolved {
        source,
        base_dir: path.parent().map(Path::to_path_buf),
    })
}

/// `path` with `.` dropped and each `dir/..` folded, so messages name a file as a person would
/// (`profiles/team.yaml`, not `tests/x/../../profiles/team.yaml`). Lexical, as Go's
/// `filepath.Clean` and Kustomize's paths are: it reads another file than the OS would only
/// when a folder before a `..` is a symlink. A leading `..` stays.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.iter().collect()
}

/// A profile another file names (`extends:`, a fleet's members): a shipped name, or a path
/// relative to that file's folder. `verb` says what the naming file does with it, for the
/// message when a shipped file names a path.
pub(crate) fn relative(
    reference: &str,
    base_dir: Option<&Path>,
    verb: &str,
) -> Result<Resolved, String> {
    let is_shipped = SHIPPED.iter().any(|(n, _)| *n == reference);
    let target = if is_shipped {
        reference.to_owned()
    } else {
        let Some(dir) = base_dir else {
            return Err(format!(
                "`{reference}` is not a shipped profile, and a shipped profile cannot {verb} a file"
            ));
        };
        lexical(&dir.join(reference)).display().to_string()
    };
    resolve(&target).map_err(|e| match e {
        ResolveError::Io(msg) => msg,
        ResolveError::Invalid(d) => d.message,
    })
}

/// Read at most one byte past the size limit, so a huge file is refused without reading it all.
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(std::io::Error::other("is a directory"));
    }
    let size = file.metadata()?.len();
    if size > load::MAX_PROFILE_BYTES as u64 {
        // `decode` refuses anything over the limit by its length alone; no need to read it.
        return Ok(vec![b' '; load::MAX_PROFILE_BYTES + 1]);
    }
    let mut buf = Vec::new();
    file.take(load::MAX_PROFILE_BYTES as u64 + 1)
        .read_to_end(&mut buf)?;
    Ok(buf)
}
