//! The documentation: the README stays short enough to read, it leads to every page of
//! `docs/`, and every relative link in `README.md` and `docs/*.md` points at a file that exists.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::repo;

/// The README is for a newcomer; reference material goes to `docs/`.
const README_MAX_LINES: usize = 300;

#[test]
fn the_readme_has_at_most_300_lines() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines (at most {README_MAX_LINES}): move reference material to docs/"
    );
    // A newcomer has this repository only.
    assert!(
        !readme.contains("../shared"),
        "README.md sends the reader to ../shared, which is not in the repository"
    );
}

#[test]
fn every_relative_link_points_at_a_file_that_exists() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap();
        for target in link_targets(&text) {
            let Some(file) = relative_file(&target) else {
                continue;
            };
            if !page.parent().unwrap().join(file).exists() {
                broken.push(format!("{}: {target}", shown(&page)));
            }
        }
    }
    assert!(broken.is_empty(), "links to missing files: {broken:#?}");
}

#[test]
fn the_readme_links_every_page_of_docs() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let linked: Vec<String> = link_targets(&readme)
        .iter()
        .filter_map(|t| relative_file(t).map(str::to_owned))
        .collect();
    for page in pages().iter().skip(1) {
        let wanted = format!("docs/{}", page.file_name().unwrap().to_string_lossy());
        assert!(linked.contains(&wanted), "README.md does not link {wanted}");
    }
}

/// `README.md` and every `docs/*.md`, in a fixed order.
fn pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = fs::read_dir(repo().join("docs"))
        .expect("a docs/ folder")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    assert!(!docs.is_empty(), "docs/ has pages");
    let mut all = vec![repo().join("README.md")];
    all.extend(docs);
    all
}

fn shown(page: &Path) -> String {
    page.strip_prefix(repo())
        .unwrap_or(page)
        .display()
        .to_string()
}

/// The file part of a link that points into the repository: `None` for web addresses and
/// links to a heading of the same page.
fn relative_file(target: &str) -> Option<&str> {
    if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
        return None;
    }
    let file = target.split('#').next().unwrap_or(target);
    (!file.is_empty()).then_some(file)
}

/// The targets of the inline links `[text](target)` of a Markdown page, outside fenced code
/// blocks and code spans (where `](` is code, not a link).
fn link_targets(markdown: &str) -> Vec<String> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    // Code spans may wrap across lines, so they are removed from the whole text at once.
    let text: String = prose
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part)
        .collect();
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else {
            break;
        };
        targets.push(after[..end].trim().to_owned());
        rest = &after[end..];
    }
    targets
}

#[test]
fn link_targets_skip_code_and_keep_anchors() {
    let page =
        "See [a](docs/a.md#x) and `[b](no.md)`.\n```md\n[c](no.md)\n```\n[d](https://e.org)\n";
    let targets = link_targets(page);
    assert_eq!(targets, ["docs/a.md#x", "https://e.org"]);
    let files: Vec<&str> = targets.iter().filter_map(|t| relative_file(t)).collect();
    assert_eq!(files, ["docs/a.md"]);
}

/// A paragraph of a page: the lines from the one holding `start` to the next blank line, joined.
fn paragraph(page: &str, start: &str) -> String {
    let text = fs::read_to_string(repo().join(page)).unwrap();
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("{page} says `{start}`"));
    let rest = &text[from..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    rest[..end].replace('\n', " ")
}

#[test]
fn the_docs_name_every_shipped_profile_where_they_list_them() {
    for (page, start) in [
        ("docs/cli.md", "`--profile P` (and `diff`'s two arguments)"),
        ("README.md", "`--from` is `single`"),
    ] {
        let said = paragraph(page, start);
        for name in crate::common::shipped() {
            assert!(
                said.contains(&format!("`{name}`")),
                "{page}: the list of shipped profiles lacks `{name}`: {said}"
            );
        }
    }
}

/// The commands a sentence of docs/cli.md names, in backticks, between `(on ` or `(in ` and `)`.
fn commands_named(sentence: &str) -> Vec<String> {
    let inner = sentence
        .split_once(['('])
        .map(|(_, r)| r)
        .and_then(|r| r.split_once(')'))
        .map(|(i, _)| i)
        .unwrap_or_default();
    inner
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The subcommands of `raykueue --help` whose own `--help` lists `flag`.
fn commands_with(flag: &str) -> Vec<String> {
    let help = crate::common::stdout(&crate::common::raykueue(&["--help"]));
    let commands: Vec<String> = help
        .split("Commands:")
        .nth(1)
        .unwrap_or_default()
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect();
    commands
        .into_iter()
        .filter(|c| {
            let own = crate::common::stdout(&crate::common::raykueue(&[c, "--help"]));
            own.lines().any(|l| l.trim_start().starts_with(flag))
        })
        .collect()
}

#[test]
fn docs_cli_names_exactly_the_commands_that_take_p_and_error_format() {
    for (start, flag) in [
        ("`-p` is short for `--profile`", "-p, --profile"),
        ("**`--error-format json`** (on", "--error-format"),
    ] {
        let mut said = commands_named(&paragraph("docs/cli.md", start));
        said.sort();
        let mut real = commands_with(flag);
        real.sort();
        assert_eq!(said, real, "docs/cli.md: which commands take `{flag}`");
    }
}

#[test]
fn docs_simulate_counts_the_simulate_fixtures() {
    let cases = fs::read_dir(repo().join("tests/fixtures/simulate"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().join("scenario.yaml").is_file())
        .count();
    let said = paragraph(
        "docs/simulate.md",
        "`tests/fixtures/simulate/<case>/` holds",
    );
    assert!(
        said.contains(&format!("holds {cases} cases")),
        "docs/simulate.md: there are {cases} cases: {said}"
    );
}

#[test]
fn the_help_lists_every_shell_completions_takes() {
    let help = crate::common::stdout(&crate::common::raykueue(&["--help"]));
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("completions"))
        .unwrap();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        assert!(
            crate::common::raykueue(&["completions", shell])
                .status
                .success(),
            "completions {shell}"
        );
        assert!(
            line.contains(shell),
            "`raykueue --help` lacks {shell}: {line}"
        );
    }
}
