//! raykueue: compile one typed cluster profile into Kueue + KubeRay manifests and the scripts
//! that provision AKS, GKE, EKS or ACK for them.
//!
//! The modules are the pipeline's stages, in the order the data flows; a stage imports earlier
//! stages and never a later one (`tests/it/architecture.rs` reads `src/` and fails on a cycle
//! or on an import against this order, which it reads from the table below):
//!
//! | # | stage | files | what it owns |
//! |---|---|---|---|
//! | 0 | base | `base/`, `synthetic.rs`, `lib.rs` | diagnostics and the code table, positions, JSON pointers, the YAML writer, `par` |
//! | 1 | profile | `profile/`, `cloud/instance.rs`, `cloud/*/section.rs`, `cloud/*/catalogue.rs` | the profile format (each cloud's section types and instance catalogue included) |
//! | 2 | input | `input/` | resolve, load with positions, overlays, schema check, script files |
//! | 3 | cloud | `cloud/` | the seam: one folder per cloud behind the `Cloud` trait |
//! | 4 | facts | `facts/` | what Kueue, KubeRay and the operators' charts make of a profile: pod sets, quotas, limits, placement |
//! | 5 | simulate | `simulate/` | the Kueue admission simulator, a leaf the checks and the summary call |
//! | 6 | checks | `checks/` | domain rules over the whole profile |
//! | 7 | model | `model/` | every object of the bundle as data, and the values of its text |
//! | 8 | output | `output/` | templates rendered, files assembled, objects validated, the tree written |
//! | 9 | pipeline | `compile.rs`, `fleet.rs`, `live/` | the stages run in order, once each (a fleet: once per member) |
//! | 10 | cli | `cli/`, `main.rs` | the command line |
//!
//! A fifth cloud is a folder `cloud/<name>/` (`section.rs`, `catalogue.rs`, `mod.rs` with its
//! `FACTS` and `Cloud` impl, `checks.rs`), its templates in `templates/infra/<name>/`, and its
//! field in the list of sections `Profile::clouds` in `cloud/mod.rs` walks.

pub mod base;
pub mod synthetic;

pub mod profile;

pub mod input;

pub mod cloud;

pub mod facts;

pub mod simulate;

pub(crate) mod checks;

pub mod model;

pub mod output;

pub mod compile;
pub mod fleet;
pub mod live;

pub mod cli;
