//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every shipped profile's name: the binary's own list, so a new shipped profile gets every
/// test (and its golden) without an edit here.
pub(crate) fn shipped() -> Vec<&'static str> {
    raykueue::api::input::resolve::SHIPPED
        .iter()
        .map(|(name, _)| *name)
        .collect()
}

/// The shipped profiles on AKS (an `azure:` section): the `az` scripts' tests run them.
pub(crate) fn shipped_aks() -> Vec<&'static str> {
    raykueue::api::input::resolve::SHIPPED
        .iter()
        .filter(|(_, text)| text.lines().any(|l| l == "azure:"))
        .map(|(name, _)| *name)
        .collect()
}

pub(crate) fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The real binary, run from the repository root unless `cwd` says otherwise.
pub(crate) fn raykueue(args: &[&str]) -> Output {
    raykueue_in(&repo(), args)
}

pub(crate) fn raykueue_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_raykueue"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("the raykueue binary runs")
}

pub(crate) fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

pub(crate) fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

/// The whole bundle of a profile as one text, a `# file:` header before each file.
pub(crate) fn bundle_text(profile: &str) -> String {
    let resolved = raykueue::api::input::resolve::resolve(profile).expect("profile resolves");
    let compiled = raykueue::api::compile::compile(&resolved, false).expect("profile compiles");
    let mut out = String::new();
    for (name, content) in &compiled.bundle.files {
        out.push_str(&format!("# file: {name}\n{content}"));
        if !content.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// Every file below `dir`, relative path → bytes.
pub(crate) fn read_tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).expect("readable dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p.strip_prefix(base).expect("below base");
                out.insert(
                    rel.to_string_lossy().replace('\\', "/"),
                    std::fs::read(&p).expect("readable file"),
                );
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A test that cannot run here because a tool or `../shared` is missing. Under CI (`CI` or
/// `RAYKUEUE_NO_SKIP` set, as `.ci/run` does) that is a failure: CI provides every tool. Elsewhere
/// it prints a visible line: written straight to stderr, not through `eprintln!`, which the test
/// harness captures and shows only for failing tests.
pub(crate) fn skip(test: &str, why: &str) {
    use std::io::Write;
    assert!(
        std::env::var_os("CI").is_none() && std::env::var_os("RAYKUEUE_NO_SKIP").is_none(),
        "{test} cannot be skipped under CI: {why} (.ci/run provides it)"
    );
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

/// The tree of Go module `module@version` as the Go module proxy serves it (`go mod download`,
/// cached in Go's module cache), or `None` without Go or the proxy.
pub(crate) fn go_module(module: &str, version: &str) -> Option<PathBuf> {
    let out = std::process::Command::new("go")
        .args(["mod", "download", "-json", &format!("{module}@{version}")])
        .current_dir(std::env::temp_dir())
        .output()
        .ok()?;
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    answer["Dir"].as_str().map(PathBuf::from)
}

/// The sibling `../shared` folder (upstream schemas, charts, tools), when present.
pub(crate) fn shared() -> Option<PathBuf> {
    let dir = repo().join("../shared");
    dir.is_dir().then_some(dir)
}

/// Compile a profile given as text, in-process (no folder: scripts cannot be named).
pub(crate) fn compile_text(
    text: &[u8],
) -> Result<raykueue::api::compile::Compiled, Vec<raykueue::api::base::diagnostic::Diagnostic>> {
    let source = raykueue::api::input::load::decode("profile.yaml", text).map_err(|d| vec![d])?;
    raykueue::api::compile::compile(
        &raykueue::api::input::resolve::Resolved {
            source,
            base_dir: None,
        },
        false,
    )
}

/// A shipped profile's text.
pub(crate) fn shipped_text(name: &str) -> &'static str {
    raykueue::api::input::resolve::SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
        .expect("a shipped profile")
}

/// The `infra/` files of a typed profile, rendered: path → text. Profiles built in a test may
/// break what the schema would refuse (`profile::unchecked`).
pub(crate) fn infra_text(p: &raykueue::api::profile::Profile) -> Vec<(String, String)> {
    raykueue::api::profile::unchecked(|| raykueue::api::model::infra_files(p))
        .unwrap()
        .into_iter()
        .map(|f| raykueue::api::output::render::text(f).unwrap())
        .collect()
}
