//! One integration-test binary (fast links): CLI contract, golden bundles, bad-input corpus,
//! determinism, bundle trees.

mod bad_inputs;
mod cli;
mod common;
mod determinism;
mod golden;
mod tree;
