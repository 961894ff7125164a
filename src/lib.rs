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
//! | 11 | api | `api.rs` | the public surface: re-exports of what the binary, tests, benches and xtask call |
//!
//! A fifth cloud is a folder `cloud/<name>/` (`section.rs`, `catalogue.rs`, `mod.rs` with its
//! `FACTS` and `Cloud` impl, `checks.rs`), its templates in `templates/infra/<name>/`, and its
//! field in the list of sections `Profile::clouds` in `cloud/mod.rs` walks.
//!
//! The stages are crate-private and their items `pub(crate)`; callers outside the crate reach
//! only [`api`], which re-exports the items they name under the stage's module path
//! (`raykueue::api::input::resolve::resolve` is `input::resolve::resolve`). Who uses what:
//!
//! | export | for | used by |
//! |---|---|---|
//! | `api::cli` | `main`, the reference documents | `src/main.rs`, xtask `docs`, test `reference` |
//! | `api::compile`, `api::fleet`, `api::input` | the pipeline: resolve, load, compile | xtask `e2e`, tests, benches |
//! | `api::profile`, `api::base` | the profile types, diagnostics, the code table | xtask `e2e`, tests, benches |
//! | `api::output`, `api::model` | the bundle: its objects, validation, the tree on disk | tests, bench `validate` |
//! | `api::cloud`, `api::facts` | EKS/ACK request bodies, pool nodes, metrics, chart facts | xtask `e2e`, tests `clouds`, `monitoring`, `charts` |
//! | `api::simulate`, `api::live` | the admission simulator, live submissions | xtask `e2e`, bench `simulate`, test `simulate_shortcuts` |
//! | `api::synthetic` | generated large profiles | test `properties`, benches `scale`, `simulate`, `live` |

pub(crate) mod base;
pub(crate) mod synthetic;

pub(crate) mod profile;

pub(crate) mod input;

pub(crate) mod cloud;

pub(crate) mod facts;

pub(crate) mod simulate;

pub(crate) mod checks;

pub(crate) mod model;

pub(crate) mod output;

pub(crate) mod compile;
pub(crate) mod fleet;
pub(crate) mod live;

pub(crate) mod cli;

pub mod api;
