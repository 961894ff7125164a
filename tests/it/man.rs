//! Man pages and shell completions: `docs/man/` is what `raykueue man` writes now, and the
//! commands `docs/cli.md` gives a `cargo install` user install pages `man` finds and a
//! completion script bash loads.

use crate::common::{raykueue, read_tree, repo, skip, stderr, stdout};
use std::path::Path;
use std::process::Command;

/// The subcommands `raykueue --help` lists.
fn subcommands() -> Vec<String> {
    let help = stdout(&raykueue(&["--help"]));
    help.split("Commands:\n")
        .nth(1)
        .unwrap()
        .lines()
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.split_whitespace().next().unwrap().to_owned())
        .filter(|c| c != "help")
        .collect()
}

#[test]
fn the_committed_man_pages_are_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let out = raykueue(&["man", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fresh = read_tree(dir.path());
    let mut pages = vec!["raykueue.1".to_owned()];
    pages.extend(subcommands().iter().map(|c| format!("raykueue-{c}.1")));
    pages.sort();
    let written: Vec<&String> = fresh.keys().collect();
    assert_eq!(
        written,
        pages.iter().collect::<Vec<_>>(),
        "a page per command"
    );
    assert!(
        read_tree(&repo().join("docs/man")) == fresh,
        "docs/man is stale: run `cargo run -- man --out docs/man`"
    );
    // Without --out: the main page on stdout.
    assert_eq!(
        raykueue(&["man"]).stdout,
        fresh["raykueue.1"],
        "`raykueue man` prints raykueue.1"
    );
    // What a page says comes from the parser's definitions: every flag of `gen`.
    let gen_page = String::from_utf8(fresh["raykueue-gen.1"].clone()).unwrap();
    for flag in [
        "profile",
        "out",
        "check",
        "only",
        "deny-warnings",
        "error-format",
    ] {
        // roff escapes every `-` of a name.
        let roff = format!("--{flag}").replace('-', "\\-");
        assert!(gen_page.contains(&roff), "--{flag}");
    }
    assert!(gen_page.contains("ARGOCD_ENV_PROFILE") && gen_page.contains("gitops\\-workloads"));
}

/// The lines of the `sh` block under `## heading` of docs/cli.md.
fn documented(heading: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    let section = text.split(&format!("## {heading}\n")).nth(1).unwrap();
    let block = section.split("```sh\n").nth(1).unwrap();
    block
        .split("```")
        .next()
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A home directory with raykueue where `cargo install` puts it (`~/.cargo/bin`), and the
/// `PATH` of a user who has that folder on it.
fn cargo_home() -> (tempfile::TempDir, String) {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".cargo/bin");
    std::fs::create_dir_all(&bin).unwrap();
    // A link, not a copy: executing a freshly written copy races with other tests' forks,
    // which may hold its write descriptor open for an instant ("Text file busy").
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_raykueue"), bin.join("raykueue")).unwrap();
    (home, format!("{}:/usr/bin:/bin", bin.display()))
}

fn sh(home: &Path, path: &str, line: &str) -> std::process::Output {
    Command::new("sh")
        .args(["-c", line])
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "80")
        .current_dir(home)
        .output()
        .unwrap()
}

#[test]
fn the_documented_man_command_installs_pages_man_finds() {
    let lines = documented("Man pages");
    assert_eq!(lines.len(), 1, "{lines:?}");
    let (install, _) = lines[0].split_once(" && ").expect("install && man");
    let (home, path) = cargo_home();
    let out = sh(home.path(), &path, install);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        home.path()
            .join(".cargo/share/man/man1/raykueue-gen.1")
            .is_file()
    );
    if Command::new("man").arg("--version").output().is_err() {
        return skip(
            "the_documented_man_command_installs_pages_man_finds",
            "no man",
        );
    }
    // man-db looks beside every `bin` folder on PATH for `../share/man`: no MANPATH needed.
    let out = sh(home.path(), &path, &lines[0]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // man justifies its lines: compare words, not spacing.
    let words = stdout(&out)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        words.contains("raykueue-gen - Generate"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_documented_bash_completion_loads() {
    let line = documented("Shell completions")
        .into_iter()
        .find(|l| l.ends_with("# bash"))
        .expect("a bash line");
    let (home, path) = cargo_home();
    let out = sh(home.path(), &path, line.trim_end_matches("# bash"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let script = home
        .path()
        .join(".local/share/bash-completion/completions/raykueue");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p raykueue",
            script.display()
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("_raykueue"), "{}", stdout(&out));
    // The completion offers the new parts of `--only`, from the same definitions.
    let script = std::fs::read_to_string(script).unwrap();
    assert!(script.contains("gitops-workloads") && script.contains("argocd-root"));
}
