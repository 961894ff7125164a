//! The generated reference documents are what the code says today: `docs/rules.md` from the
//! code table, `docs/profile.md` and `profiles/profile.schema.json` from the profile types. `cargo run -p xtask -- docs`
//! rewrites them.

use crate::common::repo;
use raykueue::api::cli::reference;

#[test]
fn the_reference_documents_are_fresh() {
    for (file, text) in [
        (reference::RULES_FILE, reference::rules()),
        (reference::PROFILE_FILE, reference::profile()),
        (reference::SCHEMA_FILE, reference::schema()),
        (reference::FLEET_SCHEMA_FILE, reference::fleet_schema()),
    ] {
        let committed = std::fs::read_to_string(repo().join(file)).unwrap_or_default();
        assert!(
            committed == text,
            "{file} is stale: run `cargo run -p xtask -- docs`"
        );
    }
}

/// The rules reference lists every code and every retired one, each once.
#[test]
fn the_rules_reference_lists_every_code() {
    let text = reference::rules();
    for c in raykueue::api::base::codes::ALL {
        assert_eq!(
            text.matches(&format!("| `{}` |", c.id)).count(),
            1,
            "{} ({})",
            c.id,
            c.title
        );
    }
    for (old, new) in raykueue::api::base::codes::RETIRED {
        assert!(text.contains(&format!("| `{old}` | `{}`", new.id)), "{old}");
    }
    // And the profile reference has a section for every object of the format.
    let profile = reference::profile();
    for object in [
        "Profile",
        "Azure",
        "Gcp",
        "Aws",
        "Alibaba",
        "Queues",
        "Workload",
        "NvidiaOperator",
    ] {
        assert!(
            profile.contains(&format!(
                "<a id=\"{}\"></a>`{object}`",
                object.to_ascii_lowercase()
            )),
            "{object}"
        );
    }
}
