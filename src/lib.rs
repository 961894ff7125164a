//! raykueue: compile one typed cluster profile into Kueue + KubeRay manifests and AKS scripts.
//!
//! The modules follow the data: `load` (YAML with positions) → `schema_check` → `rules`
//! (domain checks) → `model` (the objects) → `render` (templates) → `validate` (output against
//! the upstream schemas) → `emit` (stream, tree, check).

mod admission;
pub mod bundle;
pub mod cli;
pub mod compile;
pub mod diagnostic;
pub mod emit;
pub mod kuberay;
pub mod load;
pub mod model;
pub mod operators;
pub mod overlay;
mod par;
pub mod pointer;
pub mod profile;
pub mod provider;
pub mod render;
pub mod resolve;
pub mod rules;
pub mod schema_check;
pub mod scripts;
pub mod semantic_diff;
pub mod simulate;
pub mod source;
pub mod synthetic;
pub mod validate;
pub mod yaml;
