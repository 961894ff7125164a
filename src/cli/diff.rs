//! `raykueue diff OLD NEW`: what changes in the cluster between two profiles, as Markdown for a
//! pull-request comment; `--files` adds the unified diff of the generated files. Exit codes as
//! diff(1): 0 no change, 1 changes, 2 trouble.

use super::{ErrorFormat, exit, print_diagnostics, resolve_profile, write_stdout};
use crate::cli::semantic_diff;
use crate::compile;
use clap::Args;

#[derive(Args, Debug)]
pub(super) struct DiffCommand {
    /// The profile before (shipped name or path).
    old: String,
    /// The profile after (shipped name or path).
    new: String,
    /// Also print the unified diff of every generated file.
    #[arg(long)]
    files: bool,
    /// Diagnostics format.
    #[arg(long, value_enum, default_value_t)]
    error_format: ErrorFormat,
}

impl DiffCommand {
    pub(super) fn run(self) -> u8 {
        let mut compiled = Vec::new();
        for arg in [&self.old, &self.new] {
            let resolved = match resolve_profile(arg, self.error_format) {
                Ok(r) => r,
                Err(code) => return code,
            };
            // Like a profile that does not compile: trouble, not a change (exit 2).
            if super::profile_kind(&resolved, "raykueue diff", false, self.error_format).is_err() {
                return exit::ERROR;
            }
            match compile::compile(&resolved, false) {
                Ok(c) => compiled.push(c),
                Err(d) => {
                    print_diagnostics(&d, self.error_format);
                    return exit::ERROR;
                }
            }
        }
        let (old, new) = (&compiled[0], &compiled[1]);
        let objects = semantic_diff::object_changes(&old.bundle, &new.bundle);
        let pools = semantic_diff::node_pool_changes(&old.profile, &new.profile);
        let mut text = semantic_diff::markdown(&self.old, &self.new, &objects, &pools);
        let mut files_changed = false;
        if self.files {
            let mut unified = String::new();
            let names: std::collections::BTreeSet<&String> = old
                .bundle
                .files
                .keys()
                .chain(new.bundle.files.keys())
                .collect();
            for name in names {
                let a = old.bundle.files.get(name).map_or("", String::as_str);
                let b = new.bundle.files.get(name).map_or("", String::as_str);
                if a != b {
                    files_changed = true;
                    unified.push_str(
                        &similar::TextDiff::from_lines(a, b)
                            .unified_diff()
                            .header(&format!("a/{name}"), &format!("b/{name}"))
                            .to_string(),
                    );
                }
            }
            if !unified.is_empty() {
                text.push_str("\n<details><summary>Generated files</summary>\n\n```diff\n");
                text.push_str(&unified);
                text.push_str("```\n\n</details>\n");
            }
        }
        let code = write_stdout(&text);
        if code != exit::OK {
            return code;
        }
        if objects.is_empty() && pools.is_empty() && !files_changed {
            exit::OK
        } else {
            exit::INVALID
        }
    }
}
