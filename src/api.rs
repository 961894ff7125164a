//! The public surface: what the binary (`src/main.rs`), the integration tests (`tests/it/`),
//! the benches (`benches/`) and xtask (`xtask/src/`) call, and nothing else. The stage modules
//! are crate-private; `raykueue::api::X::Y` is the crate's `X::Y` (taken from the module that
//! defines it where `X` only re-exports it), so a caller reads which stage an item comes from.
//! An item is added here when a caller outside the crate names it, and every item here has one.

/// Diagnostics, sources and the code table (tests `reference`, `rules`, `compat`, `properties`,
/// `workloads`; bench `scale`), the YAML writer (test `clouds`).
pub mod base {
    pub mod codes {
        pub use crate::base::codes::{ALL, RETIRED, Severity};
    }
    pub mod diagnostic {
        pub use crate::base::diagnostic::{Diagnostic, render_human};
    }
    pub mod source {
        pub use crate::base::source::Source;
    }
    pub mod yaml {
        pub use crate::base::yaml::to_yaml;
    }
}

/// The profile types (xtask `e2e`; tests `facts`, `infra`, `clouds`, `gke`, `properties`,
/// `workloads`; bench `simulate`).
pub mod profile {
    pub use crate::cloud::azure::section::{
        AZ_DEFAULT_NODE_COUNT, ClusterName, ResourceGroupName, RoleName,
    };
    pub use crate::profile::Profile;
    pub use crate::profile::names::{LabelValue, RelativePath, unchecked};
}

/// Resolving, loading and checking a profile's text (xtask `e2e`; most tests; benches).
pub mod input {
    pub mod deprecated {
        pub use crate::input::deprecated::{DEPRECATED, deprecated_fields, uses};
    }
    pub mod load {
        pub use crate::input::load::{Loaded, decode, flatten, parse_tree};
    }
    pub mod resolve {
        pub use crate::input::resolve::{
            ResolveError, Resolved, SHIPPED, SHIPPED_SCRIPTS, resolve, shipped_script,
        };
    }
    pub mod schema {
        pub use crate::input::schema::{fast, schema, schema_violations};
    }
}

/// The clouds' own formats: EKS and ACK request bodies (test `clouds`), the nodes of each
/// pool (xtask `e2e` gives them to kwok).
pub mod cloud {
    pub use crate::cloud::pool_nodes;
    pub mod alibaba {
        pub use crate::cloud::alibaba::section::Alibaba;
        pub mod bodies {
            pub use crate::cloud::alibaba::bodies::{
                CREATE_CLUSTER_SCHEMA, CREATE_NODE_POOL_SCHEMA, FILL_CLUSTER_IDS,
                FILL_NODE_POOL_IDS, cluster_body, cluster_body_file, node_pool_body,
                node_pool_body_file,
            };
        }
    }
    pub mod aws {
        pub use crate::cloud::aws::section::Aws;
        pub use crate::cloud::aws::taints_blocking_device_plugin;
        pub mod eksctl {
            pub use crate::cloud::aws::eksctl::{RayIdentity, cluster_config};
        }
    }
}

/// The metrics table (test `monitoring`) and the operators' chart facts (test `charts`).
pub mod facts {
    pub mod metrics {
        pub use crate::facts::metrics::{KUBE_NODE_LABELS, labels};
    }
    pub mod operators {
        pub use crate::facts::operators::{
            CONFIGURATION_FIELDS, chart_entry, chart_keys, kueue_default_configuration,
        };
    }
}

/// The admission simulator (bench `simulate`; test `simulate_shortcuts`; xtask `e2e` reads
/// scenarios).
pub mod simulate {
    pub use crate::simulate::{run, run_reference};
    pub mod events {
        pub use crate::simulate::events::render_json;
    }
    pub mod scenario {
        pub use crate::simulate::scenario::{ReadError, Scenario, against_profile, parse, read};
    }
    pub mod world {
        pub use crate::simulate::world::{World, build};
    }
}

/// The bundle's objects and the infrastructure files (tests `validate`, `monitoring`, `common`).
pub mod model {
    pub use crate::model::infra::infra_files;
    pub use crate::model::{Object, Part};
}

/// The bundle, its validation, rendering and the tree on disk (tests; bench `validate`).
pub mod output {
    pub mod bundle {
        pub use crate::output::bundle::Bundle;
    }
    pub mod emit {
        pub use crate::output::emit::{check_tree, write_tree, write_tree_with};
    }
    pub mod render {
        pub use crate::output::render::{shell_quote, text};
    }
    pub mod validate {
        pub use crate::output::validate::{Verdict, bundle, object};
    }
}

/// The pipeline, run once (tests, benches, xtask `e2e`).
pub mod compile {
    pub use crate::compile::{Compiled, check_profile, compile, diagnostics, render, stream};
}

/// The pipeline, run once per fleet member (xtask `e2e`).
pub mod fleet {
    pub use crate::fleet::compile;
}

/// The workloads a scenario submits to a live cluster (xtask `e2e`).
pub mod live {
    pub use crate::live::snapshot::{Submission, submissions};
}

/// Large generated profiles (test `properties`; benches `scale`, `simulate`, `live`).
pub mod synthetic {
    pub use crate::synthetic::teams_profile;
}

/// The command line (`src/main.rs`) and the reference documents it writes (xtask `docs`,
/// test `reference`).
pub mod cli {
    pub use crate::cli::main;
    pub mod reference {
        pub use crate::cli::reference::{
            FLEET_SCHEMA_FILE, PROFILE_FILE, RULES_FILE, SCHEMA_FILE, fleet_schema, profile, rules,
            schema,
        };
    }
}
