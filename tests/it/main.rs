//! One integration-test binary (fast links): CLI contract, golden bundles, bad-input corpus,
//! determinism, bundle trees, output validation.

// Tests may unwrap: a failure is a test failure with its message.
#![allow(clippy::unwrap_used, clippy::format_push_string)]

mod bad_inputs;
mod cli;
mod common;
mod determinism;
mod golden;
mod tree;
mod validate;
