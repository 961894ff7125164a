//! Leaf modules every stage may use: diagnostics and their codes, source text and positions,
//! JSON pointers, the one YAML writer, and the small parallelism helper. Nothing here imports
//! a stage.

pub(crate) mod codes;
pub(crate) mod diagnostic;
pub(crate) mod par;
pub(crate) mod pointer;
pub(crate) mod source;
pub(crate) mod yaml;
