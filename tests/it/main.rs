//! One integration-test binary (fast links): CLI contract, golden bundles, bad-input corpus,
//! determinism, bundle trees, Ray workloads, output validation, the documentation.

// Tests may unwrap: a failure is a test failure with its message.
#![allow(clippy::unwrap_used, clippy::format_push_string)]
// A test binary has no public API; the importers it compiles by path are `pub` for xtask.
#![allow(unreachable_pub)]

mod architecture;
mod argocd_plugin;
mod bad_inputs;
mod capacity;
mod charts;
mod cli;
mod clouds;
mod common;
mod compat;
mod container;
mod converge;
mod determinism;
mod diff;
mod docs;
mod e2e;
mod facts;
mod fastpath;
mod faults;
mod fleet;
mod gitops;
mod gke;
mod golden;
mod hostile;
mod infra;
mod init;
mod live;
mod man;
mod monitoring;
mod monitoring_managed;
mod overlay;
mod precommit;
mod properties;
mod reference;
mod rules;
mod simulate;
mod simulate_shortcuts;
mod tree;
mod validate;
mod workloads;
